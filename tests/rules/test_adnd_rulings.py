"""AD&D 1e, the sharpened rulings of issue 16: tied initiative orders blows by speed factor without losing
any (AD&D-8), the extra attacks of a much faster weapon (AD&D-7) and morale by monster type with the
failure bands (AD&D-4). Every outcome is checked with scripted dice."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.core import Viewer
from rules.dice import SeededDice
from rules.errors import IllegalDeclaration, InvalidDeclaration
from rules.systems.adnd import AdndDemonIdol
from rules.systems.adnd.combatants import actors
from rules.systems.adnd.data import MORALE_BANDS, PRESETS, WEAPONS, morale_failure, morale_score
from tests.rules.test_adnd import RULES, declare, fighter, groups, new_battle, put, run, texts

S = AdndDemonIdol()
GM = Viewer.gm()
SPECTATOR = Viewer.spectator()


def acts(state: dict[str, Any], cid: str) -> list[dict[str, Any]]:
    return [a for a in state["queue"] if a["combatant"] == cid]


def seat_battle(lineup: list[dict[str, Any]], seconds: list[float], **options: Any) -> dict[str, Any]:
    """Everyone is a player's combatant; they declare in lineup order, each ``seconds[i]`` after the last."""
    for i, c in enumerate(lineup):
        c.update(controller="seat", seat=f"s{i + 1}")
    return new_battle(lineup, **options)


# --- AD&D-8: tied initiative orders blows, it never drops them ------------------------------------

def test_an_awl_pike_strikes_on_a_tie_after_the_faster_weapon() -> None:
    state = new_battle([fighter("dag", weapon="dagger", hp=30), fighter("pike", "B", weapon="pike", hp=30)])
    state, _ = declare(state, "dag", "melee", "pike")
    state, _ = declare(state, "pike", "melee", "dag")
    state, _ = run(state, "roll_initiative", [4, 4])
    assert groups(state) == [["dag"], ["pike"]]
    (pike,) = acts(state, "pike")
    assert pike["status"] == "pending" and pike["segment"] == 13
    # dagger: 20 hits AC 5 (needs 15) for 3; pike: 16 hits for 5
    state, events = run(state, "resolve_all", [20, 3, 16, 5])
    assert texts(events)[:6] == [
        "Dag strikes at Pike (weapon speed factor 2).",
        "Dag hits Pike with the dagger: 20 against 15 needed, 3 damage.",
        "Pike takes 3 damage from Dag (30 to 27).",
        "Pike strikes at Dag (weapon speed factor 13; order 13: after every faster blow, still this round).",
        "Pike hits Dag with the awl pike: 16 against 15 needed, 5 damage.",
        "Dag takes 5 damage from Pike (30 to 25).",
    ]
    assert [a["status"] for a in state["queue"]] == ["resolved", "resolved"]


def test_a_two_handed_sword_declared_one_segment_late_still_strikes_on_a_tie() -> None:
    state = seat_battle([fighter("aldo", weapon="two_handed_sword", hp=30), fighter("orc", "B", weapon="spear")],
                        [])
    state, _ = run(state, "roll_order", [1], at=0.0)
    state, _ = declare(state, "aldo", "melee", "orc", at=7.0)
    state, _ = declare(state, "orc", "melee", "aldo", at=7.5)
    assert state["declarations"]["aldo"]["delay"] == 1
    state, _ = run(state, "roll_initiative", [2, 2])
    assert groups(state) == [["orc"], ["aldo"]]
    (blow,) = acts(state, "aldo")
    assert blow["status"] == "pending" and blow["segment"] == 11
    state, events = run(state, "resolve_all", [1, 15, 7])
    assert "Aldo hits Orc with the two-handed sword: 15 against 15 needed, 7 damage." in texts(events)
    assert state["combatants"]["orc"]["hp"] == 10 - 7


def test_on_a_tie_equal_order_values_strike_together_and_late_blows_keep_their_order() -> None:
    # sword 5 + 8 late = 13 strikes with the pike's 13; the halberd's 9 comes before both
    state = seat_battle([fighter("sw", hp=40), fighter("hal", weapon="halberd", hp=40),
                         fighter("pike", "B", weapon="pike", hp=40), fighter("x", "B", hp=40)], [])
    state, _ = run(state, "roll_order", [1], at=0.0)
    state, _ = declare(state, "sw", "melee", "pike", at=48.0)
    state, _ = declare(state, "hal", "melee", "x", at=49.0)
    state, _ = declare(state, "pike", "melee", "sw", at=50.0)
    state, _ = declare(state, "x", "await", at=51.0)
    state, _ = run(state, "roll_initiative", [5, 5])
    assert groups(state) == [["x"], ["hal"], ["sw", "pike"]]
    assert all(a["status"] == "pending" for a in state["queue"])


def test_a_slow_blow_is_lost_only_when_its_wielder_falls_before_it_comes() -> None:
    state = new_battle([fighter("dag", weapon="dagger", hp=30),
                        fighter("pike", "B", weapon="pike", hp=3, dies_at_zero=True)])
    state, _ = declare(state, "dag", "melee", "pike")
    state, _ = declare(state, "pike", "melee", "dag")
    state, _ = run(state, "roll_initiative", [1, 1])
    state, events = run(state, "resolve_all", [20, 4])
    assert "Pike is dead: the action is lost." in texts(events)
    assert [a["status"] for a in state["queue"]] == ["resolved", "lost"]


def test_a_blow_declared_ten_segments_late_still_comes_when_a_side_wins() -> None:
    state = seat_battle([fighter("aldo"), fighter("orc", "B", hp=5)], [])
    state, _ = run(state, "roll_order", [1], at=0.0)
    state, _ = declare(state, "aldo", "melee", "orc", at=61.0)
    state, _ = declare(state, "orc", "await", at=62.0)
    assert state["declarations"]["aldo"]["delay"] == 10
    state, _ = run(state, "roll_initiative", [6, 1])
    (blow,) = acts(state, "aldo")
    assert blow["status"] == "pending"
    state, events = run(state, "resolve_all", [19, 2])
    assert "Aldo hits Orc with the long sword: 19 against 15 needed, 2 damage." in texts(events)


def test_the_board_shows_a_late_blow_in_the_last_segment_and_names_its_order() -> None:
    state = new_battle([fighter("dag", weapon="dagger", hp=30), fighter("pike", "B", weapon="pike", hp=30)])
    state, _ = declare(state, "dag", "melee", "pike")
    state, _ = declare(state, "pike", "melee", "dag")
    state, _ = run(state, "roll_initiative", [4, 4])
    track = S.view_for(state, GM)["track"]
    assert [(t["combatant"], t["segment"], t["status"]) for t in track] == [("dag", 2, "pending"),
                                                                            ("pike", 10, "pending")]
    state, _ = run(state, "resolve_next", [1])
    assert "Next to resolve (after segment 10, order 13): Pike." in S.view_for(state, GM)["procedure"]["pending"]


# --- AD&D-7: extra attacks for a much faster weapon on a tie (option) ------------------------------

def extra_round(fast: str, slow: str, distance: int = 0) -> dict[str, Any]:
    state = new_battle([fighter("f", weapon=fast, hp=60), fighter("s", "B", weapon=slow, hp=60)],
                       fast_weapon_extra=True)
    f = state["combatants"]["f"]
    state = put(state, "s", f["x"], f["y"] + 1 + distance)  # distance 0: side by side
    state, _ = declare(state, "f", "melee", "s")
    state, _ = declare(state, "s", "melee", "f")
    state, _ = run(state, "roll_initiative", [3, 3])
    return state


@pytest.mark.parametrize(("fast", "slow", "why"), [
    ("dagger", "hammer", "speed factor 2 against 4: at most half, two blows first (option)"),
    ("long_sword", "two_handed_sword", "speed factor 5 against 10: at most half, two blows first (option)"),
    ("mace", "pike", "speed factor 7 against 13: 5 or more faster, two blows first (option)"),
])
def test_a_much_faster_weapon_strikes_twice_before_the_slower(fast: str, slow: str, why: str) -> None:
    state = extra_round(fast, slow)
    (first,) = acts(state, "f")
    assert first["attacks"] == 2 and first["why"][-1] == why
    assert groups(state) == [["f"], ["s"]]
    assert len(state["queue"]) == 2


def test_ten_or_more_faster_adds_a_third_blow_at_the_same_time_as_the_slower_weapon() -> None:
    state = extra_round("dagger", "pike")  # 2 against 13
    assert groups(state) == [["f"], ["f", "s"]]
    first, third = sorted(acts(state, "f"), key=lambda a: tuple(a["key"]))
    assert first["attacks"] == 2 and third["attacks"] == 1
    (pike,) = acts(state, "s")
    assert third["key"] == pike["key"]
    assert third["why"][-1] == "speed factor 2 against 13: 10 or more faster, a third blow with S's (option)"
    assert first["why"][-1] == "speed factor 2 against 13: 10 or more faster, two blows first (option)"
    # the dagger: two hits before the pike (20, 3; 20, 2), then the third blow (16, 4) and the pike (17, 5)
    state, events = run(state, "resolve_all", [20, 3, 20, 2, 16, 4, 17, 5])
    said = texts(events)
    assert said.count("F hits S with the dagger: 20 against 15 needed, 3 damage.") == 1
    assert "At the same moment: F, S. All of it happens." in said or "At the same moment: S, F. All of it happens." in said
    assert state["combatants"]["s"]["hp"] == 60 - 3 - 2 - 4
    assert state["combatants"]["f"]["hp"] == 60 - 5


def test_the_third_blow_comes_even_when_it_kills_the_slower_wielder_at_the_same_moment() -> None:
    state = new_battle([fighter("f", weapon="dagger", hp=60), fighter("s", "B", weapon="pike", hp=4,
                                                                     dies_at_zero=True)],
                       fast_weapon_extra=True)
    state = put(state, "s", state["combatants"]["f"]["x"], state["combatants"]["f"]["y"] + 1)
    state, _ = declare(state, "f", "melee", "s")
    state, _ = declare(state, "s", "melee", "f")
    state, _ = run(state, "roll_initiative", [3, 3])
    # two misses first; then the dagger's third blow kills the pike-man, whose blow lands at the same moment
    state, events = run(state, "resolve_all", [1, 1, 20, 4, 16, 5])
    assert state["combatants"]["f"]["hp"] == 55 and state["combatants"]["s"]["condition"] == "dead"


def test_no_extra_blows_when_not_much_faster() -> None:
    state = extra_round("long_sword", "mace")  # 5 against 7
    assert [a["attacks"] for a in state["queue"]] == [1, 1]


def test_no_extra_blows_while_closing_to_striking_range() -> None:
    state = extra_round("dagger", "pike", distance=3)
    assert [a["attacks"] for a in state["queue"]] == [1, 1]
    assert any("closing" in w for w in acts(state, "f")[0]["why"])


def test_no_extra_blows_against_a_charger_or_for_a_charger() -> None:
    state = new_battle([fighter("f", weapon="dagger", hp=60), fighter("s", "B", weapon="pike", hp=60)],
                       distance=3, fast_weapon_extra=True)
    state, _ = declare(state, "f", "melee", "s")
    state, _ = declare(state, "s", "charge", "f")
    state, _ = run(state, "roll_initiative", [3, 3])
    assert all(a["attacks"] == 1 for a in state["queue"])


def test_no_extra_blows_without_the_option_or_without_a_tie() -> None:
    state = new_battle([fighter("f", weapon="dagger", hp=60), fighter("s", "B", weapon="pike", hp=60)])
    state, _ = declare(state, "f", "melee", "s")
    state, _ = declare(state, "s", "melee", "f")
    state, _ = run(state, "roll_initiative", [3, 3])
    assert [a["attacks"] for a in state["queue"]] == [1, 1]
    state = new_battle([fighter("f", weapon="dagger", hp=60), fighter("s", "B", weapon="pike", hp=60)],
                       fast_weapon_extra=True)
    state, _ = declare(state, "f", "melee", "s")
    state, _ = declare(state, "s", "melee", "f")
    state, _ = run(state, "roll_initiative", [3, 4])
    assert [a["attacks"] for a in state["queue"]] == [1, 1]


def test_the_option_is_explained_in_the_form_and_the_help() -> None:
    option = next(f for f in S.option_fields() if f.name == "fast_weapon_extra")
    assert "twice" in option.help and "10" in option.help and "charg" in option.help
    help_text = " ".join(h["text"] for h in S.help())
    assert "at most half" in help_text and "10 or more" in help_text


# --- AD&D-4: morale by monster type, and what a failure does ---------------------------------------

def test_morale_score_is_by_hit_dice_and_the_plus_of_n_plus_m() -> None:
    assert morale_score(4, 4) == 69  # a 4+4 monster: 50 + 15 + 4
    assert morale_score(1) == 50 and morale_score(0) == 50
    assert morale_score(3, 1, -5) == 50 + 10 + 1 - 5
    assert "hp" not in inspect.signature(morale_score).parameters


@pytest.mark.parametrize(("margin", "band"), [
    (1, "fall_back"), (15, "fall_back"), (16, "retreat"), (30, "retreat"), (31, "panic"), (50, "panic"),
    (51, "surrender"), (140, "surrender"),
])
def test_morale_failure_bands_by_margin(margin: int, band: str) -> None:
    assert morale_failure(margin)[0] == band
    assert [b[1] for b in MORALE_BANDS] == ["fall_back", "retreat", "panic", "surrender"]


def morale_battle(**monster: Any) -> dict[str, Any]:
    return new_battle([fighter("hero", hp=30), fighter("ogre", "B", **monster)])


def test_a_4_plus_4_monster_has_69_percent_however_many_hit_points_it_has() -> None:
    for hp in (40, 26, 3):
        state = morale_battle(hp=40, hit_dice=4, hit_dice_plus=4)
        state, _ = run(state, "set_hp", combatant="ogre", hp=hp)
        held, _ = run(state, "check_morale", [69], side="B")
        assert held["combatants"]["ogre"].get("morale") is None
        broke, events = run(state, "check_morale", [70], side="B")
        assert events[0]["text"] == ("Morale check, d100 70+0 = 70: Ogre fails by 1 (69%) and falls back, "
                                     "fighting.")
        assert broke["combatants"]["ogre"]["morale"] == "fall_back"
        seen = next(c for c in S.view_for(state, GM)["combatants"] if c["id"] == "ogre")
        assert (seen["hit_dice"], seen["hit_dice_plus"], seen["morale_score"]) == (4, 4, 69)
        hidden = next(c for c in S.view_for(state, SPECTATOR)["combatants"] if c["id"] == "ogre")
        assert "morale_score" not in hidden and "hit_dice_plus" not in hidden


def test_the_plus_is_in_the_lineup_form_and_the_presets() -> None:
    field = next(f for f in S.combatant_fields() if f.name == "hit_dice_plus")
    assert field.kind == "int" and field.min == 0 and field.max is not None and field.max >= 8
    assert field.group == next(f for f in S.combatant_fields() if f.name == "hit_dice").group
    by_name = {p["name"]: p for p in PRESETS}
    assert (by_name["Bugbear"]["hit_dice"], by_name["Bugbear"]["hit_dice_plus"]) == (3, 1)
    assert (by_name["Ogre"]["hit_dice"], by_name["Ogre"]["hit_dice_plus"]) == (4, 1)
    assert (by_name["Owlbear"]["hit_dice"], by_name["Owlbear"]["hit_dice_plus"]) == (5, 2)
    for p in S.presets():
        S.validate_combatant(p)
    with pytest.raises(InvalidDeclaration, match="Hit Dice"):
        S.validate_combatant({"name": "Troll", "hit_dice": 6, "hit_dice_plus": -1})
    assert S.validate_combatant({"name": "Orc"})["hit_dice_plus"] == 0


def opened(**monster: Any) -> dict[str, Any]:
    """The opening morale check is next; the parties stand 3 inches apart."""
    state, _ = RULES.start([fighter("hero", hp=30), fighter("gob", "B", **monster), fighter("gob2", "B", hit_dice=20,
                                                                                    hit_dice_plus=20)])
    for kind in ("check_reaction", "check_surprise"):
        state, _ = run(state, kind, skip=True)
    state, _ = run(state, "check_distance", skip=True, distance=3)
    return state


@pytest.mark.parametrize(("roll", "modifier", "band", "words", "declared"), [
    (60, 0, "fall_back", "fails by 10 (50%) and falls back, fighting", None),
    (66, 0, "retreat", "fails by 16 (50%) and disengages to retreat", "flee"),
    (81, 0, "panic", "fails by 31 (50%) and flees in panic", "flee"),
    (100, 1, "surrender", "fails by 51 (50%) and surrenders", None),
])
def test_opening_morale_failure_acts_by_its_band(roll: int, modifier: int, band: str, words: str,
                                                 declared: str | None) -> None:
    state = opened(hit_dice=1)
    state, events = run(state, "check_morale", [roll], side="B", modifier=modifier)
    assert f"Gob {words}" in events[0]["text"]
    assert "Gob2 holds (165%)" in events[0]["text"]
    assert events[0]["data"]["results"] == {"gob": band}
    assert events[0]["data"]["failed"] == ["gob"]
    gob = state["combatants"]["gob"]
    assert gob["morale"] == band
    assert state["declarations"].get("gob", {}).get("kind") == declared
    if band == "surrender":
        assert gob["condition"] == "surrendered"
        assert "gob" not in actors(state)
        template = next(t for t in S.view_for(state, GM)["legal"] if t.get("combatant") == "hero")
        melee = next(a for a in template["actions"] if a["kind"] == "melee")
        assert [t["id"] for t in melee["targets"]] == ["gob2"]
        with pytest.raises(IllegalDeclaration, match="surrendered"):
            declare(state, "hero", "melee", "gob")
    view = S.view_for(state, SPECTATOR)
    status = next(c["status"] for c in view["combatants"] if c["id"] == "gob")
    assert status == {"fall_back": "falling back", "retreat": "retreating", "panic": "fleeing in panic",
                      "surrender": "surrendered"}[band]


def test_a_monster_falling_back_keeps_fighting() -> None:
    state = new_battle([fighter("hero", hp=30), fighter("gob", "B", hp=10)])
    state, _ = declare(state, "hero", "melee", "gob")
    state, _ = declare(state, "gob", "melee", "hero")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "check_morale", [55], combatants=["gob"])
    assert "falls back, fighting" in events[0]["text"]
    state, events = run(state, "resolve_all", [1, 20, 4])
    assert "Gob hits Hero with the long sword: 20 against 15 needed, 4 damage." in texts(events)
    state, _ = run(state, "bleed")
    state, events = run(state, "next_round")
    assert "gob" not in state["declarations"]  # it declares freely, still fighting


def test_mid_round_retreat_and_panic_replace_the_action_and_leave_the_fight() -> None:
    state = new_battle([fighter("hero", hp=30), fighter("gob", "B"), fighter("gob2", "B")])
    state, _ = declare(state, "hero", "melee", "gob")
    state, _ = declare(state, "gob", "melee", "hero")
    state, _ = declare(state, "gob2", "melee", "hero")
    state, _ = run(state, "roll_initiative", [6, 1])
    state, events = run(state, "check_morale", [75], combatants=["gob"])
    state, events2 = run(state, "check_morale", [90], combatants=["gob2"])
    state, events = run(state, "resolve_all")
    said = texts(events)
    assert "Gob disengages and retreats from the fight (morale failed by 25: retreat replaces the declared " \
           "action)." in said
    assert "Gob2 flees the fight in panic (morale failed by 40: flight replaces the declared action)." in said
    assert state["combatants"]["gob"]["condition"] == "fled" and state["combatants"]["gob2"]["condition"] == "fled"
    statuses = {c["id"]: c["status"] for c in S.view_for(state, SPECTATOR)["combatants"]}
    assert statuses["gob"] == "retreated" and statuses["gob2"] == "fled in panic"


def test_mid_round_surrender_stops_its_blows_and_blows_at_it() -> None:
    state = new_battle([fighter("hero", hp=30), fighter("gob", "B", hp=30)])
    state, _ = declare(state, "hero", "melee", "gob")
    state, _ = declare(state, "gob", "melee", "hero")
    state, _ = run(state, "roll_initiative", [1, 6])  # B first
    state, events = run(state, "check_morale", [100], combatants=["gob"], modifier=10)
    assert "Gob fails by 60 (50%) and surrenders." in events[0]["text"]
    assert "Gob surrenders and stops fighting." in texts(events)
    state, events = run(state, "resolve_all")
    assert "Gob has surrendered: Hero holds the blow." in texts(events)
    assert state["combatants"]["gob"]["hp"] == 30 and state["combatants"]["hero"]["hp"] == 30
    state, _ = run(state, "bleed")
    recap = S.view_for(state, SPECTATOR)["recap"]["lines"]
    assert "Side B: Gob surrendered." in recap
    assert "One side can fight no more: time to end the encounter." in recap


def test_an_undeclared_monster_that_breaks_during_declarations_flees_at_once() -> None:
    state = new_battle([fighter("hero", hp=30), fighter("gob", "B"), fighter("gob2", "B")])
    state, _ = declare(state, "gob2", "melee", "hero")
    state, events = run(state, "check_morale", [95], combatants=["gob"])
    assert state["declarations"]["gob"]["kind"] == "flee"
    state, _ = declare(state, "hero", "melee", "gob")
    assert state["phase"] == "initiative"


def test_the_help_explains_the_score_and_the_bands() -> None:
    text = " ".join(h["text"] for h in S.help()).lower()
    assert "4+4" in text and "hit points" in text
    for words in ("1 to 15", "16 to 30", "31 to 50", "51 or more"):
        assert words in text
    assert "current hit points" in text


# --- properties ----------------------------------------------------------------------------------

MELEE = sorted(WEAPONS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    weapons=st.lists(st.sampled_from(MELEE), min_size=2, max_size=6),
    hps=st.lists(st.integers(1, 12), min_size=6, max_size=6),
    routines=st.lists(st.integers(1, 3), min_size=6, max_size=6),
    mortal=st.lists(st.booleans(), min_size=6, max_size=6),
    targets=st.lists(st.integers(0, 5), min_size=6, max_size=6),
    seconds=st.lists(st.floats(0, 90), min_size=6, max_size=6),
    faces=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    extra=st.booleans(),
    seed=st.text(min_size=1, max_size=8),
)
def test_property_a_round_never_loses_a_blow_of_a_combatant_still_able_to_act(
        weapons: list[str], hps: list[int], routines: list[int], mortal: list[bool], targets: list[int],
        seconds: list[float],
        faces: tuple[int, int], extra: bool, seed: str) -> None:
    n = len(weapons)
    lineup = [fighter(f"c{i}", "AB"[i % 2], weapon=w, hp=hps[i], dies_at_zero=mortal[i], damage="1d8",
                      attacks=routines[i]) for i, w in enumerate(weapons)]
    state = seat_battle(lineup, [], fast_weapon_extra=extra)
    for i in range(n):  # two facing lines, neighbours side by side, so the extra blows can come
        state = put(state, f"c{i}", 2 + i, 5 + i % 2)
    state, _ = run(state, "roll_order", [1] if n > 1 else [], at=0.0)
    clock = 0.0
    for i in range(n):
        foes = [j for j in range(n) if j % 2 != i % 2]
        clock += seconds[i]
        state, _ = declare(state, f"c{i}", "melee", f"c{foes[targets[i] % len(foes)]}", at=clock)
    state, _ = run(state, "roll_initiative", list(faces))
    declared = {a["combatant"]: sum(x["attacks"] for x in acts(state, a["combatant"])) for a in state["queue"]}
    assert all(a["status"] == "pending" for a in state["queue"])
    state, events = RULES.play(state, {"type": "resolve_all"}, dice=SeededDice(seed))
    swung: dict[str, int] = {}
    for e in events:
        if e["type"] in ("attack.hit", "attack.missed"):
            swung[e["data"]["attacker"]] = swung.get(e["data"]["attacker"], 0) + 1
    lost_events = {e["data"]["combatant"] for e in events if e["type"] == "action.lost"}
    for a in state["queue"]:
        c = state["combatants"][a["combatant"]]
        assert a["status"] in ("resolved", "lost")
        if a["status"] == "lost":
            assert c["condition"] != "ok" and a["combatant"] in lost_events
    for cid, count in declared.items():
        if state["combatants"][cid]["condition"] == "ok":
            target = state["declarations"][cid]["target"]
            wasted = any(e["type"] == "attack.wasted" and e["data"]["attacker"] == cid for e in events)
            assert swung.get(cid, 0) == count or wasted and state["combatants"][target]["condition"] != "ok"


@settings(max_examples=60, deadline=None)
@given(hit_dice=st.integers(0, 20), plus=st.integers(0, 20), mod=st.integers(-50, 50),
       hps=st.lists(st.integers(1, 500), min_size=1, max_size=4), roll=st.integers(1, 100),
       modifier=st.integers(-100, 100))
def test_property_the_morale_score_never_depends_on_current_hit_points(
        hit_dice: int, plus: int, mod: int, hps: list[int], roll: int, modifier: int) -> None:
    state = new_battle([fighter("hero"), fighter("mon", "B", hit_dice=hit_dice, hit_dice_plus=plus, morale_mod=mod,
                                                hp=300)])
    _, fresh = run(state, "check_morale", [roll], side="B", modifier=modifier)
    for hp in hps:
        wounded, _ = run(state, "set_hp", combatant="mon", hp=hp)
        _, events = run(wounded, "check_morale", [roll], side="B", modifier=modifier)
        assert events[0]["text"] == fresh[0]["text"]
        assert events[0]["data"]["results"] == fresh[0]["data"]["results"]
    score = 50 + 5 * max(0, hit_dice - 1) + plus + mod
    assert f"({score}%)" in fresh[0]["text"]
    margin = roll + modifier - score
    assert fresh[0]["data"]["results"] == ({} if margin <= 0 else {"mon": morale_failure(margin)[0]})


# --- AD&D-9: a winner's shooter who falls short of the enemy's die shoots after the enemy's whole turn -----

def test_a_winning_archer_who_falls_short_shoots_after_the_losing_sides_blows() -> None:
    state = new_battle([fighter("bow", missile="long_bow", reaction_mod=-2, hp=3, dies_at_zero=True,
                                controller="seat", seat="s1"), fighter("orc", "B", hp=20)])
    state, _ = declare(state, "orc", "melee", "bow")
    state, _ = run(state, "roll_order", at=0.0)
    state, _ = declare(state, "bow", "missile", "orc", at=1.0)
    state, _ = run(state, "roll_initiative", [5, 4])  # side A wins, but 5 − 2 = 3 < 4
    assert groups(state) == [["orc"], ["bow"]]
    (arrow,) = acts(state, "bow")
    assert arrow["why"][-1] == "shoots last: reaction −2 + 5 < 4, after everything side B does this round"
    # the resolution queue on the DM's console (and on the archer's phone, which sees no hidden orc) says why
    assert [t["combatant"] for t in S.view_for(state, GM)["track"]] == ["orc", "bow"]
    for viewer in (GM, Viewer.player("s1")):
        last = S.view_for(state, viewer)["track"][-1]
        assert last["combatant"] == "bow" and last["why"][-1].startswith("shoots last: reaction −2 + 5 < 4")
    # the orc's blow comes first and fells the archer, whose arrow is never loosed
    state, events = run(state, "resolve_all", [20, 8])
    assert "Orc hits Bow with the long sword: 20 against 15 needed, 8 damage." in texts(events)
    assert "Bow is dead: the action is lost." in texts(events)
    assert arrow["id"] in {a["id"] for a in state["queue"] if a["status"] == "lost"}


def test_a_winning_archer_whose_sum_equals_the_enemy_die_shoots_with_the_enemy_missiles() -> None:
    state = new_battle([fighter("bow", missile="long_bow", reaction_mod=-1), fighter("orc", "B"),
                        fighter("sling", "B", missile="sling")])
    state, _ = declare(state, "bow", "missile", "sling")
    state, _ = declare(state, "orc", "melee", "bow")
    state, _ = declare(state, "sling", "missile", "bow")
    state, _ = run(state, "roll_initiative", [5, 4])  # 5 − 1 = 4: equal
    assert groups(state) == [["bow", "sling"], ["orc"]]


def test_the_help_says_a_late_archer_waits_for_the_whole_enemy_turn() -> None:
    help_text = " ".join(section["text"] for section in S.help())
    assert "shoots last" in help_text and "melee blows too" in help_text
