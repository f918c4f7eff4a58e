"""The pointer and the dice roller across two server processes (gunicorn gevent, PostgreSQL, Redis): a
point made on one process rings on a page of the other, and a roll, in a battle or between battles,
reaches the pages of both."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import socketio

from rules import Viewer
from tests.services.test_cross_process import make_duel

pytestmark = pytest.mark.services


class Listener:
    """A page of the table that keeps every message of the names it listens to."""

    def __init__(self, url: str, slug: str, token: str | None, names: tuple[str, ...]) -> None:
        self.got: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        self.cond = threading.Condition()
        self.client = socketio.Client(reconnection=False)
        for name in names:
            self.client.on(name, lambda payload, name=name: self._keep(name, payload))
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=10)

    def _keep(self, name: str, payload: dict[str, Any]) -> None:
        with self.cond:
            self.got[name].append(payload)
            self.cond.notify_all()

    def wait(self, name: str, test: Any, timeout: float = 10) -> dict[str, Any]:
        with self.cond:
            ok = self.cond.wait_for(lambda: any(test(m) for m in self.got[name]), timeout)
        assert ok, f"no {name} arrived as expected (got {self.got[name]})"
        return next(m for m in self.got[name] if test(m))

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.call(event, payload, timeout=15)

    def close(self) -> None:
        self.client.disconnect()


def test_a_point_and_rolls_cross_processes(cluster: dict[str, Any]) -> None:
    a, b = cluster["servers"]
    service, table, alice_seat, battle_id = make_duel(cluster["database_url"])
    names = ("pointer", "update", "table_roll")
    tv = Listener(a.url, table.slug, None, names)
    alice = Listener(b.url, table.slug, alice_seat.token, names)
    gm = Listener(a.url, table.slug, table.gm_token, names)
    try:
        assert alice.call("point", {"combatant": "monster"})["ok"]
        ring = tv.wait("pointer", lambda m: m.get("combatant") == "monster")
        assert ring["name"] == "Alice"
        ack = alice.call("roll", {"notation": "2d6+3", "label": "perception check"})
        assert ack["ok"], ack
        tv.wait("update", lambda u: any(e["type"] == "dice.rolled" and e["text"] == ack["text"] for e in u["events"]))
        secret = gm.call("roll", {"notation": "d100", "label": "crypt", "secret": True})
        assert secret["ok"], secret
        seen = alice.wait("update", lambda u: any(e["type"] == "dice.rolled" and "secret" in e["text"] for e in u["events"]))
        assert "crypt" not in str(seen)
        # between battles: the table's own dice, the roll on one process, the TV on the other
        service.end_battle(battle_id, Viewer.gm())
        commit = alice.call("roll_commit", {})
        made = alice.call("roll", {"notation": "4d6kh3", "commit_id": commit["commit_id"]})
        assert made["ok"], made
        tv.wait("table_roll", lambda m: m.get("text") == made["text"] and m.get("commitment") == commit["commitment"])
    finally:
        for page in (tv, alice, gm):
            page.close()
        service.engine.dispose()
    assert not a.errors() and not b.errors()
