"""Eclipse Phase on the grid: who is able to act, distances, melee reach, targets in order."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ... import terrain


def is_able(c: Mapping[str, Any]) -> bool:
    return c["state"] == "ok" and "unconscious" not in c["conditions"]


def distance_squares(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    return math.hypot(a["x"] - b["x"], a["y"] - b["y"])


def adjacent(a: Mapping[str, Any], b: Mapping[str, Any], state: Mapping[str, Any] | None = None) -> bool:
    """Touching squares (melee reach); with ``state``, not parted by blocked squares corner to corner."""
    if max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"])) > 1:
        return False
    if state is None or not state.get("blocked"):
        return True
    opts = state["options"]
    return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                 opts["width"], opts["height"]) == 1


def metres_between(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    metres_per_square: float = state["options"]["metres_per_square"]
    return round(distance_squares(a, b) * metres_per_square, 2)


def foes_first(state: Mapping[str, Any], c: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Everyone but ``c`` as a target: the other sides first, then ``c``'s allies, each the nearest first
    (a phone offered the ally at hand as its first target)."""
    others = [o for o in state["combatants"].values() if o["id"] != c["id"]]
    return sorted(others, key=lambda o: (o["side"] == c["side"], distance_squares(c, o), o["id"]))
