"""Physical dice: rolls that a player (or the GM) rolls at the table and types in.

Who rolls is the battle's option ``who_rolls`` (every system keeps its options in ``state["options"]``:
``board``, the default; ``players``, their own combatants; ``all``, the GM typing for the rest), and
``state["physical"]`` keeps what changed since (absent until then)::

    {"mode": "board" | "players" | "all", "combatants": [ids switched to physical dice by the GM],
     "pending": None | {"declaration", "viewer", "entries", "need", "board"}}

``need`` is the roll due: ``{roller, roller_name, seats, count, low, high, die, notation, purpose,
modifier}`` (``seats``: the player seats that may type it; the GM always may). Views get
:func:`dice_view`; the declaration waiting is never part of any view.

A rule system says whose roll a roll is at its call site: ``rolled_by(dice, combatant_id).roll(...)``
(or a side, ``"side:A"``, or ``"gm"`` for the GM's own procedural rolls; a roll without a roller is
always the board's). With an ordinary dice source :func:`rolled_by` gives the source itself, so
nothing changes for tests, odds or replays of board-only battles.

:func:`apply_declaration` runs a system's ``apply`` through :class:`PhysicalDice`: a roll that
belongs to a physical roller takes the next typed entry, and when there is none the system's apply
stops with :class:`DiceNeeded`; the state then keeps the declaration as *pending* with what to roll,
for whom, and nothing else changes. :func:`resume` re-applies the pending declaration from the same
state with one more entry (and the board's dice from the same seed for the rest): it resolves, or it
asks for the next physical roll. The outcome is exactly what the board's dice would have given with
those faces.

>>> from rules.dice import ScriptedDice
>>> state = {"combatants": {"a": {"name": "Jharek", "controller": "seat", "seat": "s1"}},
...          "physical": {"mode": "players", "combatants": [], "pending": None}}
>>> dice = PhysicalDice(ScriptedDice([2]), state, [{"faces": [6, 5], "by": "seat:s1"}])
>>> r = rolled_by(dice, "a").roll(2, 6, "Jharek disengagement")
>>> r.total, r.to_dict()["physical"], r.to_dict()["entered_by"]
(11, True, 'seat:s1')
>>> rolled_by(dice, "a").roll(1, 6, "Jharek offence die")
Traceback (most recent call last):
...
rules.physical.DiceNeeded: roll 1d6 for Jharek offence die
>>> dice.roll(1, 6, "the board's own die").total
2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from .core import Field, State, Viewer, clone, event
from .dice import DiceSource, MassFaces, Roll, notation
from .errors import IllegalDeclaration, InvalidDeclaration, NotPermitted

MODES = ("board", "players", "all")

#: the per-battle option every system offers (see RuleSystem.battle_option_fields)
WHO_ROLLS = Field(
    "who_rolls",
    "Who rolls the dice",
    kind="choice",
    default="board",
    choices=(
        ("board", "The board rolls everything"),
        ("players", "Players roll their own dice, the board rolls for the GM"),
        ("all", "Everyone rolls real dice, the GM types for NPCs"),
    ),
    help="With real dice the battle waits for each roll: the roller's phone (or the GM console) shows "
    "what to roll and one button per face. The GM can switch any combatant to real dice mid-battle, "
    "and roll with the board's dice for someone who is away.",
    group="Dice",
)

#: a pending roll asks for at most this many dice (typing more is no fun; bigger rolls stay the board's)
MAX_PHYSICAL_DICE = 20


class DiceNeeded(Exception):  # noqa: N818 - a signal, not an error: the battle waits for dice
    """A roll belongs to a physical roller and no faces were typed for it yet."""

    def __init__(self, need: dict[str, Any]) -> None:
        super().__init__(f"roll {need['notation']} for {need['purpose']}")
        self.need = need


@dataclass(frozen=True)
class PhysicalRoll(Roll):
    """A roll whose faces someone typed in: its record says so and who typed them."""

    entered_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        record = super().to_dict()
        record["physical"] = True
        record["entered_by"] = self.entered_by
        return record


def rolled_by(dice: Any, roller: str | None) -> Any:
    """The dice source to roll ``roller``'s roll with (itself, unless it knows physical rollers)."""
    ask = getattr(dice, "for_roller", None)
    return ask(roller) if ask is not None else dice


# --- the settings in a battle's state ---------------------------------------------------------
class Settings(TypedDict):
    mode: str
    combatants: list[str]
    pending: dict[str, Any] | None


def settings(state: Mapping[str, Any]) -> Settings:
    """The battle's physical-dice settings, defaults filled in."""
    raw = state.get("physical") if isinstance(state, Mapping) else None
    raw = raw if isinstance(raw, Mapping) else {}
    mode = raw.get("mode")
    if mode not in MODES:  # until the GM changes something, the battle's option (every system keeps its options)
        options = state.get("options") if isinstance(state, Mapping) else None
        mode = options.get("who_rolls") if isinstance(options, Mapping) else None
    return {"mode": mode if mode in MODES else "board", "combatants": list(raw.get("combatants") or []),
            "pending": raw.get("pending")}


def active(state: Mapping[str, Any]) -> bool:
    """Whether any roll of this battle may be physical (otherwise the board's dice are used unwrapped)."""
    return _any_physical(settings(state))


def _any_physical(found: Settings) -> bool:
    """Whether settings let any roll be physical (see :func:`active`)."""
    return found["mode"] != "board" or bool(found["combatants"])


def pending(state: Mapping[str, Any]) -> dict[str, Any] | None:
    return settings(state)["pending"]


def names_seat(state: Mapping[str, Any], seat: str | None) -> bool:
    """Whether the roll the battle waits for names a seat: as one that may type its faces, or as the
    seat whose declaration waits for them (:func:`dice_view` shows such a seat more than others).

    >>> waiting = {"physical": {"pending": {"need": {"seats": ["s1"]}, "viewer": {"seat": "s2"}}}}
    >>> [names_seat(waiting, s) for s in ("s1", "s2", "s3")], names_seat({}, "s1")
    ([True, True, False], False)
    """
    waiting = pending(state)
    if not isinstance(waiting, Mapping) or seat is None:
        return False
    need, viewer = waiting.get("need") or {}, waiting.get("viewer") or {}
    return seat in (need.get("seats") or []) or viewer.get("seat") == seat


def _rolls_physically(state: Mapping[str, Any], cid: str) -> bool:
    found = settings(state)
    combatant = state.get("combatants", {}).get(cid)
    if combatant is None:
        return False
    if cid in found["combatants"] or found["mode"] == "all":
        return True
    controller: object = combatant.get("controller")
    return found["mode"] == "players" and controller == "seat"


def who_enters(state: Mapping[str, Any], roller: str | None) -> tuple[bool, list[str], str]:
    """Whether ``roller``'s roll is physical, the seats that may type it (the GM always may) and the
    roller's name for the prompt."""
    if roller is None:
        return False, [], "the board"
    combatants = state.get("combatants", {})
    if roller == "gm":
        return settings(state)["mode"] == "all", [], "the GM"
    if roller.startswith("side:"):
        side = roller.split(":", 1)[1]
        members = [cid for cid, c in combatants.items() if c.get("side") == side]
        rolling = [cid for cid in members if _rolls_physically(state, cid)]
        seats = sorted({combatants[cid]["seat"] for cid in rolling if combatants[cid].get("controller") == "seat" and combatants[cid].get("seat")})
        return bool(rolling), seats, f"side {side}"
    combatant = combatants.get(roller)
    if combatant is None:
        return False, [], roller
    seats = [combatant["seat"]] if combatant.get("controller") == "seat" and combatant.get("seat") else []
    return _rolls_physically(state, roller), seats, str(combatant.get("name", roller))


# --- the dice source -------------------------------------------------------------------------
def _die_name(low: int, high: int) -> str:
    if (low, high) in ((1, 100), (0, 99)):
        return "d100"
    if low == 1:
        return f"d{high}"
    return f"{low}-{high}"


class PhysicalDice:
    """The board's dice (``base``) for every roll but the physical ones, which take typed entries."""

    def __init__(self, base: DiceSource, state: Mapping[str, Any], entries: Sequence[Mapping[str, Any]] = ()) -> None:
        self.base = base
        self.state = state
        self.entries = list(entries)
        self.used = 0

    # the board's rolls
    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        return self.base.roll(count, sides, purpose, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        return self.base.randint(low, high, purpose)

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        return self.base.integers(low, high, size, purpose)

    def derive(self, label: str) -> DiceSource:
        return self.base.derive(label)

    def for_roller(self, roller: str | None) -> Any:
        physical, seats, name = who_enters(self.state, roller)
        return _Roller(self, roller, seats, name) if physical else self.base

    # a physical roller's roll
    def take(self, roller: str | None, seats: list[str], name: str, count: int, low: int, high: int,
             purpose: str, modifier: int, text: str, record: str) -> Roll:
        """The next typed entry as the roll of ``roller`` (``text``: what to roll, ``record``: the
        notation the board's own dice would record), or :class:`DiceNeeded` when none is left."""
        if self.used >= len(self.entries):
            raise DiceNeeded({
                "roller": roller, "roller_name": name, "seats": seats, "count": count, "low": low, "high": high,
                "die": _die_name(low, high), "notation": text, "purpose": purpose, "modifier": modifier,
            })
        entry = self.entries[self.used]
        faces = tuple(int(f) for f in entry.get("faces", []))
        if len(faces) != count or any(not low <= f <= high for f in faces):
            raise InvalidDeclaration(f"the typed faces {list(faces)} do not fit {text} for {purpose}")
        self.used += 1
        by = str(entry.get("by", "gm"))
        if by == "board":  # the GM's override: the board's dice for an absent roller
            return Roll(record, purpose, faces, modifier)
        return PhysicalRoll(record, purpose, faces, modifier, entered_by=by)


class _Roller:
    """One roller's view of :class:`PhysicalDice`: its rolls take typed faces."""

    def __init__(self, dice: PhysicalDice, roller: str | None, seats: list[str], name: str) -> None:
        self.dice, self.roller, self.seats, self.name = dice, roller, seats, name

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        if count > MAX_PHYSICAL_DICE or count < 1:
            return self.dice.base.roll(count, sides, purpose, modifier)
        return self.dice.take(self.roller, self.seats, self.name, count, 1, sides, purpose, modifier,
                              notation(count, sides, 0), notation(count, sides, modifier))

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        if high - low >= 100:  # no die shows that many faces
            return self.dice.base.randint(low, high, purpose)
        die = _die_name(low, high)
        return self.dice.take(self.roller, self.seats, self.name, 1, low, high, purpose, 0,
                              f"1{die}" if die.startswith("d") and die != "d100" else die, f"{low}-{high}")

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        return self.dice.base.integers(low, high, size, purpose)

    def derive(self, label: str) -> DiceSource:
        return self.dice.base.derive(label)


# --- applying a declaration, waiting, resuming -------------------------------------------------
def apply_declaration(
    system: Any, state: State, declaration: Mapping[str, Any], viewer: Viewer, base: DiceSource,
    entries: Sequence[Mapping[str, Any]] = (), *, board: Mapping[str, Any] | None = None,
    work: State | None = None,
) -> tuple[State, list[dict[str, Any]]]:
    """``system.apply`` with the battle's physical rolls taken from ``entries``.

    When a physical roll has no entry, the answer is ``state`` with the declaration pending (what to
    roll, for whom; ``board``: what the caller needs to make the same board dice again when the faces
    come, e.g. the version and seed mix of this command) and one event saying what the battle waits for. A battle without physical dice is applied unwrapped.

    ``work``: a copy of ``state`` the system may change (the engine's); without it one is made here.
    ``state`` itself is never changed."""
    if not active(state):
        new_state, events = system.apply(state if work is None else work, declaration, viewer, base)
        return new_state, list(events)
    found = settings(state)
    if found["pending"] is not None:
        raise IllegalDeclaration(f"the battle waits for dice: {found['pending']['need']['notation']} from "
                                 f"{found['pending']['need']['roller_name']}")
    calm = {**found, "pending": None}
    before = {**state, "physical": calm}  # who rolls physically is read from here, never changed
    # the system may change its copy before it stops
    scratch = clone(before) if work is None else {**work, "physical": clone(calm)}
    dice = PhysicalDice(base, before, entries)
    try:
        new_state, events = system.apply(scratch, declaration, viewer, dice)
    except DiceNeeded as needed:
        need = needed.need
        kept = state if work is None else clone(state)  # the state returned shares nothing with the one given
        waiting = {**kept, "physical": {**calm, "pending": {
            "declaration": dict(declaration), "viewer": {"role": viewer.role, "seat": viewer.seat},
            "board": dict(board or {}), "entries": [dict(e) for e in entries], "need": need,
        }}}
        who = "the GM" if not need["seats"] else need["roller_name"]
        text = f"Waiting for {who} to roll {need['notation']} with real dice."
        return waiting, [event("dice.requested", text, roller=need["roller"], notation=need["notation"])]
    new_state["physical"] = {**settings(new_state), "mode": calm["mode"], "combatants": calm["combatants"], "pending": None}
    return new_state, [_marked(e) for e in events]


#: the log's mark on a line whose dice were typed in by hand (plain words: every screen and reader shows them)
HAND = " (real dice)"


def _marked(ev: dict[str, Any]) -> dict[str, Any]:
    """An event whose rolls include typed faces says so at the end of its log line."""
    if any(r.get("physical") for r in ev.get("rolls") or ()) and isinstance(ev.get("text"), str) and not ev["text"].endswith(HAND):
        ev = {**ev, "text": ev["text"] + HAND}
        others = ev.get("others")
        if isinstance(others, dict) and isinstance(others.get("text"), str) and not others["text"].endswith(HAND):
            ev["others"] = {**others, "text": others["text"] + HAND}  # (the words for the others too)
    return ev


def resume(system: Any, state: State, entry: Mapping[str, Any], base: DiceSource, *,
           work: State | None = None) -> tuple[State, list[dict[str, Any]]]:
    """Re-apply the pending declaration with one more typed entry (``base``: the board's dice of the
    command that first asked, made from ``pending(state)["board"]``; ``work``: as for
    :func:`apply_declaration`)."""
    waiting = pending(state)
    if waiting is None:
        raise IllegalDeclaration("no roll is due: there is nothing to type in")
    calm = {**state, "physical": {**settings(state), "pending": None}}
    calm_work = None if work is None else {**work, "physical": {**settings(work), "pending": None}}
    viewer = Viewer(waiting["viewer"]["role"], waiting["viewer"].get("seat"))
    entries = [*waiting["entries"], dict(entry)]
    return apply_declaration(system, calm, waiting["declaration"], viewer, base, entries, board=waiting["board"], work=calm_work)


def board_entry(state: Mapping[str, Any], dice: DiceSource) -> dict[str, Any]:
    """The GM's override: the due roll's faces from the board's dice (for a roller who is away)."""
    waiting = pending(state)
    if waiting is None:
        raise IllegalDeclaration("no roll is due: there is nothing to roll")
    need = waiting["need"]
    faces = [dice.randint(need["low"], need["high"], need["purpose"]).faces[0] for _ in range(need["count"])]
    return {"faces": faces, "by": "board"}


def check_entry(state: Mapping[str, Any], viewer: Viewer, faces: Any) -> dict[str, Any]:
    """The typed faces of the due roll as an entry, or a clear refusal: no roll due, not this viewer's
    roll, the wrong number of faces, a face the die cannot show."""
    waiting = pending(state)
    if waiting is None:
        raise IllegalDeclaration("no roll is due: there is nothing to type in")
    need = waiting["need"]
    if viewer.role == "spectator":
        raise NotPermitted("spectators watch; they cannot roll")
    if not viewer.is_gm and viewer.seat not in need["seats"]:
        raise NotPermitted(f"this roll is {need['roller_name']}'s, not yours")
    if not isinstance(faces, list) or any(not isinstance(f, int) or isinstance(f, bool) for f in faces):
        raise InvalidDeclaration("faces must be a list of whole numbers")
    if len(faces) != need["count"]:
        raise InvalidDeclaration(f"{need['notation']} needs {need['count']} face{'s' if need['count'] != 1 else ''}, not {len(faces)}")
    for face in faces:
        if not need["low"] <= face <= need["high"]:
            raise InvalidDeclaration(f"a {need['die']} shows {need['low']} to {need['high']}, not {face}")
    return {"faces": list(faces), "by": "gm" if viewer.is_gm else f"seat:{viewer.seat}"}


def switch(state: State, combatant: Any, on: Any) -> tuple[State, list[dict[str, Any]]]:
    """The GM switches one combatant to real dice (``on``) or back to the board's."""
    if not isinstance(combatant, str) or combatant not in state.get("combatants", {}):
        raise InvalidDeclaration("name a combatant of this battle")
    if not isinstance(on, bool):
        raise InvalidDeclaration("physical must be true or false")
    found = settings(state)
    ids = [cid for cid in found["combatants"] if cid != combatant] + ([combatant] if on else [])
    new_state = {**state, "physical": {**found, "combatants": ids}}
    name = state["combatants"][combatant].get("name", combatant)
    text = f"{name} now rolls real dice." if on else f"The board rolls for {name} again."
    return new_state, [event("dice.switched", text, combatant=combatant, physical=on)]


def dice_view(state: Mapping[str, Any], viewer: Viewer) -> dict[str, Any] | None:
    """What a viewer's page shows of physical dice: who rolls physically and the roll due, if any.

    Everyone sees that the battle waits and for whom; the purpose and the entry are for those who
    may type the faces (the roller's seat and the GM)."""
    found = settings(state)
    if not _any_physical(found) and found["pending"] is None:
        return None
    combatants = state.get("combatants", {})
    view: dict[str, Any] = {
        "mode": found["mode"],
        "physical": sorted(cid for cid in combatants if _rolls_physically(state, cid)),
        "switched": list(found["combatants"]),
        "due": None,
    }
    waiting = found["pending"] if state.get("status") != "ended" else None  # an ended battle waits for nothing
    if waiting is not None:
        need = waiting["need"]
        mine = viewer.is_gm or (viewer.role == "player" and viewer.seat in need["seats"])
        due = {"roller": need["roller"], "roller_name": need["roller_name"], "notation": need["notation"],
               "count": need["count"], "mine": mine, "players": bool(need["seats"]),
               # the viewer whose declaration waits for these dice (its phone says its choice is in)
               "yours": viewer.role == "player" and waiting["viewer"].get("seat") == viewer.seat}
        if mine:
            due.update(purpose=need["purpose"], low=need["low"], high=need["high"], die=need["die"],
                       modifier=need["modifier"], prompt=f"Roll {need['notation']} for {need['purpose']}")
        view["due"] = due
    return view
