"""Schema changes by migrations on PostgreSQL (tests/server/test_migrations.py is the SQLite side).

The old database here is the pre-renovation fixture's rows in a PostgreSQL database made the way the
board made one before the migrations (``create_all`` of that board's models: today's without
``battle_snapshot.dice_step``), with no ``alembic_version``. Start-up brings it to the head under
the advisory lock, in one transaction.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel, create_engine

from rules import Viewer
from tests.conftest import make_app
from tests.server.test_migrations import (
    EVERY_STEP,
    HEAD,
    alembic_steps,
    check_the_rows_from_the_baseline,
    differences,
    make_database_at_the_baseline,
    replay_every_battle,
    revision_of,
    row_counts,
    start_at_once,
    versions_stored,
)
from tests.server.test_old_battles import DATABASE, SYSTEMS
from webapp.db import make_engine

pytestmark = pytest.mark.services


@pytest.fixture
def steps_run(caplog: pytest.LogCaptureFixture) -> Any:
    return alembic_steps(caplog)


def make_old_postgresql_database(url: str, tmp_path: Path) -> dict[str, int]:
    """The fixture's rows in a PostgreSQL database of the board before the migrations; its row counts."""
    copy = tmp_path / "old.sqlite3"
    shutil.copyfile(DATABASE, copy)  # read from a copy: the fixture is never opened
    old = create_engine(f"sqlite:///{copy}")
    engine = make_engine(url)
    SQLModel.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE battle_snapshot DROP COLUMN dice_step"))
        conn.execute(sa.text("DROP TABLE battle_chances"))  # (migration 0009 makes it)
        conn.execute(sa.text("ALTER TABLE game_table DROP COLUMN revision"))  # (migration 0010 adds it)
    assert revision_of(engine) is None
    with old.connect() as source, engine.begin() as target:
        for table in SQLModel.metadata.sorted_tables:  # parents before the rows that refer to them
            if not sa.inspect(source).has_table(table.name) or not sa.inspect(target).has_table(table.name):
                continue  # a table of a later migration
            there = [c for c in table.columns if c.name in {col["name"] for col in sa.inspect(source).get_columns(table.name)}]
            rows = [dict(row) for row in source.execute(sa.select(*there)).mappings()]
            if rows:  # only the old columns (a later column's Python default is not the old database's)
                target.execute(sa.insert(sa.table(table.name, *[sa.column(c.name, c.type) for c in there])), rows)
            if "id" in table.columns:  # the ids go on from the copied ones, as they did in the old database
                target.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                                       f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {table.name}), false)"))
    counts = row_counts(engine)
    old.dispose()
    engine.dispose()
    assert counts["battle"] and counts["battle_command"] and counts["battle_snapshot"]
    return counts


def test_an_old_postgresql_database_is_upgraded_at_start_up_and_every_battle_replays(pg_url: str, tmp_path: Path) -> None:
    before = make_old_postgresql_database(pg_url, tmp_path)
    app = make_app(tmp_path, database_url=pg_url)  # the start-up
    service = app.extensions["battleboard"].service
    try:
        assert versions_stored(service.engine) == [HEAD]
        assert differences(service.engine) == []
        assert row_counts(service.engine) == {**before, "battle_chances": 0}  # (a table of its own since)
        battles = replay_every_battle(service)
        assert {b.system_id for b in battles} == set(SYSTEMS)
        running = next(b for b in battles if b.status == "active")  # and a running battle plays on
        result = service.end_battle(running.id, Viewer.gm(), expected_v=running.version)
        assert result.version == running.version + 1 and replay_every_battle(service)
    finally:
        service.engine.dispose()


def test_a_new_postgresql_database_is_made_at_the_head(pg_url: str, tmp_path: Path, steps_run: Any) -> None:
    app = make_app(tmp_path, database_url=pg_url)
    service = app.extensions["battleboard"].service
    try:
        assert steps_run() == EVERY_STEP
        assert versions_stored(service.engine) == [HEAD] and differences(service.engine) == []
        steps_run.clear()
        again = make_app(tmp_path, database_url=pg_url)
        assert steps_run() == []
        again.extensions["battleboard"].service.engine.dispose()
    finally:
        service.engine.dispose()


def test_a_postgresql_database_at_the_baseline_takes_only_the_later_steps(pg_url: str, tmp_path: Path, steps_run: Any) -> None:
    make_database_at_the_baseline(pg_url)
    steps_run.clear()
    app = make_app(tmp_path, database_url=pg_url)
    service = app.extensions["battleboard"].service
    try:
        assert steps_run() == EVERY_STEP[1:]
        assert versions_stored(service.engine) == [HEAD] and differences(service.engine) == []
        check_the_rows_from_the_baseline(service)
    finally:
        service.engine.dispose()


def test_several_processes_starting_at_once_on_a_new_postgresql_database(pg_url: str, tmp_path: Path) -> None:
    start_at_once(pg_url, tmp_path / "race")
    engine = make_engine(pg_url)
    try:
        assert versions_stored(engine) == [HEAD] and differences(engine) == []
    finally:
        engine.dispose()
