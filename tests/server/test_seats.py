"""A phone's seat is its own (issue 33): the join link takes a seated phone back to its seat, a new
name from the same phone renames its seat rather than adding one, and the pages learn who plays
nothing yet; a sync tells the server's clock."""

from __future__ import annotations

import time
from typing import Any

from tests.conftest import Table, make_app
from webapp.service import seats_playing


def phone(duel: Table, seats: dict[str, str] | None = None) -> Any:
    http = duel.app.test_client()
    if seats is not None:
        with http.session_transaction() as session:
            session["seats"] = seats
    return http


def tables_received(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "table"]


def test_the_join_link_takes_a_seated_phone_back_to_its_seat(duel: Table) -> None:
    code, slug = duel.table.join_code, duel.table.slug
    seated = phone(duel, {slug: duel.seat_a.token})
    for url in (f"/j/{code}", f"/join?code={code}", f"/j/{code.lower()}"):
        response = seated.get(url)
        assert response.status_code == 302 and response.headers["Location"].endswith(f"/t/{slug}/play"), url
    # a phone with no seat there, a stale key, a seat at another table, a wrong code: the form
    other = duel.service.create_table("Elsewhere", "phantoms-bane")
    _, elsewhere = duel.service.join(other.join_code, "Alice")
    for seats in (None, {slug: "a-key-from-an-older-database"}, {other.slug: elsewhere.token}):
        page = phone(duel, seats).get(f"/j/{code}")
        assert page.status_code == 200 and 'data-testid="join-submit"' in page.get_data(as_text=True), seats
    wrong = seated.get("/j/ZZZZZZ")
    assert wrong.status_code == 200 and 'data-testid="join-submit"' in wrong.get_data(as_text=True)


def test_a_new_seat_for_the_same_phone_replaces_the_old_one(duel: Table) -> None:
    gm, alice = duel.gm(), duel.alice()
    tables_received(gm), tables_received(alice)
    seated = phone(duel, {duel.table.slug: duel.seat_a.token})
    response = seated.post("/join", data={"code": duel.table.join_code, "name": "Alicia"})
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/t/{duel.table.slug}/play")
    seats = duel.service.seats(duel.table.id)
    assert [(s.public_id, s.name) for s in seats] == [(duel.seat_a.public_id, "Alicia"), (duel.seat_b.public_id, "Bob")]
    with seated.session_transaction() as session:
        assert session["seats"][duel.table.slug] == duel.seat_a.token, "the phone keeps its seat's key"
    # the seat still plays its combatant, and every page hears the new name
    assert duel.state["combatants"]["jharek"]["seat"] == duel.seat_a.public_id
    assert [s["name"] for s in tables_received(gm)[-1]["seats"]] == ["Alicia", "Bob"]
    told = tables_received(alice)[-1]
    assert told["seat"] == {"id": duel.seat_a.public_id, "name": "Alicia"}
    assert told["seat_names"][duel.seat_a.public_id] == "Alicia"
    # the same name again changes nothing; a phone with no seat there takes a new one
    assert seated.post("/join", data={"code": duel.table.join_code, "name": "Alicia"}).status_code == 302
    assert len(duel.service.seats(duel.table.id)) == 2
    assert phone(duel).post("/join", data={"code": duel.table.join_code, "name": "Carol"}).status_code == 302
    assert [s.name for s in duel.service.seats(duel.table.id)] == ["Alicia", "Bob", "Carol"]


def test_a_seated_phone_renames_its_seat_at_a_full_table(tmp_path: Any) -> None:
    app = make_app(tmp_path, seats_per_table=2)
    duel = Table(app)
    seated = phone(duel, {duel.table.slug: duel.seat_b.token})
    assert seated.post("/join", data={"code": duel.table.join_code, "name": "Robert"}).status_code == 302
    assert [s.name for s in duel.service.seats(duel.table.id)] == ["Alice", "Robert"]
    full = phone(duel).post("/join", data={"code": duel.table.join_code, "name": "Carol"})
    assert full.status_code == 400 and "full" in full.get_data(as_text=True)
    app.extensions["battleboard"].service.engine.dispose()


def test_the_gm_learns_who_plays_nothing_and_a_player_whether_they_play(duel: Table) -> None:
    _, carol_seat = duel.service.join(duel.table.join_code, "Carol")
    gm, alice, carol, spectator = duel.gm(), duel.alice(), duel.client(carol_seat.token), duel.spectator()
    a, b, c = duel.seat_a.public_id, duel.seat_b.public_id, carol_seat.public_id
    sync = {"battle_id": duel.battle_id, "since_v": 0}
    assert gm.emit("sync", sync, callback=True)["battle"]["seats_playing"] == sorted([a, b])
    assert alice.emit("sync", sync, callback=True)["battle"]["yours"] == ["jharek"]
    carol_battle = carol.emit("sync", sync, callback=True)["battle"]
    assert "yours" not in carol_battle and "seats_playing" not in carol_battle
    spectator_battle = spectator.emit("sync", sync, callback=True)["battle"]
    assert "yours" not in spectator_battle and "seats_playing" not in spectator_battle
    for client in (gm, carol):
        client.get_received()
    ack = gm.emit("assign", {"battle_id": duel.battle_id, "expected_v": duel.version, "combatant": "monster",
                              "controller": "seat", "seat": c}, callback=True)
    assert ack["ok"], ack
    gm_update = [m["args"][0] for m in gm.get_received() if m["name"] == "update"][-1]
    assert gm_update["seats_playing"] == sorted([a, c])
    carol_update = [m["args"][0] for m in carol.get_received() if m["name"] == "update"][-1]
    assert carol_update["yours"] == ["monster"]


def test_seats_playing_reads_the_controllers() -> None:
    state = {"combatants": {"x": {"controller": "computer", "seat": None}, "y": {"controller": "seat", "seat": "s9"}}}
    assert seats_playing(state) == ["s9"]
    assert seats_playing({"combatants": {}}) == []


def test_a_sync_tells_the_servers_clock(duel: Table) -> None:
    alice = duel.alice()
    before = time.time()
    ack = alice.emit("sync", {"battle_id": duel.battle_id, "since_v": 0}, callback=True)
    after = time.time()
    assert ack["ok"] and before <= ack["server_now"] <= after
