"""Battles&Balances: the worked examples, the action-point clock, every option, contests and checks."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import engine
from rules.core import Viewer, visible_events
from rules.dice import ScriptedDice, SeededDice
from rules.errors import IllegalDeclaration, ImpossibleFace, InvalidDeclaration, NotPermitted
from rules.registry import get_system
from rules.systems.battles_balances import (
    PRINCE,
    SHOCK_TROOPER,
    BattlesAndBalances,
    chance_at_least,
    derived,
    pool_distribution,
    size_bonus,
    threshold_reached,
    timeline,
)
from tests.rules.harness import Rules, types

BB = BattlesAndBalances()
RULES = Rules(BB)
GM = Viewer.gm()
SPECTATOR = Viewer.spectator()
NO_DICE = ScriptedDice([])


def fighter(cid: str, side: str, x: int, y: int, **stats):
    base = {"name": cid.capitalize(), "size": 8, "muscle": 3, "stamina": 3, "agility": 3, "speed": 2, "focus": 3}
    base.update(stats)
    return {**base, "id": cid, "side": side, "x": x, "y": y}


def duel(options=None, **overrides):
    """The prince next to the (disarmed) shock trooper, the prince first."""
    prince = {**PRINCE, "id": "vasyl", "side": "A", "x": 2, "y": 2, "controller": "seat", "seat": "s1"}
    trooper = {**SHOCK_TROOPER, "id": "trooper", "side": "B", "x": 3, "y": 2}
    prince.update(overrides.get("prince", {}))
    trooper.update(overrides.get("trooper", {}))
    state, _ = RULES.start([prince, trooper], options)
    return state


def attack(cid, target):
    return {"type": "attack", "combatant": cid, "target": target}


# --------------------------------------------------------------------------------------------
# The worked example: Prince Vasyl against the shock trooper
# --------------------------------------------------------------------------------------------


def test_registry_and_numbers_of_the_stat_blocks():
    assert get_system("battles-and-balances").name == "Battles&Balances"
    prince = BB.validate_combatant({**PRINCE, "side": "A"}, 0)
    trooper = BB.validate_combatant({**SHOCK_TROOPER, "side": "B"}, 1)
    assert derived(prince) == {"health": 16, "damage_modifier": 4, "ap_max": 16, "attack_cost": 5}
    assert derived(trooper) == {"health": 48, "damage_modifier": 12, "ap_max": 24, "attack_cost": 9}
    assert size_bonus(8, 12) == 2 and size_bonus(12, 8) == 0


def test_views_give_the_pools_of_the_example():
    view = BB.view_for(duel(), SPECTATOR)
    by_id = {c["id"]: c for c in view["combatants"]}
    assert by_id["vasyl"]["attack_pool"] == "4d8+5"
    assert by_id["vasyl"]["defence_pool"] == "2d8+5"  # +2 more against a bigger foe: 2d8+7 (ruling 6)
    assert by_id["trooper"]["attack_pool"] == "2d12"


def test_prince_strikes_first_and_deals_nineteen():
    state = duel()
    assert state["actor"] == "vasyl"
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    hit = events[0]
    assert hit["type"] == "attack.hit"
    assert (hit["data"]["attack"], hit["data"]["defence"], hit["data"]["margin"]) == (26, 16, 10)
    assert [r["faces"] for r in hit["rolls"]] == [[1, 7, 8, 3], [12, 4]]
    assert hit["rolls"][0]["modifier"] == 7  # sword 5 + size bonus 2
    damage = events[1]
    assert damage["type"] == "damage.dealt" and damage["data"]["wounds"] == 19
    assert damage["rolls"][0]["faces"] == [5]
    assert new["combatants"]["trooper"]["wounds"] == 19
    assert new["combatants"]["vasyl"]["ap"] == 11
    assert new["actor"] == "trooper"


def test_trooper_answers_with_thirteen_and_armour_takes_five():
    state, _ = RULES.play(duel(), attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    new, events = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    hit = events[0]
    assert (hit["data"]["attack"], hit["data"]["defence"], hit["data"]["margin"]) == (16, 15, 1)
    assert hit["rolls"][1]["modifier"] == 7  # shield 5 + size bonus 2
    damage = events[1]
    assert damage["data"]["raw"] == 13 and damage["data"]["absorbed"] == 5 and damage["data"]["wounds"] == 8
    assert damage["rolls"] == []  # disarmed: no damage die
    assert new["combatants"]["vasyl"]["wounds"] == 8  # half of his 16 health
    assert new["combatants"]["trooper"]["ap"] == 15
    assert not new["combatants"]["vasyl"]["defeated"]


# --------------------------------------------------------------------------------------------
# Core rules
# --------------------------------------------------------------------------------------------


def test_a_tie_misses():
    state = duel()
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 8, 8])  # 4+7=11 against 16? no: 11 vs 16
    assert events[0]["type"] == "attack.missed"
    # exact tie: 1+1+1+2 + 7 = 12 against 6+6
    _, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 2, 6, 6])
    assert events[0]["type"] == "attack.missed" and "tie" in events[0]["text"]
    assert new["combatants"]["trooper"]["wounds"] == 0


def test_armour_only_stops_damage_that_reaches_it():
    # trooper armed with a weapon that the prince's armour (5) cannot stop when the damage is below 5
    state = duel(prince={"shield_defence": 0, "speed": 1}, trooper={"muscle": 3, "agility": 1})
    state["actor"], state["turn_index"] = "trooper", 1
    # trooper 1d12: 5 against prince 1d8 + 2 = 1 + 2 = 3 -> margin 2, damage modifier 0, no die: 2 < 5
    _, events = RULES.play(state, attack("trooper", "vasyl"), faces=[5, 1])
    assert events[1]["data"]["absorbed"] == 0 and events[1]["data"]["wounds"] == 2
    _, events = RULES.play(state, attack("trooper", "vasyl"), faces=[10, 1])  # margin 7 >= 5 -> 2 wounds
    assert events[1]["data"]["absorbed"] == 5 and events[1]["data"]["wounds"] == 2


def test_defeat_ends_the_battle():
    state = duel(trooper={"stamina": 1})  # health 12
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[8, 8, 8, 8, 1, 1, 6])
    assert "combatant.defeated" in types(events) and "battle.ended" in types(events)
    assert new["status"] == "ended" and new["outcome"]["winner"] == "A"
    with pytest.raises(IllegalDeclaration):
        RULES.play(new, attack("vasyl", "trooper"))


def test_ranged_attack_uses_focus_ammo_die_and_no_modifier():
    archer = fighter("archer", "A", 0, 0, focus=2, launcher="Bow", launcher_attack=3, ammo_die=6, ammo=2,
                     missile_range=5, muscle=5)
    target = fighter("target", "B", 4, 0, speed=1)
    state, _ = RULES.start([archer, target])
    new, events = RULES.play(state, {"type": "shoot", "combatant": "archer", "target": "target"}, faces=[4, 4, 2, 3])
    assert events[0]["type"] == "shot.hit" and events[0]["data"]["attack"] == 11 and events[0]["data"]["margin"] == 9
    assert events[1]["data"]["wounds"] == 12  # die 3 + margin 9, no damage modifier (which would be +8)
    assert new["combatants"]["archer"]["ammo"] == 1
    moved = copy.deepcopy(state)
    moved["combatants"]["target"]["x"] = 6
    with pytest.raises(IllegalDeclaration, match="out of missile range"):
        RULES.play(moved, {"type": "shoot", "combatant": "archer", "target": "target"})
    empty = copy.deepcopy(state)
    empty["combatants"]["archer"]["ammo"] = 0
    with pytest.raises(IllegalDeclaration, match="ammunition"):
        RULES.play(empty, {"type": "shoot", "combatant": "archer", "target": "target"})


def test_melee_needs_reach_and_reach_is_the_weapons():
    a = fighter("a", "A", 0, 0, weapon="Spear", weapon_reach=2, weapon_die=6)
    b = fighter("b", "B", 2, 2)
    state, _ = RULES.start([a, b])
    view = BB.view_for(state, GM)
    mine = next(c for c in view["combatants"] if c["id"] == "a")
    assert mine["reach"] == 2 and mine["ranges"]["b"] == "melee"
    theirs = next(c for c in view["combatants"] if c["id"] == "b")
    assert theirs["ranges"]["a"] == "out"
    state["combatants"]["a"]["weapon_drawn"] = False
    with pytest.raises(IllegalDeclaration, match="reach"):
        RULES.play(state, attack("a", "b"))


def test_unarmed_attack_has_no_damage_die():
    a = fighter("a", "A", 0, 0, weapon="Sword", weapon_die=6, weapon_attack=4, weapon_drawn=False)
    b = fighter("b", "B", 1, 0)
    state, _ = RULES.start([a, b])
    _, events = RULES.play(state, attack("a", "b"), faces=[6, 6, 6, 1, 1])
    assert events[0]["data"]["attack"] == 18  # no weapon attack either
    assert events[1]["rolls"] == [] and events[1]["data"]["wounds"] == 16


def test_drawing_a_weapon_costs_its_weight_and_disarm_is_a_gm_tool():
    a = fighter("a", "A", 0, 0, weapon="Greatsword", weapon_weight=6, weapon_drawn=False)
    b = fighter("b", "B", 5, 5)
    state, _ = RULES.start([a, b])
    draw = next(t for t in BB.view_for(state, GM)["legal"] if t["type"] == "draw")
    assert draw["cost"] == 6
    new, events = RULES.play(state, {"type": "draw", "combatant": "a"})
    assert new["combatants"]["a"]["weapon_drawn"] and new["combatants"]["a"]["ap"] == 10
    assert "weapon.drawn" in types(events)
    again, _ = RULES.play(new, {"type": "disarm", "combatant": "a"})
    assert not again["combatants"]["a"]["weapon_drawn"]
    with pytest.raises(IllegalDeclaration):
        RULES.play(again, {"type": "disarm", "combatant": "a"})


def test_moving_out_of_reach_costs_the_opponents_size():
    state = duel()
    legal = BB.view_for(state, Viewer.player("s1"))["legal"]
    move = next(t for t in legal if t["type"] == "move")
    costs = {(d["x"], d["y"]): d["cost"] for d in move["destinations"]}
    assert costs[(2, 3)] == 1  # still next to the trooper
    assert costs[(1, 2)] == 1 + 12  # leaves the trooper's reach
    new, events = RULES.play(state, {"type": "move", "combatant": "vasyl", "x": 0, "y": 2})
    assert new["combatants"]["vasyl"]["ap"] == 16 - 2 - 12
    assert events[0]["data"]["left_reach_of"] == ["trooper"]
    with pytest.raises(IllegalDeclaration, match="taken"):
        RULES.play(state, {"type": "move", "combatant": "vasyl", "x": 3, "y": 2})
    with pytest.raises(InvalidDeclaration, match="grid"):
        RULES.play(state, {"type": "move", "combatant": "vasyl", "x": 99, "y": 2})


def test_move_cost_option():
    state = duel({"move_cost": 3})
    new, _ = RULES.play(state, {"type": "move", "combatant": "vasyl", "x": 2, "y": 3})
    assert new["combatants"]["vasyl"]["ap"] == 13


def test_gm_overrides_any_derived_number():
    entry = BB.validate_combatant({**PRINCE, "side": "A", "health_override": 30, "damage_modifier_override": "-2",
                                   "ap_override": 20, "attack_cost_override": 7})
    assert derived(entry) == {"health": 30, "damage_modifier": -2, "ap_max": 20, "attack_cost": 7}
    with pytest.raises(InvalidDeclaration, match="Damage modifier"):
        BB.validate_combatant({**PRINCE, "side": "A", "damage_modifier_override": "x"})


# --------------------------------------------------------------------------------------------
# The action-point clock
# --------------------------------------------------------------------------------------------


def test_ap_sequence_borrowing_and_refresh():
    state = duel(trooper={"agility": 1}, prince={"agility": 1})
    # everyone misses: each attack is 1 die against 2 dice + bonuses
    seen = []
    predicted = [(t["combatant"], t["kind"]) for t in timeline(state)]
    for _ in range(11):
        actor = state["actor"]
        target = "trooper" if actor == "vasyl" else "vasyl"
        faces = [1, 8, 8] if actor == "vasyl" else [1, 6, 6]
        state, events = RULES.play(state, attack(actor, target), faces=faces)
        for e in events:
            if e["type"] == "ap.spent":
                seen.append((e["data"]["combatant"], e["data"]["ap"]))
            elif e["type"] == "ap.refreshed":
                seen.append((e["data"]["combatant"], "refresh", e["data"]["ap"]))
    assert seen == [
        ("vasyl", 11), ("trooper", 15), ("vasyl", 6), ("trooper", 6), ("vasyl", 1), ("trooper", -3),
        ("vasyl", -4),  # acts on his last point, borrowing 4
        ("trooper", "refresh", 21), ("vasyl", "refresh", 12),
        ("trooper", 12), ("vasyl", 7), ("trooper", 3), ("vasyl", 2),
    ]
    flat = [(s[0], "refresh" if len(s) == 3 else "act") for s in seen]
    assert predicted == flat[: len(predicted)]


def test_view_shows_balances_borrowing_costs_and_who_is_next():
    state = duel()
    state["combatants"]["trooper"]["ap"] = -3
    view = BB.view_for(state, Viewer.player("s1"))
    trooper = next(c for c in view["combatants"] if c["id"] == "trooper")
    assert trooper["ap"] == -3 and trooper["borrowed"]
    assert view["actor"] == "vasyl" and view["next"] == "vasyl"  # the trooper's next turn is a refresh
    assert view["timeline"][1] == {"combatant": "trooper", "name": "Shock Trooper", "kind": "refresh", "ap": -3,
                                   "after": 21}
    strike = next(t for t in view["legal"] if t["type"] == "attack")
    assert strike["cost"] == 5 and strike["ap_after"] == 11 and not strike["borrows"]
    json.dumps(view)


def test_zero_ap_character_skips_and_refreshes():
    state = duel()
    state["combatants"]["trooper"]["ap"] = 0
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 12, 12])
    assert types(events)[-2:] == ["ap.refreshed", "turn.started"]
    assert new["combatants"]["trooper"]["ap"] == 24 and new["actor"] == "vasyl"


def test_acting_out_of_turn_or_without_points():
    state = duel()
    with pytest.raises(IllegalDeclaration, match="turn"):
        RULES.play(state, attack("trooper", "vasyl"))
    new, events = RULES.play(state, {"type": "adjust", "combatant": "vasyl", "field": "ap", "value": 0})
    assert new["actor"] == "trooper"  # out of points: the turn moves on
    assert "turn.ended" in types(events)


def test_pass_keeps_points_and_custom_action_costs_what_the_gm_says():
    state = duel()
    new, _ = RULES.play(state, {"type": "pass", "combatant": "vasyl"})
    assert new["combatants"]["vasyl"]["ap"] == 16 and new["actor"] == "trooper"
    new, events = RULES.play(new, {"type": "custom_action", "combatant": "trooper", "cost": 30, "label": "tear a door off"})
    assert new["combatants"]["trooper"]["ap"] == -6
    assert "borrowed" in events[-2]["text"] or "borrowed" in events[1]["text"]
    with pytest.raises(NotPermitted):
        BB.authorize(new, {"type": "custom_action", "combatant": "vasyl", "cost": 1}, Viewer.player("s1"))


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


def test_agility_duel_lets_the_defender_strike_back():
    state = duel({"agility_duel": True})
    # prince agility 4d8+5+2 = 4+7 = 11; trooper agility 2d12 = 12+12 = 24: trooper wins by 13
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 12, 12])
    assert events[0]["type"] == "attack.turned" and events[0]["data"]["margin"] == 13
    assert "Agility" in events[0]["rolls"][1]["purpose"]
    assert events[1]["data"]["target"] == "vasyl" and events[1]["data"]["wounds"] == 13 + 12 - 5
    assert new["combatants"]["vasyl"]["defeated"]
    assert new["status"] == "ended" and new["outcome"]["winner"] == "B"


def test_agility_duel_ignores_shields():
    state = duel({"agility_duel": True})
    state["actor"], state["turn_index"] = "trooper", 1
    # trooper 2d12 = 10; prince agility 4d8 + sword 5 + size 2 = 4 + 7 = 11 -> prince strikes back by 1
    _, events = RULES.play(state, attack("trooper", "vasyl"), faces=[5, 5, 1, 1, 1, 1, 6])
    assert events[0]["data"]["defence"] == 11
    assert events[1]["data"]["wounds"] == 6 + 4 + 1


def test_maximum_damage():
    state = duel({"maximum_damage": True})
    _, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4])
    assert events[1]["data"]["wounds"] == 6 + 4 + 10 and events[1]["rolls"] == []


def test_weakness_doubles_and_resistance_halves_the_die():
    state = duel({"weaknesses": True}, trooper={"weak_to": "blade"})
    _, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 12])
    assert events[1]["rolls"][0]["dice"] == "1d12" and events[1]["data"]["wounds"] == 12 + 4 + 10
    resist = duel({"weaknesses": True}, trooper={"resists": "Blade, fire"})
    _, events = RULES.play(resist, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 3])
    assert events[1]["rolls"][0]["dice"] == "1d3" and events[1]["data"]["wounds"] == 3 + 4 + 10
    with pytest.raises(ImpossibleFace):
        RULES.play(resist, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 4])
    halve = duel({"weaknesses": True, "halved_die": "halve"}, trooper={"resists": "blade"})
    _, events = RULES.play(halve, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    assert events[1]["rolls"][0]["dice"] == "1d6" and events[1]["data"]["wounds"] == 3 + 4 + 10
    both = duel({"weaknesses": True}, trooper={"resists": "blade", "weak_to": "blade"})
    _, events = RULES.play(both, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 6])
    assert events[1]["rolls"][0]["dice"] == "1d6"
    off = duel({}, trooper={"weak_to": "blade"})
    _, events = RULES.play(off, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 6])
    assert events[1]["rolls"][0]["dice"] == "1d6"


def test_persistent_effect_grows_and_is_cured():
    state = duel({"persistent_effects": True}, prince={"weapon_effect": "poison"}, trooper={"stamina": 20})
    state, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    assert events[1]["data"]["extra"] == 1 and events[1]["data"]["wounds"] == 20
    assert state["combatants"]["trooper"]["effects"] == {"poison": 1}
    state, _ = RULES.play(state, {"type": "pass", "combatant": "trooper"})
    state, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    assert events[1]["data"]["extra"] == 2 and state["combatants"]["trooper"]["effects"] == {"poison": 2}
    cured, events = RULES.play(state, {"type": "cure", "combatant": "trooper", "effect": "poison"})
    assert cured["combatants"]["trooper"]["effects"] == {} and events[0]["type"] == "effect.cured"
    with pytest.raises(IllegalDeclaration):
        RULES.play(cured, {"type": "cure", "combatant": "trooper"})


def test_persistent_effect_on_a_coin_flip():
    state = duel({"persistent_effects": True}, prince={"weapon_effect": "fire", "effect_chance": "coin"})
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5, 1])
    assert events[1]["data"]["extra"] == 0 and new["combatants"]["trooper"]["effects"] == {}
    assert events[1]["rolls"][1]["dice"] == "1d2"
    new, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5, 2])
    assert new["combatants"]["trooper"]["effects"] == {"fire": 1}


def test_armour_wear_and_failure():
    state = duel({"armour_wear": True}, prince={"armour_protection": 6, "armour_weight": 6})
    state["actor"], state["turn_index"] = "trooper", 1
    new, _ = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])  # 16 vs 15: 13 damage, 6 absorbed
    assert new["combatants"]["vasyl"]["armour_wear"] == 3 and not new["combatants"]["vasyl"]["armour_broken"]
    assert new["combatants"]["vasyl"]["wounds"] == 7
    new["actor"], new["turn_index"] = "trooper", 1
    new, events = RULES.play(new, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    assert new["combatants"]["vasyl"]["armour_broken"] and "armour.destroyed" in types(events)
    new["actor"], new["turn_index"] = "trooper", 1
    new["combatants"]["trooper"]["ap"] = 20
    new["combatants"]["vasyl"]["wounds"] = 0
    new, events = RULES.play(new, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    assert events[1]["data"]["absorbed"] == 0 and events[1]["data"]["wounds"] == 13
    repaired, _ = RULES.play(new, {"type": "repair", "combatant": "vasyl"})
    assert repaired["combatants"]["vasyl"]["armour_wear"] == 0 and not repaired["combatants"]["vasyl"]["armour_broken"]
    # without the option armour never wears
    plain = duel({}, prince={"armour_protection": 6, "armour_weight": 6})
    plain["actor"], plain["turn_index"] = "trooper", 1
    after, _ = RULES.play(plain, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    assert after["combatants"]["vasyl"]["armour_wear"] == 0


def test_blessing_after_a_big_hit_makes_the_next_roll_blessed():
    state = duel({"blessings": True})
    state["actor"], state["turn_index"] = "trooper", 1
    state, events = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])  # 8 wounds > half of 8
    assert state["combatants"]["vasyl"]["blessings"] == 1 and "luck.changed" in types(events)
    view = BB.view_for(state, Viewer.player("s1"))
    assert next(c for c in view["combatants"] if c["id"] == "vasyl")["luck"]["attack"] == "blessed"
    # his next attack: first roll 1,1,1,1 (4+7=11), second 8,8,8,8 (32+7=39): the better one is kept
    state, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 8, 8, 8, 8, 1, 1, 3])
    assert events[0]["data"]["attack"] == 39
    assert [r["kept"] for r in events[0]["rolls"][:2]] == [False, True]
    assert state["combatants"]["vasyl"]["blessings"] == 0


def test_blessing_threshold_any_damage_and_no_blessing_for_npcs():
    state = duel({"blessings": True, "blessing_threshold": "half_size"},
                 trooper={"muscle": 3})  # damage modifier 0
    state["actor"], state["turn_index"] = "trooper", 1
    new, _ = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])  # 1 wound (below armour), not > 4
    assert new["combatants"]["vasyl"]["wounds"] == 1 and new["combatants"]["vasyl"]["blessings"] == 0
    state["options"]["blessing_threshold"] = "any"
    new, _ = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    assert new["combatants"]["vasyl"]["blessings"] == 1
    back, _ = RULES.play(duel({"blessings": True}), attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    assert back["combatants"]["trooper"]["blessings"] == 0  # not a player character


def test_curses_from_undead_and_cursed_rolls_keep_the_worse():
    state = duel({"blessings": True}, trooper={"curses_on_hit": True})
    state["actor"], state["turn_index"] = "trooper", 1
    state, _ = RULES.play(state, attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    assert state["combatants"]["vasyl"]["curses"] == 1 and state["combatants"]["vasyl"]["blessings"] == 0
    state, events = RULES.play(state, attack("vasyl", "trooper"), faces=[8, 8, 8, 8, 1, 1, 1, 1, 12, 12])
    assert events[0]["data"]["attack"] == 11 and events[0]["type"] == "attack.missed"


def test_blessed_weapon_cursed_shield_and_cancelling():
    state = duel({"blessings": True}, prince={"weapon_luck": "blessed", "shield_luck": "cursed"})
    _, events = RULES.play(state, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 3])
    assert events[0]["data"]["attack"] == 15 and len(events[0]["rolls"]) == 3
    state["actor"], state["turn_index"] = "trooper", 1
    _, events = RULES.play(state, attack("trooper", "vasyl"), faces=[2, 2, 8, 8, 1, 1])
    assert events[0]["data"]["defence"] == 9  # the worse of 16+7 and 2+7
    state["combatants"]["vasyl"]["blessings"] = 1
    _, events = RULES.play(state, attack("trooper", "vasyl"), faces=[2, 2, 8, 8])  # blessing cancels the cursed shield
    assert events[0]["data"]["defence"] == 23 and len(events[0]["rolls"]) == 2
    off = duel({}, prince={"weapon_luck": "blessed"})
    _, events = RULES.play(off, attack("vasyl", "trooper"), faces=[1, 1, 1, 1, 12, 12])
    assert len(events[0]["rolls"]) == 2  # option off: one roll each


def test_gm_blesses_and_curses():
    state, events = RULES.play(duel(), {"type": "bless", "combatant": "vasyl", "kind": "blessing", "count": 2})
    assert state["combatants"]["vasyl"]["blessings"] == 2
    state, _ = RULES.play(state, {"type": "bless", "combatant": "vasyl", "kind": "curse"})
    assert state["combatants"]["vasyl"]["curses"] == 1
    state, _ = RULES.play(state, {"type": "bless", "combatant": "vasyl", "kind": "clear"})
    assert state["combatants"]["vasyl"]["blessings"] == 0 == state["combatants"]["vasyl"]["curses"]


# --------------------------------------------------------------------------------------------
# Contests, checks and healing
# --------------------------------------------------------------------------------------------


def scene():
    state, _ = RULES.start([])
    return state


def test_a_scene_without_fighters_for_checks():
    assert BB.min_combatants == 0
    state = scene()
    view = BB.view_for(state, GM)
    assert {t["type"] for t in view["legal"]} == {"check", "contest"}
    assert BB.view_for(state, SPECTATOR)["legal"] == []


def test_jinx_jumps_the_fence():
    state = scene()
    check = {"type": "check", "name": "Jinx", "dice": 4, "size": 6, "difficulty": "challenging", "label": "the fence"}
    new, events = RULES.play(state, check, faces=[3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 4, 3])
    assert events[0]["type"] == "check.succeeded"
    assert events[0]["data"]["totals"] == [14, 16, 17] and events[0]["data"]["total"] == 47
    assert events[0]["data"]["reached"] == "challenging" and events[0]["visibility"] == "public"
    assert [r["faces"] for r in events[0]["rolls"]] == [[3, 3, 4, 4], [4, 4, 4, 4], [5, 5, 4, 3]]
    assert new["last_result"]["success"]
    _, events = RULES.play(state, {**check, "difficulty": "difficult"}, faces=[3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 4, 3])
    assert events[0]["type"] == "check.failed"


def test_check_thresholds_and_custom_target():
    assert [threshold_reached(t) for t in (9, 10, 29, 30, 69, 70, 200)] == [
        None, "trivial", "easy", "routine", "unlikely", "impossible", "impossible"]
    state = duel()
    check = {"type": "check", "combatant": "vasyl", "attribute": "muscle", "difficulty": "custom", "target": 30,
             "bonus": 1}
    _, events = RULES.play(state, check, faces=[2, 2, 2, 2] * 3)  # 9 per roll with the +1
    assert events[0]["data"]["total"] == 27 and events[0]["type"] == "check.failed"
    assert events[0]["data"]["pool"] == "Muscle 4d8+1"
    _, events = RULES.play(state, {**check, "target": 27}, faces=[2, 2, 2, 2] * 3)
    assert events[0]["type"] == "check.succeeded"  # reaching the number is enough
    with pytest.raises(InvalidDeclaration, match="difficulty"):
        RULES.play(state, {**check, "difficulty": "hard"})
    with pytest.raises(InvalidDeclaration, match="attribute"):
        RULES.play(state, {**check, "attribute": "charm"})


def test_blessed_check_rolls_each_pool_twice():
    state = scene()
    check = {"type": "check", "name": "Jinx", "dice": 1, "size": 6, "difficulty": "trivial", "luck": "blessed"}
    _, events = RULES.play(state, check, faces=[1, 6, 2, 5, 3, 4])
    assert events[0]["data"]["totals"] == [6, 5, 4] and len(events[0]["rolls"]) == 6
    _, events = RULES.play(state, {**check, "luck": "cursed"}, faces=[1, 6, 2, 5, 3, 4])
    assert events[0]["data"]["totals"] == [1, 2, 3]


def test_contest_summed_and_best_of_three():
    state = scene()
    wrestle = {"type": "contest", "label": "arm wrestling", "a_name": "Baerg", "a_dice": 1, "a_size": 8,
               "b_name": "Orc", "b_dice": 1, "b_size": 10}
    # rolls alternate Baerg, orc: 8/1, 1/2, 2/3 -> sums 11 vs 6, but rolls won 1 to 2
    faces = [8, 1, 1, 2, 2, 3]
    _, events = RULES.play(state, wrestle, faces=faces)
    assert events[0]["type"] == "contest.won" and events[0]["data"]["winner"] == "Baerg"
    assert events[0]["data"]["a_rolls"] == [8, 1, 2] and events[0]["data"]["b_rolls"] == [1, 2, 3]
    _, events = RULES.play(state, {**wrestle, "mode": "best_of_three"}, faces=faces)
    assert events[0]["data"]["winner"] == "Orc" and events[0]["data"]["a_score"] == 1
    _, events = RULES.play(state, wrestle, faces=[3, 3, 4, 4, 5, 5])
    assert events[0]["type"] == "contest.drawn" and events[0]["data"]["winner"] is None
    # the option sets the default scoring
    opt, _ = RULES.start([], {"contest_mode": "best_of_three"})
    _, events = RULES.play(opt, wrestle, faces=faces)
    assert events[0]["data"]["mode"] == "best_of_three"


def test_contest_between_characters_works_after_the_battle_ended():
    state = duel(trooper={"stamina": 1})
    ended, _ = RULES.play(state, attack("vasyl", "trooper"), faces=[8, 8, 8, 8, 1, 1, 6])
    assert ended["status"] == "ended"
    assert {"check", "contest", "heal"} <= BB.declarations_after_end
    contest = {"type": "contest", "a_combatant": "vasyl", "a_attribute": "muscle", "b_combatant": "trooper",
               "b_attribute": "muscle"}
    _, events = RULES.play(ended, contest, faces=[1] * 27)
    assert events[0]["data"]["a_pool"] == "Muscle 4d8" and events[0]["data"]["b_pool"] == "Muscle 5d12"
    assert events[0]["data"]["winner"] == "Shock Trooper"


def test_baerg_has_the_slight_edge_over_the_orc():
    baerg = pool_distribution(15, 8)  # three rolls of 5d8 summed
    orc = pool_distribution(12, 10)  # three rolls of 4d10
    cumulative, win = 0.0, 0.0
    for total in range(len(baerg)):
        win += baerg[total] * cumulative
        cumulative += orc[total] if total < len(orc) else 0.0
    assert 0.5 < win < 0.6


def test_threshold_claims_of_the_text():
    assert chance_at_least(3, 4, 10) > 0  # a tiny d4 character can manage a trivial task
    assert chance_at_least(9, 8, 10) < 1  # an average human can still fail it
    assert chance_at_least(9, 8, 70) > 0  # and can even do the impossible


def test_healing_tools():
    state = duel(trooper={"stamina": 1})
    ended, _ = RULES.play(state, attack("vasyl", "trooper"), faces=[8, 8, 8, 8, 1, 1, 6])
    wounds = ended["combatants"]["trooper"]["wounds"]
    healed, events = RULES.play(ended, {"type": "heal", "combatant": "trooper", "amount": wounds - 11, "means": "healer"})
    assert healed["combatants"]["trooper"]["wounds"] == 11 and not healed["combatants"]["trooper"]["defeated"]
    assert types(events) == ["wounds.healed", "combatant.recovered"]
    fed, events = RULES.play(healed, {"type": "heal", "combatant": "trooper", "amount": 500, "means": "food"})
    assert fed["combatants"]["trooper"]["wounds"] == 0 and events[0]["data"]["removed"] == 11
    with pytest.raises(InvalidDeclaration, match="means"):
        RULES.play(healed, {"type": "heal", "combatant": "trooper", "amount": 1, "means": "magic"})
    with pytest.raises(NotPermitted):
        BB.authorize(healed, {"type": "heal", "combatant": "vasyl", "amount": 1}, Viewer.player("s1"))
    with pytest.raises(IllegalDeclaration):  # the system's own refusal, past authorize
        BB.apply(healed, {"type": "heal", "combatant": "vasyl", "amount": 1}, Viewer.player("s1"), NO_DICE)


def test_gm_adjust_and_place():
    state = duel()
    new, events = RULES.play(state, {"type": "adjust", "combatant": "trooper", "field": "wounds", "value": 48})
    assert new["status"] == "ended" and "battle.ended" in types(events)
    new, _ = RULES.play(state, {"type": "place", "combatant": "trooper", "x": 9, "y": 7})
    assert (new["combatants"]["trooper"]["x"], new["combatants"]["trooper"]["y"]) == (9, 7)
    assert new["combatants"]["vasyl"]["ap"] == 16
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "place", "combatant": "trooper", "x": 2, "y": 2})
    with pytest.raises(InvalidDeclaration, match="field"):
        RULES.play(state, {"type": "adjust", "combatant": "trooper", "field": "size", "value": 1})


# --------------------------------------------------------------------------------------------
# Views, permissions, malformed input
# --------------------------------------------------------------------------------------------


def test_hidden_notes_and_legal_by_viewer():
    state = duel()
    assert "notes" not in next(c for c in BB.view_for(state, SPECTATOR)["combatants"] if c["id"] == "trooper")
    assert BB.view_for(state, GM)["combatants"][1]["notes"].startswith("Power armour")
    assert "Power armour" not in json.dumps(BB.view_for(state, Viewer.player("s1")))
    player_legal = BB.view_for(state, Viewer.player("s1"))["legal"]
    assert {t["type"] for t in player_legal} == {"attack", "move", "pass"}
    assert all(t["combatant"] == "vasyl" for t in player_legal)
    assert BB.view_for(state, Viewer.player("other"))["legal"] == []
    after, _ = RULES.play(state, {"type": "pass", "combatant": "vasyl"})
    assert BB.view_for(after, Viewer.player("s1"))["legal"] == []
    with pytest.raises(NotPermitted):
        BB.authorize(after, attack("trooper", "vasyl"), Viewer.player("s1"))
    with pytest.raises(NotPermitted):
        BB.authorize(after, {"type": "check"}, SPECTATOR)


def test_malformed_declarations():
    state = duel()
    with pytest.raises(InvalidDeclaration, match="type"):
        RULES.play(state, {"type": "fireball"})
    with pytest.raises(InvalidDeclaration, match="target"):
        RULES.play(state, {"type": "attack", "combatant": "vasyl"})
    with pytest.raises(InvalidDeclaration, match="combatant"):
        RULES.play(state, {"type": "attack", "target": "trooper"})
    with pytest.raises(InvalidDeclaration):
        BB.apply(state, ["attack"], GM, NO_DICE)  # not even a mapping: the system's own reader
    with pytest.raises(InvalidDeclaration, match="x"):
        RULES.play(state, {"type": "move", "combatant": "vasyl", "x": "left", "y": 1})
    with pytest.raises(IllegalDeclaration, match="itself"):
        RULES.play(state, attack("vasyl", "vasyl"))


def test_setup_validation_and_auto_placement():
    a = {"name": "A1", "side": "A"}
    b = {"name": "B1", "side": "B"}
    state, _ = RULES.start([a, a | {"name": "A2"}, b], {"grid_width": 6, "grid_height": 4})
    squares = {(c["x"], c["y"]) for c in state["combatants"].values()}
    assert len(squares) == 3 and all(0 <= x < 6 and 0 <= y < 4 for x, y in squares)
    with pytest.raises(InvalidDeclaration, match="taken"):
        RULES.start([a | {"x": 1, "y": 1}, b | {"x": 1, "y": 1}])
    with pytest.raises(InvalidDeclaration, match="grid"):
        RULES.start([a | {"x": 50, "y": 1}])
    with pytest.raises(InvalidDeclaration, match="Size"):
        RULES.start([a | {"size": 1}])


def test_forms_presets_help_and_options_are_complete():
    names = {f.name for f in BB.option_fields()}
    assert {"agility_duel", "maximum_damage", "weaknesses", "persistent_effects", "armour_wear", "blessings",
            "contest_mode"} <= names
    help_text = " ".join(h["title"] + h["text"] for h in BB.help()).lower()
    for word in ("agility-only duel", "maximum damage", "weaknesses", "persistent", "armour wear", "blessings",
                 "contest", "check", "healing"):
        assert word in help_text
    for preset in BB.presets():
        BB.validate_combatant({**preset, "side": "A"})
    json.dumps([f.to_dict() for f in BB.combatant_fields()])


# --------------------------------------------------------------------------------------------
# The computer, seeded replay, probabilities and properties
# --------------------------------------------------------------------------------------------


def computer_battle(seed: str):
    lineup = [
        {**PRINCE, "id": "p", "side": "A", "controller": "computer", "x": 1, "y": 1},
        {"name": "Goblin", "id": "g", "side": "A", "controller": "computer", "size": 6, "focus": 3,
         "launcher": "Bow", "launcher_attack": 2, "ammo": 5, "missile_range": 8, "x": 1, "y": 3},
        {**SHOCK_TROOPER, "id": "t", "side": "B", "controller": "computer", "x": 8, "y": 2},
    ]
    return RULES.start(lineup, {"armour_wear": True, "blessings": True}, dice=SeededDice(seed))


def test_computer_fights_to_the_end_and_seed_replays():
    state, events = computer_battle("replay-1")
    assert state["status"] == "ended" and state["outcome"]["winner"] in ("A", "B")
    assert {"combatant.moved", "damage.dealt", "turn.started"} <= set(types(events))
    again, events_again = computer_battle("replay-1")
    assert again == state and events_again == events
    other, _ = computer_battle("replay-2")
    assert other != state


def test_computer_stops_at_a_players_turn():
    lineup = [
        {**PRINCE, "id": "p", "side": "A", "controller": "seat", "seat": "s1", "x": 2, "y": 2},
        {**SHOCK_TROOPER, "id": "t", "side": "B", "controller": "computer", "x": 3, "y": 2},
    ]
    state, _ = RULES.start(lineup, {}, dice=SeededDice("x"))
    new, events = RULES.play(state, {"type": "pass", "combatant": "p"}, Viewer.player("s1"), dice=SeededDice("y"))
    assert new["actor"] == "p" and ("attack.hit" in types(events) or "attack.missed" in types(events))
    assert new["combatants"]["t"]["ap"] == 15


def test_pooled_rolls_follow_their_exact_distribution():
    dice = SeededDice("distribution")
    n = 6000
    counts = Counter(dice.roll(3, 8, "pool").total for _ in range(n))
    expected = pool_distribution(3, 8)
    chi2 = sum((counts[t] - n * p) ** 2 / (n * p) for t, p in enumerate(expected) if p > 0)
    assert chi2 < 60  # 21 degrees of freedom; the 99.9% point is about 46.8
    # a whole check (three rolls of 2d6) against the exact chance of reaching 20
    state = scene()
    successes = 0
    for i in range(1500):
        _, events = RULES.play(state, {"type": "check", "name": "X", "dice": 2, "size": 6, "difficulty": "easy"}, dice=SeededDice(f"check-{i}"))
        successes += events[0]["type"] == "check.succeeded"
    p = chance_at_least(6, 6, 20)
    assert abs(successes / 1500 - p) < 4 * (p * (1 - p) / 1500) ** 0.5
    assert events[0]["data"]["chance"] == round(p, 4)


def test_blessed_roll_distribution_is_the_better_of_two():
    dice = SeededDice("blessed")
    from rules.systems.battles_balances import pool_roll

    n = 4000
    mean = sum(pool_roll(dice, 1, 6, "x", "blessed")[0] for _ in range(n)) / n
    assert abs(mean - 161 / 36) < 0.1  # E[max of two d6] = 4.47


DECLARATION_TYPES = ("attack", "shoot", "move", "draw", "pass", "check", "heal", "bless", "adjust")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(min_size=1, max_size=8), picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=25),
       options=st.fixed_dictionaries({k: st.booleans() for k in (
           "agility_duel", "maximum_damage", "weaknesses", "persistent_effects", "armour_wear", "blessings")}))
def test_random_legal_play_keeps_the_invariants(seed, picks, options):
    lineup = [
        {**PRINCE, "id": "p", "side": "A", "x": 2, "y": 2, "weapon_effect": "poison", "weak_to": "fire"},
        {**SHOCK_TROOPER, "id": "t", "side": "B", "x": 3, "y": 2, "resists": "blade", "curses_on_hit": True},
        {"name": "Archer", "id": "a", "side": "B", "size": 6, "focus": 3, "launcher": "Bow", "ammo": 3,
         "ammo_kind": "fire", "x": 6, "y": 5},
    ]
    state, _ = RULES.start(lineup, options, dice=SeededDice(seed))
    for i, pick in enumerate(picks):
        legal = [t for t in BB.view_for(state, GM)["legal"] if t["type"] in DECLARATION_TYPES]
        if not legal:
            break
        template = legal[pick % len(legal)]
        declaration = {k: v for k, v in template.items() if k in ("type", "combatant", "target")}
        if template["type"] == "move":
            dest = template["destinations"][pick % len(template["destinations"])]
            declaration |= {"x": dest["x"], "y": dest["y"]}
        elif template.get("tool"):
            declaration |= {f["name"]: f["default"] for f in template["fields"]}
            if template["type"] == "check":
                declaration |= {"name": "Someone", "dice": 2}
        before = copy.deepcopy(state)
        new, events = RULES.play(state, declaration, dice=SeededDice(f"{seed}/{i}"))
        assert state == before  # the input is never mutated
        assert json.loads(json.dumps(new)) == new
        for c in new["combatants"].values():
            assert c["wounds"] >= 0 and c["defeated"] == (c["wounds"] >= c["health"])
            assert c["ammo"] >= 0
        if new["status"] == "active" and new["actor"]:
            assert new["combatants"][new["actor"]]["ap"] >= 1
            assert not new["combatants"][new["actor"]]["defeated"]
        assert all(e["visibility"] == "public" for e in events)  # nothing in this system is secret
        assert len(visible_events(events, SPECTATOR, new)) == len(events)
        state = new


def test_speed_zero_never_acts_and_a_stalled_clock_restarts():
    slow = fighter("slow", "A", 0, 0, speed=0)
    quick = fighter("quick", "B", 5, 5)
    state, _ = RULES.start([slow, quick])
    assert state["actor"] == "quick"
    new, events = RULES.play(state, {"type": "pass", "combatant": "quick"})
    assert new["actor"] == "quick" and "ap.refreshed" not in types(events)
    assert [e["combatant"] for e in timeline(new)] == ["quick"] * len(timeline(new))
    stuck, events = RULES.start([slow, fighter("still", "B", 5, 5, speed=0)])
    assert stuck["actor"] is None and types(events)[-1] == "turn.stalled" and timeline(stuck) == []
    assert stuck["turn"] == 0
    going, events = RULES.play(stuck, {"type": "adjust", "combatant": "still", "field": "ap", "value": 3})
    assert going["actor"] == "still" and types(events)[-1] == "turn.started"


def test_reviving_the_acting_side_and_defeating_the_actor():
    state = duel()
    new, events = RULES.play(state, {"type": "adjust", "combatant": "vasyl", "field": "wounds", "value": 16})
    assert new["status"] == "ended" and new["outcome"]["winner"] == "B"
    three = [fighter("a", "A", 0, 0), fighter("b", "A", 0, 1), fighter("c", "B", 5, 5)]
    state, _ = RULES.start(three)
    new, events = RULES.play(state, {"type": "adjust", "combatant": "a", "field": "wounds", "value": 99})
    assert new["actor"] == "b" and new["status"] == "active"
    back, events = RULES.play(new, {"type": "heal", "combatant": "a", "amount": 90, "means": "rest"})
    assert not back["combatants"]["a"]["defeated"] and back["actor"] == "b"


def test_checks_use_a_pending_blessing_and_can_cost_wounds():
    state = duel({"blessings": True})
    state["combatants"]["vasyl"]["blessings"] = 1
    check = {"type": "check", "combatant": "vasyl", "attribute": "agility", "difficulty": "trivial", "luck": "pending"}
    new, events = RULES.play(state, check, faces=[1, 1, 1, 1, 2, 2, 2, 2] * 3)
    assert events[0]["data"]["luck"] == "blessed" and events[0]["data"]["totals"] == [8, 8, 8]
    assert new["combatants"]["vasyl"]["blessings"] == 0
    plain, events = RULES.play(new, check, faces=[1, 1, 1, 1] * 3)
    assert events[0]["data"]["luck"] == "normal" and events[0]["data"]["totals"] == [4, 4, 4]
    with pytest.raises(InvalidDeclaration, match="pending"):
        RULES.play(state, {**check, "combatant": "", "name": "X", "dice": 1})
    fence = {**check, "luck": "normal", "difficulty": "impossible", "failure_wounds": 3}
    hurt, events = RULES.play(state, fence, faces=[1, 1, 1, 1] * 3)
    assert types(events) == ["check.failed", "damage.dealt"] and hurt["combatants"]["vasyl"]["wounds"] == 3
    dead, events = RULES.play(state, {**fence, "failure_wounds": 16}, faces=[1, 1, 1, 1] * 3)
    assert dead["status"] == "ended" and "battle.ended" in types(events)
    ok, events = RULES.play(state, {**fence, "difficulty": "trivial"}, faces=[1, 1, 1, 1] * 3)
    assert types(events) == ["check.succeeded"] and ok["combatants"]["vasyl"]["wounds"] == 0


@settings(max_examples=40, deadline=None)
@given(seed=st.text(min_size=1, max_size=6), move_cost=st.integers(0, 4))
def test_the_ap_ledger_balances(seed, move_cost):
    """Whatever the computer does, each balance is its allowance plus refreshes minus what was spent."""
    lineup = [
        {**PRINCE, "id": "p", "side": "A", "controller": "computer", "x": 0, "y": 0},
        {"name": "Jinx", "id": "j", "side": "A", "controller": "computer", "size": 6, "speed": 4, "agility": 4,
         "weapon": "Dagger", "weapon_die": 4, "weapon_drawn": False, "weapon_weight": 2, "x": 0, "y": 4},
        {**SHOCK_TROOPER, "id": "t", "side": "B", "controller": "computer", "x": 9, "y": 3},
    ]
    state, events = RULES.start(lineup, {"move_cost": move_cost}, dice=SeededDice(seed))
    ledger = {cid: c["ap_max"] for cid, c in state["combatants"].items()}
    for e in events:
        if e["type"] == "ap.spent":
            ledger[e["data"]["combatant"]] -= e["data"]["cost"]
        elif e["type"] == "ap.refreshed":
            ledger[e["data"]["combatant"]] += state["combatants"][e["data"]["combatant"]]["ap_max"]
            assert e["data"]["before"] <= 0
        elif e["type"] == "turn.started":
            assert e["data"]["ap"] >= 1
    assert ledger == {cid: c["ap"] for cid, c in state["combatants"].items()}
    assert state["status"] == "ended"


@settings(max_examples=60, deadline=None)
@given(
    agility=st.integers(1, 4), speed=st.integers(1, 4), size_a=st.sampled_from([4, 6, 8, 10, 12]),
    size_b=st.sampled_from([4, 6, 8, 10, 12]), weapon=st.integers(0, 6), shield=st.integers(0, 6),
    protection=st.integers(0, 12), muscle=st.integers(0, 6), data=st.data(),
)
def test_attack_and_damage_arithmetic(agility, speed, size_a, size_b, weapon, shield, protection, muscle, data):
    a = fighter("a", "A", 0, 0, size=size_a, agility=agility, muscle=muscle, weapon="Blade", weapon_attack=weapon,
                weapon_die=6)
    b = fighter("b", "B", 1, 0, size=size_b, speed=speed, shield="Board", shield_defence=shield, stamina=30,
                armour="Coat", armour_protection=protection)
    state, _ = RULES.start([a, b])
    attack_faces = data.draw(st.lists(st.integers(1, size_a), min_size=agility, max_size=agility))
    defence_faces = data.draw(st.lists(st.integers(1, size_b), min_size=speed, max_size=speed))
    die = data.draw(st.integers(1, 6))
    attack_total = sum(attack_faces) + weapon + size_bonus(size_a, size_b)
    defence_total = sum(defence_faces) + shield + size_bonus(size_b, size_a)
    damage_faces = [die] if attack_total > defence_total else []  # a miss rolls no damage
    _, events = RULES.play(state, attack("a", "b"), faces=attack_faces + defence_faces + damage_faces)
    assert (events[0]["data"]["attack"], events[0]["data"]["defence"]) == (attack_total, defence_total)
    if attack_total <= defence_total:
        assert events[0]["type"] == "attack.missed"
        return
    raw = die + derived(state["combatants"]["a"])["damage_modifier"] + attack_total - defence_total
    expected = raw - protection if protection and raw >= protection else raw
    assert events[1]["data"]["wounds"] == max(0, expected)


def test_the_trooper_is_only_a_little_slower():
    """Attacks cost 5 for the prince and 9 for the trooper, yet borrowing keeps the trooper close behind."""
    line = timeline(duel(), length=400)
    acts = Counter(e["combatant"] for e in line if e["kind"] == "act")
    assert acts["trooper"] < acts["vasyl"]
    assert acts["trooper"] / acts["vasyl"] > 0.9


def test_a_character_handed_to_the_computer_mid_turn():
    state = duel()
    handed, _ = BB.assign(state, "vasyl", "computer", None)
    assert any(t["type"] == "computer_turn" for t in BB.view_for(handed, GM)["legal"])
    new, events = RULES.play(handed, {"type": "computer_turn"}, faces=[8, 8, 8, 8, 1, 1, 6])
    assert events[0]["type"] == "attack.hit" and new["actor"] == "trooper"
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "computer_turn"})
    with pytest.raises(NotPermitted):
        BB.authorize(handed, {"type": "computer_turn"}, Viewer.player("s1"))


def test_a_real_roll_the_computer_needs_holds_the_whole_command():
    """The computer plays inside the command (the engine's loop runs where B&B's own recursion ran): its
    turn after the prince's wait needs real dice, so the wait itself waits, and the typed faces resume
    the wait and the computer's attack together, exactly as the board's dice with those faces."""
    state = duel({"who_rolls": "all"}, trooper={"controller": "computer"})
    wait = engine.Command("pass", {"combatant": "vasyl"}, Viewer.player("s1"))

    def step(state, command):
        return engine.step(BB, state, command, ScriptedDice([]), seed="s", board={"version": 2},
                           board_dice=lambda board: ScriptedDice([]))

    asked = step(state, wait)
    assert types(asked.events) == ["dice.requested"] and asked.state["actor"] == "vasyl"
    assert asked.state["physical"]["pending"]["declaration"]["type"] == "pass"
    defence_asked = step(asked.state, engine.Command("dice_enter", {"faces": [6, 5]}, GM))  # the attack typed
    assert types(defence_asked.events) == ["dice.requested"]
    done = step(defence_asked.state, engine.Command("dice_enter", {"faces": [1, 1]}, Viewer.player("s1")))
    assert types(done.events) == ["turn.passed", "turn.started", "attack.hit", "damage.dealt", "ap.spent", "turn.started"]
    board, events = RULES.play(duel(trooper={"controller": "computer"}), {"type": "pass", "combatant": "vasyl"}, Viewer.player("s1"), [6, 5, 1, 1])
    assert [e["text"].removesuffix(" (real dice)") for e in done.events] == [e["text"] for e in events]
    assert done.state["combatants"] == board["combatants"] and done.state["actor"] == board["actor"] == "vasyl"


def test_an_attack_on_an_ally_comes_after_every_other_action_and_is_marked():
    """The prince beside his ally and two foes: the attacks on the foes first, the nearest first, then
    the other actions, then the attack on the ally, marked (a phone drew it first and largest)."""
    lineup = [
        {**PRINCE, "id": "vasyl", "side": "A", "x": 2, "y": 2},
        fighter("baerg", "A", 2, 3),
        fighter("orc", "B", 3, 1),
        fighter("goblin", "B", 3, 2),
    ]
    state, _ = RULES.start(lineup)
    actions = [t for t in BB.view_for(state, GM)["legal"] if not t.get("tool")]
    assert [(t["type"], t.get("target"), t.get("ally")) for t in actions] == [
        ("attack", "orc", False), ("attack", "goblin", False), ("move", None, None), ("pass", None, None),
        ("attack", "baerg", True), ("custom_action", None, None),
    ]
