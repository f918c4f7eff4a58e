"""Who's winning in Olympia (rules/chances.py): one playout is the odds' simulated battle, "fight to
the end" until it ends (odds.py), from the deployment as it stands if the battle has not begun."""

from __future__ import annotations

from typing import Any

from rules.contract import RuleSystem
from rules.core import State, Viewer, clone

from .odds import MAX_STEPS, STEP
from .system import Olympia

GM = Viewer.gm()


def playout(system: RuleSystem, start: State, dice: Any) -> tuple[str | None, bool] | None:
    current = clone(start)
    if current["status"] == "setup":
        current, _ = system.apply(current, {"type": "begin"}, GM, dice)
    assert isinstance(system, Olympia)  # (the registry finds this module for Olympia only)
    for _ in range(MAX_STEPS):
        system.step_battle(current, STEP, GM, dice)
        if current["status"] != "active":
            break
    if current["status"] == "active":
        return None
    winner = (current.get("outcome") or {}).get("winner")
    return (str(winner), False) if winner in current["sides"] else (None, True)
