"""Shared fixtures: a real app on a real SQLite file in a temporary folder."""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from rules import get_system
from rules.odds.common import set_simulation_share
from rules.registry import EXTRA_SYSTEMS_VARIABLE
from tests.server_forks import Forked
from webapp import sockets
from webapp.app import create_app, socketio
from webapp.config import load_config
from webapp.db import create_tables, make_engine

# The sixth rule system, kept with the tests (tests/systems/one_die/): registered by its folder's name
# alone, as any system outside rules/systems/ is, for the whole run and for every server a test starts
# (they inherit the environment). Every test parametrized over ``available_systems()`` takes it too.
os.environ.setdefault(EXTRA_SYSTEMS_VARIABLE, "tests.systems.one_die")

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
TESTS = Path(__file__).resolve().parent


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)  # (doctests of rules/ have none)
    return info is not None and any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


# --- running in parallel (pytest-xdist; ``python3 -m webapp test`` runs ``-n auto --dist loadgroup``) ---
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for ``--dist loadgroup``: the services tests run one after another on one worker (each
    starts gunicorn processes on PostgreSQL and Redis: two at once would double the connections and
    the load for nothing), and a module's tests share its module-scoped fixture (a server with demo
    tables) on one worker instead of building it on each. Every other test goes wherever a worker is
    free. Under xdist the longest units are handed out first (services, then the browser tests), so no
    worker is left with a long one at the end while the other has nothing to do."""
    for item in items:
        group = None
        if TESTS / "services" in item.path.parents:
            group = "services"
        elif _uses_a_module_fixture(item):
            group = item.path.relative_to(TESTS.parent).as_posix()
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    if hasattr(config, "workerinput"):
        def first(item: pytest.Item) -> int:
            return 0 if TESTS / "services" in item.path.parents else 1 if TESTS / "browser" in item.path.parents else 2
        items.sort(key=first)


class PageClient(FlaskClient):
    """Flask's test client, posting as the board's own pages do: with the CSRF token a form of this
    browser's session carries (read off the join form first). ``csrf = False`` posts without it, as
    another site's page would."""

    csrf = True

    def open(self, *args: Any, **kwargs: Any) -> Any:
        method = str(kwargs.get("method") or "GET").upper()
        if self.csrf and method in ("POST", "PUT", "PATCH", "DELETE") and args and isinstance(args[0], str):
            headers = dict(kwargs.get("headers") or {})
            if not any(name.lower() == "x-csrftoken" for name in headers):
                page = super().open("/join", method="GET", environ_base=kwargs.get("environ_base") or {}, headers=headers)
                found = CSRF_FIELD.search(page.get_data(as_text=True))
                assert found, "the join form carries no CSRF token"
                headers["X-CSRFToken"] = found.group(1)
                kwargs["headers"] = headers
        return super().open(*args, **kwargs)


@pytest.fixture(autouse=True)
def fresh_odds_cache() -> None:
    """Every test starts with no odds remembered: the cache is the process's (webapp/sockets.py), keyed
    by battle id and version, and every test's new database numbers its battles from 1 again, so an
    answer left by another test (another system, another budget) would be taken for this one's."""
    sockets._ODDS_CACHE.clear()
    # and every simulation does its whole work (an app made with a smaller share sets it for the process)
    set_simulation_share(1.0)


def disconnect_now(client: Any) -> None:
    """``client.disconnect()`` of a python-socketio ``Client`` on a websocket, without waiting up to 3 s
    for the server's closing frame: websocket-client's ``close()`` waits for it, while the client's own
    reading thread often takes it first, and the wait then runs its full length. The server has been
    told (the Engine.IO close packet goes first); nothing is left to wait for."""
    ws = getattr(client.eio, "ws", None)
    if ws is not None:
        ws.close = functools.partial(ws.close, timeout=0)
    client.disconnect()


def interrupt(process: subprocess.Popen[Any] | Forked, timeout: float = 10.0) -> None:
    """Stop a ``battleboard serve`` process as a GM does, with Ctrl+C; again every half second while it
    runs, and SIGKILL after ``timeout`` seconds. On gevent the interrupt lands in whichever greenlet
    runs at that moment: one serving a page ends quietly and the server goes on (seen on a busy
    machine as a server that outlived one Ctrl+C by the whole wait)."""
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            process.wait(10)
            return
        process.send_signal(signal.SIGINT)
        try:
            process.wait(0.5)
        except subprocess.TimeoutExpired:
            continue


def make_app(instance: Path, *, migrate: bool = False, **overrides: Any) -> Any:
    """An app of the tests on ``instance``: on its own SQLite file there unless ``database_url``
    says otherwise. A file not there yet starts as a copy of the process's database at the newest
    schema (the start-up then has no migration to run), unless ``migrate``: the migration tests see
    every step run on a new file."""
    database = instance / "test.sqlite3"
    if "database_url" not in overrides and not migrate and not database.exists():
        instance.mkdir(parents=True, exist_ok=True)
        copy_database(head_database(), database)
    config = load_config(
        instance_path=instance,
        database_url=overrides.pop("database_url", f"sqlite:///{database}"),
        secret_key="test-secret",
        testing=True,
        # seats' ids and battles' seeds derived from a fixed seed, so a table's dice are the same on
        # every run (a seat's id goes into the mix of a phone's seed); a test may pass its own
        test_seed=overrides.pop("test_seed", "battleboard-server-tests"),
        # no live chances unless a test asks (tests/server/test_chances.py): each update's would take a core
        chances_seconds=overrides.pop("chances_seconds", 0.0),
        # the whole of every simulation (the browser tests' servers do a twentieth: their environment
        # says so while they run, and an app made here then would carry it into the rules tests after)
        odds_work=overrides.pop("odds_work", 1.0),
        **overrides,
    )
    app = create_app(config)
    app.test_client_class = PageClient
    return app


@functools.cache
def head_database() -> Path:
    """A SQLite file at the newest schema, made once per test process: the tests' apps start from a
    copy of it instead of running every migration for each test (the start-up then finds the
    database at the head and has nothing to do, as on any later start). The migration tests make
    their own databases (``make_app(..., migrate=True)``), and see every step run."""
    folder = Path(tempfile.mkdtemp(prefix="battleboard-head-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "head.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    try:
        create_tables(engine)
    finally:
        engine.dispose()
    return path


def copy_database(source: Path, target: Path) -> None:
    """SQLite's own backup of ``source`` into a new file ``target`` (whole, whatever its journal holds)."""
    with sqlite3.connect(source) as original, sqlite3.connect(target) as copy:
        original.backup(copy)
    original.close()
    copy.close()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    application = make_app(tmp_path)  # (on a copy of the process's database at the head)
    yield application
    close_app(application)


def close_app(application: Any) -> None:
    """The end of a test's app: its database let go, and its live chances' worker stopped (else an
    exact chance it was working out goes on beside the next tests)."""
    application.extensions["battleboard"].service.engine.dispose()
    chances = application.extensions.get("battleboard_chances")
    if chances is not None:
        chances.close()


@pytest.fixture
def service(app: Any) -> Any:
    return app.extensions["battleboard"].service


def duel_lineup(*, a: dict[str, Any] | None = None, b: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
    hero = {**presets["Jharek"], "id": "jharek", "side": "A", "controller": "gm", "seat": None, **(a or {})}
    foe = {**presets["Wild Monster"], "id": "monster", "side": "B", "controller": "gm", "seat": None, **(b or {})}
    return [hero, foe]


class Table:
    """A Phantom's Bane table with two seated players and helpers to connect sockets."""

    def __init__(self, app: Any, *, start: bool = True, foe_controller: str = "seat") -> None:
        self.app = app
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Test table", "phantoms-bane")
        _, self.seat_a = self.service.join(self.table.join_code, "Alice")
        _, self.seat_b = self.service.join(self.table.join_code, "Bob")
        foe: dict[str, Any] = {"controller": foe_controller}
        if foe_controller == "seat":
            foe["seat"] = self.seat_b.public_id
        lineup = duel_lineup(a={"controller": "seat", "seat": self.seat_a.public_id}, b=foe)
        self.service.set_lineup(self.table.id, lineup)
        self.battle_id: int | None = None
        if start:
            self.battle_id = self.service.start_battle(self.table.id, seed="fixed-seed").battle_id

    def client(self, token: str | None) -> Any:
        flask_client = self.app.test_client()
        client = socketio.test_client(self.app, auth={"table": self.table.slug, "token": token}, flask_test_client=flask_client)
        assert client.is_connected()
        return client

    def gm(self) -> Any:
        return self.client(self.table.gm_token)

    def alice(self) -> Any:
        return self.client(self.seat_a.token)

    def bob(self) -> Any:
        return self.client(self.seat_b.token)

    def spectator(self) -> Any:
        return self.client(None)

    @property
    def version(self) -> int:
        assert self.battle_id is not None
        return self.service.battle(self.battle_id).version

    @property
    def state(self) -> dict[str, Any]:
        assert self.battle_id is not None
        return self.service.battle(self.battle_id).state


@pytest.fixture
def duel(app: Any) -> Table:
    return Table(app)
