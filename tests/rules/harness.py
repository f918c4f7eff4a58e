"""One harness for the rules tests: start a battle, play declarations with scripted faces through the
engine's one path (rules/engine.py's ``step`` with a ``Command``, as the server does), and check that
every scripted face was used.

- :meth:`Rules.start` sets a battle up (rules/engine.py's ``start``, as the server does) from a lineup
  and options, or from the system's presets (:meth:`Rules.lineup`), with the faces its setup rolls;
- :meth:`Rules.play` sends one declaration (a dict with its ``type``) as ``viewer`` with the faces it
  rolls; :meth:`Rules.plays` sends several that share one script (a turn of secret choices);
- a script that leaves faces unused fails with :class:`UnusedFaces`, naming them; a declaration that
  is refused leaves its script unchecked (the refusal is what the test looks at);
- ``dice=`` hands over any other source instead (a :class:`~rules.dice.SeededDice` for whole
  battles, or a :func:`scripted` script shared by several calls and checked when its block ends).

The events come back as the rule system made them: the reveal of the dice seed that the engine
appends when a declaration ends the battle (rules/fair.py) is checked and set apart in
:attr:`Rules.revealed`, so that the tests read the same events as before the engine.

>>> from rules.systems.phantoms_bane import PhantomsBane
>>> pb = Rules(PhantomsBane())
>>> state, _ = pb.start(pb.lineup("Jharek", "Wild Monster"))
>>> sorted(state["combatants"]), state["status"]
(['c1', 'c2'], 'active')
>>> state, _ = pb.play(state, {"type": "choose", "combatant": "c1", "option": "attack"})
>>> chose_too = {"type": "choose", "combatant": "c2", "option": "attack"}
>>> after, events = pb.play(state, chose_too, faces=[3, 4, 1, 5])
>>> types(events), after["combatants"]["c2"]["health"]
(['choice.made', 'choice.made', 'turn.resolved', 'turn.started'], 2)
>>> pb.play(state, chose_too, faces=[3, 4, 1, 5, 6])
Traceback (most recent call last):
...
tests.rules.harness.UnusedFaces: choose left scripted faces unused: [6] (of [3, 4, 1, 5, 6], 4 rolled)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rules import engine, physical
from rules.contract import RuleSystem
from rules.core import Event, State, Viewer
from rules.dice import DiceSource, ScriptedDice
from rules.registry import get_system

GM = Viewer.gm()
SPECTATOR = Viewer.spectator()
#: the dice seed the engine reveals when a declaration ends a battle
SEED = "0123456789abcdef0123456789abcdef"
#: what a battle with real dice keeps to make the board's dice again
BOARD: Mapping[str, Any] = {"version": 1, "mix": ""}
#: the event the engine appends when a command ends the battle
REVEAL = "dice.revealed"


class UnusedFaces(AssertionError):
    """A script left faces unused: the test says more than the rules rolled."""


def check_used(dice: ScriptedDice, what: str) -> None:
    """Fail with :class:`UnusedFaces`, naming them, unless every face of ``dice`` was rolled."""
    if dice.remaining:
        raise UnusedFaces(f"{what} left scripted faces unused: {dice.faces[dice.position:]}"
                          f" (of {dice.faces}, {dice.position} rolled)")


@contextmanager
def scripted(faces: Iterable[int], what: str = "the script") -> Iterator[ScriptedDice]:
    """A script shared by several calls, checked when the block ends without an error.

    >>> with scripted([2, 5]) as dice:
    ...     dice.roll(2, 6, "both").total
    7
    >>> with scripted([2, 5], "the duel") as dice:
    ...     dice.roll(1, 6, "one").total
    Traceback (most recent call last):
    ...
    tests.rules.harness.UnusedFaces: the duel left scripted faces unused: [5] (of [2, 5], 1 rolled)
    """
    dice = ScriptedDice(faces)
    yield dice
    check_used(dice, what)


def types(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The events' types, in order."""
    return [e["type"] for e in events]


def of_type(events: Iterable[Mapping[str, Any]], kind: str) -> list[Any]:
    """The events of type ``kind``, in order."""
    return [e for e in events if e["type"] == kind]


def texts(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The events' texts, in order."""
    return [e["text"] for e in events]


class Rules:
    """One rule system (or its registry id) under test."""

    def __init__(self, system: RuleSystem | str) -> None:
        self.system = get_system(system) if isinstance(system, str) else system
        #: the reveal events set apart by the last :meth:`play` (empty unless it ended the battle)
        self.revealed: list[Event] = []

    def lineup(self, *names: str, sides: Sequence[str] = ("A", "B"), **each: Any) -> list[dict[str, Any]]:
        """The system's presets by name (its first two when none is named), ids ``c1``, ``c2``... and
        the sides in turn; ``each`` is added to every entry.

        >>> [(c["id"], c["side"], c["name"]) for c in Rules("phantoms-bane").lineup("Jharek", "Jharek")]
        [('c1', 'A', 'Jharek'), ('c2', 'B', 'Jharek')]
        """
        presets = {p["name"]: p for p in self.system.presets()}
        chosen = [presets[name] for name in names] if names else self.system.presets()[:2]
        return [{**preset, "id": f"c{i}", "side": sides[(i - 1) % len(sides)], **each}
                for i, preset in enumerate(chosen, start=1)]

    def start(self, lineup: list[dict[str, Any]] | None = None, options: Mapping[str, Any] | None = None, *,
              faces: Iterable[int] = (), dice: DiceSource | None = None, validate: bool = False) -> tuple[State, list[Event]]:
        """A battle set up from ``lineup`` (default: :meth:`lineup`) and ``options`` by
        :func:`rules.engine.start` (the system's setup and the computer's declarations after it), rolling
        exactly ``faces`` (or with ``dice``). ``validate``: through the system's validators first, as the
        server does."""
        lineup = self.lineup() if lineup is None else lineup
        chosen: dict[str, Any] = dict(options or {})
        if validate:
            lineup, chosen = self.system.validate_lineup(lineup), self.system.validate_options(chosen)
        own = ScriptedDice(faces)
        source = own if dice is None else dice
        state, events = engine.start(self.system, lineup, chosen, source)
        if dice is None:
            check_used(own, "the setup")
        json.dumps(state)
        return state, events

    def play(self, state: State, declaration: Mapping[str, Any], viewer: Viewer = GM,
             faces: Iterable[int] = (), *, dice: DiceSource | None = None, now: Any = None) -> tuple[State, list[Event]]:
        """One declaration through :func:`rules.engine.step`, rolling exactly ``faces`` (or with ``dice``):
        the new state and the system's events. ``now``: when it arrived (for a system that reads it)."""
        own = ScriptedDice(faces)
        source = own if dice is None else dice
        frozen = copy.deepcopy(state)
        new, events = self._step(state, declaration, viewer, source, now)
        if dice is None:
            check_used(own, str(declaration.get("type", "the declaration")))
        assert state == frozen, "the state given was changed"
        return new, events

    def plays(self, state: State, declarations: Iterable[Mapping[str, Any]], viewer: Viewer = GM, *,
              faces: Iterable[int] = (), dice: DiceSource | None = None) -> tuple[State, list[Event]]:
        """Several declarations in order, sharing one script that they must use up together; all their events."""
        own = ScriptedDice(faces)
        source = own if dice is None else dice
        events: list[Event] = []
        kinds = []
        for declaration in declarations:
            state, made = self._step(state, declaration, viewer, source, None)
            events += made
            kinds.append(str(declaration.get("type")))
        if dice is None:
            check_used(own, " then ".join(kinds) or "no declaration")
        return state, events

    def typed(self, state: State, declaration: Mapping[str, Any], viewer: Viewer = GM,
              typed: Iterable[tuple[Viewer, Iterable[int]]] = (), board: Iterable[int] = ()
              ) -> tuple[State, list[Event], list[Any]]:
        """A declaration in a battle with real dice (rules/physical.py): the board rolls exactly ``board``
        (the same faces again each time typed faces resume it), and each roll it asks for is typed in by
        a ``dice_enter`` command, ``(typist, faces)`` in order, as the server does. The last command's
        state and events, and what each prompt asked for (its ``need``); every typed entry must be asked for.
        """
        board_faces = list(board)
        prompts = list(typed)
        state, events = self._step(state, declaration, viewer, ScriptedDice(board_faces), None)
        needs: list[Any] = []
        while (waiting := physical.pending(state)) is not None:
            needs.append(waiting["need"])
            assert prompts, f"an unexpected prompt: {needs[-1]}"
            typist, faces = prompts.pop(0)
            enter = {"type": engine.DICE_ENTER, "faces": list(faces)}
            state, events = self._step(state, enter, typist, ScriptedDice([]), None,
                                       board_dice=lambda _kept: ScriptedDice(board_faces))
        assert not prompts, f"typed faces no roll asked for: {prompts}"
        return state, events, needs

    def _step(self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
              now: Any, board_dice: Callable[[Mapping[str, Any]], DiceSource] | None = None) -> tuple[State, list[Event]]:
        payload = {key: value for key, value in declaration.items() if key != "type"}
        command = engine.Command(str(declaration.get("type", "")), payload, viewer, now)
        made = engine.step(self.system, state, command, dice, seed=SEED, board=BOARD, board_dice=board_dice)
        events = list(made.events)
        self.revealed = []
        if state.get("status") != "ended" and made.state.get("status") == "ended":
            assert events and events[-1]["type"] == REVEAL, "a battle that ends reveals its dice seed"
            self.revealed = [events.pop()]
        json.dumps(made.state)
        return made.state, events
