"""The GM's socket events for hidden combatants (webapp/hiding.py): roles, bad payloads, the table
payload's token looks, and the log (undo and the verifier keep a hide and a reveal).

(The generic role, payload and fuzz tests reach them too: webapp.app's ``CLIENT_EVENTS`` and
``GM_EVENTS``.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rules import get_system
from tests.server.test_leaks import LURKER, LURKER_NAME, Recorder, lineup_for
from webapp.export import export_battle
from webapp.verify import verify_document


def hidden_table(service: Any, system_id: str = "battles-and-balances") -> tuple[Any, Any, int]:
    table = service.create_table("Hiding", system_id)
    _, one = service.join(table.join_code, "One")
    _, two = service.join(table.join_code, "Two")
    lineup = lineup_for(get_system(system_id), [one.public_id, two.public_id])
    lineup[3].update(id=LURKER, name=LURKER_NAME, hidden=True)
    service.set_lineup(table.id, lineup)
    return table, one, service.start_battle(table.id, seed="hiding-seed").battle_id


@pytest.mark.parametrize("event", ["hide_combatant", "reveal_combatant"])
def test_only_the_gm_hides_or_reveals(app: Any, service: Any, event: str) -> None:
    table, one, battle_id = hidden_table(service)
    version = service.battle(battle_id).version
    for token in (one.token, None):
        client = Recorder(app, table.slug, token)
        ack = client.call(event, {"battle_id": battle_id, "combatant": LURKER if event == "reveal_combatant" else "c3"})
        assert not ack["ok"] and ack["code"] in ("not_permitted", "forbidden"), ack
    assert service.battle(battle_id).version == version


@pytest.mark.parametrize("payload", [{}, {"battle_id": "1"}, {"combatant": LURKER}, {"combatant": 7}, {"combatant": "nobody"},
                                     {"combatant": ["c3"]}, {"combatant": "c1"}])
def test_a_bad_payload_gets_a_clear_error_and_changes_nothing(app: Any, service: Any, payload: dict[str, Any]) -> None:
    table, _one, battle_id = hidden_table(service)
    gm = Recorder(app, table.slug, table.gm_token)
    version = service.battle(battle_id).version
    body = {"battle_id": battle_id, **payload} if "battle_id" not in payload and payload else payload
    ack = gm.call("hide_combatant", body)  # (c1 is a player's: it cannot be hidden; the lurker already is)
    assert not ack["ok"] and ack["error"] and ack.get("code") != "server_error", ack
    assert service.battle(battle_id).version == version


def test_hide_and_reveal_are_logged_undone_and_verified(app: Any, service: Any) -> None:
    table, one, battle_id = hidden_table(service)
    gm, player = Recorder(app, table.slug, table.gm_token), Recorder(app, table.slug, one.token)
    player.sync()
    assert gm.call("hide_combatant", {"battle_id": battle_id, "combatant": "c3"})["ok"]
    assert "c3" in service.table(table_id=table.id).board["hidden"]["ids"]
    player.drain()
    assert "c3" not in [f["id"] for f in player.battle["view"]["fighters"]]
    assert gm.call("reveal_combatant", {"battle_id": battle_id, "combatant": LURKER})["ok"]
    player.drain()
    assert LURKER in [f["id"] for f in player.battle["view"]["fighters"]]
    # undo takes the reveal back: it is hidden again for the player
    assert gm.call("undo", {"battle_id": battle_id})["ok"]
    player.drain()
    assert LURKER not in [f["id"] for f in player.battle["view"]["fighters"]]
    assert service.table(table_id=table.id).board["hidden"]["ids"] == ["c3", LURKER]
    player.drain()
    assert LURKER not in json.dumps([m for m in player.transcript if "ack" not in m and m["name"] == "table"][-1])
    assert gm.call("battle_end", {"battle_id": battle_id})["ok"]
    verdict = verify_document(export_battle(service, battle_id))
    assert verdict.ok, verdict.message
