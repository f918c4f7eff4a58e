"""The contract of a rule system: the base class every system fills in, and its declarations.

A system is data plus pure functions (rules/core.py has the shared types). It registers each kind
of declaration with :func:`declaration` on the method that handles it, saying who may send it and
whether it still counts once the battle has ended; the engine (rules/engine.py) checks the first
and the second, and the system's ``apply`` finds the handler with :meth:`RuleSystem.handler`.

>>> class Coin(RuleSystem):
...     id = name = "coin"
...     @declaration("toss")
...     def _toss(self, state, declaration, viewer, dice):
...         return dice.roll(1, 2, "the coin")
...     @declaration("call_it", by="gm", after_end=True)
...     def _call_it(self, state, declaration, viewer, dice):
...         return None
>>> list(Coin.declarations), Coin.gm_declarations, Coin.declarations_after_end
(['toss', 'call_it'], frozenset({'call_it'}), frozenset({'call_it'}))
>>> Coin().handler("toss").__name__, Coin().handler("dance"), Coin().handler(["toss"])
('_toss', None, None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final, Literal, TypeVar

from .core import CONTROLLERS, Event, Field, State, Viewer, clean_fields, clean_lineup_entry, clone, event
from .dice import DiceSource
from .errors import InvalidDeclaration, NotPermitted
from .hiding import OPTION_FIELDS as HIDING_OPTIONS
from .physical import WHO_ROLLS

#: who may send a declaration: the GM only, or also the player of the combatant it names
Sender = Literal["gm", "controller"]
#: the attribute under which :func:`declaration` marks a handler
_MARK = "__declaration__"
_Handler = TypeVar("_Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class Declaration:
    """One kind of declaration a system accepts: its type, the method that handles it, who may send
    it, whether it still counts once the battle has ended, and whether the sides make it at the same
    moment, blind to each other (see :attr:`RuleSystem.simultaneous_declarations`)."""

    kind: str
    method: str = ""
    by: Sender = "controller"
    after_end: bool = False
    simultaneous: bool = False


def declaration(kind: str, *, by: Sender = "controller", after_end: bool = False,
                simultaneous: bool = False) -> Callable[[_Handler], _Handler]:
    """Register the method below as the handler of declarations of type ``kind``.

    ``by``: ``"gm"`` if only the GM may send it, ``"controller"`` if the player of the combatant it
    names may send it too. ``after_end``: still accepted once the battle has ended. ``simultaneous``:
    the sides make it at the same moment, each blind to the others'."""
    if by not in ("gm", "controller"):
        raise ValueError(f"by must be 'gm' or 'controller', not {by!r}")

    def mark(handler: _Handler) -> _Handler:
        setattr(handler, _MARK, Declaration(kind, handler.__name__, by, after_end, simultaneous))
        return handler

    return mark


# --- traits: what the places outside the battle read of a system --------------------------------

#: the group of a system's stat form that holds the values carried over from an earlier battle
CARRIED_GROUP = "Carried over"
#: where a combatant stands at the end of a battle, for the carry-over (:meth:`RuleSystem.carry_standing`):
#: out of the fight but alive (carried only when the GM asks), or gone for good (never carried)
FALLEN: Final = "fallen"
GONE: Final = "gone"
Standing = Literal["fallen", "gone"]


@dataclass(frozen=True)
class Chart:
    """One chart of a battle report: the key of its values (:meth:`RuleSystem.report_strength`), its
    title and the unit of its axis."""

    key: str
    title: str
    unit: str


@dataclass(frozen=True)
class OddsPart:
    """One figure of an odds answer the TV shows: the outcome's ``key`` in the answer, the short
    ``word`` before it, and whether it is shown even when its chance is nil (``always``)."""

    key: str
    word: str
    always: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "word": self.word, **({"always": True} if self.always else {})}


@dataclass(frozen=True)
class OddsQuestion:
    """One kind of question the TV's odds panel asks (static/js/odds.js reads it, knowing no system).

    ``acting``: where the panel finds who acts, the first that the view has (not null): a view key
    holding a combatant id or a list of them, or ``"*all"`` (every combatant) or ``"*standing"``
    (every combatant still fighting). ``against``: ``"each_foe"`` asks once per standing foe of the
    one acting, ``"first_foe"`` once against the first, ``""`` not about a foe. ``declaration``: the
    declaration asked about, where the text ``"$acting"`` stands for the one acting and ``"$foe"`` for
    the foe. ``choices``: the answer lists the choices, each with its own figures. ``parts``: the
    figures shown; ``parts_by_option``: other figures for a choice with that ``option``. ``name_key``:
    a view key with the name to show (else the combatant's name); ``limit``: at most this many
    questions (0: no limit). ``whole``: one question about the whole battle (each side's chance),
    under ``label``.

    >>> OddsQuestion(acting=("active",), against="each_foe", declaration={"combatant": "$acting"}).to_dict()["against"]
    'each_foe'
    """

    acting: tuple[str, ...] = ()
    against: Literal["each_foe", "first_foe", ""] = ""
    declaration: Mapping[str, Any] = field(default_factory=dict)
    choices: bool = False
    parts: tuple[OddsPart, ...] = ()
    parts_by_option: Mapping[str, tuple[OddsPart, ...]] = field(default_factory=dict)
    name_key: str = ""
    limit: int = 0
    whole: bool = False
    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "acting": list(self.acting), "against": self.against, "declaration": dict(self.declaration),
            "choices": self.choices, "parts": [p.to_dict() for p in self.parts],
            "parts_by_option": {option: [p.to_dict() for p in parts] for option, parts in self.parts_by_option.items()},
            "name_key": self.name_key, "limit": self.limit, "whole": self.whole, "label": self.label,
        }


@dataclass(frozen=True)
class Demo:
    """The demo table ``battleboard serve`` prepares for a system: its ``slug`` and ``title``, the
    ``lineup`` as (preset name, side, controller), and the GM's declarations made right after the
    battle starts (``opening``: to get past a deployment, say)."""

    slug: str
    title: str
    lineup: tuple[tuple[str, str, str], ...]
    opening: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Traits:
    """What the places outside a battle read of a rule system, as data: the server, the battle
    report, the carry-over, the pages (:meth:`to_dict` is sent to them in the table payload) and the
    demo tables. Where a place needs behaviour instead, :class:`RuleSystem` has a hook (the
    ``report_*`` and ``carry_*`` methods).

    - ``grid``: played on a grid: the table takes a map, token looks and blocked squares.
    - ``round_key``, ``round_word``: the state key that counts the turns or rounds, and its name.
    - ``charts``: a report's charts; ``public_charts``: those of a public report, for a system
      whose numbers the spectators do not see (None: the same charts, the numbers are public; set,
      a public report reads the spectators' view: :meth:`RuleSystem.report_strength`).
    - ``key_events``: event types worth retelling in this system's reports, besides everyone's.
    - ``carries_over``: survivors can be written back into a roster (:meth:`RuleSystem.carry_entry`);
      ``carried_fields``: the stat form's fields for the values carried (group :data:`CARRIED_GROUP`);
      ``carry_over_help``: what carries over, in the help every screen shows.
    - ``odds_questions``: what the TV's odds panel asks (:class:`OddsQuestion`).
    - ``demo``: the system's demo table (:class:`Demo`), or None.
    - ``board_module``: the name of the pages' modules that draw the system's battle
      (static/js/systems/<name>.js, static/js/display/<name>.js); ``""``: its own, named after its
      id; ``"generic"``: the shared ones that draw any system from the common view shape alone
      (:data:`VIEW_KEYS`), for a system that brings no front end of its own.

    >>> traits = Traits(grid=True, round_key="turn", round_word="Turn", charts=(Chart("pull", "Pull per side", "pull"),))
    >>> traits.to_dict()["grid"], traits.to_dict()["round_word"], Traits().grid
    (True, 'Turn', False)
    """

    grid: bool = False
    round_key: str = "round"
    round_word: str = "Round"
    charts: tuple[Chart, ...] = ()
    public_charts: tuple[Chart, ...] | None = None
    key_events: frozenset[str] = frozenset()
    carries_over: bool = False
    carried_fields: tuple[Field, ...] = ()
    carry_over_help: str = ""
    odds_questions: tuple[OddsQuestion, ...] = ()
    demo: Demo | None = None
    board_module: str = ""

    def report_charts(self, public: bool = False) -> tuple[Chart, ...]:
        """The charts a report draws (a public one: :attr:`public_charts` if the system has them)."""
        return self.public_charts if public and self.public_charts is not None else self.charts

    def to_dict(self, odds: bool = True) -> dict[str, Any]:
        """What the pages read (the table payload's ``traits``); ``odds``: with the odds questions
        (the server sends them only while the table display shows odds: nothing about odds reaches
        the TV before)."""
        return {
            "grid": self.grid,
            "round_word": self.round_word,
            "odds_questions": [q.to_dict() for q in self.odds_questions] if odds else [],
            "board_module": self.board_module,
        }


# --- the view shape: what every page reads of a battle -----------------------------------------

#: the keys every view has, whatever its system (:meth:`RuleSystem.common_view`):
#:
#: - ``status``: ``"setup"``, ``"active"`` or ``"ended"`` (a system may have a word of its own
#:   before the fight, as Olympia's deployment ``"setup"``);
#: - ``acting``: whose turn it is, or which phase: ``{"combatants": [ids of those who must act
#:   now], "label": "Round 2, missile phase"}`` (no one named while a phase runs by itself);
#: - ``fighters``: every combatant in one list form, ``{"id", "name", "side", "controller",
#:   "seat", "out"}`` (``seat`` only where the system's part shows it to this viewer; ``out``:
#:   out of the fight, however the system says so: dead, down, fled, defeated);
#: - ``grid``: ``{"width", "height", ...}`` for a system played on a grid, else None;
#: - ``legal``: what this viewer may declare now (``[{"type": ..., "label": ..., ...}]``).
#:
#: Every other key of a view is the system's own part: what its own modules read
#: (static/js/systems/<id>.js, static/js/display/<id>.js), in its own words. The five systems
#: kept theirs where they were (``combatants``, ``turn``, ``active``, ``waiting_for``,
#: ``next_phase``...) so that no front end had to be written again; a new system puts its own
#: under one key (the one-die duel of tests/systems/one_die/: ``duel``). The common keys are
#: ADDED, after the system projected its view: they are read off that projection alone (never
#: off the state), so they can show nothing the system's part hides from the viewer.
VIEW_KEYS = ("status", "acting", "fighters", "grid", "legal")
#: the keys of a combatant in ``fighters``
FIGHTER_KEYS = ("id", "name", "side", "controller", "seat", "out")


class RuleSystem:
    """Base class of a rule system. Subclasses fill in the class attributes and the methods, and
    register each declaration's handler with :func:`declaration`.

    The web layer and the engine (rules/engine.py) call, and only call:

    - :meth:`combatant_fields`, :meth:`option_fields`, :meth:`presets`, :meth:`help` for the GM's forms;
    - :meth:`validate_combatant` on every stat block a GM types or loads;
    - :meth:`setup` to start a battle from a lineup (through :func:`rules.engine.start`);
    - :meth:`authorize` then :meth:`apply` for each declaration (:meth:`handler` finds the
      registered handler of a declaration type);
    - :meth:`assign` when the GM hands a combatant over;
    - :meth:`view_for` for each viewer's projection (with ``legal``: what that viewer may declare now),
      and :meth:`common_view` to add the common view shape to it (:data:`VIEW_KEYS`; the engine's
      :func:`rules.engine.project` does both);
    - :meth:`is_checkpoint` to mark the start of a turn or round in the log; :meth:`outcome` to know it ended;
    - :meth:`computer_choice` after each declaration (and after the setup), for what the computer
      declares next for a combatant it plays: the one way a system plays the computer's combatants;
    - :attr:`traits` and the ``report_*`` and ``carry_*`` hooks, outside a battle: the report, the
      carry-over, the grid, the demo, the pages (see :class:`Traits`).
    """

    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    #: the declarations the system registered (:func:`declaration`), by type, in the order of the
    #: class body; the three sets below are read off them
    declarations: ClassVar[Mapping[str, Declaration]] = {}
    #: declaration types only a GM may send (``by="gm"``)
    gm_declarations: ClassVar[frozenset[str]] = frozenset()
    #: declaration types that the sides make at the same time (``simultaneous=True``), each for its
    #: own combatant and blind to the others' (Phantom's Bane's secret choices): one of them, made on
    #: a version that only such declarations for *other* combatants have passed since, was made on
    #: the same board, so the server applies it instead of refusing it as out of date. A system
    #: marks a type so only if nothing can resolve before the combatant's own declaration is in.
    simultaneous_declarations: ClassVar[frozenset[str]] = frozenset()
    #: declaration types still accepted once the battle has ended (``after_end=True``:
    #: Battles&Balances' checks and tools)
    declarations_after_end: ClassVar[frozenset[str]] = frozenset()
    #: whether the system reads when a declaration arrived (its ``at``, seconds: AD&D's declaration
    #: clock); the others get their declarations without it (rules/engine.py)
    needs_now: ClassVar[bool] = False
    #: lineup limits
    min_combatants: ClassVar[int] = 2
    max_combatants: ClassVar[int] = 64
    #: sides a lineup may use
    sides: ClassVar[tuple[str, ...]] = ("A", "B")
    #: what the places outside a battle read of the system (grid, report, carry-over, odds, demo)
    traits: ClassVar[Traits] = Traits()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Declaration] = {}
        for klass in reversed(cls.__mro__):
            for attribute, value in vars(klass).items():
                marked = getattr(value, _MARK, None)
                if isinstance(marked, Declaration):
                    found[marked.kind] = replace(marked, method=attribute)
        if not found:
            return  # a system without registered declarations lists its sets itself
        listed = {"gm_declarations", "simultaneous_declarations", "declarations_after_end"} & set(vars(cls))
        if listed:
            raise TypeError(f"{cls.__name__}: {', '.join(sorted(listed))} come from @declaration, not from a list")
        cls.declarations = found
        cls.gm_declarations = frozenset(kind for kind, d in found.items() if d.by == "gm")
        cls.simultaneous_declarations = frozenset(kind for kind, d in found.items() if d.simultaneous)
        cls.declarations_after_end = frozenset(kind for kind, d in found.items() if d.after_end)

    def handler(self, kind: Any) -> Callable[..., Any] | None:
        """The handler registered for declaration type ``kind`` (bound to this system), or None."""
        found = self.declarations.get(kind) if isinstance(kind, str) else None
        return getattr(self, found.method) if found is not None else None

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return []

    def option_fields(self) -> list[Field]:
        return []

    def presets(self) -> list[dict[str, Any]]:
        """Ready-made combatants a GM can start from: ``[{"name": ..., **stats}]``."""
        return []

    def help(self) -> list[dict[str, str]]:
        """Help sections in the project's own words: ``[{"title": ..., "text": ...}]``."""
        return []

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        """Normalise one lineup entry (generic part plus the stat fields)."""
        base = clean_lineup_entry(data, index)
        if base["side"] not in self.sides:
            raise InvalidDeclaration(f"{base['name']}: side must be one of {', '.join(self.sides)}")
        if base.get("hidden") and not self.traits.grid:
            raise InvalidDeclaration(f"{base['name']}: only a battle on a grid hides combatants from the table")
        stats = clean_fields(self.combatant_fields(), data, f"{base['name']}: ")
        return {**stats, **base}

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        """A lineup ready to start a battle (systems add their own checks: sides, counts)."""
        return self.validate_draft(lineup)

    def validate_draft(self, lineup: Any) -> list[dict[str, Any]]:
        """A lineup the GM is still building: every entry valid, ids unique, nothing else required."""
        if not isinstance(lineup, list):
            raise InvalidDeclaration("the lineup must be a list of combatants")
        if len(lineup) > self.max_combatants:
            raise InvalidDeclaration(f"at most {self.max_combatants} combatants")
        cleaned = [self.validate_combatant(entry, i) for i, entry in enumerate(lineup)]
        ids = [c["id"] for c in cleaned]
        if len(set(ids)) != len(ids):
            raise InvalidDeclaration("two combatants share an id")
        return cleaned

    def battle_option_fields(self) -> list[Field]:
        """The system's options and the ones every battle has (who rolls the dice: rules/physical.py),
        and on a grid how the board treats hidden combatants (rules/hiding.py)."""
        return [*self.option_fields(), WHO_ROLLS, *(HIDING_OPTIONS if self.traits.grid else ())]

    def validate_options(self, data: Any) -> dict[str, Any]:
        cleaned = clean_fields([*self.option_fields(), WHO_ROLLS], data or {}, "option ")
        # the hiding options (a grid system's) only where they differ from their defaults: the options
        # a system's setup keeps in its state stay as they always were (rules/hiding.py)
        if self.traits.grid and isinstance(data, Mapping):
            for hiding_field in HIDING_OPTIONS:
                value = hiding_field.clean(data.get(hiding_field.name), "option ")
                if value != hiding_field.default:
                    cleaned[hiding_field.name] = value
        return cleaned

    # --- the game --------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        raise NotImplementedError

    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        """Raise :class:`NotPermitted` unless ``viewer`` may send ``declaration`` (the generic checks)."""
        if viewer.role == "spectator":
            raise NotPermitted("spectators watch; they cannot act")
        if viewer.is_gm:
            return
        kind = declaration.get("type")
        if kind in self.gm_declarations:
            raise NotPermitted(f"only the GM may {str(kind).replace('_', ' ')}")
        combatant = declaration.get("combatant")
        if combatant is None:
            raise NotPermitted("a player must name the combatant they act for")
        if not isinstance(combatant, str):
            raise InvalidDeclaration("combatant must be a combatant id (text)")
        if not viewer.controls(state, combatant):
            raise NotPermitted("you can act only for the combatants of your own seat")

    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        raise NotImplementedError

    def made_beside(self, declaration: Mapping[str, Any], since: Mapping[str, Any]) -> bool:
        """Whether ``declaration``, made before ``since`` was applied, still reads the same board: both
        are simultaneous declarations (:attr:`simultaneous_declarations`) for different combatants."""
        kinds = self.simultaneous_declarations
        mine, other = declaration.get("combatant"), since.get("combatant")
        return (declaration.get("type") in kinds and since.get("type") in kinds
                and isinstance(mine, str) and isinstance(other, str) and mine != other)

    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        raise NotImplementedError

    # --- the common view shape (:data:`VIEW_KEYS`), read off the system's own projection --------
    def common_view(self, view: Mapping[str, Any]) -> dict[str, Any]:
        """The common keys of a projected ``view`` (:data:`VIEW_KEYS`). It is given the view only,
        never the state: what it shows, the system's part already showed this viewer. A system
        fills in :meth:`view_acting` and, where its words differ from the usual ones,
        :meth:`view_fighter_out` and :meth:`view_grid`."""
        return {
            "status": view.get("status"),
            "acting": self.view_acting(view),
            "fighters": self.view_fighters(view),
            "grid": self.view_grid(view) if self.traits.grid else None,
            "legal": list(view.get("legal") or []),
        }

    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        """Whose turn it is or which phase: ``{"combatants": [ids], "label": words}``. By default
        nobody is named, and the label is the round (:attr:`Traits.round_key`) when the view has it."""
        number = view.get(self.traits.round_key)
        label = f"{self.traits.round_word} {number}" if isinstance(number, int) and not isinstance(number, bool) else ""
        return {"combatants": [], "label": label if view.get("status") != "ended" else "Over"}

    def view_fighters(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The combatants of the view's part (``combatants``: a list of entries with ``id``, or a
        dict of them by id) in the one list form (:data:`FIGHTER_KEYS`)."""
        listed = view.get("combatants") or []
        entries = ([(c.get("id", cid), c) for cid, c in listed.items() if isinstance(c, Mapping)] if isinstance(listed, Mapping)
                   else [(c.get("id"), c) for c in listed if isinstance(c, Mapping)])
        out = self.view_fighter_out
        fighters = []
        for cid, c in entries:
            fighter = {"id": cid, "name": c.get("name"), "side": c.get("side"), "controller": c.get("controller")}
            if "seat" in c:
                fighter["seat"] = c["seat"]
            fighter["out"] = bool(out(c))
            fighters.append(fighter)
        return fighters

    def view_fighter_out(self, combatant: Mapping[str, Any]) -> bool:
        """Whether a combatant of the view's part is out of the fight (by default: any of the flags
        ``out``, ``dead``, ``defeated``, ``destroyed``, ``escaped``)."""
        return any(combatant.get(flag) for flag in ("out", "dead", "defeated", "destroyed", "escaped"))

    def view_grid(self, view: Mapping[str, Any]) -> dict[str, Any] | None:
        """The grid of a system played on one (:attr:`Traits.grid`): the view's ``grid`` by default."""
        grid = view.get("grid")
        return dict(grid) if isinstance(grid, Mapping) else None

    def outcome(self, state: State) -> dict[str, Any] | None:
        return state.get("outcome")

    def is_checkpoint(self, state: State) -> bool:
        """True at the start of a turn or round, before anyone declared (kept with each version: an
        undo saved before undo took back one step went back to the last such state)."""
        return True

    # --- the computer's player ----------------------------------------------------------------
    def computer_choice(
        self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
    ) -> dict[str, Any] | None:
        """The next declaration the computer makes for a combatant it plays (``controller ==
        "computer"``), or None when it has nothing to declare now (the default: a system without a
        computer player).

        This is how a system plays the computer's combatants. The engine (rules/engine.py) asks after
        every declaration it applies, after the setup and after an ``assign``, on the new state;
        ``declaration`` and ``events`` are what was just applied and what it made: the command's
        declaration (as the system reads it), the computer's own previous declaration, the board's
        ``{"type": "assign", ...}``, or None after the setup (a computer that plays only when a
        turn starts reads that in the events). The engine applies
        the answer with :meth:`apply`, as the GM's and with the command's dice, so the computer's
        rolls follow the command's in one step (and a real roll it needs holds the whole command,
        rules/physical.py), then asks again; at most ``rules.engine.COMPUTER_LIMIT`` times in a row,
        after which the GM takes over. The answer itself rolls no dice: the declaration it names does.

        Every system with a computer player plays it this way, with two parts kept where they were
        because the hook cannot put them in the same order: Phantom's Bane's GM ``force_resolve``
        still picks for whoever has not chosen (the GM's declaration, its picks among its own
        rolls); and AD&D's computer declares inline when a surprise segment opens in the middle
        of the resolution of the one before, since the DM's ``resolve_all`` may go on resolving
        the new segment, after those declarations, within the same declaration (the loop runs only
        after it). See each system's computer.py.
        """
        return None

    def assign(
        self, state: State, combatant_id: str, controller: str, seat: str | None, dice: DiceSource | None = None
    ) -> tuple[State, list[Event]]:
        """Hand a combatant to the GM, the computer or a seat in the middle of a battle.

        ``dice`` lets a system have the computer act at once for a combatant it now plays.
        """
        combatants = state.get("combatants", {})
        if combatant_id not in combatants:
            raise InvalidDeclaration(f"no combatant {combatant_id!r}")
        if controller not in CONTROLLERS:
            raise InvalidDeclaration("controller must be gm, computer or seat")
        if controller == "seat" and not seat:
            raise InvalidDeclaration("a seat is needed")
        new = clone(state)
        new["combatants"][combatant_id]["controller"] = controller
        new["combatants"][combatant_id]["seat"] = seat if controller == "seat" else None
        name = new["combatants"][combatant_id].get("name", combatant_id)
        who = {"gm": "the GM", "computer": "the computer", "seat": "a player"}[controller]
        return new, [event("combatant.assigned", f"{name} is now played by {who}.", combatant=combatant_id)]

    # --- the tables outside the battle: report and carry-over (see :class:`Traits`) -----------
    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> Mapping[str, Mapping[str, float]]:
        """Each report chart's value per side at this state: ``{chart key: {side: value}}`` (a side
        left out counts 0). ``shown``: each combatant as the spectators see it, by id, when a public
        report reads a system whose numbers are hidden (:attr:`Traits.public_charts`), else None."""
        return {}

    def report_lines(self, state: Mapping[str, Any]) -> Mapping[str, Mapping[str, float]]:
        """Lines a report draws across a chart: ``{chart key: {side: value}}`` (none by default)."""
        return {}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        """A combatant's values as a report prints them: ``{label: text}``. ``seen``: the combatant
        as the spectators see it in a public report of a system whose numbers are hidden, else None."""
        return {}

    def carry_standing(self, combatant: Mapping[str, Any]) -> Standing | None:
        """Where a combatant stands at the end of a battle: None (still standing), :data:`FALLEN`
        (out of the fight, alive: carried over only when asked) or :data:`GONE` (never carried)."""
        return None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        """The lineup entry of the next battle for a survivor: ``entry`` (a copy of the one this battle
        began from) with the combatant's state at the end written in; None leaves it out. Read only
        when :attr:`Traits.carries_over`."""
        return entry
