"""The table display's page is public and its page gets exactly the spectator's projection."""

from __future__ import annotations

from typing import Any

from rules import Viewer, engine, get_system
from tests.conftest import duel_lineup
from webapp.app import socketio

NOTE = "GM-ONLY: the troll is the duke's brother zq-display-4410"


def test_the_display_page_is_public_and_keeps_the_gm_away(app: Any, service: Any) -> None:
    table = service.create_table("TV night", "phantoms-bane")
    service.set_notes(table.id, NOTE)
    web = app.test_client()  # no GM session, no seat
    for path in (f"/t/{table.slug}/display", f"/t/{table.slug}/display?layout=watch"):
        response = web.get(path)
        assert response.status_code == 200, path
        html = response.get_data(as_text=True)
        assert 'data-testid="table-display"' in html and 'data-testid="board"' in html
        assert table.gm_token not in html and NOTE not in html
        assert "script-src" in response.headers["Content-Security-Policy"]
        assert "<script>" not in html and " style=" not in html  # nothing inline under the strict CSP
    assert 'data-mode="watch"' in web.get(f"/t/{table.slug}/display?layout=watch").get_data(as_text=True)
    assert web.get("/t/no-such-table/display").status_code == 404


def test_the_display_connection_gets_only_the_spectator_projection(app: Any, service: Any) -> None:
    table = service.create_table("TV night", "phantoms-bane")
    service.set_lineup(table.id, duel_lineup())
    service.set_notes(table.id, NOTE)
    result = service.start_battle(table.id, seed="display-seed")
    # one side has chosen in secret: the display may know that it has, never what
    service.declare(result.battle_id, Viewer.gm(), {"type": "choose", "combatant": "jharek", "option": "defend"})

    client = socketio.test_client(app, auth={"table": table.slug, "token": None})  # as display.js connects
    assert client.is_connected()
    ack = client.emit("sync", {"battle_id": None, "since_v": 0}, callback=True)
    assert ack["ok"], ack
    assert ack["table"]["role"] == "spectator"
    for gm_only in ("gm_notes", "lineup", "join_code", "presets", "rosters", "forms"):
        assert gm_only not in ack["table"], gm_only

    battle = service.battle(result.battle_id)
    system = get_system("phantoms-bane")
    assert ack["battle"]["view"] == engine.project(system, battle.state, Viewer.spectator())
    view = ack["battle"]["view"]
    assert view["combatants"]["jharek"]["has_chosen"] is True
    assert "choice" not in view["combatants"]["jharek"]
    received = repr(ack) + repr(client.get_received())
    assert NOTE not in received and table.gm_token not in received and "display-seed" not in received
    assert "'defend'" not in received.replace("'defend': 'Defend'", "")

    # a declaration from the display is refused: it has only a spectator's rights
    refused = client.emit("declare", {"battle_id": result.battle_id, "expected_v": ack["battle"]["v"],
                                      "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}, "msg_id": "m1"}, callback=True)
    assert refused["ok"] is False
    client.disconnect()
