"""Olympia's army limit and step budget over the sockets: ``lineup_set`` refuses a side over the
maximum with a clear error and changes nothing; a step at the maximum answers after one phase."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rules.systems.olympia.data import MAX_MEN_PER_SIDE
from webapp.app import socketio


def noble(cid: str, side: str, **stats: Any) -> dict[str, Any]:
    return {"id": cid, "name": cid.capitalize(), "side": side, **stats}


SMALL = [noble("osswid", "A", knight=2), noble("brennan", "B", pikeman=2)]


class OlympiaTable:
    def __init__(self, app: Any, lineup: list[dict[str, Any]]) -> None:
        self.app = app
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Olympia table", "olympia")
        _, self.seat = self.service.join(self.table.join_code, "Alice")
        self.service.set_lineup(self.table.id, lineup)

    def client(self, token: str | None) -> Any:
        client = socketio.test_client(self.app, auth={"table": self.table.slug, "token": token}, flask_test_client=self.app.test_client())
        assert client.is_connected()
        return client

    def lineup(self) -> list[dict[str, Any]]:
        return self.service.table(table_id=self.table.id).lineup


@pytest.fixture
def olympia(app: Any) -> OlympiaTable:
    return OlympiaTable(app, SMALL)


def over_the_maximum() -> list[dict[str, Any]]:
    return [
        noble("osswid", "A", knight=2),
        noble("brennan", "B", soldier=MAX_MEN_PER_SIDE, behind=0),
        noble("vassal", "B", archer=1, behind=1),
    ]


def test_lineup_set_refuses_a_side_over_the_maximum_and_changes_nothing(olympia: OlympiaTable) -> None:
    gm, watcher = olympia.client(olympia.table.gm_token), olympia.client(None)
    before = olympia.lineup()
    gm.get_received()
    watcher.get_received()
    ack = gm.emit("lineup_set", {"lineup": over_the_maximum()}, callback=True)
    assert ack["ok"] is False
    assert f"side B has {MAX_MEN_PER_SIDE + 1:,} men; one side may bring at most {MAX_MEN_PER_SIDE:,}" in ack["error"]
    assert olympia.lineup() == before
    assert [m["name"] for m in watcher.get_received()] == []  # nobody was told of a change
    synced = gm.emit("sync", {}, callback=True)
    assert "1,000,001" not in json.dumps(synced) and str(MAX_MEN_PER_SIDE + 1) not in json.dumps(synced["table"])
    # exactly the maximum is accepted
    at_max = [noble("osswid", "A", knight=2), noble("brennan", "B", soldier=MAX_MEN_PER_SIDE)]
    ack = gm.emit("lineup_set", {"lineup": at_max}, callback=True)
    assert ack["ok"] is True and ack["lineup"][1]["soldier"] == MAX_MEN_PER_SIDE


def test_the_widest_form_lineup_is_refused(olympia: OlympiaTable) -> None:
    gm = olympia.client(olympia.table.gm_token)
    troops = {f["name"]: f["max"] for f in gm.emit("sync", {}, callback=True)["table"]["forms"]["combatant"] if f.get("group") == "Troops"}
    assert troops and max(troops.values()) <= MAX_MEN_PER_SIDE
    lineup = [noble(f"n{i}", "AB"[i % 2], **troops) for i in range(64)]
    ack = gm.emit("lineup_set", {"lineup": lineup}, callback=True)
    assert ack["ok"] is False and "side A has 736,000,000 men; one side may bring at most" in ack["error"]
    assert [c["name"] for c in olympia.lineup()] == ["Osswid", "Brennan"]


def test_only_the_gm_sets_the_lineup_and_bad_payloads_change_nothing(olympia: OlympiaTable) -> None:
    player, spectator = olympia.client(olympia.seat.token), olympia.client(None)
    for client in (player, spectator):
        ack = client.emit("lineup_set", {"lineup": SMALL[:1]}, callback=True)
        assert ack["ok"] is False
    gm = olympia.client(olympia.table.gm_token)
    for payload in ({"lineup": "many men"}, {"lineup": [noble("x", "A", soldier=-5)]}, {"lineup": [noble("x", "A", soldier="1e9")]}, {}):
        ack = gm.emit("lineup_set", payload, callback=True)
        assert ack["ok"] is False and ack["error"]
    assert [c["name"] for c in olympia.lineup()] == ["Osswid", "Brennan"]


def test_a_step_to_the_end_at_the_maximum_answers_after_one_phase(app: Any) -> None:
    half = MAX_MEN_PER_SIDE // 2
    table = OlympiaTable(app, [noble("osswid", "A", soldier=half, pikeman=half), noble("brennan", "B", soldier=half, light_foot=half)])
    gm = table.client(table.table.gm_token)
    started = gm.emit("battle_start", {}, callback=True)
    assert started["ok"], started
    v = started["v"]
    ack = gm.emit("declare", {"battle_id": started["battle_id"], "expected_v": v, "declaration": {"type": "begin"}}, callback=True)
    assert ack["ok"], ack
    gm.get_received()
    ack = gm.emit("declare", {"battle_id": started["battle_id"], "expected_v": ack["v"], "declaration": {"type": "step", "by": "battle"}}, callback=True)
    assert ack["ok"], ack
    update = [m["args"][0] for m in gm.get_received() if m["name"] == "update"][-1]
    text = json.dumps(update)
    assert "Step again to fight on." in text
    battle = table.service.battle(started["battle_id"])
    assert battle.state["status"] == "active" and battle.state["round"] == 2
