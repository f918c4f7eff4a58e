"""Whose dice ran hot or cold (rules/luck.py): the percentile against every way fair dice fall, and whose rolls are whose."""

from __future__ import annotations

import itertools

import pytest

from rules import luck


def brute_percentile(dice: list[tuple[int, int]], total: int) -> float:
    below = equal = count = 0
    for faces in itertools.product(*[range(low, high + 1) for low, high in dice]):
        count += 1
        below += sum(faces) < total
        equal += sum(faces) == total
    return round(100.0 * (below + equal / 2) / count, 1)


@pytest.mark.parametrize("rolls", [
    [{"dice": "2d6", "faces": [6, 6]}],
    [{"dice": "1d20", "faces": [3]}, {"dice": "1-3", "faces": [2]}, {"dice": "2d4+1", "faces": [4, 1]}],
    [{"dice": "3d6", "faces": [1, 2, 1]}, {"dice": "d10", "faces": [10]}],
])
def test_the_percentile_is_where_fair_dice_stand(rolls: list[dict[str, object]]) -> None:
    dice = [luck.die_range(str(r["dice"])) for r in rolls for _ in r["faces"]]  # type: ignore[attr-defined]
    total = sum(f for r in rolls for f in r["faces"])  # type: ignore[attr-defined]
    assert luck.percentile(rolls) == brute_percentile([d for d in dice if d], total)


def test_many_dice_follow_the_normal_curve() -> None:
    middling = [{"dice": "1d6", "faces": [3 if i % 2 else 4]} for i in range(200)]
    assert luck.percentile(middling) == pytest.approx(50.0, abs=3)
    high = [{"dice": "1d6", "faces": [5]} for _ in range(200)]
    assert luck.percentile(high) > 99.9


def test_each_roll_goes_to_its_roller() -> None:
    combatants = {"a": {"name": "Ann", "controller": "seat", "seat": "s1"}, "b": {"name": "Bo", "controller": "gm", "seat": None},
                  "c": {"name": "Annabel", "controller": "seat", "seat": "s2"}}
    events = [
        {"rolls": [{"dice": "1d6", "purpose": "Ann offence die", "faces": [6]},
                   {"dice": "1d6", "purpose": "Bo defence die", "faces": [1]},
                   {"dice": "1d6", "purpose": "Annabel offence die", "faces": [1]}]},
        {"data": {"attacker": "a"}, "rolls": [{"dice": "1d20", "purpose": "to hit", "faces": [20]}]},
        {"rolls": [{"dice": "1d100", "purpose": "reaction (d100)", "faces": [50]}]},
    ]
    found = {x["who"]: x for x in luck.by_roller(events, combatants, {"s1": "Alice", "s2": "Carol"})}
    assert set(found) == {"The GM's side", "Alice", "Carol"}
    assert found["Alice"]["dice"] == 2 and found["Alice"]["percentile"] > 95
    assert found["Carol"]["dice"] == 1 and found["Carol"]["words"].startswith("cold")
    assert found["The GM's side"]["dice"] == 2
