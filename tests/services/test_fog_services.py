"""Fog across two real server processes (gunicorn gevent) on PostgreSQL and Redis: the GM paints on
one, a player and the TV on the other get the fog with their table and never the square of what
stands in it; sight cleared on one process reaches the pages of the other."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import socketio

from rules import get_system
from webapp.db import make_engine
from webapp.service import BattleService

pytestmark = pytest.mark.services


class Sock:
    """A python-socketio client that records the updates and tables it receives."""

    def __init__(self, url: str, slug: str, token: str | None) -> None:
        self.got: dict[str, list[dict[str, Any]]] = {"update": [], "table": []}
        self.cond = threading.Condition()
        self.client = socketio.Client(reconnection=False)
        for name in self.got:
            self.client.on(name, lambda payload, name=name: self._on(name, payload))
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=10)

    def _on(self, name: str, payload: dict[str, Any]) -> None:
        with self.cond:
            self.got[name].append(payload)
            self.cond.notify_all()

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.call(event, payload, timeout=15)

    def wait(self, name: str, test: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = next((p for p in self.got[name] if test(p)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                assert left > 0, f"no {name} as wanted arrived (got {len(self.got[name])})"
                self.cond.wait(left)

    def close(self) -> None:
        self.client.disconnect()


def _foe(view: dict[str, Any]) -> dict[str, Any]:
    listed = view["combatants"]
    return next(c for c in (listed.values() if isinstance(listed, dict) else listed) if c["id"] == "foe")


def test_fog_painted_on_one_process_hides_what_stands_in_it_on_the_other(cluster: dict[str, Any]) -> None:
    a, b = cluster["servers"]
    service = BattleService(make_engine(cluster["database_url"]))
    table = service.create_table("Fog across processes", "battles-and-balances")
    _, alice_seat = service.join(table.join_code, "Alice")
    fields = {f.name: f.default for f in get_system("battles-and-balances").combatant_fields()}
    service.set_lineup(table.id, [
        {**fields, "id": "hero", "name": "Hero", "side": "A", "x": 2, "y": 3, "size": 8, "speed": 4, "controller": "seat", "seat": alice_seat.public_id},
        {**fields, "id": "foe", "name": "Foe", "side": "B", "x": 9, "y": 3, "size": 8, "speed": 4, "controller": "gm", "seat": None},
    ])
    battle_id = service.start_battle(table.id, seed="fog").battle_id
    gm = Sock(a.url, table.slug, table.gm_token)
    alice = Sock(b.url, table.slug, alice_seat.token)
    tv = Sock(b.url, table.slug, None)
    try:
        ack = gm.call("fog_set", {"rect": {"x0": 6, "y0": 0, "x1": 11, "y1": 7, "fog": True}})
        assert ack["ok"], ack
        for sock in (alice, tv):
            sock.wait("table", lambda t: [9, 3] in t["board"]["fog"])
        v = service.battle(battle_id).version
        ack = gm.call("declare", {"battle_id": battle_id, "expected_v": v, "declaration": {"type": "place", "combatant": "foe", "x": 8, "y": 6}})
        assert ack["ok"], ack
        assert (_foe(gm.wait("update", lambda u: u["v"] == v + 1)["view"])["x"]) == 8
        for sock in (alice, tv):
            update = sock.wait("update", lambda u: u["v"] == v + 1)
            assert _foe(update["view"])["x"] is None and _foe(update["view"])["unseen"] is True
            assert "column 9, row 7" not in str(update)
        # sight on, and the hero walks up: the fog cleared on process A reaches the pages on B
        assert gm.call("fog_set", {"sight": 3})["ok"]
        ack = gm.call("declare", {"battle_id": battle_id, "expected_v": v + 1, "declaration": {"type": "place", "combatant": "hero", "x": 5, "y": 6}})
        assert ack["ok"], ack
        for sock in (alice, tv):
            sock.wait("table", lambda t: [8, 6] not in t["board"]["fog"] and t["board"]["sight"] == 3)
            update = sock.wait("update", lambda u: u["v"] == v + 2)
            assert _foe(update["view"])["x"] == 8  # in sight now: the update went out under the new fog
    finally:
        for sock in (gm, alice, tv):
            sock.close()
        service.engine.dispose()
    assert not a.errors() and not b.errors()
