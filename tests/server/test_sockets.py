"""Every socket event through Flask-SocketIO's test client: roles, bad payloads, versions, projections."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rules.core import Viewer
from tests.conftest import Table, duel_lineup, make_app
from webapp import broadcast
from webapp.app import CLIENT_EVENTS, GM_EVENTS, socketio


def updates(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "update"]


def received_text(client: Any) -> str:
    return json.dumps(client.get_received())


def without_menus(messages: list[dict[str, Any]]) -> str:
    """The received messages as text, minus the menus of what the receiver itself may choose."""
    cleaned = []
    for message in messages:
        for arg in message["args"]:
            arg = json.loads(json.dumps(arg))
            for holder in (arg, arg.get("battle") or {}) if isinstance(arg, dict) else ():
                view = holder.get("view") if isinstance(holder, dict) else None
                if isinstance(view, dict):
                    view.pop("legal", None)
                    view.pop("options", None)
            cleaned.append(arg)
    return json.dumps(cleaned).lower().replace("defence", "")


def choose(client: Any, duel: Table, combatant: str, option: str, **extra: Any) -> dict[str, Any]:
    payload = {
        "battle_id": duel.battle_id,
        "expected_v": duel.version,
        "declaration": {"type": "choose", "combatant": combatant, "option": option},
        **extra,
    }
    return client.emit("declare", payload, callback=True)


# --- connecting ------------------------------------------------------------------------------


def test_connect_needs_a_table(app: Any) -> None:
    client = socketio.test_client(app, auth={})
    assert not client.is_connected()
    client = socketio.test_client(app, auth={"table": "no-such-table"})
    assert not client.is_connected()


def test_connect_with_a_wrong_key_is_refused(duel: Table) -> None:
    client = socketio.test_client(duel.app, auth={"table": duel.table.slug, "token": "not-a-real-token"})
    assert not client.is_connected()


def test_a_seat_token_of_another_table_is_refused(app: Any, duel: Table) -> None:
    other = Table(app)
    client = socketio.test_client(app, auth={"table": other.table.slug, "token": duel.seat_a.token})
    assert not client.is_connected()


def test_sync_gives_each_role_its_own_table_payload(duel: Table) -> None:
    gm, alice, spectator = duel.gm(), duel.alice(), duel.spectator()
    gm_sync = gm.emit("sync", {}, callback=True)
    assert gm_sync["ok"] and gm_sync["table"]["join_code"] == duel.table.join_code
    assert gm_sync["table"]["forms"]["combatant"], "the GM gets the stat form"
    assert gm_sync["battle"]["v"] == duel.version
    alice_sync = alice.emit("sync", {}, callback=True)
    assert alice_sync["table"]["seat"]["name"] == "Alice"
    for payload in (alice_sync, spectator.emit("sync", {}, callback=True)):
        text = json.dumps(payload)
        assert "join_code" not in payload["table"] and "gm_notes" not in text and duel.table.gm_token not in text
        assert "fixed-seed" not in text


def test_sync_since_a_version_sends_only_newer_events(duel: Table) -> None:
    gm = duel.gm()
    before = duel.version
    assert choose(gm, duel, "jharek", "attack")["ok"]
    ack = gm.emit("sync", {"battle_id": duel.battle_id, "since_v": before}, callback=True)
    assert ack["battle"]["since_v"] == before
    assert ack["battle"]["events"] and all(e["v"] > before for e in ack["battle"]["events"])


# --- declaring --------------------------------------------------------------------------------


def test_a_choice_stays_secret_until_both_have_chosen(duel: Table) -> None:
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    for c in (gm, alice, bob, spectator):
        c.get_received()
    ack = choose(alice, duel, "jharek", "defend")
    assert ack == {"ok": True, "v": duel.version, "duplicate": False}
    alice_update = updates(alice)[-1]
    assert alice_update["view"]["combatants"]["jharek"]["choice"] == "defend"
    for other in (bob, spectator):
        text = without_menus(other.get_received())
        assert "jharek has chosen" in text
        assert "defend" not in text, "the choice leaked before it was revealed"
    gm_messages = gm.get_received()
    gm_update = [m["args"][0] for m in gm_messages if m["name"] == "update"][-1]
    assert gm_update["view"]["combatants"]["jharek"]["has_chosen"] is True
    assert "defend" not in without_menus(gm_messages), "the GM's shared screen shows that, not what"
    # Bob sees that Alice has chosen, but not what.
    bob.emit("sync", {}, callback=True)
    view = bob.emit("sync", {}, callback=True)["battle"]["view"]
    assert view["combatants"]["jharek"]["has_chosen"] is True and "choice" not in view["combatants"]["jharek"]


def test_a_turn_resolves_when_both_have_chosen_and_everyone_sees_the_dice(duel: Table) -> None:
    alice, bob, spectator = duel.alice(), duel.bob(), duel.spectator()
    assert choose(alice, duel, "jharek", "attack")["ok"]
    spectator.get_received()
    assert choose(bob, duel, "monster", "press")["ok"]
    update = updates(spectator)[-1]
    assert update["prev_v"] == update["v"] - 1
    resolved = [e for e in update["events"] if e["type"] == "turn.resolved"]
    assert resolved and len(resolved[0]["rolls"]) >= 4
    view = update["view"]
    assert view["turn"] == 2 or view["status"] == "ended"
    assert view["last_turn"], "the last turn's breakdown is public once resolved"
    assert "press" in json.dumps(resolved).lower() or "Press" in json.dumps(update["view"]["last_turn"])


def test_a_player_cannot_act_for_another_seat(duel: Table) -> None:
    alice = duel.alice()
    before, state = duel.version, duel.state
    ack = choose(alice, duel, "monster", "attack")
    assert ack["ok"] is False and ack["code"] == "forbidden" and "your own seat" in ack["error"]
    assert duel.version == before and duel.state == state
    errors = [m for m in alice.get_received() if m["name"] == "error"]
    assert errors and errors[-1]["args"][0]["event"] == "declare"


def test_a_spectator_cannot_act(duel: Table) -> None:
    spectator = duel.spectator()
    before = duel.version
    ack = choose(spectator, duel, "jharek", "attack")
    assert ack["ok"] is False and ack["code"] == "forbidden"
    assert duel.version == before


BID = "<the battle id>"
GOOD = {"type": "choose", "combatant": "jharek", "option": "attack"}


@pytest.mark.parametrize(
    "payload, code",
    [
        ("not an object", "invalid"),
        ([1, 2, 3], "invalid"),
        ({}, "invalid"),
        ({"battle_id": "1", "declaration": GOOD}, "invalid"),
        ({"battle_id": True, "declaration": GOOD}, "invalid"),
        ({"battle_id": 99999, "declaration": GOOD}, "not_found"),
        ({"declaration": GOOD}, "invalid"),
        ({"battle_id": BID, "declaration": None}, "invalid"),
        ({"battle_id": BID, "declaration": "attack"}, "invalid"),
        ({"battle_id": BID, "declaration": {"type": 7}}, "invalid"),
        ({"battle_id": BID, "declaration": {"type": "choose", "combatant": "jharek", "option": "fly"}}, "invalid"),
        ({"battle_id": BID, "declaration": {"type": "choose", "combatant": "jharek"}}, "invalid"),
        ({"battle_id": BID, "declaration": {"type": "choose", "combatant": "nobody", "option": "attack"}}, None),
        ({"battle_id": BID, "declaration": {"type": "teleport", "combatant": "jharek"}}, None),
        ({"battle_id": BID, "declaration": GOOD, "expected_v": "x"}, "invalid"),
        ({"battle_id": BID, "declaration": GOOD, "expected_v": 10_000}, "stale"),
        ({"battle_id": BID, "declaration": GOOD, "msg_id": "<script>"}, "invalid"),
        ({"battle_id": BID, "declaration": {**GOOD, "pad": "x" * 70_000}}, "invalid"),
    ],
)
def test_malformed_declarations_get_a_clear_error_and_change_nothing(duel: Table, payload: Any, code: str | None) -> None:
    gm = duel.gm()
    if isinstance(payload, dict) and payload.get("battle_id") == BID:
        payload = {**payload, "battle_id": duel.battle_id}
    before, state = duel.version, duel.state
    ack = gm.emit("declare", payload, callback=True)
    assert ack["ok"] is False, ack
    assert isinstance(ack["error"], str) and len(ack["error"]) > 5
    if code:
        assert ack["code"] == code, ack
    assert duel.version == before and duel.state == state


def test_a_secret_choice_sent_at_the_same_moment_as_the_other_sides_is_applied(duel: Table) -> None:
    """Both sides choose on the same version; the second to land is not refused as out of date:
    the other side's secret choice left the board it was made on as it was."""
    gm, alice = duel.gm(), duel.alice()
    seen = duel.version
    assert choose(alice, duel, "jharek", "attack")["ok"]
    turn = duel.state["turn"]
    ack = gm.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": seen, "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}},
        callback=True,
    )
    assert ack["ok"] is True and ack["v"] == seen + 2 == duel.version
    assert duel.state["turn"] == turn + 1  # both choices were in: the turn resolved


def test_a_stale_version_is_refused(duel: Table) -> None:
    gm, alice = duel.gm(), duel.alice()
    old = duel.version
    assert choose(alice, duel, "jharek", "attack")["ok"]
    # a choice for the same combatant, made before its own choice landed
    ack = alice.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": old, "declaration": {"type": "choose", "combatant": "jharek", "option": "press"}},
        callback=True,
    )
    assert ack["ok"] is False and ack["code"] == "stale" and ack["v"] == duel.version
    assert duel.state["choices"]["jharek"] == "attack"
    # a GM command that is not a secret choice, made before the choice landed
    ack = gm.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": old, "declaration": {"type": "force_resolve"}},
        callback=True,
    )
    assert ack["ok"] is False and ack["code"] == "stale"
    assert duel.state["choices"]["monster"] is None and duel.version == old + 1
    # a secret choice behind a command that is not one: the GM sets the escape rule, then a stale choice
    moved = duel.version
    ack = gm.emit("declare", {"battle_id": duel.battle_id, "expected_v": moved, "declaration": {"type": "set_escape", "possible": False}},
                  callback=True)
    assert ack["ok"], ack
    ack = gm.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": moved, "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}},
        callback=True,
    )
    assert ack["ok"] is False and ack["code"] == "stale"
    assert duel.state["choices"]["monster"] is None


def test_a_resent_message_is_answered_but_not_applied_twice(duel: Table) -> None:
    alice = duel.alice()
    first = choose(alice, duel, "jharek", "attack", msg_id="m-1")
    assert first["ok"] and not first["duplicate"]
    again = alice.emit(
        "declare",
        {"battle_id": duel.battle_id, "declaration": {"type": "choose", "combatant": "jharek", "option": "press"}, "msg_id": "m-1"},
        callback=True,
    )
    assert again == {"ok": True, "v": first["v"], "duplicate": True}
    assert duel.state["choices"]["jharek"] == "attack" and duel.version == first["v"]


def test_a_battle_of_another_table_cannot_be_touched(app: Any, duel: Table) -> None:
    other = Table(app)
    gm = duel.gm()
    ack = gm.emit(
        "declare",
        {"battle_id": other.battle_id, "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}},
        callback=True,
    )
    assert ack["ok"] is False and ack["code"] == "forbidden"


# --- GM-only events ----------------------------------------------------------------------------


GM_PAYLOADS: dict[str, dict[str, Any]] = {
    "undo": {},
    "assign": {"combatant": "monster", "controller": "gm"},
    "battle_start": {"replace": True},
    "battle_restart": {},
    "battle_end": {},
    "lineup_set": {"lineup": []},
    "options_set": {"options": {}},
    "notes_set": {"notes": "secret plan"},
    "roster_save": {"name": "x"},
    "roster_load": {"roster_id": 1},
    "roster_delete": {"roster_id": 1},
    "board_set": {"blocked": []},
    "fog_set": {"all": True},
    "battle_share": {"shareable": True},
    "display_set": {"show_join": True},
    "display_pair": {"code": "ABCDEF"},
    "display_unpair": {"screen": 1},
    "dice_physical": {"combatant": "jharek", "physical": True},
    "survivors_save": {"name": "survivors"},
    "survivors_preview": {},
    "hide_combatant": {"combatant": "monster"},
    "reveal_combatant": {"combatant": "monster"},
}


def test_every_client_event_is_covered() -> None:
    assert set(GM_EVENTS) == set(GM_PAYLOADS)
    assert set(CLIENT_EVENTS) == set(GM_EVENTS) | {"sync", "declare", "odds", "entropy", "dice_enter", "roll", "roll_commit", "point"}


@pytest.mark.parametrize("event", sorted(GM_PAYLOADS))
@pytest.mark.parametrize("who", ["alice", "spectator"])
def test_gm_events_are_refused_to_players_and_spectators(duel: Table, event: str, who: str) -> None:
    client = getattr(duel, who)()
    before, state, table = duel.version, duel.state, duel.service.table(table_id=duel.table.id)
    ack = client.emit(event, {"battle_id": duel.battle_id, **GM_PAYLOADS[event]}, callback=True)
    assert ack["ok"] is False and ack["code"] == "forbidden", ack
    assert duel.version == before and duel.state == state
    after = duel.service.table(table_id=duel.table.id)
    assert (after.lineup, after.options, after.gm_notes, after.battle_id) == (table.lineup, table.options, table.gm_notes, table.battle_id)


@pytest.mark.parametrize("event", sorted(GM_PAYLOADS))
def test_gm_events_reject_non_object_payloads(duel: Table, event: str) -> None:
    gm = duel.gm()
    ack = gm.emit(event, "nonsense", callback=True)
    assert ack["ok"] is False and ack["code"] == "invalid"


def test_gm_notes_never_reach_players_or_spectators(duel: Table) -> None:
    gm, alice, spectator = duel.gm(), duel.alice(), duel.spectator()
    assert gm.emit("notes_set", {"notes": "the monster is a druid in disguise"}, callback=True)["ok"]
    assert gm.emit("sync", {}, callback=True)["table"]["gm_notes"] == "the monster is a druid in disguise"
    for client in (alice, spectator):
        client.emit("sync", {}, callback=True)
        assert "druid" not in received_text(client)
        assert "druid" not in json.dumps(client.emit("sync", {}, callback=True))


def test_lineup_set_validates_every_stat(duel: Table) -> None:
    gm = duel.gm()
    lineup = duel_lineup()
    lineup[0]["offence"] = 999
    ack = gm.emit("lineup_set", {"lineup": lineup}, callback=True)
    assert ack["ok"] is False and "Offence" in ack["error"] or "offence" in ack["error"].lower()
    lineup[0]["offence"] = 4
    lineup[1]["controller"] = "seat"
    lineup[1]["seat"] = "s-not-here"
    ack = gm.emit("lineup_set", {"lineup": lineup}, callback=True)
    assert ack["ok"] is False and "seat" in ack["error"]
    ack = gm.emit("lineup_set", {"lineup": duel_lineup()}, callback=True)
    assert ack["ok"] is True and [c["name"] for c in ack["lineup"]] == ["Jharek", "Wild Monster"]


def test_rosters_save_and_load(duel: Table) -> None:
    gm = duel.gm()
    saved = gm.emit("roster_save", {"name": "Jharek and the beast"}, callback=True)
    assert saved["ok"]
    assert gm.emit("lineup_set", {"lineup": []}, callback=True)["ok"]
    loaded = gm.emit("roster_load", {"roster_id": saved["roster_id"]}, callback=True)
    assert loaded["ok"] and [c["name"] for c in loaded["lineup"]] == ["Jharek", "Wild Monster"]
    assert all(c["controller"] != "seat" for c in loaded["lineup"]), "seats are not saved into rosters"
    table = gm.emit("sync", {}, callback=True)["table"]
    assert any(r["name"] == "Jharek and the beast" for r in table["rosters"])
    assert gm.emit("roster_delete", {"roster_id": saved["roster_id"]}, callback=True)["ok"]
    assert gm.emit("roster_load", {"roster_id": saved["roster_id"]}, callback=True)["code"] == "not_found"


def test_the_gm_sees_every_roster_of_the_system_newest_first_with_names_in_lineup_order(duel: Table) -> None:
    gm, service = duel.gm(), duel.service
    first = gm.emit("roster_save", {"name": "Old pair"}, callback=True)["roster_id"]
    assert gm.emit("lineup_set", {"lineup": list(reversed(duel_lineup()))}, callback=True)["ok"]
    second = gm.emit("roster_save", {"name": "New pair"}, callback=True)["roster_id"]
    listed = gm.emit("sync", {}, callback=True)["table"]["rosters"]
    assert listed == service.rosters("phantoms-bane", duel.table.library) == [
        {"id": second, "name": "New pair", "size": 2},  # names and sizes only: the lineup comes when loaded
        {"id": first, "name": "Old pair", "size": 2},
    ]
    assert service.rosters("olympia", duel.table.library) == []


def test_options_are_validated(duel: Table) -> None:
    gm = duel.gm()
    assert gm.emit("options_set", {"options": "x"}, callback=True)["ok"] is False
    ack = gm.emit("options_set", {"options": {}}, callback=True)
    assert ack["ok"]


def test_undo_takes_back_one_step_at_a_time_to_the_start(duel: Table) -> None:
    gm = duel.gm()
    start = duel.state
    assert choose(gm, duel, "jharek", "attack")["ok"]
    chosen = duel.state
    assert choose(gm, duel, "monster", "attack")["ok"]
    assert duel.state["turn"] == 2
    ack = gm.emit("undo", {"battle_id": duel.battle_id}, callback=True)
    assert ack["ok"]
    assert duel.state == chosen, "the last choice (and the turn it resolved) taken back, not the whole turn"
    assert gm.emit("undo", {"battle_id": duel.battle_id}, callback=True)["ok"]
    assert duel.state == start
    refused = gm.emit("undo", {"battle_id": duel.battle_id}, callback=True)
    assert refused["ok"] is False and "nothing to undo" in refused["error"]


def test_end_and_restart(duel: Table) -> None:
    gm, spectator = duel.gm(), duel.spectator()
    assert gm.emit("battle_end", {"battle_id": duel.battle_id}, callback=True)["ok"]
    assert duel.state["status"] == "ended"
    ack = choose(gm, duel, "jharek", "attack")
    assert ack["ok"] is False and "ended" in ack["error"]
    spectator.get_received()
    restarted = gm.emit("battle_restart", {}, callback=True)
    assert restarted["ok"] and restarted["battle_id"] != duel.battle_id
    tables = [m["args"][0] for m in spectator.get_received() if m["name"] == "table"]
    assert tables and tables[-1]["battle_id"] == restarted["battle_id"]


def test_battle_start_refuses_while_one_is_running(duel: Table) -> None:
    gm = duel.gm()
    ack = gm.emit("battle_start", {}, callback=True)
    assert ack["ok"] is False and "running" in ack["error"]


def test_assign_hands_a_combatant_to_the_computer(duel: Table) -> None:
    gm = duel.gm()
    assert gm.emit("assign", {"battle_id": duel.battle_id, "combatant": "monster", "controller": "computer"}, callback=True)["ok"]
    assert duel.state["combatants"]["monster"]["controller"] == "computer"
    assert duel.state["choices"]["monster"] is not None, "the computer chooses at once for a combatant it takes over"
    lineup = duel.service.table(table_id=duel.table.id).lineup
    assert [c["controller"] for c in lineup] == ["seat", "computer"]
    bad = gm.emit("assign", {"battle_id": duel.battle_id, "combatant": "monster", "controller": "seat", "seat": "nobody"}, callback=True)
    assert bad["ok"] is False


def test_a_whole_duel_against_the_computer_reaches_an_end(app: Any) -> None:
    duel = Table(app, foe_controller="computer")
    alice, spectator = duel.alice(), duel.spectator()
    for _ in range(60):
        if duel.state["status"] == "ended":
            break
        ack = choose(alice, duel, "jharek", "attack")
        assert ack["ok"], ack
    assert duel.state["status"] == "ended"
    spectator_text = json.dumps(spectator.emit("sync", {}, callback=True))
    assert "battle.ended" in spectator_text


def test_a_restart_of_the_server_keeps_the_fight_and_the_choice(tmp_path: Any) -> None:
    first = make_app(tmp_path)
    duel = Table(first)
    assert choose(duel.alice(), duel, "jharek", "press")["ok"]
    version = duel.version
    first.extensions["battleboard"].service.engine.dispose()

    second = make_app(tmp_path)
    client = socketio.test_client(second, auth={"table": duel.table.slug, "token": duel.seat_a.token})
    ack = client.emit("sync", {"battle_id": duel.battle_id, "since_v": 0}, callback=True)
    assert ack["battle"]["v"] == version
    assert ack["battle"]["view"]["combatants"]["jharek"]["choice"] == "press"
    bob = socketio.test_client(second, auth={"table": duel.table.slug, "token": duel.seat_b.token})
    ack = bob.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": version, "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}},
        callback=True,
    )
    assert ack["ok"]
    assert second.extensions["battleboard"].service.battle(duel.battle_id).state["turn"] == 2


def test_a_player_page_with_a_stale_seat_goes_back_to_joining(duel: Table) -> None:
    http = duel.app.test_client()
    with http.session_transaction() as session:
        session["seats"] = {duel.table.slug: "a-seat-key-from-an-older-database"}
    response = http.get(f"/t/{duel.table.slug}/play")
    assert response.status_code == 302 and response.headers["Location"].endswith("/join")
    with http.session_transaction() as session:
        assert duel.table.slug not in session.get("seats", {})
    with http.session_transaction() as session:
        session["seats"] = {duel.table.slug: duel.seat_a.token}
    assert http.get(f"/t/{duel.table.slug}/play").status_code == 200


def test_every_seat_gets_its_own_projection_and_idle_seats_share_one(duel: Table, monkeypatch: Any) -> None:
    """Seats that control nothing get the spectators' projection without it being computed again."""
    service = duel.service
    idle_seats = [service.join(duel.table.join_code, f"Watcher {k}")[1] for k in range(3)]
    hub = duel.app.extensions["battleboard"]
    hub.forget_seats(duel.table.id)
    alice, bob, spectator = duel.alice(), duel.bob(), duel.spectator()
    watchers = [duel.client(seat.token) for seat in idle_seats]
    for c in (alice, bob, spectator, *watchers):
        c.get_received()
    projected: list[str] = []
    real_project = service.project
    projecting = broadcast.project
    monkeypatch.setattr(broadcast, "project", lambda battle, viewer, *args, **kw: projected.append(viewer.role) or projecting(battle, viewer, *args, **kw))
    assert choose(alice, duel, "jharek", "defend")["ok"]
    assert projected.count("player") == 2, "the two fighting seats: no idle seat's projection is worked out again"
    battle = service.battle(duel.battle_id)
    seen = {"alice": updates(alice)[-1], "bob": updates(bob)[-1], "spectator": updates(spectator)[-1]}
    assert seen["alice"]["view"]["combatants"]["jharek"]["choice"] == "defend"
    assert "choice" not in seen["bob"]["view"]["combatants"]["jharek"]
    for watcher, seat in zip(watchers, idle_seats, strict=True):
        update = updates(watcher)[-1]
        own = real_project(battle, Viewer.player(seat.public_id), [])
        assert update["view"] == own["view"] == seen["spectator"]["view"]
        assert update["events"] == seen["spectator"]["events"]


def test_a_table_change_reads_the_seats_once_for_every_room(duel: Table, monkeypatch: Any) -> None:
    hub = duel.app.extensions["battleboard"]
    gm, alice = duel.gm(), duel.alice()
    alice.get_received()
    queries: list[int] = []
    real_seats = hub.service.seats
    monkeypatch.setattr(hub.service, "seats", lambda table_id: queries.append(table_id) or real_seats(table_id))
    assert gm.emit("options_set", {"options": {}}, callback=True)["ok"]
    assert queries == [duel.table.id], "the seats are read once for every room"
    monkeypatch.undo()
    tables = [m["args"][0] for m in alice.get_received() if m["name"] == "table"]
    assert len(tables) == 1 and tables[0] == alice.emit("sync", {}, callback=True)["table"]


def test_a_restart_sends_every_room_its_own_table_view(duel: Table, monkeypatch: Any) -> None:
    hub = duel.app.extensions["battleboard"]
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    for c in (gm, alice, bob, spectator):
        c.get_received()
    queries: list[int] = []
    real_seats, real_table = hub.service.seats, hub.service.table
    monkeypatch.setattr(hub.service, "seats", lambda table_id: queries.append(table_id) or real_seats(table_id))
    monkeypatch.setattr(hub.service, "table", lambda **kw: queries.append(kw) or real_table(**kw))
    assert gm.emit("battle_restart", {}, callback=True)["ok"]
    assert queries == [], "the restart passes the table and seats it read along: its broadcast reads neither"
    monkeypatch.undo()
    for client in (gm, alice, bob, spectator):
        tables = [m["args"][0] for m in client.get_received() if m["name"] == "table"]
        assert len(tables) == 1
        assert tables[0] == client.emit("sync", {}, callback=True)["table"]
    gm_view = gm.emit("sync", {}, callback=True)["table"]
    alice_view = alice.emit("sync", {}, callback=True)["table"]
    assert gm_view["role"] == "gm" and "join_code" in gm_view
    assert alice_view["seat"]["id"] == duel.seat_a.public_id and "join_code" not in alice_view


# --- one route for a table's changes ------------------------------------------------------------


def _table_event_payload(duel: Table, event: str) -> dict[str, Any]:
    """A payload with which ``event`` succeeds at the duel's table (made ready through the service)."""
    service, table_id = duel.service, duel.table.id
    if event in ("roster_load", "roster_delete"):
        return {"roster_id": service.save_roster(table_id, "Regulars").id}
    if event == "display_pair":
        return {"code": service.new_screen("TV").code}
    if event == "display_unpair":
        return {"screen": service.pair_screen(table_id, service.new_screen("TV").code).public_id}
    if event == "survivors_save":
        service.end_battle(duel.battle_id, Viewer.gm())
        return {"battle_id": duel.battle_id, "name": "Survivors"}
    return {
        "assign": {"battle_id": duel.battle_id, "combatant": "monster", "controller": "gm"},
        "battle_start": {"replace": True},
        "battle_restart": {},
        "lineup_set": {"lineup": service.table(table_id=table_id).lineup},
        "options_set": {"options": {}},
        "roster_save": {"name": "Regulars"},
        "display_set": {"show_join": True},
    }[event]


def test_the_events_that_change_a_table_are_declared_so() -> None:
    from webapp.sockets import TABLE_EVENTS

    assert TABLE_EVENTS == {"assign", "battle_start", "battle_restart", "lineup_set", "options_set", "roster_save", "roster_load",
                            "roster_delete", "board_set", "fog_set", "display_set", "display_pair", "display_unpair", "survivors_save"}


# board_set and fog_set need a grid system: tests/server/test_maps.py and test_fog.py send them to every viewer
@pytest.mark.parametrize("event", sorted(["assign", "battle_start", "battle_restart", "lineup_set", "options_set", "roster_save",
                                          "roster_load", "roster_delete", "display_set", "display_pair", "display_unpair",
                                          "survivors_save"]))
def test_a_table_change_sends_every_room_its_table_once(duel: Table, event: str) -> None:
    """Whichever event changed the table, every room gets its own view of it once, as its sync gives it."""
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    payload = _table_event_payload(duel, event)
    for client in (gm, alice, bob, spectator):
        client.get_received()
    before = gm.emit("sync", {}, callback=True)["table"]["revision"]
    gm.get_received()
    ack = gm.emit(event, payload, callback=True)
    assert ack["ok"], ack
    for client in (gm, alice, bob, spectator):
        tables = [m["args"][0] for m in client.get_received() if m["name"] == "table"]
        assert len(tables) == 1, (event, len(tables))
        assert tables[0] == client.emit("sync", {}, callback=True)["table"]
        # the sender's answer names the revision sent; it is no lower than before the change
        assert tables[0]["revision"] == ack["revision"] >= before, (event, before, ack["revision"])


def test_every_change_of_a_table_or_its_seats_raises_its_revision(duel: Table) -> None:
    """A page keeps the newest table payload by its revision (static/js/connection.js): a payload read
    before an edit (a sync answered late) is older than the edit's answer, so it is not drawn over it."""
    gm = duel.gm()
    stale = gm.emit("sync", {}, callback=True)["table"]
    first = gm.emit("lineup_set", {"lineup": duel_lineup()}, callback=True)
    second = gm.emit("options_set", {"options": {}}, callback=True)
    assert stale["revision"] < first["revision"] < second["revision"]
    duel.service.join(duel.table.join_code, "Carol")  # a seat joining changes the table's payload too
    after_join = gm.emit("sync", {}, callback=True)["table"]
    assert after_join["revision"] > second["revision"] and "Carol" in json.dumps(after_join["seats"])
    refused = gm.emit("lineup_set", {"lineup": "everyone"}, callback=True)
    assert refused["ok"] is False and "revision" not in refused
    assert gm.emit("sync", {}, callback=True)["table"]["revision"] == after_join["revision"]


def test_a_refused_table_change_sends_no_table(duel: Table) -> None:
    gm, alice = duel.gm(), duel.alice()
    for client in (gm, alice):
        client.get_received()
    assert not gm.emit("options_set", {"options": "all of them"}, callback=True)["ok"]
    assert not gm.emit("roster_load", {"roster_id": 999}, callback=True)["ok"]
    assert not alice.emit("lineup_set", {"lineup": []}, callback=True)["ok"]  # not the GM
    for client in (gm, alice):
        assert [m for m in client.get_received() if m["name"] == "table"] == []
