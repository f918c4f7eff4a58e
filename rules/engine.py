"""One step of a battle: the same code for the authority that plays it and the verifier that re-plays it.

A battle moves by commands. Most are a rule system's declarations; a few the board itself knows,
for every system alike:

- ``assign``: the GM hands a combatant to the GM, the computer or a seat (``combatant``,
  ``controller``, ``seat``);
- ``end``: the GM ends the battle, with no winner;
- ``dice_enter``: the faces of the roll a waiting declaration asked for, typed by its roller's seat
  or the GM (``faces``), or rolled by the board for a roller who is away (``board``, the GM only);
  the log keeps the ``entry`` it made, and a recorded entry is re-applied as it stands;
- ``dice_physical``: the GM switches one combatant to real dice or back (``combatant``, ``physical``).

Two more are the authority's own because they read the log, not the state: ``undo`` and ``entropy``
(a phone's client seed). The authority works out what they make; :func:`settle` finishes them the
same way :func:`step` finishes every other command.

What :func:`step` does, in this order (the order is part of the stored battles' format: the
verifier demands the same events, so it never changes):

1. copies the state once; the state it is given is never changed, and the state it returns shares
   nothing with it (the systems still make copies of their own until each moves into its folder);
2. a declaration on an ended battle is refused unless the system lists it in
   ``declarations_after_end``; ``end`` on an ended battle and typed faces when no roll is due are
   refused too;
3. the system's ``authorize``, then its ``apply`` with the command's dice; in a battle with real
   dice (rules/physical.py) a roll that belongs to a physical roller stops the declaration, which
   waits in the state with what makes the same board dice again;
4. ``is_checkpoint`` of the new state (the GM's end is always one);
5. the reveal of the dice seed appended to the events when the command ended the battle.

The time a command arrived (``now``) is given only to the systems that ask for it
(``needs_now``), as the declaration's ``at``: the log records it with every declaration, as it
always has, and :meth:`Command.recorded` reads it back from there.

>>> from rules.contract import RuleSystem
>>> from rules.core import event
>>> from rules.dice import ScriptedDice
>>> class HighRoll(RuleSystem):
...     id = name = "high-roll"
...     def apply(self, state, declaration, viewer, dice):
...         roll = dice.roll(1, 6, "the high roll")
...         ended = {**state, "status": "ended" if roll.total == 6 else "active"}
...         return ended, [event("die.rolled", f"A {roll.total}.", rolls=[roll])]
>>> state = {"status": "active", "combatants": {"a": {"name": "Ann", "controller": "gm", "seat": None}}}
>>> made = step(HighRoll(), state, Command("roll", {}, Viewer.gm(), now=12.5), ScriptedDice([6]), seed="s33d")
>>> [e["type"] for e in made.events], made.state["status"], made.record
(['die.rolled', 'dice.revealed'], 'ended', {'type': 'roll', 'at': 12.5})
>>> step(HighRoll(), made.state, Command("roll", {}, Viewer.gm()), ScriptedDice([1]), seed="s33d")
Traceback (most recent call last):
...
rules.errors.IllegalDeclaration: this battle has ended
>>> state["status"]  # the state given is never changed
'active'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import physical
from .contract import RuleSystem
from .core import Event, State, Viewer, clone
from .dice import DiceSource
from .errors import IllegalDeclaration, NotPermitted
from .fair import ended_by_gm, with_reveal
from .odds import odds_for

#: the commands of the board itself that :func:`step` runs (every other kind is a system's declaration)
ASSIGN, END, DICE_ENTER, DICE_PHYSICAL = "assign", "end", "dice_enter", "dice_physical"
BOARD_COMMANDS = frozenset({ASSIGN, END, DICE_ENTER, DICE_PHYSICAL})
#: the commands the authority works out itself from the log (:func:`settle` finishes them)
AUTHORITY_COMMANDS = frozenset({"undo", "entropy"})
#: no rule system may name a declaration like a command of the board
RESERVED = BOARD_COMMANDS | AUTHORITY_COMMANDS
#: the key under which the log records when a declaration arrived
AT = "at"


@dataclass(frozen=True)
class Command:
    """One command: its ``kind``, its fields (``payload``, without the kind), who sent it, and when
    it arrived (``now``, seconds; None for the board's own commands, which record no time)."""

    kind: str
    payload: Mapping[str, Any]
    viewer: Viewer
    now: Any = None

    @classmethod
    def recorded(cls, declaration: Mapping[str, Any], viewer: Viewer) -> Command:
        """A command as the log keeps it (``{"type": kind, ..., "at": now}``), sent by ``viewer``.

        >>> Command.recorded({"type": "choose", "option": "attack", "at": 3.5}, Viewer.gm()).payload
        {'option': 'attack'}
        """
        payload = {key: value for key, value in declaration.items() if key != "type" and key != AT}
        return cls(str(declaration.get("type", "")), payload, viewer, declaration.get(AT))

    def record(self) -> dict[str, Any]:
        """The command as the log keeps it: its kind as ``type``, its fields, and ``at`` when it has a time."""
        made = {"type": self.kind, **self.payload}
        if self.now is not None:
            made[AT] = self.now
        return made


@dataclass(frozen=True)
class Step:
    """What one command made: the new state, its events (the reveal included), whether the new state
    is a checkpoint (the start of a turn or round), and the command as the log records it."""

    state: State
    events: list[Event]
    checkpoint: bool
    record: dict[str, Any] = field(default_factory=dict)


def step(
    system: RuleSystem,
    state: State,
    command: Command,
    dice: DiceSource,
    *,
    seed: str,
    board: Mapping[str, Any] | None = None,
    board_dice: Callable[[Mapping[str, Any]], DiceSource] | None = None,
) -> Step:
    """Apply one command to ``state`` (see the module's docstring for what, and in which order).

    ``dice``: the command's dice (:func:`rules.fair.command_dice` of its step). ``seed``: the seed
    in force, revealed when the command ends the battle. ``board``: what a declaration that stops
    for real dice keeps to make these dice again (``{"version": its step, "mix": the client seeds'
    mix}``). ``board_dice``: the dice such a kept ``board`` makes; typed faces resume the waiting
    declaration with the board's dice of the command that first asked, so the rolls around the
    typed ones never change while the battle waits."""
    work = clone(state)
    viewer, kind, record = command.viewer, command.kind, command.record()
    if kind == END:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may end the battle")
        if state.get("status") == "ended":
            raise IllegalDeclaration("this battle has already ended")
        new_state, events = ended_by_gm(work)
        return settle(state, new_state, events, True, seed=seed, record=record)
    if kind == ASSIGN:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may hand combatants to players")
        # (the system checks them: a recorded assignment is re-applied as the log has it)
        combatant: Any = command.payload.get("combatant")
        controller: Any = command.payload.get("controller")
        new_state, events = system.assign(work, combatant, controller, command.payload.get("seat"), dice)
    elif kind == DICE_PHYSICAL:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may switch a combatant to real dice")
        new_state, events = physical.switch(work, command.payload.get("combatant"), command.payload.get("physical"))
    elif kind == DICE_ENTER:
        entry, new_state, events = _typed_dice(system, state, work, command, dice, board_dice)
        return settle(state, new_state, events, bool(system.is_checkpoint(new_state)), seed=seed,
                      record={"type": DICE_ENTER, "entry": entry})
    else:
        if state.get("status") == "ended" and kind not in system.declarations_after_end:
            raise IllegalDeclaration("this battle has ended")
        system.authorize(state, _as_read(system, record), viewer)
        if physical.active(state):
            new_state, events = physical.apply_declaration(_Reader(system), state, record, viewer, dice,
                                                           board=board, work=work)
        else:
            new_state, events = system.apply(work, _as_read(system, record), viewer, dice)
    return settle(state, new_state, events, bool(system.is_checkpoint(new_state)), seed=seed, record=record)


def settle(before: Mapping[str, Any], after: State, events: list[Event], checkpoint: bool, *, seed: str,
           record: dict[str, Any]) -> Step:
    """The end of every command, the board's and the authority's alike: the dice seed revealed in
    the events when the command ended the battle (``before`` and ``after``: the states around it)."""
    was = str(before.get("status", "active"))
    return Step(after, with_reveal(was, str(after.get("status", was)), list(events), seed), checkpoint, record)


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Any) -> dict[str, Any]:
    """What ``declaration`` would likely bring, computed only from what ``viewer`` may see.

    The answer comes from ``rules/odds/`` (one module per system, registered there); a system
    without one refuses with :class:`~rules.errors.InvalidDeclaration` ("... gives no odds")."""
    return odds_for(system, state, viewer, declaration)


def _typed_dice(
    system: RuleSystem, state: State, work: State, command: Command, dice: DiceSource,
    board_dice: Callable[[Mapping[str, Any]], DiceSource] | None,
) -> tuple[dict[str, Any], State, list[Event]]:
    """Typed faces (or the board's, for a roller who is away) resume the waiting declaration: the
    entry, the new state and the events."""
    waiting = physical.pending(state)
    if waiting is None or state.get("status") == "ended":
        raise IllegalDeclaration("no roll is due: there is nothing to type in")
    payload, viewer = command.payload, command.viewer
    if "entry" in payload:  # as the log recorded it
        entry = dict(payload["entry"])
    elif payload.get("board"):
        if not viewer.is_gm:
            raise NotPermitted("only the GM may roll with the board's dice for a player")
        entry = physical.board_entry(state, dice)
    else:
        entry = physical.check_entry(state, viewer, payload.get("faces"))
    if board_dice is None:
        raise ValueError("typed faces need board_dice: the dice of the command that first asked")
    base = board_dice(waiting.get("board") or {})
    new_state, events = physical.resume(_Reader(system), state, entry, base, work=work)
    return entry, new_state, events


def _as_read(system: RuleSystem, declaration: Mapping[str, Any]) -> Mapping[str, Any]:
    """A recorded declaration as ``system`` reads it: with its time (``at``) only if it asks for it."""
    if system.needs_now or AT not in declaration:
        return declaration
    return {key: value for key, value in declaration.items() if key != AT}


class _Reader:
    """A system as the physical dice call it: a waiting declaration is kept as the log records it
    (with its time), and each time it is applied the system reads it as :func:`_as_read` gives it."""

    def __init__(self, system: RuleSystem) -> None:
        self.system = system

    def apply(self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: Any) -> tuple[State, list[Event]]:
        return self.system.apply(state, _as_read(self.system, declaration), viewer, dice)
