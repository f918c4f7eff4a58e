"""Eclipse Phase's first initiative with real dice over the socket: the battle starts with initiative due,
the GM starts the action turn, each phone types its d6, and replay, export verification and undo agree."""

from __future__ import annotations

from typing import Any

import pytest

from rules import get_system
from rules.physical import pending
from tests.conftest import make_app  # noqa: F401  (the app fixture comes from tests/conftest.py)
from webapp.app import socketio


class EpTable:
    """Alice plays Jinx (initiative 9), Bob the habitat guard (initiative 7, or the GM's or computer's)."""

    def __init__(self, app: Any, who_rolls: str, guard: str = "seat") -> None:
        self.app = app
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Tunnel", "eclipse-phase")
        _, self.alice_seat = self.service.join(self.table.join_code, "Alice")
        _, self.bob_seat = self.service.join(self.table.join_code, "Bob")
        presets = {p["name"]: p for p in get_system("eclipse-phase").presets()}
        self.service.set_lineup(self.table.id, [
            {**presets["Jinx"], "id": "jinx", "side": "A", "controller": "seat", "seat": self.alice_seat.public_id,
             "x": 2, "y": 5},
            {**presets["Habitat guard"], "id": "guard", "side": "B", "controller": guard,
             "seat": self.bob_seat.public_id if guard == "seat" else None, "x": 12, "y": 5},
        ])
        self.service.set_options(self.table.id, {"who_rolls": who_rolls})
        self.battle_id = self.service.start_battle(self.table.id, seed="fixed-seed").battle_id

    def client(self, token: str | None) -> Any:
        client = socketio.test_client(self.app, auth={"table": self.table.slug, "token": token},
                                      flask_test_client=self.app.test_client())
        assert client.is_connected()
        return client

    @property
    def state(self) -> dict[str, Any]:
        return self.service.battle(self.battle_id).state

    @property
    def version(self) -> int:
        return self.service.battle(self.battle_id).version

    def declare(self, client: Any, declaration: dict[str, Any]) -> dict[str, Any]:
        return client.emit("declare", {"battle_id": self.battle_id, "expected_v": self.version,
                                       "declaration": declaration}, callback=True)

    def enter(self, client: Any, **payload: Any) -> dict[str, Any]:
        return client.emit("dice_enter", {"battle_id": self.battle_id, **payload}, callback=True)

    def view(self, client: Any) -> dict[str, Any]:
        return client.emit("sync", {"battle_id": self.battle_id, "since_v": 0}, callback=True)["battle"]["view"]


def test_board_rolling_battles_start_with_the_first_action_turn_under_way(app: Any) -> None:
    t = EpTable(app, "board")
    assert t.state["round"] == 1 and t.state["active"] in ("jinx", "guard") and "initiative_due" not in t.state


def test_the_first_initiative_typed_on_two_phones(app: Any) -> None:
    t = EpTable(app, "players")
    gm, alice, bob, spectator = (t.client(x) for x in (t.table.gm_token, t.alice_seat.token, t.bob_seat.token, None))
    assert t.state["initiative_due"] is True and t.state["round"] == 0 and t.version == 1
    for client in (alice, spectator):
        view = t.view(client)
        assert view["initiative_due"]["text"] == "Roll initiative to begin" and view["legal"] == []
    assert {"type": "roll_initiative", "label": "Roll initiative"} in t.view(gm)["legal"]
    # a player neither starts the action turn nor acts before it
    ack = t.declare(alice, {"type": "roll_initiative", "combatant": "jinx"})
    assert ack["ok"] is False and ack["code"] == "forbidden", ack
    ack = t.declare(alice, {"type": "end_turn", "combatant": "jinx"})
    assert ack["ok"] is False and "not Jinx's turn" in ack["error"]
    ack = t.enter(alice, faces=[3])
    assert ack["ok"] is False and "no roll is due" in ack["error"]
    assert t.version == 1
    # the GM starts it: Alice's phone asks for Jinx's d6
    assert t.declare(gm, {"type": "roll_initiative"})["ok"]
    due = t.view(alice)["physical"]["due"]
    assert due["mine"] and due["prompt"] == "Roll 1d6 for Jinx initiative"
    assert t.view(bob)["physical"]["due"]["mine"] is False
    for payload, message in (({"faces": [7]}, "a d6 shows 1 to 6, not 7"), ({"faces": [1, 2]}, "needs 1 face, not 2")):
        ack = t.enter(alice, **payload)
        assert ack["ok"] is False and message in ack["error"]
    assert t.enter(bob, faces=[6])["code"] == "forbidden"
    ack = t.declare(gm, {"type": "roll_initiative"})
    assert ack["ok"] is False and "waits for dice" in ack["error"]
    assert t.enter(alice, faces=[1])["ok"]
    assert pending(t.state)["need"]["purpose"] == "Habitat guard initiative"
    assert t.enter(bob, faces=[6])["ok"]
    # 7 + 6 beats 9 + 1: the typed faces put the guard first
    state = t.state
    assert pending(state) is None and "initiative_due" not in state
    assert state["round"] == 1 and state["order"] == ["guard", "jinx"] and state["active"] == "guard"
    started = next(e for e in t.service.events_since(t.battle_id, 1) if e["type"] == "round.started")
    assert [(r["faces"], r["entered_by"]) for r in started["rolls"]] == [
        ([1], f"seat:{t.alice_seat.public_id}"), ([6], f"seat:{t.bob_seat.public_id}")]
    assert started["text"].endswith("(real dice)")
    assert "initiative_due" not in t.view(gm)

    from webapp.export import export_battle
    from webapp.replay import replay_battle
    from webapp.verify import verify_document

    report = replay_battle(t.service, t.battle_id)
    assert report.ok, report.mismatches
    # undo takes back one step: the last die typed (the battle waits for it again, the first one kept),
    # then the first, then the GM's roll for initiative
    assert gm.emit("undo", {"battle_id": t.battle_id}, callback=True)["ok"]
    waiting = pending(t.state)
    assert waiting["need"]["purpose"] == "Habitat guard initiative" and [e["faces"] for e in waiting["entries"]] == [[1]]
    assert gm.emit("undo", {"battle_id": t.battle_id}, callback=True)["ok"]
    assert pending(t.state)["need"]["purpose"] == "Jinx initiative" and pending(t.state)["entries"] == []
    assert gm.emit("undo", {"battle_id": t.battle_id}, callback=True)["ok"]
    assert t.state["initiative_due"] is True and pending(t.state) is None and t.state["round"] == 0
    assert t.declare(gm, {"type": "roll_initiative"})["ok"]
    assert t.enter(alice, faces=[6])["ok"] and t.enter(gm, board=True)["ok"]
    assert pending(t.state) is None and t.state["round"] == 1
    assert replay_battle(t.service, t.battle_id).ok
    # the exported file checks out once the battle's end reveals its seed
    assert gm.emit("battle_end", {"battle_id": t.battle_id}, callback=True)["ok"]
    verdict = verify_document(export_battle(t.service, t.battle_id))
    assert verdict.ok, verdict


@pytest.mark.parametrize("guard", ["gm", "computer"])
def test_players_type_and_the_board_rolls_the_gms_guard(app: Any, guard: str) -> None:
    t = EpTable(app, "players", guard=guard)
    gm, alice = t.client(t.table.gm_token), t.client(t.alice_seat.token)
    assert t.view(gm)["initiative_due"]["rollers"] == ["Jinx"]
    assert t.declare(gm, {"type": "roll_initiative"})["ok"]
    assert t.enter(alice, faces=[1])["ok"]
    state = t.state
    assert pending(state) is None and state["round"] == 1 and len(state["order"]) == 2
    started = next(e for e in t.service.events_since(t.battle_id, 1) if e["type"] == "round.started")
    assert [r.get("physical", False) for r in started["rolls"]] == [True, False]
    assert state["order"] == ["guard", "jinx"]  # the fixed seed's board d6 for the guard: 7 + 5 against 9 + 1
    if guard == "computer":
        # the computer did not stall: it shot at once, and Jinx is asked to defend
        assert state["pending"]["attacker"] == "guard" and state["pending"]["phase"] == "defence"
        assert any(d["type"] == "defend" for d in t.view(alice)["legal"])
    assert replay_battle_ok(t)


def test_everyone_rolls_and_the_gm_types_the_guards_d6(app: Any) -> None:
    t = EpTable(app, "all", guard="gm")
    gm, alice = t.client(t.table.gm_token), t.client(t.alice_seat.token)
    assert t.declare(gm, {"type": "roll_initiative"})["ok"]
    assert t.enter(alice, faces=[5])["ok"]
    assert pending(t.state)["need"]["seats"] == []
    assert t.enter(alice, faces=[2])["code"] == "forbidden"
    assert t.enter(gm, faces=[2])["ok"]
    assert t.state["order"] == ["jinx", "guard"]  # 9 + 5 against 7 + 2
    assert replay_battle_ok(t)


def replay_battle_ok(t: EpTable) -> bool:
    from webapp.replay import replay_battle

    report = replay_battle(t.service, t.battle_id)
    assert report.ok, report.mismatches
    return True
