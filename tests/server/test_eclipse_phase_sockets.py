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


def test_a_called_shot_from_the_phone_names_its_aim_and_its_outcome_on_every_page(app: Any) -> None:
    t = EpTable(app)
    gm, alice, bob, spectator = (t.client(x) for x in (t.table.gm_token, t.alice_seat.token, t.bob_seat.token, None))
    if t.battle.state["active"] == "guard":
        assert t.declare(bob, {"type": "end_turn", "combatant": "guard"})["ok"]
    shot = {"type": "attack", "combatant": "jinx", "target": "guard", "weapon": 0}
    # the phone offers the aims, and disarm names what the guard holds
    legal = alice.emit("sync", {}, callback=True)["battle"]["view"]["legal"]
    builder = next(x for x in legal if x["type"] == "attack")
    assert next(o for o in builder["options"] if o["name"] == "called_shot")["choices"] == [
        ["none", "none"], ["armour", "bypass armour"], ["disarm", "disarm"], ["spot", "a named spot"]]
    assert next(x for x in builder["targets"] if x["id"] == "guard")["holds"] == "Compact submachine gun"
    # bad aims get a clear error and change nothing; nobody else declares Jinx's shot
    v = t.battle.version
    for bad in ({"called_shot": "kneecaps"}, {"called_shot": ["disarm"]}, {"called_shot": "spot"},
                {"called_shot": "spot", "called_spot": "x" * 31}, {"called_shot": "spot", "called_spot": 7}):
        ack = t.declare(alice, {**shot, **bad})
        assert not ack["ok"] and "called_s" in ack["error"], (bad, ack)
    for client in (bob, spectator):
        assert not t.declare(client, {**shot, "called_shot": "disarm"})["ok"]
    assert t.battle.version == v
    ack = t.declare(alice, {**shot, "called_shot": "disarm"})
    assert ack["ok"], ack
    for client in (gm, alice, bob, spectator):
        pending = client.emit("sync", {}, callback=True)["battle"]["view"]["pending"]
        assert pending["choices"]["called_shot"] == "disarm" and pending["called_label"] == "to disarm"
    assert t.declare(bob, {"type": "defend", "combatant": "guard", "method": "fray"})["ok"]
    for side, client in (("attacker", alice), ("defender", bob)):
        p = t.battle.state["pending"]
        if p is not None and not p["post"].get(side, {"accepted": True})["accepted"]:
            assert t.declare(client, {"type": "accept", "combatant": p[side]})["ok"]
    x = t.battle.state["last_exchange"]
    attack = x["attack"]
    came_off = x["result"] == "hit" and (attack["critical"] or attack["superior"] >= 1)
    assert x["called_shot"]["came_off"] is came_off
    assert bool(t.battle.state["combatants"]["guard"]["weapons"][0].get("dropped_at")) is came_off
    for client in (gm, alice, bob, spectator):
        battle = client.emit("sync", {}, callback=True)["battle"]
        assert battle["view"]["last_exchange"]["called_shot"] == x["called_shot"]
        said = [e["text"] for e in battle["events"] if x["called_shot"]["text"] in (e.get("text") or "")]
        assert said, "the log does not say whether the called shot came off"
