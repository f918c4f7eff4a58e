"""The reads and writes of a battle command, the hot path of the board.

Every accepted command reads its battle (and whether its message id was seen), then writes the new
version with a compare-and-set, the snapshot, the events and the command record in one transaction.
(A command on a battle whose last version its process knows skips the read: see
:mod:`webapp.authority`.) Both the read and the write bring the table's seats along, so the broadcast
needs no query of its own.
Three implementations of one interface, :class:`CommandStore`:

* :class:`SqliteCommandStore`: Python's sqlite3 directly (SQLite runs in-process, so SQLAlchemy's
  own work per statement was most of the database time), writing the same rows and formats.
* :class:`CoreCommandStore` (any other engine): SQLAlchemy Core on one connection, with statements
  built once so SQLAlchemy finds them compiled in its cache.
* :class:`PostgresCommandStore`: the same on psycopg directly, in two round trips: one ``SELECT``,
  then one statement whose data-modifying ``WITH`` parts write everything only if the compare-and-set
  matched (PostgreSQL runs a single statement atomically). Under gevent every round trip lets other
  greenlets run before the command can go on, so round trips, not CPU, set a command's latency there.
  A new battle is likewise one read (the table and its seats) and one write statement there
  (:meth:`PostgresCommandStore.start_read`, :meth:`PostgresCommandStore.start_write`).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from sqlalchemy import bindparam, func, insert, text, update
from sqlalchemy import select as core_select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from rules import RulesError

from . import wire
from .models import (
    Battle,
    BattleCommand,
    BattleEvent,
    BattleSnapshot,
    GameTable,
    Seat,
    row_id,
    table_of,
    utcnow,
)


class DatabaseUnavailable(RulesError):
    """The database could not be reached (a driver-level connection failure)."""

    code = "unavailable"

    def __init__(self) -> None:
        super().__init__("the database is unavailable just now; try again in a moment")


@dataclass
class BattleRecord:
    """A battle row as the command path reads and leaves it (the fields the projections use)."""

    id: int
    table_id: int
    system_id: str
    version: int
    state: dict[str, Any]
    seed: str
    status: str
    #: the mix of the players' client seeds (:func:`rules.dice.mix_entropy`)
    mix: str = ""
    #: the last version the players and spectators were told of (None: ``version``); see
    #: :attr:`webapp.models.Battle.public_version`
    public_version: int | None = None
    #: the step its state stands at (None: ``version``); see :attr:`webapp.models.BattleSnapshot.dice_step`
    dice_step: int | None = None

    @property
    def at_step(self) -> int:
        """The step the battle's state stands at: the next command rolls the dice of this + 1."""
        return self.version if self.dice_step is None else self.dice_step


#: the fields of a battle record, in order
RECORD_FIELDS = tuple(f.name for f in fields(BattleRecord))


def record_fields(battle: BattleRecord) -> dict[str, Any]:
    """A battle record as the other processes take it from a broadcast (JSON-shaped, shallow:
    :meth:`webapp.authority.Authority.learn_battle` reads it back)."""
    return {name: getattr(battle, name) for name in RECORD_FIELDS}


def told_version(battle: Battle | BattleRecord) -> int:
    """The version of a battle (a row or a :class:`BattleRecord`) that a player's or a spectator's
    page holds once it has every update it was sent: a GM's secret raises the battle's version, not
    this one."""
    public: int | None = getattr(battle, "public_version", None)
    return battle.version if public is None else public


@dataclass
class BattleRead:
    """What a command reads before it applies: the battle, a replayed message's version, the seats."""

    battle: BattleRecord
    seen_version: int | None
    #: the public ids of the table's seats (None where the store does not read them along)
    seat_ids: list[str] | None


@dataclass
class CommandWrite:
    """Everything one accepted command writes."""

    battle_id: int
    table_id: int
    current: int
    new_version: int
    state: dict[str, Any]
    status: str
    prev_version: int | None
    checkpoint: bool
    events: list[dict[str, Any]]
    msg_id: str
    actor: str
    declaration: dict[str, Any]
    at: datetime
    #: the battle's new client-seed mix (None: unchanged)
    mix: str | None = None
    #: the battle's new dice seed (None: unchanged; an undo after the end, whose seed was revealed)
    seed: str | None = None
    #: the battle's public version after this command (None: the new version, told to everyone)
    public_version: int | None = None
    #: the step the new state stands at (None: the new version)
    dice_step: int | None = None

    def event_rows(self) -> list[dict[str, Any]]:
        return event_rows(self.battle_id, self.new_version, self.events, self.at)


@dataclass
class Written:
    """A command the store wrote, and what it read along."""

    #: the public ids of the table's seats as the write found them (None where the store does not
    #: read them along)
    seat_ids: list[str] | None = None


@dataclass
class Snapshot:
    """One kept version of a battle, as undo and the client seeds read it."""

    version: int
    state: dict[str, Any]
    prev_version: int | None
    checkpoint: bool
    dice_step: int | None


@dataclass
class NewBattle:
    """A table's new battle as the service sets it up from the table and its seats."""

    system_id: str
    state: dict[str, Any]
    events: list[dict[str, Any]]
    seed: str
    setup: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.state.get("status", "active"))


@dataclass
class Started:
    """A new battle written: its id, and the table (now pointing at it) and seats it started from."""

    battle_id: int
    table: GameTable
    seats: list[Seat]
    new: NewBattle


class CommandStore(Protocol):
    """What the command path (:mod:`webapp.authority`) reads and writes, on every database alike.

    ``conn`` is what :meth:`connection` yields: every read a command needs (its battle, and what
    undo, a client seed and a command made beside others read of the battle's log) goes through
    the command's own connection, so no ORM session is opened in the middle of a command."""

    engine: Engine

    def connection(self) -> AbstractContextManager[Any]: ...

    def read(self, conn: Any, battle_id: int, msg_id: str | None) -> BattleRead | None: ...

    def write(self, conn: Any, w: CommandWrite) -> Written | None: ...

    def seat_ids(self, table_id: int) -> list[str]: ...

    def start(self, table_id: int, make: Callable[[GameTable, list[Seat]], NewBattle]) -> Started | None: ...

    def snapshot(self, conn: Any, battle_id: int, version: int) -> Snapshot | None: ...

    def events_at(self, conn: Any, battle_id: int, version: int) -> list[dict[str, Any]]: ...

    def actor_at(self, conn: Any, battle_id: int, version: int) -> str | None: ...

    def last_step_rolled(self, conn: Any, battle_id: int) -> int: ...

    def seed_events(self, conn: Any, battle_id: int) -> dict[int, list[dict[str, Any]]]: ...

    def commands_after(self, conn: Any, battle_id: int, seen: int, current: int) -> list[tuple[int, str, Any]]: ...

    def events_after(self, conn: Any, battle_id: int, seen: int) -> dict[int, list[dict[str, Any]]]: ...


# The reads of a battle's log (undo, client seeds, commands made beside others), in SQL that
# SQLite and PostgreSQL both take; ``:name`` parameters (psycopg's are rewritten: _pg_sql)
_SNAPSHOT = ("SELECT version, state, prev_version, checkpoint, dice_step FROM battle_snapshot "
             "WHERE battle_id = :battle_id AND version = :version")
_EVENTS_AT = ('SELECT payload, visibility FROM battle_event WHERE battle_id = :battle_id AND version = :version '
              'ORDER BY "index"')
_ACTOR_AT = "SELECT actor FROM battle_command WHERE battle_id = :battle_id AND version = :version"
_LAST_STEP = "SELECT max(coalesce(dice_step, version)) FROM battle_snapshot WHERE battle_id = :battle_id"
_SEED_EVENTS = ("SELECT version, payload FROM battle_event WHERE battle_id = :battle_id "
                "AND type IN ('dice.committed', 'dice.revealed') ORDER BY version, \"index\"")
_COMMANDS_AFTER = ("SELECT version, actor, declaration FROM battle_command WHERE battle_id = :battle_id "
                   "AND version > :seen AND version <= :current ORDER BY version")
_EVENTS_AFTER = ('SELECT version, visibility, payload FROM battle_event WHERE battle_id = :battle_id AND version > :seen '
                 'ORDER BY version, "index"')


def _json(value: Any) -> Any:
    """A JSON column as a driver hands it back: decoded already, or its text."""
    return wire.loads(value) if isinstance(value, str | bytes) else value


def event_rows(battle_id: int, version: int, events: list[dict[str, Any]], at: datetime) -> list[dict[str, Any]]:
    """The ``battle_event`` rows of a version's events (the visibility in its own column)."""
    return [
        {
            "battle_id": battle_id,
            "version": version,
            "index": index,
            "type": str(ev.get("type", "event"))[:60],
            "visibility": str(ev.get("visibility", "gm"))[:60],
            "payload": {k: v for k, v in ev.items() if k != "visibility"},
            "created_at": at,
        }
        for index, ev in enumerate(events)
    ]


def _tables() -> tuple[Any, Any, Any, Any, Any]:
    return (
        table_of(Battle),
        table_of(BattleCommand),
        table_of(BattleSnapshot),
        table_of(BattleEvent),
        table_of(Seat),
    )


class CoreCommandStore:
    """A command's reads and writes in SQLAlchemy Core (SQLite, or any engine)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        battle, command, snapshot, event, seat = _tables()
        seen = (
            core_select(command.c.version)
            .where(command.c.battle_id == battle.c.id, command.c.msg_id == bindparam("m_id"))
            .scalar_subquery()
        )
        seats = (
            core_select(func.group_concat(seat.c.public_id)).where(seat.c.table_id == battle.c.table_id).scalar_subquery()
            if engine.dialect.name == "sqlite"
            else None
        )
        at_step = (
            core_select(snapshot.c.dice_step)
            .where(snapshot.c.battle_id == battle.c.id, snapshot.c.version == battle.c.version)
            .scalar_subquery()
        )
        columns = [battle.c.id, battle.c.table_id, battle.c.system_id, battle.c.version, battle.c.state, battle.c.seed,
                   battle.c.status, seen]
        self._read = core_select(*columns, *([seats] if seats is not None else []), battle.c.mix, battle.c.public_version,
                                 at_step).where(battle.c.id == bindparam("b_id"))
        self._compare_and_set = (
            update(battle)
            .where(battle.c.id == bindparam("b_id"), battle.c.version == bindparam("b_version"))
            .values(
                version=bindparam("new_version"), state=bindparam("new_state"), status=bindparam("new_status"),
                updated_at=bindparam("now"), mix=func.coalesce(bindparam("new_mix"), battle.c.mix),
                seed=func.coalesce(bindparam("new_seed"), battle.c.seed), public_version=bindparam("new_public"),
            )
        )
        self._insert_snapshot = insert(snapshot)
        self._insert_event = insert(event)
        self._insert_command = insert(command)
        self._seat_ids = core_select(seat.c.public_id).where(seat.c.table_id == bindparam("t_id")).order_by(seat.c.id)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        with self.engine.connect() as conn:
            yield conn

    def read(self, conn: Any, battle_id: int, msg_id: str | None) -> BattleRead | None:
        """The battle, the version its message id produced if it was applied already, and its
        table's seats (read along, so a broadcast needs no query of its own)."""
        row = conn.execute(self._read, {"b_id": battle_id, "m_id": msg_id}).first()
        if row is None:
            return None
        seats = (row[8].split(",") if row[8] else []) if len(row) > 11 else None
        b_id, table_id, system_id, version, state, seed, status = row[:7]
        record = BattleRecord(b_id, table_id, system_id, version, state, seed, status, mix=row[-3], public_version=row[-2], dice_step=row[-1])
        return BattleRead(record, row[7], seats)

    def write(self, conn: Any, w: CommandWrite) -> Written | None:
        """Write the command if the battle is still at ``w.current``; None (nothing written) if not."""
        try:
            changed = conn.execute(
                self._compare_and_set,
                {"b_id": w.battle_id, "b_version": w.current, "new_version": w.new_version, "new_state": w.state,
                 "new_status": w.status, "now": w.at, "new_mix": w.mix, "new_seed": w.seed, "new_public": w.public_version},
            )
            if changed.rowcount != 1:
                conn.rollback()
                return None
            conn.execute(
                self._insert_snapshot,
                {"battle_id": w.battle_id, "version": w.new_version, "state": w.state, "prev_version": w.prev_version,
                 "checkpoint": w.checkpoint, "dice_step": w.dice_step},
            )
            rows = w.event_rows()
            if rows:
                conn.execute(self._insert_event, rows)
            conn.execute(
                self._insert_command,
                {"battle_id": w.battle_id, "version": w.new_version, "msg_id": w.msg_id, "actor": w.actor,
                 "declaration": w.declaration, "created_at": w.at},
            )
            conn.commit()
        except IntegrityError:  # the same version or message id, written by another process first
            conn.rollback()
            return None
        return Written()

    def seat_ids(self, table_id: int) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(self._seat_ids, {"t_id": table_id}).scalars())

    def start(self, table_id: int, make: Callable[[GameTable, list[Seat]], NewBattle]) -> Started | None:
        """Write a table's new battle (its row, first snapshot and events) as ``make`` sets it up from
        the table and its seats, and make it the table's battle, in one transaction; None if there is
        no such table."""
        with Session(self.engine, expire_on_commit=False) as s:
            table = s.get(GameTable, table_id)
            if table is None:
                return None
            seats = list(s.exec(select(Seat).where(Seat.table_id == table.id).order_by(col(Seat.id))))
            new = make(table, seats)
            battle = Battle(table_id=row_id(table), system_id=new.system_id, version=1, state=new.state, seed=new.seed,
                            status=new.status, setup=new.setup)
            s.add(battle)
            s.flush()
            assert battle.id is not None  # given by the flush
            s.add(BattleSnapshot(battle_id=battle.id, version=1, state=new.state, prev_version=None, checkpoint=True))
            if new.events:  # SQLAlchemy Core: the ORM's bulk insert costs several times more here
                s.connection().execute(table_of(BattleEvent).insert(), event_rows(battle.id, 1, new.events, utcnow()))
            table.battle_id = battle.id
            s.add(table)
            s.commit()
            return Started(battle.id, table, seats, new)

    # --- the reads of a battle's log, on the command's connection ------------------------------
    def _rows(self, conn: Any, sql: str, params: dict[str, Any]) -> list[Any]:
        return list(conn.execute(text(sql), params).all())

    def snapshot(self, conn: Any, battle_id: int, version: int) -> Snapshot | None:
        """The battle as a version left it (None: no such version)."""
        rows = self._rows(conn, _SNAPSHOT, {"battle_id": battle_id, "version": version})
        if not rows:
            return None
        v, state, prev, checkpoint, dice_step = rows[0]
        return Snapshot(v, _json(state), prev, bool(checkpoint), dice_step)

    def events_at(self, conn: Any, battle_id: int, version: int) -> list[dict[str, Any]]:
        """The events of one version as the rules made them (with their visibility)."""
        rows = self._rows(conn, _EVENTS_AT, {"battle_id": battle_id, "version": version})
        return [{**_json(payload), "visibility": visibility} for payload, visibility in rows]

    def actor_at(self, conn: Any, battle_id: int, version: int) -> str | None:
        """Who sent the command that made a version (its record's actor)."""
        rows = self._rows(conn, _ACTOR_AT, {"battle_id": battle_id, "version": version})
        return rows[0][0] if rows else None

    def last_step_rolled(self, conn: Any, battle_id: int) -> int:
        """The highest step a command of the battle has rolled (undone ones too)."""
        rows = self._rows(conn, _LAST_STEP, {"battle_id": battle_id})
        return int(rows[0][0] or 1) if rows else 1

    def seed_events(self, conn: Any, battle_id: int) -> dict[int, list[dict[str, Any]]]:
        """The battle's dice commitments and reveals, by version (:func:`rules.fair.seeds_by_step`)."""
        said: dict[int, list[dict[str, Any]]] = {}
        for version, payload in self._rows(conn, _SEED_EVENTS, {"battle_id": battle_id}):
            said.setdefault(version, []).append(_json(payload))
        return said

    def commands_after(self, conn: Any, battle_id: int, seen: int, current: int) -> list[tuple[int, str, Any]]:
        """The records of the commands after version ``seen`` up to ``current``: (version, actor, declaration)."""
        rows = self._rows(conn, _COMMANDS_AFTER, {"battle_id": battle_id, "seen": seen, "current": current})
        return [(version, actor, _json(declaration)) for version, actor, declaration in rows]

    def events_after(self, conn: Any, battle_id: int, seen: int) -> dict[int, list[dict[str, Any]]]:
        """The events after version ``seen``, by version (with their visibility)."""
        said: dict[int, list[dict[str, Any]]] = {}
        for version, visibility, payload in self._rows(conn, _EVENTS_AFTER, {"battle_id": battle_id, "seen": seen}):
            said.setdefault(version, []).append({**_json(payload), "visibility": visibility})
        return said


_PG_READ = """
SELECT b.id, b.table_id, b.system_id, b.version, b.state::text, b.seed, b.status,
       (SELECT c.version FROM battle_command c WHERE c.battle_id = b.id AND c.msg_id = %(msg_id)s::varchar),
       ARRAY(SELECT s.public_id FROM seat s WHERE s.table_id = b.table_id ORDER BY s.id), b.mix, b.public_version,
       (SELECT n.dice_step FROM battle_snapshot n WHERE n.battle_id = b.id AND n.version = b.version)
FROM battle b WHERE b.id = %(battle_id)s
"""

# One statement, so one transaction: the three inserts read the row the compare-and-set returned, so
# they write nothing when it matched nothing. A unique violation (another process wrote this version
# or this message id first) fails the whole statement.
_PG_WRITE = """
WITH cas AS (
    UPDATE battle SET version = %(new_version)s::integer, state = %(state)s, status = %(status)s::varchar,
                      updated_at = %(at)s, mix = COALESCE(%(mix)s::varchar, mix), seed = COALESCE(%(seed)s::varchar, seed),
                      public_version = %(public_version)s::integer
    WHERE id = %(battle_id)s::integer AND version = %(current)s::integer
    RETURNING id
), snapshot AS (
    INSERT INTO battle_snapshot (battle_id, version, state, prev_version, checkpoint, dice_step)
    SELECT id, %(new_version)s::integer, %(state)s, %(prev_version)s::integer, %(checkpoint)s::boolean, %(dice_step)s::integer FROM cas
), command AS (
    INSERT INTO battle_command (battle_id, version, msg_id, actor, declaration, created_at)
    SELECT id, %(new_version)s::integer, %(msg_id)s::varchar, %(actor)s::varchar, %(declaration)s, %(at)s FROM cas
), events AS (
    INSERT INTO battle_event (battle_id, version, "index", type, visibility, payload, created_at)
    SELECT cas.id, %(new_version)s::integer, (e.value ->> 'index')::integer, e.value ->> 'type', e.value ->> 'visibility',
           e.value -> 'payload', %(at)s
    FROM cas, json_array_elements(%(events)s) AS e(value)
)
SELECT count(*), ARRAY(SELECT s.public_id FROM seat s WHERE s.table_id = %(table_id)s::integer ORDER BY s.id) FROM cas
"""

_PG_SEAT_IDS = "SELECT public_id FROM seat WHERE table_id = %(table_id)s ORDER BY id"

# A new battle: the table and its seats in one read, then everything the battle starts with (its row,
# first snapshot and events, and the table pointing at it) in one statement.
_PG_START_READ = """
SELECT t.id, t.slug, t.name, t.system_id, t.join_code, t.gm_token, t.lineup::text, t.options::text, t.gm_notes,
       t.battle_id, t.created_at, t.library,
       (SELECT json_agg(json_build_object('id', s.id, 'public_id', s.public_id, 'name', s.name, 'token', s.token,
                                          'created_at', s.created_at) ORDER BY s.id)
        FROM seat s WHERE s.table_id = t.id)::text,
       t.display::text, t.board::text, t.roster_id, t.revision
FROM game_table t WHERE t.id = %(table_id)s
"""
_PG_START_WRITE = """
WITH started AS (
    INSERT INTO battle (table_id, system_id, version, state, seed, status, created_at, updated_at, setup)
    VALUES (%(table_id)s::integer, %(system_id)s::varchar, 1, %(state)s, %(seed)s::varchar, %(status)s::varchar, %(at)s, %(at)s,
            %(setup)s)
    RETURNING id
), snapshot AS (
    INSERT INTO battle_snapshot (battle_id, version, state, prev_version, checkpoint)
    SELECT id, 1, %(state)s, NULL, true FROM started
), events AS (
    INSERT INTO battle_event (battle_id, version, "index", type, visibility, payload, created_at)
    SELECT started.id, 1, (e.value ->> 'index')::integer, e.value ->> 'type', e.value ->> 'visibility', e.value -> 'payload', %(at)s
    FROM started, json_array_elements(%(events)s) AS e(value)
), pointed AS (
    UPDATE game_table SET battle_id = (SELECT id FROM started), revision = revision + 1 WHERE id = %(table_id)s::integer
    RETURNING revision
)
SELECT id, (SELECT revision FROM pointed) FROM started
"""


_PARAMETER = re.compile(r"(?<!:):(\w+)")


def _pg_sql(sql: str) -> str:
    """A query with ``:name`` parameters as psycopg takes them (``%(name)s``)."""
    return _PARAMETER.sub(r"%(\1)s", sql)


def _pg_events(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``battle_event`` rows as the write statements spread them with ``json_array_elements`` (the
    battle, version and time are the statement's own parameters)."""
    return [{"index": r["index"], "type": r["type"], "visibility": r["visibility"], "payload": r["payload"]} for r in rows]


class PostgresCommandStore(CoreCommandStore):
    """A command's reads and writes on psycopg directly: one read, one atomic write statement."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        import psycopg
        from psycopg.types.json import Json

        self._psycopg = psycopg
        self._json = partial(Json, dumps=wire.dumps_bytes)  # psycopg's JSON parameters, written by orjson

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection in autocommit mode: no BEGIN and COMMIT round trips around statements
        that are transactions on their own.

        The store's pool does not ping a connection before handing it out (one round trip more per
        command); instead :meth:`read`, which writes nothing, takes a fresh connection and reads
        again once when the pooled one turns out dead (the database restarted, a failover)."""
        handle = _PgHandle(self)
        try:
            yield handle
        except self._psycopg.OperationalError:  # the connection broke: the pool must not hand it out again
            handle.discard()
            raise DatabaseUnavailable() from None
        finally:
            handle.release()

    def read(self, conn: Any, battle_id: int, msg_id: str | None) -> BattleRead | None:
        row = self._read_row(conn, _PG_READ, {"battle_id": battle_id, "msg_id": msg_id})
        if row is None:
            return None
        battle = BattleRecord(row[0], row[1], row[2], row[3], wire.loads(row[4]), row[5], row[6], row[9], row[10], row[11])  # the state read by orjson
        return BattleRead(battle, row[7], list(row[8]))

    def _read_row(self, conn: Any, query: str, params: dict[str, Any]) -> Any:
        """One row of a query that writes nothing: on a fresh connection once more when the pooled
        one turns out dead (see :meth:`connection`)."""
        try:
            return conn.pg.execute(query, params).fetchone()
        except self._psycopg.OperationalError:
            if not conn.pg.broken:
                raise
            conn.discard()
            conn.checkout()
            return conn.pg.execute(query, params).fetchone()

    def write(self, conn: Any, w: CommandWrite) -> Written | None:
        Json = self._json
        params = {
            "battle_id": w.battle_id, "current": w.current, "new_version": w.new_version, "state": Json(w.state),
            "status": w.status, "at": w.at, "prev_version": w.prev_version, "checkpoint": w.checkpoint,
            "msg_id": w.msg_id, "actor": w.actor, "declaration": Json(w.declaration), "events": Json(_pg_events(w.event_rows())),
            "table_id": w.table_id, "mix": w.mix, "seed": w.seed, "public_version": w.public_version, "dice_step": w.dice_step,
        }
        try:
            row = conn.pg.execute(_PG_WRITE, params).fetchone()
        except self._psycopg.IntegrityError:
            return None
        except self._psycopg.OperationalError:
            if conn.pg.broken:  # the caller may read again: that takes a fresh connection
                raise DatabaseUnavailable() from None
            raise
        return Written(list(row[1])) if row and row[0] == 1 else None

    def seat_ids(self, table_id: int) -> list[str]:
        with self.connection() as conn:
            return [row[0] for row in conn.pg.execute(_PG_SEAT_IDS, {"table_id": table_id})]

    def _rows(self, conn: Any, sql: str, params: dict[str, Any]) -> list[Any]:
        """The rows of a read of the battle's log (it writes nothing: on a fresh connection once more
        when the pooled one turns out dead, as :meth:`read`)."""
        query = _pg_sql(sql)
        try:
            return list(conn.pg.execute(query, params).fetchall())
        except self._psycopg.OperationalError:
            if not conn.pg.broken:
                raise
            conn.discard()
            conn.checkout()
            return list(conn.pg.execute(query, params).fetchall())

    def start(self, table_id: int, make: Callable[[GameTable, list[Seat]], NewBattle]) -> Started | None:
        """A new battle in one read and one write statement (through the ORM it took about ten round
        trips, and under gevent every round trip waits for the other greenlets, so a restart in a
        busy process took several times its own work)."""
        with self.connection() as conn:
            found = self.start_read(conn, table_id)
            if found is None:
                return None
            table, seats = found  # the read brings the board (blocked squares) and display settings along
            new = make(table, seats)
            battle_id, table.revision = self.start_write(conn, table, new.state, new.seed, new.status, new.events, utcnow(), new.setup)
        table.battle_id = battle_id
        return Started(battle_id, table, seats, new)

    def start_read(self, conn: Any, table_id: int) -> tuple[GameTable, list[Seat]] | None:
        """A table and its seats (in joining order) for a new battle, in one round trip."""
        row = self._read_row(conn, _PG_START_READ, {"table_id": table_id})
        if row is None:
            return None
        table = GameTable(
            id=row[0], slug=row[1], name=row[2], system_id=row[3], join_code=row[4], gm_token=row[5],
            lineup=wire.loads(row[6]), options=wire.loads(row[7]), gm_notes=row[8], battle_id=row[9], created_at=row[10],
            library=row[11], display=wire.loads(row[13]) if row[13] else None,
            board=wire.loads(row[14]) if row[14] else None, roster_id=row[15], revision=row[16],
        )
        seats = [
            Seat(id=s["id"], table_id=table_id, public_id=s["public_id"], name=s["name"], token=s["token"],
                 created_at=datetime.fromisoformat(s["created_at"]))
            for s in wire.loads(row[12] or "[]")
        ]
        return table, seats

    def start_write(self, conn: Any, table: GameTable, state: dict[str, Any], seed: str, status: str,
                    events: list[dict[str, Any]], at: datetime, setup: dict[str, Any] | None = None) -> tuple[int, int]:
        """Write a table's new battle (its row, first snapshot and events) and make it the table's
        battle (raising the table's revision), in one statement; the new battle's id and the table's
        revision."""
        Json = self._json
        params = {"table_id": table.id, "system_id": table.system_id, "state": Json(state), "seed": seed, "status": status,
                  "at": at, "events": Json(_pg_events(event_rows(0, 1, events, at))), "setup": Json(setup)}
        # a broken connection: connection() discards it and answers DatabaseUnavailable
        battle_id, revision = conn.pg.execute(_PG_START_WRITE, params).fetchone()
        return int(battle_id), int(revision)


class _PgHandle:
    """The psycopg connection a command works on, and its place in the pool."""

    def __init__(self, store: PostgresCommandStore) -> None:
        self.store = store
        self.raw: Any = None
        self.pg: Any = None
        self.checkout()

    def checkout(self) -> None:
        try:
            self.raw = self.store.engine.raw_connection()
        except self.store._psycopg.OperationalError:  # refused or unreachable (SQLAlchemy wraps only some)
            raise DatabaseUnavailable() from None
        self.pg = self.raw.driver_connection
        self.pg.autocommit = True

    def discard(self) -> None:
        if self.raw is not None:
            self.raw.invalidate()
            self.raw = None

    def release(self) -> None:
        if self.raw is None:
            return
        with contextlib.suppress(Exception):
            if not self.pg.closed:
                self.pg.autocommit = False
        self.raw.close()
        self.raw = None


_SQLITE_READ = """
SELECT b.id, b.table_id, b.system_id, b.version, b.state, b.seed, b.status,
       (SELECT c.version FROM battle_command c WHERE c.battle_id = b.id AND c.msg_id = ?),
       (SELECT group_concat(public_id) FROM (SELECT s.public_id FROM seat s WHERE s.table_id = b.table_id ORDER BY s.id)),
       b.mix, b.public_version,
       (SELECT n.dice_step FROM battle_snapshot n WHERE n.battle_id = b.id AND n.version = b.version)
FROM battle b WHERE b.id = ?
"""
_SQLITE_SEAT_IDS = "SELECT public_id FROM seat WHERE table_id = ? ORDER BY id"
_SQLITE_CAS = ("UPDATE battle SET version = ?, state = ?, status = ?, updated_at = ?, mix = COALESCE(?, mix), seed = COALESCE(?, seed), "
               "public_version = ? WHERE id = ? AND version = ?")
_SQLITE_SNAPSHOT = ("INSERT INTO battle_snapshot (battle_id, version, state, prev_version, checkpoint, dice_step) "
                    "VALUES (?, ?, ?, ?, ?, ?)")
_SQLITE_EVENT = (
    'INSERT INTO battle_event (battle_id, version, "index", type, visibility, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'
)
_SQLITE_COMMAND = (
    "INSERT INTO battle_command (battle_id, version, msg_id, actor, declaration, created_at) VALUES (?, ?, ?, ?, ?, ?)"
)


def _sqlite_time(at: datetime) -> str:
    """A datetime as SQLAlchemy stores it in SQLite (so the models read it back)."""
    return at.strftime("%Y-%m-%d %H:%M:%S.%f")


class SqliteCommandStore(CoreCommandStore):
    """A command's reads and writes on Python's sqlite3 directly, in the same rows and formats as
    SQLAlchemy writes them: SQLite is in-process, so SQLAlchemy's own work per statement is most of
    a command's database time. The new state is encoded once for the battle row and the snapshot."""

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        raw = self.engine.raw_connection()
        db = raw.driver_connection
        try:
            yield db
        except sqlite3.OperationalError:  # locked past the busy timeout, disk trouble
            raise DatabaseUnavailable() from None
        finally:
            raw.close()  # the pool rolls back whatever is still open

    def read(self, conn: Any, battle_id: int, msg_id: str | None) -> BattleRead | None:
        row = conn.execute(_SQLITE_READ, (msg_id, battle_id)).fetchone()
        if row is None:
            return None
        seats = row[8].split(",") if row[8] else []
        return BattleRead(BattleRecord(row[0], row[1], row[2], row[3], wire.loads(row[4]), row[5], row[6], row[9], row[10], row[11]),
                          row[7], seats)

    def _rows(self, conn: Any, sql: str, params: dict[str, Any]) -> list[Any]:
        return list(conn.execute(sql, params).fetchall())

    def write(self, conn: Any, w: CommandWrite) -> Written | None:
        state, at = wire.dumps(w.state), _sqlite_time(w.at)
        try:
            changed = conn.execute(_SQLITE_CAS, (w.new_version, state, w.status, at, w.mix, w.seed, w.public_version, w.battle_id, w.current))
            if changed.rowcount != 1:
                conn.rollback()
                return None
            conn.execute(_SQLITE_SNAPSHOT, (w.battle_id, w.new_version, state, w.prev_version, int(w.checkpoint), w.dice_step))
            rows = w.event_rows()
            if rows:
                conn.executemany(
                    _SQLITE_EVENT,
                    [(r["battle_id"], r["version"], r["index"], r["type"], r["visibility"], wire.dumps(r["payload"]), at)
                     for r in rows],
                )
            conn.execute(_SQLITE_COMMAND, (w.battle_id, w.new_version, w.msg_id, w.actor, wire.dumps(w.declaration), at))
            seats = [row[0] for row in conn.execute(_SQLITE_SEAT_IDS, (w.table_id,))]  # inside the transaction
            conn.commit()
        except sqlite3.IntegrityError:  # the same version or message id, written first elsewhere
            conn.rollback()
            return None
        return Written(seats)


def command_store(engine: Engine) -> CommandStore:
    """The store for an engine: psycopg's own for PostgreSQL, SQLAlchemy Core for the rest (for
    PostgreSQL, best an engine whose pool does not ping: :func:`webapp.db.make_engine`'s ``pre_ping``)."""
    if engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg":
        return PostgresCommandStore(engine)
    if engine.dialect.name == "sqlite" and engine.dialect.driver == "pysqlite":
        return SqliteCommandStore(engine)
    return CoreCommandStore(engine)
