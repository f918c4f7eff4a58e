"""Who's winning in a battle's report (issue 37): the chance to win over the whole battle, and its
turning points.

The chances are the ones the live update worked out and kept (webapp/chances_live.py,
``battle_chances``), read back for the versions along the path the battle really took (an undone
step is left out; a public report reads only the versions the table was told of). A turning point is
one of the three largest swings of a side's chance from one kept version to the next, named with the
event that made it: "Fighter (5th level) hits the Gnoll for 7: 38 % → 71 %".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlmodel import select

from .models import BattleChances

#: how many turning points a report names
TURNING_POINTS = 3
#: a swing smaller than this is no turning point
SMALLEST_SWING = 0.05


def kept(session: Any, battle_id: int) -> dict[int, dict[str, Any]]:
    """The chances kept for a battle, by version."""
    rows = session.exec(select(BattleChances).where(BattleChances.battle_id == battle_id)).all()
    return {row.version: row.payload for row in rows}


def _percent(p: float) -> str:
    return f"{round(p * 100)} %"


def _p(message: Mapping[str, Any], side: str) -> float:
    """A side's chance in a kept chances message."""
    return next((s["p"] for s in message["sides"] if s["side"] == side), 0.0)


def chances_part(found: Mapping[int, Mapping[str, Any]], versions: Sequence[int], events: Sequence[Mapping[str, Any]],
                 winner: str | None, is_key: Callable[[Mapping[str, Any]], bool]) -> dict[str, Any]:
    """The report's chart of the chance to win (``chart``, None without kept chances) and its turning
    points (``turning_points``), from the kept chances ``found`` of the ``versions`` the report covers
    (in order), the report's ``events`` and the winning side (its chance is followed; else the first)."""
    points = [(v, found[v]) for v in versions if v in found]
    if len(points) < 2:
        return {"chances_chart": None, "turning_points": []}
    sides = [s["side"] for s in points[-1][1]["sides"]]
    names = {s["side"]: s["name"] for s in points[-1][1]["sides"]}
    series: dict[str, list[tuple[int, float]]] = {side: [] for side in sides}
    for step, (_v, message) in enumerate(points):
        chances = {s["side"]: s["p"] for s in message["sides"]}
        for side in sides:
            series[side].append((step, round(100 * chances.get(side, 0.0), 1)))
    followed = winner if winner in sides else sides[0]
    swings = []
    for (before_v, before), (after_v, after) in zip(points, points[1:], strict=False):
        # the side whose chance moved most (the winner's first on a tie): a battle the GM ends with no
        # winner moves the leader's chance, not the other's, and a draw moves both
        side = max(sorted(sides, key=lambda x: x != followed), key=lambda x: abs(_p(after, x) - _p(before, x)))
        p_before, p_after = _p(before, side), _p(after, side)
        if abs(p_after - p_before) < SMALLEST_SWING:
            continue
        between = [e for e in events if before_v < e.get("v", 0) <= after_v and e.get("text")]
        cause = next((e for e in reversed(between) if is_key(e)), between[-1] if between else None)
        swings.append((abs(p_after - p_before), after_v, {
            "v": after_v,
            "text": f"{cause['text'].rstrip('.') if cause else 'A step'}: {_percent(p_before)} → {_percent(p_after)}",
            "side": side, "name": names.get(side, f"Side {side}"), "before": p_before, "after": p_after,
        }))
    swings.sort(key=lambda x: (-x[0], x[1]))
    turning = [entry for _size, _v, entry in swings[:TURNING_POINTS]]
    turning.sort(key=lambda entry: entry["v"])
    chart = {"key": "chances", "title": "Chance to win, step by step (its turning points below)",
             "unit": "% chance to win", "series": series, "lines": {}, "x_label": "Step of the battle (0 = the start)"}
    return {"chances_chart": chart, "turning_points": turning}
