"""Line of sight on a grid: the squares a combatant sees from where it stands, for the fog over a
board (the GM's optional "sight": fog clears by itself round the players' combatants).

Pure functions over the same geometry as :mod:`rules.terrain` (a square ``(x, y)`` has its centre
at ``(x, y)``). The board's rulings where the rule texts are silent:

- a square is within sight ``r`` when its centre is at most ``r + ½`` squares from the seer's
  centre (a round patch, as a torch's light in the virtual tabletops: with ``r = 1`` the eight
  squares round it, with ``r = 2`` a 5 × 5 block less its corners);
- a square is seen when the straight line between the two centres is clear of blocked squares
  (:func:`rules.terrain.line_clear`: blocked squares are opaque, and the line may not squeeze
  between two blocked squares touching corner to corner); a blocked square itself is seen when the
  line to it is clear, as a wall's face is.

>>> wall = frozenset({(2, 0), (2, 1), (2, 2)})
>>> sorted(seen_from((0, 1), 4, wall, 5, 3))
[(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
"""

from __future__ import annotations

from collections.abc import Iterable

from .terrain import Blocked, Square, line_clear

#: the largest sight the board takes, in squares
MAX_SIGHT = 20


def seen_from(origin: Square, radius: int, blocked: Blocked, width: int, height: int) -> set[Square]:
    """The squares of a ``width`` × ``height`` grid seen from ``origin`` within ``radius`` squares.

    >>> sorted(seen_from((2, 2), 1, frozenset(), 5, 5)) == [(x, y) for x in (1, 2, 3) for y in (1, 2, 3)]
    True
    >>> (0, 2) in seen_from((2, 2), 1, frozenset(), 5, 5), (0, 2) in seen_from((2, 2), 2, frozenset(), 5, 5)
    (False, True)
    """
    ox, oy = origin
    if not (0 <= ox < width and 0 <= oy < height) or radius < 0:
        return set()
    reach4 = (2 * radius + 1) ** 2  # (r + ½)² in quarters: whole numbers only
    seen: set[Square] = set()
    for y in range(max(0, oy - radius), min(height, oy + radius + 1)):
        for x in range(max(0, ox - radius), min(width, ox + radius + 1)):
            if 4 * ((x - ox) ** 2 + (y - oy) ** 2) <= reach4 and line_clear(origin, (x, y), blocked):
                seen.add((x, y))
    return seen


def seen_by_all(origins: Iterable[Square], radius: int, blocked: Blocked, width: int, height: int) -> set[Square]:
    """Every square seen from any of ``origins``.

    >>> sorted(seen_by_all([(0, 0), (4, 0)], 0, frozenset(), 5, 1))
    [(0, 0), (4, 0)]
    """
    seen: set[Square] = set()
    for origin in set(origins):
        seen |= seen_from(origin, radius, blocked, width, height)
    return seen
