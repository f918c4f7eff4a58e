"""The broadcaster: every room of a table gets its own view of what changed, and nothing else.

Two things change and are sent: a battle (:meth:`Broadcast.battle_updated`, the ``update`` of an
accepted command) and a table (:meth:`Broadcast.table_changed`, the ``table`` payload again). Both
are projected here from what the change carries (the battle as the command left it, the step an undo
would take back, the seats; the table and its seats as read once for all the rooms), through the
pure projections of :mod:`webapp.projection` (for a battle, the rule system's own view): nothing here
calls back into the authority or reads the database.

Each socket is in the room of its projection (the GM, one seat, the spectators), so a projection is
computed once per room, not once per socket; rooms whose projections are equal share one emit, and
with the Redis queue all of a change's emits travel as one message (:class:`webapp.wire.BoardRedisManager`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flask_socketio import SocketIO

from rules import Viewer

from .models import GameTable, Seat
from .projection import ConsoleShelf, project, shown_as, table_payload
from .service import UNKNOWN, CommandResult
from .store import BattleRecord, record_fields
from .wire import BoardRedisManager

#: one emit: (event, payload, room or rooms)
Emit = tuple[str, dict[str, Any], str | list[str]]


def room_of(table_id: int, viewer: Viewer) -> str:
    """The room of a viewer's projection at a table.

    >>> room_of(3, Viewer.gm()), room_of(3, Viewer.player("s1")), room_of(3, Viewer.spectator())
    ('t3:gm', 't3:seat:s1', 't3:spectators')
    """
    if viewer.is_gm:
        return f"t{table_id}:gm"
    if viewer.role == "player":
        return f"t{table_id}:seat:{viewer.seat}"
    return f"t{table_id}:spectators"


def audience(seat_ids: Iterable[str]) -> list[Viewer]:
    """Every projection of a table: the GM, the spectators, then each seat."""
    return [Viewer.gm(), Viewer.spectator()] + [Viewer.player(seat) for seat in seat_ids]


@dataclass(frozen=True)
class TableChanged:
    """A table changed (its lineup, options, board, rosters, screens, seats or battle): every room of
    it gets its view of the table again. ``table`` and ``seats``: as the change left them, when the
    code that made it holds them both; else they are read once, for all the rooms."""

    table_id: int
    table: GameTable | None = None
    seats: list[Seat] | None = None


class Broadcast:
    """Sends the changes of battles and tables to the rooms of this app's Socket.IO server."""

    def __init__(self, socketio: SocketIO) -> None:
        self.socketio = socketio

    def battle_updated(self, result: CommandResult, seat_ids: list[str], *, fog: frozenset[tuple[int, int]] | None = frozenset()) -> None:
        """Send each projection room its own update of an accepted command (the seats of the table:
        ``seat_ids``; ``fog``: the table's fogged squares, whose occupants only the GM is sent; None:
        not known, so only the GM is sent the update). Rooms whose projections are equal share one
        emit: one encoding, one queue message. Seats that control nothing are shown what the
        spectators are (:func:`webapp.projection.shown_as`): their payload is not worked out again."""
        battle = result.battle
        if battle is None or result.undo_offer is UNKNOWN:
            raise ValueError("an update is broadcast from the battle the command left and its undo offer")
        groups: list[tuple[dict[str, Any], list[str]]] = []
        spectators: dict[str, Any] | None = None
        for viewer in audience(seat_ids):  # the GM and spectators first
            if (result.quiet or fog is None) and not viewer.is_gm:
                continue  # a GM's secret: nothing tells the others it happened (not even a new version)
            if spectators is not None and shown_as(battle.state, viewer).role == "spectator":
                payload = spectators  # a seat that controls nothing is shown what the spectators are
            else:
                payload = project(battle, viewer, result.events, result.undo_offer, fog=fog or frozenset())
                # the others' pages hold the version they were last told of (a GM's secret since
                # then sent them nothing): this update follows on from it
                told = result.prev_version if viewer.is_gm or result.prev_told is None else result.prev_told
                payload.update(t="update", prev_v=told)
                if viewer.role == "spectator":
                    spectators = payload
            room = room_of(result.table_id, viewer)
            for same, rooms in groups:
                if same is payload or same == payload:
                    rooms.append(room)
                    break
            else:
                groups.append((payload, [room]))
        # the other processes keep the battle as this command left it, so that their next command
        # on it needs no read (the compare-and-set still decides)
        sent = record_fields(battle) if isinstance(battle, BattleRecord) else None
        self.emit_all([("update", payload, rooms[0] if len(rooms) == 1 else rooms) for payload, rooms in groups], battle=sent)

    def table_changed(self, table: GameTable, seats: list[Seat], *, join: dict[str, str] | None, shelf: ConsoleShelf) -> None:
        """Send every room of a table its view of the table (as :func:`webapp.projection.table_payload`
        makes it for a sync), all in one queue message. ``join``: the join corner while it shows;
        ``shelf``: what the GM's view carries besides the table."""
        assert table.id is not None
        self.emit_all([
            ("table", table_payload(table, viewer, seats, join=join, shelf=shelf if viewer.is_gm else None), room_of(table.id, viewer))
            for viewer in audience(seat.public_id for seat in seats)
        ])

    def emit_all(self, emits: list[Emit], battle: dict[str, Any] | None = None) -> None:
        """Send the emits of one change; with the Redis queue as one message (``battle``: the battle
        as the command left it, for the other processes only)."""
        manager = self.socketio.server.manager  # type: ignore[attr-defined]  # typeshed's SocketIO leaves out .server (python-socketio's Server)
        if isinstance(manager, BoardRedisManager):
            manager.emit_many(emits, battle=battle)  # one queue message for all the rooms
        else:
            for event, payload, to in emits:
                self.socketio.emit(event, payload, to=to)  # type: ignore[arg-type]  # typeshed says one room; Flask-SocketIO takes a list too
