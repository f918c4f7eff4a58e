"""Faults: the database briefly unavailable, a server killed with SIGKILL, a phone away for a while."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import socketio as socketio_client
from sqlmodel import select

from rules import Viewer
from tests.conftest import Table, disconnect_now, interrupt, make_app
from tests.flaky_line import FlakyLine
from tests.server.test_sockets import choose
from tests.server_forks import Forked, serve
from webapp.app import socketio
from webapp.config import load_config
from webapp.db import make_engine
from webapp.models import BattleCommand
from webapp.service import BattleService

REPO = Path(__file__).resolve().parents[2]


# --- the database briefly unavailable ---------------------------------------------------------


def test_a_locked_database_gives_clear_errors_then_the_board_recovers(tmp_path: Path) -> None:
    app = make_app(tmp_path, db_timeout=0.3)
    duel = Table(app)
    gm, alice = duel.gm(), duel.alice()
    before, state = duel.version, duel.state
    locker = sqlite3.connect(tmp_path / "test.sqlite3", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")  # another program holds the file: every write times out
    try:
        for client, combatant in ((gm, "monster"), (alice, "jharek")):
            client.get_received()
            started = time.monotonic()
            ack = choose(client, duel, combatant, "attack")
            assert time.monotonic() - started < 5, "a locked database must not hang the command"
            assert ack["ok"] is False and ack["code"] == "unavailable", ack
            assert "database is unavailable" in ack["error"]
            errors = [m["args"][0] for m in client.get_received() if m["name"] == "error"]
            assert errors and errors[-1]["code"] == "unavailable"
        assert gm.emit("notes_set", {"notes": "while locked"}, callback=True)["code"] == "unavailable"
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert duel.version == before and duel.state == state, "nothing was written while the database was away"
    # the database is back: the same declarations go through on the same connections
    assert choose(gm, duel, "monster", "attack")["ok"]
    assert choose(alice, duel, "jharek", "defend")["ok"]
    assert duel.version == before + 2
    assert gm.emit("notes_set", {"notes": "after"}, callback=True)["ok"]
    app.extensions["battleboard"].service.engine.dispose()


def test_a_database_file_that_vanishes_gives_clear_errors_not_a_crash(tmp_path: Path) -> None:
    app = make_app(tmp_path, db_timeout=0.3)
    duel = Table(app)
    gm = duel.gm()
    service = app.extensions["battleboard"].service
    service.engine.dispose()
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    files = list(tmp_path.glob("test.sqlite3*"))
    for path in files:
        path.rename(moved / path.name)
    (tmp_path / "test.sqlite3").mkdir()  # a folder where the file was: SQLite cannot open it
    try:
        ack = gm.emit("sync", {}, callback=True)
        assert ack["ok"] is False and ack["code"] == "unavailable", ack
    finally:
        (tmp_path / "test.sqlite3").rmdir()
        service.engine.dispose()
        for path in files:
            (moved / path.name).rename(path)
    ack = gm.emit("sync", {}, callback=True)
    assert ack["ok"] and ack["battle"]["v"] == duel.version
    service.engine.dispose()


# --- reconnecting after a long gap -------------------------------------------------------------


def test_a_phone_back_after_a_long_gap_catches_up_from_its_last_version(duel: Table) -> None:
    gm = duel.gm()
    phone = duel.alice()
    last = phone.emit("sync", {}, callback=True)["battle"]
    phone.disconnect()  # the phone leaves the Wi-Fi
    played = 0
    battle_id = duel.battle_id
    while played < 12 and duel.state["status"] != "ended":  # the table plays on without it
        assert choose(gm, duel, "monster", "attack")["ok"]
        alice_viewer = Viewer.player(duel.seat_a.public_id)
        duel.service.declare(duel.battle_id, alice_viewer, {"type": "choose", "combatant": "jharek", "option": "press"})
        played += 2
    current = duel.version
    assert current >= last["v"] + 2
    phone = duel.alice()  # back: the page syncs from the version it holds
    ack = phone.emit("sync", {"battle_id": battle_id, "since_v": last["v"]}, callback=True)
    battle = ack["battle"]
    assert battle["v"] == current and battle["since_v"] == last["v"]
    versions = sorted({e["v"] for e in battle["events"]})
    assert versions == list(range(last["v"] + 1, current + 1)), "every missed version, and only those"
    assert [(e["v"], e["i"]) for e in battle["events"]] == sorted((e["v"], e["i"]) for e in battle["events"])
    # the view is today's, the same as a fresh page would get
    fresh = duel.alice().emit("sync", {}, callback=True)["battle"]
    assert battle["view"] == fresh["view"]
    # and live updates continue from there without a gap
    if duel.state["status"] != "ended":
        phone.get_received()
        assert choose(gm, duel, "monster", "defend")["ok"]
        update = [m["args"][0] for m in phone.get_received() if m["name"] == "update"][-1]
        assert update["prev_v"] == current and update["v"] == current + 1


def test_a_sync_from_a_version_of_an_older_battle_starts_from_the_beginning(duel: Table) -> None:
    gm = duel.gm()
    old_battle, old_v = duel.battle_id, duel.version
    restarted = gm.emit("battle_restart", {}, callback=True)
    ack = duel.alice().emit("sync", {"battle_id": old_battle, "since_v": old_v}, callback=True)
    assert ack["battle"]["battle_id"] == restarted["battle_id"] and ack["battle"]["since_v"] == 0
    assert ack["battle"]["events"][0]["v"] == 1


# --- SIGKILL: an acknowledged declaration is durable -------------------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(instance: Path, port: int, log: Path, env: dict[str, str] | None = None) -> Forked | subprocess.Popen[bytes]:
    env = {**os.environ, "BATTLEBOARD_INSTANCE": str(instance), "BATTLEBOARD_SECRET_KEY": "faults", "PYTHONUNBUFFERED": "1", **(env or {})}
    for key in ("DATABASE_URL", "BATTLEBOARD_MESSAGE_QUEUE", "BATTLEBOARD_ASYNC_MODE"):
        env.pop(key, None)
    # (a fork of the tests' server helper, with the imports done once: tests/server_forks.py)
    proc = serve(["serve", "--host", "127.0.0.1", "--port", str(port), "--no-demo"], env=env, cwd=REPO, log=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(log.read_text()[-2000:]) from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start")


def _setup_duel(instance: Path) -> tuple[BattleService, Any, int]:
    service = BattleService(make_engine(f"sqlite:///{instance / 'battleboard.sqlite3'}"))
    from webapp.db import create_tables

    create_tables(service.engine)
    from tests.conftest import duel_lineup

    table = service.create_table("Kill test", "phantoms-bane")
    service.set_lineup(table.id, duel_lineup())
    battle_id = service.start_battle(table.id).battle_id
    return service, table, battle_id


def test_a_server_killed_mid_turn_keeps_every_acknowledged_declaration(tmp_path: Path) -> None:
    service, table, battle_id = _setup_duel(tmp_path)
    port = _free_port()
    server = _serve(tmp_path, port, tmp_path / "server.log")
    acked: list[tuple[int, str, int]] = []
    client = socketio_client.Client(reconnection=False)
    try:
        client.connect(f"http://127.0.0.1:{port}", auth={"table": table.slug, "token": table.gm_token}, transports=["websocket"], wait_timeout=10)
        stop = threading.Event()

        def play() -> None:
            current, version, n = battle_id, service.battle(battle_id).version, 0
            while not stop.is_set():
                n += 1
                who = "monster" if n % 2 else "jharek"
                msg_id = f"k{n}"
                try:
                    ack = client.call("declare", {"battle_id": current, "expected_v": version, "msg_id": msg_id,
                                                  "declaration": {"type": "choose", "combatant": who, "option": "defend"}}, timeout=5)
                except Exception:  # noqa: BLE001  (the server is gone)
                    return
                if ack.get("ok"):
                    acked.append((current, msg_id, ack["v"]))
                    version = ack["v"]
                elif "ended" in ack.get("error", ""):
                    try:
                        restarted = client.call("battle_restart", {}, timeout=5)
                    except Exception:  # noqa: BLE001
                        return
                    if restarted.get("ok"):
                        current, version = restarted["battle_id"], restarted["v"]
                elif ack.get("code") == "stale":
                    version = ack["v"]

        player = threading.Thread(target=play)
        player.start()
        deadline = time.monotonic() + 20
        while len(acked) < 25 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.send_signal(signal.SIGKILL)  # in the middle of the stream of declarations
        server.wait(10)
        stop.set()
        player.join(10)
    finally:
        if server.poll() is None:
            server.kill()
        client.disconnect()
    assert len(acked) >= 25, "the server should have acknowledged declarations before the kill"
    service.engine.dispose()
    with service.session() as s:
        for battle, msg_id, version in acked:
            row = s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle, BattleCommand.msg_id == msg_id)).first()
            assert row is not None and row.version == version, f"acknowledged {msg_id} (v{version}) was lost"
    last_battle, _, last_version = acked[-1]
    assert service.battle(last_battle).version >= last_version
    # a restarted server carries on from there
    port = _free_port()
    server = _serve(tmp_path, port, tmp_path / "server.log")
    try:
        client = socketio_client.Client(reconnection=False)
        client.connect(f"http://127.0.0.1:{port}", auth={"table": table.slug, "token": table.gm_token}, transports=["websocket"], wait_timeout=10)
        sync = client.call("sync", {"battle_id": last_battle, "since_v": last_version}, timeout=10)
        assert sync["ok"] and sync["battle"]["v"] >= last_version
        disconnect_now(client)
    finally:
        interrupt(server)
        service.engine.dispose()


def test_a_resend_after_a_lost_ack_is_answered_not_applied_twice(duel: Table) -> None:
    """The phone resends a declaration whose ack it never got (same msg_id): one copy in the log."""
    gm = duel.gm()
    first = choose(gm, duel, "monster", "press", msg_id="lost-ack-1")
    assert first["ok"]
    client = socketio.test_client(duel.app, auth={"table": duel.table.slug, "token": duel.table.gm_token})
    again = client.emit("declare", {"battle_id": duel.battle_id, "msg_id": "lost-ack-1",
                                    "declaration": {"type": "choose", "combatant": "monster", "option": "press"}}, callback=True)
    assert again == {"ok": True, "v": first["v"], "duplicate": True}
    with duel.service.session() as s:
        rows = s.exec(select(BattleCommand).where(BattleCommand.msg_id == "lost-ack-1")).all()
    assert len(rows) == 1


# --- a real network drop between a phone and a live server --------------------------------------


def _handshake(app: Any) -> dict[str, Any]:
    """The Engine.IO open packet a new browser connection gets (its ping settings)."""
    import json

    body = app.test_client().get("/socket.io/?EIO=4&transport=polling").get_data(as_text=True)
    assert body.startswith("0"), body
    return json.loads(body[1:])


def test_pings_notice_a_silent_phone_within_twenty_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """python-engineio's defaults (25 s between pings, 20 s to answer) left a vanished phone showing
    "live" for up to 45 s; the board pings every 10 s and waits 10 s, and both are configurable."""
    opened = _handshake(make_app(tmp_path / "default"))
    assert (opened["pingInterval"], opened["pingTimeout"]) == (10_000, 10_000)
    monkeypatch.setenv("BATTLEBOARD_PING_INTERVAL", "3")
    monkeypatch.setenv("BATTLEBOARD_PING_TIMEOUT", "4")
    opened = _handshake(make_app(tmp_path / "set"))
    assert (opened["pingInterval"], opened["pingTimeout"]) == (3_000, 4_000)
    for nonsense in ("soon", "0", "-3", "2.5", "99999"):  # whole seconds from 1 to 3600, or the default
        monkeypatch.setenv("BATTLEBOARD_PING_INTERVAL", nonsense)
        assert load_config().ping_interval == 10


#: pings as the silent drop's server sends them: a second apart, a second to answer
QUICK_PINGS = {"BATTLEBOARD_PING_INTERVAL": "1", "BATTLEBOARD_PING_TIMEOUT": "1"}


@pytest.mark.parametrize("drop", ["cut", "silence"])
def test_a_phone_cut_off_the_network_reconnects_and_catches_up(tmp_path: Path, drop: str) -> None:
    """``cut``: the connection closes. ``silence``: nothing gets through and nobody is told (out of
    the Wi-Fi's range); the unanswered pings tell both ends within the ping interval plus timeout."""
    from tests.conftest import duel_lineup

    service = BattleService(make_engine(f"sqlite:///{tmp_path / 'battleboard.sqlite3'}"))
    from webapp.db import create_tables

    create_tables(service.engine)
    table = service.create_table("Wi-Fi test", "phantoms-bane")
    _, seat = service.join(table.join_code, "Phone")
    service.set_lineup(table.id, duel_lineup(a={"controller": "seat", "seat": seat.public_id}))
    battle_id = service.start_battle(table.id, seed="wifi").battle_id
    port = _free_port()
    server = _serve(tmp_path, port, tmp_path / "server.log", QUICK_PINGS if drop == "silence" else None)
    proxy = FlakyLine(port)
    phone = socketio_client.Client(reconnection=True, reconnection_delay=0.2, reconnection_delay_max=0.5)
    gm = socketio_client.Client(reconnection=False)
    held = {"v": 0, "events": [], "connects": 0, "gaps": 0}
    lock = threading.Lock()

    def catch_up() -> None:  # what the page does on every (re)connect: sync from the version it holds
        ack = phone.call("sync", {"battle_id": battle_id, "since_v": held["v"]}, timeout=10)
        with lock:
            held["events"] += [(e["v"], e["i"]) for e in ack["battle"]["events"]]
            held["v"] = ack["battle"]["v"]

    def on_update(payload: dict[str, Any]) -> None:
        with lock:
            if payload["prev_v"] != held["v"]:
                held["gaps"] += 1  # the page would sync here
                return
            held["events"] += [(e["v"], e["i"]) for e in payload["events"]]
            held["v"] = payload["v"]

    def on_connect() -> None:
        held["connects"] += 1
        threading.Thread(target=catch_up, daemon=True).start()

    phone.on("connect", on_connect)
    phone.on("update", on_update)
    try:
        phone.connect(f"http://127.0.0.1:{proxy.port}", auth={"table": table.slug, "token": seat.token}, transports=["websocket"], wait_timeout=10)
        gm.connect(f"http://127.0.0.1:{port}", auth={"table": table.slug, "token": table.gm_token}, transports=["websocket"], wait_timeout=10)
        deadline = time.monotonic() + 10
        while held["v"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        before = held["v"]
        assert before >= 1
        dropped = time.monotonic()
        getattr(proxy, drop)()  # the phone drops off the Wi-Fi
        deadline = dropped + 10
        while phone.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not phone.connected, "the client notices it is offline (the page shows 'reconnecting')"
        noticed = time.monotonic() - dropped
        assert noticed < (1.0 if drop == "cut" else 1 + 1 + 1.5), f"noticed after {noticed:.1f} s"
        v = before
        for option in ("attack", "defend", "press"):  # the table plays on
            if service.battle(battle_id).status == "ended":
                break
            ack = gm.call("declare", {"battle_id": battle_id, "expected_v": v,
                                      "declaration": {"type": "choose", "combatant": "monster", "option": option}}, timeout=10)
            assert ack["ok"], ack
            v = ack["v"]
            service.declare(battle_id, Viewer.player(seat.public_id), {"type": "choose", "combatant": "jharek", "option": "attack"})
            v = service.battle(battle_id).version
        time.sleep(1.0)
        assert held["v"] == before, "nothing reaches the phone while it is away"
        proxy.restore()
        deadline = time.monotonic() + 15
        while held["v"] != v and time.monotonic() < deadline:
            time.sleep(0.05)
        assert held["connects"] >= 2, "the client reconnected by itself"
        assert held["v"] == v, "caught up to the current version"
        missed = [(ev_v, i) for ev_v, i in held["events"] if ev_v > before]
        assert sorted({ev_v for ev_v, _ in missed}) == list(range(before + 1, v + 1)), "every missed version arrived"
        assert len(missed) == len(set(missed)), "no event twice"
    finally:
        phone.disconnect()
        gm.disconnect()
        proxy.close()
        interrupt(server)
        service.engine.dispose()
