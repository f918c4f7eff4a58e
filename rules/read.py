"""Read a declaration's fields: whole numbers, text, combatant ids, squares.

Every rule system reads its declarations' fields through these functions, so the same malformed
value gets the same refusal (:class:`~rules.errors.InvalidDeclaration`, same words) in every
system. The board's policy:

- a whole number is an ``int``, or a float with nothing after the point (``3.0``: JSON from a
  browser may send one); it comes back as an ``int``;
- refused as a whole number: text such as ``"3"``, ``true``/``false``, NaN, infinity, ``3.5``,
  lists and objects: ``"<field> must be a whole number"``;
- a field that is absent or ``null`` takes its default; with no default the declaration ``needs`` it;
- text is a string, stripped, at most ``limit`` characters; anything else ``must be text``;
- a combatant id is a string naming a combatant of this battle;
- a square is a pair of whole numbers ``x``, ``y`` on the grid.

>>> whole({"distance": 3.0}, "distance", 0, 60)
3
>>> whole({"distance": "3"}, "distance", 0, 60)
Traceback (most recent call last):
...
rules.errors.InvalidDeclaration: distance must be a whole number
>>> whole({}, "bonus", -100, 100, default=0), text({"note": "  up the stairs "}, "note", 80)
(0, 'up the stairs')
>>> state = {"combatants": {"c1": {"name": "Jinx"}}}
>>> combatant({"target": "c2"}, "target", state)
Traceback (most recent call last):
...
rules.errors.InvalidDeclaration: target: no combatant 'c2'
>>> square({"x": 4, "y": 2.0}, 10, 10)
(4, 2)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from .errors import InvalidDeclaration


class _Required:
    """The default of a field that has none: the declaration must carry it."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Final = _Required()


def _fields(d: Any) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise InvalidDeclaration("a declaration must be an object")
    return d


def as_whole(value: Any, key: str) -> int:
    """``value`` as a whole number, or the board's one refusal.

    >>> as_whole(-2, "bonus"), as_whole(7.0, "bonus")
    (-2, 7)
    >>> for bad in ("3", True, float("nan"), float("inf"), 2.5, [3]):
    ...     try:
    ...         as_whole(bad, "bonus")
    ...     except ValueError as refusal:
    ...         print(refusal)
    bonus must be a whole number
    bonus must be a whole number
    bonus must be a whole number
    bonus must be a whole number
    bonus must be a whole number
    bonus must be a whole number
    """
    if isinstance(value, bool):
        raise InvalidDeclaration(f"{key} must be a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise InvalidDeclaration(f"{key} must be a whole number")


def whole(d: Any, key: str, low: int | None = None, high: int | None = None,
          default: int | _Required = REQUIRED) -> int:
    """The whole number in field ``key``, between ``low`` and ``high`` (both included, either may be
    open). An absent or ``null`` field gives ``default``, or is refused when there is none.

    >>> whole({"hp": -20}, "hp", -20, 500)
    -20
    >>> whole({"hp": 501}, "hp", -20, 500)
    Traceback (most recent call last):
    ...
    rules.errors.InvalidDeclaration: hp must be between -20 and 500 (got 501)
    >>> whole({"x": None}, "x")
    Traceback (most recent call last):
    ...
    rules.errors.InvalidDeclaration: the declaration needs x
    """
    raw = _fields(d).get(key)
    if raw is None:
        if isinstance(default, _Required):
            raise InvalidDeclaration(f"the declaration needs {key}")
        return default
    value = as_whole(raw, key)
    if low is not None and high is not None and not low <= value <= high:
        raise InvalidDeclaration(f"{key} must be between {low} and {high} (got {value})")
    if low is not None and value < low:
        raise InvalidDeclaration(f"{key} must be at least {low} (got {value})")
    if high is not None and value > high:
        raise InvalidDeclaration(f"{key} must be at most {high} (got {value})")
    return value


def text(d: Any, key: str, limit: int, default: str = "") -> str:
    """The text in field ``key``, stripped; ``default`` when it is absent, ``null`` or blank.

    >>> text({"label": 12}, "label", 80)
    Traceback (most recent call last):
    ...
    rules.errors.InvalidDeclaration: label must be text
    >>> text({"label": "  "}, "label", 80, "a check")
    'a check'
    """
    raw = _fields(d).get(key)
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise InvalidDeclaration(f"{key} must be text")
    if len(raw.strip()) > limit:
        raise InvalidDeclaration(f"{key} is too long (at most {limit} characters)")
    return raw.strip() or default


def combatant(d: Any, key: str, state: Mapping[str, Any]) -> str:
    """The id in field ``key`` of a combatant of this battle (``state["combatants"]``).

    >>> combatant({"combatant": "c1"}, "combatant", {"combatants": {"c1": {}}})
    'c1'
    >>> combatant({"combatant": 1}, "combatant", {"combatants": {"c1": {}}})
    Traceback (most recent call last):
    ...
    rules.errors.InvalidDeclaration: combatant must be a combatant id
    """
    cid = _fields(d).get(key)
    if cid is None:
        raise InvalidDeclaration(f"the declaration needs {key} (a combatant id)")
    if not isinstance(cid, str):
        raise InvalidDeclaration(f"{key} must be a combatant id")
    if cid not in state["combatants"]:
        raise InvalidDeclaration(f"{key}: no combatant {cid!r}")
    return cid


def square(d: Any, width: int, height: int) -> tuple[int, int]:
    """The square ``(x, y)`` in fields ``x`` and ``y``, on a ``width`` × ``height`` grid.

    >>> square({"x": 10, "y": 0}, 10, 10)
    Traceback (most recent call last):
    ...
    rules.errors.InvalidDeclaration: square (10, 0) is off the 10×10 grid
    """
    x, y = whole(d, "x"), whole(d, "y")
    if not (0 <= x < width and 0 <= y < height):
        raise InvalidDeclaration(f"square ({x}, {y}) is off the {width}×{height} grid")
    return x, y
