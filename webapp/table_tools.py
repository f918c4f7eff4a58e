"""Table tools over the socket (issue 36): a dice roller for anything, and a pointer for the table.

``roll {notation, label?, secret?, msg_id?}`` from the GM or a player's phone: in a running battle a
command of the battle's log with its committed dice (:meth:`webapp.authority.Authority.roll_dice`,
:mod:`rules.roller`), so the verifier, the export and the replay cover it; between battles a roll of
the table's own committed dice (:mod:`webapp.table_dice`). Only the GM rolls in secret. The answer is
``{ok, total, text, v?}``; bad notation is refused with a clear error and changes nothing.

``point {square: [x, y]} | {combatant}``: "look here". The TV (and every page) gets
``pointer {square | combatant, name, colour, by, at}`` and draws a pulsing ring there for about two
seconds. It is not stored (nothing in the log), goes to every room of the table through Socket.IO
(across processes with the message queue), and never names a combatant on a grid: a grid system's
point is a square alone, so a point at a hidden combatant (``hidden: true``) or into the fog shows
only the square, whose contents the TV's own fog and view keep hidden. Both are rate-limited per
seat (the GM counts as one seat).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from rules import IllegalDeclaration, InvalidDeclaration, NotPermitted, Viewer, engine, get_system

from .broadcast import audience, room_of
from .sockets import Connection, Hub, handler
from .table_dice import ROLLS_PER_MINUTE, limited, table_roll

#: at most this many points a minute per seat (the GM is one seat; rolls: webapp/table_dice.py)
POINTS_PER_MINUTE = 20
#: how long the TV shows a point, in milliseconds (the pages read it from the message)
POINTER_MS = 2200
#: the pointer's colours: the GM's, then one per seat (picked by the seat's id), strong on a dark map
GM_COLOUR = "#ffd23f"
SEAT_COLOURS = ("#4cc9f0", "#f72585", "#80ed99", "#ff9f1c", "#b388ff", "#ff595e", "#00f5d4", "#f4f1de")


def who(conn: Connection) -> str:
    """The name the log and the TV give the sender."""
    return "The GM" if conn.viewer.is_gm else (conn.seat_name or "A player")


def colour_of(viewer: Viewer) -> str:
    """The sender's pointer colour: the GM's gold, or a seat's own colour (the same every time).

    >>> colour_of(Viewer.gm()), colour_of(Viewer.player("abc")) == colour_of(Viewer.player("abc"))
    ('#ffd23f', True)
    """
    if viewer.is_gm:
        return GM_COLOUR
    digest = hashlib.sha256(str(viewer.seat).encode()).digest()
    return SEAT_COLOURS[digest[0] % len(SEAT_COLOURS)]


# --- the dice roller ----------------------------------------------------------------------------
@handler("roll")
def on_roll(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{notation, label?, secret?, msg_id?}``: a roll of the battle's dice, or of the table's."""
    if conn.viewer.role == "spectator":
        raise NotPermitted("spectators watch; they cannot roll")
    unknown = set(payload) - {"notation", "label", "secret", "msg_id", "battle_id", "commit_id"}
    if unknown:
        raise InvalidDeclaration(f"roll: unknown field {sorted(unknown)[0]!r}")
    from rules import roller

    roller.parse(payload.get("notation"))  # bad notation is refused before it counts against the rate
    roller.clean_label(payload.get("label"))
    if payload.get("secret", False) is not False and not conn.viewer.is_gm:
        raise NotPermitted("only the GM may roll in secret")
    limited(hub, "rolls", ROLLS_PER_MINUTE, conn)
    table = hub.service.table(table_id=conn.table_id)
    if table.battle_id is not None:
        battle = hub.service.battle(table.battle_id)
        if battle.status != "ended":
            result = hub.service.roll_dice(table.battle_id, conn.viewer, payload, by=who(conn),
                                           msg_id=payload.get("msg_id"), table_id=conn.table_id)
            made = next((ev for ev in result.events if ev.get("type") == roller.EVENT), None)
            data = (made or {}).get("data") or {}
            return {"v": result.version, "duplicate": result.duplicate, "total": data.get("total"),
                    "text": (made or {}).get("text"), "battle_id": table.battle_id}
    return table_roll(hub, conn, payload, who(conn))


# --- the pointer --------------------------------------------------------------------------------
@handler("point")
def on_point(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{square: [x, y]}`` on a grid, ``{combatant}`` otherwise: every page of the table shows a
    ring there for about two seconds, in the sender's colour, with their name."""
    if conn.viewer.role == "spectator":
        raise NotPermitted("spectators watch; they cannot point")
    unknown = set(payload) - {"square", "combatant", "battle_id"}
    if unknown:
        raise InvalidDeclaration(f"point: unknown field {sorted(unknown)[0]!r}")
    table = hub.service.table(table_id=conn.table_id)
    if table.battle_id is None:
        raise IllegalDeclaration("there is no board to point at before the first battle")
    battle = hub.service.battle(table.battle_id)
    system = get_system(battle.system_id)
    public = engine.project(system, battle.state, Viewer.spectator())
    target: dict[str, Any]
    if system.traits.grid:
        grid = public.get("grid") or {}
        square = payload.get("square")
        if (not isinstance(square, list) or len(square) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in square)):
            raise InvalidDeclaration("point at a square: [x, y]")
        x, y = square
        if not (0 <= x < int(grid.get("width") or 0) and 0 <= y < int(grid.get("height") or 0)):
            raise InvalidDeclaration(f"square {x}, {y} is off the board")
        # the square alone: never a combatant's name or token, hidden or fogged (the TV draws only the ring)
        target = {"square": [x, y]}
    else:
        combatant = payload.get("combatant")
        if not isinstance(combatant, str) or not combatant:
            raise InvalidDeclaration("point at a combatant")
        if combatant not in {f.get("id") for f in public.get("fighters") or []}:
            raise InvalidDeclaration("there is no such combatant on the board")
        target = {"combatant": combatant}
    limited(hub, "points", POINTS_PER_MINUTE, conn)
    message = {**target, "battle_id": battle.id, "name": who(conn), "colour": colour_of(conn.viewer),
               "by": "gm" if conn.viewer.is_gm else f"seat:{conn.viewer.seat}", "ms": POINTER_MS, "at": time.time()}
    rooms = [room_of(conn.table_id, viewer) for viewer in audience(hub.seats_now(conn.table_id))]
    hub.socketio.emit("pointer", message, to=rooms)  # type: ignore[arg-type]  # Flask-SocketIO takes a list of rooms
    return {"shown": True, **target}
