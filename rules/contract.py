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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, TypeVar

from .core import CONTROLLERS, Event, Field, State, Viewer, clean_fields, clean_lineup_entry, clone, event
from .dice import DiceSource
from .errors import InvalidDeclaration, NotPermitted
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


class RuleSystem:
    """Base class of a rule system. Subclasses fill in the class attributes and the methods, and
    register each declaration's handler with :func:`declaration`.

    The web layer and the engine (rules/engine.py) call, and only call:

    - :meth:`combatant_fields`, :meth:`option_fields`, :meth:`presets`, :meth:`help` for the GM's forms;
    - :meth:`validate_combatant` on every stat block a GM types or loads;
    - :meth:`setup` to start a battle from a lineup;
    - :meth:`authorize` then :meth:`apply` for each declaration (:meth:`handler` finds the
      registered handler of a declaration type);
    - :meth:`assign` when the GM hands a combatant over;
    - :meth:`view_for` for each viewer's projection (with ``legal``: what that viewer may declare now);
    - :meth:`is_checkpoint` to mark the start of a turn or round in the log; :meth:`outcome` to know it ended.
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
        """The system's options and the ones every battle has (who rolls the dice: rules/physical.py)."""
        return [*self.option_fields(), WHO_ROLLS]

    def validate_options(self, data: Any) -> dict[str, Any]:
        return clean_fields(self.battle_option_fields(), data or {}, "option ")

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

    def outcome(self, state: State) -> dict[str, Any] | None:
        return state.get("outcome")

    def is_checkpoint(self, state: State) -> bool:
        """True at the start of a turn or round, before anyone declared (kept with each version: an
        undo saved before undo took back one step went back to the last such state)."""
        return True

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
