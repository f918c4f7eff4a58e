"""Who's winning in Battles&Balances (rules/chances.py): with every character played by the computer,
the GM only lets the computer play the turn under way when nothing else moves the battle on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.contract import RuleSystem
from rules.core import State, Viewer
from rules.errors import IllegalDeclaration

from .computer import COMPUTER_TURN, computer_plays

GM = Viewer.gm()

def nudge(system: RuleSystem, state: State) -> Mapping[str, Any] | None:
    """The GM's ``computer_turn`` for the character acting now (the computer plays all of them)."""
    return {"type": COMPUTER_TURN} if computer_plays(state) is not None else None


def apply(system: RuleSystem, state: State, declaration: Mapping[str, Any], dice: Any) -> tuple[State, list[Any]]:
    """The system's ``apply`` (system.py) made on the playout's own state, without its copy."""
    handler = system.handler(declaration.get("type"))
    if handler is None:
        raise IllegalDeclaration(f"unknown declaration type {declaration.get('type')!r}")
    events: list[Any] = handler(state, declaration, GM, dice)
    return state, events
