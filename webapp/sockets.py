"""The socket layer: with :mod:`webapp.broadcast` (what it sends), the only modules that speak Socket.IO.

Client to server (verbs, each answered by an ack ``{ok, ...}`` or ``{ok: false, error, code}``):
``sync``, ``declare``, ``undo``, ``assign``, ``battle_start``, ``battle_end``, ``battle_restart``,
``lineup_set``, ``options_set``, ``notes_set``, ``roster_save``, ``roster_load``, ``roster_delete``.
Server to client (nouns): ``table``, ``snapshot``, ``update``, ``error``.

Each socket joins the room of its projection (the GM, one seat, or the spectators), so every
broadcast is computed once per projection, not once per socket, and works across processes through
the message queue.

Versions and a GM's secret: every accepted command raises the battle's version by one, and the GM's
page follows every version. A command whose events reach nobody but the GM (Phantom's Bane's
"block escape", an NPC's hit points set by hand) sends the players' and spectators' rooms nothing,
not even an empty update: an empty update with a new version would tell them it happened. The
battle keeps the last version they were told of (``public_version``; see
:func:`webapp.store.told_version`), and everything they get speaks in it: the next update that
reaches them has ``prev_v`` equal to the version they hold, so it applies without a gap (no sync);
their sync, heartbeat and stale-command answers give that version; a command they make on it is
current. The version numbers they see skip over such a secret once a change they see follows it:
the skip says only that something they may not see happened in between, never what.

No page is left behind when an update is lost (the message queue down, a process killed between
its write and its broadcast): every few seconds, and at once when the message queue comes back,
each process tells its own pages the battle's version as the database holds it and the stamp of
their table's payload (``heartbeat``); a page that holds less syncs.

Everything sent goes through :mod:`webapp.broadcast`, from two routes only: the authority hands every
accepted command to :meth:`Hub.battle_updated`, and every change of a table comes to
:meth:`Hub.table_changed`: from the :func:`handler` of each event declared ``changes_table`` (after it
succeeded), or from the pages' routes that change a table (a seat joined, a new join code, a screen
paired). No handler sends a table itself. The ``SocketIO`` object is the app's, handed to the
:class:`Hub` (this module imports nothing of :mod:`webapp.app`).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from flask import Flask, request
from flask_socketio import SocketIO, join_room
from socketio.exceptions import ConnectionRefusedError  # what flask_socketio re-exports
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from rules import InvalidDeclaration, NotPermitted, RulesError, Viewer, engine, get_system

from . import chances_live
from .assets import board_payload
from .broadcast import Broadcast, TableChanged, room_of
from .config import Config
from .fog_events import fog_for_update, on_fog_set
from .models import GameTable, Seat, display_settings, row_id
from .offload import off_the_loop
from .projection import ConsoleShelf, table_payload
from .service import BattleService, CommandResult, StaleVersion
from .text import read_payload
from .wire import BoardRedisManager

log = logging.getLogger("battleboard")
#: how long a process trusts its list of a table's seats when broadcasting
SEAT_CACHE_SECONDS = 1.0


@dataclass(frozen=True)
class Connection:
    table_id: int
    viewer: Viewer
    seat_name: str | None = None
    #: the client's address (rate limits of pairing attempts)
    address: str = ""
    #: the GM key a GM's connection came with (a replaced key stops it: :meth:`Hub.gm_key_valid`)
    key: str = ""


class Hub:
    """Connections of this process, and the two routes of what is broadcast to them: the authority's
    accepted commands (:meth:`battle_updated`) and the changes of tables (:meth:`table_changed`)."""

    def __init__(self, app: Flask, service: BattleService, config: Config, socketio: SocketIO) -> None:
        self.app = app
        self.service = service
        self.config = config
        #: the app's Socket.IO server (Flask-SocketIO's object; its ``server`` exists once ``init_app`` ran)
        self.socketio = socketio
        self.broadcast = Broadcast(socketio)
        self.connections: dict[str, Connection] = {}
        self._seat_cache: dict[int, tuple[float, list[str]]] = {}
        self._guard = threading.Lock()
        #: the address and port this server listens on, as its own socket says (never a request's
        #: Host): set by ``serve``, else read off the first request's WSGI environment
        self.listening: tuple[str, int] | None = (
            (config.listen_host, config.listen_port) if config.listen_host is not None and config.listen_port else None
        )
        self._lan: tuple[float, list[str]] = (0.0, [])
        self._gm_keys: dict[int, tuple[float, str]] = {}

    # --- payloads ---------------------------------------------------------------------------
    def table_payload(self, table: GameTable, viewer: Viewer, seats: list[Seat] | None = None) -> dict[str, Any]:
        """What a viewer's page shows of the table itself (``seats``: the table's, if already read)."""
        if seats is None:
            seats = self.service.seats(row_id(table))
        return table_payload(table, viewer, seats, join=self.join_of(table), shelf=self.console_shelf(table) if viewer.is_gm else None)

    def console_shelf(self, table: GameTable) -> ConsoleShelf:
        """What the GM's view of a table carries besides the table and its seats, read now."""
        return ConsoleShelf(
            rosters=self.service.rosters(table.system_id, table.library),
            roster_id=self.service.lineup_roster(row_id(table)),
            screens=[
                {"id": screen.public_id, "label": screen.label, "paired_at": screen.paired_at.isoformat() if screen.paired_at else None}
                for screen in self.service.screens_of(row_id(table))
            ],
        )

    def join_of(self, table: GameTable) -> dict[str, str] | None:
        """The join corner of a table's pages while it shows, else None."""
        return self.join_corner(table) if self.join_open(table) else None

    @staticmethod
    def join_open(table: GameTable) -> bool:
        """Whether the join corner shows (to everyone): while the table has no battle yet, or while
        the GM has "show the join code on the TV" on. Not by itself once a battle ended: the join
        code stays off every page but the GM's for as long as the table has a battle (the leak
        tests hold every battle to that), and the GM switches the corner on for the next fight."""
        return display_settings(table.display)["show_join"] or table.battle_id is None

    def join_corner(self, table: GameTable) -> dict[str, str]:
        """The join code, the link players open and the address of its QR code (an SVG that is
        public exactly while the corner shows; its address names the code, so a new code is a new
        picture)."""
        base, _warning = self.public_base()
        return {"code": table.join_code, "url": f"{base}/j/{table.join_code}", "qr": f"/t/{table.slug}/qr.svg?code={table.join_code}"}

    def note_listening(self, environ: dict[str, Any]) -> None:
        """Without ``serve``'s own address (another WSGI server, no public URL): the port this server
        listens on, read off the connection's own socket where the server hands it over (a
        ``SERVER_PORT`` may come from the client's ``Host`` under some servers), on every interface."""
        if self.listening is not None:
            return
        port = 0
        sock = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
        try:
            port = int(sock.getsockname()[1]) if sock is not None else int(environ.get("SERVER_PORT") or 0)
        except (OSError, ValueError, TypeError, IndexError):
            port = 0
        self.listening = ("", port)

    def lan_addresses(self) -> list[str]:
        """This machine's LAN addresses (looked up again at most once a minute: Wi-Fi comes and goes)."""
        from .net import lan_addresses

        now = time.monotonic()
        if not self._lan[0] or now - self._lan[0] > 60:
            self._lan = (now, lan_addresses())
        return self._lan[1]

    def public_base(self) -> tuple[str, str | None]:
        """The address phones and the TV open the board at, and a warning when phones cannot.

        ``BATTLEBOARD_PUBLIC_URL`` when set; else this machine's LAN address and the port the server
        listens on (what ``serve`` prints), so a console opened at 127.0.0.1 still shows a link a
        phone can open. Never a request's ``Host``: a forged header cannot change anyone's link."""
        if self.config.public_url:
            return self.config.public_url.rstrip("/"), None
        host, port = self.listening or ("", 0)
        suffix = f":{port}" if port and port != 80 else ""
        if host in ("", "0.0.0.0", "::"):  # every interface: the LAN's address reaches it
            lan = self.lan_addresses()
            if lan:
                return f"http://{lan[0]}{suffix}", None
            return (f"http://127.0.0.1{suffix}", "This machine has no address on a local network (no Wi-Fi or cable), "
                    "so phones cannot open this link: connect it to the table's Wi-Fi and reload.")
        if host in ("localhost", "::1") or host.startswith("127."):
            return (f"http://127.0.0.1{suffix}", "The board listens on this machine only, so phones cannot open this link: "
                    "start it with --host 0.0.0.0, or set BATTLEBOARD_PUBLIC_URL.")
        return f"http://{host}{suffix}", None

    def seats_now(self, table_id: int, seat_ids: list[str] | None = None) -> list[str]:
        """The seats of a table: ``seat_ids`` as a change just read them (kept for the next one), else
        :meth:`seat_ids`."""
        if seat_ids is None:
            return self.seat_ids(table_id)
        self._seat_cache[table_id] = (time.monotonic(), seat_ids)
        return seat_ids

    def seat_ids(self, table_id: int) -> list[str]:
        """The seats of a table, cached for :data:`SEAT_CACHE_SECONDS` (a join in this process clears it).

        A seat that joined through another process within that time misses at most the updates of
        that second; its page notices the gap (``prev_v``) at the next update and syncs."""
        now = time.monotonic()
        cached = self._seat_cache.get(table_id)
        if cached is not None and now - cached[0] < SEAT_CACHE_SECONDS:
            return cached[1]
        seats = self.service.seat_ids(table_id)
        self._seat_cache[table_id] = (now, seats)
        return seats

    def forget_seats(self, table_id: int) -> None:
        self._seat_cache.pop(table_id, None)

    # --- the heartbeat: no page left behind -------------------------------------------------------
    def heartbeat(self) -> int:
        """Tell every page of this process where its table and battle stand in the database: the
        battle's id and version (for a player or a spectator, the last version they were told of:
        a GM's secret stays one) and the stamp of the table's payload for that page. A page that
        holds an older version or another stamp syncs; a page that is up to date does nothing.
        Sent to this process's rooms only (each process beats for its own pages); the number of
        rooms told."""
        with self._guard:
            rooms = {room_of(c.table_id, c.viewer): (c.table_id, c.viewer) for c in self.connections.values()}
        if not rooms:
            return 0
        tables = self.service.tables_as_they_are(table_id for table_id, _ in rooms.values())
        for room, (table_id, viewer) in rooms.items():
            found = tables.get(table_id)
            if found is None:
                continue
            table, seats, versions = found
            version = None if versions is None else versions[0] if viewer.is_gm else versions[1]
            beat = {"battle_id": table.battle_id, "v": version, "stamp": self.table_payload(table, viewer, seats)["stamp"]}
            self.socketio.server.emit("heartbeat", beat, to=room, namespace="/", ignore_queue=True)  # type: ignore[attr-defined]  # typeshed's SocketIO leaves out .server (python-socketio's Server)
        return len(rooms)

    def start_heartbeat(self) -> None:
        """Beat every ``config.heartbeat_seconds`` for as long as the process serves (see
        :meth:`heartbeat`); a failed beat (the database away a moment) waits for the next one."""
        every = self.config.heartbeat_seconds

        def beat() -> None:
            while True:
                self.socketio.sleep(every)  # type: ignore[arg-type]  # typeshed's SocketIO.sleep says int; it takes any number of seconds
                try:
                    self.heartbeat()
                except Exception:  # the next beat tries again
                    log.exception("the heartbeat could not read the tables")

        if every > 0:
            self.socketio.start_background_task(beat)

    def queue_back(self) -> None:
        """The message queue is back after an outage: updates of the other processes may have been
        lost meanwhile, so every page of this process hears at once where things stand."""
        try:
            told = self.heartbeat()
        except Exception:
            log.exception("could not tell the pages to catch up after the message queue came back")
            return
        log.warning("the message queue is back: %d rooms told to catch up", told)

    # --- broadcasting: the two routes ---------------------------------------------------------
    def battle_updated(self, result: CommandResult) -> None:
        """The authority's broadcaster (:attr:`webapp.service.BattleService.broadcaster`): every room of
        the battle's table gets its update, projected from what the result carries."""
        try:
            fog, cleared = fog_for_update(self.service, result)  # the fog as it is now, cleared by sight
        except Exception:  # the board unread: only the GM is sent the update (the others catch up at the heartbeat)
            log.exception("could not read the fog of table %s: the update goes to the GM only", result.table_id)
            fog, cleared = None, False
        self.broadcast.battle_updated(result, self.seats_now(result.table_id, result.seat_ids), fog=fog)
        if cleared or result.hiding_changed:  # (a hidden combatant's token look: webapp/hiding.py)
            self.table_changed(TableChanged(result.table_id))

    def table_changed(self, change: TableChanged) -> int:
        """Every room of a table gets its view of the table again (after a lineup, an option, a roster,
        the board, a screen, a seat or the battle changed): the table and its seats as the change
        passed them along, else read once for all the rooms, with what the GM's view carries. Returns
        the table's revision as sent."""
        table, seats = change.table, change.seats
        if table is None or seats is None:
            table, seats = self.service.table(table_id=change.table_id), self.service.seats(change.table_id)
        self.seats_now(change.table_id, [seat.public_id for seat in seats])
        self.broadcast.table_changed(table, seats, join=self.join_of(table), shelf=self.console_shelf(table))
        return table.revision

    def install(self) -> None:
        """Register the socket handlers with this app's Socket.IO server (after ``init_app``). The
        client events go straight to python-socketio: Flask-SocketIO would push a Flask app and
        request context for every event, which no event handler uses and which cost about a third of
        a declaration's handling. Connect and disconnect keep Flask-SocketIO's handlers (they read
        the request)."""
        self.socketio.on("connect")(on_connect)
        self.socketio.on("disconnect")(on_disconnect)
        server = self.socketio.server  # type: ignore[attr-defined]  # typeshed's SocketIO leaves out .server (python-socketio's Server)
        if isinstance(server.manager, BoardRedisManager):
            server.manager.on_peer_battle = self.service.learn_battle
            server.manager.on_reconnect = self.queue_back
        for name, (fn, gm_only) in EVENT_HANDLERS.items():
            server.on(name, partial(self._dispatch, name, fn, gm_only), namespace="/")

    def _dispatch(self, name: str, fn: Callable[..., dict[str, Any]], gm_only: bool, sid: str, *args: Any) -> dict[str, Any]:
        return _run(self, sid, name, fn, gm_only, args)

    def gm_key_valid(self, conn: Connection) -> bool:
        """Whether a GM connection's key is still the table's (read at most once a second per table
        and process: a key replaced through another process stops its consoles here within that)."""
        now = time.monotonic()
        cached = self._gm_keys.get(conn.table_id)
        if cached is None or now - cached[0] >= SEAT_CACHE_SECONDS:
            cached = (now, self.service.gm_token(conn.table_id))
            self._gm_keys[conn.table_id] = cached
        return secrets.compare_digest(conn.key, cached[1])

    def gm_key_replaced(self, table: GameTable) -> None:
        """The GM link was replaced: every console of the old key, in every process, is told (its page
        stops) and leaves the GM's room (it gets no more of the GM's view); any event it still sends
        is refused and closes its connection (:meth:`gm_key_valid`)."""
        table_id = row_id(table)
        self._gm_keys[table_id] = (time.monotonic(), table.gm_token)
        room = room_of(table_id, Viewer.gm())
        message = "the GM link was replaced from another console, so this one stopped: open the new GM link"
        self.socketio.emit("gm_key_replaced", {"message": message}, to=room)
        self.socketio.close_room(room)

    def _drop(self, sid: str) -> None:
        with self._guard:
            self.connections.pop(sid, None)
        try:
            self.socketio.server.disconnect(sid, namespace="/")  # type: ignore[attr-defined]  # typeshed's SocketIO leaves out .server (python-socketio's Server)
        except Exception:  # noqa: BLE001 -- already gone
            pass

    def seat_joined(self, table: GameTable, seat: Seat) -> None:
        """A seat was taken, or a phone's seat took a new name: the GM's list of seats changes, and
        the names every page shows ("Now: Jinx (Alice)") with it."""
        table_id = row_id(table)
        self.forget_seats(table_id)
        self.table_changed(TableChanged(table_id, table, self.service.seats(table_id)))


def _hub() -> Hub:
    from flask import current_app

    hub: Hub = current_app.extensions["battleboard"]
    return hub


def _error(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, StaleVersion):
        return {"ok": False, "error": str(exc), "code": exc.code, "v": exc.current}
    if isinstance(exc, RulesError):
        return {"ok": False, "error": str(exc), "code": exc.code}
    if isinstance(exc, OperationalError | PoolTimeout):
        return {"ok": False, "error": "the database is unavailable just now; try again in a moment", "code": "unavailable"}
    log.exception("unexpected error in a socket handler")
    return {"ok": False, "error": "the server hit an unexpected error; nothing was changed", "code": "server_error"}


#: every client event: its function and whether only the GM may send it
EVENT_HANDLERS: dict[str, tuple[Callable[..., dict[str, Any]], bool]] = {}
#: the client events that change their table: each room of the table gets its view again once one succeeded
TABLE_EVENTS: set[str] = set()


class TableAck(dict[str, Any]):
    """The answer of a table-changing event whose handler holds the table and its seats as the event
    left them: the table's broadcast reads neither again. Only the answer itself is sent back."""

    def __init__(self, answer: dict[str, Any], *, table: GameTable, seats: list[Seat]) -> None:
        super().__init__(answer)
        self.table = table
        self.seats = seats


def _run(hub: Hub, sid: str, name: str, fn: Callable[..., dict[str, Any]], gm_only: bool, args: tuple[Any, ...]) -> dict[str, Any]:
    """One client event: payload checks, the sender's connection and role, errors as acks."""
    try:
        if len(args) > 1:
            raise InvalidDeclaration(f"{name} takes one object")
        payload = args[0] if args else {}
        if payload is None:
            payload = {}
        if not isinstance(payload, dict):
            raise InvalidDeclaration(f"{name} needs an object, not {type(payload).__name__}")
        try:
            size = len(json.dumps(payload, allow_nan=False))
        except (ValueError, TypeError):
            raise InvalidDeclaration(f"{name}: numbers must be finite (no NaN or Infinity)") from None
        payload = read_payload(payload, name)  # every string, number and nesting level read once
        if size > hub.config.max_payload_bytes:
            raise InvalidDeclaration(f"{name} is too large")
        conn = hub.connections.get(sid)
        if conn is None:
            raise NotPermitted("this connection has not joined a table")
        if conn.viewer.is_gm and not hub.gm_key_valid(conn):
            hub._drop(sid)
            raise NotPermitted("the GM link was replaced from another console: open the new GM link")
        if gm_only and not conn.viewer.is_gm:
            raise NotPermitted(f"only the GM may {name.replace('_', ' ')}")
        result = fn(hub, conn, payload)
        if name in TABLE_EVENTS:  # the one route of a table's changes from the sockets
            known = (result.table, result.seats) if isinstance(result, TableAck) else (None, None)
            # the sender learns the revision its change made: it keeps no table payload older than it
            return {"ok": True, **(result or {}), "revision": hub.table_changed(TableChanged(conn.table_id, *known))}
        return {"ok": True, **(result or {})}
    except Exception as exc:  # every failure becomes a clear error to the sender only
        reply = _error(exc)
        hub.socketio.emit("error", {"event": name, **reply}, to=sid)
        return reply


def handler(name: str, *, gm_only: bool = False, changes_table: bool = False) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Declare a client-to-server event; :meth:`Hub.install` registers it with the server and
    :func:`_run` checks every call. ``changes_table``: once the handler succeeded, every room of the
    table gets its view of the table again (the handler sends none itself; a :class:`TableAck`
    passes along the table it holds)."""

    def decorate(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        EVENT_HANDLERS[name] = (fn, gm_only)
        if changes_table:
            TABLE_EVENTS.add(name)
        return fn

    return decorate


def _battle_id(hub: Hub, conn: Connection, payload: dict[str, Any]) -> int:
    battle_id = payload.get("battle_id")
    if not isinstance(battle_id, int) or isinstance(battle_id, bool):
        raise InvalidDeclaration("battle_id must be a number")
    battle = hub.service.battle(battle_id)
    if battle.table_id != conn.table_id:
        raise NotPermitted("that battle is not at your table")
    return battle_id


def on_connect(auth: Any = None) -> None:
    hub = _hub()
    auth = auth if isinstance(auth, dict) else {}
    slug = auth.get("table")
    if not isinstance(slug, str) or not slug or len(slug) > 32:
        raise ConnectionRefusedError("say which table to join")
    try:
        table = hub.service.table(slug=slug)
        viewer, seat = hub.service.viewer_for(table, auth.get("token"))
    except RulesError as exc:
        raise ConnectionRefusedError(str(exc)) from None
    address = request.remote_addr or ""
    hub.note_listening(request.environ)
    with hub._guard:
        hub.connections[request.sid] = Connection(row_id(table), viewer, seat.name if seat else None, address,  # type: ignore[attr-defined]  # Flask-SocketIO sets request.sid
                                                  key=auth["token"] if viewer.is_gm else "")
    join_room(room_of(row_id(table), viewer))


def on_disconnect(*_: Any) -> None:
    hub = _hub()
    with hub._guard:
        hub.connections.pop(request.sid, None)  # type: ignore[attr-defined]  # Flask-SocketIO sets request.sid in its handlers; Flask's Request does not declare it


@handler("sync")
def on_sync(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """Catch up: the table, and the current battle from the client's last version; with the
    server's clock (``server_now``, seconds since the epoch), from which a page learns how far its
    own clock is off (a running clock, such as AD&D's declaration clock, counts in server time)."""
    since_v = payload.get("since_v", 0)
    if not isinstance(since_v, int) or isinstance(since_v, bool) or since_v < 0:
        raise InvalidDeclaration("since_v must be a whole number ≥ 0")
    table = hub.service.table(table_id=conn.table_id)
    battle = None
    if table.battle_id is not None:
        known = payload.get("battle_id")
        since = since_v if known == table.battle_id else 0
        battle = hub.service.snapshot_for(table.battle_id, conn.viewer, since)
        battle["since_v"] = since
    return {"table": hub.table_payload(table, conn.viewer), "battle": battle, "server_now": time.time(),
            "chances": chances_live.for_sync(hub, conn.viewer, table, battle)}


@handler("declare")
def on_declare(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    battle_id = payload.get("battle_id")
    if not isinstance(battle_id, int) or isinstance(battle_id, bool):
        raise InvalidDeclaration("battle_id must be a number")
    # the authority checks the battle's table inside its transaction: no extra read per declaration
    result = hub.service.declare(
        battle_id,
        conn.viewer,
        payload.get("declaration"),
        expected_v=payload.get("expected_v"),
        msg_id=payload.get("msg_id"),
        actor=conn.viewer.role if conn.viewer.role != "player" else f"seat:{conn.viewer.seat}",
        table_id=conn.table_id,
    )
    return {"v": result.version, "duplicate": result.duplicate}


@handler("undo", gm_only=True)
def on_undo(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    battle_id = _battle_id(hub, conn, payload)
    result = hub.service.undo(battle_id, conn.viewer, expected_v=payload.get("expected_v"), msg_id=payload.get("msg_id"))
    return {"v": result.version}


@handler("assign", gm_only=True, changes_table=True)
def on_assign(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    battle_id = _battle_id(hub, conn, payload)
    result = hub.service.assign(
        battle_id, conn.viewer, payload.get("combatant"), payload.get("controller"), payload.get("seat"), expected_v=payload.get("expected_v")
    )
    return {"v": result.version}


@handler("battle_start", gm_only=True, changes_table=True)
def on_battle_start(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    table = hub.service.table(table_id=conn.table_id)
    if table.battle_id is not None and payload.get("replace") is not True:
        current = hub.service.battle(table.battle_id)
        if current.status != "ended":
            raise InvalidDeclaration("a battle is still running: end it first (or send replace: true)")
    return _started(hub.service.start_battle(conn.table_id))


def _started(result: CommandResult) -> dict[str, Any]:
    """A new battle's answer; the table, which names it now, and its seats as the start read them."""
    assert result.table is not None and result.seats is not None
    return TableAck({"battle_id": result.battle_id, "v": result.version}, table=result.table, seats=result.seats)


@handler("battle_restart", gm_only=True, changes_table=True)
def on_battle_restart(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    return _started(hub.service.start_battle(conn.table_id))


@handler("battle_end", gm_only=True)
def on_battle_end(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    battle_id = _battle_id(hub, conn, payload)
    result = hub.service.end_battle(battle_id, conn.viewer, expected_v=payload.get("expected_v"))
    return {"v": result.version}


@handler("lineup_set", gm_only=True, changes_table=True)
def on_lineup_set(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    table = hub.service.set_lineup(conn.table_id, payload.get("lineup"))
    return {"lineup": table.lineup}


@handler("options_set", gm_only=True, changes_table=True)
def on_options_set(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    table = hub.service.set_options(conn.table_id, payload.get("options"))
    return {"options": table.options}


@handler("notes_set", gm_only=True)
def on_notes_set(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    hub.service.set_notes(conn.table_id, payload.get("notes"))
    return {}


@handler("roster_save", gm_only=True, changes_table=True)
def on_roster_save(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    roster = hub.service.save_roster(conn.table_id, payload.get("name"))
    return {"roster_id": roster.id}


@handler("roster_load", gm_only=True, changes_table=True)
def on_roster_load(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    table = hub.service.load_roster(conn.table_id, payload.get("roster_id"), append=payload.get("append") is True)
    return {"lineup": table.lineup}


@handler("roster_delete", gm_only=True, changes_table=True)
def on_roster_delete(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    hub.service.delete_roster(conn.table_id, payload.get("roster_id"))
    return {}


@handler("board_set", gm_only=True, changes_table=True)
def on_board_set(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """The GM's board: ``{map?, tokens?, blocked?}`` (see docs/architecture.md, Maps and images). Blocked squares
    changed while a battle runs reach it first as the GM's ``set_blocked`` declaration (logged, so
    replay and undo keep them); if the rules refuse, nothing changes."""
    patch = {k: v for k, v in payload.items() if k not in ("battle_id", "expected_v", "msg_id")}  # the page's envelope
    board, _ = hub.service.board_patch(conn.table_id, patch)
    table = hub.service.table(table_id=conn.table_id)
    version = None
    battle = hub.service.battle(table.battle_id) if "blocked" in patch and table.battle_id is not None else None
    if battle is not None and battle.status != "ended" and battle.state.get("blocked", []) != board["blocked"]:
        result = hub.service.declare(row_id(battle), Viewer.gm(), {"type": "set_blocked", "blocked": board["blocked"]},
                                     actor="gm", table_id=conn.table_id)
        version = result.version
    table = hub.service.write_board(conn.table_id, board)
    return {"board": board_payload(table.board), "v": version}


# --- provable dice: a phone's client seed, sharing a finished battle (issue 18, H7) ---------------
@handler("entropy")
def on_entropy(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """A player's phone adds its client seed to the battle's dice (once per seat and battle: a second
    one is answered ``duplicate`` and changes nothing)."""
    battle_id = payload.get("battle_id")
    if not isinstance(battle_id, int) or isinstance(battle_id, bool):
        raise InvalidDeclaration("battle_id must be a number")
    result = hub.service.add_entropy(battle_id, conn.viewer, payload.get("client_seed"), table_id=conn.table_id)
    return {"v": result.version, "duplicate": result.duplicate}


@handler("battle_share", gm_only=True)
def on_battle_share(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """The GM lets anyone see a finished battle (replay, report, export), or stops it."""
    battle_id = _battle_id(hub, conn, payload)
    battle = hub.service.set_shareable(battle_id, conn.table_id, payload.get("shareable"))
    return {"battle_id": battle.id, "shareable": battle.shareable}




# --- the table display: its settings and the screens paired with it (issue 19) --------------------
class RateLimited(RulesError):
    code = "rate_limited"


@handler("display_set", gm_only=True, changes_table=True)
def on_display_set(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{show_join?: bool, show_odds?: bool}``: what the table display shows besides the board."""
    changes = {k: v for k, v in payload.items() if k not in ("battle_id", "expected_v")}  # as ctx.command adds them
    table = hub.service.set_display(conn.table_id, changes)
    return {"display": display_settings(table.display)}


def _pair_attempt(hub: Hub, conn: Connection) -> None:
    """Pairing codes cannot be guessed quickly: at most as many attempts a minute per address as
    join codes get."""
    from .security import limits

    if not limits(hub.app).allowed("pair", conn.address or f"table:{conn.table_id}"):
        raise RateLimited("too many pairing attempts with a wrong code: wait a minute and try again")


@handler("display_pair", gm_only=True, changes_table=True)
def on_display_pair(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{code}``: the screen showing that pairing code becomes this table's display."""
    _pair_attempt(hub, conn)
    try:
        screen = hub.service.pair_screen(conn.table_id, payload.get("code"))
    except RulesError:
        from .security import limits

        limits(hub.app).hit("pair", conn.address or f"table:{conn.table_id}")
        raise
    return {"screen": {"id": screen.public_id, "label": screen.label}}


@handler("display_unpair", gm_only=True, changes_table=True)
def on_display_unpair(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{screen}``: that screen stops being this table's display and shows a new pairing code."""
    hub.service.unpair_screen(conn.table_id, payload.get("screen"))
    return {}


#: the GM-only events of the table display (tests/server/test_pairing.py checks their payloads)
DISPLAY_EVENTS = ("display_set", "display_pair", "display_unpair")


# --- odds before committing (issue 17) ------------------------------------------------------------
@handler("odds")
def on_odds(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, declaration}``: what that declaration would likely bring, for the sender's eyes.

    A player asks only for the combatants of their seat (the rules check it), the GM for anyone;
    spectators and the table display only where the GM has switched odds on for the table."""
    battle_id = payload.get("battle_id")
    if not isinstance(battle_id, int) or isinstance(battle_id, bool):
        raise InvalidDeclaration("battle_id must be a number")
    declaration = payload.get("declaration")
    if not isinstance(declaration, dict):
        raise InvalidDeclaration("odds needs a declaration (an object)")
    if conn.viewer.role == "spectator":
        table = hub.service.table(table_id=conn.table_id)
        display = getattr(table, "display", None)  # the table display's settings (issue 19), read defensively
        if not (isinstance(display, dict) and display.get("show_odds") is True):
            raise NotPermitted("the GM has not switched odds on for this table's display")
    battle = hub.service.battle(battle_id)
    if battle.table_id != conn.table_id:
        raise NotPermitted("that battle is not at your table")
    # the same question about the same version from the same eyes is answered once (a phone asks again
    # on every redraw); the answer depends only on those, so the cache never needs clearing
    key = (battle_id, battle.version, conn.viewer, json.dumps(declaration, sort_keys=True))
    with _ODDS_GUARD:
        odds = _ODDS_CACHE.get(key)
    if odds is None:
        # (a simulation may take seconds: on gevent it runs beside the loop, which serves on meanwhile)
        odds = off_the_loop(engine.odds, get_system(battle.system_id), battle.state, conn.viewer, declaration)
        with _ODDS_GUARD:
            _ODDS_CACHE[key] = odds
            while len(_ODDS_CACHE) > ODDS_CACHE_SIZE:
                _ODDS_CACHE.pop(next(iter(_ODDS_CACHE)))
    return {"battle_id": battle_id, "v": battle.version, "odds": odds}


#: answers kept per process (oldest dropped first)
ODDS_CACHE_SIZE = 256
_ODDS_CACHE: dict[tuple[Any, ...], dict[str, Any]] = {}
_ODDS_GUARD = threading.Lock()


#: the odds question: for every role (each checked above), so neither a GM event nor a declaration
ODDS_EVENTS = ("odds",)


# --- physical dice (issue 17 §2, H9): typed faces, the GM's override and switch -----------------
@handler("dice_enter")
def on_dice_enter(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, faces: [int, ...]}`` for the roll due from this seat (or any roll, from the GM);
    the GM's ``{battle_id, board: true}`` rolls it with the board's dice for an absent player."""
    battle_id = payload.get("battle_id")
    if not isinstance(battle_id, int) or isinstance(battle_id, bool):
        raise InvalidDeclaration("battle_id must be a number")
    board = payload.get("board", False)
    if not isinstance(board, bool):
        raise InvalidDeclaration("board must be true or false")
    result = hub.service.enter_dice(battle_id, conn.viewer, payload.get("faces"), board=board,
                                    expected_v=payload.get("expected_v"), msg_id=payload.get("msg_id"),
                                    table_id=conn.table_id)
    return {"v": result.version, "duplicate": result.duplicate}


@handler("dice_physical", gm_only=True)
def on_dice_physical(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, combatant, physical: bool}``: the GM switches one combatant to real dice or back."""
    battle_id = _battle_id(hub, conn, payload)
    result = hub.service.set_physical(battle_id, conn.viewer, payload.get("combatant"), payload.get("physical"),
                                      expected_v=payload.get("expected_v"))
    return {"v": result.version}


#: physical dice: dice_enter for a seat's roller or the GM, dice_physical for the GM only
PHYSICAL_DICE_EVENTS = ("dice_enter", "dice_physical")


# --- survivors carry on (issue 18 §5) -------------------------------------------------------------
def _fallen(payload: dict[str, Any]) -> bool:
    fallen = payload.get("fallen", False)
    if not isinstance(fallen, bool):
        raise InvalidDeclaration("fallen must be true or false")
    return fallen


@handler("survivors_save", gm_only=True, changes_table=True)
def on_survivors_save(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, roster_id?: int, name?: str, load?: bool, fallen?: bool}``: write the survivors of
    a finished battle (those still standing; with ``fallen`` those who fell but live too) into a new
    roster (``name``) or over one of the library (``roster_id``); the lineup becomes the survivors
    unless ``load`` is false."""
    battle_id = _battle_id(hub, conn, payload)
    load = payload.get("load", True)
    if not isinstance(load, bool):
        raise InvalidDeclaration("load must be true or false")
    roster, entries, left_out = hub.service.save_survivors(
        conn.table_id, battle_id, roster_id=payload.get("roster_id"), name=payload.get("name"), load=load,
        fallen=_fallen(payload),
    )
    return {"roster_id": roster.id, "name": roster.name, "survivors": [e["name"] for e in entries], "left_out": left_out}


@handler("survivors_preview", gm_only=True)
def on_survivors_preview(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, fallen?: bool}``: who ``survivors_save`` would carry on and who it would leave
    behind, and who fell but lives (carried with ``fallen``): ``{survivors, left_out, fallen}``, lists
    of names; nothing is written."""
    battle_id = _battle_id(hub, conn, payload)
    survivors, left_out, fallen = hub.service.survivors(conn.table_id, battle_id, fallen=_fallen(payload))
    return {"survivors": survivors, "left_out": left_out, "fallen": fallen}


#: the GM's survivors events (tests/server/test_survivors.py checks their payloads)
SURVIVOR_EVENTS = ("survivors_save", "survivors_preview")


handler("fog_set", gm_only=True, changes_table=True)(on_fog_set)  # the fog over the board (webapp/fog_events.py)

# (the lists of every client event and of the GM's are webapp.app's CLIENT_EVENTS and GM_EVENTS,
# made once the modules beside this one have registered their handlers too)
