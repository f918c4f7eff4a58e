"""Redis away for ten seconds in the middle of a battle, with two gunicorn processes on PostgreSQL:
no page is left behind, and no command is lost or applied twice.

The Redis is the test's own (started on a free port, killed with SIGKILL, started again on the same
port). The pages are python-socketio clients that follow the board's protocol as
static/js/connection.js does: an update applies when its prev_v is the version held, any gap means
a sync, and a heartbeat that names a newer version or another table stamp means a sync. The
periodic heartbeat is switched off here (an hour apart), so only the queue's return can bring the
pages up to date: each process must reconnect at once and tell its pages.
"""

from __future__ import annotations

import http.cookiejar
import re
import secrets
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import socketio
from sqlmodel import col, func, select

from tests.services.conftest import Gunicorn, free_port, missing
from tests.services.test_cross_process import make_duel
from webapp.models import BattleCommand
from webapp.store import told_version

pytestmark = pytest.mark.services

OUTAGE_SECONDS = 10
#: how soon after Redis is back every page must hold what the database holds
CATCH_UP_SECONDS = 5


class OwnRedis:
    """A redis-server of the test's own, on a free port, with nothing saved to disk."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            missing("redis-server is not installed (apt-get install redis-server)")
        self.binary, self.folder = str(binary), folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Page:
    """A page of the board as static/js/connection.js keeps it: its battle's version and its table."""

    def __init__(self, url: str, slug: str, token: str | None) -> None:
        self.v = 0
        self.battle_id: int | None = None
        self.table: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.catch_up = threading.Event()
        self.closed = False
        self.client = socketio.Client(reconnection=True)
        self.client.on("update", self._on_update)
        self.client.on("table", self._on_table)
        self.client.on("heartbeat", self._on_heartbeat)
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=10)
        self.sync()
        # a sync waits for its answer, which the client's own thread delivers: syncs run here
        self.worker = threading.Thread(target=self._catch_up_loop, daemon=True)
        self.worker.start()

    def _on_update(self, update: dict[str, Any]) -> None:
        with self.lock:
            if update["battle_id"] != self.battle_id or update["v"] <= self.v:
                if update["battle_id"] != self.battle_id:
                    self.catch_up.set()
                return
            if update["prev_v"] != self.v:
                self.catch_up.set()  # a gap
                return
            self.v = update["v"]

    def _on_table(self, table: dict[str, Any]) -> None:
        with self.lock:
            self.table = table
            if table["battle_id"] != self.battle_id:
                self.catch_up.set()

    def _on_heartbeat(self, beat: dict[str, Any]) -> None:
        with self.lock:
            behind = beat["battle_id"] != self.battle_id or (beat["v"] is not None and beat["v"] > self.v) \
                or beat["stamp"] != self.table.get("stamp")
        if behind:
            self.catch_up.set()

    def _catch_up_loop(self) -> None:
        while not self.closed:
            if self.catch_up.wait(0.2):
                self.catch_up.clear()
                try:
                    self.sync()
                except Exception:  # noqa: BLE001 (not connected just now: the next beat brings it back)
                    continue

    def sync(self) -> None:
        ack = self.client.call("sync", {"battle_id": self.battle_id, "since_v": self.v}, timeout=15)
        assert ack["ok"], ack
        with self.lock:
            self.table = ack["table"]
            battle = ack["battle"]
            if battle is not None:
                self.battle_id, self.v = battle["battle_id"], max(battle["v"], self.v if battle["battle_id"] == self.battle_id else 0)

    def close(self) -> None:
        self.closed = True
        self.client.disconnect()


def join_through(url: str, code: str, name: str) -> None:
    """A player joins with the join form, as a phone would (with the form's CSRF token, if it has one)."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    form = opener.open(f"{url}/j/{code}", timeout=10).read().decode()
    fields = {"code": code, "name": name}
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', form)
    if token:
        fields["csrf_token"] = token.group(1)
    request = urllib.request.Request(f"{url}/join", data=urllib.parse.urlencode(fields).encode(),
                                     headers={"Origin": url, "Referer": f"{url}/j/{code}"})
    assert opener.open(request, timeout=10).status == 200


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def test_a_redis_outage_mid_battle_leaves_no_page_behind(pg_url: str, own_redis: OwnRedis, tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": pg_url,
        "BATTLEBOARD_MESSAGE_QUEUE": own_redis.url,
        "BATTLEBOARD_MESSAGE_QUEUE_CHANNEL": f"battleboard-outage-{secrets.token_hex(4)}",
        "BATTLEBOARD_SECRET_KEY": "services-test-secret",
        "BATTLEBOARD_HEARTBEAT_SECONDS": "3600",  # only the queue's return may bring the pages up to date
    }
    servers = [Gunicorn(env, tmp_path, "a", wait=False), Gunicorn(env, tmp_path, "b", wait=False)]
    pages: list[Page] = []
    try:
        for server in servers:
            server.wait_ready()
        a, b = servers
        service, table, alice_seat, battle_id = make_duel(pg_url)
        gm, alice = Page(a.url, table.slug, table.gm_token), Page(b.url, table.slug, alice_seat.token)
        pages = [gm, alice, Page(a.url, table.slug, None), Page(b.url, table.slug, None)]
        sent: list[str] = []

        def declare(page: Page, declaration: dict[str, Any]) -> dict[str, Any]:
            msg_id = f"m{len(sent)}-{secrets.token_hex(3)}"
            ack = page.client.call("declare", {"battle_id": battle_id, "expected_v": page.v, "declaration": declaration,
                                               "msg_id": msg_id}, timeout=15)
            assert ack["ok"], ack
            sent.append(msg_id)
            return ack

        def converged() -> bool:
            battle = service.battle(battle_id)
            held = [page.v == (battle.version if page is gm else told_version(battle)) for page in pages]
            return all(held) and "Carol" in [s["name"] for s in gm.table.get("seats", [])]

        def wait(until: Any, seconds: float) -> float:
            start = time.monotonic()
            while time.monotonic() - start < seconds:
                if until():
                    return time.monotonic() - start
                time.sleep(0.05)
            battle = service.battle(battle_id)
            raise AssertionError(f"not caught up after {seconds} s: pages at {[p.v for p in pages]}, the battle at "
                                 f"{battle.version} (told {told_version(battle)}); GM's seats {gm.table.get('seats')}")

        # with Redis up, a turn reaches every page on both processes
        declare(gm, {"type": "choose", "combatant": "monster", "option": "attack"})
        declare(alice, {"type": "choose", "combatant": "jharek", "option": "defend"})
        wait(lambda: all(page.v == service.battle(battle_id).version for page in pages), 10)

        own_redis.kill()
        down = time.monotonic()
        # meanwhile: a GM's secret and a turn on both processes, and a player who joins through B
        declare(gm, {"type": "set_escape", "possible": False})
        declare(gm, {"type": "choose", "combatant": "monster", "option": "press"})
        declare(alice, {"type": "choose", "combatant": "jharek", "option": "attack"})
        join_through(b.url, table.join_code, "Carol")
        assert not converged(), "the pages of the other process cannot have heard of it while Redis is down"
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down)))

        own_redis.start()

        def back_everywhere() -> bool:
            # (the pages of one process may be caught up already by their own process's updates: each
            # process must still have heard the queue come back, however long the other one took)
            return all("the message queue is back" in server.log.read_text() for server in servers)

        took = wait(lambda: converged() and back_everywhere(), CATCH_UP_SECONDS)
        print(f"every page caught up {took:.2f} s after Redis came back")
        for server in servers:
            assert "the message queue is back" in server.log.read_text(), server.log.read_text()[-2000:]

        # and the battle goes on over the queue as before
        declare(gm, {"type": "choose", "combatant": "monster", "option": "defend"})
        declare(alice, {"type": "choose", "combatant": "jharek", "option": "press"})
        wait(converged, 10)
        # no command was lost or applied twice: each message once, each version once, none missing
        battle = service.battle(battle_id)
        with service.session() as s:
            rows = s.exec(select(BattleCommand.msg_id, BattleCommand.version).where(BattleCommand.battle_id == battle_id)).all()
            versions = s.exec(select(func.count(col(BattleCommand.version).distinct())).where(BattleCommand.battle_id == battle_id)).one()
        mine = [msg for msg, _v in rows if msg in sent]
        assert sorted(mine) == sorted(sent) and len(set(mine)) == len(mine)
        assert versions == len(rows) == battle.version - 1
        for server in servers:
            assert "Traceback" not in server.log.read_text(), server.log.read_text()[-3000:]
    finally:
        for page in pages:
            page.close()
        for server in servers:
            server.stop()
