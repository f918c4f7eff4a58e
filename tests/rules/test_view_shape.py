"""The common view shape (rules/contract.py's VIEW_KEYS): every system's view, for the GM, a player, a
player whose seat plays nothing, a spectator and the TV (the display connects as a spectator), has
``status``, ``acting``, ``fighters``, ``grid`` and ``legal`` in the one form, at the start and along a
battle played from the GM's legal declarations; and the common part shows nothing the system's own
part hides from that viewer (it is read off that part: each of its values is one the part holds).

Parametrized over ``available_systems()``: a system named in BATTLEBOARD_SYSTEMS (tests/conftest.py
names the one-die duel) is checked with the five."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from rules import RulesError, Viewer, available_systems, engine
from rules.contract import FIGHTER_KEYS, VIEW_KEYS, RuleSystem
from rules.core import State
from rules.dice import SeededDice

SYSTEMS = {system.id: system for system in available_systems()}
#: keys of a legal entry that only describe it
PRESENTATION = {"label", "help", "testid", "selected", "fields", "destinations", "reachable", "params", "name"}
VIEWERS = {
    "gm": Viewer.gm(),
    "player": Viewer.player("s1"),
    "idle player": Viewer.player("s9"),
    "spectator": Viewer.spectator(),
    "display": Viewer.spectator(),  # (the TV's page connects without a key: a spectator's projection)
}


def lineup_of(system: RuleSystem) -> list[dict[str, Any]]:
    """The system's demo lineup (or its first presets), the first combatant played by seat s1."""
    presets = {p["name"]: p for p in system.presets()}
    demo = system.traits.demo
    picks = list(demo.lineup) if demo else [(name, system.sides[i % 2], "gm") for i, name in enumerate(list(presets)[:2])]
    lineup = []
    for number, (preset, side, controller) in enumerate(picks, start=1):
        entry = dict(presets[preset], id=f"c{number}", side=side, controller=controller, seat=None)
        if number == 1:
            entry.update(controller="seat", seat="s1")
        lineup.append(entry)
    return lineup


def declaration_from(item: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    decl = {k: v for k, v in item.items() if k not in PRESENTATION and not isinstance(v, list | dict)}
    for field in item.get("fields") or []:
        if field.get("default") is not None:
            decl[field["name"]] = field["default"]
    if item.get("destinations"):
        cell = rng.choice(item["destinations"])
        decl["x"], decl["y"] = cell["x"], cell["y"]
    if item.get("reachable"):
        decl["x"], decl["y"] = rng.choice(item["reachable"])[:2]
    return decl


def states_of(system: RuleSystem, steps: int = 14) -> Iterator[State]:
    """The battle's first state and those after up to ``steps`` of the GM's legal declarations."""
    dice = SeededDice(f"view-shape/{system.id}")
    state, _ = engine.start(system, system.validate_lineup(lineup_of(system)), system.validate_options({}), dice)
    yield state
    rng = random.Random(system.id)
    for _ in range(steps * 3):
        legal = [item for item in system.view_for(state, Viewer.gm()).get("legal") or []
                 if not (item.get("type") == "step" and item.get("by") == "battle")]  # (a whole mass battle: slow)
        if state.get("status") == "ended" or not legal:
            return
        try:
            state, _ = engine.play(system, state, declaration_from(rng.choice(legal), rng), Viewer.gm(), dice)
        except RulesError:
            continue
        yield state
        steps -= 1
        if steps <= 0:
            return


def leaves(value: Any) -> set[Any]:
    """Every text and number held anywhere in ``value`` (keys not included)."""
    if isinstance(value, Mapping):
        return set().union(*(leaves(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(leaves(v) for v in value)) if value else set()
    if isinstance(value, bool) or value is None:
        return set()
    return {value}


def check_shape(system: RuleSystem, view: Mapping[str, Any]) -> None:
    assert set(VIEW_KEYS) <= set(view), f"{system.id}: missing {set(VIEW_KEYS) - set(view)}"
    assert isinstance(view["status"], str) and view["status"]
    acting = view["acting"]
    assert set(acting) == {"combatants", "label"} and isinstance(acting["label"], str)
    ids = [f["id"] for f in view["fighters"]]
    assert ids and len(set(ids)) == len(ids)
    assert set(acting["combatants"]) <= set(ids), acting
    for fighter in view["fighters"]:
        assert set(fighter) <= set(FIGHTER_KEYS) and set(FIGHTER_KEYS) - {"seat"} <= set(fighter), fighter
        assert isinstance(fighter["name"], str) and fighter["side"] in system.sides and isinstance(fighter["out"], bool)
        assert fighter["controller"] in ("gm", "computer", "seat")
    if system.traits.grid:
        grid = view["grid"]
        assert isinstance(grid["width"], int) and isinstance(grid["height"], int)
    else:
        assert view["grid"] is None
    assert isinstance(view["legal"], list) and all(isinstance(item.get("type"), str) for item in view["legal"])


@pytest.mark.parametrize("system_id", sorted(SYSTEMS))
def test_every_view_has_the_common_shape_and_shows_nothing_the_systems_part_hides(system_id: str) -> None:
    system = SYSTEMS[system_id]
    seen = 0
    for state in states_of(system):
        for role, viewer in VIEWERS.items():
            view = engine.project(system, state, viewer)
            check_shape(system, view)
            own = system.view_for(state, viewer)
            # the system's own part is all there, as the system made it (its modules read it)
            assert {k: v for k, v in view.items() if k not in VIEW_KEYS} == {k: v for k, v in own.items() if k not in VIEW_KEYS}
            assert view["legal"] == own.get("legal", []) and view["status"] == own.get("status")
            # the common part holds no value the system's part does not hold for this viewer
            common = {key: view[key] for key in VIEW_KEYS if key != "legal"}
            label = common.pop("acting")["label"]
            unseen = leaves(common) - leaves(own)
            assert not unseen, f"{system_id}, {role}: the common part shows {unseen}"
            numbers = {int(word) for word in label.replace(",", " ").split() if word.isdigit()}
            assert numbers <= leaves(own), f"{system_id}, {role}: the label {label!r}"
            if viewer.role == "spectator":
                assert view["legal"] == []
        seen += 1
    assert seen >= 2, f"{system_id}: the battle never got past its first state"


@pytest.mark.parametrize("system_id", sorted(SYSTEMS))
def test_the_common_part_is_read_off_the_view_alone(system_id: str) -> None:
    """``common_view`` takes the projected view, never the state: the same view gives the same common
    part, whatever state it came from."""
    system = SYSTEMS[system_id]
    state = next(states_of(system))
    for viewer in VIEWERS.values():
        own = system.view_for(state, viewer)
        assert system.common_view(own) == {key: engine.project(system, state, viewer)[key] for key in VIEW_KEYS}


def test_a_player_sees_the_one_die_rolls_of_the_round_only_for_their_own_duellist() -> None:
    """The one-die duel (tests/systems/one_die/) hides the first roll of a round from the other side;
    the common part says who still has to roll, never the face."""
    if "one-die" not in SYSTEMS:
        pytest.skip("the one-die duel is not registered (BATTLEBOARD_SYSTEMS)")
    from rules.dice import ScriptedDice

    system = SYSTEMS["one-die"]
    lineup = [dict(name="Ann", id="a", side="A", controller="seat", seat="s1"),
              dict(name="Bert", id="b", side="B", controller="seat", seat="s2")]
    state, _ = engine.start(system, system.validate_lineup(lineup), system.validate_options({}), ScriptedDice([]))
    state, _ = engine.play(system, state, {"type": "roll", "combatant": "a"}, Viewer.player("s1"), ScriptedDice([4]))
    mine, theirs = (engine.project(system, state, Viewer.player(seat)) for seat in ("s1", "s2"))
    assert mine["duel"]["combatants"][0]["roll"] == 4 and theirs["duel"]["combatants"][0]["roll"] is None
    assert mine["acting"] == theirs["acting"] == {"combatants": ["b"], "label": "Round 1, roll the die"}
    assert 4 not in leaves({k: theirs[k] for k in VIEW_KEYS})
