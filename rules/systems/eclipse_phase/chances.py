"""Who's winning in Eclipse Phase (rules/chances.py): with every combatant played by the computer, the
GM's ``advance`` lets it act whenever it waits for the GM."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.contract import RuleSystem
from rules.core import State, Viewer
from rules.errors import IllegalDeclaration

GM = Viewer.gm()


def nudge(system: RuleSystem, state: State) -> Mapping[str, Any] | None:
    """The GM's ``advance`` (the computer plays every combatant, so one of them is always waiting)."""
    return {"type": "advance"}


def apply(system: RuleSystem, state: State, declaration: Mapping[str, Any], dice: Any) -> tuple[State, list[Any]]:
    """The system's ``apply`` (system.py) made on the playout's own state, without its copy."""
    events: list[Any] = []
    handler = system.handler(declaration.get("type"))
    if handler is None:
        raise IllegalDeclaration(f"unknown declaration type {declaration.get('type')!r}")
    handler(state, declaration, GM, dice, events)
    return state, events
