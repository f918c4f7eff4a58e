"""Eclipse Phase 2e, issue 34: called shots name their aim and come off only with a superior success or a
critical (ruling EP-11), with scripted dice. Each test here fails on the code before: a called shot was a
plain true or false, bypassing armour its only aim, and nothing recorded whether it came off.

Ava (Guns 50) shoots Dov from 5 m with her medium pistol (2d10): −10 for the called shot gives 40; Dov
dodges with half his Fray 40, target 20, and rolls 90, a failure, so every attack roll up to 40 hits.
"""

from __future__ import annotations

import re

import pytest

from rules.core import visible_events
from rules.errors import IllegalDeclaration, InvalidDeclaration
from rules.systems.eclipse_phase import EclipsePhase
from tests.rules.harness import of_type
from tests.rules.test_eclipse_phase import GM, RULES, SA, SD, SPECTATOR, duel, exchange

EP = EclipsePhase()
PLAIN, SUPERIOR, CRITICAL = 20, 38, 11  # attack rolls against 40: a success, a superior success, a critical


def called(aim, **extra):
    return {"called_shot": aim, **extra}


def test_bypassing_armour_comes_off_with_a_superior_success():
    state = duel(dfn={"kinetic_natural": 6})
    state, events = exchange(state, SUPERIOR, 90, [4, 4, 2, 50], attack_kw=called("armour"))  # 50: the SOM check
    assert state["pending"] is None
    x = state["last_exchange"]
    assert x["called_shot"]["aim"] == "armour" and x["called_shot"]["came_off"] is True
    assert x["armour"] == 0 and x["through"] == 10
    (came,) = of_type(events, "called_shot.came_off")
    assert came["text"] == "Ava's called shot to bypass the armour comes off: the hit slips past Dov's armour."


def test_a_plain_success_is_an_ordinary_hit_and_says_the_called_shot_did_not_come_off():
    state = duel(dfn={"kinetic_natural": 6})
    state, events = exchange(state, PLAIN, 90, [4, 5], attack_kw=called("armour"))
    x = state["last_exchange"]
    assert x["result"] == "hit" and x["called_shot"]["came_off"] is False
    assert x["armour"] == 6 and x["through"] == 3  # the armour counts
    (failed,) = of_type(events, "called_shot.failed")
    assert failed["text"] == ("Ava's called shot to bypass the armour does not come off: without a superior "
                              "success it is an ordinary hit.")


def test_a_missed_called_shot_is_recorded_as_not_coming_off():
    state = duel()
    state, events = exchange(state, 60, 90, attack_kw=called("disarm"))
    x = state["last_exchange"]
    assert x["result"] == "miss" and x["called_shot"] == {
        "aim": "disarm", "label": "to disarm", "came_off": False, "spot": None,
        "text": "Ava's called shot to disarm does not come off."}
    assert of_type(events, "attack.missed")[0]["text"].endswith("Ava's called shot to disarm does not come off.")


@pytest.mark.parametrize("roll", [SUPERIOR, CRITICAL])
def test_disarm_drops_the_weapon_and_deals_no_damage(roll):
    state = duel()
    # no damage dice are rolled: the scripted dice hold only the two d100
    state, events = exchange(state, roll, 90, attack_kw=called("disarm"))
    dov = state["combatants"]["d"]
    assert dov["damage"] == 0 and dov["wounds"] == 0 and not of_type(events, "damage.dealt")
    assert state["last_exchange"]["called_shot"]["came_off"] is True
    assert state["last_exchange"]["called_shot"]["weapon"] == "Combat knife"
    assert dov["weapons"][0]["dropped_at"] == [dov["x"], dov["y"]]
    assert of_type(events, "called_shot.came_off")[0]["text"] == (
        "Ava's called shot to disarm comes off: Dov drops the Combat knife, and the hit deals no damage.")
    # his only blade is gone: he still has his fists, and every page sees the knife on the ground
    assert [w["id"] for w in dov["weapons"]] == ["knife", "unarmed"]
    assert "Combat knife dropped" in next(c for c in EP.view_for(state, SPECTATOR)["combatants"]
                                          if c["id"] == "d")["markers"]


def test_a_disarmed_combatant_fights_on_with_its_fists_or_spends_its_action_picking_the_weapon_up():
    state = duel(gap=1)  # next to each other: Dov could stab Ava
    state, _ = exchange(state, SUPERIOR, 90, attack_kw=called("disarm"))
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    assert state["active"] == "d"
    with pytest.raises(IllegalDeclaration, match="lies on the ground"):
        RULES.play(state, {"type": "attack", "combatant": "d", "target": "a", "weapon": 0}, SD)
    turn = [t for t in EP.view_for(state, SD)["legal"] if t["combatant"] == "d"]
    pick = next(t for t in turn if t["type"] == "pick_up")
    assert pick["weapon"] == 0 and pick["label"] == "Pick up the Combat knife (uses the action)"
    attack = next(t for t in turn if t["type"] == "attack")
    assert attack["weapons"][0]["dropped"] and not attack["weapons"][0]["preview"]
    assert attack["weapons"][1]["preview"]  # the fists reach Ava
    # picking the knife up is the turn's complex action: no attack after it
    state, events = RULES.play(state, {"type": "pick_up", "combatant": "d", "weapon": 0}, SD)
    assert events[0]["text"] == "Dov picks up the Combat knife."
    assert "dropped_at" not in state["combatants"]["d"]["weapons"][0]
    with pytest.raises(IllegalDeclaration, match="complex action"):
        RULES.play(state, {"type": "attack", "combatant": "d", "target": "a", "weapon": 0}, SD)
    with pytest.raises(IllegalDeclaration, match="no such weapon on the ground"):
        RULES.play(state, {"type": "pick_up", "combatant": "d", "weapon": 0}, SD)


def test_a_weapon_out_of_reach_must_be_walked_to():
    state = duel()
    state, _ = exchange(state, SUPERIOR, 90, attack_kw=called("disarm"))
    state, _ = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA)
    state, _ = RULES.play(state, {"type": "move", "combatant": "d", "x": 9, "y": 1}, SD)
    assert not [t for t in EP.view_for(state, SD)["legal"] if t["type"] == "pick_up"]
    with pytest.raises(IllegalDeclaration, match="out of Dov's reach"):
        RULES.play(state, {"type": "pick_up", "combatant": "d", "weapon": 0}, SD)


def test_disarm_knocks_away_the_weapon_in_hand_never_a_part_of_the_body():
    assert EP.held_weapon({"weapons": [{"id": "claws"}, {"id": "medium_pistol"}, {"id": "knife"}]}) == 1
    assert EP.held_weapon({"held": 2, "weapons": [{"id": "claws"}, {"id": "medium_pistol"}, {"id": "knife"}]}) == 2
    assert EP.held_weapon({"weapons": [{"id": "claws"}, {"id": "unarmed"}]}) is None
    state = duel(dfn={"weapon1": "claws"})
    with pytest.raises(IllegalDeclaration, match="holds no weapon"):
        RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, "called_shot": "disarm"}, SA)
    # the weapon a combatant attacks with is the one in its hand
    state = duel()
    state, _ = RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 2}, SA)
    assert EP.held_weapon(state["combatants"]["a"]) == 2


@pytest.mark.parametrize("roll", [SUPERIOR, CRITICAL])
def test_a_named_spot_deals_its_damage_and_the_log_names_the_spot(roll):
    state = duel(dfn={"kinetic_natural": 6})
    faces = [4, 4, 2] if roll == SUPERIOR else [4, 4, 50]  # a critical's 16 − 6 wounds him: 50 is his SOM check
    state, events = exchange(state, roll, 90, faces, attack_kw=called("spot", called_spot="  left   eye "))
    x = state["last_exchange"]
    assert x["called_shot"]["came_off"] is True and x["called_shot"]["spot"] == "left eye"
    assert x["armour"] == 6 and x["through"] == (10 if roll == SUPERIOR else 16) - 6
    assert of_type(events, "called_shot.came_off")[0]["text"] == (
        "Ava's called shot at “left eye” comes off: the hit lands on Dov right there, and the GM rules what "
        "that does.")


def test_the_declaration_names_the_aim_and_refuses_bad_ones():
    state = duel()
    new, events = RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0,
                               "called_shot": "spot", "called_spot": "gun hand"}, SA)
    assert events[0]["text"].startswith("Ava attacks Dov with the Medium pistol, a called shot at “gun hand”: "
                                        "target number 40")
    assert EP.view_for(new, SPECTATOR)["pending"]["called_label"] == "at “gun hand”"
    for bad, why in (({"called_shot": "knees"}, "called_shot"), ({"called_shot": "spot"}, "called_spot"),
                     ({"called_shot": "spot", "called_spot": "x" * 31}, "called_spot"),
                     ({"called_shot": "spot", "called_spot": "eye\x00"}, "called_spot"),
                     ({"called_shot": 3}, "called_shot")):
        with pytest.raises(InvalidDeclaration, match=why):
            RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0, **bad}, SA)


def test_the_called_shot_words_carry_no_hidden_number():
    state = duel(dfn={"kinetic_natural": 6, "controller": "gm", "seat": None})
    for aim, extra, faces in (("armour", {}, [1, 1, 1]), ("spot", {"called_spot": "eyes"}, [1, 1, 1]),
                              ("disarm", {}, [])):
        after, _ = RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0,
                                "called_shot": aim, **extra}, SA)
        after, events = RULES.play(after, {"type": "defend", "combatant": "d", "method": "fray"}, GM, [SUPERIOR, 90])
        while after["pending"] is not None:
            p = after["pending"]
            side = next(s for s, post in p["post"].items() if not post["accepted"])
            rest = all(post["accepted"] for s, post in p["post"].items() if s != side)
            after, more = RULES.play(after, {"type": "accept", "combatant": p[side]}, GM, faces if rest else ())
            events += more
        seen = [e for e in visible_events(events, SPECTATOR, after) if e["type"].startswith("called_shot.")]
        assert len(seen) == 1 and not re.search(r"\d", seen[0]["text"]), seen


def test_a_computer_played_combatant_takes_its_weapon_back_when_it_lies_within_reach():
    state = duel(dfn={"controller": "computer", "seat": None}, gap=1)
    state, _ = RULES.play(state, {"type": "attack", "combatant": "a", "target": "d", "weapon": 0,
                            "called_shot": "disarm"}, SA, [SUPERIOR, 90])  # the computer dodges at once
    state, _ = RULES.play(state, {"type": "accept", "combatant": "a"}, SA)
    assert state["combatants"]["d"]["weapons"][0]["dropped_at"]
    state, events = RULES.play(state, {"type": "end_turn", "combatant": "a"}, SA, [3, 3])  # the next turn's initiative
    assert "Dov picks up the Combat knife." in [e["text"] for e in events]
    assert "dropped_at" not in state["combatants"]["d"]["weapons"][0] and state["round"] == 2
