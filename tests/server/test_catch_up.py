"""No page left behind: the heartbeat tells each page where its battle and table stand in the
database, so a page that missed an update (the message queue down, a process killed between its
write and its broadcast) catches up with nobody doing anything."""

from __future__ import annotations

from typing import Any

from rules import Viewer
from tests.conftest import Table


def beats_of(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "heartbeat"]


def test_the_heartbeat_tells_each_page_the_version_and_table_it_missed(app: Any) -> None:
    duel = Table(app)
    service, hub = duel.service, app.extensions["battleboard"]
    gm, alice, spectator = duel.gm(), duel.alice(), duel.spectator()
    held = {}
    for name, client in (("gm", gm), ("alice", alice), ("spectator", spectator)):
        held[name] = client.emit("sync", {}, callback=True)
        client.get_received()
    v = duel.version
    # an update nobody got: the process that wrote it died before broadcasting
    broadcaster, service.broadcaster = service.broadcaster, None
    service.declare(duel.battle_id, Viewer.gm(), {"type": "choose", "combatant": "monster", "option": "attack"}, expected_v=v)
    # and a GM's secret after it, and a player who joined through another process
    service.declare(duel.battle_id, Viewer.gm(), {"type": "set_escape", "possible": False}, expected_v=v + 1)
    service.join(duel.table.join_code, "Carol")
    service.broadcaster = broadcaster
    hub.forget_seats(duel.table.id)
    assert hub.heartbeat() == 3  # the GM's, Alice's and the spectators' rooms
    [gm_beat], [alice_beat], [spectator_beat] = beats_of(gm), beats_of(alice), beats_of(spectator)
    assert gm_beat["battle_id"] == alice_beat["battle_id"] == duel.battle_id
    assert gm_beat["v"] == v + 2  # the GM's page holds v and syncs
    assert alice_beat["v"] == spectator_beat["v"] == v + 1  # the others were never told of the secret
    # every table payload changed (Carol's seat): each page's stamp differs from the one it holds
    for name, beat in (("gm", gm_beat), ("alice", alice_beat), ("spectator", spectator_beat)):
        assert beat["stamp"] != held[name]["table"]["stamp"], name
    synced = gm.emit("sync", {"battle_id": duel.battle_id, "since_v": v}, callback=True)
    assert synced["battle"]["v"] == v + 2 and synced["table"]["stamp"] == gm_beat["stamp"]
    assert "Carol" in [s["name"] for s in synced["table"]["seats"]]
    synced = spectator.emit("sync", {"battle_id": duel.battle_id, "since_v": v}, callback=True)
    assert synced["battle"]["v"] == v + 1 and synced["table"]["stamp"] == spectator_beat["stamp"]
    # once caught up, the next heartbeat says what the page holds: nothing to do
    hub.heartbeat()
    assert beats_of(spectator) == [{"battle_id": duel.battle_id, "v": v + 1, "stamp": spectator_beat["stamp"]}]


def test_a_table_broadcast_and_a_sync_give_the_same_stamp(app: Any) -> None:
    duel = Table(app)
    gm = duel.gm()
    assert gm.emit("options_set", {"options": {}}, callback=True)["ok"]
    [table] = [m["args"][0] for m in gm.get_received() if m["name"] == "table"]
    stamp = gm.emit("sync", {}, callback=True)["table"]["stamp"]
    assert table["stamp"] == stamp  # (every write raises the table's revision: the stamp is of the payload as sent)
    assert gm.emit("lineup_set", {"lineup": duel.service.table(table_id=duel.table.id).lineup[::-1]}, callback=True)["ok"]
    assert gm.emit("sync", {}, callback=True)["table"]["stamp"] != stamp
