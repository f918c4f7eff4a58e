"""The database engine: SQLite file by default, PostgreSQL through ``DATABASE_URL``."""

from __future__ import annotations

import _thread
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, Engine
from sqlmodel import create_engine

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
        def _sqlite_pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            _write_ahead_log(cursor, timeout)
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
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


def _write_ahead_log(cursor: sqlite3.Cursor, timeout: float) -> None:
    """Put the database file in write-ahead-log mode (once per file: the mode stays with it). The
    switch takes the file for itself and, unlike other statements, may answer "database is locked"
    at once, without waiting, when several processes open a new database together: it is tried
    again until ``timeout`` has passed."""
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    give_up = time.monotonic() + timeout
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > give_up:
                raise
            time.sleep(0.02)


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


#: the folder of the migrations (Alembic's script directory): docs/migrations.md says how to add one
MIGRATIONS = Path(__file__).resolve().parent / "migrations"

#: the PostgreSQL advisory lock a process holds while it migrates ("battlebd" in ASCII): any number
#: stays as long as every process of the board takes the same
MIGRATION_LOCK = 0x626174746C656264


def alembic_config(scripts: Path = MIGRATIONS) -> Config:
    """Alembic's configuration for the board's migrations (no ``alembic.ini`` needed)."""
    config = Config()
    config.set_main_option("script_location", str(scripts))
    return config


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that one process at a time holds: several processes starting
    at once (gunicorn workers, a second server) migrate one after the other, and each later one finds
    the database already at the head.

    PostgreSQL: a transaction-scoped advisory lock, the migrations in the same transaction (its DDL is
    transactional: all of them or none). SQLite: ``BEGIN IMMEDIATE`` takes the file's write lock
    before anything is read (another process waits for it, as long as the engine's busy timeout), and
    the migrations run in that transaction; foreign keys are not enforced meanwhile, as a batch
    migration must drop and recreate a table others refer to (Alembic's batch documentation)."""
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")  # outside a transaction, or it does nothing
            connection.commit()
            try:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                yield connection
                connection.commit()
            except BaseException:
                connection.rollback()
                raise
            finally:
                try:
                    connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                    connection.commit()
                except Exception:  # noqa: BLE001  (never back to the pool without its foreign keys)
                    connection.invalidate()
            return
        with connection.begin():
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            yield connection


def migrate(engine: Engine, revision: str = "head", *, scripts: Path = MIGRATIONS) -> None:
    """Bring the database to ``revision`` (the newest by default) with the migrations in
    webapp/migrations/versions: a new database gets every table, one written by an earlier version
    gets what it lacks, one already there is left as it is. A migration that fails leaves the
    database as it was (one transaction), and the next start tries again."""
    config = alembic_config(scripts)
    with migration_connection(engine) as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def create_tables(engine: Engine) -> None:
    """The start-up's step for the database: :func:`migrate` to the newest schema."""
    migrate(engine)
