"""Two real server processes (gunicorn gevent) sharing PostgreSQL and Redis."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import socketio
from sqlmodel import func, select

from rules import Viewer, get_system
from webapp.db import make_engine
from webapp.models import BattleCommand, BattleEvent
from webapp.service import BattleService

pytestmark = pytest.mark.services


class Sock:
    """A python-socketio client that records every update it receives."""

    def __init__(self, url: str, slug: str, token: str | None) -> None:
        self.updates: list[dict[str, Any]] = []
        self.got = threading.Condition()
        self.client = socketio.Client(reconnection=False)
        self.client.on("update", self._on_update)
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=10)

    def _on_update(self, payload: dict[str, Any]) -> None:
        with self.got:
            self.updates.append(payload)
            self.got.notify_all()

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.call(event, payload, timeout=15)

    def wait_for_version(self, v: int, timeout: float = 10) -> dict[str, Any]:
        with self.got:
            ok = self.got.wait_for(lambda: any(u["v"] >= v for u in self.updates), timeout)
        assert ok, f"no update to version {v} arrived (got {[u['v'] for u in self.updates]})"
        return next(u for u in self.updates if u["v"] >= v)

    def close(self) -> None:
        self.client.disconnect()


def make_duel(database_url: str, *, monster: str = "gm") -> tuple[BattleService, Any, Any, int]:
    service = BattleService(make_engine(database_url))
    table = service.create_table("Cross-process duel", "phantoms-bane")
    _, alice = service.join(table.join_code, "Alice")
    presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
    lineup = [
        {**presets["Jharek"], "id": "jharek", "side": "A", "controller": "seat", "seat": alice.public_id},
        {**presets["Wild Monster"], "id": "monster", "side": "B", "controller": monster, "seat": None},
    ]
    service.set_lineup(table.id, lineup)
    battle_id = service.start_battle(table.id, seed="cross-process").battle_id
    return service, table, alice, battle_id


def test_a_gm_on_one_process_and_a_player_on_the_other_play_a_turn(cluster: dict[str, Any]) -> None:
    a, b = cluster["servers"]
    service, table, alice_seat, battle_id = make_duel(cluster["database_url"])
    gm = Sock(a.url, table.slug, table.gm_token)
    alice = Sock(b.url, table.slug, alice_seat.token)
    watcher = Sock(b.url, table.slug, None)
    try:
        v = service.battle(battle_id).version
        ack = gm.call("declare", {"battle_id": battle_id, "expected_v": v,
                                  "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}})
        assert ack["ok"], ack
        # the player on the other process hears that the monster has chosen, not what
        seen = alice.wait_for_version(v + 1)
        assert "choice" not in seen["view"]["combatants"]["monster"]
        ack = alice.call("declare", {"battle_id": battle_id, "expected_v": v + 1,
                                     "declaration": {"type": "choose", "combatant": "jharek", "option": "press"}})
        assert ack["ok"] and ack["v"] == v + 2, ack
        for sock in (gm, alice, watcher):
            update = sock.wait_for_version(v + 2)
            assert update["prev_v"] == v + 1
            assert any(e["type"] == "turn.resolved" for e in update["events"]), update["events"]
        final = service.battle(battle_id)
        assert final.version == v + 2 and (final.state["turn"] == 2 or final.status == "ended"), final.state
    finally:
        for sock in (gm, alice, watcher):
            sock.close()
        service.engine.dispose()
    assert not a.errors() and not b.errors()


def test_the_same_command_sent_to_both_processes_at_once_is_applied_exactly_once(cluster: dict[str, Any]) -> None:
    a, b = cluster["servers"]
    service, table, alice_seat, battle_id = make_duel(cluster["database_url"])
    gm_a = Sock(a.url, table.slug, table.gm_token)
    gm_b = Sock(b.url, table.slug, table.gm_token)
    alice = Viewer.player(alice_seat.public_id)
    outcomes: list[str] = []
    try:
        for attempt in range(6):
            if service.battle(battle_id).status == "ended":
                battle_id = service.start_battle(table.id).battle_id
            v = service.battle(battle_id).version
            msg_id = f"same-{attempt}"
            payload = {
                "battle_id": battle_id,
                "expected_v": v,
                "msg_id": msg_id,
                "declaration": {"type": "choose", "combatant": "monster", "option": "attack"},
            }
            barrier = threading.Barrier(2)
            acks: list[dict[str, Any]] = []

            def send(sock: Sock, payload: dict[str, Any] = payload, barrier: threading.Barrier = barrier, acks: list[Any] = acks) -> None:
                barrier.wait()
                acks.append(sock.call("declare", payload))

            threads = [threading.Thread(target=send, args=(sock,)) for sock in (gm_a, gm_b)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(20)
            assert len(acks) == 2, acks
            applied = [x for x in acks if x["ok"] and not x.get("duplicate")]
            others = [x for x in acks if not (x["ok"] and not x.get("duplicate"))]
            assert len(applied) == 1, acks
            outcomes.append(others[0].get("code") or "duplicate")
            assert len(others) == 1 and (others[0].get("duplicate") is True or others[0].get("code") == "stale"), acks
            after = service.battle(battle_id)
            assert after.version == v + 1, "the command must raise the version by exactly one"
            with service.session() as s:
                copies = s.exec(
                    select(func.count()).select_from(BattleCommand).where(BattleCommand.battle_id == battle_id, BattleCommand.msg_id == msg_id)
                ).one()
                indexes = s.exec(select(BattleEvent.index).where(BattleEvent.battle_id == battle_id, BattleEvent.version == v + 1)).all()
            assert copies == 1
            assert indexes and sorted(indexes) == list(range(len(indexes))), "the event log holds one copy"
            # the seat chooses too, so the turn resolves and the next attempt starts a fresh turn
            service.declare(battle_id, alice, {"type": "choose", "combatant": "jharek", "option": "defend"})
        print("the second copy was answered:", outcomes)
    finally:
        gm_a.close()
        gm_b.close()
        service.engine.dispose()
    assert not a.errors() and not b.errors()
