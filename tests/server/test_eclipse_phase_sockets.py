"""Eclipse Phase over the sockets: the attacker/defender exchange with roles enforced.

Suggested home: tests/server/test_eclipse_phase_sockets.py (written by the Eclipse Phase engineer, kept out of
the repo because that folder belongs to the web layer).
"""

from __future__ import annotations

import json
from typing import Any

from rules import get_system
from tests.conftest import make_app  # noqa: F401  (the app fixture comes from tests/conftest.py)
from webapp.app import socketio


class EpTable:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Tunnel", "eclipse-phase")
        _, self.alice_seat = self.service.join(self.table.join_code, "Alice")
        _, self.bob_seat = self.service.join(self.table.join_code, "Bob")
        presets = {p["name"]: p for p in get_system("eclipse-phase").presets()}
        lineup = [
            {**presets["Jinx"], "id": "jinx", "side": "A", "controller": "seat", "seat": self.alice_seat.public_id,
             "x": 2, "y": 5},
            {**presets["Habitat guard"], "id": "guard", "side": "B", "controller": "seat",
             "seat": self.bob_seat.public_id, "x": 12, "y": 5},
        ]
        self.service.set_lineup(self.table.id, lineup)
        self.battle_id = self.service.start_battle(self.table.id, seed="fixed-seed").battle_id

    def client(self, token: str | None) -> Any:
        client = socketio.test_client(self.app, auth={"table": self.table.slug, "token": token},
                                      flask_test_client=self.app.test_client())
        assert client.is_connected()
        return client

    @property
    def battle(self) -> Any:
        return self.service.battle(self.battle_id)

    def declare(self, client: Any, declaration: dict[str, Any]) -> dict[str, Any]:
        return client.emit("declare", {"battle_id": self.battle_id, "expected_v": self.battle.version,
                                       "declaration": declaration}, callback=True)


def test_attacker_and_defender_exchange_with_roles(app: Any) -> None:
    t = EpTable(app)
    gm, alice, bob, spectator = (t.client(x) for x in (t.table.gm_token, t.alice_seat.token, t.bob_seat.token, None))
    if t.battle.state["active"] == "guard":
        assert t.declare(bob, {"type": "end_turn", "combatant": "guard"})["ok"]
    assert t.battle.state["active"] == "jinx"
    # Bob cannot attack for Jinx, a spectator cannot act at all
    assert not t.declare(bob, {"type": "attack", "combatant": "jinx", "target": "guard", "weapon": 0})["ok"]
    assert not t.declare(spectator, {"type": "attack", "combatant": "jinx", "target": "guard", "weapon": 0})["ok"]
    ack = t.declare(alice, {"type": "attack", "combatant": "jinx", "target": "guard", "weapon": 0})
    assert ack["ok"], ack
    pending = t.battle.state["pending"]
    assert pending["phase"] == "defence" and pending["target"] == 70 + 0  # 10 m: close range
    # only the defender's player (or the GM) may answer
    assert not t.declare(alice, {"type": "defend", "combatant": "guard", "method": "fray"})["ok"]
    spectator.get_received()
    ack = t.declare(bob, {"type": "defend", "combatant": "guard", "method": "fray"})
    assert ack["ok"], ack
    seen = json.dumps(spectator.get_received())
    assert "attack.rolled" in seen and '"durability"' not in seen
    # the GM answers for an absent player in the pool window
    for side, client in (("attacker", alice), ("defender", gm)):
        p = t.battle.state["pending"]
        if p is not None and not p["post"].get(side, {"accepted": True})["accepted"]:
            assert t.declare(client, {"type": "accept", "combatant": p[side]})["ok"]
    assert t.battle.state["pending"] is None
    assert t.battle.state["last_exchange"]["result"] in ("hit", "miss")
