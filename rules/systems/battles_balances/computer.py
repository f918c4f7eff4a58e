"""The computer's player in Battles&Balances: when it plays, and what it does.

The computer plays a character of its own when that character's turn starts (the last thing the
declaration just applied did), and when the GM lets it play the turn under way (``computer_turn``,
after handing the acting character to it). The engine (rules/engine.py) asks
:meth:`~rules.contract.RuleSystem.computer_choice` after each declaration, the computer's own ones
included, and applies what it names with the same dice, until the turn is someone else's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rules.core import Event

from .board import distance, in_reach, melee_reach, move_cost, occupant, walkable_squares

#: the GM's declaration that lets the computer play the turn under way
COMPUTER_TURN = "computer_turn"


def computer_plays(state: Mapping[str, Any]) -> str | None:
    """The character acting now if the computer plays it (and the battle runs), else None."""
    actor = state.get("actor")
    if state.get("status") != "active" or not actor or state["combatants"][actor]["controller"] != "computer":
        return None
    return str(actor)


def next_choice(
    state: Mapping[str, Any], declaration: Mapping[str, Any] | None, events: Sequence[Event]
) -> dict[str, Any] | None:
    """What the computer declares next after ``declaration`` made ``events``, or None: it plays when
    its character's turn has just started, or when the GM asked it to play the turn under way."""
    actor = computer_plays(state)
    if actor is None:
        return None
    asked = declaration is not None and declaration.get("type") == COMPUTER_TURN
    last = events[-1] if events else None
    started = last is not None and last.get("type") == "turn.started" and last.get("data", {}).get("combatant") == actor
    return choose(state, actor) if asked or started else None


def choose(state: Mapping[str, Any], cid: str) -> dict[str, Any]:
    """What a computer-played character does: strike the weakest foe in reach, else shoot, else draw,
    else close in on the nearest foe, else wait. It uses only what is on the board."""
    c = state["combatants"][cid]
    foes = [state["combatants"][o] for o in state["order"]
            if state["combatants"][o]["side"] != c["side"] and not state["combatants"][o]["defeated"]]
    if not foes:
        return {"type": "pass", "combatant": cid}

    def weakest(group: list[dict[str, Any]]) -> dict[str, Any]:
        return min(group, key=lambda o: (o["health"] - o["wounds"], distance(c, o)))

    if c["weapon"] and not c["weapon_drawn"]:
        return {"type": "draw", "combatant": cid}
    reachable = [o for o in foes if in_reach(state, c, o, melee_reach(c))]
    if reachable:
        return {"type": "attack", "combatant": cid, "target": weakest(reachable)["id"]}
    if c["launcher"] and c["ammo"] > 0:
        in_range = [o for o in foes if distance(c, o) <= c["missile_range"]]
        if in_range:
            return {"type": "shoot", "combatant": cid, "target": weakest(in_range)["id"]}
    nearest = min(foes, key=lambda o: distance(c, o))
    width, height = state["options"]["grid_width"], state["options"]["grid_height"]
    best: tuple[int, int, int, int] | None = None
    walkable = walkable_squares(state, c)
    for y in range(height):
        for x in range(width):
            if occupant(state, x, y) or (walkable is not None and (x, y) not in walkable):
                continue
            if not in_reach(state, {"x": x, "y": y}, nearest, melee_reach(c)):
                continue
            cost, _ = move_cost(state, c, x, y)
            key = (cost, distance({"x": x, "y": y}, nearest), y, x)
            if best is None or key < best:
                best = key
    if best is None:
        return {"type": "pass", "combatant": cid}
    return {"type": "move", "combatant": cid, "x": best[3], "y": best[2]}
