"""AD&D 1e with the Demon Idol procedure: tables, declarations, ordering, charges, bleeding, visibility."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import engine
from rules.core import Viewer, visible_events
from rules.dice import ScriptedDice, SeededDice
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.registry import get_system
from rules.systems.adnd import AdndDemonIdol
from rules.systems.adnd.data import (
    arrival_segment,
    charge_per_segment_feet,
    delay_segments,
    morale_score,
    reaction_band,
    surprise_result,
)
from tests.rules.harness import Rules, texts

S = AdndDemonIdol()
RULES = Rules(S)
GM = Viewer.gm()
SPECTATOR = Viewer.spectator()


def fighter(cid: str, side: str = "A", **kw: Any) -> dict[str, Any]:
    base = {"id": cid, "name": cid.capitalize(), "side": side, "hp": 10, "ac": 5, "thac0": 20,
            "weapon": "long_sword", "move": 12}
    base.update(kw)
    return base


def new_battle(lineup: list[dict[str, Any]], distance: int = 1, **options: Any) -> dict[str, Any]:
    """A battle with the encounter checks skipped: round 1 declarations are open."""
    state, _ = RULES.start(lineup, options)
    for kind in ("check_reaction", "check_surprise"):
        state, _ = RULES.play(state, {"type": kind, "skip": True, "note": "known"})
    state, _ = RULES.play(state, {"type": "check_distance", "skip": True, "distance": distance})
    state, _ = RULES.play(state, {"type": "check_morale", "skip": True})
    return state


def put(state: dict[str, Any], cid: str, x: int, y: int) -> dict[str, Any]:
    return RULES.play(state, {"type": "move", "combatant": cid, "x": x, "y": y})[0]


def declare(state: dict[str, Any], cid: str, kind: str, target: str | None = None, viewer: Viewer = GM,
            dice: list[int] | None = None, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    d = {"type": "declare", "combatant": cid, "kind": kind, **kw}
    if target:
        d["target"] = target
    return RULES.play(state, d, viewer, dice or [])


def run(state: dict[str, Any], kind: str, dice: list[int] | None = None, viewer: Viewer = GM,
        **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return RULES.play(state, {"type": kind, **kw}, viewer, dice or [])


def groups(state: dict[str, Any]) -> list[list[str]]:
    """The resolution order: each inner list resolves at the same moment."""
    out: list[list[str]] = []
    last = None
    for a in sorted(state["queue"], key=lambda a: (tuple(a["key"]), a["n"])):
        if a["status"] == "lost":
            continue
        if a["key"] != last:
            out.append([])
            last = a["key"]
        out[-1].append(a["combatant"])
    return out


# --- tables ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("total", "band"), [
    (1, "violently_hostile"), (5, "violently_hostile"), (6, "hostile"), (25, "hostile"),
    (26, "uncertain_negative"), (45, "uncertain_negative"), (46, "neutral"), (55, "neutral"),
    (56, "uncertain_positive"), (75, "uncertain_positive"), (76, "friendly"), (95, "friendly"),
    (96, "enthusiastic"), (130, "enthusiastic"), (-10, "violently_hostile"),
])
def test_reaction_bands(total: int, band: str) -> None:
    assert reaction_band(total)[0] == band


def test_reaction_check_adds_charisma_adjustment_and_moves_on() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    state, events = run(state, "check_reaction", [50], adjustment=10)
    assert state["encounter"]["reaction"]["total"] == 60
    assert state["encounter"]["reaction"]["band"] == "uncertain_positive"
    assert events[0]["rolls"][0]["faces"] == [50]
    assert events[0]["text"] == "Reaction roll 50+10 = 60: unsure, but leaning towards friendliness."
    assert state["phase"] == "surprise"


def test_private_reaction_roll_is_hidden_from_players() -> None:
    state, _ = RULES.start([fighter("a", controller="seat", seat="s1"), fighter("b", "B")])
    state, events = run(state, "check_reaction", [3], private=True)
    assert visible_events(events, Viewer.player("s1"), state) == []
    assert visible_events(events, GM, state)[0]["data"]["band"] == "violently_hostile"


@pytest.mark.parametrize(("faces", "expected"), [
    ({"A": 3, "B": 6}, (None, 0)),
    ({"A": 1, "B": 4}, ("A", 1)),
    ({"A": 5, "B": 2}, ("B", 2)),
    ({"A": 1, "B": 2}, ("B", 1)),
    ({"A": 2, "B": 1}, ("A", 1)),
    ({"A": 2, "B": 2}, (None, 0)),
    ({"A": 1, "B": 1}, (None, 0)),
])
def test_surprise_table(faces: dict[str, int], expected: tuple[str | None, int]) -> None:
    assert surprise_result(faces) == expected


def test_surprise_check_rolls_a_d6_per_side() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    state, _ = run(state, "check_reaction", skip=True)
    state, events = run(state, "check_surprise", [2, 6])
    assert state["surprise"]["side"] == "A" and state["surprise"]["segments"] == 2
    assert events[0]["text"] == ("Surprise: side A rolled 2, side B rolled 6; side A is surprised for 2 segments, "
                                 "so side B acts alone first.")


def test_surprise_check_can_leave_a_side_out() -> None:
    """A side that detected the other first cannot be surprised: only the other side rolls."""
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    state, _ = run(state, "check_reaction", skip=True)
    state, events = run(state, "check_surprise", [1], sides=["B"])
    assert state["surprise"]["side"] == "B" and state["surprise"]["segments"] == 1
    assert len(events[0]["rolls"]) == 1


def _to_distance(dice: list[int], surprise: list[int], scale: str = "indoors") -> dict[str, Any]:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")], {"scale": scale})
    state, _ = run(state, "check_reaction", skip=True)
    state, _ = run(state, "check_surprise", surprise)
    state, _ = run(state, "check_distance", dice)
    return state


def test_distance_indoors_is_d6_plus_4() -> None:
    state = _to_distance([3], [4, 5])
    assert state["encounter"]["distance"] == 7
    a, b = state["combatants"]["a"], state["combatants"]["b"]
    assert abs(a["y"] - b["y"]) - 1 == 7  # base to base, in squares of one inch


def test_distance_indoors_with_surprise_is_1_to_3() -> None:
    state = _to_distance([2], [1, 5])
    assert state["encounter"]["distance"] == 2


def test_distance_outdoors_is_6d4_less_the_surprise_die() -> None:
    state = _to_distance([4, 4, 3, 2, 1, 4], [5, 2], scale="outdoors")
    assert state["encounter"]["distance"] == 18 - 2
    assert state["grid"]["height"] >= 20


def test_distance_skipped_with_known_distance() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    state, _ = run(state, "check_reaction", skip=True, note="they are friends of the party")
    state, _ = run(state, "check_surprise", skip=True)
    state, events = run(state, "check_distance", skip=True, distance=4, note="the doorway")
    assert state["encounter"]["distance"] == 4
    assert events[0]["text"] == "The DM skips the distance check (the doorway)."
    steps = {s["key"]: s for s in S.view_for(state, GM)["procedure"]["steps"]}
    assert steps["reaction"]["state"] == "skipped" and steps["reaction"]["note"] == "they are friends of the party"
    assert steps["morale"]["state"] == "current"


def test_morale_score_formula() -> None:
    assert morale_score(1) == 50
    assert morale_score(3, 1) == 50 + 10 + 1  # a 3+1 Hit Dice monster
    assert morale_score(2) == 55
    assert morale_score(4, 4, -10) == 59


def test_opening_morale_failure_by_16_to_30_makes_the_group_retreat() -> None:
    state, _ = RULES.start([fighter("a"), fighter("gob", "B", hp=4, hit_dice=1), fighter("gob2", "B", hp=4)])
    for kind in ("check_reaction", "check_surprise"):
        state, _ = run(state, kind, skip=True)
    state, _ = run(state, "check_distance", skip=True, distance=3)
    # score 50 (1 Hit Die); the roll 70 + 5 = 75 fails by 25: they disengage and retreat
    state, events = run(state, "check_morale", [70], side="B", modifier=5)
    assert "Gob fails by 25 (50%) and disengages to retreat" in events[0]["text"]
    assert state["declarations"]["gob"]["kind"] == "flee"
    assert state["phase"] == "declarations"


def test_morale_holds_on_equal_score() -> None:
    state, _ = RULES.start([fighter("a"), fighter("gob", "B", hp=4)])
    for kind in ("check_reaction", "check_surprise"):
        state, _ = run(state, kind, skip=True)
    state, _ = run(state, "check_distance", skip=True, distance=3)
    state, events = run(state, "check_morale", [50], side="B")
    assert events[0]["data"]["failed"] == []


# --- declarations and the real-time clock ------------------------------------------------------

def party_battle() -> dict[str, Any]:
    return new_battle([
        fighter("aldo", controller="seat", seat="s1"),
        fighter("mira", controller="seat", seat="s2", weapon="dagger", caster=True, missile="darts", hp=4),
        fighter("orc", "B", weapon="spear", dies_at_zero=True, hp=5),
    ], distance=1)


def test_declaration_order_is_rolled_over_the_roster_after_the_dm_notes() -> None:
    state = party_battle()
    with pytest.raises(IllegalDeclaration, match="first note the declarations"):
        run(state, "roll_order", [1], at=0.0)
    state, events = declare(state, "orc", "melee", "aldo")
    assert [e["visibility"] for e in events] == ["gm", "public"]
    state, events = run(state, "roll_order", [2], at=100.0)
    assert state["decl"]["order"] == ["mira", "aldo"]
    assert events[0]["text"] == "Roll 2 on the roster: Mira, then Aldo declare in that order."
    with pytest.raises(IllegalDeclaration, match="Mira's turn"):
        declare(state, "aldo", "melee", "orc", viewer=Viewer.player("s1"), at=101.0)


def test_six_second_rule_with_a_pausable_clock() -> None:
    state = party_battle()
    state, _ = declare(state, "orc", "melee", "aldo")
    state, _ = run(state, "roll_order", [1], at=100.0)  # Aldo first, his clock opens at 100
    view = S.view_for(state, Viewer.player("s1"))
    assert view["clock"]["open_at"] == 100.0 and view["clock"]["combatant"] == "aldo"
    assert view["legal"][0]["type"] == "declare" and view["legal"][0]["clock"]["seconds_per_segment"] == 6
    assert S.view_for(state, Viewer.player("s2"))["legal"] == []
    state, _ = run(state, "pause_clock", at=103.0)  # a question to the DM
    # (the combatant by name: a seat's id means nothing to the table)
    assert S.view_for(state, GM)["procedure"]["pending"] == ["Waiting for Aldo to declare (clock paused)."]
    state, _ = run(state, "resume_clock", at=110.0)
    assert S.view_for(state, Viewer.player("s1"))["procedure"]["pending"] == ["Waiting for Aldo to declare."]
    clock = S.view_for(state, Viewer.player("s1"))["clock"]
    assert (clock["server_time"], clock["paused_total"], clock["delay_at_server_time"]) == (110.0, 7.0, 0)
    state, events = declare(state, "aldo", "melee", "orc", viewer=Viewer.player("s1"), at=115.9)
    # 3 s before the pause and 5.9 s after: 8.9 s, one full 6 seconds
    assert state["declarations"]["aldo"]["delay"] == 1
    assert events[0]["text"] == "Aldo declares: [G] attack Orc after 9 s, so 1 segment late."
    # Mira's window opens when Aldo declared
    state, _ = declare(state, "mira", "missile", "orc", viewer=Viewer.player("s2"), at=127.9)
    assert state["declarations"]["mira"]["delay"] == 2
    assert state["phase"] == "initiative"


def test_delay_segments() -> None:
    assert [delay_segments(s) for s in (0, 5.99, 6, 11.9, 12, 59.9, 60)] == [0, 0, 1, 1, 2, 9, 10]


def test_declarations_are_locked_and_only_own_combatants() -> None:
    state = party_battle()
    state, _ = declare(state, "orc", "melee", "aldo")
    with pytest.raises(IllegalDeclaration, match="cannot be changed"):
        declare(state, "orc", "await")
    state, _ = run(state, "roll_order", [1], at=0.0)
    with pytest.raises(NotPermitted):
        S.authorize(state, {"type": "declare", "combatant": "aldo", "kind": "await"}, Viewer.player("s2"))
    with pytest.raises(NotPermitted):
        S.authorize(state, {"type": "roll_initiative"}, Viewer.player("s1"))
    with pytest.raises(IllegalDeclaration, match="only the DM"):  # the system's own refusal, past authorize
        S.apply(state, {"type": "roll_initiative"}, Viewer.player("s1"), ScriptedDice([]))


@pytest.mark.parametrize(("decl", "message"), [
    ({"kind": "dance"}, "kind must be one of"),
    ({"kind": "melee"}, "needs a target"),
    ({"kind": "melee", "target": "nobody"}, "needs a target"),
    ({"kind": "spell", "casting_time": 3}, "does not cast spells"),
    ({"kind": "missile", "target": "aldo"}, "same side"),
    ({"kind": "custom", "segments": 0}, "segments must be between 1 and 10"),
    ({"kind": "await", "note": 5}, "note must be text"),
])
def test_malformed_or_illegal_declarations(decl: dict[str, Any], message: str) -> None:
    state = new_battle([fighter("aldo"), fighter("bert"), fighter("orc", "B")])
    with pytest.raises((InvalidDeclaration, IllegalDeclaration), match=message):
        declare(state, "bert", **decl)


def test_bad_declaration_shapes() -> None:
    state = new_battle([fighter("a"), fighter("b", "B")])
    with pytest.raises(InvalidDeclaration, match="type"):
        S.apply(state, {"kind": "melee"}, GM, ScriptedDice([]))
    with pytest.raises(InvalidDeclaration, match="unknown declaration type"):
        S.apply(state, {"type": "fireball"}, GM, ScriptedDice([]))
    with pytest.raises(InvalidDeclaration, match="'at'"):
        S.apply(state, {"type": "declare", "combatant": "a", "kind": "await", "at": "soon"}, GM, ScriptedDice([]))
    with pytest.raises(IllegalDeclaration, match="Initiative step"):
        run(state, "roll_initiative", [1, 2])
    with pytest.raises(InvalidDeclaration, match="damage"):
        S.validate_combatant({"name": "Rat", "weapon": "natural", "damage": "lots"})


def test_delay_past_segment_ten_loses_a_volley_but_never_a_blow() -> None:
    """A missile volley pushed past segment 10 is lost; a melee blow only comes later (ruling AD&D-8)."""
    for kind, status in (("missile", "lost"), ("melee", "pending")):
        state = new_battle([fighter("aldo", controller="seat", seat="s1", missile="short_bow"),
                            fighter("orc", "B", hp=5)])
        state, _ = declare(state, "orc", "await")
        state, _ = run(state, "roll_order", at=0.0)
        state, _ = declare(state, "aldo", kind, "orc", at=61.0)
        assert state["declarations"]["aldo"]["delay"] == 10
        state, _ = run(state, "roll_initiative", [6, 1])
        act = [a for a in state["queue"] if a["combatant"] == "aldo"][0]
        assert act["status"] == status
        assert ("past segment 10" in act["why"][-1]) is (kind == "missile")


# --- initiative and the order of resolution ----------------------------------------------------

def test_winner_resolves_in_letter_order_then_loser() -> None:
    state = new_battle([fighter("fig"), fighter("mage", missile="darts"),
                        fighter("orc1", "B", hp=10, ac=5), fighter("orc2", "B")])
    state, _ = declare(state, "fig", "melee", "orc1")
    state, _ = declare(state, "mage", "missile", "orc1")
    state, _ = declare(state, "orc1", "melee", "fig")
    state, _ = declare(state, "orc2", "flee")
    assert state["phase"] == "initiative"
    state, events = run(state, "roll_initiative", [5, 2])
    assert events[0]["text"] == "Initiative: side A 5, side B 2. Side A wins and acts first."
    assert groups(state) == [["mage"], ["fig"], ["orc2"], ["orc1"]]
    # the winning attack kills the orc before it can strike back
    state, events = run(state, "resolve_all", [20, 3, 14, 15, 2, 20, 8])
    assert texts(events) == [
        "Mage shoots 3 times at Orc1 (darts).",
        "Mage hits Orc1 with the darts: 20 against 15 needed, 3 damage.",
        "Mage misses Orc1: 14 against 15 needed.",
        "Mage hits Orc1 with the darts: 15 against 15 needed, 2 damage.",
        "Orc1 takes 3 damage from Mage (10 to 7).",
        "Orc1 takes 2 damage from Mage (7 to 5).",
        "Fig strikes at Orc1.",
        "Fig hits Orc1 with the long sword: 20 against 15 needed, 8 damage.",
        "Orc1 takes 8 damage from Fig (5 to -3) and falls unconscious, bleeding.",
        "Orc2 flees the fight.",
        "Orc1 is down: the action is lost.",
        "Every action of round 1 is resolved.",
    ]


def test_full_round_with_scripted_dice_turn_by_turn() -> None:
    state = new_battle([fighter("fig", hp=10, ac=5), fighter("orc", "B", hp=5, ac=6, thac0=19, weapon="spear",
                                                            dies_at_zero=True)])
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "melee", "fig")
    state, _ = run(state, "roll_initiative", [2, 4])  # side B wins
    assert groups(state) == [["orc"], ["fig"]]
    state, events = run(state, "resolve_next", [14, 3])  # the orc needs 19 - 5 = 14
    assert texts(events) == ["Orc strikes at Fig.", "Orc hits Fig with the spear: 14 against 14 needed, 3 damage.",
                             "Fig takes 3 damage from Orc (10 to 7)."]
    state, events = run(state, "resolve_next", [13])  # the fighter needs 20 - 6 = 14
    assert texts(events)[1] == "Fig misses Orc: 13 against 14 needed."
    assert state["phase"] == "bleeding"
    state, _ = run(state, "bleed")
    recap = S.view_for(state, SPECTATOR)["recap"]["lines"]
    # the number needed comes from the NPCs' THAC0 and AC: the table hears the roll and the damage
    assert "Orc hits Fig with the spear: rolled 14, 3 damage." in recap and "Fig takes 3 damage from Orc." in recap
    assert "Orc hits Fig with the spear: 14 against 14 needed, 3 damage." in S.view_for(state, GM)["recap"]["lines"]
    assert recap[-2:] == ["Side A: Fig wounded.", "Side B: Orc fighting."]
    assert "(DM) side B: Orc 5/5 hp." in S.view_for(state, GM)["recap"]["lines"]
    state, events = run(state, "next_round")
    assert state["round"] == 2 and state["phase"] == "declarations"


def test_tie_melee_goes_by_speed_factor_and_natural_attacks_always_strike() -> None:
    state = new_battle([fighter("dag", weapon="dagger"), fighter("two", weapon="two_handed_sword"),
                        fighter("bear", "B", weapon="natural", damage="1d6"), fighter("orc", "B", weapon="spear"),
                        fighter("run", "B")])
    state, _ = declare(state, "dag", "melee", "bear")
    state, _ = declare(state, "two", "melee", "orc")
    state, _ = declare(state, "bear", "melee", "dag")
    state, _ = declare(state, "orc", "melee", "two")
    state, _ = declare(state, "run", "flee")
    state, events = run(state, "roll_initiative", [3, 3])
    assert "A tie" in events[0]["text"]
    assert groups(state) == [["run"], ["dag", "bear"], ["orc"], ["two"]]
    # the dagger kills the bear, whose claws strike anyway in the same moment
    state, events = run(state, "resolve_next")  # the flight
    state, events = run(state, "resolve_next", [20, 4, 20, 6])
    assert state["combatants"]["bear"]["hp"] == 6 and state["combatants"]["dag"]["hp"] == 4


def test_slow_weapon_unused_if_wielder_slain_on_a_tie() -> None:
    state = new_battle([fighter("dag", weapon="dagger"), fighter("two", "B", weapon="two_handed_sword", hp=2,
                                                                dies_at_zero=True)])
    state, _ = declare(state, "dag", "melee", "two")
    state, _ = declare(state, "two", "melee", "dag")
    state, _ = run(state, "roll_initiative", [4, 4])
    state, events = run(state, "resolve_all", [20, 4])
    assert "Two is dead: the action is lost." in texts(events)


def test_multiple_attack_routines_slot_one_blow_in_before_the_enemy() -> None:
    state = new_battle([fighter("fig"), fighter("ftr2"), fighter("owl", "B", weapon="natural", damage="1d8",
                                                                 attacks=3)])
    state, _ = declare(state, "fig", "melee", "owl")
    state, _ = declare(state, "ftr2", "flee")
    state, _ = declare(state, "owl", "melee", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    assert groups(state) == [["ftr2"], ["owl"], ["fig"], ["owl"]]
    first_owl = sorted(state["queue"], key=lambda a: (tuple(a["key"]), a["n"]))[1]
    assert first_owl["attacks"] == 1 and "slips in just before Fig's first" in first_owl["why"][-1]
    assert [a["attacks"] for a in state["queue"] if a["combatant"] == "owl"] == [1, 2]


def test_multiple_attacks_do_not_beat_a_winning_flight() -> None:
    state = new_battle([fighter("fig"), fighter("owl", "B", weapon="natural", attacks=2)])
    state, _ = declare(state, "fig", "flee")
    state, _ = declare(state, "owl", "melee", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    assert groups(state) == [["fig"], ["owl"]]


@pytest.mark.parametrize(("faces", "mod", "expected"), [
    ([4, 3], 2, [["arch"], ["bow"], ["fig"]]),         # loser B: 3 + 2 = 5 > 4 shoots before A's missiles
    ([4, 3], 1, [["bow", "arch"], ["fig"]]),           # 3 + 1 = 4 equals 4: together
    ([4, 3], 0, [["bow"], ["fig"], ["arch"]]),         # no adjustment: after the winners
])
def test_missile_reaction_adjustment_of_the_losing_side(faces: list[int], mod: int,
                                                         expected: list[list[str]]) -> None:
    state = new_battle([fighter("bow", missile="long_bow"), fighter("fig"),
                        fighter("arch", "B", missile="short_bow", reaction_mod=mod)])
    state, _ = declare(state, "bow", "missile", "arch")
    state, _ = declare(state, "fig", "melee", "arch")
    state, _ = declare(state, "arch", "missile", "bow")
    state, _ = run(state, "roll_initiative", faces)
    assert groups(state) == expected


def test_negative_reaction_adjustment_makes_a_winner_shoot_last() -> None:
    state = new_battle([fighter("bow", missile="long_bow", reaction_mod=-2), fighter("arch", "B", missile="sling")])
    state, _ = declare(state, "bow", "missile", "arch")
    state, _ = declare(state, "arch", "missile", "bow")
    state, _ = run(state, "roll_initiative", [4, 3])  # 4 - 2 = 2 < 3
    assert groups(state) == [["arch"], ["bow"]]
    assert state["queue"][1]["why"][-1].startswith("shoots last: reaction −2 + 4 < 3")


def _casters(ct_a: int, ct_b: int, faces: list[int]) -> dict[str, Any]:
    state = new_battle([fighter("mage", caster=True), fighter("witch", "B", caster=True)])
    state, _ = declare(state, "mage", "spell", "witch", spell="Magic missile", casting_time=ct_a)
    state, _ = declare(state, "witch", "spell", "mage", spell="Sleep", casting_time=ct_b)
    state, _ = run(state, "roll_initiative", faces)
    return state


def test_spell_against_spell_goes_by_casting_time() -> None:
    assert groups(_casters(3, 1, [5, 2])) == [["witch"], ["mage"]]
    assert groups(_casters(1, 3, [2, 5])) == [["mage"], ["witch"]]


def test_spell_against_spell_equal_time_goes_by_initiative_then_together() -> None:
    assert groups(_casters(2, 2, [2, 5])) == [["witch"], ["mage"]]
    assert groups(_casters(2, 2, [4, 4])) == [["mage", "witch"]]


def test_simultaneous_spells_both_go_off_even_when_both_hurt() -> None:
    state = new_battle([fighter("mage", caster=True, hp=3), fighter("witch", "B", caster=True, hp=3)])
    state, _ = declare(state, "mage", "spell", "witch", spell="Magic missile", casting_time=1, damage="1d4+1")
    state, _ = declare(state, "witch", "spell", "mage", spell="Magic missile", casting_time=1, damage="1d4+1")
    state, _ = run(state, "roll_initiative", [4, 4])
    state, events = run(state, "resolve_all", [2, 3])
    assert [e["type"] for e in events].count("spell.completed") == 2
    assert "spell.lost" not in [e["type"] for e in events]


def test_missiles_beat_a_charge_even_when_the_charger_wins() -> None:
    state = new_battle([fighter("bow", missile="long_bow"), fighter("orc", "B")], distance=4)
    state, _ = declare(state, "bow", "missile", "orc")
    state, _ = declare(state, "orc", "charge", "bow")
    state, _ = run(state, "roll_initiative", [1, 6])
    assert groups(state) == [["bow"], ["orc"]]
    assert "missiles and turning come first" in state["queue"][0]["why"][-1]


def test_turning_beats_a_charge() -> None:
    state = new_battle([fighter("cleric", caster=True), fighter("ghoul", "B")], distance=4)
    state, _ = declare(state, "cleric", "turn", "ghoul")
    state, _ = declare(state, "ghoul", "charge", "cleric")
    state, _ = run(state, "roll_initiative", [2, 5])
    assert groups(state) == [["cleric"], ["ghoul"]]
    state, events = run(state, "resolve_next", [13])
    assert events[0]["rolls"][0]["faces"] == [13] and events[0]["type"] == "turning.attempted"


@pytest.mark.parametrize(("distance", "casting_time", "expected"), [
    (3, 3, [["orc"], ["mage"]]),        # 30 ft centre: arrives in segment 1, before a 3-segment spell
    (7, 3, [["mage", "orc"]]),          # 70 ft: 2 + 10 + 3 x 24 reaches in segment 3, with the spell
    (10, 3, [["mage"], ["orc"]]),       # 100 ft: segment 4, the spell goes first
])
def test_charge_against_a_spell_by_arrival_segment(distance: int, casting_time: int,
                                                    expected: list[list[str]]) -> None:
    state = new_battle([fighter("mage", caster=True), fighter("orc", "B", weapon="short_sword")])
    state = put(put(state, "mage", 5, 1), "orc", 5, 1 + distance)
    state, _ = declare(state, "mage", "spell", "orc", spell="Sleep", casting_time=casting_time)
    state, _ = declare(state, "orc", "charge", "mage")
    state, _ = run(state, "roll_initiative", [6, 1])
    assert groups(state) == expected


def test_melee_against_a_caster_by_speed_factor() -> None:
    # the caster wins initiative, but a dagger (speed 2) beats a 4-segment spell
    state = new_battle([fighter("mage", caster=True, hp=4), fighter("orc", "B", weapon="dagger", thac0=19)])
    state, _ = declare(state, "mage", "spell", "orc", spell="Sleep", casting_time=4)
    state, _ = declare(state, "orc", "melee", "mage")
    state, _ = run(state, "roll_initiative", [5, 2])
    assert groups(state) == [["orc"], ["mage"]]
    state, events = run(state, "resolve_all", [20, 2])
    assert "Mage is hurt before Sleep is done: the spell is lost." in texts(events)
    assert "spell.completed" not in [e["type"] for e in events]


@pytest.mark.parametrize(("casting_time", "expected"), [
    (4, [["mage"], ["ogre"]]),   # the caster's die 5: spells of 1-4 segments go first
    (5, [["mage", "ogre"]]),     # equal: together
    (6, [["ogre"], ["mage"]]),   # longer: the blow lands first
])
def test_melee_without_speed_factor_against_a_caster_uses_the_casters_die(
        casting_time: int, expected: list[list[str]]) -> None:
    state = new_battle([fighter("mage", caster=True), fighter("ogre", "B", weapon="natural", damage="1d10")])
    state, _ = declare(state, "mage", "spell", "ogre", spell="Sleep", casting_time=casting_time)
    state, _ = declare(state, "ogre", "melee", "mage")
    state, _ = run(state, "roll_initiative", [5, 6])
    assert groups(state) == expected


def test_missile_against_a_caster_on_a_tie_uses_the_casters_die() -> None:
    state = new_battle([fighter("mage", caster=True), fighter("arch", "B", missile="short_bow")])
    state, _ = declare(state, "mage", "spell", "arch", spell="Sleep", casting_time=2)
    state, _ = declare(state, "arch", "missile", "mage")
    state, _ = run(state, "roll_initiative", [5, 5])
    assert groups(state) == [["mage"], ["arch"]]


def test_spell_is_lost_when_the_caster_is_hurt_earlier_in_the_round() -> None:
    state = new_battle([fighter("mage", caster=True), fighter("arch", "B", missile="sling")])
    state, _ = declare(state, "mage", "spell", "arch", spell="Sleep", casting_time=1)
    state, _ = declare(state, "arch", "missile", "mage", note="at the robed one")
    state, _ = run(state, "roll_initiative", [1, 6])
    state, events = run(state, "resolve_all", [20, 1])
    assert "Mage is hurt before Sleep is done: the spell is lost." in texts(events)
    view = S.view_for(state, SPECTATOR)
    assert [t["status"] for t in view["track"]] == ["resolved", "lost"]


# --- charges -----------------------------------------------------------------------------------

def test_charge_arithmetic_indoors_and_outdoors() -> None:
    assert charge_per_segment_feet(12, "indoors") == 24     # 24" a round at 10 ft an inch, a tenth each segment
    assert charge_per_segment_feet(9, "indoors") == 18
    assert charge_per_segment_feet(12, "outdoors") == 48    # 16" a round at 30 ft an inch
    assert charge_per_segment_feet(6, "outdoors") == 24
    sword = Fraction(7, 2)
    # 5 squares apart indoors: 50 ft centre to centre, 40 ft base to base
    assert arrival_segment(distance_squares=(5, 0), move=12, scale="indoors", length=sword) == 2
    assert arrival_segment(distance_squares=(5, 0), move=6, scale="indoors", length=sword) == 4
    assert arrival_segment(distance_squares=(1, 1), move=6, scale="indoors", length=sword) == 1
    assert arrival_segment(distance_squares=(30, 0), move=6, scale="indoors", length=sword) is None
    # outdoors 5 squares is 150 ft centre to centre: 30 + 3.5 + 48 s >= 150 from segment 3
    assert arrival_segment(distance_squares=(5, 0), move=12, scale="outdoors", length=sword) == 3
    # a spear reaches sooner: 40 ft gap, 8 ft spear, 12 ft a segment at MV 6: 8 + 36 >= 40
    assert arrival_segment(distance_squares=(5, 0), move=6, scale="indoors", length=8) == 3
    assert arrival_segment(distance_squares=(4, 3), move=6, scale="indoors", length=8) == 3


def test_charge_view_for_the_board() -> None:
    state = new_battle([fighter("fig", controller="seat", seat="s1"), fighter("orc", "B"), fighter("gob", "B")])
    state = put(put(put(state, "fig", 2, 2), "orc", 7, 2), "gob", 8, 3)
    view = S.view_for(state, Viewer.player("s1"))
    ch = view["charges"]["fig"]
    assert ch["per_segment_feet"] == 24 and ch["reach_feet"] == 240 and ch["reach_inches"] == 24
    assert ch["strike_radius_inches"][0] == pytest.approx((10 + 3.5 + 24) / 10)
    assert ch["targets"]["orc"] == {"distance_feet": 40.0, "arrival_segment": 2, "retaliators": ["orc", "gob"],
                                    "path": [[4.4, 2.0], [5.65, 2.0]]}  # 24 ft, then stops 3.5 ft short
    assert "orc" not in view["charges"]  # an NPC's movement stays hidden from players
    assert "orc" in S.view_for(state, GM)["charges"]
    state, _ = run(state, "set_scale", scale="outdoors")
    ch = S.view_for(state, GM)["charges"]["fig"]
    assert ch["per_segment_feet"] == 48 and ch["targets"]["orc"]["arrival_segment"] == 3


def test_charge_retaliation_goes_by_weapon_length() -> None:
    state = new_battle([fighter("fig", hp=20), fighter("pike", "B", weapon="spear", hp=20),
                        fighter("gob", "B", weapon="short_sword", hp=20)])
    state = put(put(put(state, "fig", 5, 1), "pike", 5, 6), "gob", 6, 6)
    state, _ = declare(state, "fig", "charge", "pike")
    state, _ = declare(state, "pike", "set")
    state, _ = declare(state, "gob", "melee", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    # spear (8 ft) first, then the long sword (3.5 ft), then the short sword (2 ft)
    state, events = run(state, "resolve_all", [20, 3, 20, 5, 20, 2])
    order = [e["data"]["attacker"] for e in events if e["type"] in ("attack.hit", "attack.missed")]
    assert order == ["pike", "fig", "gob"]
    met = [e for e in events if e["type"] == "charge.met"][0]
    assert met["text"].startswith("Blows against the charge go by weapon length, longest first: Pike (spear, 8 ft)")
    gob = [a for a in state["queue"] if a["combatant"] == "gob"][0]
    assert "spent against the charge" in gob["why"]
    assert (state["combatants"]["fig"]["x"], state["combatants"]["fig"]["y"]) in {(4, 5), (5, 5), (6, 5)}


def test_charger_killed_by_a_longer_weapon_does_not_strike_and_equal_lengths_strike_together() -> None:
    state = new_battle([fighter("fig", hp=2), fighter("pike", "B", weapon="spear")])
    state = put(put(state, "fig", 5, 1), "pike", 5, 4)
    state, _ = declare(state, "fig", "charge", "pike")
    state, _ = declare(state, "pike", "set")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "resolve_all", [20, 6])
    assert [e["data"].get("attacker") for e in events if e["type"].startswith("attack.")] == ["pike"]
    # two long swords: both strike even though the first blow would kill
    state = new_battle([fighter("fig", hp=2), fighter("orc", "B", hp=2, dies_at_zero=True)])
    state = put(put(state, "fig", 5, 1), "orc", 5, 4)
    state, _ = declare(state, "fig", "charge", "orc")
    state, _ = declare(state, "orc", "set")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "resolve_all", [20, 8, 20, 8])
    assert state["combatants"]["fig"]["condition"] == "down" and state["combatants"]["orc"]["condition"] == "dead"


def test_charge_that_falls_short() -> None:
    state = new_battle([fighter("fig", move=6), fighter("orc", "B")])
    state = put(put(state, "fig", 1, 1), "orc", 1, 18)
    state, _ = declare(state, "fig", "charge", "orc")
    state, _ = declare(state, "orc", "await")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "resolve_all")
    assert "Fig charges Orc but does not reach striking range this round." in texts(events)
    assert state["combatants"]["fig"]["y"] == 13  # 12 inches of charge along the column


# --- wounds and bleeding -----------------------------------------------------------------------

def _to_bleeding(state: dict[str, Any]) -> dict[str, Any]:
    for cid in state["order"]:
        if cid not in state["declarations"] and state["combatants"][cid]["condition"] == "ok":
            state, _ = declare(state, cid, "await")
    state, _ = run(state, "roll_initiative", [1, 2])
    state, _ = run(state, "resolve_all")
    return state


def test_bleeding_from_below_zero_at_the_start_of_the_round() -> None:
    state = new_battle([fighter("a", hp=10), fighter("b", hp=10), fighter("c", hp=10), fighter("z", "B")])
    state, _ = run(state, "set_hp", combatant="a", hp=-3)
    state, _ = run(state, "set_hp", combatant="b", hp=-9)
    state, _ = run(state, "set_hp", combatant="c", hp=0)
    state["round_start_hp"] = {cid: c["hp"] for cid, c in state["combatants"].items()}
    state = _to_bleeding(state)
    assert state["phase"] == "bleeding"
    assert S.view_for(state, GM)["procedure"]["pending"] == ["The DM applies bleeding: A, B."]
    state, events = run(state, "bleed")
    assert texts(events)[:2] == ["A bleeds: 1 hit point lost (-4).", "B bleeds: 1 hit point lost (-10) and dies."]
    assert state["combatants"]["b"]["condition"] == "dead" and state["combatants"]["c"]["hp"] == 0


def test_bleeding_from_zero_is_an_option_and_first_aid_stops_it() -> None:
    state = new_battle([fighter("a"), fighter("c"), fighter("z", "B")], bleed_at_zero=True)
    state, _ = run(state, "set_hp", combatant="a", hp=-2)
    state, _ = run(state, "set_hp", combatant="c", hp=0)
    state["round_start_hp"] = {cid: c["hp"] for cid, c in state["combatants"].items()}
    state, _ = run(state, "first_aid", combatant="a")
    state = _to_bleeding(state)
    state, events = run(state, "bleed")
    assert texts(events)[0] == "C bleeds: 1 hit point lost (-1)."
    assert state["combatants"]["a"]["hp"] == -2


def test_no_bleeding_in_the_round_a_combatant_fell() -> None:
    state = new_battle([fighter("fig"), fighter("orc", "B", hp=3)])
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "await")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, _ = run(state, "resolve_all", [20, 5])
    assert state["combatants"]["orc"]["hp"] == -2 and state["combatants"]["orc"]["condition"] == "down"
    state, events = run(state, "bleed")
    assert texts(events)[0] == "Nobody is bleeding."
    state, _ = run(state, "next_round")
    state, _ = declare(state, "fig", "await")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, _ = run(state, "resolve_all")
    state, events = run(state, "bleed", skip=True, note="the orc is bandaged offscreen")
    assert state["combatants"]["orc"]["hp"] == -2
    assert events[0]["text"] == "The DM skips the bleeding (the orc is bandaged offscreen)."


def test_death_at_minus_ten_and_monsters_at_zero() -> None:
    state = new_battle([fighter("fig", hp=3), fighter("orc", "B", hp=4, dies_at_zero=True, weapon="two_handed_sword")])
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "melee", "fig")
    state, _ = run(state, "roll_initiative", [1, 6])
    state, events = run(state, "resolve_all", [20, 10])
    assert state["combatants"]["fig"]["hp"] == -7 and state["combatants"]["fig"]["condition"] == "down"
    assert "Fig takes 10 damage from Orc (3 to -7) and falls unconscious, bleeding." in texts(events)
    state = new_battle([fighter("fig", hp=3), fighter("orc", "B", hp=4, dies_at_zero=True)])
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "melee", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "resolve_all", [20, 4])
    assert "Orc takes 4 damage from Fig (4 to 0) and dies." in texts(events)
    state, _ = RULES.play(state, {"type": "bleed"})
    state["combatants"]["fig"]["hp"] = -9
    state["combatants"]["fig"]["condition"] = "down"
    state["round_start_hp"]["fig"] = -9
    state["phase"] = "bleeding"
    state, events = run(state, "bleed")
    assert state["combatants"]["fig"]["condition"] == "dead"


# --- surprise ----------------------------------------------------------------------------------

def test_surprise_segments_only_the_surprising_side_acts() -> None:
    lineup = [fighter("thief", reaction_mod=2, controller="seat", seat="s1"), fighter("fig", controller="seat",
                                                                                      seat="s2"),
              fighter("witch", "B", caster=True), fighter("orc", "B", weapon="spear")]
    state, _ = RULES.start(lineup)
    state, _ = run(state, "check_reaction", skip=True)
    state, events = run(state, "check_surprise", [2, 5])
    assert state["surprise"] == {"side": "A", "segments": 2, "segment": 0, "faces": {"A": 2, "B": 5}}
    state, _ = run(state, "check_distance", [1])  # indoors with surprise: 1 inch
    state, events = run(state, "check_morale", skip=True)
    assert texts(events)[-1] == "Surprise segment 1 of 2: only side B acts."
    view = S.view_for(state, GM)
    assert view["procedure"]["current"] == "surprise_segments"
    assert [t["combatant"] for t in view["legal"] if t["type"] == "declare"] == ["witch", "orc"]
    with pytest.raises(IllegalDeclaration, match="cannot act now"):
        declare(state, "fig", "await", viewer=Viewer.player("s2"))
    # the thief's reaction adjustment of 2 keeps him out of reach in segments 1 and 2
    with pytest.raises(IllegalDeclaration, match="reacts too fast"):
        declare(state, "orc", "melee", "thief")
    state, _ = declare(state, "witch", "spell", "fig", spell="Charm", casting_time=4)
    state, _ = declare(state, "orc", "melee", "fig")
    assert state["phase"] == "resolution"
    state, events = run(state, "resolve_all", [10])
    assert "Witch begins to cast Charm: 3 more segments to go." in texts(events)
    assert "Surprise segment 2 of 2." in texts(events)
    assert state["declarations"]["witch"]["continuing"] is True
    state, _ = declare(state, "orc", "melee", "fig")
    state, events = run(state, "resolve_all", [10])
    assert "Witch keeps casting Charm: 2 more segments to go." in texts(events)
    assert "The surprise is over. Round 1 begins." in texts(events)
    assert state["round"] == 1 and state["declarations"]["witch"]["casting_time"] == 2
    # in round 1 the spell completes in segment 2
    state, _ = declare(state, "orc", "await")
    state, _ = run(state, "roll_order", [1], at=0.0)
    state, _ = declare(state, "thief", "await", viewer=Viewer.player("s1"), at=1.0)
    state, _ = declare(state, "fig", "await", viewer=Viewer.player("s2"), at=2.0)
    state, _ = run(state, "roll_initiative", [1, 6])
    spell = [t for t in S.view_for(state, GM)["spells"]][0]
    assert spell["completes_segment"] == 2 and spell["spell"] == "Charm"
    assert S.view_for(state, SPECTATOR)["spells"] == []


# --- prepared actions, cancelling ---------------------------------------------------------------

def test_prepared_action_readies_then_fires_on_its_trigger() -> None:
    state = new_battle([fighter("bow", missile="light_crossbow", controller="seat", seat="s1"),
                        fighter("orc", "B")])
    state, _ = declare(state, "orc", "move")
    state, _ = run(state, "roll_order", at=0.0)
    state, _ = declare(state, "bow", "missile", "orc", prepared=True, trigger="if the orc moves",
                       viewer=Viewer.player("s1"), at=1.0)
    state, _ = run(state, "roll_initiative", [5, 2])
    state, events = run(state, "resolve_next")
    assert events[0]["text"] == "Bow is ready to act: [D] prepare to shoot at Orc, if the orc moves."
    view = S.view_for(state, Viewer.player("s1"))
    assert [t["type"] for t in view["legal"]] == ["trigger"]
    state, events = run(state, "trigger", [20, 4], viewer=Viewer.player("s1"), combatant="bow")
    assert texts(events)[0] == "Bow's trigger comes: [D] prepare to shoot at Orc, if the orc moves."
    assert state["combatants"]["orc"]["hp"] == 5  # 4 + 1 from the light crossbow


def test_untriggered_prepared_action_lapses() -> None:
    state = new_battle([fighter("bow", missile="sling"), fighter("orc", "B")])
    state, _ = declare(state, "bow", "missile", "orc", prepared=True, trigger="if it charges")
    state, _ = declare(state, "orc", "await")
    state, _ = run(state, "roll_initiative", [2, 5])
    state, events = run(state, "resolve_all")
    assert "Bow's prepared action was never triggered." in texts(events)


def test_a_player_can_cancel_a_pending_action() -> None:
    state = new_battle([fighter("fig", controller="seat", seat="s1"), fighter("orc", "B")])
    state, _ = declare(state, "orc", "await")
    state, _ = run(state, "roll_order", at=0.0)
    state, _ = declare(state, "fig", "melee", "orc", viewer=Viewer.player("s1"), at=1.0)
    state, _ = run(state, "roll_initiative", [2, 5])
    state, _ = run(state, "resolve_next")
    assert [t["testid"] for t in S.view_for(state, Viewer.player("s1"))["legal"]] == ["cancel-fig"]
    state, events = run(state, "cancel", viewer=Viewer.player("s1"), combatant="fig")
    assert texts(events)[0] == "Fig calls off the declared action."
    assert state["phase"] == "bleeding"
    with pytest.raises(IllegalDeclaration):
        run(state, "cancel", viewer=Viewer.player("s1"), combatant="fig")


def test_morale_failure_mid_round_replaces_the_action_with_flight() -> None:
    state = new_battle([fighter("fig"), fighter("gob", "B", hp=2), fighter("gob2", "B", hp=2)])
    state, _ = declare(state, "fig", "melee", "gob")
    state, _ = declare(state, "gob", "melee", "fig")
    state, _ = declare(state, "gob2", "melee", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, _ = run(state, "resolve_next", [20, 5])
    state, events = run(state, "check_morale", [90], combatants=["gob2"])
    assert events[0]["data"]["failed"] == ["gob2"]
    state, events = run(state, "resolve_all")
    assert "Gob2 flees the fight in panic (morale failed by 40: flight replaces the declared action)." in texts(events)


# --- visibility ----------------------------------------------------------------------------------

def test_dm_declarations_stay_hidden_until_they_resolve() -> None:
    state = new_battle([fighter("fig", controller="seat", seat="s1"), fighter("orc", "B", missile="short_bow")])
    state, events = declare(state, "orc", "missile", "fig", note="aims at the leader")
    player = Viewer.player("s1")
    for viewer in (SPECTATOR, player):
        seen = visible_events(events, viewer, state)
        assert [e["type"] for e in seen] == ["declaration.noted"]
        assert "fig" not in json.dumps(seen) and "aims" not in json.dumps(seen)
        view = S.view_for(state, viewer)
        assert view["declarations"] == [] and "aims" not in json.dumps(view)
    assert "aims at the leader" in json.dumps(S.view_for(state, GM))
    state, _ = run(state, "roll_order", at=0.0)
    state, _ = declare(state, "fig", "melee", "orc", viewer=player, at=2.0)
    state, _ = run(state, "roll_initiative", [1, 6])
    assert [t["combatant"] for t in S.view_for(state, SPECTATOR)["track"]] == ["fig"]
    assert "Next to resolve (segment 1): a secret action." in S.view_for(state, SPECTATOR)["procedure"]["pending"]
    state, events = run(state, "resolve_next", [2, 2])
    assert [t["combatant"] for t in S.view_for(state, SPECTATOR)["track"]] == ["orc", "fig"]
    # every step of the resolution reaches the table, in words without the orc's numbers or the DM's note
    assert len(visible_events(events, SPECTATOR, state)) == len(events)
    told = json.dumps([visible_events(events, SPECTATOR, state), S.view_for(state, SPECTATOR)])
    assert "aims" not in told and "needed" not in told
    assert "aims at the leader" in json.dumps(S.view_for(state, GM)["track"])
    assert "hp" not in [c for c in S.view_for(state, SPECTATOR)["combatants"] if c["id"] == "orc"][0]


def test_an_npc_archers_reaction_adjustment_stays_the_dms() -> None:
    """An NPC's reaction adjustment is the DM's: the queue and the log tell the table why the orc
    shoots last, not by how much (the DM sees the numbers)."""
    state = new_battle([fighter("bow", missile="long_bow", reaction_mod=-2), fighter("arch", "B", missile="sling",
                                                                                   controller="seat", seat="s1")])
    state, _ = declare(state, "bow", "missile", "arch")
    state, _ = run(state, "roll_order", at=0.0)
    state, _ = declare(state, "arch", "missile", "bow", viewer=Viewer.player("s1"), at=1.0)
    state, _ = run(state, "roll_initiative", [4, 3])  # 4 - 2 = 2 < 3
    assert S.view_for(state, GM)["track"][-1]["why"][-1].startswith("shoots last: reaction −2 + 4 < 3")
    state, events = run(state, "resolve_all", [1, 1, 1])  # (the sling shoots once, the bow twice; all miss)
    for viewer in (SPECTATOR, Viewer.player("s1")):  # the orc's shot, out now, in the queue
        told = S.view_for(state, viewer)["track"]
        assert told[-1]["combatant"] == "bow" and told[-1]["why"][-1].startswith("shoots last: its reaction adjustment")
        assert "−2" not in json.dumps(told, ensure_ascii=False)
    said = json.dumps(visible_events(events, SPECTATOR, state), ensure_ascii=False)
    assert "Bow shoots" in said and "−2" not in said and "its reaction adjustment" in said
    assert "reaction −2 + 4 < 3" in json.dumps(visible_events(events, GM, state), ensure_ascii=False)


def test_seed_never_in_state_and_state_is_json() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")], dice=SeededDice("secret-seed"))
    assert "secret-seed" not in json.dumps(state)


# --- whole encounters --------------------------------------------------------------------------

LINEUP = [
    fighter("aldo", controller="seat", seat="s1", hp=12, ac=4),
    fighter("mira", controller="seat", seat="s2", hp=6, weapon="dagger", caster=True, missile="darts"),
    fighter("orc1", "B", hp=6, ac=6, thac0=19, weapon="spear", dies_at_zero=True, controller="computer"),
    fighter("orc2", "B", hp=6, ac=6, thac0=19, weapon="battle_axe", dies_at_zero=True),
]


def play(seed: str, rounds: int = 12, wild: bool = False, scale: str = "indoors") -> tuple[dict[str, Any], list[str]]:
    """A whole encounter from the reaction check to the end, every choice from the seeded dice.

    ``wild`` lets every combatant pick any action (spells, prepared actions, flight...) and sprinkles
    cancellations, triggers and morale checks into the resolution."""
    dice = SeededDice(seed)
    state, _ = RULES.start(copy.deepcopy(LINEUP), {"scale": scale}, dice=dice)
    log: list[str] = []
    clock = 1000.0

    def go(d: dict[str, Any], viewer: Viewer = GM) -> None:
        nonlocal state
        before = copy.deepcopy(state)
        state, events = RULES.play(state, d, viewer, dice=dice)
        assert before == copy.deepcopy(before)  # nothing shared
        json.dumps(state)
        log.extend(e["text"] for e in events)

    go({"type": "check_reaction"})
    go({"type": "check_surprise"})
    go({"type": "check_distance"})
    go({"type": "check_morale", "side": "B"})
    for _ in range(200):
        if state["status"] != "active":
            break
        phase = state["phase"]
        if phase == "declarations":
            legal = S.view_for(state, GM)["legal"]
            template = next((t for t in legal if t["type"] in ("declare", "roll_order")), None)
            if template is None:
                break
            clock += dice.randint(1, 9, "thinking").total
            if template["type"] == "roll_order":
                go({"type": "roll_order", "at": clock})
                continue
            cid = template["combatant"]
            kinds = ("melee", "charge", "missile", "await") if not wild else tuple(a["kind"] for a in template["actions"])
            options = [a for a in template["actions"] if a["kind"] in kinds and (a["targets"] or not a["needs_target"])]
            pick = options[dice.randint(1, len(options), "choice").total - 1]
            decl = {"type": "declare", "combatant": cid, "kind": pick["kind"], "at": clock}
            if pick["needs_target"] or (pick["kind"] == "spell" and pick["targets"]):
                decl["target"] = pick["targets"][dice.randint(1, len(pick["targets"]), "target").total - 1]["id"]
            if wild:
                decl.update({"casting_time": dice.randint(1, 6, "ct").total, "damage": "1d4+1",
                             "segments": dice.randint(1, 4, "segs").total,
                             "prepared": dice.randint(1, 6, "prep").total == 1 and pick["kind"] not in ("none", "psionic"),
                             "trigger": "when it moves"})
            seat = state["combatants"][cid]["seat"]
            go(decl, Viewer.player(seat) if seat else GM)
        elif phase == "initiative":
            go({"type": "roll_initiative"})
        elif phase == "resolution":
            legal = S.view_for(state, GM)["legal"]
            extra = [t for t in legal if t["type"] in ("cancel", "trigger")]
            roll = dice.randint(1, 10, "mischief").total if wild else 10
            if extra and roll <= 2:
                t = extra[dice.randint(1, len(extra), "which").total - 1]
                go({"type": t["type"], "combatant": t["combatant"]})
            elif wild and roll == 3:
                go({"type": "check_morale", "side": "AB"[dice.randint(0, 1, "side").total], "modifier": 10})
            else:
                go({"type": "resolve_next"})
        elif phase == "bleeding":
            go({"type": "bleed"})
        elif phase == "recap":
            standing = {s: sum(1 for c in state["combatants"].values() if c["side"] == s and c["condition"] == "ok")
                        for s in "AB"}
            if 0 in standing.values() or state["round"] >= rounds:
                go({"type": "end_encounter"})
            else:
                go({"type": "next_round"})
        elif phase == "recovery":
            go({"type": "finish"})
    return state, log


def test_full_encounter_to_the_end() -> None:
    state, log = play("table-night")
    assert state["status"] == "ended" and state["outcome"]["text"].startswith("The encounter ends")
    assert log[0].startswith("Reaction roll")
    assert any(line.startswith("Initiative:") for line in log)
    assert S.view_for(state, GM)["legal"] == []


def test_seeded_replay_gives_the_same_battle() -> None:
    assert play("replay-1") == play("replay-1")
    assert play("replay-1")[1] != play("replay-2")[1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(min_size=1, max_size=12))
def test_property_any_seeded_encounter_stays_consistent(seed: str) -> None:
    state, log = play(seed, rounds=6)
    assert state["status"] == "ended"
    for c in state["combatants"].values():
        assert c["hp"] <= c["hp_max"]
        if c["condition"] == "ok":
            assert c["hp"] > 0
        if c["condition"] == "dead":
            assert c["hp"] <= 0
    for viewer in (SPECTATOR, Viewer.player("s1")):
        json.dumps(S.view_for(state, viewer))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(min_size=1, max_size=12), scale=st.sampled_from(["indoors", "outdoors"]))
def test_property_wild_encounters_never_break_the_rules(seed: str, scale: str) -> None:
    state, log = play(seed, rounds=5, wild=True, scale=scale)
    assert state["status"] == "ended"
    assert all(isinstance(line, str) and line for line in log)
    for c in state["combatants"].values():
        assert c["condition"] in ("ok", "down", "dead", "fled", "surrendered")
        assert (c["condition"] == "ok") == (c["hp"] > 0) or c["condition"] in ("fled", "surrendered")


@settings(max_examples=40, deadline=None)
@given(dx=st.integers(-25, 25), dy=st.integers(-25, 25), move=st.integers(1, 24),
       scale=st.sampled_from(["indoors", "outdoors"]), length=st.sampled_from([1, 2, 3.5, 6, 8, 16]))
def test_property_arrival_is_the_first_segment_within_reach(dx: int, dy: int, move: int, scale: str,
                                                            length: float) -> None:
    seg = arrival_segment(distance_squares=(dx, dy), move=move, scale=scale, length=Fraction(str(length)))
    per_inch = {"indoors": 10, "outdoors": 30}[scale]
    gap = max(0.0, (dx * dx + dy * dy) ** 0.5 * per_inch - per_inch)
    step = charge_per_segment_feet(move, scale)
    if seg is None:
        assert gap - 10 * step > length - 1e-9
    else:
        assert max(0.0, gap - seg * step) <= length + 1e-9
        assert seg == 1 or gap - (seg - 1) * step > length - 1e-9


@settings(max_examples=40, deadline=None)
@given(faces=st.lists(st.integers(1, 6), min_size=2, max_size=2))
def test_property_surprise_segments_are_between_0_and_2(faces: list[int]) -> None:
    side, segments = surprise_result({"A": faces[0], "B": faces[1]})
    assert 0 <= segments <= 2 and (side is None) == (segments == 0)


def test_registry_and_forms() -> None:
    system = get_system("adnd")
    assert system.id == "adnd"
    names = {f.name for f in system.combatant_fields()}
    assert {"hp", "ac", "thac0", "weapon", "move", "attacks"} <= names
    for preset in system.presets():
        system.validate_combatant({**preset, "name": preset["name"][:40]})
    assert any("Charges" == h["title"] for h in system.help())
    assert system.validate_options({})["scale"] == "indoors"


def test_checkpoints_at_the_start_of_declarations() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    assert S.is_checkpoint(state)
    state = new_battle([fighter("a"), fighter("b", "B")])
    assert S.is_checkpoint(state)
    state, _ = declare(state, "a", "await")
    assert not S.is_checkpoint(state)


def test_apply_does_not_mutate_its_input() -> None:
    state = new_battle([fighter("a"), fighter("b", "B")])
    frozen = copy.deepcopy(state)
    declare(state, "a", "melee", "b")
    run(state, "move", combatant="a", x=3, y=3)
    assert state == frozen


def test_handing_a_combatant_to_the_computer_during_declarations() -> None:
    state = party_battle()
    state, events = engine.assign(S, state, "orc", "computer", None, ScriptedDice([1]))
    assert state["declarations"]["orc"]["kind"] == "charge"  # two squares away: it charges
    assert [e["visibility"] for e in events] == ["public", "gm"]
    state, _ = run(state, "roll_order", [1], at=50.0)
    assert S.view_for(state, GM)["clock"]["server_time"] == 50.0
    # a player's combatant handed to the DM mid-declaration is then noted by the DM
    state, _ = S.assign(state, "aldo", "gm", None, ScriptedDice([]))
    assert S.view_for(state, GM)["clock"]["combatant"] == "mira"
    state, _ = declare(state, "aldo", "await")
    state, _ = declare(state, "mira", "await", viewer=Viewer.player("s2"), at=52.0)
    assert state["phase"] == "initiative"


def _surprise_battle(lineup: list[dict[str, Any]], faces: list[int], scale: str = "indoors") -> dict[str, Any]:
    state, _ = RULES.start(lineup, {"scale": scale})
    state, _ = run(state, "check_reaction", skip=True)
    state, _ = run(state, "check_surprise", faces)
    state, _ = run(state, "check_distance", skip=True, distance=2)
    state, _ = run(state, "check_morale", skip=True)
    return state


def test_a_task_begun_in_surprise_finishes_after_it() -> None:
    state = _surprise_battle([fighter("fig"), fighter("orc", "B")], [5, 1])  # side B surprised for 1 segment
    assert state["surprise"]["segment"] == 1
    state, _ = declare(state, "fig", "custom", segments=3, note="fetch the oil flask")
    state, events = run(state, "resolve_all")
    assert "Fig starts a task: 2 more segments to go." in texts(events)
    assert state["declarations"]["fig"] == {**state["declarations"]["fig"], "kind": "custom", "segments": 2,
                                            "continuing": True}
    state, _ = declare(state, "orc", "melee", "fig")
    state, _ = run(state, "roll_initiative", [4, 2])
    assert [a["segment"] for a in state["queue"] if a["combatant"] == "fig"] == [2]
    state, events = run(state, "resolve_all", [1])
    assert texts(events)[0] == "Fig finishes the task (fetch the oil flask)."
    assert state["casting"] == {}


def test_fleeing_a_surprised_foe_outdoors_avoids_the_encounter() -> None:
    state = _surprise_battle([fighter("fig"), fighter("orc", "B")], [5, 2], scale="outdoors")
    state, _ = declare(state, "fig", "flee")
    state, events = run(state, "resolve_next")
    assert events[0]["text"] == ("Fig flees the fight (outdoors, with the foe surprised, the encounter is "
                                 "simply avoided).")


def test_secret_reaction_note_is_hidden_on_the_checklist() -> None:
    state, _ = RULES.start([fighter("a"), fighter("b", "B")])
    state, _ = run(state, "check_reaction", [80], private=True)
    steps = {s["key"]: s for s in S.view_for(state, SPECTATOR)["procedure"]["steps"]}
    assert steps["reaction"]["note"] == "rolled in secret"
    assert "reaction" not in S.view_for(state, SPECTATOR)["encounter"]
    gm_steps = {s["key"]: s for s in S.view_for(state, GM)["procedure"]["steps"]}
    assert gm_steps["reaction"]["note"] == "80: friendly: they act in the party's favour at once"


def test_on_a_tie_a_spell_aimed_at_a_shooter_is_ordered_by_the_casters_die() -> None:
    state = new_battle([fighter("mage", caster=True), fighter("arch", "B", missile="short_bow"),
                        fighter("fig")])
    state, _ = declare(state, "mage", "spell", "arch", spell="Sleep", casting_time=4)
    state, _ = declare(state, "fig", "await")
    state, _ = declare(state, "arch", "missile", "fig")
    state, _ = run(state, "roll_initiative", [3, 3])  # casting time 4 against the caster's die 3: the arrows first
    assert groups(state) == [["fig"], ["arch"], ["mage"]]
    state = new_battle([fighter("mage", caster=True), fighter("arch", "B", missile="short_bow"), fighter("fig")])
    state, _ = declare(state, "mage", "spell", "arch", spell="Sleep", casting_time=2)
    state, _ = declare(state, "fig", "await")
    state, _ = declare(state, "arch", "missile", "fig")
    state, _ = run(state, "roll_initiative", [3, 3])  # 2 against 3: the spell first
    assert groups(state) == [["fig"], ["mage"], ["arch"]]


def test_a_winning_blow_at_a_distant_charger_waits_and_meets_the_charge() -> None:
    state = new_battle([fighter("fig", weapon="spear"), fighter("orc", "B", hp=20)])
    state = put(put(state, "fig", 5, 1), "orc", 5, 5)
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "charge", "fig")
    state, _ = run(state, "roll_initiative", [6, 1])
    assert groups(state) == [["orc"], ["fig"]]
    assert "waits for the charge to arrive" in state["queue"][1]["why"][-1]
    # the spear (8 ft) meets the orc's long sword (3.5 ft) first; the blow is spent on the charge
    state, events = run(state, "resolve_all", [20, 5, 3])
    assert [e["data"]["attacker"] for e in events if e["type"].startswith("attack.")] == ["fig", "orc"]
    assert state["phase"] == "bleeding"


def test_a_monster_slain_by_missiles_does_not_claw_on_a_tie() -> None:
    state = new_battle([fighter("bow", missile="long_bow"), fighter("rat", "B", weapon="natural", damage="1d3",
                                                                   hp=2, dies_at_zero=True)])
    state, _ = declare(state, "bow", "missile", "rat")
    state, _ = declare(state, "rat", "melee", "bow")
    state, _ = run(state, "roll_initiative", [2, 2])
    state, events = run(state, "resolve_all", [20, 4, 1])
    assert "Rat is dead: the action is lost." in texts(events)


def test_the_dm_is_offered_the_current_step_in_every_phase() -> None:
    def gm_types(state: dict[str, Any]) -> list[str]:
        return [t["testid"] for t in S.view_for(state, GM)["legal"]]

    state, _ = RULES.start([fighter("fig", controller="seat", seat="s1"), fighter("orc", "B", hp=3, dies_at_zero=True)])
    assert gm_types(state)[:2] == ["gm-check_reaction", "gm-skip-reaction"]
    state, _ = run(state, "check_reaction", skip=True)
    assert gm_types(state)[:2] == ["gm-check_surprise", "gm-skip-surprise"]
    state, _ = run(state, "check_surprise", [4, 4])
    state, _ = run(state, "check_distance", [2])
    assert state["encounter"]["distance"] == 6
    assert gm_types(state)[:2] == ["gm-check_morale", "gm-skip-morale"]
    state, _ = run(state, "check_morale", [10])
    assert gm_types(state)[0] == "declare-orc"
    state, _ = declare(state, "orc", "await")
    assert gm_types(state)[0] == "gm-roll-order"
    state, _ = run(state, "roll_order", at=5.0)
    assert gm_types(state)[:2] == ["gm-clock", "declare-fig"]
    state, _ = declare(state, "fig", "charge", "orc", viewer=Viewer.player("s1"), at=6.0)
    assert gm_types(state)[0] == "gm-initiative"
    state, _ = run(state, "roll_initiative", [5, 2])
    assert gm_types(state)[:2] == ["gm-resolve-next", "gm-resolve-all"]
    state, events = run(state, "resolve_all", [20, 3, 5])  # the waiting orc strikes back at the same length
    assert "Orc takes 3 damage from Fig (3 to 0) and dies." in texts(events)
    assert "Orc misses Fig: 5 against 15 needed." in texts(events)
    assert gm_types(state)[:2] == ["gm-bleed", "gm-skip-bleeding"]
    state, _ = run(state, "bleed")
    assert S.view_for(state, SPECTATOR)["recap"]["lines"][-1] == ("One side can fight no more: time to end the "
                                                                   "encounter.")
    assert gm_types(state)[:2] == ["gm-next-round", "gm-end-encounter"]
    state, events = run(state, "end_encounter")
    assert gm_types(state)[0] == "gm-finish"
    state, events = run(state, "finish")
    assert state["outcome"] == {"winner": "A", "rounds": 1, "text": "The encounter ends: side A holds the field."}
    assert S.view_for(state, GM)["legal"] == [] and S.outcome(state) == state["outcome"]
    with pytest.raises(IllegalDeclaration, match="not running"):  # the system's own refusal (the engine's is
        S.apply(state, {"type": "next_round"}, GM, ScriptedDice([]))  # "this battle has ended")


@pytest.mark.parametrize(("casting_time", "spell_goes_off"), [(4, True), (5, False)])
def test_a_blow_must_land_the_segment_before_the_spell_finishes(casting_time: int, spell_goes_off: bool) -> None:
    """A war hammer (speed 4) against a 4-segment spell lands in the same moment: both happen.
    Against a 5-segment spell it lands first and the spell is lost."""
    state = new_battle([fighter("mage", caster=True, hp=8), fighter("dwarf", "B", weapon="hammer", hp=8)])
    state, _ = declare(state, "mage", "spell", "dwarf", spell="Burning hands", casting_time=casting_time,
                       damage="1d3")
    state, _ = declare(state, "dwarf", "melee", "mage")
    state, _ = run(state, "roll_initiative", [2, 5])
    faces = [2, 20, 3] if spell_goes_off else [20, 3]  # together, the spell is rolled first (roster order)
    state, events = run(state, "resolve_all", faces)
    kinds = [e["type"] for e in events]
    assert ("spell.completed" in kinds) is spell_goes_off
    assert ("spell.lost" in kinds) is not spell_goes_off
    assert state["combatants"]["mage"]["hp"] == 8 - 4  # 1d4+1 with a 3
    assert state["combatants"]["dwarf"]["hp"] == (6 if spell_goes_off else 8)


def test_psionic_combat_only_for_psionic_combatants() -> None:
    state = new_battle([fighter("fig"), fighter("mind", psionic=True), fighter("orc", "B")])
    kinds = {t["combatant"]: [a["kind"] for a in t["actions"]] for t in S.view_for(state, GM)["legal"]
             if t["type"] == "declare"}
    assert "psionic" not in kinds["fig"] and kinds["mind"][0] == "psionic"
    with pytest.raises(IllegalDeclaration, match="no psionic powers"):
        declare(state, "fig", "psionic")
    state, _ = declare(state, "mind", "psionic", note="mind blast")
    state, _ = declare(state, "fig", "melee", "orc")
    state, _ = declare(state, "orc", "flee")
    state, _ = run(state, "roll_initiative", [1, 6])
    assert groups(state) == [["mind"], ["orc"], ["fig"]]  # psionics come first in every round
