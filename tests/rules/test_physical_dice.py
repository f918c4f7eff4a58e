"""Physical dice in every system: typed faces resolve exactly as the board's dice with the same faces.

Each test plays a declaration through the engine (tests/rules/harness.py: rules.engine.step, which
hands it to :func:`rules.physical.apply_declaration`), types the faces each prompt asks for as
``dice_enter`` commands (checked by :func:`check_entry`), and compares the outcome with the same declaration
applied by the system with :class:`ScriptedDice` holding the same faces in the same order.
"""

from __future__ import annotations

from typing import Any

import pytest

from rules import get_system
from rules.core import Viewer
from rules.dice import ScriptedDice
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.physical import HAND, WHO_ROLLS, apply_declaration, check_entry, dice_view, pending, resume, switch
from tests.rules.harness import Rules, scripted
from tests.rules.test_adnd import fighter as adnd_fighter
from tests.rules.test_adnd import new_battle as adnd_battle
from tests.rules.test_battles_balances import duel as bb_duel
from tests.rules.test_eclipse_phase import duel as ep_duel
from tests.rules.test_olympia import noble
from tests.rules.test_olympia import start as olympia_start
from tests.rules.test_phantoms_bane import duel as pb_duel
from tests.rules.test_phantoms_bane import fighter as pb_fighter

GM, SPECTATOR = Viewer.gm(), Viewer.spectator()


def with_mode(state: dict[str, Any], mode: str) -> dict[str, Any]:
    return {**state, "physical": {"mode": mode, "combatants": [], "pending": None}}


def strip(value: Any) -> Any:
    """The state or events without what only physical dice add (the settings, the roll marks)."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in ("physical", "entered_by")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    if isinstance(value, str):
        return value.removesuffix(HAND)
    return value


def play(system: Any, state: dict[str, Any], declaration: dict[str, Any], viewer: Viewer,
         typed: list[list[int]], board: list[int] = (), typists: list[Viewer] | None = None):
    """The declaration through the engine, then each prompt's faces typed (by ``typists[i]``, the GM by
    default) as ``dice_enter`` commands until it resolves."""
    return Rules(system).typed(state, declaration, viewer, zip(typists or [GM] * len(typed), typed, strict=True), board)


def same_as_board(system: Any, state: dict[str, Any], declaration: dict[str, Any], viewer: Viewer,
                  order: list[int], outcome: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    with scripted(order, "the board's roll") as dice:
        plain, events = system.apply(strip(state), declaration, viewer, dice)
    assert strip(outcome[0]) == strip(plain)
    assert strip(outcome[1]) == strip(events)


def physical_rolls(events: list[dict[str, Any]]) -> list[tuple[str, list[int], str]]:
    return [(r["purpose"], r["faces"], r["entered_by"]) for e in events for r in e["rolls"] if r.get("physical")]


# --- Phantom's Bane ---------------------------------------------------------------------------


def pb_state() -> dict[str, Any]:
    return pb_duel(pb_fighter("Jharek", "A", "j", controller="seat", seat="s1"), pb_fighter("Monster", "B", "m"))


def test_the_option_is_offered_by_every_system() -> None:
    for system_id in ("phantoms-bane", "eclipse-phase", "adnd", "battles-and-balances", "olympia"):
        system = get_system(system_id)
        assert WHO_ROLLS in system.battle_option_fields()
        assert system.validate_options({})["who_rolls"] == "board"
        assert system.validate_options({"who_rolls": "all"})["who_rolls"] == "all"
        with pytest.raises(InvalidDeclaration, match="Who rolls"):
            system.validate_options({"who_rolls": "dealer"})


def test_phantoms_bane_dice_are_asked_for_only_after_both_sides_chose() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    j = Viewer.player("s1")
    chose = {"type": "choose", "combatant": "j", "option": "attack"}
    state, events, needs = play(pb, state, chose, j, [])
    assert needs == [] and pending(state) is None  # the first choice stays secret: nothing to roll yet
    before = state
    second = {"type": "choose", "combatant": "m", "option": "defend"}
    after, events, needs = play(pb, state, second, GM, [[5], [2]], board=[3, 4], typists=[j, j])
    assert [n["purpose"] for n in needs] == ["Jharek offence die", "Jharek defence die"]
    assert [n["notation"] for n in needs] == ["1d6", "1d6"] and needs[0]["seats"] == ["s1"]
    # the board rolled the GM's monster; Jharek's two dice were typed on his phone
    assert physical_rolls(events) == [("Jharek offence die", [5], "seat:s1"), ("Jharek defence die", [2], "seat:s1")]
    assert all(e["text"].endswith(HAND) == any(r.get("physical") for r in e["rolls"]) for e in events)
    monster = [r for e in events for r in e["rolls"] if r["purpose"].startswith("Monster")]
    assert monster and not any(r.get("physical") for r in monster)
    same_as_board(pb, before, second, GM, [5, 2, 3, 4], (after, events))


def test_phantoms_bane_everyone_rolls_and_the_gm_types_for_the_monster() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "all")
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "m", "option": "press"}, GM, [])
    decl = {"type": "choose", "combatant": "j", "option": "attack"}
    after, events, needs = play(pb, state, decl, Viewer.player("s1"), [[6], [3], [2], [1], [2]])
    assert [n["purpose"] for n in needs][:4] == ["Jharek offence die", "Jharek defence die",
                                                 "Monster offence die", "Monster defence die"]
    # Jharek's 6 against the monster's defence 1 gets through: the half-dice are asked for too
    assert needs[4]["die"] == "d3" and (needs[4]["low"], needs[4]["high"]) == (1, 3)
    same_as_board(pb, state, decl, Viewer.player("s1"), [6, 3, 2, 1, 2], (after, events))


def test_disengagement_asks_for_two_dice_at_once() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM, [])
    decl = {"type": "choose", "combatant": "j", "option": "run_away"}
    _, _, needs = play(pb, state, decl, Viewer.player("s1"), [[6, 6]], board=[1, 1, 3, 3, 3, 3])
    assert needs[0]["notation"] == "2d6" and needs[0]["count"] == 2 and needs[0]["purpose"] == "Jharek disengagement"


def test_the_gm_switches_one_combatant_to_physical_dice() -> None:
    pb = get_system("phantoms-bane")
    state, events = switch(pb_state(), "m", True)
    assert events[0]["text"] == "Monster now rolls real dice."
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "j", "option": "attack"}, GM, [])
    _, _, needs = play(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM, [[4], [4]],
                       board=[3, 3])
    assert [n["purpose"] for n in needs] == ["Monster offence die", "Monster defence die"] and needs[0]["seats"] == []
    off, _ = switch(state, "m", False)
    assert off["physical"]["combatants"] == []


def test_bad_faces_change_nothing() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    with pytest.raises(IllegalDeclaration, match="no roll is due"):
        check_entry(state, GM, [3])
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "j", "option": "attack"}, Viewer.player("s1"), [])
    state, _ = apply_declaration(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM,
                                 ScriptedDice([]))
    assert pending(state)["need"]["purpose"] == "Jharek offence die"
    with pytest.raises(InvalidDeclaration, match="needs 1 face, not 2"):
        check_entry(state, GM, [3, 4])
    with pytest.raises(InvalidDeclaration, match="a d6 shows 1 to 6, not 7"):
        check_entry(state, Viewer.player("s1"), [7])
    with pytest.raises(InvalidDeclaration, match="whole numbers"):
        check_entry(state, GM, ["3"])
    with pytest.raises(NotPermitted, match="Jharek's, not yours"):
        check_entry(state, Viewer.player("s2"), [3])
    with pytest.raises(NotPermitted, match="spectators"):
        check_entry(state, SPECTATOR, [3])
    with pytest.raises(IllegalDeclaration, match="waits for dice"):
        apply_declaration(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM, ScriptedDice([]))


def test_the_gms_override_rolls_with_the_board_for_an_absent_player() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "j", "option": "attack"}, Viewer.player("s1"), [])
    state, _ = apply_declaration(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM,
                                 ScriptedDice([]))
    state, _ = resume(pb, state, {"faces": [4], "by": "board"}, ScriptedDice([3, 3]))
    state, events = resume(pb, state, {"faces": [4], "by": "seat:s1"}, ScriptedDice([3, 3]))
    rolls = {r["purpose"]: r for e in events for r in e["rolls"]}
    assert "physical" not in rolls["Jharek offence die"]
    assert rolls["Jharek defence die"]["physical"] is True


def test_the_views_show_what_to_roll_only_to_who_may_type_it() -> None:
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    assert dice_view(pb_state(), GM) is None
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "j", "option": "attack"}, Viewer.player("s1"), [])
    state, events = apply_declaration(pb, state, {"type": "choose", "combatant": "m", "option": "attack"}, GM,
                                      ScriptedDice([]))
    assert events[0]["type"] == "dice.requested" and events[0]["text"] == "Waiting for Jharek to roll 1d6 with real dice."
    mine = dice_view(state, Viewer.player("s1"))["due"]
    assert mine["mine"] and mine["prompt"] == "Roll 1d6 for Jharek offence die" and (mine["low"], mine["high"]) == (1, 6)
    assert dice_view(state, GM)["due"]["mine"]
    public = dice_view(state, SPECTATOR)["due"]
    assert not public["mine"] and "purpose" not in public and public["roller_name"] == "Jharek"
    assert "declaration" not in str(dice_view(state, SPECTATOR))  # the pending choice never shows
    assert dice_view(state, SPECTATOR)["physical"] == ["j"]


def test_a_choice_held_for_real_dice_shows_as_chosen_and_stays_secret() -> None:
    """While the turn's dice are due, the card of the side whose choice ended the turn says it has
    chosen (nobody is "still choosing"), and no page but the GM's learns what."""
    pb = get_system("phantoms-bane")
    state = with_mode(pb_state(), "players")
    state, _, _ = play(pb, state, {"type": "choose", "combatant": "j", "option": "attack"}, Viewer.player("s1"), [])
    state, _ = apply_declaration(pb, state, {"type": "choose", "combatant": "m", "option": "defend"}, GM, ScriptedDice([]))
    assert pending(state) is not None and state["choices"].get("m") is None  # held, not applied
    for viewer in (GM, SPECTATOR, Viewer.player("s1")):
        view = pb.view_for(state, viewer)
        assert view["waiting_for"] == [], viewer
        assert view["combatants"]["m"]["has_chosen"] and view["combatants"]["j"]["has_chosen"]
    for viewer in (SPECTATOR, Viewer.player("s1")):
        assert "defend" not in str(pb.view_for(state, viewer)["combatants"]["m"]) and "defend" not in str(dice_view(state, viewer))


# --- Eclipse Phase ------------------------------------------------------------------------------


def test_eclipse_phase_exchange_with_typed_d100s_and_damage() -> None:
    ep = get_system("eclipse-phase")
    sa, sd = Viewer.player("sa"), Viewer.player("sd")
    state = with_mode(ep_duel(), "players")
    state, _, needs = play(ep, state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0}, sa, [])
    assert needs == []
    before = state
    defend = {"type": "defend", "combatant": "d", "method": "fray"}
    state, events, needs = play(ep, before, defend, sd, [[22], [71]], typists=[sa, sd])
    assert [(n["die"], n["low"], n["high"], n["seats"]) for n in needs] == [("d100", 0, 99, ["sa"]), ("d100", 0, 99, ["sd"])]
    assert needs[0]["purpose"].startswith("Ava attack")
    same_as_board(ep, before, defend, sd, [22, 71], (state, events))
    assert physical_rolls(events)[0][1:] == ([22], "seat:sa")
    # both accept; the damage dice are the attacker's
    post = state["pending"]["post"]
    waiting = [(cid, v) for side, cid, v in (("attacker", "a", sa), ("defender", "d", sd)) if not post[side]["accepted"]]
    for cid, viewer in waiting[:-1]:
        state, _, _ = play(ep, state, {"type": "accept", "combatant": cid}, viewer, [])
    before = state
    accept = {"type": "accept", "combatant": waiting[-1][0]}
    last = waiting[-1][1]
    state, events, needs = play(ep, before, accept, last, [[5, 6], [50]], typists=[sa, sd])
    assert needs[0]["purpose"].endswith("damage") and needs[0]["notation"] == "2d10"
    assert needs[1]["purpose"] == "Dov SOM check" and needs[1]["seats"] == ["sd"]  # the wounded rolls his own
    same_as_board(ep, before, accept, last, [5, 6, 50], (state, events))


# --- AD&D ---------------------------------------------------------------------------------------


def test_adnd_initiative_is_asked_for_only_after_every_declaration() -> None:
    adnd = get_system("adnd")
    state = adnd_battle([adnd_fighter("aldo", controller="seat", seat="s1"), adnd_fighter("orc", "B")])
    state = with_mode(state, "players")
    state, _, needs = play(adnd, state, {"type": "declare", "combatant": "orc", "kind": "melee", "target": "aldo"},
                           GM, [])
    state, _, needs = play(adnd, state, {"type": "roll_order", "at": 100.0}, GM, [], board=[1])
    assert needs == []
    state, _, needs = play(adnd, state, {"type": "declare", "combatant": "aldo", "kind": "melee", "target": "orc",
                                         "at": 101.0}, Viewer.player("s1"), [])
    assert needs == []
    assert state["phase"] == "initiative"
    before = state
    state, events, needs = play(adnd, before, {"type": "roll_initiative"}, GM, [[6]], board=[2],
                                typists=[Viewer.player("s1")])
    assert [(n["roller"], n["purpose"], n["seats"]) for n in needs] == [("side:A", "initiative, side A", ["s1"])]
    assert physical_rolls(events) == [("initiative, side A", [6], "seat:s1")]
    same_as_board(adnd, before, {"type": "roll_initiative"}, GM, [6, 2], (state, events))
    # Aldo's attack and damage are his; the orc's the board's
    before = state
    state, events, needs = play(adnd, before, {"type": "resolve_all"}, GM, [[18], [7]], board=[3])
    assert [n["purpose"] for n in needs] == ["Aldo attacks Orc", "Aldo's long sword damage"]
    assert needs[1]["notation"] == "1d8"
    same_as_board(adnd, before, {"type": "resolve_all"}, GM, [18, 7, 3], (state, events))


# --- Battles&Balances -----------------------------------------------------------------------------


def test_battles_and_balances_attack_pool_and_damage_typed_by_the_player() -> None:
    bb = get_system("battles-and-balances")
    state = with_mode(bb_duel(), "players")
    decl = {"type": "attack", "combatant": "vasyl", "target": "trooper"}
    after, events, needs = play(bb, state, decl, Viewer.player("s1"), [[1, 7, 8, 3], [5]], board=[12, 4],
                                typists=[Viewer.player("s1")] * 2)
    assert [n["notation"] for n in needs] == ["4d8", "1d6"]
    same_as_board(bb, state, decl, Viewer.player("s1"), [1, 7, 8, 3, 12, 4, 5], (after, events))
    assert after["combatants"]["trooper"]["wounds"] == 19


# --- Olympia ------------------------------------------------------------------------------------


def test_olympia_the_gm_types_the_nobles_d100s_and_the_board_rolls_the_masses() -> None:
    olympia = get_system("olympia")
    lineup = [noble("osswid", "A", knight=1), noble("brennan", "B", leader=True), noble("vassal", "B", behind=1, soldier=1)]
    state, _ = olympia_start(lineup, {"prisoners": True, "break_point_b": 90})
    state = with_mode(state, "all")
    step = {"type": "step", "by": "phase"}
    after, events, needs = play(olympia, state, step, GM, [[20], [10], [90]], board=[0, 0, 1, 17, 0, 17])
    assert [n["die"] for n in needs] == ["d100"] * 3 and needs[0]["purpose"] == "wound of Brennan"
    assert after["combatants"]["brennan"]["state"] == "prisoner"
    same_as_board(olympia, state, step, GM, [0, 0, 1, 17, 0, 17, 20, 10, 90], (after, events))
    # with the players' option the GM's procedural rolls stay the board's
    plain, _, needs = play(olympia, with_mode(state, "players"), step, GM, [], board=[0, 0, 1, 17, 0, 17, 20, 10, 90])
    assert needs == [] and strip(plain) == strip(after)
