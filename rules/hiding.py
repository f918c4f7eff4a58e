"""Hidden combatants: the goblins already in the shadows, which the table sees only when they step out.

A combatant may carry ``hidden: true``, in its lineup entry (the battle starts with it hidden) and
in the state (``state["combatants"][id]["hidden"]``). The GM hides one (``hide_combatant``) or reveals it
(``reveal_combatant``) with the engine's board commands (rules/engine.py), logged like every command. Only
the GM sees a hidden combatant; for everyone else, everything here makes it absent:

- :func:`scrub`: the projected view of a viewer who is not the GM loses every trace of it (its
  entries, its id wherever it stood, its name in any words), in one place for every system
  (:func:`rules.engine.project`);
- :func:`conceal`: the events a command made that name it are the GM's alone; the others get
  anonymous words ("Something strikes at Jinx from the dark.") or nothing, as the battle's option
  ``hidden_words`` says (:data:`HIDDEN_WORDS`);
- :func:`check_targets`: a player's declaration that names it anywhere is refused, as if it were not
  there ("that target cannot be seen");
- :func:`offers`: the GM is offered to reveal it when it attacks, or when a player's combatant
  comes within ``reveal_range`` squares of it (:data:`REVEAL_RANGE`; 0: never).

Battles with no hidden combatant are untouched: their states, events and views are exactly what they
were, so stored battles verify as they always did.

>>> state = {"combatants": {"g": {"name": "Goblin", "hidden": True}, "j": {"name": "Jinx"}}}
>>> hidden_names(state)
{'g': 'Goblin'}
>>> scrub({"order": [{"id": "g", "name": "Goblin"}, {"id": "j", "name": "Jinx"}], "active": "g",
...        "label": "Goblin's turn", "ranges": {"g": 1}}, {"g": "Goblin"})
{'order': [{'id': 'j', 'name': 'Jinx'}], 'active': None, 'label': "the GM's turn", 'ranges': {}}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .core import GM_ONLY, HIDDEN, PUBLIC, Event, Field, State, Viewer, event, told
from .errors import IllegalDeclaration, InvalidDeclaration, NotPermitted

#: the lineup's and the state's flag
FLAG = "hidden"
#: the board commands (rules/engine.py runs them)
HIDE, REVEAL = "hide_combatant", "reveal_combatant"
#: where the state keeps the battle's hiding options (only when they differ from the defaults) and
#: the GM's pending offers to reveal (only while there are some)
SETTINGS_KEY, OFFERS_KEY = "hiding", "reveal_offers"
#: what the others read of a hidden combatant's deeds
ANONYMOUS, NOTHING = "anonymous", "nothing"
HIDDEN_WORDS = Field(
    "hidden_words", "Hidden combatants in the log", kind="choice", default=ANONYMOUS,
    choices=((ANONYMOUS, "Something in the dark (no name)"), (NOTHING, "Nothing at all")),
    help="What the players' log says when a hidden combatant strikes: anonymous words, or nothing.",
)
DEFAULT_RANGE = 2
REVEAL_RANGE = Field(
    "reveal_range", "Offer to reveal within (squares)", default=DEFAULT_RANGE, min=0, max=50,
    help="The GM is offered to reveal a hidden combatant when a player's combatant comes this close (0: never).",
)
OPTION_FIELDS = (HIDDEN_WORDS, REVEAL_RANGE)
OPTION_NAMES = frozenset(f.name for f in OPTION_FIELDS)
#: event types read as a strike of one combatant at another (words of every system)
_STRIKES = re.compile(r"attack|strike|hit|damage|wound|shot|shoot|melee|missile|blow|charge|spell|defen|parr|dodge")


def hidden_names(state: Mapping[str, Any]) -> dict[str, str]:
    """The hidden combatants of a state: ``{id: name}``."""
    combatants = state.get("combatants")
    if not isinstance(combatants, Mapping):
        return {}
    return {str(cid): str(c.get("name", cid)) for cid, c in combatants.items() if isinstance(c, Mapping) and c.get(FLAG) is True}


def settings(state: Mapping[str, Any]) -> dict[str, Any]:
    """The battle's hiding options: ``{"hidden_words", "reveal_range"}``."""
    kept = state.get(SETTINGS_KEY)
    kept = kept if isinstance(kept, Mapping) else {}
    return {"hidden_words": kept.get("hidden_words", ANONYMOUS), "reveal_range": kept.get("reveal_range", DEFAULT_RANGE)}


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The system's options and the hiding ones (those that differ from the defaults)."""
    system = {k: v for k, v in options.items() if k not in OPTION_NAMES}
    ours = {f.name: options[f.name] for f in OPTION_FIELDS if f.name in options and options[f.name] != f.default}
    return system, ours


def start(state: State, events: list[Event], lineup: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[Event]:
    """After the system's setup: the lineup's hidden flags in the state, the options kept, and the
    setup's events concealed (the state is changed in place)."""
    _, ours = split_options(options)
    if ours:
        state[SETTINGS_KEY] = ours
    combatants = state.get("combatants")
    if not isinstance(combatants, dict):
        return events
    for entry in lineup:
        cid = entry.get("id")
        if entry.get(FLAG) is True and cid in combatants:
            if combatants[cid].get("controller") == "seat":
                raise InvalidDeclaration(f"{entry.get('name', cid)}: a player's combatant cannot be hidden from its player")
            combatants[cid][FLAG] = True
    return conceal(events, state, state)


def set_hidden(state: State, combatant: Any, hidden: bool) -> tuple[State, list[Event]]:
    """The GM's ``hide_combatant`` or ``reveal_combatant`` of one combatant (``state`` is changed and returned)."""
    combatants = state.get("combatants") or {}
    if not isinstance(combatant, str) or combatant not in combatants:
        raise InvalidDeclaration("name a combatant of this battle to hide or reveal")
    if state.get("status") == "ended":
        raise IllegalDeclaration("this battle has ended")
    one = combatants[combatant]
    name = str(one.get("name", combatant))
    if hidden:
        if one.get(FLAG) is True:
            raise IllegalDeclaration(f"{name} is already hidden")
        if one.get("controller") == "seat":
            raise IllegalDeclaration(f"{name} is a player's: it cannot be hidden from its player")
        one[FLAG] = True
        # (the others' pages must drop its token: with no words, empty ones, which no page shows)
        words = "Something slips out of sight." if settings(state)["hidden_words"] == ANONYMOUS else ""
        return state, [event("combatant.hidden", f"{name} is hidden from the table.", visibility=GM_ONLY,
                             others=words, combatant=combatant)]
    if one.get(FLAG) is not True:
        raise IllegalDeclaration(f"{name} is not hidden")
    del one[FLAG]
    _drop_offer(state, combatant)
    square = {k: one[k] for k in ("x", "y") if isinstance(one.get(k), int)}
    return state, [event("combatant.revealed", f"{name} steps out of hiding!", combatant=combatant, **square)]


def check_assign(state: Mapping[str, Any], combatant: Any, controller: Any) -> None:
    """A hidden combatant is revealed before a player is handed it."""
    if controller == "seat" and isinstance(combatant, str) and combatant in hidden_names(state):
        raise IllegalDeclaration("reveal it before handing it to a player")


def check_targets(state: Mapping[str, Any], declaration: Mapping[str, Any], viewer: Viewer) -> None:
    """Refuse a declaration of a viewer who is not the GM that names a hidden combatant anywhere (a
    target, a list of targets, a charge's victim...): the rules treat it as not there."""
    if viewer.is_gm:
        return
    hidden = hidden_names(state)
    if hidden and _mentions(declaration, hidden):
        if viewer.role == "spectator":
            raise NotPermitted("spectators watch; they cannot act")
        raise IllegalDeclaration("that target cannot be seen")
    if hidden and (declaration.get("x"), declaration.get("y")) in hidden_squares(state):
        raise IllegalDeclaration("something blocks the way: that square cannot be entered")


# --- what the others see -----------------------------------------------------------------------
def scrub(value: Any, hidden: Mapping[str, str], seen: Iterable[str] = ()) -> Any:
    """``value`` (a projected view, an odds answer) without any trace of the ``hidden`` combatants:
    a key that is one's id is dropped with its value, a list entry that is its id or an entry about
    it (its ``id``, ``combatant``, ``target`` or ``value``) is dropped, any other place that holds its
    id holds None, and words that name it say "the GM" instead (it is the GM who acts for it). The
    names ``seen`` (the combatants the viewer sees) are left whole where a hidden one's is part of
    them: a hidden Orc beside a Huge Orc."""
    if not hidden:
        return value
    names = _name_pattern(hidden, seen)
    return _scrub(value, hidden, names)


def visible_names(state: Mapping[str, Any]) -> list[str]:
    """The names of the combatants of a state that are not hidden."""
    combatants = state.get("combatants")
    if not isinstance(combatants, Mapping):
        return []
    return [str(c.get("name", cid)) for cid, c in combatants.items() if isinstance(c, Mapping) and c.get(FLAG) is not True]


def cover_squares(view: Any, squares: Sequence[tuple[int, int]]) -> Any:
    """A non-GM ``view`` whose movement lists show no hole where a hidden combatant stands: a square
    of ``squares`` next to a square of a ``reachable`` list (``[x, y]`` pairs) or of a
    ``destinations`` list (``{"x", "y", ...}``, copied from that neighbour) is added to it. (Moving
    there is refused with the words for any square that cannot be entered: :func:`check_targets`.)"""
    if not squares:
        return view
    if isinstance(view, Mapping):
        out = {}
        for key, item in view.items():
            if key == "reachable" and isinstance(item, list) and all(_pair(sq) for sq in item):
                have = {(sq[0], sq[1]) for sq in item}
                extra = [[x, y] for x, y in squares if (x, y) not in have and _next_to((x, y), have)]
                out[key] = sorted([*item, *extra]) if extra else item
            elif key == "destinations" and isinstance(item, list) and all(isinstance(d, Mapping) and _pair([d.get("x"), d.get("y")]) for d in item):
                by_square: dict[tuple[int, int], Mapping[str, Any]] = {(d["x"], d["y"]): d for d in item}
                added = []
                for x, y in squares:
                    near = [by_square[n] for n in _around((x, y)) if n in by_square]
                    if (x, y) not in by_square and near:
                        cheapest: Mapping[str, Any] = min(near, key=_cost)
                        added.append({**cheapest, "x": x, "y": y})
                out[key] = [*item, *added] if added else item
            else:
                out[key] = cover_squares(item, squares)
        return out
    if isinstance(view, list):
        return [cover_squares(item, squares) for item in view]
    return view


def _cost(destination: Mapping[str, Any]) -> float:
    cost = destination.get("cost")
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0


def hidden_squares(state: Mapping[str, Any]) -> list[tuple[int, int]]:
    """The squares the hidden combatants stand on (those with ``x`` and ``y``)."""
    combatants = state.get("combatants") or {}
    return [(c["x"], c["y"]) for cid in hidden_names(state)
            if isinstance((c := combatants[cid]).get("x"), int) and isinstance(c.get("y"), int)]


def _pair(value: Any) -> bool:
    return (isinstance(value, list | tuple) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value))


def _around(square: tuple[int, int]) -> list[tuple[int, int]]:
    x, y = square
    return [(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


def _next_to(square: tuple[int, int], squares: set[tuple[int, int]]) -> bool:
    return any(n in squares for n in _around(square))


_ABOUT = ("id", "combatant", "target", "value", "attacker", "defender")


def _scrub(value: Any, hidden: Mapping[str, str], names: _Names | None) -> Any:
    if isinstance(value, str):
        if value in hidden:
            return None
        return names.sub("the GM", value) if names is not None else value
    if isinstance(value, Mapping):
        return {key: _scrub(item, hidden, names) for key, item in value.items() if not _names_one(key, hidden)}
    if isinstance(value, list | tuple):
        kept = []
        for item in value:
            if isinstance(item, str) and item in hidden:
                continue
            if isinstance(item, Mapping) and (any(isinstance(item.get(k), str) and item.get(k) in hidden for k in _ABOUT)
                                              or _names_one(item.get("key"), hidden)):
                continue
            kept.append(_scrub(item, hidden, names))
        return kept
    return value


def _names_one(key: Any, hidden: Mapping[str, str]) -> bool:
    """A key that is a hidden combatant's id, or ends with one (``attack:g``)."""
    return isinstance(key, str) and (key in hidden or key.rpartition(":")[2] in hidden)


class _Names:
    """Where words name a hidden combatant: its name, unless it is part of a longer name of one seen
    ("Orc" in "Huge Orc" is the Huge Orc's; the longest name found at a place wins)."""

    def __init__(self, hidden: set[str], seen: Iterable[str]) -> None:
        self.hidden = hidden
        around = {n for n in seen if n and n not in hidden and any(h in n for h in hidden)}
        self.pattern = re.compile("|".join(re.escape(n) for n in sorted(hidden | around, key=len, reverse=True)))

    def search(self, text: str) -> bool:
        return any(m.group(0) in self.hidden for m in self.pattern.finditer(text))

    def sub(self, words: str, text: str) -> str:
        return self.pattern.sub(lambda m: words if m.group(0) in self.hidden else m.group(0), text)


def _name_pattern(hidden: Mapping[str, str], seen: Iterable[str] = ()) -> _Names | None:
    names = {n for n in hidden.values() if n}
    return _Names(names, seen) if names else None


def _mentions(value: Any, hidden: Mapping[str, str], names: _Names | None = None) -> bool:
    """Whether ``value`` holds a hidden combatant's id (as a value or a key) or, with ``names``, its name."""
    if isinstance(value, str):
        return value in hidden or (names is not None and names.search(value))
    if isinstance(value, Mapping):
        return any(_names_one(k, hidden) or _mentions(v, hidden, names) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_mentions(v, hidden, names) for v in value)
    return False


def conceal(events: list[Event], before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Event]:
    """The events of a command with every one that names a combatant hidden before or after it made
    the GM's alone. The others get, for a strike at a combatant they see, anonymous words (once per
    command and combatant struck), or nothing, as the battle's ``hidden_words`` says."""
    hidden = {**hidden_names(before), **hidden_names(after)}
    if not hidden or not events:
        return events
    visible = {cid: str(c.get("name", cid)) for cid, c in (after.get("combatants") or {}).items()
               if cid not in hidden and isinstance(c, Mapping)}
    names = _name_pattern(hidden, visible.values())
    anonymous = settings(after)["hidden_words"] == ANONYMOUS
    told_of: set[str] = set()
    out: list[Event] = []
    for ev in events:
        if not _mentions({k: ev.get(k) for k in ("text", "data", "rolls", "others")}, hidden, names):
            out.append(ev)
            continue
        kept = {k: v for k, v in ev.items() if k != "others"}
        visibility = str(ev.get("visibility", PUBLIC))
        kept["visibility"] = HIDDEN if visibility.startswith("owner:") else GM_ONLY
        struck = _struck(ev, visible, hidden) if anonymous and _STRIKES.search(str(ev.get("type", ""))) else []
        fresh = [cid for cid in struck if cid not in told_of]
        listing = _listing_without(ev, hidden, names) if visibility == PUBLIC and names is not None else None
        if listing is not None:
            kept["others"] = listing
        elif fresh and kept["visibility"] == GM_ONLY:
            told_of.update(fresh)
            who = _and(visible[c] for c in fresh)
            kept["others"] = told(f"Something strikes at {who} from the dark.", struck=fresh)
        out.append(kept)
    return out


#: events that list the combatants (the start, a round's order), which the others still read without the hidden ones
_LISTINGS = re.compile(r"start|begin|round|turn|initiative|order")


def _listing_without(ev: Mapping[str, Any], hidden: Mapping[str, str], names: _Names) -> dict[str, Any] | None:
    """The words for the others of a public event that lists the combatants ("The fight begins:
    Jinx, Skulking Horror."), with the hidden ones left out of its list; None if the event is no
    such list or names a hidden one anywhere else."""
    text = str(ev.get("text", ""))
    if not _LISTINGS.search(str(ev.get("type", ""))) or ": " not in text:
        return None
    head, _, tail = text.partition(": ")
    end = "." if tail.endswith(".") else ""
    rest, _, after = tail[: len(tail) - len(end)].partition(". ")
    items = rest.replace(" and ", ", ").split(", ")
    kept = [item for item in items if not names.search(item)]
    shown = f"{head}: {', '.join(kept)}{'. ' + after if after else ''}{end}"
    if not kept or names.search(shown) or _mentions(shown, hidden):
        return None
    rolls = [r for r in ev.get("rolls") or [] if not _mentions(r, hidden, names)]
    return told(shown, rolls=rolls, **dict(_scrub(ev.get("data") or {}, hidden, names)))


def _struck(ev: Mapping[str, Any], visible: Mapping[str, str], hidden: Mapping[str, str]) -> list[str]:
    """The combatants the others see that an event about a hidden one names (by id in its data or by
    name in its words)."""
    found: list[str] = []
    text = str(ev.get("text", ""))

    def walk(value: Any) -> None:
        if isinstance(value, str) and value in visible and value not in found:
            found.append(value)
        elif isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)

    walk(ev.get("data"))
    for cid, name in visible.items():
        if cid not in found and name and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            if not any(name in other for other in hidden.values()):
                found.append(cid)
    return found


def _and(names: Any) -> str:
    listed = [str(name) for name in names]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


def without_hidden(state: Mapping[str, Any]) -> State:
    """A shallow copy of ``state`` without its hidden combatants (what a public report counts; only
    for reading the combatants, not for a system's view or rules)."""
    hidden = hidden_names(state)
    return {**state, "combatants": {cid: c for cid, c in (state.get("combatants") or {}).items() if cid not in hidden}}


# --- the GM's offers to reveal -------------------------------------------------------------------
def note_strikes(state: State, events: Sequence[Event]) -> None:
    """After a command: an offer to reveal each hidden combatant that struck at someone the table
    sees (its concealed events have words for the others about it), kept in the state for the GM."""
    hidden = hidden_names(state)
    if not hidden:
        state.pop(OFFERS_KEY, None)
        return
    offers = dict(state.get(OFFERS_KEY) or {})
    for ev in events:
        if ev.get("others") and ev.get("visibility") == GM_ONLY and "struck" in (ev["others"].get("data") or {}):
            for cid, name in hidden.items():
                if _mentions({k: ev.get(k) for k in ("text", "data")}, {cid: name}, _name_pattern({cid: name})):
                    offers[cid] = "attacked"
    offers = {cid: why for cid, why in offers.items() if cid in hidden}
    if offers:
        state[OFFERS_KEY] = offers
    else:
        state.pop(OFFERS_KEY, None)


def _drop_offer(state: State, combatant: str) -> None:
    offers = dict(state.get(OFFERS_KEY) or {})
    offers.pop(combatant, None)
    if offers:
        state[OFFERS_KEY] = offers
    else:
        state.pop(OFFERS_KEY, None)


def offers(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The GM's list of hidden combatants: ``[{"id", "name", "offer": None | {"why", "words"}}]``:
    an offer to reveal one that attacked, or that a player's combatant came within the battle's
    ``reveal_range`` squares of (Chebyshev distance on the grid, read off the combatants' ``x``/``y``)."""
    hidden = hidden_names(state)
    if not hidden:
        return []
    combatants = state.get("combatants") or {}
    reach = settings(state)["reveal_range"]
    struck = state.get(OFFERS_KEY) or {}
    players = [c for c in combatants.values() if isinstance(c, Mapping) and c.get("controller") == "seat"
               and isinstance(c.get("x"), int) and isinstance(c.get("y"), int) and not _out(c)]
    listed = []
    for cid, name in hidden.items():
        one = combatants[cid]
        offer: dict[str, str] | None = None
        if struck.get(cid) == "attacked":
            offer = {"why": "attacked", "words": f"{name} attacked: reveal it?"}
        elif reach and isinstance(one.get("x"), int) and isinstance(one.get("y"), int) and not _out(one):
            near = [c for c in players if max(abs(c["x"] - one["x"]), abs(c["y"] - one["y"])) <= reach]
            if near:
                offer = {"why": "near", "words": f"{near[0].get('name', '')} is within {reach} squares of {name}: reveal it?"}
        listed.append({"id": cid, "name": name, "offer": offer})
    return listed


def _out(c: Mapping[str, Any]) -> bool:
    return any(c.get(flag) is True for flag in ("out", "dead", "defeated", "destroyed", "escaped"))
