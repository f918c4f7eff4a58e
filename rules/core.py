"""Shared types of every rule system: viewers, events, form fields (the system base class, the
contract each system fills in, is rules/contract.py).

A rule system is data plus pure functions. Its battle state is a JSON-serialisable ``dict``;
:meth:`rules.contract.RuleSystem.apply` takes the state, one declaration, the viewer who sent it and
a dice source, and returns the new state and the events that happened. Nothing here does I/O.

State conventions every system follows (the web layer relies on them):

- ``state["combatants"]``: ``{combatant_id: {"name", "side", "seat", "controller", ...}}`` where
  ``controller`` is ``"gm"``, ``"computer"`` or ``"seat"`` and ``seat`` is the opaque id of the
  player seat that controls it (``None`` unless ``controller == "seat"``).
- ``state["status"]``: ``"setup"``, ``"active"`` or ``"ended"``.

Events say what happened in words for each audience. ``visibility`` says who gets an event whole
(its text, data and rolls); ``others`` gives the words (and the data and rolls) written for
everyone else, who otherwise get nothing of it. A value a viewer's view hides never appears in
the version of an event that viewer gets.

>>> gm, spectator = Viewer.gm(), Viewer.spectator()
>>> e = event("choice.made", "Jharek has chosen.", visibility="gm")
>>> [ev["type"] for ev in visible_events([e], gm)], visible_events([e], spectator)
(['choice.made'], [])
>>> dodge = event("defence.declared", "The stalker dodges: target number 30 (half Fray 30).",
...               visibility="gm", others=told("The stalker dodges."), combatant="c3", target=30)
>>> [(ev["text"], ev["data"]) for ev in visible_events([dodge], spectator)]
[('The stalker dodges.', {})]
>>> visible_events([dodge], gm)[0]["data"]
{'combatant': 'c3', 'target': 30}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .dice import Roll
from .errors import InvalidDeclaration

Role = Literal["gm", "player", "spectator"]
State = dict[str, Any]
Event = dict[str, Any]

PUBLIC = "public"
GM_ONLY = "gm"


@dataclass(frozen=True)
class Viewer:
    """Who is looking at (or acting on) a battle: a GM, the player of one seat, or a spectator."""

    role: Role
    seat: str | None = None

    @classmethod
    def gm(cls) -> Viewer:
        return cls("gm")

    @classmethod
    def spectator(cls) -> Viewer:
        return cls("spectator")

    @classmethod
    def player(cls, seat: str) -> Viewer:
        return cls("player", seat)

    @property
    def is_gm(self) -> bool:
        return self.role == "gm"

    def controls(self, state: Mapping[str, Any], combatant_id: str) -> bool:
        """True if this viewer may act for the combatant (a GM may act for anyone)."""
        if self.is_gm:
            return True
        if not isinstance(combatant_id, str):
            return False
        combatant = state.get("combatants", {}).get(combatant_id)
        return bool(
            self.role == "player"
            and combatant is not None
            and combatant.get("controller") == "seat"
            and combatant.get("seat") == self.seat
        )

    def own_combatants(self, state: Mapping[str, Any]) -> list[str]:
        """The ids of the combatants this viewer's seat controls (none for GM or spectator)."""
        if self.role != "player":
            return []
        return [
            cid
            for cid, c in state.get("combatants", {}).items()
            if c.get("controller") == "seat" and c.get("seat") == self.seat
        ]


def combatant_visibility(combatant_id: str) -> str:
    """Visibility of an event only the GM and the controller of one combatant may see."""
    return f"combatant:{combatant_id}"


def owner_visibility(combatant_id: str) -> str:
    """Visibility of a secret only the player of one combatant may see — not even the GM's shared screen."""
    return f"owner:{combatant_id}"


#: kept in the log for audit and replay, shown to nobody
HIDDEN = "hidden"


def may_see(visibility: str, viewer: Viewer, state: Mapping[str, Any]) -> bool:
    """Whether ``viewer`` may see something with the given visibility.

    >>> state = {"combatants": {"a": {"controller": "seat", "seat": "s1"}}}
    >>> [may_see("owner:a", v, state) for v in (Viewer.player("s1"), Viewer.gm(), Viewer.spectator())]
    [True, False, False]
    >>> [may_see(v, Viewer.gm(), state) for v in ("public", "gm", "combatant:a", "hidden")]
    [True, True, True, False]
    """
    if visibility == PUBLIC:
        return True
    if visibility == HIDDEN:
        return False
    if visibility.startswith("owner:"):
        return viewer.role == "player" and viewer.controls(state, visibility.split(":", 1)[1])
    if viewer.is_gm:
        return True
    if visibility.startswith("combatant:"):
        return viewer.controls(state, visibility.split(":", 1)[1])
    return False


def event(
    type: str,
    text: str,
    *,
    visibility: str = PUBLIC,
    rolls: Iterable[Roll | Mapping[str, Any]] = (),
    others: Mapping[str, Any] | str | None = None,
    **data: Any,
) -> Event:
    """Build one event: ``type`` is ``noun.past_verb``, ``text`` the plain-words line for the log.

    ``visibility`` says who gets it whole; ``others`` (see :func:`told`; plain text means words
    without data or rolls) is what every other viewer gets instead, or nothing if it is None."""
    built: Event = {
        "type": type,
        "text": text,
        "visibility": visibility,
        "rolls": _roll_dicts(rolls),
        "data": data,
    }
    if others is not None and visibility != PUBLIC:
        built["others"] = told(others) if isinstance(others, str) else dict(others)
    return built


def told(text: str, *, rolls: Iterable[Roll | Mapping[str, Any]] = (), **data: Any) -> dict[str, Any]:
    """An event's words for the viewers its visibility leaves out: written for them, with only the
    data and rolls they may have (a die face is public; a hidden target number or stat is not).

    >>> told("Jinx dodges: success.", combatant="c1")
    {'text': 'Jinx dodges: success.', 'rolls': [], 'data': {'combatant': 'c1'}}
    """
    return {"text": text, "rolls": _roll_dicts(rolls), "data": data}


def _roll_dicts(rolls: Iterable[Roll | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [r.to_dict() if isinstance(r, Roll) else dict(r) for r in rolls]


#: the keys of an event that its words for the others replace
_WORDS = ("text", "rolls", "data")


def event_for(ev: Mapping[str, Any], viewer: Viewer, state: Mapping[str, Any]) -> Event | None:
    """One event as ``viewer`` gets it (without its visibility): whole if its visibility lets the
    viewer see it, else its words for the others, else None.

    >>> e = event("attack.rolled", "A rolls 45 against 70.", visibility="gm", others="A rolls 45.")
    >>> event_for(e, Viewer.spectator(), {})["text"], event_for(e, Viewer.gm(), {})["text"]
    ('A rolls 45.', 'A rolls 45 against 70.')
    """
    if may_see(str(ev.get("visibility", GM_ONLY)), viewer, state):
        return {k: v for k, v in ev.items() if k != "visibility" and k != "others"}
    others = ev.get("others")
    if not isinstance(others, Mapping):
        return None
    shown = {k: v for k, v in ev.items() if k not in _WORDS and k != "visibility" and k != "others"}
    shown.update(text=others.get("text", ""), rolls=others.get("rolls") or [], data=others.get("data") or {})
    return shown


def visible_events(
    events: Iterable[Event], viewer: Viewer, state: Mapping[str, Any] | None = None
) -> list[Event]:
    """The events as ``viewer`` gets them (ownership read from ``state``): see :func:`event_for`."""
    state = state or {}
    return [shown for e in events if (shown := event_for(e, viewer, state)) is not None]


def reaches_only_the_gm(ev: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    """Whether no viewer but the GM gets anything of an event (its visibility reaches no seat, and
    it has no words for the others). A GM's command whose events all do is a secret of the GM's.

    >>> state = {"combatants": {"npc": {"controller": "gm"}, "pc": {"controller": "seat", "seat": "s1"}}}
    >>> [reaches_only_the_gm({"visibility": v}, state) for v in ("gm", "hidden", "combatant:npc", "combatant:pc", "public")]
    [True, True, True, False, False]
    """
    if ev.get("others"):
        return False
    visibility = str(ev.get("visibility", GM_ONLY))
    if visibility in (GM_ONLY, HIDDEN):
        return True
    kind, _, combatant_id = visibility.partition(":")
    if kind in ("combatant", "owner"):
        combatant = state.get("combatants", {}).get(combatant_id) or {}
        return combatant.get("controller") != "seat"
    return False


@dataclass(frozen=True)
class Field:
    """One field of a stat form or an options form, rendered generically by the board."""

    name: str
    label: str
    kind: Literal["int", "text", "bool", "choice"] = "int"
    default: Any = 0
    min: int | None = None
    max: int | None = None
    choices: tuple[tuple[str, str], ...] = ()
    help: str = ""
    group: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "kind": self.kind,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "choices": [list(c) for c in self.choices],
            "help": self.help,
            "group": self.group,
        }

    def clean(self, raw: Any, what: str = "") -> Any:
        """Validate and normalise one value, raising :class:`InvalidDeclaration` with a clear message."""
        where = f"{what}{self.label}"
        if raw is None:
            raw = self.default
        if self.kind == "int":
            if isinstance(raw, bool):
                raise InvalidDeclaration(f"{where} must be a whole number")
            if isinstance(raw, str) and raw.strip().lstrip("+-").isdigit():
                raw = int(raw.strip())
            if isinstance(raw, float) and raw.is_integer():
                raw = int(raw)
            if not isinstance(raw, int):
                raise InvalidDeclaration(f"{where} must be a whole number, not {raw!r}")
            if self.min is not None and raw < self.min:
                raise InvalidDeclaration(f"{where} must be at least {self.min} (got {raw})")
            if self.max is not None and raw > self.max:
                raise InvalidDeclaration(f"{where} must be at most {self.max} (got {raw})")
            return raw
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            if raw in ("true", "on", "1", 1):
                return True
            if raw in ("false", "off", "0", 0, ""):
                return False
            raise InvalidDeclaration(f"{where} must be yes or no")
        if self.kind == "choice":
            allowed = [c[0] for c in self.choices]
            if raw not in allowed:
                raise InvalidDeclaration(f"{where} must be one of {', '.join(allowed)} (got {raw!r})")
            return raw
        if not isinstance(raw, str):
            raise InvalidDeclaration(f"{where} must be text")
        text = raw.strip()
        limit = self.max or 60
        if len(text) > limit:
            raise InvalidDeclaration(f"{where} is too long ({len(text)} characters, at most {limit})")
        if self.min and len(text) < self.min:
            raise InvalidDeclaration(f"{where} must not be empty")
        return text


def clean_fields(fields: Iterable[Field], data: Any, what: str = "") -> dict[str, Any]:
    """Validate a whole form: unknown keys are ignored, missing ones take their defaults."""
    if not isinstance(data, Mapping):
        raise InvalidDeclaration(f"{what or 'the form'} must be an object")
    return {f.name: f.clean(data.get(f.name), what) for f in fields}


CONTROLLERS = ("gm", "computer", "seat")


def clean_lineup_entry(entry: Any, index: int) -> dict[str, Any]:
    """The system-independent part of a lineup entry: id, name, side, controller, seat, and
    ``hidden: true`` for one the battle starts with hidden from the table (rules/hiding.py; the key
    is there only when it is true)."""
    if not isinstance(entry, Mapping):
        raise InvalidDeclaration(f"combatant {index + 1} must be an object")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidDeclaration(f"combatant {index + 1} needs a name")
    if len(name.strip()) > 40:
        raise InvalidDeclaration(f"the name {name[:40]!r}… is too long (at most 40 characters)")
    controller = entry.get("controller", "gm")
    if controller not in CONTROLLERS:
        raise InvalidDeclaration(f"{name}: controller must be gm, computer or seat")
    seat = entry.get("seat")
    if controller == "seat":
        if not isinstance(seat, str) or not seat:
            raise InvalidDeclaration(f"{name}: a seat-controlled combatant needs a seat")
    else:
        seat = None
    side = entry.get("side", "A")
    if not isinstance(side, str) or not side or len(side) > 20:
        raise InvalidDeclaration(f"{name}: side must be a short name")
    cid = entry.get("id") or f"c{index + 1}"
    if not isinstance(cid, str) or len(cid) > 24 or not cid.replace("-", "").replace("_", "").isalnum():
        raise InvalidDeclaration(f"{name}: bad combatant id {cid!r}")
    hidden = entry.get("hidden", False)
    if not isinstance(hidden, bool):
        raise InvalidDeclaration(f"{name}: hidden must be true or false")
    if hidden and controller == "seat":
        raise InvalidDeclaration(f"{name}: a player's combatant cannot be hidden from its player")
    base = {"id": cid, "name": name.strip(), "side": side, "controller": controller, "seat": seat}
    return {**base, "hidden": True} if hidden else base


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars), several times faster than ``copy.deepcopy``.

    >>> state = {"combatants": {"a": {"wounds": [1, 2]}}}
    >>> copied = clone(state)
    >>> copied == state and copied["combatants"]["a"]["wounds"] is not state["combatants"]["a"]["wounds"]
    True
    """
    kind = type(value)
    # the common shapes by exact type, and scalars copied without a call of their own
    if kind is dict:
        return {key: item if type(item) in _SCALARS else clone(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else clone(item) for item in value]
    if kind in _SCALARS:
        return value
    if isinstance(value, dict):
        return {key: clone(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clone(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


class Owned(dict[str, Any]):
    """A battle's state that the engine copied for one command (:func:`rules.engine.step`): a system's
    ``apply`` changes it in place (:func:`own`) rather than copying it again. Any other state handed
    to ``apply`` (by the odds, the chances, the tests) is copied first, and left as it was."""


def own(state: Mapping[str, Any]) -> State:
    """The state a system's ``apply`` may change: the engine's copy for the command itself, any
    other a copy of it.

    >>> given = {"round": 1}
    >>> own(given) is given, own(engine_copy := Owned(given)) is engine_copy
    (False, True)
    """
    return state if type(state) is Owned else clone(state)


def require(
    declaration: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str | None = None
) -> Any:
    """Fetch a required declaration field of a given type, or raise :class:`InvalidDeclaration`."""
    if not isinstance(declaration, Mapping):
        raise InvalidDeclaration("a declaration must be an object")
    value = declaration.get(key)
    if value is None or isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise InvalidDeclaration(f"the declaration needs {what or key}")
    return value
