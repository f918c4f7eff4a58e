"""Eclipse Phase 2e, issue 16: rulings EP-6, EP-8, EP-9 and EP-10 and superior failures, with scripted dice.

Each test here fails on the code before the fix: two wounds at once that left a target standing, the SOM
check that ignored the new wound, a charge after a step, an aggressive attack that lowered Melee parries,
aims that helped bursts, the "close" band past a short weapon's range, and failures without a degree.
"""

from __future__ import annotations

import copy

import pytest

from rules.core import Viewer
from rules.errors import IllegalDeclaration
from rules.systems.eclipse_phase import EclipsePhase
from rules.systems.eclipse_phase.rulings import judge, range_band, result_words, superior_failure_degree
from tests.rules.harness import Rules

EP = EclipsePhase()
RULES = Rules(EP)
GM = Viewer.gm()
SA, SD = Viewer.player("sa"), Viewer.player("sd")


def base(**stats):
    return {**{f.name: f.default for f in EP.combatant_fields()}, **stats}


def ava(**extra):
    """The attacker: initiative 20 (always first), Guns/Melee/Fray 50, base move 4 m, full move 16 m."""
    return base(id="a", name="Ava", side="A", controller="seat", seat="sa", initiative=20, guns=50, melee=50,
                fray=50, durability=40, flex=1, vigor=1, x=1, y=1, weapon1="medium_pistol", weapon2="vibroblade",
                weapon3="assault_rifle") | extra


def dov(**extra):
    """The defender: Durability 40 (Wound Threshold 8), SOM 20 (SOM check 60), Fray 40, Melee 40."""
    return base(id="d", name="Dov", side="B", controller="seat", seat="sd", initiative=0, guns=50, melee=40,
                fray=40, durability=40, som=20, flex=1, vigor=1, x=6, y=1, armour="none", weapon1="knife",
                weapon2="medium_pistol", weapon3="none") | extra


def start(lineup, faces=(1, 1)):
    """Ava first: the initiative faces (1, 1) unless the test says otherwise."""
    return RULES.start(lineup, faces=faces)[0]


def attack(state, **kw):
    return RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, **kw}, SA)


def pistol_hit(state, attack_roll, damage_faces, som_roll):
    """Ava shoots Dov with the pistol (2d10); Dov dodges and rolls 90 (a failure); both accept."""
    state, _ = attack(state)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [attack_roll, 90])
    events = []
    if not state["pending"]["post"]["attacker"]["accepted"]:
        state, ev = RULES.play(state, {"type": "accept", "combatant": "a"}, SA)
        events += ev
    state, ev = RULES.play(state, {"type": "accept", "combatant": "d"}, SD, [*damage_faces, som_roll])
    return state, events + ev


def the(events, kind):
    found = [e for e in events if e["type"] == kind]
    assert len(found) == 1, [e["type"] for e in events]
    return found[0]


# --- EP-9: two or more wounds from one hit knock the target down -----------------------------------------


@pytest.mark.parametrize("faces,som_roll,conditions,check", [
    # 5+4 = 9 through: one wound; SOM check 60 - 10 = 50
    ((5, 4), 50, [], "check.passed"),
    ((5, 4), 51, ["prone"], "check.failed"),
    # 9+8 = 17 through: two wounds; SOM check 60 - 20 = 40 decides only unconsciousness
    ((9, 8), 40, ["prone"], "check.passed"),
    ((9, 8), 41, ["prone", "unconscious"], "check.failed"),
    # 10+10 = 20: still two wounds (20 // 8)
    ((10, 10), 0, ["prone"], "check.passed"),
])
def test_two_wounds_at_once_knock_down_and_the_som_check_decides_only_unconsciousness(
        faces, som_roll, conditions, check):
    state = start([ava(), dov()])
    state, events = pistol_hit(state, 20, faces, som_roll)
    wounds = the(events, "damage.dealt")["data"]["wounds"]
    assert wounds == (1 if sum(faces) < 16 else 2)
    assert sorted(state["combatants"]["d"]["conditions"]) == conditions
    result = the(events, check)
    assert result["data"]["knocked_down"] is ("prone" in conditions)
    assert result["data"]["knocked_out"] is ("unconscious" in conditions)
    assert state["last_exchange"]["som_check"]["roll"] == som_roll


def test_two_wounds_and_a_passed_check_read_as_knocked_down_but_conscious():
    state = start([ava(), dov()])
    state, events = pistol_hit(state, 20, (9, 8), 12)
    text = the(events, "check.passed")["text"]
    assert "knocked down by 2 wounds at once, but stays conscious" in text
    exchange = state["last_exchange"]
    assert exchange["knocked_down"] is True and exchange["knocked_out"] is False
    assert exchange["som_text"] == "success, knocked down by 2 wounds at once, but stays conscious"
    assert state["status"] == "active"  # prone, not out: the fight goes on
    assert "prone" in state["combatants"]["d"]["conditions"]


# --- EP-6: the SOM check counts every wound the target now has ------------------------------------------


@pytest.mark.parametrize("earlier,traumas,faces,target", [
    (0, 0, (5, 4), 50),  # one new wound: 60 - 10
    (1, 0, (5, 4), 40),  # one earlier and one new
    (0, 1, (5, 4), 40),  # a trauma counts like a wound
    (2, 1, (9, 8), 10),  # two earlier, two new, one trauma: 60 - 50
])
def test_the_som_check_counts_the_new_wounds_too(earlier, traumas, faces, target):
    state = start([ava(), dov(traumas=traumas)])
    state["combatants"]["d"]["wounds"] = earlier
    state, events = pistol_hit(state, 20, faces, 5)
    check = [e for e in events if e["type"] in ("check.passed", "check.failed")][0]
    assert check["data"]["check"]["target"] == target
    assert f"against SOM check {target} (60 {target - 60:+d} for" in check["text"]


def test_a_som_roll_between_the_old_and_the_new_target_now_fails():
    # one wound, no earlier ones: the check is 50, not 60; 55 fails and knocks Dov down
    state = start([ava(), dov()])
    state, events = pistol_hit(state, 20, (5, 4), 55)
    assert the(events, "check.failed")["data"]["check"]["target"] == 50
    assert state["combatants"]["d"]["conditions"] == ["prone"]


# --- EP-10: a charge needs a full move ------------------------------------------------------------------


def melee_duel(gap, **att):
    """Ava (base move 4 m) gap squares left of Dov, on a 1 m grid."""
    return start([ava(**att), dov(x=1 + gap)])


@pytest.mark.parametrize("move_to", [2, 4, 5])  # 1, 3 and 4 m: within the 4 m base move
def test_a_charge_after_no_more_than_the_base_move_is_refused(move_to):
    state = melee_duel(5)
    state, _ = RULES.play(state, {"type": "move", "combatant": "a", "x": move_to, "y": 1}, SA)
    atk = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "attack"][0]
    assert "charge" not in [o["name"] for o in atk["options"]] and atk["full_move"] is False
    state = copy.deepcopy(state)
    state["combatants"]["d"]["x"] = move_to + 1  # stand next to Ava so only the move is in question
    with pytest.raises(IllegalDeclaration, match="full move"):
        attack(state, weapon=1, charge=True)
    plain, _ = attack(state, weapon=1)
    assert {m["label"] for m in plain["pending"]["mods"]} == set()  # no full-move penalty either


def test_a_charge_after_a_full_move_takes_minus_ten_and_adds_a_d6():
    state = melee_duel(6)
    state, _ = RULES.play(state, {"type": "move", "combatant": "a", "x": 6, "y": 1}, SA)  # 5 m > 4 m base move
    atk = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "attack"][0]
    assert "charge" in [o["name"] for o in atk["options"]] and atk["full_move"] is True
    state, _ = attack(state, weapon=1, charge=True)
    assert state["pending"]["mods"] == [{"label": "charging", "value": -10}]
    assert state["pending"]["extra"] == [{"label": "charge", "dice": [1, 6]}]


@pytest.mark.parametrize("gap,charges", [(4, False), (5, False), (6, True), (9, True)])
def test_the_computer_charges_exactly_when_a_person_could(gap, charges):
    # a computer-played brawler closes in and strikes; it charges only after more than its 4 m base move
    brawler = ava(controller="computer", seat=None, weapon1="claws", weapon2="none", weapon3="none")
    state = melee_duel(gap, **{k: brawler[k] for k in ("controller", "seat", "weapon1", "weapon2", "weapon3")})
    p = state["pending"]
    assert p is not None and p["attacker"] == "a" and p["phase"] == "defence"
    assert state["turn"]["moved"] == gap - 1
    assert p["choices"]["charge"] is charges
    assert ({"label": "charging", "value": -10} in p["mods"]) is charges
    # a person in the same spot is offered the charge exactly when the computer took it
    assert EP._full_move_made(state, state["combatants"]["a"]) is charges


# --- EP-10: an aggressive attack lowers Fray only -------------------------------------------------------


def test_an_aggressive_attacker_keeps_its_melee_parry_and_loses_10_on_fray():
    state = melee_duel(1, fray=60)
    state, _ = attack(state, weapon=1, aggressive=True)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "melee"}, SD, [80, 95])
    state, _ = RULES.play(state, {"type": "accept", "combatant": "a"}, SA)
    state, _ = RULES.play(state, {"type": "accept", "combatant": "d"}, SD)  # 80 > Melee 50: Ava misses
    assert state["last_exchange"]["result"] == "miss" and state["combatants"]["a"]["aggressive"] is True
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    # Dov strikes back with his knife: Ava may parry at Melee 50 or dodge at Fray 60 - 10
    state, _ = RULES.play(state, {"type": "attack", "combatant": "d", "target": "a", "weapon": 0}, SD)
    methods = {m["method"]: m for m in [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "defend"][0]
                                        ["methods"]}
    assert methods["melee"]["target"] == 50 and methods["melee"]["mods"] == []
    assert methods["fray"]["target"] == 50
    assert methods["fray"]["mods"] == [{"label": "own aggressive attack", "value": -10}]
    # against a shot it dodges with half Fray (30), less 10
    state, _ = RULES.play(state, {"type": "cancel_attack", "combatant": "d"}, SD)
    state, _ = RULES.play(state, {"type": "attack", "combatant": "d", "target": "a", "weapon": 1}, SD)
    ranged = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "defend"][0]["methods"]
    assert [(m["method"], m["target"]) for m in ranged] == [("fray", 20)]


# --- EP-10: aiming only with single shots ---------------------------------------------------------------


def three():
    """Ava against Dov and Eli, both 5 m away; her weapons: pistol (single/burst), vibroblade, rifle."""
    return start([ava(), dov(), dov(id="e", name="Eli", seat="se", x=1, y=6)], (1, 1, 2))


@pytest.mark.parametrize("careful", [False, True])
def test_an_aim_refuses_burst_or_full_automatic_fire_at_its_target(careful):
    state = three()
    state, _ = RULES.play(state, {"type": "aim", "combatant": "a", "target": "d", "complex": careful}, SA)
    if careful:  # the careful aim is ready on Ava's next turn
        state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
        state, _ = RULES.play(state, {"type": "end_turn", "combatant": "e"}, Viewer.player("se"))
        state, _ = RULES.play(state, {"type": "end_turn", "combatant": "d"}, SD, [1, 1, 2])
        assert state["active"] == "a"
    bonus = 30 if careful else 10
    with pytest.raises(IllegalDeclaration, match="only with single shots"):
        attack(state, mode="burst")
    with pytest.raises(IllegalDeclaration, match="only with single shots"):
        attack(state, weapon=2, mode="full_auto")
    atk = [t for t in EP.view_for(state, SA)["legal"] if t["type"] == "attack"][0]
    assert atk["aim"]["target"] == "d" and atk["aim"]["modes"] == ["single"] and atk["aim"]["bonus"] == bonus
    # a burst at someone else is fine, and the aim stays out of it
    burst, _ = RULES.play(state, {"type": "attack", "combatant": "a", "target": "e", "weapon": 0, "mode": "burst"}, SA)
    assert "aimed" not in {m["label"] for m in burst["pending"]["mods"]}
    single, _ = attack(state)
    assert {"label": "aimed", "value": bonus} in single["pending"]["mods"]
    # the modifier list itself never gives an aim to automatic fire
    a = state["combatants"]["a"]
    mods, _ = EP.attack_modifiers(state, "a", "d", a["weapons"][0], {"mode": "burst"})
    assert "aimed" not in {m["label"] for m in mods}


def test_a_combatant_without_a_gun_cannot_aim():
    state = start([ava(weapon1="claws", weapon2="none", weapon3="none"), dov()])
    assert "aim" not in [t["type"] for t in EP.view_for(state, SA)["legal"]]
    with pytest.raises(IllegalDeclaration, match="single shots"):
        RULES.play(state, {"type": "aim", "combatant": "a", "target": "d"}, SA)


# --- EP-8: past its own range a weapon takes the beyond-range penalties, even within 10 m ---------------


@pytest.mark.parametrize("metres,weapon_range,modifier", [
    (2, 4, 10), (4, 4, 0), (5, 4, -20), (8, 4, -20), (9, 4, -30), (10, 4, -30),
    (1.41, 1, -20), (2, 1, -20), (3, 1, -30), (2, 2, 10), (2.5, 2, -20),
    (10, 30, 0), (11, 30, -10), (31, 30, -20), (61, 30, -30),
])
def test_range_bands_past_a_short_weapons_range(metres, weapon_range, modifier):
    assert range_band(metres, weapon_range)["modifier"] == modifier
    beyond = metres > weapon_range
    assert range_band(metres, weapon_range)["band"].startswith("beyond range") is beyond


def test_a_short_ranged_weapon_beyond_its_range_in_a_real_attack():
    # a 4 m dart gun at Dov 5 m away: beyond its range (x2), -20, not "close +0"
    state = start([ava(custom_weapon="Dart gun", custom_dv="1d6", custom_range=4), dov()])
    weapon = len(state["combatants"]["a"]["weapons"]) - 1
    state, _ = attack(state, weapon=weapon)
    assert state["pending"]["mods"] == [{"label": "range: beyond range (×2)", "value": -20}]
    assert state["pending"]["target"] == 30
    row = EP.view_for(state, SA)["distances"]["to"]["d"]
    assert row["weapons"][str(weapon)]["modifier"] == -20


# --- superior failures ----------------------------------------------------------------------------------


def test_superior_failures_by_enumeration():
    for target in range(-10, 110):
        for roll in range(100):
            r = judge(roll, target)
            plain_failure = roll > target and roll != 0 and roll % 11 != 0
            expected = (2 if roll <= 33 else 1 if roll <= 66 else 0) if plain_failure else 0
            assert r["superior_failures"] == expected, (roll, target)
            assert r["superior_failures"] == 0 or r["superior"] == 0


@pytest.mark.parametrize("roll,target,words", [
    (70, 50, "failure"), (67, 50, "failure"), (65, 50, "superior failure"), (34, 20, "superior failure"),
    (32, 20, "two superior failures"), (5, 3, "two superior failures"), (55, 20, "critical failure"),
    (99, 120, "critical failure"), (40, 50, "superior success"),
])
def test_failure_degrees_in_words(roll, target, words):
    assert result_words(judge(roll, target)) == words
    assert superior_failure_degree(roll) == (2 if roll <= 33 else 1 if roll <= 66 else 0)


def test_a_failed_som_check_names_its_degree():
    # SOM 5: check 15, less the new wound = 5; roll 20 fails with two superior failures
    state = start([ava(), dov(som=5)])
    state, events = pistol_hit(state, 20, (5, 4), 20)
    failed = the(events, "check.failed")
    assert failed["data"]["check"]["superior_failures"] == 2
    assert "two superior failures, knocked down" in failed["text"]
    assert state["last_exchange"]["som_check"]["superior_failures"] == 2
    # and one superior failure: check 50, roll 60
    state = start([ava(), dov()])
    state, events = pistol_hit(state, 20, (5, 4), 60)
    assert ": superior failure, knocked down." in the(events, "check.failed")["text"]


def test_an_attack_records_the_degree_but_its_text_ignores_it():
    state = start([ava(), dov()])
    state, _ = attack(state)
    state, events = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [60, 10])
    rolled = the(events, "attack.rolled")
    assert rolled["data"]["attack"]["superior_failures"] == 1  # 60 over Guns 50
    assert "60 against 50: failure." in rolled["text"]


def test_softening_a_critical_failure_leaves_a_plain_failure_without_degree():
    state = start([ava(), dov()])
    state, _ = attack(state)
    state, _ = RULES.play(state, {"type": "defend", "combatant": "d", "method": "fray"}, SD, [10, 99])
    state, _ = RULES.play(state, {"type": "spend", "combatant": "d", "pool": "vigor", "use": "soften"}, SD)
    assert state["pending"]["rolls"]["defender"]["superior_failures"] == 0


def test_the_help_describes_the_changed_rules():
    text = " ".join(h["text"] for h in EP.help())
    for phrase in ("full move, more than the base move", "Fray dodges (not Melee parries)", "single shots only",
                   "the new ones", "knock it down whatever the roll", "superior failure",
                   "past the weapon's own range"):
        assert phrase in text, phrase
