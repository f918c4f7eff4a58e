"""The computer player of AD&D: a simple declaration for a computer-run combatant, from what its
side can see (positions).

The computer declares for the combatants it plays when the declarations open (a round, or the
first surprise segment), in the actors' order among the automatic declarations (declarations.py:
:func:`declare_from` stops at each of its combatants and its declaration goes on from the next),
and for a combatant handed to it while the declarations are open. The engine (rules/engine.py)
asks :func:`next_choice` after each declaration, the computer's own included, and after an
assignment; what it names is a ``declare`` marked ``computer`` (only the engine's loop sends one:
``authorize`` refuses it), with where it comes from: ``opening`` or ``assigned``. The one that
answers an assignment keeps what the assignment's own events have always had: they stay out of
the round's log, and it is made even on a battle the GM has ended.

A surprise segment opened by the resolution of the one before keeps the computer's declarations
inline, inside that resolution: when nobody else has to declare, the DM's ``resolve_all`` goes on
resolving the new segment in the same declaration, after the computer's declarations and their
rolls (:func:`~.declarations.declare_from`); the engine's loop runs only after a declaration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core import Event, State
from ...dice import DiceSource
from .combatants import actors, actors_all, auto_declaration, chebyshev, missile_of, surprising_side

#: the mark of the computer's own ``declare`` (:func:`next_choice`), and where it comes from
BY_COMPUTER, OPENING, ASSIGNED = "computer", "opening", "assigned"
#: the events of the declarations' opening where the computer declares through the engine's loop: a
#: round, or the first surprise segment (a segment opened by the resolution of the one before has the
#: computer declare inline: declarations.py, :func:`~.declarations.declare_from`)
OPENING_EVENTS = frozenset({"round.started", "surprise.started"})


def next_choice(
    state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
) -> dict[str, Any] | None:
    """The computer's next declaration after ``declaration`` made ``events``, or None: for the
    combatant just handed to it, or, when the declarations have just opened (or its own declaration
    of that opening came before), for the first of its actors with no declaration yet."""
    if state.get("phase") != "declarations":
        return None
    waiting = [cid for cid in actors(state)
               if state["combatants"][cid]["controller"] == "computer" and cid not in state["declarations"]]
    if declaration is not None and declaration.get("type") == "assign":
        cid = declaration.get("combatant")
        return {"type": "declare", "combatant": cid, BY_COMPUTER: ASSIGNED} if cid in waiting else None
    if state.get("status") != "active" or not waiting:
        return None
    opening = (declaration is not None and declaration.get(BY_COMPUTER) == OPENING) \
        or any(e.get("type") in OPENING_EVENTS for e in events)
    return {"type": "declare", "combatant": waiting[0], BY_COMPUTER: OPENING} if opening else None


def computer_declaration(state: State, cid: str, dice: DiceSource) -> dict[str, Any]:
    """A simple choice for a computer-run combatant, from what its side can see (positions)."""
    c = state["combatants"][cid]
    foes = [f for f in actors_all(state) if state["combatants"][f]["side"] != c["side"]]
    if surprising_side(state):
        seg = state["surprise"]["segment"]
        foes = [f for f in foes if state["combatants"][f]["reaction_mod"] < seg]
    if not foes:
        return auto_declaration("await", by="computer")
    best = min(chebyshev(c, state["combatants"][f]) for f in foes)
    near = [f for f in foes if chebyshev(c, state["combatants"][f]) == best]
    target = near[0]
    if len(near) > 1:
        target = near[dice.randint(1, len(near), f"{c['name']} picks a target").total - 1]
    if best <= 1:
        return auto_declaration("melee", target, by="computer")
    if missile_of(c)["rate"] > 0:
        return auto_declaration("missile", target, by="computer")
    if c.get("morale") == "fall_back":
        return auto_declaration("await", by="computer")  # falling back: it fights where it stands, no charge
    return auto_declaration("charge", target, by="computer")
