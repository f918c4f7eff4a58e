"""Battles&Balances on the grid: distances, reach and range around the blocked squares, the price of a
move, free squares.

>>> distance({"x": 0, "y": 0}, {"x": 2, "y": 1})
2
>>> melee_reach({"weapon": "Spear", "weapon_drawn": True, "weapon_reach": 2})
2
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules import terrain
from rules.errors import IllegalDeclaration, InvalidDeclaration


def distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    """Squares between two positions; a diagonal step counts as one square."""
    dx: int = a["x"] - b["x"]
    dy: int = a["y"] - b["y"]
    return max(abs(dx), abs(dy))


def walk(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]) -> int | None:
    """Steps from ``a`` to ``b`` around the blocked squares, a diagonal counting one (None: no way);
    with nothing blocked, :func:`distance`."""
    if not state.get("blocked"):
        return distance(a, b)
    opts = state["options"]
    return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                 opts["grid_width"], opts["grid_height"])


def in_reach(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any], reach: int) -> bool:
    """``b`` lies within ``reach`` squares of ``a``, counted around blocked squares."""
    if distance(a, b) > reach:
        return False
    steps = walk(state, a, b)
    return steps is not None and steps <= reach



def armed(c: Mapping[str, Any]) -> bool:
    return bool(c["weapon"]) and bool(c["weapon_drawn"])


def melee_reach(c: Mapping[str, Any]) -> int:
    """Squares this character reaches in melee: the drawn weapon's reach, else 1."""
    return c["weapon_reach"] if armed(c) else 1


def range_band(c: Mapping[str, Any], other: Mapping[str, Any], state: Mapping[str, Any] | None = None) -> str:
    """"melee", "missile" or "out" as seen from ``c`` towards ``other`` (melee reach counted around
    the blocked squares of ``state``; a missile flies straight)."""
    dist = distance(c, other)
    if in_reach(state, c, other, melee_reach(c)) if state is not None else dist <= melee_reach(c):
        return "melee"
    if c["launcher"] and dist <= c["missile_range"]:
        return "missile"
    return "out"


def move_cost(state: Mapping[str, Any], mover: Mapping[str, Any], x: int, y: int) -> tuple[int, list[str]]:
    """AP to move to ``(x, y)``: the price per square plus each opponent's size whose reach is left."""
    dest = {"x": x, "y": y}
    steps = walk(state, mover, dest)
    if steps is None:
        raise IllegalDeclaration(f"blocked squares leave {mover['name']} no way to ({x}, {y})")
    cost = state["options"]["move_cost"] * steps
    left = []
    for oid in state["order"]:
        o = state["combatants"][oid]
        if o["side"] == mover["side"] or o["defeated"] or oid == mover["id"]:
            continue
        if in_reach(state, o, mover, melee_reach(o)) and not in_reach(state, o, dest, melee_reach(o)):
            cost += o["size"]
            left.append(oid)
    return cost, left


def walkable_squares(state: Mapping[str, Any], c: Mapping[str, Any]) -> Mapping[tuple[int, int], int] | None:
    """The squares ``c`` can walk to around blocked squares (None: nothing is blocked, every square)."""
    if not state.get("blocked"):
        return None
    opts = state["options"]
    return terrain.steps_from((c["x"], c["y"]), terrain.blocked_of(state), opts["grid_width"], opts["grid_height"])


def occupant(state: Mapping[str, Any], x: int, y: int) -> str | None:
    cid: str
    for cid, c in state["combatants"].items():
        if not c["defeated"] and c["x"] == x and c["y"] == y:
            return cid
    return None


def auto_square(
    side: str, sides: tuple[str, ...], width: int, height: int, taken: set[tuple[int, int]]
) -> tuple[int, int]:
    index = sides.index(side) if side in sides else 0
    columns = list(range(width)) if index % 2 == 0 else list(range(width - 1, -1, -1))
    columns = columns[1:] + columns[:1] if len(columns) > 2 else columns
    rows = list(range(height)) if index < 2 else list(range(height - 1, -1, -1))
    for x in columns:
        for y in rows:
            if (x, y) not in taken:
                return x, y
    raise InvalidDeclaration("the grid is too small for everyone")

