"""Alembic's environment for the board: the models' metadata, batch operations (so a migration also
runs on SQLite, whose ALTER TABLE can do little), and the connection.

At start-up :func:`webapp.db.migrate` hands in a connection that already holds the migration lock;
from Alembic's command line (alembic.ini) the database is the one the board would open (DATABASE_URL,
else the instance folder's file), under the same lock.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

from webapp import models  # noqa: F401  (registers the tables)
from webapp.config import load_config
from webapp.db import make_engine, migration_connection

config = context.config


def render_item(kind: str, item: Any, _context: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes SQLModel's column types as the plain SQLAlchemy types they store, so a
    migration needs no import of SQLModel and keeps its meaning if SQLModel's types change."""
    if kind == "type" and isinstance(item, AutoString):
        return f"sa.String(length={item.length!r})"
    if kind == "type" and isinstance(item, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=True,  # autogenerate writes batch_alter_table: the same file runs on SQLite and PostgreSQL
        render_item=render_item,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("The migrations look at the database they change (what is missing); offline (--sql) mode cannot.")

shared = config.attributes.get("connection")
if shared is not None:
    run_migrations(shared)
else:  # Alembic's command line: say what it does
    logging.basicConfig(format="%(message)s")
    logging.getLogger("alembic.runtime.migration").setLevel(logging.INFO)
    engine = make_engine(load_config().finish().database_url)
    try:
        with migration_connection(engine) as connection:
            run_migrations(connection)
    finally:
        engine.dispose()
