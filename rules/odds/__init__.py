"""Odds before committing: "what happens if this viewer declares this?", from what that viewer may see.

Each system's module answers with the system's own resolution (never a second copy of its rules):
exactly, by enumerating every combination of dice of one exchange, turn or attack, where that is
finite; by a seeded simulation with a 95 % interval where it is not (a whole mass battle).

The answer is a dict with ``outcomes``: named outcomes ``{"key", "label", "p", "exact", "fraction"}``
(``"interval"`` and ``"n"`` instead of ``"fraction"`` when simulated), and expected values
``{"key", "label", "value", ...}`` the same way; see each module for its keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import IllegalDeclaration, InvalidDeclaration

if TYPE_CHECKING:
    from ..contract import RuleSystem
    from ..core import State, Viewer

def _odds_module(system_id: str) -> ModuleType | None:
    """The module that answers a system's odds: ``odds.py`` in the system's package (a function
    ``odds(system, state, viewer, declaration)``), or None if the system gives no odds."""
    from ..registry import system_part

    return system_part(system_id, "odds")


def has_odds(system_id: str) -> bool:
    """Whether a system can answer odds questions."""
    return _odds_module(system_id) is not None


def odds_for(system: RuleSystem, state: State, viewer: Viewer, declaration: Any) -> dict[str, Any]:
    """The odds of ``declaration`` for ``viewer`` (raises :class:`InvalidDeclaration` where a system has none)."""
    if not isinstance(declaration, Mapping):
        raise InvalidDeclaration("the odds need a declaration (an object)")
    if not has_odds(system.id):
        raise InvalidDeclaration(f"{system.name} gives no odds")
    from .common import NotEnumerable

    module = _odds_module(system.id)
    assert module is not None
    try:
        answer: dict[str, Any] = module.odds(system, state, viewer, declaration)
        return answer
    except NotEnumerable as exc:  # dice too many to walk in time: a clear refusal, never a stalled server
        raise IllegalDeclaration(str(exc)) from exc


__all__ = ["has_odds", "odds_for"]
