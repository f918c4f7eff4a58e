"""The arithmetic of a Phantom's Bane exchange: half-attribute stances, capped gear, the other duellist."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def half(value: int) -> int:
    """The Press/Defend bonus or penalty: half of a current attribute, rounded down.

    >>> half(5), half(8), half(7), half(0)
    (2, 4, 3, 0)
    """
    return max(value, 0) // 2


def capped(bonus: int, attribute: int) -> int:
    """A weapon or armour bonus limited by the current attribute it adds to (never below 0).

    >>> capped(5, 4), capped(1, 6), capped(3, 0)
    (4, 1, 0)
    """
    return max(0, min(bonus, attribute))


def gear_bonus(item: Mapping[str, Any] | None) -> int:
    return int(item["bonus"]) if item else 0


def gear_label(item: Mapping[str, Any] | None, attribute: int) -> str:
    """``"+4/5 (Leather Armour)"`` when capped, ``"+2 (Hand Axe)"`` otherwise, ``"none"`` when empty."""
    if not item:
        return "none"
    effective = capped(item["bonus"], attribute)
    shown = f"+{effective}" if effective == item["bonus"] else f"+{effective}/{item['bonus']}"
    return f"{shown} ({item['name']})"


def opponent(state: Mapping[str, Any], cid: str) -> str:
    order: list[str] = state["order"]
    a, b = order
    return b if cid == a else a
