"""Olympia bounds: the largest army the lineup accepts, and the work one step may do.

No single command may hold up the server: a side brings at most ``MAX_MEN_PER_SIDE`` men (the
lineup validator refuses more with a clear error), and a step by round or to the end fights only as
many phases as its work budget holds, counted in men (never in seconds, so replays agree), then says
how to go on.
"""

from __future__ import annotations

import pytest

from rules.core import Viewer
from rules.dice import SeededDice
from rules.errors import IllegalDeclaration, InvalidDeclaration
from rules.systems.olympia import Olympia
from rules.systems.olympia.army import phase_work
from rules.systems.olympia.data import MAX_MEN_PER_SIDE, MAX_SPECIALS, STEP_WORK_BUDGET
from tests.rules.harness import of_type
from tests.rules.test_olympia import RULES, noble
from tests.rules.test_olympia import start as begun

GM = Viewer.gm()
SYSTEM = Olympia()


def start(lineup, options=None):
    """The battle set up and begun: its state."""
    return begun(lineup, options)[0]


# --- the largest army ------------------------------------------------------------------------------


def test_the_maximum_is_at_least_a_million_men_a_side() -> None:
    assert MAX_MEN_PER_SIDE >= 1_000_000


def test_a_side_over_the_maximum_is_refused_with_a_clear_error() -> None:
    # every field within its own bounds, but two nobles of side B together bring one man too many
    lineup = [
        noble("osswid", "A", soldier=1),
        noble("brennan", "B", soldier=MAX_MEN_PER_SIDE // 2, pikeman=MAX_MEN_PER_SIDE // 2),
        noble("vassal", "B", archer=1),
    ]
    with pytest.raises(InvalidDeclaration) as refused:
        SYSTEM.validate_draft(lineup)
    assert str(refused.value) == (
        f"side B has {MAX_MEN_PER_SIDE + 1:,} men; one side may bring at most {MAX_MEN_PER_SIDE:,} "
        "(a bigger battle would hold up the server): 1 too many"
    )
    with pytest.raises(InvalidDeclaration, match="at most"):
        SYSTEM.validate_lineup(lineup)
    with pytest.raises(InvalidDeclaration, match="at most"):
        RULES.start(lineup)


def test_the_widest_form_lineup_is_refused() -> None:
    # what the form allows field by field: 64 nobles, every kind at its field maximum
    fields = {f.name: f.max for f in SYSTEM.combatant_fields() if f.group == "Troops"}
    lineup = [noble(f"n{i}", "AB"[i % 2], **fields) for i in range(SYSTEM.max_combatants)]
    with pytest.raises(InvalidDeclaration, match="side A has 736,000,000 men"):
        SYSTEM.validate_draft(lineup)


def test_exactly_the_maximum_is_accepted() -> None:
    lineup = [noble("osswid", "A", soldier=MAX_MEN_PER_SIDE), noble("brennan", "B", pikeman=MAX_MEN_PER_SIDE // 2, archer=MAX_MEN_PER_SIDE // 2, behind=0)]
    assert len(SYSTEM.validate_lineup(lineup)) == 2


def test_special_attacks_are_limited() -> None:
    state, _ = RULES.start([noble("osswid", "A", soldier=1), noble("brennan", "B", soldier=1)])
    for _ in range(MAX_SPECIALS):
        state, _ = RULES.play(state, {"type": "add_special", "preset": "giant", "side": "A"})
    with pytest.raises(IllegalDeclaration, match=f"at most {MAX_SPECIALS} special attacks"):
        RULES.play(state, {"type": "add_special", "preset": "giant", "side": "A"})


# --- the work of one step -----------------------------------------------------------------------------


def test_phase_work_counts_men_groups_and_specials() -> None:
    state = start([noble("osswid", "A", soldier=10, archer=5, behind=0), noble("brennan", "B", knight=3)])
    # 18 men + 2 nobles; groups: 2 nobles + 3 kinds; + 10,000 for the phase
    assert phase_work(state) == 20 + 50 * 5 + 10_000
    state["combatants"]["brennan"]["state"] = "wounded"
    assert phase_work(state) == 19 + 50 * 5 + 10_000


def test_one_command_at_the_maximum_fights_one_phase_and_says_how_to_go_on() -> None:
    lineup = [
        noble("osswid", "A", soldier=MAX_MEN_PER_SIDE // 2, pikeman=MAX_MEN_PER_SIDE // 2),
        noble("brennan", "B", soldier=MAX_MEN_PER_SIDE // 2, light_foot=MAX_MEN_PER_SIDE // 2),
    ]
    state = start(lineup)
    assert phase_work(state) > STEP_WORK_BUDGET
    new, events = RULES.play(state, {"type": "step", "by": "battle"}, dice=SeededDice("max"))
    assert len(of_type(events, "phase.resolved")) == 1
    assert new["status"] == "active"
    paused = events[-1]
    assert paused["type"] == "battle.paused"
    assert paused["text"].startswith("The battle goes on: this step fought 1 phase")
    assert paused["text"].endswith("Step again to fight on.")
    assert paused["data"]["next_phase"] == "melee" and paused["data"]["round"] == 2
    # a round at the maximum is bounded the same way, and says the round goes on
    again, events = RULES.play(new, {"type": "step", "by": "round"}, dice=SeededDice("max-2"))
    assert len(of_type(events, "phase.resolved")) == 1
    if again["status"] == "active":
        assert events[-1]["type"] == "battle.paused" and "the round is not over yet" in events[-1]["text"]


def test_the_budget_is_counted_not_timed_so_replays_agree() -> None:
    # 850,000 men on the field: two phases a step at first, more as the armies shrink
    lineup = [noble("a", "A", soldier=200_000, archer=100_000, behind=0), noble("bows", "A", behind=1, archer=150_000),
              noble("b", "B", pikeman=250_000, knight=50_000), noble("bb", "B", behind=2, heavy_crossbowman=100_000)]
    state = start(lineup)
    runs = []
    for _ in range(2):
        s, seen = state, []
        for n in range(200):
            if s["status"] != "active":
                break
            s, events = RULES.play(s, {"type": "step", "by": "battle"}, dice=SeededDice(f"replay-{n}"))
            seen.append([e["type"] for e in events])
            paused = of_type(events, "battle.paused")
            if paused:
                data = paused[0]["data"]
                assert data["phases"] == len(of_type(events, "phase.resolved"))
                assert data["work"] <= STEP_WORK_BUDGET and data["work"] + phase_work(s) > STEP_WORK_BUDGET
        runs.append((s, seen))
    assert runs[0] == runs[1]
    state_after, seen = runs[0]
    assert state_after["status"] == "ended"
    # every step but the last paused; each fought no more than its budget allowed
    assert all(kinds[-1] == "battle.paused" for kinds in seen[:-1]) and len(seen) > 1
    assert seen[0].count("phase.resolved") == 2


def test_a_round_that_fits_the_budget_is_fought_whole() -> None:
    state = start([noble("a", "A", soldier=30, pikeman=10), noble("b", "B", fanatic=30), noble("bb", "B", behind=1, archer=10)])
    new, events = RULES.play(state, {"type": "step", "by": "round"}, dice=SeededDice("whole"))
    assert not of_type(events, "battle.paused")
    assert new["status"] == "ended" or (new["round"] == 2 and new["next_phase"] == "special")
