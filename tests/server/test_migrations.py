"""Schema changes by migrations (Alembic, webapp/migrations): start-up brings every database to the
head, whatever its age, and the result is the schema the models describe.

- the database written by the board before the renovation (tests/fixtures/pre_renovation, on a copy)
  is upgraded in place: at the head, no difference from the models, every row kept, every battle
  replays;
- a new database is made at the head, and a second start changes nothing;
- a database at the baseline takes only the later steps, and its rows get the new columns' values;
- several processes starting at once on one new database migrate one after the other;
- a migration that fails leaves the database as it was;
- the added columns can be taken back and made again on a database with battles in it.

The PostgreSQL variants are in tests/services/test_migrations_pg.py (they reuse the helpers here).
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, select

from tests.conftest import duel_lineup, make_app
from tests.server.test_old_battles import DATABASE, SHA256, SYSTEMS, battles_of, sha256
from webapp.db import MIGRATIONS, alembic_config, create_tables, make_engine, migrate, migration_connection
from webapp.models import Battle, BattleSnapshot, GameTable, Roster
from webapp.replay import replay_battle

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ScriptDirectory.from_config(alembic_config())
HEAD = SCRIPTS.get_current_head()
BASELINE = "0001"
#: every revision from the first to the head, in the order they run
EVERY_STEP = [script.revision for script in reversed(list(SCRIPTS.walk_revisions()))]

#: the columns the migrations after the baseline add (what ADDED_COLUMNS of webapp/db.py held)
ADDED = {
    "game_table": {"library", "display", "board", "roster_id"},
    "roster": {"library"},
    "battle": {"mix", "setup", "shareable", "public_version"},
    "battle_snapshot": {"dice_step"},
}


# --- helpers (the PostgreSQL tests use them too) ------------------------------------------------
def revision_of(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def versions_stored(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return [row[0] for row in connection.execute(sa.text("SELECT version_num FROM alembic_version"))]


def differences(engine: Engine) -> list[Any]:
    """What Alembic's autogenerate would write to bring the database to the models: nothing, when
    the migrations made the schema the models describe."""
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, SQLModel.metadata))


def columns(engine: Engine, table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(engine).get_columns(table)}


def row_counts(engine: Engine) -> dict[str, int]:
    there = set(sa.inspect(engine).get_table_names())
    with engine.connect() as connection:
        return {
            name: connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            for name, table in SQLModel.metadata.tables.items()
            if name in there
        }


def alembic_steps(caplog: pytest.LogCaptureFixture) -> Any:
    """A function: the revisions the migrations ran since the start or ``.clear()`` (from Alembic's
    log), in order."""
    caplog.set_level(logging.INFO, logger="alembic.runtime.migration")

    def steps() -> list[str]:
        found = (re.match(r"Running upgrade \S* -> (\S+),", r.getMessage()) for r in caplog.records)
        return [m.group(1) for m in found if m]

    steps.clear = caplog.clear  # type: ignore[attr-defined]
    return steps


@pytest.fixture
def steps_run(caplog: pytest.LogCaptureFixture) -> Any:
    return alembic_steps(caplog)


def replay_every_battle(service: Any) -> list[Battle]:
    battles = battles_of(service)
    for battle in battles:
        report = replay_battle(service, battle.id)
        assert report.ok, (battle.id, battle.system_id, report.mismatches)
    return battles


#: a process of the board starting: it waits for the word, then migrates (tests start several at once)
STARTING = """
import pathlib, sys, time
from webapp.db import make_engine, migrate
url, folder, me = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
(folder / f"ready-{me}").touch()
deadline = time.monotonic() + 120
while not (folder / "go").exists():
    if time.monotonic() > deadline:
        sys.exit("never told to go")
    time.sleep(0.002)
engine = make_engine(url)
migrate(engine)
engine.dispose()
"""


def start_at_once(url: str, folder: Path, processes: int = 3) -> None:
    """``processes`` separate Python processes migrate ``url`` at the same moment; each must succeed."""
    folder.mkdir()
    running = [
        subprocess.Popen([sys.executable, "-c", STARTING, url, str(folder), str(n)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(processes)
    ]
    try:
        deadline = time.monotonic() + 120  # a guard against a hang, not a measure of speed
        while len(list(folder.glob("ready-*"))) < processes:
            assert time.monotonic() < deadline, "the processes did not start"
            assert all(p.poll() is None for p in running), [p.communicate() for p in running if p.poll() is not None]
            time.sleep(0.01)
        (folder / "go").touch()  # all of them are waiting: they migrate together
        for process in running:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()


# --- the database written before the renovation -------------------------------------------------
def test_the_migrations_run_in_order_from_the_baseline_to_the_undo_step() -> None:
    """One line of history: the baseline, the columns added before Alembic one change at a time, the
    last of them issue 33's undo step (later migrations follow it)."""
    assert len(SCRIPTS.get_heads()) == 1
    assert EVERY_STEP[:8] == [f"{n:04d}" for n in range(1, 9)] and EVERY_STEP[0] == BASELINE
    assert SCRIPTS.get_revision("0008").module.__file__.endswith("0008_snapshot_dice_step.py")


def test_the_old_database_is_upgraded_at_start_up_and_every_battle_replays(tmp_path: Path, steps_run: Any) -> None:
    copy = tmp_path / "battleboard.sqlite3"
    shutil.copyfile(DATABASE, copy)
    url = f"sqlite:///{copy}"
    engine = make_engine(url)
    before = row_counts(engine)
    assert revision_of(engine) is None, "written before the migrations: no alembic_version"
    assert "dice_step" not in columns(engine, "battle_snapshot")
    engine.dispose()

    app = make_app(tmp_path, database_url=url)  # the start-up
    service = app.extensions["battleboard"].service
    try:
        # every step ran; those whose tables and columns were there found them and left them alone
        assert steps_run() == EVERY_STEP
        assert versions_stored(service.engine) == [HEAD]
        assert differences(service.engine) == []
        assert row_counts(service.engine) == {**before, "battle_chances": 0}  # (a new table: who's winning, kept)
        with service.session() as s:
            assert set(s.exec(select(BattleSnapshot.dice_step))) == {None}  # old states: the step is the version
        battles = replay_every_battle(service)
        assert {b.system_id for b in battles} == set(SYSTEMS)
        steps_run.clear()
        create_tables(service.engine)  # the next start: nothing to do
        assert steps_run() == []
    finally:
        service.engine.dispose()
    assert sha256(DATABASE) == SHA256["battleboard.sqlite3"], "the fixture itself was written to"


# --- a new database, one at the baseline --------------------------------------------------------
def test_a_new_database_is_made_at_the_head_and_a_second_start_changes_nothing(tmp_path: Path, steps_run: Any) -> None:
    app = make_app(tmp_path, migrate=True)
    service = app.extensions["battleboard"].service
    try:
        assert steps_run() == EVERY_STEP
        assert versions_stored(service.engine) == [HEAD]
        assert differences(service.engine) == []
        assert set(sa.inspect(service.engine).get_table_names()) == set(SQLModel.metadata.tables) | {"alembic_version"}
        table = service.create_table("After the start", "phantoms-bane")
        steps_run.clear()
        again = make_app(tmp_path)  # a second start on the same file
        assert steps_run() == [] and versions_stored(service.engine) == [HEAD]
        assert again.extensions["battleboard"].service.table(slug=table.slug).name == "After the start"
        again.extensions["battleboard"].service.engine.dispose()
    finally:
        service.engine.dispose()


def make_database_at_the_baseline(url: str) -> None:
    """A database as the baseline leaves it, with a table, a roster and a battle written the way the
    board wrote them before the later columns existed."""
    engine = make_engine(url)
    migrate(engine, BASELINE)
    assert revision_of(engine) == BASELINE
    for table, added in ADDED.items():
        assert not added & columns(engine, table), table
    moment = "2026-01-01 00:00:00"
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO game_table (id, slug, name, system_id, join_code, gm_token, lineup, options, gm_notes, created_at) "
            "VALUES (1, 'old', 'Old table', 'phantoms-bane', 'OLDCDE', 'old-gm-key', '[]', '{}', '', :t)"), {"t": moment})
        conn.execute(sa.text("INSERT INTO roster (id, name, system_id, created_at) VALUES (1, 'Old roster', 'phantoms-bane', :t)"),
                     {"t": moment})
        conn.execute(sa.text(
            "INSERT INTO battle (id, table_id, system_id, version, state, seed, status, created_at, updated_at) "
            "VALUES (1, 1, 'phantoms-bane', 1, '{}', 'old-seed', 'ended', :t, :t)"), {"t": moment})
        conn.execute(sa.text("INSERT INTO battle_snapshot (battle_id, version, state, checkpoint) VALUES (1, 1, '{}', :yes)"),
                     {"yes": True})
    engine.dispose()


def check_the_rows_from_the_baseline(service: Any) -> None:
    """The rows written at the baseline read back with the values the later columns give old rows."""
    with service.session() as s:
        table = s.exec(select(GameTable).where(GameTable.slug == "old")).one()
        assert (table.library, table.display, table.board, table.roster_id) == ("shared", None, None, None)
        assert s.exec(select(Roster.library)).one() == "shared"  # every roster was shared before libraries
        battle = s.get(Battle, 1)
        assert battle is not None
        assert (battle.mix, battle.setup, battle.shareable, battle.public_version) == ("", None, False, None)
        assert s.exec(select(BattleSnapshot.dice_step)).one() is None
    assert [r["name"] for r in service.rosters("phantoms-bane", "shared")] == ["Old roster"]


def test_a_database_at_the_baseline_takes_only_the_later_steps(tmp_path: Path, steps_run: Any) -> None:
    url = f"sqlite:///{tmp_path / 'baseline.sqlite3'}"
    make_database_at_the_baseline(url)
    steps_run.clear()
    app = make_app(tmp_path, database_url=url)
    service = app.extensions["battleboard"].service
    try:
        assert steps_run() == EVERY_STEP[1:]
        assert versions_stored(service.engine) == [HEAD]
        assert differences(service.engine) == []  # the library indexes included
        check_the_rows_from_the_baseline(service)
    finally:
        service.engine.dispose()


# --- several processes, a failure, taking back ---------------------------------------------------
def test_several_processes_starting_at_once_on_a_new_database_migrate_one_after_the_other(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    start_at_once(url, tmp_path / "race")
    engine = make_engine(url)
    try:
        assert versions_stored(engine) == [HEAD]  # one row: nobody stamped it twice
        assert differences(engine) == []
    finally:
        engine.dispose()


BREAKS = '''
import sqlalchemy as sa
from alembic import op

revision = "0999"
down_revision = {head!r}
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("battle", sa.Column("doomed", sa.Integer(), nullable=True))
    raise RuntimeError("this migration breaks half-way")


def downgrade() -> None:
    pass
'''


def test_a_migration_that_fails_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    scripts = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "0999_breaks.py").write_text(BREAKS.format(head=HEAD))
    # a database at today's head: the failed step leaves neither its column nor its version
    engine = make_engine(f"sqlite:///{tmp_path / 'at-head.sqlite3'}")
    migrate(engine)
    with pytest.raises(RuntimeError, match="breaks half-way"):
        migrate(engine, scripts=scripts)
    assert versions_stored(engine) == [HEAD] and "doomed" not in columns(engine, "battle")
    with engine.connect() as conn:  # the connection went back to the pool enforcing foreign keys again
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()
    # a new database: all the steps before the broken one are taken back with it
    engine = make_engine(f"sqlite:///{tmp_path / 'new.sqlite3'}")
    with pytest.raises(RuntimeError, match="breaks half-way"):
        migrate(engine, scripts=scripts)
    assert sa.inspect(engine).get_table_names() == []
    migrate(engine)  # the next start, with the broken step gone
    assert versions_stored(engine) == [HEAD]
    engine.dispose()


def test_the_added_columns_are_taken_back_and_made_again_around_battles(tmp_path: Path) -> None:
    """The downgrades, for a developer stepping back: on SQLite they rebuild tables that others
    refer to (batch mode), so the rows referring to them must survive it."""
    app = make_app(tmp_path, migrate=True)
    service = app.extensions["battleboard"].service
    table = service.create_table("Taken back", "phantoms-bane")
    service.set_lineup(table.id, duel_lineup())
    battle_id = service.start_battle(table.id, seed="back-and-forth").battle_id
    engine = service.engine
    before = row_counts(engine)
    config = alembic_config()
    with migration_connection(engine) as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, BASELINE)
    assert revision_of(engine) == BASELINE
    for name, added in ADDED.items():
        assert not added & columns(engine, name), name
    # (the kept chances' table is taken back whole: this battle kept none, live chances being off)
    assert row_counts(engine) == {name: count for name, count in before.items() if name != "battle_chances"}
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
    migrate(engine)
    assert versions_stored(engine) == [HEAD] and differences(engine) == []
    assert service.battle(battle_id).version == 1 and replay_battle(service, battle_id).ok
    engine.dispose()
