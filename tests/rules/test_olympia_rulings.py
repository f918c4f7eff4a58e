"""Olympia corners settled by the rulings: the missile cap (Olympia-5) and prisoners (Olympia-10).

Scripted dice follow the order documented in rules/systems/olympia/__init__.py: capping keys, target picks and hit
rolls per attacking side (A first), then wound rolls, then (when a side wins with the prisoners
option on) one d100 per surviving noble of the loser in lineup order.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.core import Viewer
from rules.dice import SeededDice
from rules.systems.olympia import Olympia
from tests.rules.harness import of_type
from tests.rules.test_olympia import RULES, noble, step
from tests.rules.test_olympia import start as begun

GM = Viewer.gm()
SYSTEM = Olympia()


def start(lineup, options=None):
    """The battle set up and begun: its state."""
    return begun(lineup, options)[0]


# --- Olympia-5: the missile cap counts only front-row men that could be targeted now ------------------


def test_a_noble_covered_by_his_men_does_not_count_toward_the_missile_cap() -> None:
    # A's front row: Osswid and one soldier. Osswid is covered by his soldier: the cap is 1, not 2.
    state = start([noble("osswid", "A", leader=True, soldier=1), noble("bows", "A", behind=1, archer=5), noble("brennan", "B", soldier=30)])
    assert state["next_phase"] == "special"
    # keys of the five archers: archer 2 (key 1) shoots; picks soldier 3 of B's 30 (Brennan is covered);
    # missile 35 against defence 5 -> 7 in 8: an 8 misses
    state, events = step(state, [9, 1, 8, 7, 6, 3, 8])
    strike = of_type(events, "phase.resolved")[0]["data"]["strikes"][0]
    assert strike["attacks"] == 1 and strike["capped"] == 5 and strike["hits"] == 0


def test_the_leader_counts_only_once_he_could_be_targeted() -> None:
    # two nobles without men in A's front row: the vassal can be targeted, the leader not yet -> cap 1
    state = start([noble("lead", "A", leader=True), noble("vassal", "A"), noble("bows", "A", behind=1, archer=5), noble("brennan", "B", soldier=30)])
    state, events = step(state, [9, 1, 8, 7, 6, 3, 8])
    strike = of_type(events, "phase.resolved")[0]["data"]["strikes"][0]
    assert strike["attacks"] == 1 and strike["capped"] == 5


def test_an_exposed_noble_and_the_men_of_others_count() -> None:
    # A's front row: the vassal's two soldiers (he is covered), the leader (not targetable while the
    # vassal fights): cap 2, where counting every front-row person gave 4
    state = start([noble("lead", "A", leader=True), noble("vassal", "A", soldier=2), noble("bows", "A", behind=1, archer=5), noble("brennan", "B", soldier=30)])
    state, events = step(state, [9, 1, 8, 2, 6, 3, 4, 8, 8])
    strike = of_type(events, "phase.resolved")[0]["data"]["strikes"][0]
    assert strike["attacks"] == 2 and strike["capped"] == 5


def targetable_front(state, side: str) -> int:
    """Independent count of ruling Olympia-3/5: front-row men, plus front-row nobles without men of
    their own, the stack leader only when nobody else of his side is left in the front row."""
    front = [c for c in state["combatants"].values() if c["side"] == side and c["behind"] == 0]
    men = sum(sum(c["troops"].values()) for c in front)
    present = [c for c in front if c["state"] == "fighting" or sum(c["troops"].values())]
    nobles = 0
    for c in front:
        if c["state"] != "fighting" or sum(c["troops"].values()):
            continue
        if c["leader"] and any(o is not c for o in present):
            continue
        nobles += 1
    return men + nobles


troop_counts = st.dictionaries(st.sampled_from(["soldier", "pikeman", "knight", "archer", "horse_archer"]), st.integers(0, 12), max_size=3)
bows = st.dictionaries(st.sampled_from(["archer", "heavy_crossbowman", "elite_archer"]), st.integers(0, 40), max_size=2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    front_a=troop_counts, front_b=troop_counts, back_a=bows, back_b=bows, vassal=st.booleans(),
    volley=st.booleans(), structure=st.sampled_from(["none", "tower"]), seed=st.text(min_size=1, max_size=6),
)
def test_missile_attacks_never_exceed_the_targetable_front_row(front_a, front_b, back_a, back_b, vassal, volley, structure, seed) -> None:
    lineup = [
        noble("a1", "A", leader=True, **front_a),
        noble("a2", "A", behind=1, **back_a),
        noble("b1", "B", leader=True, **front_b),
        noble("b2", "B", behind=2, **back_b),
    ]
    if vassal:
        lineup.append(noble("a3", "A", soldier=1))
    state = start(lineup, {"opening_volley": volley, "structure_a": structure})
    dice = SeededDice(seed)
    for _ in range(40):
        if state["status"] != "active":
            break
        before = state
        state, events = RULES.play(state, {"type": "step", "by": "phase"}, dice=dice)
        report = of_type(events, "phase.resolved")[0]["data"]
        if report["phase"] not in ("missile", "volley"):
            continue
        for strike in report["strikes"]:
            cap = targetable_front(before, strike["side"])
            assert strike["attacks"] <= cap
            if strike["capped"]:
                assert strike["attacks"] == cap


# --- Olympia-10: prisoners have a chance --------------------------------------------------------------


def test_prisoner_chance_is_clamped_between_25_and_75() -> None:
    from rules.systems.olympia.army import prisoner_chance

    assert prisoner_chance(100, 100) == 25
    assert prisoner_chance(250, 100) == 62
    assert prisoner_chance(299, 100) == 74
    assert prisoner_chance(1000, 100) == 75
    assert prisoner_chance(1, 100) == 25
    assert prisoner_chance(0, 0) == 75
    assert prisoner_chance(7, 0) == 75


def prisoners_battle() -> dict:
    # B's front row: Brennan alone (the leader, exposed); the vassal (one soldier) and the squire wait behind
    lineup = [
        noble("osswid", "A", knight=1),
        noble("brennan", "B", leader=True),
        noble("vassal", "B", behind=1, soldier=1),
        noble("squire", "B", behind=2),
    ]
    return start(lineup, {"prisoners": True, "break_point_b": 90})


# A: Osswid hits Brennan (1 of 1-2), the knight misses (17 of 1-17); B: Brennan misses the knight (17);
# Brennan's wound 20; B falls to 330 of 490 (threshold 441) and breaks
MELEE = [0, 0, 1, 17, 0, 17, 20]


def test_every_surviving_noble_of_the_loser_rolls_wounded_or_not() -> None:
    state = prisoners_battle()
    # heads: A 2 (knight, Osswid), B 3 (soldier, vassal, squire) -> 25 x 2 / 3 = 16 -> 25%
    # d100 in lineup order: Brennan 25 (taken), vassal 26 (escapes), squire 1 (taken, unwounded)
    state, events = step(state, [*MELEE, 25, 26, 1])
    assert state["outcome"]["winner"] == "A"
    states = {cid: state["combatants"][cid]["state"] for cid in ("brennan", "vassal", "squire")}
    assert states == {"brennan": "prisoner", "vassal": "fighting", "squire": "prisoner"}
    taken = of_type(events, "prisoner.taken")
    assert [e["data"] for e in taken] == [{"combatant": "brennan", "chance": 25}, {"combatant": "squire", "chance": 25}]
    assert [r["faces"] for e in taken for r in e["rolls"]] == [[25], [1]]
    escaped = of_type(events, "prisoner.escaped")
    assert escaped[0]["data"] == {"combatant": "vassal", "chance": 25} and escaped[0]["rolls"][0]["faces"] == [26]


def test_a_wounded_noble_can_escape() -> None:
    state = prisoners_battle()
    state, events = step(state, [*MELEE, 26, 99, 100])
    assert all(state["combatants"][cid]["state"] != "prisoner" for cid in state["combatants"])
    assert state["combatants"]["brennan"]["state"] == "wounded"
    assert len(of_type(events, "prisoner.escaped")) == 3 and not of_type(events, "prisoner.taken")


def test_the_chance_grows_with_the_winners_numbers() -> None:
    # A: 9 knights + Osswid = 10 heads (if none fall); B after the phase: the vassal's soldier, the vassal,
    # the squire = 3 -> 25 x 10 / 3 = 83 -> 75%
    lineup = [
        noble("osswid", "A", knight=9),
        noble("brennan", "B", leader=True),
        noble("vassal", "B", behind=1, soldier=1),
        noble("squire", "B", behind=2),
    ]
    state = start(lineup, {"prisoners": True, "break_point_b": 90})
    # A: ten attacks on Brennan (cap 4 x 1 = 4): keys pick Osswid and knights 1-3; all hit;
    # B: Brennan (cap 4 x 9 knights) picks knight 0 and misses
    keys = [0, 1, 2, 3, 10, 11, 12, 13, 14, 15]
    faces = [*keys, 0, 0, 0, 0, 1, 1, 1, 1, 0, 17, 20]
    state, events = step(state, [*faces, 75, 76, 75])
    assert state["outcome"]["winner"] == "A"
    assert [e["data"]["chance"] for e in events if e["type"].startswith("prisoner.")] == [75, 75, 75]
    assert [state["combatants"][c]["state"] for c in ("brennan", "vassal", "squire")] == ["prisoner", "fighting", "prisoner"]


def test_the_loser_with_nobody_left_loses_his_nobles_at_75() -> None:
    state = start([noble("osswid", "A", knight=1), noble("brennan", "B", leader=True)], {"prisoners": True})
    state, events = step(state, [*MELEE, 75])
    assert state["combatants"]["brennan"]["state"] == "prisoner"
    assert of_type(events, "prisoner.taken")[0]["data"]["chance"] == 75


def test_a_tie_takes_no_prisoners() -> None:
    state = start([noble("osswid", "A"), noble("brennan", "B")], {"prisoners": True})
    state, events = step(state, [0, 1, 0, 1, 5, 5])  # both wounded: both sides break
    assert state["outcome"]["result"] == "tie"
    assert not [e for e in events if e["type"].startswith("prisoner.")]
    assert {c["state"] for c in state["combatants"].values()} == {"wounded"}


def test_prisoners_off_rolls_nothing() -> None:
    state = start([noble("osswid", "A", knight=1), noble("brennan", "B", leader=True), noble("vassal", "B", behind=1)], {"break_point_b": 90})
    state, events = step(state, MELEE)
    assert state["outcome"]["winner"] == "A" and not [e for e in events if e["type"].startswith("prisoner.")]
