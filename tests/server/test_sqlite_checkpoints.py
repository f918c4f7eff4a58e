"""SQLite's write-ahead log is copied into the database file by a thread of the serving process,
not by the commit that happens to find it grown (which stops a gevent process meanwhile)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from sqlalchemy import text

from webapp.db import checkpoint_in_background, make_engine


def _rows_in_the_file_alone(path: Path) -> int:
    """Rows of ``note`` in the database file itself, read from a copy without its log. A copy taken
    while the background checkpoint writes the file can be torn (half its pages old): it is taken
    again."""
    copy = path.with_name("copy.sqlite3")
    for _ in range(100):
        copy.write_bytes(path.read_bytes())
        db = sqlite3.connect(copy)
        try:
            return int(db.execute("SELECT count(*) FROM note").fetchone()[0])
        except sqlite3.OperationalError:  # the table itself is still only in the log
            return 0
        except sqlite3.DatabaseError:  # "database disk image is malformed": a torn copy
            time.sleep(0.01)
        finally:
            db.close()
    raise AssertionError("every copy of the database file was torn")


def test_the_log_is_copied_into_the_database_file_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "board.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)"))
            for n in range(50):  # about 30 pages: far below the 1000 at which a commit checkpoints
                conn.execute(text("INSERT INTO note (body) VALUES (:body)"), {"body": "x" * 2000 + str(n)})
        assert _rows_in_the_file_alone(path) == 0, "the rows are in the log only"
        assert checkpoint_in_background(engine, every_seconds=0.05)
        deadline = time.monotonic() + 10
        while _rows_in_the_file_alone(path) < 50 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _rows_in_the_file_alone(path) == 50
        with engine.begin() as conn:  # the board's own connections go on as before
            conn.execute(text("INSERT INTO note (body) VALUES ('after')"))
            assert conn.execute(text("SELECT count(*) FROM note")).scalar() == 51
    finally:
        engine.dispose()


def test_nothing_is_started_without_a_sqlite_database_file() -> None:
    assert not checkpoint_in_background(make_engine("sqlite://"))
    assert not checkpoint_in_background(make_engine("sqlite:///:memory:"))
    assert not checkpoint_in_background(make_engine("postgresql://nobody@127.0.0.1:1/none"))  # never connects
