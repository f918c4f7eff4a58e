"""Hidden combatants in the rules (rules/hiding.py, rules/engine.py): the GM hides and reveals one;
nobody else's view, events, targets or odds hold any trace of it while it is hidden."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rules import IllegalDeclaration, NotPermitted, RulesError, Viewer, engine, get_system
from rules.dice import SeededDice

GRID_SYSTEMS = ["eclipse-phase", "adnd", "battles-and-balances"]
LURKER, LURKER_NAME = "lurker7", "Skulking Horror"
SEATS = ("s1", "s2")


def lineup(system_id: str, hidden: bool = True) -> list[dict[str, Any]]:
    """Two seats' combatants, one of the GM's, and the lurker (the computer's, hidden)."""
    system = get_system(system_id)
    presets = system.presets()
    made = []
    for i, (cid, controller, seat) in enumerate([("pc1", "seat", "s1"), ("pc2", "seat", "s2"), ("npc1", "gm", None),
                                                  (LURKER, "computer", None)]):
        entry = dict(presets[i % len(presets)])
        entry.update(id=cid, side=system.sides[i % 2] if cid != "pc2" else system.sides[0], controller=controller, seat=seat)
        if cid == LURKER:
            entry.update(name=LURKER_NAME, side=system.sides[1], hidden=hidden)
        made.append(entry)
    return system.validate_lineup(made)


def started(system_id: str, hidden: bool = True, **options: Any) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    system = get_system(system_id)
    state, events = engine.start(system, lineup(system_id, hidden), system.validate_options(options), SeededDice("hide-1"))
    return system, state, events


def traces(value: Any) -> list[str]:
    text = json.dumps(value)
    return [word for word in (f'"{LURKER}"', LURKER_NAME, f":{LURKER}") if word in text]


def others() -> list[Viewer]:
    return [Viewer.player("s1"), Viewer.player("s2"), Viewer.spectator()]


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_a_hidden_combatant_is_nowhere_in_anyone_elses_view(system_id: str) -> None:
    system, state, _ = started(system_id)
    assert state["combatants"][LURKER]["hidden"] is True
    for viewer in others():
        view = engine.project(system, state, viewer)
        assert traces(view) == [], (viewer, traces(view))
        assert LURKER not in [f["id"] for f in view["fighters"]]
        assert "hidden" not in view
    gm = engine.project(system, state, Viewer.gm())
    assert LURKER in [f["id"] for f in gm["fighters"]]
    assert [h["id"] for h in gm["hidden"]] == [LURKER]


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_the_gm_reveals_it_and_every_view_shows_it_again(system_id: str) -> None:
    system, state, _ = started(system_id)
    made = engine.step(system, state, engine.Command("reveal_combatant", {"combatant": LURKER}, Viewer.gm()), SeededDice("r"), seed="s")
    assert [e["type"] for e in made.events] == ["combatant.revealed"]
    assert made.events[0]["visibility"] == "public" and LURKER_NAME in made.events[0]["text"]
    assert "hidden" not in made.state["combatants"][LURKER]
    for viewer in others():
        assert LURKER in [f["id"] for f in engine.project(system, made.state, viewer)["fighters"]]
    # and hides it again: the others' words say nothing of who
    again = engine.step(system, made.state, engine.Command("hide_combatant", {"combatant": LURKER}, Viewer.gm()), SeededDice("r"), seed="s")
    (ev,) = again.events
    assert ev["visibility"] == "gm" and LURKER_NAME not in json.dumps(ev["others"]) and LURKER not in json.dumps(ev["others"])
    assert traces(engine.project(system, again.state, Viewer.spectator())) == []


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_only_the_gm_hides_or_reveals_and_bad_ones_are_refused(system_id: str) -> None:
    system, state, _ = started(system_id)
    for viewer in others():
        with pytest.raises(NotPermitted):
            engine.step(system, state, engine.Command("reveal_combatant", {"combatant": LURKER}, viewer), SeededDice("r"), seed="s")
    gm = Viewer.gm()
    for kind, payload in [("hide_combatant", {"combatant": LURKER}), ("reveal_combatant", {"combatant": "pc1"}), ("hide_combatant", {"combatant": "pc1"}),
                          ("hide_combatant", {"combatant": "nobody"}), ("reveal_combatant", {}), ("hide_combatant", {"combatant": ["pc1"]})]:
        with pytest.raises(RulesError):
            engine.step(system, state, engine.Command(kind, payload, gm), SeededDice("r"), seed="s")
    with pytest.raises(IllegalDeclaration):
        engine.step(system, state, engine.Command("assign", {"combatant": LURKER, "controller": "seat", "seat": "s1"}, gm),
                    SeededDice("r"), seed="s")


def test_a_players_combatant_cannot_be_hidden_in_the_lineup() -> None:
    system = get_system("adnd")
    entry = {**system.presets()[0], "id": "pc1", "controller": "seat", "seat": "s1", "hidden": True}
    with pytest.raises(RulesError, match="cannot be hidden"):
        system.validate_combatant(entry)
    with pytest.raises(RulesError, match="hidden must be true or false"):
        system.validate_combatant({**entry, "controller": "gm", "hidden": "yes"})
    assert "hidden" not in system.validate_combatant({**entry, "hidden": False})


def _targets_lurker(legal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Declarations a player could try against the lurker, built from the GM's legal entries."""
    made = []
    for item in legal:
        decl = {k: v for k, v in item.items() if isinstance(v, str | int) and k not in ("label", "help", "testid")}
        if "combatant" in decl:
            made.append({**decl, "combatant": "pc1", "target": LURKER})
    return made or [{"type": "attack", "combatant": "pc1", "target": LURKER}]


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_a_player_cannot_target_it_until_it_is_revealed(system_id: str) -> None:
    system, state, _ = started(system_id)
    player = Viewer.player("s1")
    tried = [{"type": "attack", "combatant": "pc1", "target": LURKER},
             {"type": "shoot", "combatant": "pc1", "target": LURKER},
             {"type": "declare", "combatant": "pc1", "kind": "melee", "target": LURKER},
             {"type": "charge", "combatant": "pc1", "targets": [LURKER]}]
    for declaration in tried:
        kind = declaration.pop("type")
        with pytest.raises(RulesError) as refused:
            engine.step(system, state, engine.Command(kind, declaration, player), SeededDice("t"), seed="s")
        assert "cannot be seen" in str(refused.value) or isinstance(refused.value, NotPermitted)
    # the odds refuse the same question, and a player's own odds name it nowhere
    with pytest.raises(RulesError):
        engine.odds(system, state, player, {"type": "attack", "combatant": "pc1", "target": LURKER})


def _play(system: Any, state: dict[str, Any], rng: random.Random, steps: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Up to ``steps`` random declarations from the GM's legal list (the GM plays every side)."""
    from tests.server.test_leaks import declaration_from

    events: list[dict[str, Any]] = []
    for n in range(steps * 4):
        if state.get("status") == "ended" or steps <= 0:
            break
        legal = engine.project(system, state, Viewer.gm()).get("legal") or []
        if not legal:
            break
        decl = declaration_from(rng.choice(legal), rng)
        try:
            made = engine.step(system, state, engine.Command.recorded(decl, Viewer.gm()), SeededDice(f"p{n}"), seed="s")
        except RulesError:
            continue
        state, steps = made.state, steps - 1
        events += made.events
    return state, events


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_its_deeds_reach_the_others_only_as_words_without_its_name(system_id: str) -> None:
    from rules.core import visible_events

    system, state, events = started(system_id)
    state, played = _play(system, state, random.Random(system_id), 40)
    for viewer in others():
        shown = visible_events(events + played, viewer, state)
        assert traces(shown) == [], (viewer, [e["text"] for e in shown if traces(e)])
        assert traces(engine.project(system, state, viewer)) == []
    gm_words = json.dumps(visible_events(events + played, Viewer.gm(), state))
    assert LURKER_NAME in gm_words or LURKER in gm_words


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_the_gm_may_choose_that_the_others_read_nothing_of_it(system_id: str) -> None:
    system, state, events = started(system_id, hidden_words="nothing")
    state, played = _play(system, state, random.Random(system_id), 40)
    assert all("others" not in e for e in events + played if e["visibility"] == "gm" and "Something" in json.dumps(e))


def test_the_gm_is_offered_to_reveal_it_when_a_player_comes_near() -> None:
    system, state, _ = started("battles-and-balances", reveal_range=3)
    state["combatants"][LURKER].update(x=5, y=5)
    state["combatants"]["pc1"].update(x=1, y=1)
    (entry,) = engine.project(system, state, Viewer.gm())["hidden"]
    assert entry["offer"] is None
    state["combatants"]["pc1"].update(x=2, y=4)
    (entry,) = engine.project(system, state, Viewer.gm())["hidden"]
    assert entry["offer"]["why"] == "near" and "within 3 squares" in entry["offer"]["words"]
    # range 0: never offered for coming near
    system, state, _ = started("battles-and-balances", reveal_range=0)
    state["combatants"][LURKER].update(x=2, y=4)
    state["combatants"]["pc1"].update(x=2, y=4)
    assert engine.project(system, state, Viewer.gm())["hidden"][0]["offer"] is None


def test_a_battle_with_nothing_hidden_is_exactly_as_before() -> None:
    system = get_system("eclipse-phase")
    plain = system.validate_lineup(lineup("eclipse-phase", hidden=False))
    options = system.validate_options({})
    one = engine.start(system, plain, options, SeededDice("same"))
    two = system.setup(plain, {k: v for k, v in options.items() if k not in ("hidden_words", "reveal_range")}, SeededDice("same"))
    assert one[0] == two[0] or "hiding" not in one[0]
    assert all("hidden" not in c for c in one[0]["combatants"].values())


def test_a_players_odds_name_no_hidden_foe() -> None:
    system, state, _ = started("battles-and-balances")
    player = Viewer.player("s1")
    state["combatants"][LURKER].update(x=state["combatants"]["pc1"]["x"] + 1, y=state["combatants"]["pc1"]["y"])
    gm_answer = engine.odds(system, state, Viewer.gm(), {"combatant": "pc1"})
    assert LURKER in json.dumps(gm_answer)  # the GM's own answer has the attack on it
    answer = engine.odds(system, state, player, {"combatant": "pc1"})
    assert traces(answer) == [] and "attack:lurker7" not in json.dumps(answer)
    with pytest.raises(RulesError, match="cannot be seen"):
        engine.odds(system, state, player, {"type": "attack", "combatant": "pc1", "target": LURKER})


@pytest.mark.parametrize("system_id", ["eclipse-phase", "battles-and-balances"])
def test_a_players_moves_show_no_hole_where_a_hidden_combatant_stands(system_id: str) -> None:
    system, state, _ = started(system_id)
    if system_id == "battles-and-balances":  # (its first to act is the first seat's)
        assert state["actor"] == "pc1"
    else:
        state["active"] = "pc1"
    me = state["combatants"]["pc1"]
    state["combatants"][LURKER].update(x=me["x"] + 1, y=me["y"] + 1)
    square = [me["x"] + 1, me["y"] + 1]
    view = engine.project(system, state, Viewer.player("s1"))
    (move,) = [item for item in view["legal"] if item["type"] == "move"]
    listed = move.get("reachable") or [[d["x"], d["y"]] for d in move.get("destinations") or []]
    assert square in listed, "the hidden combatant's square is a hole in the player's moves"
    gm_move = next(i for i in engine.project(system, state, Viewer.gm())["legal"] if i["type"] == "move" and i["combatant"] == "pc1")
    assert square not in (gm_move.get("reachable") or [[d["x"], d["y"]] for d in gm_move.get("destinations") or []])
    with pytest.raises(IllegalDeclaration, match="something blocks the way"):
        engine.step(system, state, engine.Command("move", {"combatant": "pc1", "x": square[0], "y": square[1]}, Viewer.player("s1")),
                    SeededDice("m"), seed="s")


@pytest.mark.parametrize("words", ["anonymous", "nothing"])
@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_a_step_that_changes_what_the_others_see_is_never_a_gms_secret(system_id: str, words: str) -> None:
    """(A GM's secret sends the others nothing: their pages would keep a stale view.)"""
    from rules.core import reaches_only_the_gm
    from tests.server.test_leaks import declaration_from

    system, state, _ = started(system_id, hidden_words=words)
    rng = random.Random(f"{system_id}-{words}")
    viewers = others()
    checked = 0
    for n in range(160):
        if state.get("status") == "ended" or checked >= 40:
            break
        legal = engine.project(system, state, Viewer.gm()).get("legal") or []
        if not legal:
            break
        try:
            made = engine.step(system, state, engine.Command.recorded(declaration_from(rng.choice(legal), rng), Viewer.gm()),
                               SeededDice(f"s{n}"), seed="s")
        except RulesError:
            continue
        changed = any(engine.project(system, state, v) != engine.project(system, made.state, v) for v in viewers)
        if changed:
            assert not all(reaches_only_the_gm(e, made.state) for e in made.events), [e["text"] for e in made.events]
        state, checked = made.state, checked + 1
    assert checked >= 5


@pytest.mark.parametrize("system_id", ["phantoms-bane", "olympia"])
def test_only_a_battle_on_a_grid_hides_combatants(system_id: str) -> None:
    system = get_system(system_id)
    entry = {**system.presets()[0], "id": "x1", "side": system.sides[0], "controller": "gm", "hidden": True}
    with pytest.raises(RulesError, match="only a battle on a grid"):
        system.validate_combatant(entry)
    assert all(f.name not in ("hidden_words", "reveal_range") for f in system.battle_option_fields())


def test_the_engine_hides_no_one_in_a_battle_without_a_grid() -> None:
    system = get_system("phantoms-bane")
    presets = system.presets()
    lineup = system.validate_lineup([{**presets[0], "id": "a", "side": "A", "controller": "gm"},
                                     {**presets[1], "id": "b", "side": "B", "controller": "gm"}])
    state, _ = engine.start(system, lineup, system.validate_options({}), SeededDice("pb"))
    with pytest.raises(IllegalDeclaration, match="only a battle on a grid"):
        engine.step(system, state, engine.Command("hide_combatant", {"combatant": "b"}, Viewer.gm()), SeededDice("h"), seed="s")


def test_a_seen_name_that_holds_a_hidden_ones_stays_whole() -> None:
    """A hidden "Orc" beside a "Huge Orc" everyone sees: the others read "Huge Orc" as it is, never
    "Huge the GM", and nothing of the hidden Orc (its name alone, where it stands for the Orc, is the GM's)."""
    from rules import hiding

    hidden, seen = {"o1": "Orc"}, ["Huge Orc", "Jinx"]
    words = {"text": "Huge Orc hits Jinx; Orc waits.", "order": [{"id": "o1", "name": "Orc"}, {"id": "h", "name": "Huge Orc"}]}
    assert hiding.scrub(words, hidden, seen) == {"text": "Huge Orc hits Jinx; the GM waits.", "order": [{"id": "h", "name": "Huge Orc"}]}
    # and the other way round: a hidden "Huge Orc" beside a seen "Orc" is all the GM's
    assert hiding.scrub("Huge Orc hits Orc.", {"h": "Huge Orc"}, ["Orc"]) == "the GM hits Orc."

    system = get_system("battles-and-balances")
    made = lineup("battles-and-balances")
    made[3]["name"], made[2]["name"] = "Orc", "Huge Orc"
    state, events = engine.start(system, system.validate_lineup(made), system.validate_options({}), SeededDice("hide-orc"))
    state, played = _play(system, state, random.Random("orc"), 40)
    from rules.core import visible_events

    for viewer in others():
        shown = json.dumps([e.get("text") for e in visible_events(events + played, viewer, state)])
        assert "Huge the GM" not in shown and "the GM" not in json.dumps(engine.project(system, state, viewer))
        assert "Orc" not in shown.replace("Huge Orc", ""), shown
