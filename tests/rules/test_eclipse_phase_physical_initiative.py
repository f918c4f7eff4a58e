"""Eclipse Phase: the first action turn's initiative with real dice.

With the board rolling everything, setup rolls the first initiative at once (the seeded tests and worked
examples depend on it). When any able combatant rolls real dice, the battle starts with initiative due:
the GM's ``roll_initiative`` goes through the same initiative code as later action turns, so the waiting
of rules/physical.py asks each physical roller for their d6 (the GM for NPCs in "all"), and the typed faces
decide the order exactly as the board's faces would.
"""

from __future__ import annotations

from typing import Any

import pytest

from rules.core import Viewer
from rules.dice import ScriptedDice
from rules.errors import IllegalDeclaration, NotPermitted
from rules.physical import HAND, apply_declaration, check_entry, dice_view, pending, resume
from rules.systems.eclipse_phase import EclipsePhase
from rules.systems.eclipse_phase.data import INITIATIVE_DUE
from tests.rules.harness import Rules
from tests.rules.test_eclipse_phase import base

EP = EclipsePhase()
RULES = Rules(EP)
GM, SPECTATOR = Viewer.gm(), Viewer.spectator()
SA, SD = Viewer.player("sa"), Viewer.player("sd")
ROLL = {"type": "roll_initiative"}


def ava(**extra: Any) -> dict[str, Any]:
    return base(id="a", name="Ava", side="A", controller="seat", seat="sa", initiative=8, guns=50, melee=50,
                fray=50, durability=40, x=1, y=1, weapon1="medium_pistol", weapon2="none", weapon3="none") | extra


def dov(**extra: Any) -> dict[str, Any]:
    return base(id="d", name="Dov", side="B", controller="seat", seat="sd", initiative=8, guns=40, melee=40,
                fray=40, durability=40, x=6, y=1, weapon1="knife", weapon2="none", weapon3="none") | extra


def guard(**extra: Any) -> dict[str, Any]:
    return base(id="g", name="Guard", side="B", controller="gm", initiative=8, guns=40, melee=40, fray=40,
                durability=35, x=6, y=3, weapon1="medium_pistol", weapon2="none", weapon3="none") | extra


def setup(lineup: list[dict[str, Any]], who_rolls: str | None, faces: list[int] = ()) -> tuple[dict[str, Any], list]:
    return RULES.start(lineup, {} if who_rolls is None else {"who_rolls": who_rolls}, faces=faces)


def roll_initiative(state: dict[str, Any], typed: list[tuple[Viewer, list[int]]], board: list[int] = ()):
    """The GM's roll_initiative, then each prompt's faces typed by the given viewer (checked as the server does)."""
    return RULES.typed(state, ROLL, GM, typed, board)


# --- the board rolls everything: nothing changes ----------------------------------------------------


@pytest.mark.parametrize("who_rolls", [None, "board"])
def test_with_the_board_rolling_setup_rolls_the_first_initiative_at_once(who_rolls: str | None) -> None:
    state, events = setup([ava(), dov()], who_rolls, [2, 5])
    assert "initiative_due" not in state
    assert state["round"] == 1 and state["order"] == ["d", "a"] and state["active"] == "d"
    assert [e["type"] for e in events][:2] == ["battle.started", "round.started"]
    view = EP.view_for(state, GM)
    assert "initiative_due" not in view and not any(t["type"] == "roll_initiative" for t in view["legal"])
    with pytest.raises(IllegalDeclaration, match="initiative is rolled already"):
        EP.apply(state, ROLL, GM, ScriptedDice([]))


def test_the_same_battle_with_board_dice_and_with_typed_faces_ends_in_the_same_order() -> None:
    board, _ = setup([ava(), dov()], "board", [2, 5])
    typed, _ = setup([ava(), dov()], "players")
    typed, _, _ = roll_initiative(typed, [(SA, [2]), (SD, [5])])
    for key in ("round", "order", "initiative", "turn_index", "active", "turn", "combatants"):
        assert typed[key] == board[key], key


# --- players roll their own: the battle starts with initiative due --------------------------------


def test_with_players_rolling_the_battle_starts_with_initiative_due() -> None:
    state, events = setup([ava(), dov()], "players")  # no die rolled at all
    assert state["initiative_due"] is True
    assert state["round"] == 0 and state["order"] == [] and state["active"] is None
    assert events[-1]["type"] == "initiative.due"
    assert events[-1]["text"].startswith(INITIATIVE_DUE) and "Ava, Dov roll a d6" in events[-1]["text"]
    for viewer in (GM, SA, SPECTATOR):
        assert EP.view_for(state, viewer)["initiative_due"] == {"text": "Roll initiative to begin", "rollers": ["Ava", "Dov"],
                                                                 "combatants": ["a", "d"]}
    assert [t for t in EP.view_for(state, GM)["legal"] if t["type"] == "roll_initiative"] == [
        {"type": "roll_initiative", "label": "Roll initiative"}]
    assert EP.view_for(state, SA)["legal"] == [] and EP.view_for(state, SPECTATOR)["legal"] == []
    assert EP.is_checkpoint(state)  # undo may come back here


def test_only_the_gm_starts_the_action_turn_and_nobody_acts_before() -> None:
    state, _ = setup([ava(), dov()], "players")
    with pytest.raises(NotPermitted):
        EP.authorize(state, {"type": "roll_initiative", "combatant": "a"}, SA)
    with pytest.raises(IllegalDeclaration, match="only the GM"):
        EP.apply(state, {"type": "roll_initiative", "combatant": "a"}, SA, ScriptedDice([]))
    for declaration in ({"type": "end_turn", "combatant": "a"}, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0}):
        with pytest.raises(IllegalDeclaration, match="not Ava's turn"):
            EP.apply(state, declaration, SA, ScriptedDice([]))
    with pytest.raises(IllegalDeclaration, match="no computer-played combatant"):
        EP.apply(state, {"type": "advance"}, GM, ScriptedDice([]))


@pytest.mark.parametrize(("ava_face", "dov_face", "order"), [(2, 5, ["d", "a"]), (6, 1, ["a", "d"])])
def test_the_typed_faces_decide_the_order(ava_face: int, dov_face: int, order: list[str]) -> None:
    state, _ = setup([ava(), dov()], "players")
    state, events, needs = roll_initiative(state, [(SA, [ava_face]), (SD, [dov_face])])
    assert [(n["purpose"], n["notation"], n["seats"]) for n in needs] == [
        ("Ava initiative", "1d6", ["sa"]), ("Dov initiative", "1d6", ["sd"])]
    assert "initiative_due" not in state and pending(state) is None
    assert state["round"] == 1 and state["order"] == order and state["active"] == order[0]
    assert state["initiative"]["a"]["total"] == 8 + ava_face and state["initiative"]["d"]["total"] == 8 + dov_face
    started = next(e for e in events if e["type"] == "round.started")
    assert [(r["faces"], r["physical"], r["entered_by"]) for r in started["rolls"]] == [
        ([ava_face], True, "seat:sa"), ([dov_face], True, "seat:sd")]
    assert started["text"].endswith(HAND) and started["text"].startswith("Action turn 1. Initiative:")
    assert "initiative_due" not in EP.view_for(state, GM)
    with pytest.raises(IllegalDeclaration, match="initiative is rolled already"):
        apply_declaration(EP, state, ROLL, GM, ScriptedDice([]))


def test_while_a_d6_is_due_the_roller_sees_the_prompt_and_only_they_or_the_gm_may_type_it() -> None:
    state, _ = setup([ava(), dov()], "players")
    waiting, events = apply_declaration(EP, state, ROLL, GM, ScriptedDice([]))
    assert [e["type"] for e in events] == ["dice.requested"]
    assert waiting["initiative_due"] is True and waiting["round"] == 0  # nothing else changed
    assert not EP.is_checkpoint(waiting)  # undo never lands on half-typed dice
    assert dice_view(waiting, SA)["due"]["prompt"] == "Roll 1d6 for Ava initiative"
    assert dice_view(waiting, SD)["due"]["mine"] is False
    with pytest.raises(NotPermitted, match="Ava's, not yours"):
        check_entry(waiting, SD, [3])
    with pytest.raises(IllegalDeclaration, match="waits for dice"):
        apply_declaration(EP, waiting, ROLL, GM, ScriptedDice([]))
    entry = check_entry(waiting, GM, [3])  # the GM may type for an absent player
    after, _ = resume(EP, waiting, entry, ScriptedDice([]))
    assert pending(after)["need"]["purpose"] == "Dov initiative"


def test_ties_are_rolled_off_by_the_physical_rollers_too() -> None:
    state, _ = setup([ava(), dov()], "players")
    state, events, needs = roll_initiative(state, [(SA, [4]), (SD, [4]), (SA, [3]), (SD, [6])])
    assert [n["purpose"] for n in needs] == ["Ava initiative", "Dov initiative", "Ava initiative tie-break",
                                             "Dov initiative tie-break"]
    assert state["order"] == ["d", "a"] and state["initiative"]["d"]["tiebreak"] == [6]


def test_wounds_carried_into_the_fight_still_lower_the_typed_initiative() -> None:
    state, _ = setup([ava(wounds=2, damage=20), dov()], "players")
    state, _, _ = roll_initiative(state, [(SA, [6]), (SD, [5])])
    assert state["initiative"]["a"] == {"score": 6, "roll": 6, "total": 12, "tiebreak": []}
    assert state["order"] == ["d", "a"]  # 13 against 12


# --- mixed: players type, the board rolls for the GM's NPCs -------------------------------------------


def test_mixed_players_type_and_the_board_rolls_for_the_gms_npc() -> None:
    state, events = setup([ava(), guard()], "players")
    assert state["initiative_due"] is True and "Ava rolls a d6" in events[-1]["text"]
    assert EP.view_for(state, GM)["initiative_due"]["rollers"] == ["Ava"]
    state, events, needs = roll_initiative(state, [(SA, [1])], board=[6])
    assert [n["purpose"] for n in needs] == ["Ava initiative"]
    started = next(e for e in events if e["type"] == "round.started")
    assert [(r["purpose"], r["faces"], r.get("physical", False)) for r in started["rolls"]] == [
        ("Ava initiative", [1], True), ("Guard initiative", [6], False)]
    assert state["order"] == ["g", "a"] and state["active"] == "g"


def test_a_computer_played_npc_acts_as_soon_as_the_typed_initiative_puts_it_first() -> None:
    state, _ = setup([ava(), guard(controller="computer")], "players")
    state, events, _ = roll_initiative(state, [(SA, [1])], board=[6])
    assert state["order"] == ["g", "a"]
    # the computer did not wait: it shot at Ava, who is asked to defend
    assert state["pending"] is not None and state["pending"]["attacker"] == "g" and state["pending"]["phase"] == "defence"
    assert any(t["type"] == "defend" for t in EP.view_for(state, SA)["legal"])


def test_mixed_with_only_npcs_and_board_rolling_players_starts_at_once() -> None:
    # "players" with no seated combatant: nobody types, so nothing is due
    state, _ = setup([guard(id="g1", name="Guard 1", side="A", x=1), guard()], "players", [3, 4])
    assert "initiative_due" not in state and state["round"] == 1


# --- everyone rolls: the GM types for NPCs -------------------------------------------------------------


def test_everyone_rolls_and_the_gm_types_the_npcs_d6() -> None:
    state, events = setup([ava(), guard()], "all")
    assert "Ava, Guard roll a d6" in events[-1]["text"]
    state, events, needs = roll_initiative(state, [(SA, [2]), (GM, [5])])
    assert [(n["purpose"], n["seats"]) for n in needs] == [("Ava initiative", ["sa"]), ("Guard initiative", [])]
    started = next(e for e in events if e["type"] == "round.started")
    assert [r["entered_by"] for r in started["rolls"]] == ["seat:sa", "gm"]
    assert state["order"] == ["g", "a"]


def test_a_player_may_not_type_the_npcs_d6() -> None:
    state, _ = setup([ava(), guard()], "all")
    waiting, _ = apply_declaration(EP, state, ROLL, GM, ScriptedDice([]))
    waiting, _ = resume(EP, waiting, check_entry(waiting, SA, [2]), ScriptedDice([]))
    with pytest.raises(NotPermitted):
        check_entry(waiting, SA, [5])


def test_an_incapacitated_combatant_rolls_no_initiative() -> None:
    state, events = setup([ava(), dov(), guard(damage=35)], "all")
    assert EP.view_for(state, GM)["initiative_due"]["rollers"] == ["Ava", "Dov"]
    state, _, needs = roll_initiative(state, [(SA, [2]), (SD, [3])])
    assert [n["purpose"] for n in needs] == ["Ava initiative", "Dov initiative"] and state["order"] == ["d", "a"]


def test_later_action_turns_are_typed_as_before() -> None:
    state, _ = setup([ava(), dov()], "players")
    state, _, _ = roll_initiative(state, [(SA, [6]), (SD, [1])])
    state, _ = apply_declaration(EP, state, {"type": "end_turn", "combatant": "a"}, SA, ScriptedDice([]))
    state, _ = apply_declaration(EP, state, {"type": "end_turn", "combatant": "d"}, SD, ScriptedDice([]))
    assert pending(state)["need"]["purpose"] == "Ava initiative" and state["round"] == 1
