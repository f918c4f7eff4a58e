"""Whose dice ran hot or cold: how a roller's dice over a battle compare with fair dice, as a percentile.

Each die of a recorded roll counts (its ``faces``, by its notation: ``2d6``, ``1d100``, ``1-3``);
the modifier does not (it is no luck). Over a battle the faces a roller threw add up to a total whose
spread under fair dice is known. The percentile is where the total stands in that spread: the chance
that fair dice come out lower, plus half the chance that they come out the same; 50 is the average,
90 means luckier than nine battles in ten with the same dice. Up to :data:`EXACT_DICE` dice the
spread is worked out exactly; beyond, by the normal curve (a sum of that many dice follows it closely).

>>> round(percentile([{"dice": "2d6", "faces": [6, 6]}]), 1)
98.6
>>> percentile([{"dice": "1d6", "faces": [3]}, {"dice": "1d6", "faces": [4]}])
50.0
>>> percentile([{"dice": "a fudge", "faces": [2]}]) is None
True
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: up to this many dice, the spread of their sum is worked out exactly
EXACT_DICE = 80
_DICE = re.compile(r"^\s*(\d*)d(\d+)")
_RANGE = re.compile(r"^\s*(-?\d+)-(-?\d+)\s*$")


def die_range(notation: str) -> tuple[int, int] | None:
    """The lowest and highest face of one die of a roll's notation, or None if it is not plain dice.

    >>> die_range("3d8+2"), die_range("1-3"), die_range("d100"), die_range("mass")
    ((1, 8), (1, 3), (1, 100), None)
    """
    found = _DICE.match(notation)
    if found:
        sides = int(found.group(2))
        return (1, sides) if sides >= 1 else None
    found = _RANGE.match(notation)
    if found:
        low, high = int(found.group(1)), int(found.group(2))
        return (low, high) if low <= high else None
    return None


def tally(rolls: Iterable[Mapping[str, Any]], spans: list[tuple[int, int]] | None = None
          ) -> tuple[float, float, float, int]:
    """(faces thrown, their mean under fair dice, their variance, how many dice) of some rolls
    (``spans``: each die's lowest and highest face are added to it)."""
    total = mean = variance = 0.0
    count = 0
    for roll in rolls:
        span = die_range(str(roll.get("dice", "")))
        faces = roll.get("faces") or []
        if span is None or not isinstance(faces, Sequence):
            continue
        low, high = span
        width = high - low + 1
        for face in faces:
            if not isinstance(face, int) or isinstance(face, bool) or not low <= face <= high:
                continue
            total += face
            if spans is not None:
                spans.append(span)
            mean += (low + high) / 2
            variance += (width * width - 1) / 12
            count += 1
    return total, mean, variance, count


def percentile(rolls: Iterable[Mapping[str, Any]]) -> float | None:
    """Where these rolls' faces stand among fair dice's, 0 to 100 (None: no plain dice among them)."""
    spans: list[tuple[int, int]] = []
    total, mean, variance, count = tally(rolls, spans)
    if not count:
        return None
    if variance <= 0:
        return 50.0
    if count <= EXACT_DICE:
        return round(100.0 * _exact_standing(spans, int(total)), 1)
    z = (total - mean) / math.sqrt(variance)
    if total != mean:  # half a point of continuity, towards the mean
        z -= math.copysign(0.5, total - mean) / math.sqrt(variance)
    return round(50.0 * (1.0 + math.erf(z / math.sqrt(2.0))), 1)


def _exact_standing(spans: Sequence[tuple[int, int]], total: int) -> float:
    """P(fair dice sum below ``total``) + ½ P(equal), the dice's spread worked out face by face."""
    offset = sum(low for low, _high in spans)
    spread = [1.0]
    for low, high in spans:
        width = high - low + 1
        grown = [0.0] * (len(spread) + width - 1)
        for i, p in enumerate(spread):
            share = p / width
            for j in range(width):
                grown[i + j] += share
        spread = grown
    at = total - offset
    below = sum(spread[: max(0, min(at, len(spread)))])
    equal = spread[at] if 0 <= at < len(spread) else 0.0
    return below + equal / 2


def words(value: float) -> str:
    """A percentile in words.

    >>> words(97.2), words(50.0), words(8.1)
    ('hot: luckier than 97 % of fair dice', 'about average', 'cold: unluckier than 92 % of fair dice')
    """
    if value >= 75:
        return f"hot: luckier than {value:.0f} % of fair dice"
    if value <= 25:
        return f"cold: unluckier than {100 - value:.0f} % of fair dice"
    return "about average"


def by_roller(events: Iterable[Mapping[str, Any]], combatants: Mapping[str, Mapping[str, Any]],
              seat_names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each roller's percentile over a battle's ``events``: each player (by seat) and the GM's side
    (the GM's and the computer's combatants, and the GM's own rolls). A roll belongs to the combatant
    whose name its purpose begins with (the longest such name), else to the combatant its event names
    (``attacker``, ``combatant``), else to the GM. ``combatants``: the battle's, by id, as it ended."""
    names = sorted(((str(c.get("name", "")), cid) for cid, c in combatants.items() if c.get("name")),
                   key=lambda x: -len(x[0]))
    groups: dict[str, list[Mapping[str, Any]]] = {}

    def group_of(cid: str | None) -> str:
        c = combatants.get(cid or "") or {}
        seat = c.get("seat")
        if c.get("controller") == "seat" and isinstance(seat, str):
            return f"seat:{seat}"
        return "gm"

    for e in events:
        data = e.get("data") or {}
        named = next((data.get(key) for key in ("attacker", "combatant", "actor") if isinstance(data.get(key), str)), None)
        for roll in e.get("rolls") or []:
            purpose = str(roll.get("purpose", ""))
            owner = next((cid for name, cid in names if purpose.startswith(name)), named)
            groups.setdefault(group_of(owner), []).append(roll)
    found = []
    for key, rolls in groups.items():
        value = percentile(rolls)
        if value is None:
            continue
        who = "The GM's side" if key == "gm" else seat_names.get(key.split(":", 1)[1], "A player")
        found.append({"who": who, "percentile": value, "words": words(value), "dice": tally(rolls)[3]})
    found.sort(key=lambda x: (x["who"] != "The GM's side", x["who"]))
    return found
