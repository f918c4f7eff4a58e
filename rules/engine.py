"""One step of a battle: the same code for the authority that plays it and the verifier that re-plays it.

A battle moves by commands. Most are a rule system's declarations; a few the board itself knows,
for every system alike:

- ``assign``: the GM hands a combatant to the GM, the computer or a seat (``combatant``,
  ``controller``, ``seat``);
- ``end``: the GM ends the battle, with no winner;
- ``dice_enter``: the faces of the roll a waiting declaration asked for, typed by its roller's seat
  or the GM (``faces``), or rolled by the board for a roller who is away (``board``, the GM only);
  the log keeps the ``entry`` it made, and a recorded entry is re-applied as it stands;
- ``dice_physical``: the GM switches one combatant to real dice or back (``combatant``, ``physical``);
- ``hide_combatant`` and ``reveal_combatant``: the GM hides a combatant from the table or brings it out (``combatant``:
  rules/hiding.py, which also keeps a hidden combatant out of every other viewer's view, events,
  odds and targets).
- ``dice_roll``: a roll for anything, typed in dice notation (:mod:`rules.roller`: ``notation``,
  ``label``, ``secret``, ``by``); the state stays as it was, the event records every die.

Two more are the authority's own because they read the log, not the state: ``undo`` and ``entropy``
(a phone's client seed). The authority works out what they make; :func:`settle` finishes them the
same way :func:`step` finishes every other command.

What :func:`step` does, in this order (the order is part of the stored battles' format: the
verifier demands the same events, so it never changes):

1. copies the state once (:class:`rules.core.Owned`: the system's ``apply`` changes that copy in
   place and makes none of its own); the state it is given is never changed, and the state it
   returns shares nothing with it;
2. a declaration on an ended battle is refused unless the system lists it in
   ``declarations_after_end``; ``end`` on an ended battle and typed faces when no roll is due are
   refused too;
3. the system's ``authorize``, then its ``apply`` with the command's dice, and then the computer's
   declarations that follow it (:func:`play`: while the system's ``computer_choice`` names one, it
   is applied with the same dice); in a battle with real dice (rules/physical.py) a roll that
   belongs to a physical roller stops the declaration, the computer's part included, which waits in
   the state with what makes the same board dice again (the typed faces resume it the same way);
4. ``is_checkpoint`` of the new state (the GM's end is always one);
5. the reveal of the dice seed appended to the events when the command ended the battle.

The time a command arrived (``now``) is given only to the systems that ask for it
(``needs_now``), as the declaration's ``at``: the log records it with every declaration, as it
always has, and :meth:`Command.recorded` reads it back from there.

A battle starts with :func:`start`: the system's ``setup``, and the computer's declarations after it.
An ``assign`` is followed by the computer's declarations too (:func:`assign`), so a combatant
handed to the computer can act at once.

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
>>> [e["type"] for e in made.events], made.state["status"], made.record, type(made.state)
(['die.rolled', 'dice.revealed'], 'ended', {'type': 'roll', 'at': 12.5}, <class 'dict'>)
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

from . import hiding, physical, roller
from .contract import RuleSystem
from .core import GM_ONLY, Event, Owned, State, Viewer, clone, event, reaches_only_the_gm, told
from .dice import DiceSource
from .errors import IllegalDeclaration, NotPermitted
from .fair import ended_by_gm, with_reveal
from .odds import odds_for

#: the commands of the board itself that :func:`step` runs (every other kind is a system's declaration)
ASSIGN, END, DICE_ENTER, DICE_PHYSICAL, DICE_ROLL = "assign", "end", "dice_enter", "dice_physical", "dice_roll"
HIDE, REVEAL = hiding.HIDE, hiding.REVEAL
BOARD_COMMANDS = frozenset({ASSIGN, END, DICE_ENTER, DICE_PHYSICAL, DICE_ROLL, HIDE, REVEAL})
#: the commands the authority works out itself from the log (:func:`settle` finishes them)
AUTHORITY_COMMANDS = frozenset({"undo", "entropy"})
#: no rule system may name a declaration like a command of the board
RESERVED = BOARD_COMMANDS | AUTHORITY_COMMANDS
#: the commands whose events :func:`settle` leaves as they are: the hiding itself, and the authority's
#: own (an undo's words are read off the concealed events of the step it takes back)
_UNCONCEALED = frozenset({HIDE, REVEAL}) | AUTHORITY_COMMANDS
#: the key under which the log records when a declaration arrived
AT = "at"
#: at most this many computer declarations in a row after one command (:func:`play`); then the GM takes over
COMPUTER_LIMIT = 400
#: the GM's line when the computer reached :data:`COMPUTER_LIMIT`
COMPUTER_STOPPED = "The computer has played many turns in a row; the GM takes over."


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
    made = _step(system, state, command, dice, seed=seed, board=board, board_dice=board_dice)
    return _others_told(system, state, made)


def _others_told(system: RuleSystem, before: State, made: Step) -> Step:
    """A command of a battle with hidden combatants whose events all became the GM's (rules/hiding.py)
    but that changed what the others see (a hidden one's blow of a kind no words were written for,
    or with the GM's choice of no words at all): its last event gets empty words for the others, so
    their pages are sent the new view (a page shows no empty line), where a GM's secret would send
    them nothing."""
    if (made.record.get("type") in _UNCONCEALED or not made.events
            or not (hiding.hidden_names(before) or hiding.hidden_names(made.state))
            or not all(reaches_only_the_gm(ev, made.state) for ev in made.events)):
        return made
    seats = {c.get("seat") for c in (made.state.get("combatants") or {}).values() if c.get("controller") == "seat"}
    viewers = [Viewer.spectator(), *(Viewer.player(str(seat)) for seat in sorted(seats, key=str) if seat)]
    if all(project(system, before, viewer) == project(system, made.state, viewer) for viewer in viewers):
        return made
    events = [*made.events[:-1], {**made.events[-1], "others": told("")}]
    return Step(made.state, events, made.checkpoint, made.record)


def _step(
    system: RuleSystem,
    state: State,
    command: Command,
    dice: DiceSource,
    *,
    seed: str,
    board: Mapping[str, Any] | None = None,
    board_dice: Callable[[Mapping[str, Any]], DiceSource] | None = None,
) -> Step:
    """The step of one command (:func:`step`), before :func:`_others_told`."""
    work = Owned(clone(state))  # (the system's apply changes this copy in place: rules.core.own)
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
        hiding.check_assign(state, combatant, controller)
        new_state, events = assign(system, work, combatant, controller, command.payload.get("seat"), dice)
    elif kind == HIDE or kind == REVEAL:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may hide or reveal a combatant")
        if kind == HIDE and not system.traits.grid:
            raise IllegalDeclaration("only a battle on a grid hides combatants from the table")
        new_state, events = hiding.set_hidden(work, command.payload.get("combatant"), kind == HIDE)
        return settle(state, new_state, events, bool(system.is_checkpoint(new_state)), seed=seed, record=record)
    elif kind == DICE_PHYSICAL:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may switch a combatant to real dice")
        new_state, events = physical.switch(work, command.payload.get("combatant"), command.payload.get("physical"))
    elif kind == DICE_ROLL:
        if state.get("status") == "ended":
            raise IllegalDeclaration("this battle has ended: the table's own dice roll now")
        new_state, events = work, [roller.roll_event(command.payload, viewer, dice)]
    elif kind == DICE_ENTER:
        entry, new_state, events = _typed_dice(system, state, work, command, dice, board_dice)
        return settle(state, new_state, events, bool(system.is_checkpoint(new_state)), seed=seed,
                      record={"type": DICE_ENTER, "entry": entry})
    else:
        if state.get("status") == "ended" and kind not in system.declarations_after_end:
            raise IllegalDeclaration("this battle has ended")
        system.authorize(state, _as_read(system, record), viewer)
        hiding.check_targets(state, record, viewer)
        if physical.active(state):
            new_state, events = physical.apply_declaration(_Reader(system), state, record, viewer, dice,
                                                           board=board, work=work)
        else:
            new_state, events = play(system, work, _as_read(system, record), viewer, dice)
    return settle(state, new_state, events, bool(system.is_checkpoint(new_state)), seed=seed, record=record)


def start(
    system: RuleSystem, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
) -> tuple[State, list[Event]]:
    """A battle's first state and events: the system's ``setup``, then the computer's declarations
    when a combatant it plays is first to act (see :func:`play`)."""
    theirs, _ = hiding.split_options(options)
    state, events = system.setup(lineup, theirs, dice)
    state, events = _computer(system, state, None, list(events), dice)
    if any(entry.get(hiding.FLAG) is True for entry in lineup) or theirs != options:
        events = hiding.start(state, events, lineup, options)
        hiding.note_strikes(state, events)
    return state, events


def play(
    system: RuleSystem, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
) -> tuple[State, list[Event]]:
    """``system.apply`` of one declaration, then the computer's declarations that follow it.

    After the declaration, and after each of the computer's own, the system's ``computer_choice``
    (rules/contract.py) names what the computer declares next for a combatant it plays; it is
    applied as the GM's, with the same ``dice``, so its rolls come after the declaration's in the
    same stream. At most :data:`COMPUTER_LIMIT` in a row: then a line for the GM says the computer
    stopped, and the GM takes over. ``state`` is the system's to change, as for its ``apply``."""
    new_state, events = system.apply(state, declaration, viewer, dice)
    return _computer(system, new_state, declaration, list(events), dice)


def assign(
    system: RuleSystem, state: State, combatant: Any, controller: Any, seat: Any, dice: DiceSource
) -> tuple[State, list[Event]]:
    """``system.assign`` of one combatant, then the computer's declarations that follow it (see
    :func:`play`): a combatant handed to the computer may have its say at once. It runs with the
    command's dice as they are: an assignment never waits for a real roll. ``state`` is the
    system's to change."""
    new_state, events = system.assign(state, combatant, controller, seat, dice)
    made = {"type": ASSIGN, "combatant": combatant, "controller": controller, "seat": seat}
    return _computer(system, new_state, made, list(events), dice)


def _computer(
    system: RuleSystem, state: State, declaration: Mapping[str, Any] | None, events: list[Event], dice: DiceSource
) -> tuple[State, list[Event]]:
    """The computer's declarations after ``declaration`` made ``events`` (the one loop: :func:`play`)."""
    made: list[Event] = list(events)
    gm = Viewer.gm()
    for _ in range(COMPUTER_LIMIT):
        choice = system.computer_choice(state, declaration, made)
        if choice is None:
            return state, events
        state, made = system.apply(state, choice, gm, dice)
        events += made
        declaration = choice
    events.append(event("turn.stalled", COMPUTER_STOPPED, visibility=GM_ONLY))
    return state, events


def settle(before: Mapping[str, Any], after: State, events: list[Event], checkpoint: bool, *, seed: str,
           record: dict[str, Any]) -> Step:
    """The end of every command, the board's and the authority's alike: the dice seed revealed in
    the events when the command ended the battle (``before`` and ``after``: the states around it)."""
    was = str(before.get("status", "active"))
    if type(after) is Owned:  # the state kept and sent is a plain dict, like every state read back
        after = dict(after)
    if record.get("type") not in _UNCONCEALED and (hiding.hidden_names(before) or hiding.hidden_names(after)):
        events = hiding.conceal(list(events), before, after)
        hiding.note_strikes(after, events)
    return Step(after, with_reveal(was, str(after.get("status", was)), list(events), seed), checkpoint, record)


def project(system: RuleSystem, state: State, viewer: Viewer) -> dict[str, Any]:
    """What ``viewer`` is shown of a battle: the system's own projection (``view_for``) with the
    common view shape added (:data:`rules.contract.VIEW_KEYS`, read off that projection alone:
    :meth:`~rules.contract.RuleSystem.common_view`). The common keys come last, so a system's own
    part never overrides them; where a system's part has a key of the same name (``status``,
    ``legal``, AD&D's and Battles&Balances' ``grid``), the two say the same."""
    view = system.view_for(state, viewer)
    shown = {**view, **system.common_view(view)}
    hidden = hiding.hidden_names(state)
    if not hidden:
        return shown
    if viewer.is_gm:  # the GM's list of hidden combatants, each with the board's offer to reveal it
        return {**shown, "hidden": hiding.offers(state)}
    return dict(hiding.cover_squares(hiding.scrub(shown, hidden, hiding.visible_names(state)), hiding.hidden_squares(state)))


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Any) -> dict[str, Any]:
    """What ``declaration`` would likely bring, computed only from what ``viewer`` may see.

    The answer comes from ``rules/odds/`` (one module per system, registered there); a system
    without one refuses with :class:`~rules.errors.InvalidDeclaration` ("... gives no odds").
    A viewer who is not the GM cannot name a hidden combatant in the question, and the answer names
    it nowhere (rules/hiding.py: its choices, cases and ids are left out of it)."""
    hidden = hiding.hidden_names(state)
    if not hidden or viewer.is_gm:
        return odds_for(system, state, viewer, declaration)
    if isinstance(declaration, Mapping):
        hiding.check_targets(state, declaration, viewer)
    return dict(hiding.scrub(odds_for(system, state, viewer, declaration), hidden, hiding.visible_names(state)))


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
    (with its time), and each time it is applied the system reads it as :func:`_as_read` gives it,
    with the computer's declarations after it (:func:`play`: a real roll that the computer's part
    needs holds the whole command, and the typed faces resume all of it)."""

    def __init__(self, system: RuleSystem) -> None:
        self.system = system

    def apply(self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: Any) -> tuple[State, list[Event]]:
        return play(self.system, state, _as_read(self.system, declaration), viewer, dice)
