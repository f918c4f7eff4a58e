"""Survivors carry on (issue 18 §5): each system's end state written back into its lineup, and the
next battle set up from that lineup starts where the last one stopped. Battles fought with
scripted dice (the rule texts' worked examples where there is one)."""

from __future__ import annotations

from typing import Any

import pytest

from rules import SeededDice, Viewer, get_system
from rules.carry_over import carry_over, parse_conditions, parse_effects
from rules.errors import InvalidDeclaration
from tests.rules import test_adnd as adnd_tests
from tests.rules import test_battles_balances as bb_tests
from tests.rules import test_eclipse_phase as ep_tests
from tests.rules import test_phantoms_bane as pb_tests
from tests.rules.harness import Rules

GM = Viewer.gm()


def next_battle(system_id: str, lineup: list[dict[str, Any]], options: dict[str, Any] | None = None,
                faces: list[int] | None = None) -> dict[str, Any]:
    """The carried lineup through the system's own validators (as a roster load does), then set up
    rolling exactly ``faces``."""
    rules = Rules(system_id)
    cleaned = rules.system.validate_draft(lineup)
    state, _ = rules.start(rules.system.validate_lineup(cleaned), options, faces=faces or [])
    return state


def ended(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "status": "ended"}


# --- Phantom's Bane: health, weakened attributes, worn and destroyed gear ----------------------------


def pb_lineup() -> list[dict[str, Any]]:
    return [{**pb_tests.PRESETS["Jharek"], "id": "j", "side": "A", "controller": "gm", "seat": None},
            {**pb_tests.PRESETS["Wild Monster"], "id": "m", "side": "B", "controller": "gm", "seat": None}]


def test_phantoms_bane_carries_health_weakening_and_worn_gear() -> None:
    lineup = pb_lineup()
    state, _ = Rules("phantoms-bane").start(lineup)
    # the worked example's first three turns: Jharek 2/7 Health, Defence 4/5, axe +2, armour +4/5
    state, _ = pb_tests.turn(state, {"j": "attack", "m": "attack"}, [1, 3, 5, 6, 1])
    state, _ = pb_tests.turn(state, {"j": "defend", "m": "press"}, [2, 6, 5, 3])
    state, _ = pb_tests.turn(state, {"j": "defend", "m": "press"}, [3, 3, 5, 2])
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == []
    j, m = entries
    assert (j["health"], j["health_max"], j["defence"], j["defence_max"]) == (2, 7, 4, 5)
    assert (j["offence"], j["offence_max"]) == (4, 0)  # not weakened: no separate full value
    # the armour keeps its +5 (it counts +4 while Defence is 4: the cap, not wear)
    assert (j["weapon_name"], j["weapon_bonus"], j["armour_bonus"]) == ("Hand Axe", 2, 5)
    assert (m["health"], m["defence"], m["defence_max"]) == (2, 6, 7)
    new = next_battle("phantoms-bane", entries)["combatants"]
    assert (new["j"]["health"], new["j"]["health_max"], new["j"]["defence"], new["j"]["defence_max"]) == (2, 7, 4, 5)
    assert new["j"]["weapon"]["bonus"] == 2 and new["j"]["armour"]["bonus"] == 5
    assert (new["m"]["health"], new["m"]["defence"], new["m"]["defence_max"]) == (2, 6, 7)
    view = get_system("phantoms-bane").view_for(next_battle("phantoms-bane", entries), GM)["combatants"]["j"]
    assert view["armour_label"] == "+4/5 (Leather Armour)"


def test_phantoms_bane_destroyed_gear_is_gone_and_the_defeated_are_left_out() -> None:
    lineup = pb_lineup()
    state, _ = Rules("phantoms-bane").start(lineup)
    state["combatants"]["j"]["weapon"] = None
    state["combatants"]["j"]["destroyed"].append({"item": "weapon", "name": "Hand Axe", "max_bonus": 3, "turn": 1})
    state["combatants"]["m"].update(health=-1, defeated=True)
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == ["Wild Monster"] and [e["id"] for e in entries] == ["j"]
    assert entries[0]["weapon_name"] == "" and entries[0]["weapon_bonus"] == 0
    state = next_battle("phantoms-bane", entries + [pb_lineup()[1]])
    assert state["combatants"]["j"]["weapon"] is None


# --- Eclipse Phase: damage, wounds and conditions; pools refill ----------------------------------------


def ep_lineup() -> list[dict[str, Any]]:
    a = ep_tests.base(id="a", name="Ava", side="A", controller="gm", seat=None, initiative=20, guns=50, melee=50,
                      fray=50, durability=40, flex=1, vigor=1, x=1, y=1, weapon1="medium_pistol", weapon2="vibroblade",
                      weapon3="assault_rifle")
    d = ep_tests.base(id="d", name="Dov", side="B", controller="gm", seat=None, initiative=0, guns=40, melee=40,
                      fray=40, durability=40, flex=1, vigor=1, x=6, y=1, armour="none", weapon1="knife",
                      weapon2="none", weapon3="none")
    return [a, d]


def test_eclipse_phase_carries_damage_wounds_and_knock_down_and_refills_pools() -> None:
    state = ep_tests.duel()
    state["combatants"]["d"]["wounds"] = 1
    state["combatants"]["a"]["pools"] = {"flex": 0, "vigor": 0}  # spent in the fight
    # a plain hit: 2d10 = 9 + 1 = 10 damage, 1 wound; the SOM check (roll 51 against 40) knocks Dov down
    state, _ = ep_tests.exchange(state, 20, 90, [9, 1, 51])
    d = state["combatants"]["d"]
    assert (d["damage"], d["wounds"], d["conditions"]) == (10, 2, ["prone"])
    entries, left_out = carry_over(ended(state), ep_lineup())
    assert left_out == []
    assert (entries[1]["damage"], entries[1]["wounds"], entries[1]["conditions"]) == (10, 2, "prone")
    new = next_battle("eclipse-phase", entries, faces=[1, 1])["combatants"]
    assert (new["d"]["damage"], new["d"]["wounds"], new["d"]["conditions"], new["d"]["state"]) == (10, 2, ["prone"], "ok")
    assert new["a"]["pools"] == {"flex": 1, "vigor": 1}  # refilled


def test_eclipse_phase_knocked_out_survivor_stays_out_and_the_dead_are_left_out() -> None:
    state = ep_tests.duel()
    # a critical hit knocks Dov out (worked in test_eclipse_phase: 4 wounds, prone and unconscious)
    state, _ = ep_tests.exchange(state, 22, 90, [9, 8, 80])
    # only those still standing carry on, unless the GM asks for the fallen who live too
    entries, left_out = carry_over(state, ep_lineup())
    assert left_out == ["Dov"] and [e["id"] for e in entries] == ["a"]
    entries, left_out = carry_over(state, ep_lineup(), fallen=True)
    assert left_out == [] and entries[1]["conditions"] == "prone, unconscious"
    new = next_battle("eclipse-phase", entries, faces=[1])["combatants"]["d"]  # (Dov, out, rolls no initiative)
    assert new["conditions"] == ["prone", "unconscious"] and new["wounds"] == 4 and new["damage"] == 34
    state["combatants"]["d"].update(state="dead", damage=80)
    entries, left_out = carry_over(state, ep_lineup(), fallen=True)
    assert left_out == ["Dov"] and [e["id"] for e in entries] == ["a"]  # the dead never


def test_eclipse_phase_conditions_field_takes_only_lasting_conditions() -> None:
    system = get_system("eclipse-phase")
    assert parse_conditions("Knocked down, unconscious") == ["prone", "unconscious"]
    with pytest.raises(InvalidDeclaration, match="surprised"):
        system.validate_combatant({**ep_lineup()[0], "conditions": "surprised"})
    assert system.validate_combatant({**ep_lineup()[0], "conditions": "down"})["conditions"] == "prone"


# --- AD&D: hit points ---------------------------------------------------------------------------------


def test_adnd_carries_hit_points() -> None:
    lineup = [adnd_tests.fighter("fig", hp=10, ac=5),
              adnd_tests.fighter("orc", "B", hp=5, ac=6, thac0=19, weapon="spear", dies_at_zero=True)]
    state = adnd_tests.new_battle(lineup)
    state, _ = adnd_tests.declare(state, "fig", "melee", "orc")
    state, _ = adnd_tests.declare(state, "orc", "melee", "fig")
    state, _ = adnd_tests.run(state, "roll_initiative", [2, 4])
    state, _ = adnd_tests.run(state, "resolve_next", [14, 3])  # the orc hits the fighter for 3 (10 to 7)
    state, _ = adnd_tests.run(state, "resolve_next", [13])  # the fighter misses
    assert state["combatants"]["fig"]["hp"] == 7
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == [] and (entries[0]["hp"], entries[0]["hp_max"]) == (7, 10)
    assert (entries[1]["hp"], entries[1]["hp_max"]) == (5, 0)
    new = adnd_tests.new_battle(get_system("adnd").validate_draft(entries))["combatants"]
    assert (new["fig"]["hp"], new["fig"]["hp_max"], new["fig"]["condition"]) == (7, 10, "ok")


def test_adnd_a_character_below_zero_stays_down_and_the_dead_are_left_out() -> None:
    lineup = [adnd_tests.fighter("fig", hp=10), adnd_tests.fighter("cleric", hp=8),
              adnd_tests.fighter("orc", "B", hp=5, dies_at_zero=True), adnd_tests.fighter("gnoll", "B", hp=9)]
    state = adnd_tests.new_battle(lineup)
    for cid, hp in (("fig", -3), ("orc", 0), ("gnoll", -10)):
        state, _ = adnd_tests.run(state, "set_hp", combatant=cid, hp=hp)
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == ["Fig", "Orc", "Gnoll"] and [e["id"] for e in entries] == ["cleric"]  # only who stands
    entries, left_out = carry_over(ended(state), lineup, fallen=True)
    assert left_out == ["Orc", "Gnoll"]
    assert [(e["id"], e["hp"], e["hp_max"]) for e in entries] == [("fig", -3, 10), ("cleric", 8, 0)]
    entries.append(adnd_tests.fighter("rat", "B", hp=2))
    new = adnd_tests.new_battle(get_system("adnd").validate_draft(entries))["combatants"]
    assert (new["fig"]["hp"], new["fig"]["condition"], new["fig"]["stable"]) == (-3, "down", True)
    with pytest.raises(InvalidDeclaration):
        get_system("adnd").validate_combatant({**lineup[0], "hp": -10})


# --- Battles&Balances: wounds, armour wear, effects; action points reset ---------------------------------


def bb_lineup(**overrides: dict[str, Any]) -> list[dict[str, Any]]:
    prince = {**bb_tests.PRINCE, "id": "vasyl", "side": "A", "x": 2, "y": 2, "controller": "gm", "seat": None}
    trooper = {**bb_tests.SHOCK_TROOPER, "id": "trooper", "side": "B", "x": 3, "y": 2, "controller": "gm", "seat": None}
    prince.update(overrides.get("prince", {}))
    trooper.update(overrides.get("trooper", {}))
    return [prince, trooper]


def test_battles_and_balances_carries_wounds_wear_and_poison_and_resets_action_points() -> None:
    options = {"persistent_effects": True, "armour_wear": True}
    lineup = bb_lineup(prince={"weapon_effect": "poison"}, trooper={"stamina": 20})
    bb = Rules("battles-and-balances")
    state, _ = bb.start(lineup, options)
    # the worked example's blows: the prince poisons the trooper, the trooper answers with 13 (8 wounds)
    state, _ = bb.play(state, bb_tests.attack("vasyl", "trooper"), faces=[1, 7, 8, 3, 12, 4, 5])
    state, _ = bb.play(state, bb_tests.attack("trooper", "vasyl"), faces=[9, 7, 6, 2])
    prince, trooper = state["combatants"]["vasyl"], state["combatants"]["trooper"]
    assert prince["wounds"] == 8 and trooper["effects"] == {"poison": 1} and prince["ap"] < prince["ap_max"]
    wear = prince["armour_wear"]
    assert wear > 0
    state["combatants"]["trooper"]["curses"] = 1
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == []
    assert (entries[0]["wounds"], entries[0]["armour_wear"]) == (8, wear)
    assert (entries[1]["wounds"], entries[1]["effects"], entries[1]["curses"]) == (trooper["wounds"], "poison 1", 1)
    new = next_battle("battles-and-balances", entries, options)["combatants"]
    assert (new["vasyl"]["wounds"], new["vasyl"]["armour_wear"], new["vasyl"]["ap"]) == (8, wear, new["vasyl"]["ap_max"])
    assert new["trooper"]["effects"] == {"poison": 1} and new["trooper"]["curses"] == 1
    assert not new["vasyl"]["defeated"]


def test_battles_and_balances_a_defeated_character_is_left_out_or_carries_its_wounds_and_starts_out_of_play() -> None:
    lineup = bb_lineup()
    state, _ = Rules("battles-and-balances").start(lineup)
    state["combatants"]["vasyl"].update(wounds=20, defeated=True)
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == ["Prince Vasyl of Ostgrund"] and len(entries) == 1  # the defeated, unless asked for
    entries, left_out = carry_over(ended(state), lineup, fallen=True)
    assert left_out == [] and entries[0]["wounds"] == 20
    new = next_battle("battles-and-balances", entries)["combatants"]
    assert new["vasyl"]["defeated"] and new["vasyl"]["wounds"] == 20


def test_effects_field_reads_names_and_marks() -> None:
    assert parse_effects("Poison 2, fire") == {"poison": 2, "fire": 1}
    with pytest.raises(InvalidDeclaration):
        get_system("battles-and-balances").validate_combatant({**bb_lineup()[0], "effects": "poison 500"})


# --- Olympia: the men left per unit, and noble health -------------------------------------------------


def test_olympia_carries_the_men_left_and_noble_health() -> None:
    from webapp.cli import demo_lineup

    system = get_system("olympia")
    lineup = system.validate_lineup(demo_lineup("olympia"))
    olympia = Rules(system)
    state, _ = olympia.start(lineup, dice=SeededDice("olympia-carry"))
    state, _ = olympia.play(state, {"type": "begin"}, dice=SeededDice("begin"))
    state, _ = olympia.play(state, {"type": "step", "by": "battle"}, dice=SeededDice("fight"))
    assert state["status"] == "ended"
    c3 = state["combatants"]["c3"]
    c3.update(health=60, state="wounded")
    state["combatants"]["c4"]["state"] = "dead"
    entries, left_out = carry_over(state, lineup)
    assert left_out == ["Knight commander"]
    for entry in entries:
        troops = state["combatants"][entry["id"]]["troops"]
        start = state["combatants"][entry["id"]]["start_troops"]
        for kind in start:
            assert entry[kind] == troops.get(kind, 0)
    assert next(e for e in entries if e["id"] == "c3")["health"] == 60
    entries.append(lineup[3])
    new = next_battle("olympia", entries)["combatants"]
    for cid in ("c1", "c2", "c3"):
        assert new[cid]["troops"] == {k: n for k, n in state["combatants"][cid]["troops"].items() if n > 0}
    assert new["c3"]["health"] == 60


def test_adnd_the_fled_and_the_surrendered_live_and_carry_on() -> None:
    lineup = [adnd_tests.fighter("fig", hp=10), adnd_tests.fighter("orc", "B", hp=5), adnd_tests.fighter("gnoll", "B", hp=9)]
    state = adnd_tests.new_battle(lineup)
    state["combatants"]["orc"]["condition"] = "fled"
    state["combatants"]["gnoll"]["condition"] = "surrendered"
    entries, left_out = carry_over(ended(state), lineup)
    assert left_out == [] and [e["id"] for e in entries] == ["fig", "orc", "gnoll"]


def test_a_lineup_changed_since_the_battle_began_is_refused() -> None:
    lineup = pb_lineup()
    state, _ = Rules("phantoms-bane").start(lineup)
    with pytest.raises(InvalidDeclaration, match="lineup has changed"):
        carry_over(state, [lineup[0]])


@pytest.mark.parametrize("system_id", ["phantoms-bane", "eclipse-phase", "adnd", "battles-and-balances", "olympia"])
def test_each_systems_help_says_what_carries_over(system_id: str) -> None:
    section = next(h for h in get_system(system_id).help() if h["title"] == "Survivors carry on")
    assert "left out" in section["text"] or "keeps its wounds" in section["text"]
