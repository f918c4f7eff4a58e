"""Phantom's Bane: the rule text's worked example turn by turn, every ruling, properties and replay."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import get_system
from rules.core import Viewer, visible_events
from rules.dice import ScriptedDice, SeededDice, derive_seed
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.systems.phantoms_bane import OPTIONS, PhantomsBane, computer_scores
from rules.systems.phantoms_bane.computer import computer_pick
from rules.systems.phantoms_bane.view import project
from tests.rules.harness import Rules, of_type, types

PB = PhantomsBane()
RULES = Rules(PB)
GM = Viewer.gm()
SPECTATOR = Viewer.spectator()
PRESETS = {p["name"]: p for p in PB.presets()}


def fighter(name: str = "A", side: str = "A", cid: str | None = None, **stats: Any) -> dict[str, Any]:
    base = {
        "offence": 4,
        "defence": 4,
        "health": 6,
        "skill": 3,
        "weapon_name": "Sword",
        "weapon_bonus": 2,
        "weapon_natural": False,
        "armour_name": "Mail",
        "armour_bonus": 2,
        "armour_natural": False,
    }
    return {**base, "name": name, "side": side, "id": cid or name.lower(), **stats}


def duel(a: dict[str, Any], b: dict[str, Any], options: dict[str, Any] | None = None, faces=()) -> dict:
    return RULES.start([a, b], options, faces=faces)[0]


def jharek_vs_monster(**kw: Any) -> dict:
    return duel(
        {**PRESETS["Jharek"], "id": "j", "side": "A", **kw},
        {**PRESETS["Wild Monster"], "id": "m", "side": "B"},
    )


def turn(state: dict, choices: dict[str, str], faces: list[int], viewer: Viewer = GM) -> tuple[dict, list]:
    """Both choices through the engine; the scripted faces must be used up exactly."""
    declarations = [{"type": "choose", "combatant": cid, "option": option} for cid, option in choices.items()]
    return RULES.plays(state, declarations, viewer, faces=faces)


# --- the worked example ---------------------------------------------------------------------------


def test_worked_example_four_turns() -> None:
    state = jharek_vs_monster()
    j, m = state["combatants"]["j"], state["combatants"]["m"]
    assert (j["offence"], j["defence"], j["health"], j["skill"]) == (4, 5, 7, 5)
    assert (m["offence"], m["defence"], m["health"], m["skill"]) == (8, 7, 2, 2)
    assert PB.is_checkpoint(state)

    # Turn 1: both attack; dice 1 3 5 6; the monster counters (half-die 1)
    state, ev = turn(state, {"j": "attack", "m": "attack"}, [1, 3, 5, 6, 1])
    last = state["last_turn"]
    assert last["turn"] == 1 and last["dice_order"] == [1, 3, 5, 6]
    assert last["totals"]["j"]["offence"]["total"] == 8
    assert last["totals"]["j"]["defence"]["total"] == 13
    assert last["totals"]["m"]["offence"]["total"] == 14
    assert last["totals"]["m"]["defence"]["total"] == 14
    assert last["damage"]["j"] == {"hits": 1, "penetration": 0, "counter": 1, "total": 2}
    assert last["damage"]["m"]["total"] == 0
    assert last["counters"] == [{"by": "m", "on": "j", "half_dice": [1], "amount": 1, "doubled": False}]
    assert last["penetrations"] == [] and last["weakening"] == []
    j, m = state["combatants"]["j"], state["combatants"]["m"]
    assert (j["health"], j["health_max"]) == (5, 7)
    assert j["weapon"]["bonus"] == 2 and j["weapon"]["max_bonus"] == 3
    assert m["health"] == 2
    assert types(ev).count("damage.dealt") == 1
    assert of_type(ev, "damage.dealt")[0]["data"] == {"attacker": "m", "target": "j", "amount": 1}
    assert of_type(ev, "weapon.worn")[0]["data"]["after"] == 2
    assert "counter.scored" in types(ev) and "combatant.weakened" not in types(ev)
    resolved = of_type(ev, "turn.resolved")[0]
    assert [r["faces"] for r in resolved["rolls"]] == [[1], [3], [5], [6]]
    assert resolved["visibility"] == "public"
    assert state["turn"] == 2 and state["status"] == "active"
    assert PB.view_for(state, GM)["combatants"]["j"]["weapon_label"] == "+2 (Hand Axe)"

    # Turn 2: Jharek defends, the monster presses; dice 2 6 5 3; nobody is hurt
    state, ev = turn(state, {"j": "defend", "m": "press"}, [2, 6, 5, 3])
    t = state["last_turn"]["totals"]
    assert t["j"]["offence"] == {"die": 2, "attribute": 4, "modifier": -2, "gear": 2, "total": 6}
    assert t["j"]["defence"] == {"die": 6, "attribute": 5, "modifier": 2, "gear": 5, "total": 18}
    assert t["m"]["offence"] == {"die": 5, "attribute": 8, "modifier": 4, "gear": 1, "total": 18}
    assert t["m"]["defence"] == {"die": 3, "attribute": 7, "modifier": -3, "gear": 1, "total": 8}
    assert "damage.dealt" not in types(ev) and "counter.scored" not in types(ev)
    assert state["last_turn"]["weakening"] == []
    assert (state["combatants"]["j"]["health"], state["combatants"]["m"]["health"]) == (5, 2)

    # Turn 3: the same choices; dice 3 3 5 2; Jharek takes 3, then both weaken
    state, ev = turn(state, {"j": "defend", "m": "press"}, [3, 3, 5, 2])
    t = state["last_turn"]["totals"]
    assert (t["j"]["offence"]["total"], t["j"]["defence"]["total"]) == (7, 15)
    assert (t["m"]["offence"]["total"], t["m"]["defence"]["total"]) == (18, 7)
    assert state["last_turn"]["damage"]["j"]["hits"] == 3 and state["last_turn"]["damage"]["m"]["total"] == 0
    j, m = state["combatants"]["j"], state["combatants"]["m"]
    assert j["health"] == 2 and m["health"] == 2
    assert (j["defence"], j["defence_max"], m["defence"], m["defence_max"]) == (4, 5, 6, 7)
    assert state["last_turn"]["weakening"] == [
        {"combatant": "j", "attribute": "defence", "before": 5, "after": 4},
        {"combatant": "m", "attribute": "defence", "before": 7, "after": 6},
    ]
    assert types(ev).count("combatant.weakened") == 2
    view = PB.view_for(state, SPECTATOR)
    assert view["combatants"]["j"]["armour_label"] == "+4/5 (Leather Armour)"
    assert view["combatants"]["j"]["armour"]["effective"] == 4

    # Turn 4: Jharek runs (2+6+4+5 = 17 against 3+4+8+2 = 17: a tie fails), then is forced to attack.
    state, ev = turn(state, {"j": "run_away", "m": "press"}, [2, 6, 3, 4, 4, 1, 6, 2, 1, 3])
    last = state["last_turn"]
    assert last["escape"]["rolls"]["j"]["total"] == 17 and last["escape"]["rolls"]["m"]["total"] == 17
    assert last["escape"]["escaped"] == [] and last["effective"]["j"] == "attack"
    failed = of_type(ev, "escape.failed")[0]
    assert [r["faces"] for r in failed["rolls"]] == [[2, 6], [3, 4]]
    t = last["totals"]
    assert t["j"]["offence"] == {"die": 4, "attribute": 4, "modifier": 0, "gear": 2, "total": 10}
    assert t["j"]["defence"] == {"die": 1, "attribute": 4, "modifier": 0, "gear": 4, "total": 9}
    assert t["m"]["offence"] == {"die": 6, "attribute": 8, "modifier": 4, "gear": 1, "total": 19}
    assert t["m"]["defence"] == {"die": 2, "attribute": 6, "modifier": -3, "gear": 1, "total": 6}
    assert last["damage"]["m"] == {"hits": 4, "penetration": 0, "counter": 0, "total": 4}
    assert last["damage"]["j"] == {"hits": 10, "penetration": 4, "counter": 0, "total": 14}
    assert last["penetrations"] == [{"by": "m", "on": "j", "half_dice": [1, 3], "amount": 4, "doubled": True}]
    j, m = state["combatants"]["j"], state["combatants"]["m"]
    assert j["health"] == -12 and m["health"] == -2
    assert j["armour"]["bonus"] == 1 and j["armour"]["name"] == "Leather Armour" and j["destroyed"] == []
    assert last["weakening"] == []
    assert sorted(last["defeated"]) == ["j", "m"]
    assert state["status"] == "ended"
    assert state["outcome"]["result"] == "draw" and state["outcome"]["winner"] is None
    assert PB.outcome(state) == state["outcome"]
    assert types(ev)[-1] == "battle.ended"
    assert ev.index(of_type(ev, "escape.failed")[0]) < ev.index(of_type(ev, "turn.resolved")[0])
    assert not PB.is_checkpoint(state)
    assert PB.view_for(state, GM)["legal"] == []
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "choose", "combatant": "j", "option": "attack"})
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "force_resolve"})
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "set_escape", "possible": False})


# --- gear -----------------------------------------------------------------------------------------


def test_worn_armour_destroyed_by_penetration() -> None:
    state = duel(fighter("A", armour_bonus=0), fighter("B", "B", armour_bonus=2))
    # A presses: offence 6 against B's defence 1 -> two half-dice 1 + 2 = 3 off B's mail (+2)
    state, ev = turn(state, {"a": "press", "b": "attack"}, [6, 3, 3, 1, 1, 2])
    b = state["combatants"]["b"]
    assert b["armour"] is None
    assert b["destroyed"] == [{"item": "armour", "name": "Mail", "max_bonus": 2, "turn": 1}]
    assert state["last_turn"]["wear"] == [
        {"combatant": "b", "item": "armour", "name": "Mail", "before": 2, "after": 0, "destroyed": True}
    ]
    assert types(ev).index("armour.worn") < types(ev).index("armour.destroyed")
    view = PB.view_for(state, SPECTATOR)
    assert (
        view["combatants"]["b"]["armour"] is None
        and view["combatants"]["b"]["destroyed"][0]["name"] == "Mail"
    )
    assert view["combatants"]["b"]["armour_label"] == "none"


def test_carried_weapon_destroyed_by_counter() -> None:
    state = duel(fighter("A", weapon_bonus=1), fighter("B", "B"))
    # B defends and counters (defence 6 vs A's offence 1): two half-dice 2 + 3 = 5
    state, ev = turn(state, {"a": "attack", "b": "defend"}, [1, 4, 2, 6, 2, 3])
    a = state["combatants"]["a"]
    assert a["weapon"] is None and a["destroyed"][0]["item"] == "weapon"
    assert state["last_turn"]["counters"][0]["doubled"] is True
    assert state["last_turn"]["damage"]["a"]["counter"] == 5
    assert "weapon.destroyed" in types(ev)


def test_natural_armour_and_weapon_worn_to_zero_are_kept() -> None:
    state = jharek_vs_monster()
    # Jharek presses and penetrates the Matted Fur (+1) for 2+3: the fur stays at +0
    state, ev = turn(state, {"j": "press", "m": "attack"}, [6, 4, 2, 1, 2, 3])
    m = state["combatants"]["m"]
    assert state["status"] == "ended"  # 6+4+2+3 = 15 against 1+7+1 = 9: the monster falls
    assert m["armour"] == {"name": "Matted Fur", "bonus": 0, "max_bonus": 1, "natural": True}
    assert m["destroyed"] == [] and "armour.destroyed" not in types(ev)

    state = duel(
        fighter("A", health=20), fighter("B", "B", weapon_name="Claws", weapon_bonus=1, weapon_natural=True)
    )
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [2, 6, 1, 3, 3])
    b = state["combatants"]["b"]
    assert b["weapon"]["bonus"] == 0 and b["weapon"]["name"] == "Claws" and b["destroyed"] == []
    # worn to +0, the claws are not worn further by the next counter
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [2, 6, 1, 3, 2])
    assert "weapon.worn" not in types(ev) and state["combatants"]["b"]["weapon"]["bonus"] == 0


def test_gear_bonus_capped_by_current_attribute_before_press_or_defend() -> None:
    # Offence 4 with a +6 weapon counts +4; pressing adds half of 4 after the cap
    state = duel(
        fighter("A", offence=4, weapon_bonus=6), fighter("B", "B", defence=2, armour_bonus=5, health=20)
    )
    state, _ = turn(state, {"a": "press", "b": "defend"}, [3, 3, 3, 3])
    t = state["last_turn"]["totals"]
    assert t["a"]["offence"] == {"die": 3, "attribute": 4, "modifier": 2, "gear": 4, "total": 13}
    # Defence 2 with +5 armour counts +2; defending adds 1 after the cap
    assert t["b"]["defence"] == {"die": 3, "attribute": 2, "modifier": 1, "gear": 2, "total": 8}
    assert t["a"]["defence"]["modifier"] == -2 and t["b"]["offence"]["modifier"] == -2


def test_zero_attribute_makes_gear_useless() -> None:
    state = duel(fighter("A", offence=0, weapon_bonus=5), fighter("B", "B", health=20))
    state, _ = turn(state, {"a": "attack", "b": "attack"}, [3, 3, 3, 3])
    assert state["last_turn"]["totals"]["a"]["offence"]["total"] == 3


# --- running away ---------------------------------------------------------------------------------


def test_both_run_away_escape_without_dice() -> None:
    state = duel(fighter("A"), fighter("B", "B"))
    state, ev = turn(state, {"a": "run_away", "b": "run_away"}, [])
    assert state["status"] == "ended"
    assert state["outcome"]["result"] == "escape" and sorted(state["outcome"]["escaped"]) == ["a", "b"]
    assert state["last_turn"]["escape"]["automatic"] is True
    assert state["last_turn"]["dice"] is None and "damage.dealt" not in types(ev)
    assert types(ev).count("escape.succeeded") == 2 and types(ev)[-1] == "battle.ended"
    assert state["combatants"]["a"]["escaped"] and state["combatants"]["b"]["escaped"]


def test_run_away_against_defend_escapes_automatically() -> None:
    state = duel(fighter("A", defence=0, skill=0), fighter("B", "B", offence=30, skill=30))
    state, ev = turn(state, {"a": "run_away", "b": "defend"}, [])
    assert state["outcome"]["result"] == "escape" and state["outcome"]["escaped"] == ["a"]
    assert state["outcome"]["winner"] is None
    # no weakening after a successful escape, even with a tiny Health
    assert "combatant.weakened" not in types(ev)


def test_run_away_roll_succeeds_when_strictly_higher() -> None:
    state = duel(fighter("A", defence=5, skill=5), fighter("B", "B", offence=4, skill=5))
    # 2+6+5+5 = 18 against 3+4+4+5 = 16: away, and no combat dice are rolled
    state, ev = turn(state, {"a": "run_away", "b": "attack"}, [2, 6, 3, 4])
    assert state["last_turn"]["escape"]["rolls"]["a"]["total"] == 18
    assert state["last_turn"]["escape"]["rolls"]["b"]["total"] == 16
    assert state["outcome"]["result"] == "escape"
    succeeded = of_type(ev, "escape.succeeded")[0]
    assert succeeded["data"]["disengagement"] == 18 and len(succeeded["rolls"]) == 2


def test_runner_on_side_b_rolls_first() -> None:
    state = duel(fighter("A", offence=4, skill=0), fighter("B", "B", defence=4, skill=0))
    # B runs: B's 2d6 first (1+1+4 = 6), then A's (6+6+4 = 16); then the four combat dice
    state, _ = turn(state, {"a": "press", "b": "run_away"}, [1, 1, 6, 6, 3, 3, 3, 3])
    esc = state["last_turn"]["escape"]
    assert esc["rolls"]["b"]["faces"] == [1, 1] and esc["rolls"]["a"]["faces"] == [6, 6]
    assert state["last_turn"]["totals"]["b"]["offence"]["modifier"] == 0
    assert state["last_turn"]["totals"]["a"]["offence"]["modifier"] == 2


def test_run_away_ignores_gear_and_modifiers() -> None:
    state = duel(
        fighter("A", defence=3, skill=1, armour_bonus=3),
        fighter("B", "B", offence=3, skill=1, weapon_bonus=3),
    )
    state, _ = turn(state, {"a": "run_away", "b": "press"}, [3, 3, 3, 3, 2, 2, 2, 2])
    esc = state["last_turn"]["escape"]
    assert esc["rolls"]["a"]["total"] == 10 and esc["rolls"]["b"]["total"] == 10


def test_escape_impossible_option_makes_every_run_fail_without_rolls() -> None:
    state = duel(fighter("A", health=20), fighter("B", "B", health=20), {"escape_impossible": True})
    assert PB.view_for(state, GM)["escape_possible"] is False
    assert "escape_possible" not in PB.view_for(state, SPECTATOR)
    # even against Defend: the runner must attack with no modifiers; the defender keeps its bonus
    state, ev = turn(state, {"a": "run_away", "b": "defend"}, [3, 3, 3, 3])
    assert state["status"] == "active"
    assert state["last_turn"]["escape"]["impossible"] is True
    assert state["last_turn"]["effective"] == {"a": "attack", "b": "defend"}
    t = state["last_turn"]["totals"]
    assert t["a"]["offence"]["modifier"] == 0 and t["a"]["defence"]["modifier"] == 0
    assert t["b"]["defence"]["modifier"] == 2
    assert of_type(ev, "escape.failed")[0]["data"]["impossible"] is True
    # both run: both fail and both attack
    state, ev = turn(state, {"a": "run_away", "b": "run_away"}, [3, 3, 3, 3])
    assert state["last_turn"]["effective"] == {"a": "attack", "b": "attack"}
    assert types(ev).count("escape.failed") == 2


def test_set_escape_toggles_mid_fight() -> None:
    state = duel(fighter("A"), fighter("B", "B"))
    before = copy.deepcopy(state)
    blocked, ev = RULES.play(state, {"type": "set_escape", "possible": False})
    assert state == before  # the input is untouched
    assert blocked["escape_possible"] is False
    assert ev[0]["visibility"] == "gm" and visible_events(ev, SPECTATOR) == []
    gm_legal = {d["type"]: d for d in PB.view_for(blocked, GM)["legal"]}
    assert gm_legal["set_escape"]["possible"] is True
    state2, _ = turn(blocked, {"a": "run_away", "b": "defend"}, [3, 3, 3, 3])
    assert state2["status"] == "active"
    allowed, _ = RULES.play(blocked, {"type": "set_escape", "possible": True})
    state3, _ = turn(allowed, {"a": "run_away", "b": "defend"}, [])
    assert state3["outcome"]["result"] == "escape"
    with pytest.raises(InvalidDeclaration, match="possible"):
        RULES.play(state, {"type": "set_escape", "possible": "no"})
    with pytest.raises(NotPermitted):
        PB.authorize(state, {"type": "set_escape", "possible": False}, Viewer.player("s1"))


def test_escape_possible_alias_in_options() -> None:
    # who_rolls: the option every battle has (rules/physical.py)
    assert PB.validate_options({"escape_possible": False}) == {"escape_impossible": True, "who_rolls": "board"}
    assert PB.validate_options({}) == {"escape_impossible": False, "who_rolls": "board"}


# --- penetrations and counters --------------------------------------------------------------------


def test_mutual_penetration_half_dice_order() -> None:
    state = duel(fighter("A", health=30), fighter("B", "B", health=30))
    # both press: A's two half-dice (1, 2) come before B's two (3, 3)
    state, ev = turn(state, {"a": "press", "b": "press"}, [6, 1, 6, 1, 1, 2, 3, 3])
    pens = state["last_turn"]["penetrations"]
    assert pens == [
        {"by": "a", "on": "b", "half_dice": [1, 2], "amount": 3, "doubled": True},
        {"by": "b", "on": "a", "half_dice": [3, 3], "amount": 6, "doubled": True},
    ]
    assert state["combatants"]["a"]["armour"] is None and state["combatants"]["b"]["armour"] is None
    assert types(ev).count("penetration.scored") == 2


def test_penetrations_before_counters_a_before_b() -> None:
    state = duel(fighter("A", health=30), fighter("B", "B", health=30))
    # A: offence 6, defence 6; B: offence 1, defence 1 -> A penetrates B (half-die 2) and counters B (half-die 3)
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [6, 6, 1, 1, 2, 3])
    assert state["last_turn"]["penetrations"][0]["half_dice"] == [2]
    assert state["last_turn"]["counters"][0]["half_dice"] == [3]
    assert (
        state["last_turn"]["damage"]["b"]["penetration"] == 2
        and state["last_turn"]["damage"]["b"]["counter"] == 3
    )
    assert types(ev).index("penetration.scored") < types(ev).index("counter.scored")


def test_press_never_doubles_a_counter_and_defend_never_doubles_a_penetration() -> None:
    state = duel(fighter("A", health=30), fighter("B", "B", health=30))
    # A presses and counters (A's defence 6 against B's offence 1): one half-die only
    s1, _ = turn(state, {"a": "press", "b": "attack"}, [3, 6, 1, 3, 2])
    assert s1["last_turn"]["counters"] == [
        {"by": "a", "on": "b", "half_dice": [2], "amount": 2, "doubled": False}
    ]
    # A defends and penetrates (A's offence 6 against B's defence 1): one half-die only
    s2, _ = turn(state, {"a": "defend", "b": "attack"}, [6, 3, 3, 1, 3])
    assert s2["last_turn"]["penetrations"] == [
        {"by": "a", "on": "b", "half_dice": [3], "amount": 3, "doubled": False}
    ]
    # B defends and counters A: doubled
    s3, _ = turn(state, {"a": "attack", "b": "defend"}, [1, 3, 3, 6, 1, 1])
    assert s3["last_turn"]["counters"][0]["doubled"] is True and s3["last_turn"]["counters"][0]["amount"] == 2


def test_forced_attack_after_failed_run_does_not_double() -> None:
    # A tried to run (and failed), then penetrates as a plain attacker: one half-die
    state = duel(
        fighter("A", defence=0, skill=0, health=30), fighter("B", "B", offence=9, skill=9, health=30)
    )
    state, _ = turn(state, {"a": "run_away", "b": "press"}, [1, 1, 6, 6, 6, 3, 3, 1, 2])
    assert state["last_turn"]["penetrations"] == [
        {"by": "a", "on": "b", "half_dice": [2], "amount": 2, "doubled": False}
    ]


def test_penetration_wear_uses_the_real_bonus_not_the_capped_one() -> None:
    # Defence 2 caps the +5 armour at +2, but a penetration of 3 leaves +2 (5 - 3)
    state = duel(fighter("A", health=30), fighter("B", "B", defence=2, armour_bonus=5, health=30))
    state, _ = turn(state, {"a": "attack", "b": "attack"}, [6, 3, 3, 1, 3])
    assert state["combatants"]["b"]["armour"]["bonus"] == 2


# --- damage, weakening and the end ---------------------------------------------------------------


def test_equal_totals_deal_no_damage() -> None:
    state = duel(fighter("A"), fighter("B", "B"))
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [3, 3, 3, 3])
    assert state["last_turn"]["damage"]["a"]["total"] == 0 and state["last_turn"]["damage"]["b"]["total"] == 0
    assert "damage.dealt" not in types(ev)


def test_weakening_order_defence_then_offence_then_health_to_death() -> None:
    # A: Health 1, Defence 1, Offence 1; B can never hurt it (offence 0, no weapon)
    a = fighter("A", offence=1, defence=1, health=2, weapon_bonus=0, armour_bonus=0)
    b = fighter("B", "B", offence=0, defence=9, health=30, weapon_bonus=0, armour_bonus=0)
    state = duel(a, b)
    quiet = [2, 5, 1, 4]  # A: offence 2 (+1 = 3) against B's 4+9; B: offence 1 against A's 5+1; no 6/1 pairs
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert "combatant.weakened" not in types(ev)  # turn 1 does not exceed Health 2
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert "combatant.weakened" not in types(ev)  # turn 2 does not exceed Health 2
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert state["last_turn"]["weakening"] == [
        {"combatant": "a", "attribute": "defence", "before": 1, "after": 0}
    ]
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert state["last_turn"]["weakening"] == [
        {"combatant": "a", "attribute": "offence", "before": 1, "after": 0}
    ]
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert state["last_turn"]["weakening"] == [
        {"combatant": "a", "attribute": "health", "before": 2, "after": 1}
    ]
    state, ev = turn(state, {"a": "attack", "b": "attack"}, quiet)
    assert state["last_turn"]["weakening"] == [
        {"combatant": "a", "attribute": "health", "before": 1, "after": 0}
    ]
    assert state["status"] == "ended" and state["outcome"]["result"] == "victory"
    assert state["outcome"]["winner"] == "b" and state["outcome"]["winner_side"] == "B"
    assert types(ev)[-2:] == ["combatant.defeated", "battle.ended"]


def test_weakening_uses_health_after_this_turns_damage() -> None:
    state = duel(fighter("A", health=6), fighter("B", "B", health=30, offence=8))
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [3, 2, 3, 3])
    # B: 3+8+2 = 13 against A: 2+4+2 = 8 -> A takes 5, Health 1, and turn 1 does not exceed 1
    assert state["combatants"]["a"]["health"] == 1 and "combatant.weakened" not in types(ev)
    state, ev = turn(state, {"a": "defend", "b": "attack"}, [3, 6, 2, 3])
    # turn 2 exceeds Health 1: A weakens though it was not hurt this turn
    assert state["last_turn"]["weakening"][0]["combatant"] == "a"


def test_both_weaken_to_death_is_a_draw() -> None:
    weak = {"offence": 0, "defence": 0, "health": 1, "weapon_bonus": 0, "armour_bonus": 0}
    state = duel(fighter("A", **weak), fighter("B", "B", **weak))
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [2, 3, 2, 3])
    assert state["status"] == "active"
    state, ev = turn(state, {"a": "attack", "b": "attack"}, [2, 3, 2, 3])
    assert [w["attribute"] for w in state["last_turn"]["weakening"]] == ["health", "health"]
    assert state["outcome"]["result"] == "draw" and sorted(state["outcome"]["defeated"]) == ["a", "b"]
    assert types(ev).count("combatant.defeated") == 2


def test_setup_accepts_lineups_already_validated_by_the_web_layer() -> None:
    cleaned = [
        PB.validate_combatant(fighter("A"), 0),
        PB.validate_combatant(fighter("B", "B", controller="seat", seat="s9"), 1),
    ]
    state, ev = RULES.start(cleaned, PB.validate_options({}))
    assert state["combatants"]["b"]["seat"] == "s9" and types(ev) == ["battle.started", "turn.started"]
    # side B listed first still makes A the first in the dice order
    state, _ = RULES.start(list(reversed(cleaned)))
    assert state["order"] == ["a", "b"]


def test_temperament_is_hidden_from_the_other_side() -> None:
    state = seat_duel()
    assert "temperament" not in PB.view_for(state, Viewer.player("s2"))["combatants"]["a"]
    assert "temperament" not in PB.view_for(state, SPECTATOR)["combatants"]["a"]
    assert PB.view_for(state, Viewer.player("s1"))["combatants"]["a"]["temperament"] == "steady"
    assert PB.view_for(state, GM)["combatants"]["b"]["temperament"] == "steady"


def test_no_weakening_when_a_combatant_falls() -> None:
    state = duel(fighter("A", health=1), fighter("B", "B", health=1))
    # turn 1 would not weaken anyway; fight until turn 2 where B falls while A's Health 1 < 2
    state, _ = turn(state, {"a": "defend", "b": "defend"}, [3, 3, 3, 3])
    assert state["status"] == "active"
    state, ev = turn(state, {"a": "attack", "b": "defend"}, [6, 3, 2, 2])
    assert state["outcome"]["winner"] == "a"
    assert "combatant.weakened" not in types(ev)


def test_one_side_falls_victory_and_events_in_order() -> None:
    state = jharek_vs_monster()
    state, ev = turn(state, {"j": "press", "m": "defend"}, [6, 6, 2, 2])
    # Jharek: 6+4+2+3 = 15 against 2+7+3+1 = 13 -> 2 damage, the monster falls
    assert state["outcome"]["result"] == "victory" and state["outcome"]["winner"] == "j"
    order = types(ev)
    assert order.index("turn.resolved") < order.index("damage.dealt") < order.index("combatant.defeated")
    assert order[-1] == "battle.ended"


# --- choosing, views and secrecy ------------------------------------------------------------------


def seat_duel(b_controller: str = "seat") -> dict:
    a = fighter("A", controller="seat", seat="s1")
    b = fighter("B", "B", controller=b_controller, seat="s2" if b_controller == "seat" else None)
    return duel(a, b, faces=[50] if b_controller == "computer" else [])


def test_choice_secrecy_in_views_and_events() -> None:
    state = seat_duel()
    new, ev = RULES.play(state, {"type": "choose", "combatant": "a", "option": "press"}, Viewer.player("s1"))
    assert not PB.is_checkpoint(new) and PB.is_checkpoint(state)
    own = PB.view_for(new, Viewer.player("s1"))
    other = PB.view_for(new, Viewer.player("s2"))
    spec = PB.view_for(new, SPECTATOR)
    gm = PB.view_for(new, GM)
    assert own["combatants"]["a"]["choice"] == "press"
    assert [d["option"] for d in own["legal"] if d["selected"]] == ["press"]
    assert own["mine"] == ["a"] and own["waiting_for"] == ["b"]
    for view in (other, spec):
        assert view["combatants"]["a"]["has_chosen"] is True
        assert "choice" not in view["combatants"]["a"]
        assert "press" not in json.dumps(view["combatants"]) and "press" not in json.dumps(view["last_turn"])
    # the GM's screen is shared with the table: it shows that the player chose, not what
    assert gm["combatants"]["a"]["has_chosen"] is True and "choice" not in gm["combatants"]["a"]
    assert not any(d.get("selected") for d in gm["legal"])
    assert [e["text"] for e in visible_events(ev, GM, new)] == ["A has chosen."]
    assert spec["legal"] == []
    assert {d["combatant"] for d in other["legal"]} == {"b"}
    for viewer in (Viewer.player("s2"), SPECTATOR):
        seen = visible_events(ev, viewer, new)
        assert [e["text"] for e in seen] == ["A has chosen."]
        assert "press" not in json.dumps(seen)
    assert any(e["data"].get("option") == "press" for e in visible_events(ev, Viewer.player("s1"), new))


def test_views_identical_whatever_the_pending_choice() -> None:
    state = seat_duel()
    views = []
    for option in OPTIONS:
        new, _ = RULES.play(state, {"type": "choose", "combatant": "a", "option": option})
        views.append((PB.view_for(new, SPECTATOR), PB.view_for(new, Viewer.player("s2"))))
    assert all(v == views[0] for v in views)


def test_gm_choice_for_a_seat_is_seen_by_that_seat_only() -> None:
    state = seat_duel()
    new, ev = RULES.play(state, {"type": "choose", "combatant": "b", "option": "defend"})
    assert PB.view_for(new, Viewer.player("s2"))["combatants"]["b"]["choice"] == "defend"
    assert "choice" not in PB.view_for(new, Viewer.player("s1"))["combatants"]["b"]
    assert all("option" not in e["data"] for e in visible_events(ev, Viewer.player("s1"), new))
    assert any(e["data"].get("option") == "defend" for e in visible_events(ev, Viewer.player("s2"), new))


def test_changing_a_choice_before_resolution() -> None:
    state = seat_duel()
    p1 = Viewer.player("s1")
    state, _ = RULES.play(state, {"type": "choose", "combatant": "a", "option": "press"}, p1)
    state, ev = RULES.play(state, {"type": "choose", "combatant": "a", "option": "defend"}, p1)
    assert state["choices"]["a"] == "defend" and ev[0]["data"]["changed"] is True
    state, _ = turn(state, {"b": "attack"}, [3, 3, 3, 3], Viewer.player("s2"))
    assert state["last_turn"]["options"] == {"a": "defend", "b": "attack"}
    assert state["choices"] == {"a": None, "b": None} and PB.is_checkpoint(state)


def test_legal_templates() -> None:
    state = seat_duel()
    legal = PB.view_for(state, Viewer.player("s1"))["legal"]
    assert [(d["type"], d["combatant"], d["option"]) for d in legal] == [("choose", "a", o) for o in OPTIONS]
    assert all(d["label"] and d["help"] for d in legal)
    gm_types = [d["type"] for d in PB.view_for(state, GM)["legal"]]
    assert gm_types.count("choose") == 8 and "force_resolve" in gm_types and "set_escape" in gm_types
    for template in legal:
        decl = {k: template[k] for k in ("type", "combatant", "option")}
        PB.authorize(state, decl, Viewer.player("s1"))


def test_authorization() -> None:
    state = seat_duel("computer")
    decl = {"type": "choose", "combatant": "b", "option": "press"}
    with pytest.raises(NotPermitted):
        PB.authorize(state, decl, Viewer.player("s1"))
    with pytest.raises(NotPermitted):
        PB.authorize(state, {**decl, "combatant": "a"}, SPECTATOR)
    with pytest.raises(NotPermitted):
        PB.authorize(state, {"type": "force_resolve"}, Viewer.player("s1"))
    PB.authorize(state, decl, GM)
    PB.authorize(state, {**decl, "combatant": "a"}, Viewer.player("s1"))


@pytest.mark.parametrize(
    "declaration, match",
    [
        ({"type": "attack"}, "unknown declaration type"),
        ({}, "unknown declaration type"),
        ({"type": "choose", "option": "press"}, "combatant"),
        ({"type": "choose", "combatant": "zz", "option": "press"}, "combatant"),
        ({"type": "choose", "combatant": "a", "option": "flee"}, "option"),
        ({"type": "choose", "combatant": "a"}, "option"),
        ({"type": "choose", "combatant": 3, "option": "press"}, "combatant"),
        ({"type": "set_escape"}, "possible"),
    ],
)
def test_malformed_declarations(declaration: dict, match: str) -> None:
    state = duel(fighter("A"), fighter("B", "B"))
    with pytest.raises(InvalidDeclaration, match=match):
        RULES.play(state, declaration)


def test_declaration_must_be_an_object() -> None:
    state = duel(fighter("A"), fighter("B", "B"))
    with pytest.raises(InvalidDeclaration):
        PB.apply(state, ["choose"], GM, ScriptedDice([]))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "lineup, match",
    [
        ([fighter("A"), fighter("B", "A")], "exactly one combatant on side A"),
        ([fighter("A")], "exactly one"),
        ([fighter("A"), fighter("B", "B"), fighter("C", "B")], "at most 2"),
        ([fighter("A", offence=100), fighter("B", "B")], "Offence"),
        ([fighter("A", defence=100), fighter("B", "B")], "Defence"),
        ([fighter("A", skill=100), fighter("B", "B")], "Skill"),
        ([fighter("A", health=1000), fighter("B", "B")], "Health"),
        ([fighter("A", health=0), fighter("B", "B")], "Health"),
        ([fighter("A", temperament="sleepy"), fighter("B", "B")], "Temperament"),
        ([fighter("A", side="C"), fighter("B", "B")], "side"),
        ([fighter("A"), fighter("B", "B", cid="a")], "share an id"),
    ],
)
def test_bad_lineups(lineup: list, match: str) -> None:
    with pytest.raises(InvalidDeclaration, match=match):
        RULES.start(lineup)


def test_the_forms_allow_attributes_to_99_and_health_to_999() -> None:
    """Ruling 8: the text sets no maximum; creatures with far more Health than a hero are ordinary."""
    fields = {f.name: f for f in PB.combatant_fields()}
    for name in ("offence", "defence", "skill"):
        assert fields[name].max is not None and fields[name].max >= 99, name
    assert fields["health"].max is not None and fields["health"].max >= 999
    # a bonus is capped by its attribute, so the form lets it grow as far
    assert fields["weapon_bonus"].max == fields["offence"].max
    assert fields["armour_bonus"].max == fields["defence"].max


def test_a_giant_with_99s_and_999_health_fights_by_the_usual_arithmetic() -> None:
    giant = fighter("Giant", "B", offence=99, defence=99, skill=99, health=999, weapon_bonus=99,
                    armour_bonus=40, armour_natural=True, weapon_natural=True)
    hero = fighter("Hero", offence=40, defence=60, skill=50, health=120, weapon_bonus=50, armour_bonus=90)
    state = duel(hero, giant)
    assert PB.validate_lineup([hero, giant])[1]["health"] == 999
    g = state["combatants"]["giant"]
    assert (g["offence"], g["defence"], g["skill"], g["health"], g["health_max"]) == (99, 99, 99, 999, 999)
    # both attack; dice 6 2 5 3: the hero's offence 6 + 40 + 40 (bonus capped by Offence) = 86
    # against the giant's defence 3 + 99 + 40 = 142: nothing; the giant's 5 + 99 + 99 = 203
    # against the hero's 2 + 60 + 60 (capped) = 122: 81 damage
    state, ev = turn(state, {"hero": "attack", "giant": "attack"}, [6, 2, 5, 3])
    last = state["last_turn"]
    assert last["totals"]["hero"]["offence"]["total"] == 86
    assert last["totals"]["giant"]["defence"]["total"] == 142
    assert last["totals"]["giant"]["offence"]["total"] == 203
    assert last["totals"]["hero"]["defence"]["total"] == 122
    assert state["combatants"]["hero"]["health"] == 120 - 81
    assert state["combatants"]["giant"]["health"] == 999
    # the giant presses: +49 offence (half of 99), -49 defence; dice 4 4 4 4
    state, ev = turn(state, {"hero": "defend", "giant": "press"}, [4, 4, 4, 4])
    last = state["last_turn"]
    assert last["totals"]["giant"]["offence"]["total"] == 4 + 99 + 49 + 99
    assert last["totals"]["giant"]["defence"]["total"] == 4 + 99 - 49 + 40
    # the hero defends: 4 + 60 + 30 + 60 = 154 against 251, so 97 more damage: defeated at 39 - 97
    assert last["totals"]["hero"]["defence"]["total"] == 154
    assert state["combatants"]["hero"]["health"] == 39 - 97 and state["combatants"]["hero"]["defeated"]
    assert state["combatants"]["giant"]["health"] == 999


def test_state_is_json_and_apply_does_not_mutate() -> None:
    state = jharek_vs_monster()
    snapshot = copy.deepcopy(state)
    new, events = turn(state, {"j": "attack", "m": "attack"}, [1, 3, 5, 6, 1])
    assert state == snapshot
    assert json.loads(json.dumps(new)) == new
    assert json.loads(json.dumps(events)) == events
    assert "seed" not in json.dumps(new)


def test_a_view_stays_what_it_showed_while_the_duel_goes_on() -> None:
    """Views share nested values with their state (no copies per viewer): the turns that follow
    change neither an earlier view nor the state it was computed from."""
    state = jharek_vs_monster()
    first, _ = turn(state, {"j": "attack", "m": "attack"}, [1, 3, 5, 6, 1])
    views = {v.role + str(v.seat): PB.view_for(first, v) for v in (GM, SPECTATOR, Viewer.player("s1"))}
    shown = copy.deepcopy(views)
    kept = copy.deepcopy(first)
    second, _ = turn(first, {"j": "defend", "m": "attack"}, [6, 2, 4, 4])
    assert second["last_turn"] != first["last_turn"]
    assert views == shown and first == kept


def test_forms_and_presets() -> None:
    names = [f.name for f in PB.combatant_fields()]
    assert names[:4] == ["offence", "defence", "health", "skill"] and "temperament" in names
    assert [f.name for f in PB.option_fields()] == ["escape_impossible"]
    for preset in PB.presets():
        PB.validate_combatant({**preset, "side": "A"})
    assert {"Jharek", "Wild Monster"} <= set(PRESETS) and len(PRESETS) >= 4
    assert all(s["title"] and s["text"] for s in PB.help())
    assert get_system("phantoms-bane").name == "Phantom's Bane"


def test_item_without_name_means_none() -> None:
    state = duel(fighter("A", weapon_name="", weapon_bonus=4, armour_name=""), fighter("B", "B"))
    a = state["combatants"]["a"]
    assert a["weapon"] is None and a["armour"] is None
    state, _ = turn(state, {"a": "attack", "b": "attack"}, [3, 3, 3, 3])
    assert state["last_turn"]["totals"]["a"]["offence"]["gear"] == 0


# --- the computer ---------------------------------------------------------------------------------


def test_computer_picks_at_setup_and_each_turn_gm_only() -> None:
    a = fighter("A", controller="seat", seat="s1", health=30)
    b = fighter("B", "B", controller="computer", health=30)
    dice = ScriptedDice([10])
    state, ev = RULES.start([a, b], dice=dice)
    assert dice.remaining == 0 and state["choices"]["b"] in OPTIONS
    assert state["chosen_by"]["b"] == "computer" and PB.is_checkpoint(state)
    private = [e for e in ev if e["type"] == "choice.made" and e["visibility"] == "hidden"]
    assert len(private) == 1 and private[0]["rolls"][0]["faces"] == [10]
    assert "choice" not in PB.view_for(state, GM)["combatants"]["b"], "not even the GM's shared screen"
    assert not [e for e in visible_events(ev, GM, state) if e["data"].get("option")]
    assert [
        e["text"] for e in visible_events(ev, Viewer.player("s1"), state) if e["type"] == "choice.made"
    ] == ["B has chosen."]
    assert "choice" not in PB.view_for(state, Viewer.player("s1"))["combatants"]["b"]
    assert PB.view_for(state, Viewer.player("s1"))["combatants"]["b"]["has_chosen"] is True
    # the player's choice resolves the turn; the computer then picks for turn 2 (one more face)
    state, ev = turn(state, {"a": "defend"}, [3, 3, 3, 3, 55], Viewer.player("s1"))
    assert state["turn"] == 2 and state["choices"]["b"] in OPTIONS and state["choices"]["a"] is None


def test_two_computers_wait_for_force_resolve() -> None:
    a = fighter("A", controller="computer", health=30)
    b = fighter("B", "B", controller="computer", health=30)
    state, _ = RULES.start([a, b], faces=[1, 1])
    assert state["turn"] == 1 and all(state["choices"].values())
    state, ev = RULES.play(state, {"type": "force_resolve"}, GM, [3, 3, 3, 3, 1, 1])
    assert state["turn"] == 2 and "turn.resolved" in types(ev)


def test_force_resolve_picks_for_missing_sides() -> None:
    state = seat_duel()
    state, _ = RULES.play(state, {"type": "choose", "combatant": "a", "option": "attack"})
    dice = ScriptedDice([1, 3, 3, 3, 3])
    state, ev = RULES.play(state, {"type": "force_resolve"}, dice=dice)
    assert dice.remaining == 0
    assert state["last_turn"]["options"]["a"] == "attack" and state["last_turn"]["options"]["b"] in OPTIONS


def test_computer_fills_in_after_midturn_assignment() -> None:
    state = seat_duel()
    state, _ = PB.assign(state, "b", "computer", None)
    state, ev = RULES.play(state, {"type": "choose", "combatant": "a", "option": "attack"}, Viewer.player("s1"), [1, 3, 3, 3, 3, 1])
    assert state["turn"] == 2 and "turn.resolved" in types(ev)


def test_computer_ignores_the_other_sides_pending_choice() -> None:
    state = seat_duel()
    picks = set()
    for option in OPTIONS:
        new, _ = RULES.play(state, {"type": "choose", "combatant": "a", "option": option})
        computer_pick(new, "b", ScriptedDice([40]))
        picks.add(new["choices"]["b"])
    assert len(picks) == 1


def test_temperaments() -> None:
    # a cowardly, badly hurt and outclassed foe with a fair chance to escape prefers running
    coward = fighter(
        "C", "B", offence=2, defence=6, health=2, skill=9, temperament="cowardly", controller="computer"
    )
    hero = fighter("H", offence=9, defence=6, health=20, skill=1, weapon_bonus=4)
    state = duel(hero, coward, faces=[1])
    state["combatants"]["c"]["health_max"] = 10
    scores = computer_scores(project(state, {"c"}, gm=False), "c")
    assert max(scores, key=scores.get) == "run_away"
    computer_pick(state, "c", ScriptedDice([1]))
    assert state["choices"]["c"] == "run_away"
    # the same foe when reckless presses and does not run
    state["combatants"]["c"]["temperament"] = "reckless"
    scores = computer_scores(project(state, {"c"}, gm=False), "c")
    assert max(scores, key=scores.get) == "press" and scores["run_away"] < 0
    # a fresh, strong foe never wants to run
    state["combatants"]["c"].update(temperament="cowardly", health=10, offence=12, defence=12)
    scores = computer_scores(project(state, {"c"}, gm=False), "c")
    assert max(scores, key=scores.get) != "run_away"


# --- seeded replay and properties -----------------------------------------------------------------


def play(seed: str, lineup: list, choices: list[tuple[str, str]], options: dict | None = None) -> tuple:
    """Play a whole duel the way the web layer does: one derived seed per command."""
    state, events = RULES.start(lineup, options, dice=SeededDice(derive_seed(seed, 0)))
    history = [copy.deepcopy(state)]
    version = 1
    i = 0
    while state["status"] == "active" and version < 400:
        a_opt, b_opt = choices[i % len(choices)]
        i += 1
        for cid, option in zip(state["order"], (a_opt, b_opt), strict=True):
            if state["status"] != "active":
                break
            if state["combatants"][cid]["controller"] == "computer":
                continue
            state, evs = RULES.play(state, {"type": "choose", "combatant": cid, "option": option},
                                    dice=SeededDice(derive_seed(seed, version)))
            version += 1
            events += evs
            history.append(copy.deepcopy(state))
        if state["status"] == "active" and all(state["choices"].values()):
            state, evs = RULES.play(state, {"type": "force_resolve"}, dice=SeededDice(derive_seed(seed, version)))
            version += 1
            events += evs
            history.append(copy.deepcopy(state))
    return state, events, history


def test_seeded_replay_gives_the_same_battle() -> None:
    lineup = [
        {**PRESETS["Jharek"], "id": "j", "side": "A"},
        {**PRESETS["Marsh Troll"], "id": "t", "side": "B", "controller": "computer"},
    ]
    choices = [("attack", "attack"), ("press", "attack"), ("defend", "attack")]
    first = play("table-7", lineup, choices)
    second = play("table-7", lineup, choices)
    assert first == second
    assert first[0]["status"] == "ended"
    other = play("table-8", lineup, choices)
    assert [e["rolls"] for e in other[1]] != [e["rolls"] for e in first[1]]


stat = st.integers(min_value=0, max_value=12)
fighters = st.fixed_dictionaries(
    {
        "offence": stat,
        "defence": stat,
        "health": st.integers(min_value=1, max_value=12),
        "skill": stat,
        "weapon_bonus": st.integers(min_value=0, max_value=6),
        "weapon_natural": st.booleans(),
        "armour_bonus": st.integers(min_value=0, max_value=6),
        "armour_natural": st.booleans(),
        "temperament": st.sampled_from(["cowardly", "steady", "reckless"]),
        "controller": st.sampled_from(["gm", "computer"]),
    }
)
option_pairs = st.lists(st.tuples(st.sampled_from(OPTIONS), st.sampled_from(OPTIONS)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=fighters, b=fighters, choices=option_pairs, seed=st.text(max_size=8), impossible=st.booleans())
def test_properties_of_whole_duels(a: dict, b: dict, choices: list, seed: str, impossible: bool) -> None:
    lineup = [fighter("A", **a), fighter("B", "B", **b)]
    state, events, history = play(seed, lineup, choices, {"escape_impossible": impossible})
    assert state["status"] == "ended" and state["outcome"]["result"] in ("victory", "draw", "escape")
    for before, after in zip(history, history[1:], strict=False):
        for cid in ("a", "b"):
            x, y = before["combatants"][cid], after["combatants"][cid]
            assert y["health"] <= x["health"]  # Health never rises
            assert y["health_max"] == x["health_max"]
            for slot in ("weapon", "armour"):
                if x[slot] and x[slot]["natural"]:
                    assert y[slot] is not None and 0 <= y[slot]["bonus"] <= x[slot]["bonus"]
            assert y["offence"] <= x["offence"] and y["defence"] <= x["defence"]
    for cid in ("a", "b"):
        for lost in state["combatants"][cid]["destroyed"]:
            natural = lineup[0 if cid == "a" else 1][f"{lost['item']}_natural"]
            assert not natural
    if impossible:
        assert state["outcome"]["result"] != "escape"
    assert play(seed, lineup, choices, {"escape_impossible": impossible}) == (state, events, history)
    for e in events:
        assert e["type"].count(".") == 1 and e["text"]


@settings(max_examples=40, deadline=None)
@given(a=fighters, b=fighters, pending=st.sampled_from(OPTIONS), seed=st.text(max_size=6))
def test_spectator_and_other_seat_never_see_the_pending_option(
    a: dict, b: dict, pending: str, seed: str
) -> None:
    a = {**a, "controller": "seat", "seat": "s1"}
    b = {**b, "controller": "seat", "seat": "s2"}
    state, _ = RULES.start([fighter("A", **a), fighter("B", "B", **b)], dice=SeededDice(seed))
    # play one ordinary turn so that last_turn holds earlier options
    state, _ = RULES.play(state, {"type": "choose", "combatant": "a", "option": "attack"}, dice=SeededDice(seed + "1"))
    state, _ = RULES.play(state, {"type": "choose", "combatant": "b", "option": "defend"}, dice=SeededDice(seed + "2"))
    if state["status"] != "active":
        return
    base_spec = PB.view_for(state, SPECTATOR)
    base_other = PB.view_for(state, Viewer.player("s2"))
    new, ev = RULES.play(state, {"type": "choose", "combatant": "a", "option": pending}, Viewer.player("s1"), dice=SeededDice(seed))
    spec, other = PB.view_for(new, SPECTATOR), PB.view_for(new, Viewer.player("s2"))
    for before, after in ((base_spec, spec), (base_other, other)):
        after = copy.deepcopy(after)
        assert after["combatants"]["a"].pop("has_chosen") is True
        assert after["waiting_for"] == ["b"]
        before = copy.deepcopy(before)
        before["combatants"]["a"].pop("has_chosen")
        before["waiting_for"] = ["b"]
        assert after == before
    for viewer in (SPECTATOR, Viewer.player("s2")):
        for e in visible_events(ev, viewer, new):
            assert "option" not in e["data"] and pending not in e["text"].lower().replace(" ", "_")
