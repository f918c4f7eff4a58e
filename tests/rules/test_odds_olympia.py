"""Olympia odds: the simulation agrees (within 4σ) with battles fought here one by one through ``apply``
with their own seeds, answers the same question the same way, and ignores what a viewer may not see."""

from __future__ import annotations

import math
from typing import Any

import pytest

from rules import SeededDice, Viewer, engine, get_system
from rules.errors import IllegalDeclaration, InvalidDeclaration
from tests.rules.harness import Rules

OLYMPIA = get_system("olympia")
RULES = Rules(OLYMPIA)
GM = Viewer.gm()


def battle(a: dict[str, Any], b: dict[str, Any], **options: Any) -> dict[str, Any]:
    lineup = [
        {"name": "Lord Ash", "id": "a", "side": "A", "leader": True, **a},
        {"name": "Lady Birch", "id": "b", "side": "B", "leader": True, "controller": "seat", "seat": "s2", **b},
    ]
    state, _ = RULES.start(lineup, options)
    return state


def fought_here(state: dict[str, Any], n: int) -> tuple[dict[str, int], list[int]]:
    """Independent runs: each battle its own seeded dice, "fight to the end" until it ends."""
    wins = {"A": 0, "B": 0, None: 0}
    losses_a = []
    start, _ = RULES.play(state, {"type": "begin"})
    men_a = sum(sum(c["troops"].values()) for c in start["combatants"].values() if c["side"] == "A")
    for i in range(n):
        current = start
        dice = SeededDice(f"independent-{i}")
        while current["status"] == "active":
            current, _ = RULES.play(current, {"type": "step", "by": "battle"}, dice=dice)
        wins[current["outcome"]["winner"]] += 1
        losses_a.append(men_a - sum(sum(c["troops"].values()) for c in current["combatants"].values() if c["side"] == "A"))
    return wins, losses_a


def by_key(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["key"]: item for item in items}


def test_simulation_agrees_with_independent_battles_within_four_sigma() -> None:
    state = battle({"soldier": 31}, {"soldier": 30})  # about 40 % : 20 % : 40 % tie
    answer = engine.odds(OLYMPIA, state, GM, {"battles": 400})
    assert answer["method"] == "simulation" and answer["battles"] == 400
    outcomes = by_key(answer["outcomes"])
    n = 600
    wins, losses_a = fought_here(state, n)
    assert 0.1 < outcomes["win_A"]["p"] < 0.9 and 0.05 < outcomes["tie"]["p"] < 0.95, "a battle worth checking"
    wins["tie"] = wins.pop(None)
    for side in ("A", "B", "tie"):
        key = f"win_{side}" if side != "tie" else "tie"
        p_sim, p_here = outcomes[key]["p"], wins[side] / n
        pooled = (p_sim * 400 + p_here * n) / (400 + n)
        sigma = math.sqrt(max(pooled * (1 - pooled), 1e-9) * (1 / 400 + 1 / n))
        assert abs(p_sim - p_here) <= 4 * sigma + 1e-9, (side, p_sim, p_here)
        low, high = outcomes[key]["interval"]
        assert low <= p_sim <= high and outcomes[key]["exact"] is False
    expected = by_key(answer["expected"])["casualties_A"]
    mean_here = sum(losses_a) / n
    var_here = sum((x - mean_here) ** 2 for x in losses_a) / (n - 1)
    half_width = (expected["interval"][1] - expected["interval"][0]) / 2
    sigma_sim = half_width / 1.959964
    sigma = math.sqrt(sigma_sim**2 + var_here / n)
    assert abs(expected["value"] - mean_here) <= 4 * sigma + 1e-9


def test_a_hopeless_side_never_wins_and_the_probabilities_add_up() -> None:
    state = battle({"knight": 30}, {"peasant": 5})
    answer = engine.odds(OLYMPIA, state, GM, {"battles": 50})
    outcomes = by_key(answer["outcomes"])
    assert outcomes["win_A"]["p"] == 1.0 and outcomes["win_B"]["p"] == 0.0
    assert math.isclose(sum(o["p"] for o in answer["outcomes"]), 1.0)


def test_the_same_question_gets_the_same_answer_and_the_state_is_untouched() -> None:
    state = battle({"soldier": 20}, {"soldier": 20})
    before = repr(state)
    first = engine.odds(OLYMPIA, state, GM, {"battles": 100})
    assert engine.odds(OLYMPIA, state, GM, {"battles": 100}) == first
    assert repr(state) == before


def test_leak_contract_seats_and_controllers_change_nothing() -> None:
    state = battle({"soldier": 20, "archer": 5}, {"soldier": 25})
    answer = engine.odds(OLYMPIA, state, Viewer.player("s2"), {"battles": 60})
    other = battle({"soldier": 20, "archer": 5, "controller": "computer"}, {"soldier": 25, "seat": "s9"})
    assert engine.odds(OLYMPIA, other, Viewer.spectator(), {"battles": 60}) == answer
    assert engine.odds(OLYMPIA, other, GM, {"battles": 60}) == answer


def test_bad_questions() -> None:
    state = battle({"soldier": 20}, {"soldier": 20})
    for battles in (0, 9, 5001, "100", True, 1.5):
        with pytest.raises(InvalidDeclaration):
            engine.odds(OLYMPIA, state, GM, {"battles": battles})
    state["status"] = "ended"
    with pytest.raises(IllegalDeclaration):
        engine.odds(OLYMPIA, state, GM, {})


def test_a_large_army_gets_fewer_battles_so_one_question_stays_short() -> None:
    from rules.systems.olympia.odds import WORK_BUDGET

    state = battle({"soldier": 40_000}, {"soldier": 40_000})
    answer = engine.odds(OLYMPIA, state, GM, {"battles": 1000})
    assert answer["requested"] == 1000 and answer["battles"] == WORK_BUDGET // 80_002 < 1000
    assert "note" in answer and all(o["n"] == answer["battles"] for o in answer["outcomes"])


def test_a_smaller_share_of_the_work_fights_fewer_battles_and_says_so() -> None:
    from rules.odds.common import set_simulation_share
    from rules.systems.olympia.odds import WORK_BUDGET

    state = battle({"soldier": 400}, {"soldier": 400})
    set_simulation_share(0.01)
    try:
        answer = engine.odds(OLYMPIA, state, GM, {"battles": 1000})
    finally:
        set_simulation_share(1.0)
    assert answer["battles"] == int(min(1000, WORK_BUDGET // 802) * 0.01) == 10
    assert "note" in answer and all(o["n"] == answer["battles"] for o in answer["outcomes"])
    assert engine.odds(OLYMPIA, state, GM, {"battles": 1000})["battles"] == 1000  # the whole work again
