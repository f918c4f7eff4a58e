"""The fog over a board: which squares the players and the TV may not look into.

The fog is part of the table's board, stored with the map (:attr:`webapp.models.GameTable.board`):
``board["fog"]``, a list of ``[x, y]`` squares like ``board["blocked"]``, and ``board["sight"]``,
None or the number of squares round each player's combatant that clear by themselves
(:mod:`rules.sight`). Every viewer's table payload carries both (the TV draws the dark squares, the
GM's console dims them); what stands on a fogged square never reaches a page that may not look into
it: :func:`hide_fogged` takes it out of a player's or spectator's battle payload before it is sent.

The functions here are pure, but for :func:`read_board` (one Core read of a table's board).

>>> board = change_fog({"blocked": []}, {"all": True}, 3, 2)
>>> board["fog"]
[[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]]
>>> change_fog(board, {"rect": {"x0": 0, "y0": 0, "x1": 1, "y1": 1, "fog": False}}, 3, 2)["fog"]
[[2, 0], [2, 1]]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Engine
from sqlalchemy import select as sa_select

from rules import InvalidDeclaration, Viewer
from rules.sight import MAX_SIGHT, seen_by_all
from rules.terrain import Square

from .models import GameTable, table_of
from .wire import loads

#: the parts of a ``fog_set``: the whole map fogged (true) or cleared (false); squares fogged and
#: cleared (painting and erasing); a rectangle fogged or cleared (a room revealed); the sight
FOG_FIELDS = ("all", "add", "remove", "rect", "sight")
#: at most this many squares in one ``add`` or ``remove`` (a 60 × 60 grid, the largest any system has)
MAX_SQUARES = 3600
#: a player's view of a combatant on a fogged square: its square is gone, this says why
UNSEEN = "unseen"
#: the words a player or the TV get for an event that happened on a fogged square
FOG_WORDS = "Something stirs in the fog."


def fog_of(board: Any) -> frozenset[Square]:
    """The fogged squares of a stored board (none for a board without fog).

    >>> sorted(fog_of({"fog": [[1, 2], [0, 0]]})), fog_of(None)
    ([(0, 0), (1, 2)], frozenset())
    """
    listed = board.get("fog") if isinstance(board, Mapping) else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset((int(sq[0]), int(sq[1])) for sq in listed if isinstance(sq, list | tuple) and len(sq) == 2)


def sight_of(board: Any) -> int | None:
    """The board's sight in squares, or None when fog does not clear by itself."""
    sight = board.get("sight") if isinstance(board, Mapping) else None
    return sight if isinstance(sight, int) and not isinstance(sight, bool) and 1 <= sight <= MAX_SIGHT else None


def listed(squares: Iterable[Square]) -> list[list[int]]:
    """Squares as stored: ``[x, y]`` pairs in reading order (rows, then columns).

    >>> listed({(1, 0), (0, 1), (0, 0)})
    [[0, 0], [1, 0], [0, 1]]
    """
    return [[x, y] for y, x in sorted((y, x) for x, y in squares)]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def clean_squares(value: Any, width: int, height: int, what: str) -> set[Square]:
    """Squares a GM sent: a list of ``[x, y]`` pairs on the ``width`` × ``height`` grid.

    >>> sorted(clean_squares([[1, 1], [0, 0], [1, 1]], 2, 2, "add"))
    [(0, 0), (1, 1)]
    >>> clean_squares([[2, 0]], 2, 2, "add")
    Traceback (most recent call last):
    rules.errors.InvalidDeclaration: add: square (2, 0) is off the 2×2 grid
    """
    if not isinstance(value, list | tuple):
        raise InvalidDeclaration(f"{what} must be a list of [x, y] squares")
    if len(value) > MAX_SQUARES:
        raise InvalidDeclaration(f"{what}: at most {MAX_SQUARES} squares at once")
    found: set[Square] = set()
    for item in value:
        if not (isinstance(item, list | tuple) and len(item) == 2 and all(_whole(v) for v in item)):
            raise InvalidDeclaration(f"{what}: each square is a pair [x, y] of whole numbers")
        x, y = item
        if not (0 <= x < width and 0 <= y < height):
            raise InvalidDeclaration(f"{what}: square ({x}, {y}) is off the {width}×{height} grid")
        found.add((x, y))
    return found


def _rect(value: Any, width: int, height: int) -> tuple[set[Square], bool]:
    """The squares of a rectangle ``{x0, y0, x1, y1, fog}`` (corners included, in any order) and
    whether they are fogged (true) or cleared (false)."""
    if not isinstance(value, Mapping) or set(value) != {"x0", "y0", "x1", "y1", "fog"}:
        raise InvalidDeclaration("rect is {x0, y0, x1, y1, fog}: two corner squares, and fog true or false")
    if not isinstance(value["fog"], bool):
        raise InvalidDeclaration("rect: fog must be true (fog the rectangle) or false (clear it)")
    corners = [value[k] for k in ("x0", "y0", "x1", "y1")]
    if not all(_whole(v) for v in corners):
        raise InvalidDeclaration("rect: the corners are whole numbers")
    x0, y0, x1, y1 = corners
    for x, y in ((x0, y0), (x1, y1)):
        if not (0 <= x < width and 0 <= y < height):
            raise InvalidDeclaration(f"rect: square ({x}, {y}) is off the {width}×{height} grid")
    squares = {(x, y) for x in range(min(x0, x1), max(x0, x1) + 1) for y in range(min(y0, y1), max(y0, y1) + 1)}
    return squares, value["fog"]


def change_fog(board: Mapping[str, Any], change: Any, width: int, height: int) -> dict[str, Any]:
    """The board with a GM's ``fog_set`` applied: a new board, the given one untouched. Every part is
    checked before anything is applied, so a bad one changes nothing. The parts apply in the order
    of :data:`FOG_FIELDS` (the whole map first, then the squares painted, erased, the rectangle).

    >>> change_fog({}, {"add": [[0, 0], [1, 0]], "remove": [[0, 0]], "sight": 3}, 2, 2)
    {'fog': [[1, 0]], 'sight': 3}
    >>> change_fog({}, {"sight": 0}, 2, 2)
    Traceback (most recent call last):
    rules.errors.InvalidDeclaration: sight is off (null) or a number of squares from 1 to 20
    """
    if not isinstance(change, Mapping):
        raise InvalidDeclaration("fog_set needs an object")
    unknown = sorted(str(k) for k in change if k not in FOG_FIELDS)
    if unknown:
        raise InvalidDeclaration(f"fog_set: unknown field {unknown[0][:40]!r} (all, add, remove, rect or sight)")
    if not change:
        raise InvalidDeclaration("fog_set: say what to change (all, add, remove, rect or sight)")
    whole = change.get("all")
    if "all" in change and not isinstance(whole, bool):
        raise InvalidDeclaration("all must be true (fog the whole map) or false (clear it)")
    add = clean_squares(change["add"], width, height, "add") if "add" in change else set()
    remove = clean_squares(change["remove"], width, height, "remove") if "remove" in change else set()
    rect = _rect(change["rect"], width, height) if "rect" in change else None
    sight = change.get("sight")
    if "sight" in change and sight is not None and not (_whole(sight) and 1 <= sight <= MAX_SIGHT):
        raise InvalidDeclaration(f"sight is off (null) or a number of squares from 1 to {MAX_SIGHT}")
    fog = {sq for sq in fog_of(board) if sq[0] < width and sq[1] < height}
    if whole is not None:
        fog = {(x, y) for x in range(width) for y in range(height)} if whole else set()
    fog = (fog | add) - remove
    if rect is not None:
        fog = fog | rect[0] if rect[1] else fog - rect[0]
    new = copy.deepcopy(dict(board))
    new["fog"] = listed(fog)
    if "sight" in change:
        new["sight"] = sight
    return new


def seers(state: Mapping[str, Any]) -> list[Square]:
    """The squares of the players' combatants still in the fight (those that clear fog by sight).

    >>> seers({"combatants": {"a": {"controller": "seat", "x": 1, "y": 2}, "b": {"controller": "gm", "x": 0, "y": 0},
    ...                       "c": {"controller": "seat", "x": 4, "y": 4, "dead": True}}})
    [(1, 2)]
    """
    combatants = state.get("combatants")
    entries = combatants.values() if isinstance(combatants, Mapping) else combatants if isinstance(combatants, list) else []
    found = []
    for c in entries:
        if not isinstance(c, Mapping) or c.get("controller") != "seat":
            continue
        if any(c.get(flag) for flag in ("out", "dead", "defeated", "destroyed", "escaped")):
            continue
        x, y = c.get("x"), c.get("y")
        if isinstance(x, int) and isinstance(y, int) and _whole(x) and _whole(y):
            found.append((x, y))
    return found


def cleared_by_sight(board: Mapping[str, Any], state: Mapping[str, Any], blocked: Iterable[Iterable[int]],
                     width: int, height: int) -> set[Square]:
    """The fogged squares that the players' combatants of a battle ``state`` see now (the board's
    sight on, blocked squares opaque): the squares to clear. None when sight is off."""
    sight = sight_of(board)
    fog = fog_of(board)
    if sight is None or not fog:
        return set()
    walls = frozenset((int(x), int(y)) for x, y in blocked)
    return seen_by_all(seers(state), sight, walls, width, height) & fog


def _own(payload: Mapping[str, Any], viewer: Viewer) -> set[str]:
    return {str(cid) for cid in payload.get("yours") or []} if viewer.role == "player" else set()


def _on_fog(entry: Any, fog: frozenset[Square]) -> bool:
    if not isinstance(entry, Mapping):
        return False
    x, y = entry.get("x"), entry.get("y")
    return _whole(x) and _whole(y) and (x, y) in fog


def hide_fogged(payload: dict[str, Any], fog: frozenset[Square], viewer: Viewer) -> dict[str, Any]:
    """A player's or spectator's battle payload with nothing of what stands on a fogged square: the
    square of every combatant there (but the player's own) is taken out of the view (``x``, ``y``
    None, ``unseen`` true: no page draws a token for it), and the events that name a fogged square
    for another's combatant say only :data:`FOG_WORDS`. The GM's payload is returned as it is.

    >>> p = {"view": {"combatants": [{"id": "g", "x": 1, "y": 1}, {"id": "pc", "x": 1, "y": 1}]}, "yours": ["pc"],
    ...      "events": [{"type": "combatant.moved", "text": "g moves to 1, 1", "data": {"combatant": "g", "x": 1, "y": 1}}]}
    >>> out = hide_fogged(p, frozenset({(1, 1)}), Viewer.player("s1"))
    >>> out["view"]["combatants"], out["events"][0]["text"], out["events"][0]["data"]
    ([{'id': 'g', 'x': None, 'y': None, 'unseen': True}, {'id': 'pc', 'x': 1, 'y': 1}], 'Something stirs in the fog.', {})
    """
    if viewer.is_gm or not fog:
        return payload
    own = _own(payload, viewer)
    view = payload.get("view")
    out = dict(payload)
    if isinstance(view, Mapping):
        combatants = view.get("combatants")

        def masked(cid: Any, c: Any) -> Any:
            if str(cid) in own or not _on_fog(c, fog):
                return c
            return {**c, "x": None, "y": None, UNSEEN: True}

        if isinstance(combatants, list):
            combatants = [masked(c.get("id") if isinstance(c, Mapping) else None, c) for c in combatants]
        elif isinstance(combatants, Mapping):
            combatants = {cid: masked(c.get("id", cid) if isinstance(c, Mapping) else cid, c) for cid, c in combatants.items()}
        masked_view = {**view, "combatants": combatants} if combatants is not None else dict(view)
        unseen = _unseen(masked_view)
        if unseen:  # measures to or from them elsewhere in the view (a distance tells where they stand)
            masked_view = {k: v if k == "combatants" else _scrub(v, unseen) for k, v in masked_view.items()}
        out["view"] = masked_view
    unseen = _unseen(out.get("view"))
    events = payload.get("events")
    if isinstance(events, list):
        out["events"] = [_fogged_event(ev, fog, own, unseen) for ev in events]
    return out


#: the keys of an entry that place a combatant or measure the way to it
MEASURES = frozenset({"x", "y", "metres", "squares", "distance"})


def _scrub(node: Any, unseen: set[str]) -> Any:
    """``node`` without the entries that place or measure an unseen combatant: an entry under its id
    that holds a square or a distance, and measures taken from where it stands (``{"from": id,
    "to": ...}``).

    >>> _scrub({"distances": {"from": "pc", "to": {"g": {"metres": 4}, "h": {"metres": 2}}}}, {"g"})
    {'distances': {'from': 'pc', 'to': {'h': {'metres': 2}}}}
    >>> _scrub({"from": "g", "to": {"pc": {"metres": 4}}}, {"g"}) is None
    True
    """
    if isinstance(node, Mapping):
        if str(node.get("from")) in unseen and isinstance(node.get("to"), Mapping):
            return None
        return {k: _scrub(v, unseen) for k, v in node.items()
                if not (str(k) in unseen and isinstance(v, Mapping) and MEASURES & set(v))}
    if isinstance(node, list):
        return [_scrub(item, unseen) for item in node]
    return node


def _unseen(view: Any) -> set[str]:
    """The ids of the combatants a masked view left without a square."""
    combatants = view.get("combatants") if isinstance(view, Mapping) else None
    entries = combatants.values() if isinstance(combatants, Mapping) else combatants if isinstance(combatants, list) else []
    return {str(c.get("id")) for c in entries if isinstance(c, Mapping) and c.get(UNSEEN)}


def _fogged_event(ev: Any, fog: frozenset[Square], own: set[str], unseen: set[str]) -> Any:
    """An event in the fog: it names a fogged square for another's combatant, or it is the move
    of a combatant now unseen (a move's words name the square it went to)."""
    data = ev.get("data") if isinstance(ev, Mapping) else None
    if not isinstance(data, Mapping) or str(data.get("combatant")) in own:
        return ev
    moved = str(ev.get("type", "")).endswith(".moved") and str(data.get("combatant")) in unseen
    if not (moved or _on_fog(data, fog)):
        return ev
    return {**ev, "text": FOG_WORDS, "data": {}, "rolls": []}


def read_board(engine: Engine, table_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A table's board and options as stored now (one Core read: made for every battle update
    projected, so that what stands in the fog never goes out on a board another process changed)."""
    column = table_of(GameTable).c
    with engine.connect() as conn:
        row = conn.execute(sa_select(column.board, column.options).where(column.id == table_id)).first()
    if row is None:
        return {}, {}
    board, options = (loads(v) if isinstance(v, str | bytes) else v for v in row)
    return (board if isinstance(board, dict) else {}), (options if isinstance(options, dict) else {})
