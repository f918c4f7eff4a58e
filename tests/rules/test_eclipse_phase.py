"""Eclipse Phase 2e: the worked examples of the rule text, every ruling's edge cases, properties, replay."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import get_system
from rules.core import Viewer, visible_events
from rules.dice import ScriptedDice, SeededDice
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted, RulesError
from rules.systems.eclipse_phase import EclipsePhase
from rules.systems.eclipse_phase.rulings import (
    armour_after_piercing,
    cap,
    contest,
    death_rating,
    flip,
    halve,
    judge,
    range_band,
    target_number,
    wound_threshold,
    wounds_from,
)
from tests.rules.harness import Rules, types

EP = EclipsePhase()
RULES = Rules(EP)
GM = Viewer.gm()
SPECTATOR = Viewer.spectator()
JINX_SEAT = Viewer.player("seat-jinx")


def base(**stats):
    defaults = {f.name: f.default for f in EP.combatant_fields()}
    return {**defaults, **stats}


def jinx(**extra):
    return base(id="jinx", name="Jinx", side="A", controller="seat", seat="seat-jinx", morph="winged synth",
                morph_type="synth", durability=35, base_move=8, full_move=32, som=15, initiative=9, fray=60,
                melee=30, guns=70, flex=2, vigor=1, armour="none", weapon1="medium_pistol", weapon2="knife",
                weapon3="none", x=10, y=5) | extra


def exhuman(**extra):
    return base(id="exh", name="Exhuman", side="B", controller="gm", durability=40, base_move=4, full_move=20,
                som=25, initiative=8, fray=60, melee=80, guns=20, flex=1, vigor=1, armour="none",
                kinetic_natural=10, weapon1="claws", weapon2="none", weapon3="none", x=20, y=5) | extra


# --- the worked examples ----------------------------------------------------------------------------


def test_worked_examples_jinx_and_the_exhuman():
    # initiative: Jinx 9 + 4 = 13, exhuman 8 + 2 = 10: Jinx goes first
    state, events = RULES.start([jinx(), exhuman()], faces=[4, 2])
    assert state["order"] == ["jinx", "exh"] and state["active"] == "jinx"
    assert "round.started" in types(events)

    # Step 1: a 3-round burst at the exhuman 10 m away: close range, +0, target 70
    state, events = RULES.play(state, {"type": "attack", "combatant": "jinx", "target": "exh", "weapon": 0,
                                 "mode": "burst", "bonus": "damage"}, JINX_SEAT)
    pending = state["pending"]
    assert pending["target"] == 70 and pending["metres"] == 10
    assert pending["mods"] == [{"label": "range: close", "value": 0}]
    # the defender's phone (here the GM's) sees Fray halved: 60 / 2 = 30
    defend = [t for t in EP.view_for(state, GM)["legal"] if t["type"] == "defend"][0]
    assert [(m["method"], m["target"]) for m in defend["methods"]] == [("fray", 30)]
    assert not [t for t in EP.view_for(state, JINX_SEAT)["legal"] if t["type"] == "defend"]

    # Step 2-4: the GM dodges with Fray for the exhuman; Jinx rolls 96 (fail), the exhuman 07
    state, events = RULES.play(state, {"type": "defend", "combatant": "exh", "method": "fray"}, GM, [96, 7])
    rolled = [e for e in events if e["type"] == "attack.rolled"][0]
    assert [r["faces"] for r in rolled["rolls"]] == [[96], [7]]
    assert state["pending"]["phase"] == "reaction" and state["pending"]["rolls"]["attacker"]["success"] is False
    assert state["pending"]["rolls"]["defender"]["success"] is True

    # Flex after the roll: 96 becomes 69, two superior successes
    spend = [t for t in EP.view_for(state, JINX_SEAT)["legal"] if t["type"] == "spend"][0]
    assert {"pool": "flex", "use": "flip"} in [{k: c[k] for k in ("pool", "use")} for c in spend["choices"]]
    state, events = RULES.play(state, {"type": "spend", "combatant": "jinx", "pool": "flex", "use": "flip"}, JINX_SEAT)
    assert state["pending"]["rolls"]["attacker"]["roll"] == 69
    assert state["pending"]["rolls"]["attacker"]["superior"] == 2
    assert state["combatants"]["jinx"]["pools"]["flex"] == 1

    # the GM accepts for the exhuman: 69 beats 07 -> hit; 2d10 (7, 5) + burst 1d10 (5) + 2d6 (1, 3) = 21
    # kinetic armour 10 -> 11 through; Wound Threshold 8 -> one wound; SOM check 75 less that new wound's 10
    # (ruling 6) = 65, rolls 09: stays up
    state, events = RULES.play(state, {"type": "accept", "combatant": "exh"}, GM, [7, 5, 5, 1, 3, 9])
    assert types(events) == ["roll.accepted", "attack.hit", "damage.dealt", "check.passed"]
    damage = events[2]
    assert damage["data"]["rolled"] == 21 and damage["data"]["armour"] == 10
    assert damage["data"]["through"] == 11 and damage["data"]["wounds"] == 1
    assert [r["faces"] for r in damage["rolls"]] == [[7, 5], [5], [1, 3]]
    assert events[3]["data"]["check"]["target"] == 65 and events[3]["data"]["check"]["roll"] == 9
    ex = state["combatants"]["exh"]
    assert (ex["damage"], ex["wounds"], ex["wound_threshold"], ex["conditions"]) == (11, 1, 8, [])

    # Jinx still has her base move: 8 m away (18 m between them), then ends her turn
    state, _ = RULES.play(state, {"type": "move", "combatant": "jinx", "x": 2, "y": 5}, JINX_SEAT)
    assert state["turn"]["moved"] == 8
    state, events = RULES.play(state, {"type": "end_turn", "combatant": "jinx"}, JINX_SEAT)
    assert state["active"] == "exh"

    # the exhuman charges with a full move across the distance (17 m to stand next to her)
    state, _ = RULES.play(state, {"type": "move", "combatant": "exh", "x": 3, "y": 5}, GM)
    assert state["turn"]["moved"] == 17
    state, events = RULES.play(state, {"type": "attack", "combatant": "exh", "target": "jinx", "weapon": 0,
                                 "charge": True}, GM)
    assert state["pending"]["target"] == 60  # Melee 80, -10 charge, -10 wound
    assert sorted(m["value"] for m in state["pending"]["mods"]) == [-10, -10]

    # Jinx dodges with Fray 60 + superior position 20 = 80; exhuman 07, Jinx 00: critical beats it
    state, events = RULES.play(state, {"type": "defend", "combatant": "jinx", "method": "fray",
                                 "superior_position": True}, JINX_SEAT, [7, 0])
    assert state["pending"]["defence"]["target"] == 80
    assert state["pending"]["rolls"]["defender"]["critical"] is True
    # Jinx's 00 cannot be improved, so only the exhuman (whose 07 could flip to 70) still chooses
    assert state["pending"]["post"]["defender"]["accepted"] is True
    legal = EP.view_for(state, GM)["legal"]
    assert [t["type"] for t in legal if t.get("combatant") == "exh"] == ["spend", "accept"]
    state, events = RULES.play(state, {"type": "accept", "combatant": "exh"}, GM)
    assert "attack.missed" in types(events)
    assert state["combatants"]["jinx"]["damage"] == 0
    assert state["last_exchange"]["result"] == "miss"


# --- helpers for the edge cases -----------------------------------------------------------------------


def duel(att=None, dfn=None, *, gap=5, options=None):
    """Attacker 'a' (seat 'sa', initiative 20: always first) against defender 'd' (seat 'sd'), gap squares apart."""
    a = base(id="a", name="Ava", side="A", controller="seat", seat="sa", initiative=20, guns=50, melee=50,
             fray=50, durability=40, flex=1, vigor=1, x=1, y=1, weapon1="medium_pistol", weapon2="vibroblade",
             weapon3="assault_rifle")
    d = base(id="d", name="Dov", side="B", controller="seat", seat="sd", initiative=0, guns=40, melee=40,
             fray=40, durability=40, flex=1, vigor=1, x=1 + gap, y=1, armour="none", weapon1="knife",
             weapon2="none", weapon3="none")
    a.update(att or {})
    d.update(dfn or {})
    state, _ = RULES.start([a, d], options, faces=[1, 1])
    assert state["active"] == "a"
    return state


SA, SD = Viewer.player("sa"), Viewer.player("sd")


def attack(state, **kw):
    decl = {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, **kw}
    return RULES.play(state, decl, SA)


def exchange(state, att_roll, def_roll, damage_faces=(), method="fray", attack_kw=None, defend_kw=None):
    """Attack, defend, both roll, both accept; returns the state and all events after the attack."""
    state, _ = attack(state, **(attack_kw or {}))
    state, events = RULES.play(state, {"type": "defend", "combatant": "d", "method": method, **(defend_kw or {})}, SD,
                         [att_roll, def_roll])
    all_events = list(events)
    for side, viewer in (("attacker", SA), ("defender", SD)):
        p = state["pending"]
        if p is not None and not p["post"][side]["accepted"]:
            other = "defender" if side == "attacker" else "attacker"
            last = p["post"][other]["accepted"]
            faces = damage_faces if last else ()
            state, events = RULES.play(state, {"type": "accept", "combatant": p[side]}, viewer, faces)
            all_events += events
    return state, all_events


# --- ruling 1 and 2: reading the d100 -----------------------------------------------------------------


@pytest.mark.parametrize("target", [-50, 0, 1, 30, 98, 99, 150])
def test_00_is_always_a_critical_success_and_99_always_a_critical_failure(target):
    assert judge(0, target)["success"] and judge(0, target)["critical"]
    assert judge(0, target)["superior"] == 0
    assert not judge(99, target)["success"] and judge(99, target)["critical"]


def test_doubles_are_criticals_of_the_result_they_fall_on():
    assert judge(44, 50) == {"roll": 44, "target": 50, "success": True, "critical": True, "superior": 0,
                             "superior_failures": 0, "label": "critical success"}
    assert judge(55, 50)["label"] == "critical failure"
    assert judge(50, 50)["success"] and not judge(51, 50)["success"]  # at or under succeeds


@pytest.mark.parametrize("roll,superior", [(1, 0), (32, 0), (34, 1), (65, 1), (67, 2), (98, 2), (33, 0), (66, 0)])
def test_superior_bands_at_33_and_66(roll, superior):
    assert judge(roll, 99)["superior"] == superior


def test_upgrade_raises_one_level_up_to_two():
    assert judge(10, 50, 1)["superior"] == 1
    assert judge(70, 90, 1)["superior"] == 2


# --- ruling 3: the opposed test -------------------------------------------------------------------------


def test_opposed_results():
    assert contest(judge(80, 70), judge(10, 50)) == "miss"  # attacker fails
    assert contest(judge(20, 70), judge(60, 50)) == "hit"  # defender fails
    assert contest(judge(20, 70), None) == "hit"  # no defence
    assert contest(judge(22, 70), judge(60, 70)) == "hit"  # critical beats a higher plain success
    assert contest(judge(60, 70), judge(11, 70)) == "miss"  # the defender's critical beats it too
    assert contest(judge(60, 70), judge(40, 70)) == "hit"  # higher roll
    assert contest(judge(40, 70), judge(40, 80)) == "miss"  # equal roll misses
    assert contest(judge(33, 70), judge(22, 70)) == "hit"  # two criticals: higher wins
    assert contest(judge(33, 70), judge(33, 70)) == "miss"  # two equal criticals miss
    assert contest(judge(0, 70), judge(11, 70)) == "miss"  # 00 is the lowest critical
    assert contest(judge(11, 70), judge(0, 70)) == "hit"


# --- ruling 4: rounding ---------------------------------------------------------------------------------


def test_rounding_halves_up():
    assert [halve(v) for v in (65, 60, 11, 10, 1, 0)] == [33, 30, 6, 5, 1, 0]
    assert [wound_threshold(d) for d in (40, 38, 42, 37, 43, 35, 22, 23)] == [8, 8, 8, 7, 9, 7, 4, 5]
    assert death_rating(35, "bio") == 53 and death_rating(35, "pod") == 53 and death_rating(35, "synth") == 70
    assert death_rating(40, "bio") == 60
    assert armour_after_piercing(11, True) == 6 and armour_after_piercing(11, False) == 11


def test_ranged_defence_halves_fray_rounding_up():
    state = duel(dfn={"fray": 65})
    state, _ = attack(state)
    defend = [t for t in EP.view_for(state, SD)["legal"] if t["type"] == "defend"][0]
    assert [(m["method"], m["skill"], m["target"]) for m in defend["methods"]] == [("fray", 33, 33)]


def test_melee_defence_offers_melee_or_fray_in_full():
    state = duel(dfn={"fray": 65, "melee": 45}, gap=1)
    state, _ = attack(state, weapon=1)
    defend = [t for t in EP.view_for(state, SD)["legal"] if t["type"] == "defend"][0]
    assert [(m["method"], m["target"]) for m in defend["methods"]] == [("melee", 45), ("fray", 65)]


def test_armour_piercing_halves_armour_rounding_up():
    # vibroblade 2d6+1 (AP) against kinetic 11 -> 6; roll 5+5+1 = 11, two superior from 70? no: roll 20 -> plain
    state = duel(dfn={"kinetic_natural": 11}, gap=1)
    state, events = exchange(state, 20, 90, [5, 5], method="fray", attack_kw={"weapon": 1})
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]["data"]
    assert (dealt["rolled"], dealt["armour"], dealt["through"]) == (11, 6, 5)
    assert state["combatants"]["d"]["damage"] == 5


# --- ruling 5: the cap ----------------------------------------------------------------------------------


def test_modifiers_are_capped_at_sixty_and_the_pool_sits_outside():
    assert cap(-80) == -60 and cap(75) == 60 and cap(-60) == -60 and cap(12) == 12
    mods = [{"label": "x", "value": -50}, {"label": "y", "value": -30}]
    assert target_number(70, mods) == 10 and target_number(70, mods, 20) == 30


def test_cap_in_a_real_attack():
    # blind (-30), called shot (-10), tiny target (-30), beyond range x2 (-20): -90 capped to -60
    state = duel(dfn={"size": "very_small"}, gap=50, options={"width": 60})
    state, events = attack(state, visibility="blind", called_shot=True)
    assert sum(m["value"] for m in state["pending"]["mods"]) == -90
    assert state["pending"]["target"] == 50 - 60
    assert "capped" in events[0]["text"]


# --- ruling 6: wounds and durability ----------------------------------------------------------------------


def test_wounds_are_whole_multiples_of_the_threshold():
    assert [wounds_from(d, 7) for d in (6, 7, 13, 14, 21, 0)] == [0, 1, 1, 2, 3, 0]


def test_two_wounds_at_once_and_a_failed_som_check_knock_out():
    # critical hit (22 vs Guns 50): pistol 2d10 = 9+8 = 17, doubled 34; WT 8 -> 4 wounds; SOM 20*3 = 60
    # less the 4 new wounds = 20, roll 80
    state = duel()
    state, events = exchange(state, 22, 90, [9, 8, 80])
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]["data"]
    assert (dealt["rolled"], dealt["total"], dealt["through"], dealt["wounds"]) == (17, 34, 34, 4)
    assert [r["faces"] for r in [e for e in events if e["type"] == "damage.dealt"][0]["rolls"]] == [[9, 8]]
    failed = [e for e in events if e["type"] == "check.failed"][0]
    assert failed["data"]["knocked_out"] is True and failed["data"]["check"]["target"] == 20
    d = state["combatants"]["d"]
    assert sorted(d["conditions"]) == ["prone", "unconscious"] and d["wounds"] == 4
    assert state["status"] == "ended" and state["outcome"]["winner"] == "A"


def test_one_wound_and_a_failed_som_check_knock_down_only():
    # plain hit: 2d10 = 9+1 = 10 -> 1 wound; SOM check 60 minus the earlier and the new wound = 40; roll 51 fails
    state = duel()
    state["combatants"]["d"]["wounds"] = 1
    state, events = exchange(state, 20, 90, [9, 1, 51])
    check = [e for e in events if e["type"] == "check.failed"][0]["data"]
    assert check["check"]["target"] == 40 and check["knocked_out"] is False
    assert state["combatants"]["d"]["conditions"] == ["prone"]
    assert state["combatants"]["d"]["wounds"] == 2


def test_durability_incapacitates_and_death_rating_kills():
    state = duel(dfn={"durability": 20})  # WT 4, death rating 30
    state["combatants"]["d"]["damage"] = 12
    state, events = exchange(state, 20, 90, [4, 4])
    assert state["combatants"]["d"]["state"] == "incapacitated"
    assert "combatant.incapacitated" in types(events) and "check.passed" not in types(events)
    assert state["status"] == "ended"
    state = duel(dfn={"durability": 20})
    state["combatants"]["d"]["damage"] = 12
    state, events = exchange(state, 20, 90, [10, 10])
    assert state["combatants"]["d"]["state"] == "dead" and "combatant.killed" in types(events)


def test_armour_can_stop_a_hit_completely():
    state = duel(dfn={"armour": "combat_shell"})
    state, events = exchange(state, 20, 90, [3, 4])
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]["data"]
    assert dealt["through"] == 0 and state["combatants"]["d"]["damage"] == 0


def test_superior_dice_and_energy_armour():
    # 2d10+3 rifle, roll 70 -> two superior: 2d6. Armour kinetic vs energy picks kinetic for the rifle.
    state = duel(att={"guns": 80}, dfn={"energy_natural": 9, "kinetic_natural": 2})
    state, events = exchange(state, 70, 90, [5, 5, 6, 6, 10], attack_kw={"weapon": 2})
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]
    assert [r["faces"] for r in dealt["rolls"]] == [[5, 5], [6, 6]] and dealt["data"]["rolled"] == 25
    assert dealt["data"]["armour"] == 2 and dealt["data"]["through"] == 23


# --- ruling 7: pools --------------------------------------------------------------------------------------


def test_pool_before_the_roll_gives_20_and_blocks_a_second_point_on_that_test():
    state = duel()
    state, _ = attack(state, pool="vigor")
    assert state["pending"]["target"] == 70
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [96, 90])
    assert state["combatants"]["a"]["pools"] == {"flex": 1, "vigor": 0}
    assert state["pending"]["post"]["attacker"]["accepted"] is True  # already spent on this test
    assert not [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "spend"]
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "spend", "combatant": "a", "pool": "flex", "use": "flip"}, SA)


def test_defender_flex_flip_can_turn_a_hit_into_a_miss_and_reopens_the_attacker():
    state = duel(dfn={"fray": 80})  # ranged: 40
    state, _ = attack(state)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [30, 52])
    assert state["pending"]["standing"] if "standing" in state["pending"] else True
    state, _ = RULES.play(state, {"type": "accept", "combatant": "a"}, SA)
    state, events = RULES.play(state, {"type": "spend", "combatant": "d", "pool": "flex", "use": "flip"}, SD)
    assert state["pending"]["rolls"]["defender"]["roll"] == 25
    assert events[0]["data"]["standing"] == "hit"  # 30 still beats 25
    # the attacker may answer again now (accepted was reset) and flips 30 -> 03? that is worse; accept instead
    assert state["pending"]["post"]["attacker"]["accepted"] is False
    state, events = RULES.play(state, {"type": "accept", "combatant": "a"}, SA, [2, 2])
    assert "attack.hit" in types(events)


def test_upgrade_adds_a_superior_die_and_soften_is_offered_on_a_critical_failure():
    state = duel()
    state, _ = attack(state)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [10, 99])
    uses = {c["use"] for c in [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "spend"][0]["choices"]}
    assert uses == {"flip", "upgrade"}
    d_uses = {c["use"] for c in [t for t in EP.view_for(state, SD)["legal"] if t["type"] == "spend"][0]["choices"]}
    assert d_uses == {"soften"}
    state, _ = RULES.play(state, {"type": "spend", "combatant": "d", "pool": "vigor", "use": "soften"}, SD)
    assert state["pending"]["rolls"]["defender"]["label"] == "failure"
    state, events = RULES.play(state, {"type": "spend", "combatant": "a", "pool": "flex", "use": "upgrade"}, SA,
                         [1, 1, 6, 10])
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]
    assert [r["faces"] for r in dealt["rolls"]] == [[1, 1], [6]]


# --- ruling 8 and the grid --------------------------------------------------------------------------------


def test_range_bands():
    assert range_band(2, 30)["modifier"] == 10 and range_band(2.01, 30)["modifier"] == 0
    assert range_band(10, 30)["band"] == "close" and range_band(11, 30)["modifier"] == -10
    assert range_band(90, 30)["modifier"] == -30 and range_band(91, 30)["modifier"] == -40
    assert range_band(11, 8)["modifier"] == -20  # beyond a short range: second multiple


def test_range_from_the_grid_uses_the_scale():
    state = duel(gap=5, options={"metres_per_square": 3})  # 15 m
    state, _ = attack(state)
    assert state["pending"]["metres"] == 15
    assert state["pending"]["mods"][0] == {"label": "range: within range", "value": -10}
    view = EP.view_for(state, GM)
    assert view["options"]["metres_per_square"] == 3


def test_point_blank_and_distances_in_the_view():
    state = duel(gap=1)
    view = EP.view_for(state, SPECTATOR)
    row = view["distances"]["to"]["d"]
    assert row["metres"] == 1 and row["adjacent"] and row["band"] == "point blank"
    assert row["weapons"]["0"] == {"band": "point blank", "modifier": 10}


def test_player_moves_within_full_move_and_a_full_move_costs_20():
    state = duel(att={"base_move": 4, "full_move": 10}, gap=5)
    move = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "move"][0]
    assert move["max_metres"] == 10 and [1, 11] in move["reachable"] and [12, 1] not in move["reachable"]
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "move", "combatant": "a", "x": 12, "y": 1}, SA)
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "move", "combatant": "a", "x": 6, "y": 1}, SA)  # Dov stands there
    with pytest.raises(NotPermitted):
        RULES.play(state, {"type": "move", "combatant": "d", "x": 7, "y": 1}, SA)
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "move", "combatant": "d", "x": 7, "y": 1}, SD)  # not its turn
    state, _ = RULES.play(state, {"type": "move", "combatant": "a", "x": 1, "y": 7}, SA)  # 6 m: full move
    state, _ = attack(state)
    assert {"label": "full move", "value": -20} in state["pending"]["mods"]


def test_gm_places_any_token_anywhere_without_using_its_move():
    state = duel()
    state, _ = RULES.play(state, {"type": "move", "combatant": "d", "x": 20, "y": 10}, GM)
    assert (state["combatants"]["d"]["x"], state["combatants"]["d"]["y"]) == (20, 10)
    assert state["turn"]["moved"] == 0
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "move", "combatant": "d", "x": 99, "y": 1}, GM)


def test_melee_needs_reach_and_charge_needs_a_move():
    state = duel(gap=6)
    with pytest.raises(IllegalDeclaration, match="out of reach"):
        attack(state, weapon=1)
    state, _ = RULES.play(state, {"type": "move", "combatant": "a", "x": 6, "y": 1}, SA)  # 5 m: a full move
    state, _ = attack(state, weapon=1, charge=True, aggressive=True, bonus="accuracy")
    labels = {m["label"]: m["value"] for m in state["pending"]["mods"]}
    assert labels == {"charging": -10, "aggressive melee": 10}
    assert state["pending"]["extra"] == [{"label": "charge", "dice": [1, 6]}]
    state = duel(gap=1)
    with pytest.raises(IllegalDeclaration, match="full move"):
        attack(state, weapon=1, charge=True)


def test_aggressive_attacker_defends_at_minus_ten_until_its_next_turn():
    state = duel(gap=1, dfn={"guns": 50})
    state, _ = exchange(state, 80, 90, attack_kw={"weapon": 1, "aggressive": True})
    assert state["combatants"]["a"]["aggressive"] is True
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    state, _ = RULES.play(state, {"type": "attack", "combatant": "d", "target": "a", "weapon": 0}, SD)
    defend = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "defend"][0]
    assert [(m["method"], m["target"]) for m in defend["methods"]] == [("melee", 50), ("fray", 40)]  # Fray only


# --- other modifiers and actions ----------------------------------------------------------------------


def test_burst_and_full_auto_choices():
    state = duel(gap=5)
    with pytest.raises(IllegalDeclaration):
        attack(state, mode="full_auto")  # the pistol has no full automatic
    s2, _ = attack(state, weapon=2, mode="full_auto", bonus="accuracy", one_handed=True)
    labels = {m["label"]: m["value"] for m in s2["pending"]["mods"]}
    assert labels["full automatic"] == 30 and labels["two-handed weapon in one hand"] == -20
    s3, _ = attack(state, weapon=2, mode="full_auto")
    assert s3["pending"]["extra"] == [{"label": "full automatic", "dice": [2, 10]}]
    with pytest.raises(IllegalDeclaration):
        attack(state, one_handed=True)


def test_target_size_visibility_and_superior_position():
    state = duel(dfn={"size": "large"}, gap=5)
    state, _ = attack(state, visibility="major", superior_position=True)
    labels = {m["label"]: m["value"] for m in state["pending"]["mods"]}
    assert labels["target large (about a car's size)"] == 10 and labels["superior position"] == 20
    assert labels["bad sight: thick smoke or darkness"] == -20
    assert state["pending"]["target"] == 50 + 0 + 10 + 20 - 20


def test_called_shot_with_a_superior_success_ignores_armour():
    state = duel(dfn={"kinetic_natural": 10})
    state, events = exchange(state, 38, 90, [4, 4, 2, 10], attack_kw={"called_shot": True})
    dealt = [e for e in events if e["type"] == "damage.dealt"][0]["data"]
    assert dealt["armour"] == 0 and dealt["through"] == 10


def test_full_defence_and_wounds_and_traumas_on_the_defence():
    state = duel(dfn={"traumas": 1})
    state["combatants"]["d"]["wounds"] = 1
    state["combatants"]["d"]["full_defence"] = True
    state, _ = attack(state)
    method = [t for t in EP.view_for(state, SD)["legal"] if t["type"] == "defend"][0]["methods"][0]
    assert method["target"] == 20 + 30 - 20


def test_full_defence_is_a_complex_action_that_lasts_until_the_next_turn():
    state = duel()
    state, _ = RULES.play(state, {"type": "full_defence", "combatant": "a"}, SA)
    with pytest.raises(IllegalDeclaration):
        attack(state)
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    assert state["combatants"]["a"]["full_defence"] is True
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "d"}, SD, [1, 1])  # next action turn
    assert state["active"] == "a" and state["combatants"]["a"]["full_defence"] is False


def test_quick_aim_and_careful_aim():
    state = duel()
    s1, _ = RULES.play(state, {"type": "aim", "combatant": "a", "target": "d"}, SA)
    s1, _ = attack(s1)
    assert {"label": "aimed", "value": 10} in s1["pending"]["mods"]
    s2, _ = RULES.play(state, {"type": "aim", "combatant": "a", "target": "d", "complex": True}, SA)
    with pytest.raises(IllegalDeclaration):
        attack(s2)
    s2, _ = RULES.play(s2, {"type": "end_turn", "combatant": "a"}, SA)
    s2, _ = RULES.play(s2, {"type": "end_turn", "combatant": "d"}, SD, [1, 1])
    s2, _ = attack(s2)
    assert {"label": "aimed", "value": 30} in s2["pending"]["mods"]


def test_surprised_defender_cannot_defend_and_the_attack_rolls_at_once():
    state = duel()
    state, events = RULES.play(state, {"type": "condition", "combatant": "d", "condition": "surprised", "on": True}, GM)
    assert EP.view_for(state, SPECTATOR)["combatants"][1]["markers"] == ["surprised (cannot defend)"]
    # 80 fails against 50: no pool point can save it except a flip to 08, which Ava declines
    state, events = RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0}, SA, [80])
    assert "defence.skipped" in types(events) and state["pending"]["rolls"]["defender"] is None
    assert list(state["pending"]["post"]) == ["attacker"]
    state, events = RULES.play(state, {"type": "accept", "combatant": "a"}, SA)
    assert "attack.missed" in types(events)


def test_gm_free_modifier_with_a_label():
    state = duel()
    state, _ = RULES.play(state, {"type": "modifier", "combatant": "a", "label": "slippery floor", "value": -15,
                            "applies": "attack"}, GM)
    state, _ = attack(state)
    assert {"label": "slippery floor", "value": -15, "gm": True} in state["pending"]["mods"]
    assert state["pending"]["target"] == 35
    state, _ = RULES.play(state, {"type": "modifier", "combatant": "a", "label": "cover", "value": -10}, GM)
    assert state["pending"]["target"] == 25
    with pytest.raises(NotPermitted):
        EP.authorize(state, {"type": "modifier", "combatant": "a", "label": "x", "value": 5}, SA)
    with pytest.raises(InvalidDeclaration):
        RULES.play(state, {"type": "modifier", "combatant": "a", "label": "", "value": 5}, GM)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d"}, SD, [90, 90])
    assert state["combatants"]["a"]["modifiers"] == []  # used up


def test_cancel_attack_gives_the_action_back():
    state = duel()
    state, _ = attack(state)
    state, events = RULES.play(state, {"type": "cancel_attack", "combatant": "a"}, SA)
    assert state["pending"] is None and state["turn"]["complex_used"] is False
    assert EP.is_checkpoint(state)


# --- initiative ----------------------------------------------------------------------------------------


def test_initiative_ties_go_to_the_higher_score_then_a_roll_off():
    a = base(id="a", name="A", side="A", initiative=10, x=0, y=0)
    b = base(id="b", name="B", side="B", initiative=8, x=5, y=0)
    c = base(id="c", name="C", side="B", initiative=8, x=6, y=0)
    state, events = RULES.start([a, b, c], faces=[1, 3, 3, 2, 5])  # totals 11, 11, 11; B and C roll off 2 vs 5
    assert state["order"] == ["a", "c", "b"]
    assert state["initiative"]["c"]["tiebreak"] == [5]
    assert [r["faces"] for r in events[1]["rolls"]] == [[1], [3], [3], [2], [5]]


def test_wounds_lower_initiative():
    state = duel()
    state["combatants"]["a"]["wounds"] = 2
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "d"}, SD, [3, 6])
    assert state["initiative"]["a"] == {"score": 18, "roll": 3, "total": 21, "tiebreak": []}


def test_incapacitated_combatants_lose_their_turns():
    a = base(id="a", name="A", side="A", initiative=10, x=0, y=0)
    b = base(id="b", name="B", side="B", initiative=9, x=5, y=0)
    c = base(id="c", name="C", side="B", initiative=5, x=6, y=0)
    state, _ = RULES.start([a, b, c], faces=[1, 1, 1])
    state["combatants"]["b"]["state"] = "incapacitated"
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, GM)
    assert state["active"] == "c"


# --- roles and hidden information ------------------------------------------------------------------


def test_roles_are_enforced_for_the_exchange():
    state = duel()
    with pytest.raises(NotPermitted):
        EP.authorize(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0}, SPECTATOR)
    with pytest.raises(NotPermitted):
        EP.authorize(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0}, SD)
    state, _ = attack(state)
    with pytest.raises(NotPermitted):  # the attacker's player cannot defend for the target
        EP.authorize(state, {"type": "defend", "combatant": "d", "method": "fray"}, SA)
    with pytest.raises(IllegalDeclaration):  # nor can anyone defend for the attacker
        RULES.play(state, {"type": "defend", "combatant": "a", "method": "fray"}, SA)
    with pytest.raises(IllegalDeclaration):  # nothing else happens while the attack waits
        RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    assert [t["type"] for t in EP.view_for(state, SD)["legal"]] == ["defend"]
    assert [t["type"] for t in EP.view_for(state, SA)["legal"]] == ["cancel_attack"]
    assert EP.view_for(state, SPECTATOR)["legal"] == []
    # the GM answers for an absent player
    state, events = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, GM, [50, 50])
    assert "attack.rolled" in types(events)


def test_spectators_and_other_seats_see_only_a_coarse_health_bar():
    state = duel()
    state["combatants"]["d"]["damage"] = 12
    text = json.dumps(EP.view_for(state, SPECTATOR))
    assert '"durability"' not in text and '"damage"' not in text and '"pools"' not in text
    spectator_d = [c for c in EP.view_for(state, SPECTATOR)["combatants"] if c["id"] == "d"][0]
    assert spectator_d["health"] == {"level": 0.6, "label": "hurt"}
    other_seat = [c for c in EP.view_for(state, SA)["combatants"] if c["id"] == "d"][0]
    assert "durability" not in other_seat and "fray" not in other_seat
    owner = [c for c in EP.view_for(state, SD)["combatants"] if c["id"] == "d"][0]
    assert (owner["damage"], owner["durability"], owner["pools"]["flex"]) == (12, 40, 1)
    gm = [c for c in EP.view_for(state, GM)["combatants"] if c["id"] == "d"][0]
    assert gm["damage"] == 12 and gm["death_rating"] == 60
    state, events = RULES.play(state, {"type": "reveal", "on": True}, GM)
    spectator_d = [c for c in EP.view_for(state, SPECTATOR)["combatants"] if c["id"] == "d"][0]
    assert spectator_d["damage"] == 12 and "fray" not in spectator_d
    assert "seed" not in json.dumps(state)


def test_every_event_reaches_everyone_in_words_written_for_them():
    """The table hears every step of an exchange; the target numbers, skills and pools in its words
    only reach those who see that combatant's numbers (its player and the GM)."""
    state, events = RULES.start([jinx(), exhuman()], faces=[4, 2])
    state, ev1 = RULES.play(state, {"type": "attack", "combatant": "jinx", "target": "exh", "weapon": 0}, JINX_SEAT)
    state, ev2 = RULES.play(state, {"type": "defend", "combatant": "exh"}, GM, [20, 50])
    everything = events + ev1 + ev2
    for e in everything:
        assert e["text"] and "." in e["type"]
    told = visible_events(everything, SPECTATOR, state)
    assert len(told) == len(everything)
    words = " ".join(e["text"] for e in told)
    assert "target number" not in words and "against" not in words and "Fray" not in words, words
    assert "Exhuman dodges." in words and "Jinx attacks Exhuman with the" in words
    gm_words = " ".join(e["text"] for e in visible_events(everything, GM, state))
    assert "target number" in gm_words and "Fray" in gm_words
    jinx_words = " ".join(e["text"] for e in visible_events(ev1, JINX_SEAT, state))
    assert "target number" in jinx_words  # the player sees its own numbers


def test_malformed_declarations_name_the_field():
    state = duel()
    with pytest.raises(InvalidDeclaration, match="unknown declaration"):
        RULES.play(state, {"type": "teleport", "combatant": "a"}, GM)
    with pytest.raises(InvalidDeclaration, match="target"):
        RULES.play(state, {"type": "attack", "combatant": "a", "weapon": 0}, SA)
    with pytest.raises(InvalidDeclaration, match="weapon"):
        RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 9}, SA)
    with pytest.raises(InvalidDeclaration, match="mode"):
        RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, "mode": "laser"}, SA)
    with pytest.raises(InvalidDeclaration, match="x"):
        RULES.play(state, {"type": "move", "combatant": "a", "x": "far", "y": 1}, SA)
    with pytest.raises(InvalidDeclaration, match="called_shot"):
        RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, "called_shot": "yes"}, SA)
    with pytest.raises(IllegalDeclaration, match="itself"):
        RULES.play(state, {"type": "attack", "combatant": "a", "target": "a", "weapon": 0}, SA)
    with pytest.raises(IllegalDeclaration, match="Flex"):
        s = copy.deepcopy(state)
        s["combatants"]["a"]["pools"]["flex"] = 0
        RULES.play(s, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, "pool": "flex"}, SA)


def test_stat_form_presets_and_registry():
    assert get_system("eclipse-phase").name == "Eclipse Phase 2e"
    names = {f.name for f in EP.combatant_fields()}
    assert {"durability", "fray", "melee", "guns", "flex", "vigor", "weapon1", "armour"} <= names
    for i, preset in enumerate(EP.presets()):
        cleaned = EP.validate_combatant({**preset, "side": "A"}, i)
        assert cleaned["name"] == preset["name"]
    with pytest.raises(InvalidDeclaration, match="damage value"):
        EP.validate_combatant(base(name="X", custom_weapon="Zapper", custom_dv="lots"))
    with pytest.raises(InvalidDeclaration, match="full move"):
        EP.validate_combatant(base(name="X", base_move=10, full_move=5))
    assert {f.name for f in EP.option_fields()} >= {"metres_per_square"}
    assert all(h["title"] and h["text"] for h in EP.help())
    json.dumps([f.to_dict() for f in EP.combatant_fields()])


def test_custom_weapon_is_armed():
    state = duel(att={"custom_weapon": "Plasma cutter", "custom_dv": "3d6+2", "custom_armour": "energy",
                      "custom_ap": True, "custom_range": 5, "custom_modes": "single"})
    weapon = state["combatants"]["a"]["weapons"][3]
    assert weapon["name"] == "Plasma cutter" and weapon["dv"] == "3d6+2" and weapon["ap"]


def test_checkpoints_are_turn_starts():
    state = duel()
    assert EP.is_checkpoint(state)
    moved, _ = RULES.play(state, {"type": "move", "combatant": "a", "x": 1, "y": 2}, SA)
    assert not EP.is_checkpoint(moved)
    pending, _ = attack(state)
    assert not EP.is_checkpoint(pending)


def test_legal_templates_for_the_active_player():
    state = duel(gap=1)
    legal = EP.view_for(state, SA)["legal"]
    kinds = [t["type"] for t in legal]
    assert kinds == ["move", "attack", "full_defence", "aim", "end_turn"]
    atk = legal[1]
    assert atk["combatant"] == "a" and atk["targets"][0]["id"] == "d"
    assert atk["weapons"][0]["preview"]["d"]["target"] == 60  # Guns 50 + point blank 10
    assert atk["weapons"][1]["preview"]["d"]["target"] == 50  # the vibroblade is in reach
    assert EP.view_for(state, SD)["legal"] == []
    gm_kinds = [t["type"] for t in EP.view_for(state, GM)["legal"]]
    assert {"modifier", "condition", "reveal", "attack"} <= set(gm_kinds)


# --- the computer, replay and properties ---------------------------------------------------------------


def four_computers():
    return [
        {**p, "id": f"c{i}", "side": "AB"[i % 2], "controller": "computer"}
        for i, p in enumerate(EP.presets()[:4])
    ]


def run_to_the_end(seed):
    dice = SeededDice(seed)
    state, events = RULES.start(four_computers(), dice=dice)
    return state, events


def test_computer_fight_runs_to_the_end_and_replays_from_its_seed():
    state, events = run_to_the_end("replay-1")
    assert state["status"] == "ended" and state["outcome"]["text"]
    again, events_again = run_to_the_end("replay-1")
    assert again == state and events_again == events
    other, _ = run_to_the_end("replay-2")
    assert other != state
    assert any(e["type"] == "attack.rolled" for e in events)


def test_computer_defends_when_a_player_attacks_it():
    lineup = [jinx(), {**exhuman(), "controller": "computer"}]
    state, _ = RULES.start(lineup, faces=[4, 2])
    state, events = RULES.play(state, {"type": "attack", "combatant": "jinx", "target": "exh", "weapon": 0}, JINX_SEAT,
                         [20, 50])
    assert "defence.declared" in types(events) and state["pending"]["phase"] == "reaction"


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 99), st.integers(-100, 200))
def test_judge_properties(roll, target):
    r = judge(roll, target)
    if roll not in (0, 99):
        assert r["success"] == (roll <= target)
    assert r["critical"] == (roll % 11 == 0)
    assert 0 <= r["superior"] <= 2 and (r["superior"] == 0 or (r["success"] and not r["critical"]))
    assert flip(flip(roll)) == roll


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 99), st.integers(-50, 150), st.integers(0, 99), st.integers(-50, 150))
def test_contest_properties(ar, at, dr, dt):
    a, d = judge(ar, at), judge(dr, dt)
    result = contest(a, d)
    if not a["success"]:
        assert result == "miss"
    if a["success"] and not d["success"]:
        assert result == "hit"
    if ar == dr:
        assert result == "miss" or not d["success"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 99), st.integers(0, 99), st.lists(st.integers(1, 6), min_size=12, max_size=12),
       st.sampled_from([0, 1, 2]), st.sampled_from(["single", "burst"]), st.booleans())
def test_a_whole_exchange_never_breaks_the_state(att, dfn, d6s, weapon, mode, pool):
    state = duel(gap=1, dfn={"kinetic_natural": 4})
    kw = {"weapon": weapon, "pool": "vigor" if pool else "none"}
    if weapon == 0:
        kw["mode"] = mode
    faces = [att, dfn] + [min(f, 6) for f in d6s] + [50]
    dice = ScriptedDice(faces)
    frozen = copy.deepcopy(state)
    s, _ = EP.apply(state, {"type": "attack", "combatant": "a", "target": "d", **kw}, SA, dice)
    s, _ = EP.apply(s, {"type": "defend", "combatant": "d", "method": "fray"}, SD, dice)
    assert state == frozen
    for side, viewer in (("attacker", SA), ("defender", SD)):
        if s["pending"] is not None and not s["pending"]["post"][side]["accepted"]:
            s, _ = EP.apply(s, {"type": "accept", "combatant": s["pending"][side]}, viewer, dice)
    assert s["pending"] is None
    d = s["combatants"]["d"]
    assert d["damage"] >= 0 and d["wounds"] == d["damage"] // d["wound_threshold"]
    json.dumps(s)
    for viewer in (GM, SA, SD, SPECTATOR):
        json.dumps(EP.view_for(s, viewer))


def test_a_combatant_handed_to_the_computer_acts_when_the_gm_advances():
    state, _ = RULES.start([jinx(), exhuman()], faces=[4, 2])
    state, _ = EP.assign(state, "jinx", "computer", None)
    assert any(t["type"] == "advance" for t in EP.view_for(state, GM)["legal"])
    with pytest.raises(NotPermitted):
        EP.authorize(state, {"type": "advance"}, JINX_SEAT)
    state, events = RULES.play(state, {"type": "advance"}, GM)
    assert "attack.declared" in types(events) and state["pending"]["phase"] == "defence"
    assert not any(t["type"] == "advance" for t in EP.view_for(state, GM)["legal"])
    with pytest.raises(IllegalDeclaration):
        RULES.play(state, {"type": "advance"}, GM)


def test_blind_attack_with_a_miss_chance_instead_of_the_penalty():
    state = duel()
    s1, _ = attack(state, visibility="blind_chance")
    assert s1["pending"]["target"] == 50  # no -30 with the miss chance
    s1, events = exchange(state, 20, 90, [49], attack_kw={"visibility": "blind_chance"})
    assert types(events)[-1] == "attack.missed" and events[-1]["rolls"][0]["faces"] == [49]
    s2, events = exchange(state, 20, 90, [50, 3, 3], attack_kw={"visibility": "blind_chance"})
    assert "chance.passed" in types(events) and s2["combatants"]["d"]["damage"] == 6


def test_gm_corrects_damage_and_wounds():
    state = duel()
    state, events = RULES.play(state, {"type": "adjust", "combatant": "d", "damage": 45, "wounds": 3}, GM)
    assert state["combatants"]["d"]["state"] == "incapacitated" and state["status"] == "ended"
    assert "incapacitated" in events[0]["text"]
    # the damage total reaches the GM and Dov's player only
    for viewer, sees in ((GM, True), (SD, True), (SA, False), (SPECTATOR, False)):
        text = " ".join(e["text"] for e in visible_events(events, viewer, state))
        assert ("45 damage" in text) is sees and "3 wounds" in text
    with pytest.raises(NotPermitted):
        EP.authorize(duel(), {"type": "adjust", "combatant": "d", "damage": 0, "wounds": 0}, SD)
    with pytest.raises(InvalidDeclaration):
        RULES.play(duel(), {"type": "adjust", "combatant": "d", "damage": -1, "wounds": 0}, GM)


def test_event_texts_read_well():
    state = duel(att={"guns": 80})
    state, events = exchange(state, 70, 90, [5, 5, 6, 6, 10], attack_kw={"weapon": 2})
    texts = " ".join(e["text"] for e in events)
    assert "2 superior successes" in texts and "3 wounds" in texts and "(es)" not in texts


def test_setup_checks_the_lineup_and_the_grid():
    with pytest.raises(InvalidDeclaration, match="both sides"):
        RULES.start([jinx(), {**exhuman(), "side": "A"}], faces=[1, 1])
    with pytest.raises(InvalidDeclaration, match="off the grid"):
        RULES.start([jinx(), exhuman(x=30)], faces=[1, 1])
    with pytest.raises(InvalidDeclaration, match="already taken"):
        RULES.start([jinx(), exhuman(x=10)], faces=[1, 1])
    # automatic placement: side A on the left, side B on the right, no square shared
    state, _ = RULES.start([jinx(x=-1, y=-1), exhuman(x=-1, y=-1), {**exhuman(x=-1, y=-1), "id": "e2"}], faces=[1, 2, 3])
    squares = {(c["x"], c["y"]) for c in state["combatants"].values()}
    assert len(squares) == 3 and state["combatants"]["jinx"]["x"] < state["combatants"]["exh"]["x"]


def declaration_from(template, rng):
    """A random declaration filled in from one of view.legal's templates."""
    kind = template["type"]
    decl = {"type": kind}
    if template.get("combatant"):
        decl["combatant"] = template["combatant"]
    if kind == "move":
        decl["x"], decl["y"] = rng.choice(template["reachable"])
    elif kind == "attack":
        options = [(w, t) for w in template["weapons"] for t in w["preview"]]
        weapon, target = rng.choice(options)
        decl.update(weapon=weapon["index"], target=target, mode=rng.choice(weapon["modes"])[0],
                    bonus=rng.choice(["damage", "accuracy"]), pool=rng.choice(template["pools"])[0],
                    called_shot=rng.random() < 0.2, superior_position=rng.random() < 0.2)
    elif kind == "defend":
        decl.update(method=rng.choice(template["methods"])["method"], pool=rng.choice(template["pools"])[0])
    elif kind == "spend":
        choice = rng.choice(template["choices"])
        decl.update(pool=choice["pool"], use=choice["use"])
    elif kind == "aim":
        decl.update(target=rng.choice(template["targets"])["id"], complex=rng.random() < 0.5)
    return decl


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_random_legal_play_keeps_every_invariant(seed):
    import random

    rng = random.Random(seed)
    lineup = four_computers()
    lineup[0].update(controller="seat", seat="s1")
    lineup[1].update(controller="seat", seat="s2")
    lineup[2]["controller"] = "gm"
    dice = SeededDice(f"walk-{seed}")
    state, _ = RULES.start(lineup, dice=dice)
    viewers = [GM, Viewer.player("s1"), Viewer.player("s2")]
    for _ in range(80):
        if state["status"] != "active":
            break
        choices = [(v, t) for v in viewers for t in EP.view_for(state, v)["legal"]
                   if t.get("combatant") and t["type"] not in ("cancel_attack",)]
        assert choices, "a running fight always offers someone a declaration"
        viewer, template = rng.choice(choices)
        decl = declaration_from(template, rng)
        EP.authorize(state, decl, viewer)
        frozen = copy.deepcopy(state)
        try:
            new, events = EP.apply(state, decl, viewer, dice)
        except IllegalDeclaration:
            continue  # e.g. a charge without a move, a mode the weapon lacks: legal lists them as options
        assert state == frozen
        state = new
        json.dumps(state)
        for e in events:  # every event has words for the spectators, bar a combatant's own modifiers
            assert e["text"] and (visible_events([e], SPECTATOR, state) or e["type"].startswith("modifier."))
        spectator_view = json.dumps(EP.view_for(state, SPECTATOR))
        assert '"durability"' not in spectator_view and '"pools"' not in spectator_view
        if state["status"] == "active":
            assert state["active"] is not None and state["combatants"][state["active"]]["state"] == "ok"
        for c in state["combatants"].values():
            assert c["damage"] >= 0 and c["pools"]["flex"] >= 0 and c["pools"]["vigor"] >= 0


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 120), st.floats(allow_nan=True), st.text(max_size=6),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                 st.sampled_from(["a", "d", "fray", "melee", "flex", "vigor", "flip", "burst", "blind", "surprised"]))
KEYS = ["combatant", "target", "weapon", "mode", "bonus", "pool", "method", "use", "x", "y", "label", "value",
        "applies", "lasting", "condition", "on", "complex", "damage", "wounds", "visibility", "charge"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["move", "attack", "defend", "spend", "accept", "end_turn", "full_defence", "aim", "stand",
                        "cancel_attack", "modifier", "clear_modifiers", "condition", "reveal", "advance", "adjust",
                        "teleport", "__init__", ""]),
       st.dictionaries(st.sampled_from(KEYS), JUNK, max_size=6), st.sampled_from([GM, SA, SD, SPECTATOR]),
       st.booleans())
def test_junk_declarations_only_raise_rules_errors(kind, fields, viewer, pending):
    state = duel(gap=1)
    if pending:
        state, _ = attack(state)
    decl = {"type": kind, **fields}
    frozen = copy.deepcopy(state)
    try:
        EP.authorize(state, decl, viewer)
        new, _ = EP.apply(state, decl, viewer, SeededDice("junk"))
        json.dumps(new)
    except RulesError:
        pass
    assert state == frozen


STAT_KEYS = [f.name for f in EP.combatant_fields()] + ["name", "side", "controller", "seat", "id"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(STAT_KEYS), JUNK, max_size=8), max_size=4),
       st.dictionaries(st.sampled_from(["metres_per_square", "width", "height", "reveal_health"]), JUNK, max_size=3))
def test_junk_lineups_only_raise_rules_errors(entries, options):
    lineup = [{**base(name=f"N{i}", side="AB"[i % 2]), **entry} for i, entry in enumerate(entries)]
    try:
        state, _ = EP.setup(lineup, options, SeededDice("lineup"))
    except RulesError:
        return
    json.dumps(EP.view_for(state, SPECTATOR))


def test_targets_list_the_foes_first_the_nearest_first_and_mark_each_ally():
    """Jinx, an ally beside her and two foes further off: the attack's targets (and the aim's) put the
    foes first, the nearest of them first, then the ally, marked, so no page decides who is whose."""
    guard = jinx(id="guard", name="Guard", controller="gm", seat=None, initiative=20, x=11, y=5)
    near, far = exhuman(id="near", name="Near", initiative=10, x=14, y=5), exhuman(id="far", name="Far", x=22, y=5)
    state, _ = RULES.start([jinx(initiative=30), guard, near, far], faces=[1, 1, 1, 1])
    legal = {t["type"]: t for t in EP.view_for(state, JINX_SEAT)["legal"] if t.get("combatant") == "jinx"}
    assert [(t["id"], t["ally"]) for t in legal["attack"]["targets"]] == [("near", False), ("far", False), ("guard", True)]
    assert [(t["id"], t["ally"]) for t in legal["aim"]["targets"]] == [("near", False), ("far", False), ("guard", True)]
