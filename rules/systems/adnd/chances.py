"""Who's winning in AD&D (rules/chances.py): with every combatant played by the computer, the DM's
declarations of each step of the round (the encounter checks, initiative, resolution, bleeding, the
next round) move the battle on, and a battle is decided once only one side has anyone able to fight."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.contract import RuleSystem
from rules.core import State, Viewer
from rules.errors import IllegalDeclaration

from .combatants import standing_by_side

GM = Viewer.gm()
#: the DM's declaration for each step of the round where the computer has nothing to declare
STEPS: Mapping[str, Mapping[str, Any]] = {
    "reaction": {"type": "check_reaction"},
    "surprise": {"type": "check_surprise"},
    "distance": {"type": "check_distance"},
    "morale": {"type": "check_morale"},
    "initiative": {"type": "roll_initiative"},
    "resolution": {"type": "resolve_all"},
    "surprise_segments": {"type": "resolve_all"},
    "bleeding": {"type": "bleed"},
    "recap": {"type": "next_round"},
    "recovery": {"type": "finish"},
}


def nudge(system: RuleSystem, state: State) -> Mapping[str, Any] | None:
    return STEPS.get(str(state.get("phase")))


def decided(system: RuleSystem, state: State) -> tuple[str | None, bool] | None:
    """Decided once at most one side has anyone still able to fight (at the end of a step)."""
    if state.get("status") == "ended":
        outcome = state.get("outcome") or {}
        return (outcome.get("winner"), False)
    standing = standing_by_side(state)
    alive = [side for side, count in standing.items() if count > 0]
    if len(alive) > 1:
        return None
    return (alive[0] if alive else None, False)


def apply(system: RuleSystem, state: State, declaration: Mapping[str, Any], dice: Any) -> tuple[State, list[Any]]:
    """The system's ``apply`` (system.py) made on the playout's own state, without its copy (the
    round's log kept as it keeps it: the recap reads it)."""
    handler = system.handler(declaration.get("type"))
    if handler is None:
        raise IllegalDeclaration(f"unknown declaration type {declaration.get('type')!r}")
    events: list[Any] = []
    handler(state, declaration, GM, dice, events)
    for e in events:
        if e["type"] != "declaration.made":
            state["round_log"].append({"type": e["type"], "text": e["text"], "visibility": e["visibility"]})
    return state, events
