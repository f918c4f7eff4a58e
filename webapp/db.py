"""The database engine: SQLite file by default, PostgreSQL through ``DATABASE_URL``."""

from __future__ import annotations

import _thread
import sqlite3
import time

from sqlalchemy import event, inspect, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, ProgrammingError
from sqlmodel import SQLModel, create_engine

from . import (
    models,  # noqa: F401  (registers the tables)
    wire,
)


def normalise_url(url: str) -> str:
    """Accept ``postgres://`` and ``postgresql://`` and use the psycopg 3 driver for them."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def make_engine(url: str, *, timeout: float = 30.0, pre_ping: bool = True, pool_size: int = 20) -> Engine:
    """The engine. ``timeout``: how long a write waits for a lock (SQLite) or a connection (PostgreSQL)
    before the command fails with a clear "unavailable" error instead of hanging. ``pre_ping``
    (PostgreSQL): test each connection with a round trip before handing it out.

    ``pool_size`` (PostgreSQL): the most connections the engine opens. Each is kept once opened: in
    a burst (a room full of phones connecting at once, commands back to back) work waits a moment
    for a free connection instead of opening one more and closing it again afterwards, which costs
    PostgreSQL a new backend process, more than the work itself."""
    url = normalise_url(url)
    busy_ms = int(timeout * 1000)
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": timeout},
            json_serializer=wire.dumps,
            json_deserializer=wire.loads,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            cursor.close()

        return engine
    # pool_pre_ping: a connection that died while the database was away is replaced, not reused
    return create_engine(
        url,
        pool_pre_ping=pre_ping,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=timeout,
        connect_args={"connect_timeout": max(1, min(int(timeout), 10))},
        json_serializer=wire.dumps,
        json_deserializer=wire.loads,
    )


def checkpoint_in_background(engine: Engine, every_seconds: float = 0.25) -> bool:
    """SQLite: copy the write-ahead log into the database file from a thread of its own, every
    ``every_seconds``; False (nothing started) for other databases or an in-memory one.

    SQLite otherwise does this checkpoint inside the commit that finds the log grown past 1000 pages
    (every few hundred commands here), and the checkpoint waits for the disk. Under gevent nothing
    else in the process runs meanwhile: every command arriving then waited, several milliseconds at
    the 99th percentile (``tests/benchmarks/bench_command.py --database sqlite``). A passive
    checkpoint takes no lock that a command waits for, and this one runs on an operating-system
    thread (not a greenlet), which SQLite lets go on while the disk works. The log then rarely
    grows far enough for a commit to checkpoint it itself (four times a second keeps it short even
    at 400 commands a second); if it does, SQLite still does."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        return False
    sleep, start_new_thread = time.sleep, _thread.start_new_thread
    try:  # under gevent's monkey-patching: the real ones, not a greenlet's
        from gevent import monkey

        sleep = monkey.get_original("time", "sleep")
        start_new_thread = monkey.get_original("_thread", "start_new_thread")
    except ImportError:
        pass

    def checkpoints() -> None:
        connection = sqlite3.connect(database, timeout=1.0)
        while True:
            sleep(every_seconds)
            try:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error:  # the file busy or gone a moment: the next round tries again
                continue

    start_new_thread(checkpoints, ())  # ends with the process
    return True


#: columns added after their table was first made: table, column, and its SQL type with the value
#: the rows already there get (every roster was shared by every table before libraries, so the old
#: rows share one library)
ADDED_COLUMNS = (
    ("game_table", "library", "VARCHAR(64) NOT NULL DEFAULT 'shared'"),
    ("roster", "library", "VARCHAR(64) NOT NULL DEFAULT 'shared'"),
    ("game_table", "display", "JSON"),
    ("game_table", "board", "JSON"),
    ("game_table", "roster_id", "INTEGER"),
    ("battle", "mix", "VARCHAR(64) NOT NULL DEFAULT ''"),
    ("battle", "setup", "JSON"),
    ("battle", "shareable", "BOOLEAN NOT NULL DEFAULT FALSE"),
    ("battle", "public_version", "INTEGER"),
    ("battle_snapshot", "dice_step", "INTEGER"),
)


def _add_missing_columns(engine: Engine) -> None:
    """Bring a database made by an earlier version up to date (create_all makes only missing tables)."""
    inspector = inspect(engine)
    for table, column, sql in ADDED_COLUMNS:
        if column not in {c["name"] for c in inspector.get_columns(table)}:
            with engine.begin() as conn:
                conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {sql}"))


def create_tables(engine: Engine) -> None:
    """Create the tables that are missing, and the columns a database of an earlier version lacks.
    Two processes starting at once on PostgreSQL may race on the catalogue; the loser waits a moment
    and looks again."""
    for attempt in range(5):
        try:
            SQLModel.metadata.create_all(engine)
            _add_missing_columns(engine)
            return
        except (IntegrityError, ProgrammingError):
            if attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))
