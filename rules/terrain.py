"""Blocked squares on a grid: clean them, test a straight line, find paths around them.

Pure functions shared by the grid systems (Eclipse Phase, Battles&Balances, AD&D). A square is
``(x, y)``; its centre is at ``(x, y)`` and it covers ``x ± ½, y ± ½``. A blocked square is one no
token may enter or cross (a wall, a pillar, a pit). The board's rulings where the rule texts are
silent:

- a straight line between two square centres is clear when it crosses the inside of no blocked
  square and does not squeeze through the point where two blocked squares touch corner to corner
  (going past one blocked corner is allowed);
- a token's move is the shortest way around the blocked squares: straight lines between squares
  that see each other (an any-angle search, so with nothing blocked in the way the length is the
  straight distance, exactly as before);
- counted in steps (a diagonal step is one square, as in Battles&Balances), a step may not enter a
  blocked square nor squeeze diagonally between two;
- reach and charge paths follow the same ways; a missile's range stays a straight distance
  (blocked squares stop movement, not sight).

>>> wall = frozenset({(2, 0), (2, 1), (2, 2)})
>>> line_clear((0, 1), (4, 1), wall), line_clear((0, 4), (4, 4), wall)
(False, True)
>>> round(path_lengths((0, 1), wall, 5, 5)[(4, 1)], 3)  # around the end of the wall at (2, 2)
5.657
>>> steps_from((0, 1), wall, 5, 5)[(4, 1)]
4
>>> line_clear((0, 0), (1, 1), frozenset({(1, 0), (0, 1)}))  # squeezing between two corners
False
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .errors import InvalidDeclaration

Square = tuple[int, int]
Blocked = frozenset[Square]

#: at most this many blocked squares on one grid (a 60 × 60 grid is the largest any system allows)
MAX_BLOCKED = 3600
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


def clean_blocked(value: Any, width: int | None = None, height: int | None = None) -> list[list[int]]:
    """Blocked squares as sent by a GM: a list of ``[x, y]`` pairs on the grid, without repeats,
    in reading order (rows, then columns). Squares off the grid are refused when the size is known.

    >>> clean_blocked([[3, 1], [0, 2], [3, 1]], 4, 4)
    [[3, 1], [0, 2]]
    """
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InvalidDeclaration("blocked squares must be a list of [x, y] pairs")
    if len(value) > MAX_BLOCKED:
        raise InvalidDeclaration(f"at most {MAX_BLOCKED} blocked squares")
    seen: set[Square] = set()
    for item in value:
        if (not isinstance(item, list | tuple) or len(item) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in item)):
            raise InvalidDeclaration("each blocked square must be a pair [x, y] of whole numbers")
        x, y = item
        if x < 0 or y < 0 or x > 999 or y > 999:
            raise InvalidDeclaration(f"blocked square ({x}, {y}) is off the grid")
        if width is not None and height is not None and not (x < width and y < height):
            raise InvalidDeclaration(f"blocked square ({x}, {y}) is off the {width}×{height} grid")
        seen.add((x, y))
    return [[x, y] for y, x in sorted((y, x) for x, y in seen)]


#: the last list read and its set, as one tuple (swapped whole: threads never see half of it); the
#: list is kept, so its id cannot be another list's meanwhile
_LAST: tuple[Any, Blocked] = (None, frozenset())


def blocked_of(state: Mapping[str, Any]) -> Blocked:
    """The blocked squares of a battle state (none when it has no ``blocked``). The set of the list
    read last is kept, so the many calls of one view cost one conversion (rule code never changes a
    state's list in place: a change is a new list)."""
    global _LAST
    listed = state.get("blocked")
    if not listed:
        return frozenset()
    last = _LAST
    if last[0] is listed:
        return last[1]
    found = frozenset((int(x), int(y)) for x, y in listed)
    _LAST = (listed, found)
    return found


def _squeezed(x: int, y: int, dx: int, dy: int, blocked: Blocked) -> bool:
    """A diagonal step from (x, y) by (dx, dy) would pass between two blocked squares."""
    return (x + dx, y) in blocked and (x, y + dy) in blocked


def line_clear(a: Square, b: Square, blocked: Blocked) -> bool:
    """True if the straight line between the centres of ``a`` and ``b`` crosses no blocked square
    (the two end squares themselves do not count) and squeezes between no two of them."""
    if not blocked or a == b:
        return True
    x0, y0 = a
    x1, y1 = b
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    for x, y in _near_line(x0, y0, dx, dy):
        if (x, y) in blocked and (x, y) != a and (x, y) != b:
            cross = (x - x0) * dy - (y - y0) * dx
            if 4 * cross * cross >= 2 * length2:  # farther from the line than half a diagonal
                continue
            if _crosses_inside(x0, y0, dx, dy, x, y):
                return False
    if dx and dy:
        # corner points on the line: in doubled coordinates a corner has both coordinates odd
        for cx2 in range(2 * min(x0, x1) + 1, 2 * max(x0, x1), 2):
            num = (cx2 - 2 * x0) * dy
            if num % dx:
                continue
            cy2 = num // dx + 2 * y0
            if cy2 % 2 == 0:
                continue
            left, top = (cx2 - 1) // 2, (cy2 - 1) // 2  # the square up and to the left of the corner
            if dx * dy > 0:
                pair = ((left + 1, top), (left, top + 1))
            else:
                pair = ((left, top), (left + 1, top + 1))
            if pair[0] in blocked and pair[1] in blocked:
                return False
    return True


def _near_line(x0: int, y0: int, dx: int, dy: int) -> Iterable[Square]:
    """The squares within a square of the segment from (x0, y0) by (dx, dy), along its longer axis."""
    if abs(dx) >= abs(dy):
        for x in range(min(x0, x0 + dx), max(x0, x0 + dx) + 1):
            yc = y0 + dy * (x - x0) / dx if dx else y0
            for y in range(math.floor(yc) - 1, math.ceil(yc) + 2):
                yield x, y
    else:
        for y in range(min(y0, y0 + dy), max(y0, y0 + dy) + 1):
            xc = x0 + dx * (y - y0) / dy
            for x in range(math.floor(xc) - 1, math.ceil(xc) + 2):
                yield x, y


def _crosses_inside(x0: int, y0: int, dx: int, dy: int, x: int, y: int) -> bool:
    """The segment from (x0, y0) by (dx, dy) passes through the open square centred on (x, y)."""
    lo, hi = Fraction(0), Fraction(1)
    for start, delta, centre in ((x0, dx, x), (y0, dy, y)):
        if delta == 0:
            if start != centre:
                return False
            continue
        t1 = Fraction(2 * (centre - start) - 1, 2 * delta)
        t2 = Fraction(2 * (centre - start) + 1, 2 * delta)
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
    return lo < hi


def _on_grid(x: int, y: int, width: int, height: int) -> bool:
    return 0 <= x < width and 0 <= y < height


@lru_cache(maxsize=512)
def _theta(origin: Square, blocked: Blocked, width: int, height: int, limit: float) -> tuple[dict[Square, float], dict[Square, Square]]:
    """Any-angle shortest ways from ``origin`` (Theta*): lengths in squares and each square's
    parent (the last corner of its way). Squares farther than ``limit`` are not explored."""
    g: dict[Square, float] = {origin: 0.0}
    parent: dict[Square, Square] = {origin: origin}
    done: set[Square] = set()
    heap: list[tuple[float, Square]] = [(0.0, origin)]
    while heap:
        dist, s = heapq.heappop(heap)
        if s in done:
            continue
        done.add(s)
        p = parent[s]
        for dx, dy in NEIGHBOURS:
            n = (s[0] + dx, s[1] + dy)
            if n in done or not _on_grid(n[0], n[1], width, height) or n in blocked:
                continue
            if dx and dy and _squeezed(s[0], s[1], dx, dy, blocked):
                continue
            if line_clear(origin, n, blocked):  # in plain sight: the straight line is the shortest
                cand, via = math.hypot(n[0] - origin[0], n[1] - origin[1]), origin
            elif line_clear(p, n, blocked):
                cand, via = g[p] + math.hypot(n[0] - p[0], n[1] - p[1]), p
            else:
                cand, via = dist + math.hypot(dx, dy), s
            if cand > limit + 1e-9:
                continue
            if cand < g.get(n, math.inf) - 1e-12:
                g[n], parent[n] = cand, via
                heapq.heappush(heap, (cand, n))
    return g, parent


def path_lengths(origin: Square, blocked: Blocked, width: int, height: int,
                 limit: float = math.inf) -> dict[Square, float]:
    """Length in squares of the shortest way from ``origin`` to every square it can reach within
    ``limit`` (straight lines between squares that see each other, around the blocked ones).
    With nothing blocked this is the straight distance. Do not change the mapping returned."""
    if not blocked:
        r = int(math.floor(limit + 1e-9)) if limit != math.inf else max(width, height)
        out = {}
        for x in range(max(0, origin[0] - r), min(width, origin[0] + r + 1)):
            for y in range(max(0, origin[1] - r), min(height, origin[1] + r + 1)):
                d = math.hypot(x - origin[0], y - origin[1])
                if d <= limit + 1e-9:
                    out[(x, y)] = d
        return out
    return _theta(origin, blocked, width, height, limit)[0]


def path_length(a: Square, b: Square, blocked: Blocked, width: int, height: int) -> float | None:
    """Length of the shortest way from ``a`` to ``b`` around blocked squares (None: no way).
    ``b`` itself may be blocked only if it is ``a``; a way to a blocked square does not exist."""
    if line_clear(a, b, blocked) and b not in blocked:
        return math.hypot(b[0] - a[0], b[1] - a[1])
    return path_lengths(a, blocked, width, height).get(b)


def path(a: Square, b: Square, blocked: Blocked, width: int, height: int) -> list[Square] | None:
    """The corners of the shortest way from ``a`` to ``b`` (both included), or None if there is none."""
    if line_clear(a, b, blocked) and b not in blocked:
        return [a, b] if a != b else [a]
    _, parent = _theta(a, blocked, width, height, math.inf)
    if b not in parent:
        return None
    corners = [b]
    while corners[-1] != a:
        corners.append(parent[corners[-1]])
    return corners[::-1]


def point_along(corners: list[Square], distance: float) -> tuple[float, float]:
    """The point ``distance`` squares along a way given by its corners (the end if it is shorter)."""
    left = distance
    for (x0, y0), (x1, y1) in zip(corners, corners[1:], strict=False):
        seg = math.hypot(x1 - x0, y1 - y0)
        if left <= seg + 1e-12:
            f = left / seg if seg else 0.0
            return x0 + (x1 - x0) * f, y0 + (y1 - y0) * f
        left -= seg
    return float(corners[-1][0]), float(corners[-1][1])


@lru_cache(maxsize=1024)
def steps_from(origin: Square, blocked: Blocked, width: int, height: int) -> dict[Square, int]:
    """Steps (a diagonal step counts one) from ``origin`` to every square it can walk to without
    entering a blocked square or squeezing between two. Do not change the mapping returned."""
    out = {origin: 0}
    frontier = [origin]
    while frontier:
        nxt = []
        for x, y in frontier:
            d = out[(x, y)] + 1
            for dx, dy in NEIGHBOURS:
                n = (x + dx, y + dy)
                if n in out or n in blocked or not _on_grid(n[0], n[1], width, height):
                    continue
                if dx and dy and _squeezed(x, y, dx, dy, blocked):
                    continue
                out[n] = d
                nxt.append(n)
        frontier = nxt
    return out


def step_distance(a: Square, b: Square, blocked: Blocked, width: int, height: int) -> int | None:
    """Steps from ``a`` to ``b``, a diagonal counting one, around blocked squares (None: no way).
    With nothing blocked this is the larger of the two offsets."""
    plain = max(abs(a[0] - b[0]), abs(a[1] - b[1]))
    if not blocked:
        return plain
    if plain == 0:
        return 0
    if plain == 1:  # touching: only a squeeze between two blocked squares parts them
        dx, dy = b[0] - a[0], b[1] - a[1]
        if not (dx and dy and _squeezed(a[0], a[1], dx, dy, blocked)):
            return 1
    # ``b`` may be blocked (a combatant standing where the GM later blocked): walk to a neighbour
    free = blocked - {a, b}
    return steps_from(a, free, max(width, a[0] + 1, b[0] + 1), max(height, a[1] + 1, b[1] + 1)).get(b)


def within_steps(a: Square, b: Square, reach: int, blocked: Blocked, width: int, height: int) -> bool:
    """``b`` lies within ``reach`` steps of ``a`` around blocked squares."""
    if max(abs(a[0] - b[0]), abs(a[1] - b[1])) > reach:
        return False
    d = step_distance(a, b, blocked, width, height)
    return d is not None and d <= reach


def free_squares(width: int, height: int, blocked: Iterable[Square]) -> list[Square]:
    """Every square of the grid that is not blocked, in reading order."""
    b = set(blocked)
    return [(x, y) for y in range(height) for x in range(width) if (x, y) not in b]
