"""The table display's data and pairing a TV: ``seat_names``, ``display``, ``join`` in the table
payload, the public join QR, the GM-only ``display_set`` / ``display_pair`` / ``display_unpair``, and
the pairing pages (``/screen``, ``/screen/status``, ``/pair/<code>``): expiry, rate limits, wrong
roles, bad codes, unpairing."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import inspect, text
from sqlmodel import select

from tests.conftest import Table, make_app
from webapp.app import socketio
from webapp.db import create_tables, make_engine
from webapp.models import DisplayScreen
from webapp.service import PAIRING_ALPHABET, PAIRING_CODE_LENGTH, utcnow


def tables_received(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "table"]


def screen_code(browser: Any) -> str:
    page = browser.get("/screen")
    assert page.status_code == 200
    found = re.search(r'data-testid="pairing-code" data-code="([A-Z0-9]+)"', page.get_data(as_text=True))
    assert found, "the pairing screen shows its code"
    return found.group(1)


def gm_browser(duel: Table) -> Any:
    """A browser that opened the GM link (it holds the GM key in its session)."""
    browser = duel.app.test_client()
    assert browser.get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}").status_code == 302
    return browser


def gm_socket(duel: Table, browser: Any | None = None) -> Any:
    client = socketio.test_client(
        duel.app, auth={"table": duel.table.slug, "token": duel.table.gm_token}, flask_test_client=browser or duel.app.test_client()
    )
    assert client.is_connected()
    return client


# --- the table payload: seat names, display settings, the join corner -------------------------


def test_every_viewer_gets_seat_names_and_display_settings(duel: Table) -> None:
    for client in (duel.gm(), duel.alice(), duel.spectator()):
        table = client.emit("sync", {}, callback=True)["table"]
        assert table["seat_names"] == {duel.seat_a.public_id: "Alice", duel.seat_b.public_id: "Bob"}
        assert table["display"] == {"show_join": False, "show_odds": False, "show_chances": False, "phones_chances": False}


def test_the_join_corner_shows_before_the_battle_and_when_the_gm_switches_it_on(app: Any) -> None:
    waiting = Table(app, start=False)
    spectator, alice, gm = waiting.spectator(), waiting.alice(), waiting.gm()
    code = waiting.table.join_code
    for client in (spectator, alice, gm):
        join = client.emit("sync", {}, callback=True)["table"]["join"]
        assert join["code"] == code and join["url"].endswith(f"/j/{code}") and join["qr"] == f"/t/{waiting.table.slug}/qr.svg?code={code}"
    browser = app.test_client()  # no GM key: the QR is public while the corner shows
    assert browser.get(f"/t/{waiting.table.slug}/qr.svg").status_code == 200

    battle = waiting.service.start_battle(waiting.table.id)
    waiting.battle_id = battle.battle_id
    text_seen = json.dumps(tables_received(spectator) + [spectator.emit("sync", {}, callback=True)])
    assert code not in text_seen, "a running battle hides the join code from everyone but the GM"
    assert alice.emit("sync", {}, callback=True)["table"]["join"] is None
    assert browser.get(f"/t/{waiting.table.slug}/qr.svg").status_code == 403
    gm_sync = gm.emit("sync", {}, callback=True)["table"]
    assert gm_sync["join_code"] == code and gm_sync["join"] is None
    gm.get_received(), spectator.get_received()

    ack = gm.emit("display_set", {"show_join": True}, callback=True)
    assert ack == {"ok": True, "display": {"show_join": True, "show_odds": False, "show_chances": False, "phones_chances": False},
                   "revision": ack["revision"]}
    broadcast = tables_received(spectator)
    assert broadcast and broadcast[-1]["join"]["code"] == code and broadcast[-1]["display"]["show_join"] is True
    assert browser.get(f"/t/{waiting.table.slug}/qr.svg").status_code == 200
    assert gm.emit("display_set", {"show_join": False, "show_odds": True}, callback=True)["display"] == {"show_join": False, "show_odds": True, "show_chances": False, "phones_chances": False}
    assert tables_received(spectator)[-1]["join"] is None
    assert browser.get(f"/t/{waiting.table.slug}/qr.svg").status_code == 403
    assert gm_browser(waiting).get(f"/t/{waiting.table.slug}/qr.svg").status_code == 200, "the GM always gets the QR"


def test_display_set_is_the_gms_only(duel: Table) -> None:
    for client in (duel.alice(), duel.spectator()):
        ack = client.emit("display_set", {"show_join": True}, callback=True)
        assert ack["ok"] is False and ack["code"] == "forbidden"
    assert duel.service.table(table_id=duel.table.id).display is None


@pytest.mark.parametrize(
    "payload",
    [{}, {"show_join": "yes"}, {"show_join": 1}, {"show_join": None}, {"colour": True}, {"show_join": True, "extra": 1}, [True], "show_join"],
)
def test_display_set_refuses_bad_payloads(duel: Table, payload: Any) -> None:
    gm = duel.gm()
    ack = gm.emit("display_set", payload, callback=True)
    assert ack["ok"] is False and ack["code"] == "invalid" and ack["error"]
    assert duel.service.table(table_id=duel.table.id).display is None


def test_an_old_database_gets_the_display_column(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    create_tables(engine)
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE game_table DROP COLUMN display"))
        conn.execute(text("DROP TABLE alembic_version"))  # and from before the migrations
    assert "display" not in {c["name"] for c in inspect(engine).get_columns("game_table")}
    create_tables(engine)
    assert "display" in {c["name"] for c in inspect(engine).get_columns("game_table")}
    engine.dispose()


# --- pairing a screen --------------------------------------------------------------------------


def test_a_screen_is_paired_by_code_shows_the_display_and_goes_back_when_unpaired(duel: Table) -> None:
    tv = duel.app.test_client()
    code = screen_code(tv)
    assert len(code) == PAIRING_CODE_LENGTH and set(code) <= set(PAIRING_ALPHABET)
    assert tv.get("/screen/status").get_json() == {"state": "waiting", "code": code}
    assert screen_code(tv) == code, "a reload keeps the code while it is good"

    gm = gm_socket(duel)
    typed = f" {code[:3].lower()} - {code[3:]} "  # as a GM types it on a TV remote's keyboard
    ack = gm.emit("display_pair", {"code": typed}, callback=True)
    assert ack["ok"] is True and ack["screen"]["label"] and ack["screen"]["id"].startswith("d")
    screen_id = ack["screen"]["id"]
    assert tv.get("/screen/status").get_json() == {"state": "paired", "table": duel.table.slug}
    screens = tables_received(gm)[-1]["screens"]
    assert [s["id"] for s in screens] == [screen_id] and screens[0]["paired_at"]
    shown = tv.get("/screen")
    assert shown.status_code == 302 and shown.headers["Location"].endswith(f"/screen/t/{duel.table.slug}")
    assert tv.get(f"/screen/t/{duel.table.slug}").status_code in (200, 302)
    for client in (duel.alice(), duel.spectator()):
        assert "screens" not in client.emit("sync", {}, callback=True)["table"], "only the GM sees the paired screens"

    again = gm.emit("display_pair", {"code": code}, callback=True)
    assert again["ok"] is False and again["code"] == "not_found", "a code pairs once"

    assert {**gm.emit("display_unpair", {"screen": screen_id}, callback=True), "revision": None} == {"ok": True, "revision": None}
    assert tables_received(gm)[-1]["screens"] == []
    assert tv.get("/screen/status").get_json() == {"state": "new"}
    assert tv.get(f"/screen/t/{duel.table.slug}").status_code == 302
    new_code = screen_code(tv)
    assert new_code != code
    assert tv.get("/screen/status").get_json() == {"state": "waiting", "code": new_code}


def test_pairing_codes_expire(duel: Table) -> None:
    tv = duel.app.test_client()
    code = screen_code(tv)
    with duel.service.session() as s:
        screen = s.exec(select(DisplayScreen).where(DisplayScreen.code == code)).one()
        screen.code_at = utcnow() - timedelta(minutes=11)
        s.add(screen)
        s.commit()
    ack = gm_socket(duel).emit("display_pair", {"code": code}, callback=True)
    assert ack["ok"] is False and ack["code"] == "not_found" and "expire" in ack["error"]
    assert tv.get("/screen/status").get_json() == {"state": "new"}
    assert screen_code(tv) != code, "an expired screen gets a new code"


def test_only_the_gm_pairs_and_unpairs(duel: Table) -> None:
    tv = duel.app.test_client()
    code = screen_code(tv)
    for client in (duel.alice(), duel.spectator()):
        for event, payload in (("display_pair", {"code": code}), ("display_unpair", {"screen": "d0"})):
            ack = client.emit(event, payload, callback=True)
            assert ack["ok"] is False and ack["code"] == "forbidden"
    assert tv.get("/screen/status").get_json()["state"] == "waiting"


def test_a_gm_cannot_unpair_another_tables_screen(app: Any) -> None:
    one, two = Table(app), Table(app)
    tv = app.test_client()
    code = screen_code(tv)
    screen_id = gm_socket(one).emit("display_pair", {"code": code}, callback=True)["screen"]["id"]
    ack = gm_socket(two).emit("display_unpair", {"screen": screen_id}, callback=True)
    assert ack["ok"] is False and ack["code"] == "not_found"
    assert tv.get("/screen/status").get_json() == {"state": "paired", "table": one.table.slug}


@pytest.mark.parametrize(
    ("event", "payload", "code"),
    [
        ("display_pair", {}, "invalid"),
        ("display_pair", {"code": None}, "invalid"),
        ("display_pair", {"code": 123456}, "invalid"),
        ("display_pair", {"code": "ABC"}, "invalid"),
        ("display_pair", {"code": "ABCDEFGH"}, "invalid"),
        ("display_pair", {"code": "OOOOOO"}, "invalid"),  # letters a code never has
        ("display_pair", {"code": "AAAAAA"}, "not_found"),
        ("display_pair", [1], "invalid"),
        ("display_unpair", {}, "invalid"),
        ("display_unpair", {"screen": 7}, "invalid"),
        ("display_unpair", {"screen": "x" * 200}, "invalid"),
        ("display_unpair", {"screen": "dnosuchscreen"}, "not_found"),
    ],
)
def test_bad_pairing_payloads_get_a_clear_error(duel: Table, event: str, payload: Any, code: str) -> None:
    ack = gm_socket(duel).emit(event, payload, callback=True)
    assert ack["ok"] is False and ack["code"] == code and ack["error"]
    assert duel.service.screens_of(duel.table.id) == []


def test_pairing_attempts_are_rate_limited(duel: Table) -> None:
    tv = duel.app.test_client()
    code = screen_code(tv)
    gm = gm_socket(duel)
    limit = duel.app.config["BATTLEBOARD"].join_attempts_per_minute
    for _ in range(limit):
        assert gm.emit("display_pair", {"code": "AAAAAA"}, callback=True)["code"] == "not_found"
    ack = gm.emit("display_pair", {"code": code}, callback=True)
    assert ack["ok"] is False and ack["code"] == "rate_limited", "even a right code waits once the attempts are used up"
    assert tv.get("/screen/status").get_json()["state"] == "waiting"


def test_new_pairing_codes_are_rate_limited(app: Any) -> None:
    limit = app.config["BATTLEBOARD"].tables_per_minute
    for _ in range(limit):
        assert app.test_client().get("/screen").status_code == 200
    assert app.test_client().get("/screen").status_code == 429


# --- the pairing page the GM's phone opens from the QR ------------------------------------------


def test_the_pair_page_pairs_from_a_gm_browser(duel: Table) -> None:
    tv = duel.app.test_client()
    code = screen_code(tv)
    stranger = duel.app.test_client().get(f"/pair/{code}").get_data(as_text=True)
    assert 'data-testid="pair-no-gm"' in stranger and "GM link" in stranger
    refused = duel.app.test_client().post("/pair", data={"code": code, "table": duel.table.slug})
    assert refused.status_code == 403
    assert tv.get("/screen/status").get_json()["state"] == "waiting"

    phone = gm_browser(duel)
    page = phone.get(f"/pair/{code}").get_data(as_text=True)
    assert f'data-testid="pair-with-{duel.table.slug}"' in page and code in page
    wrong = phone.post("/pair", data={"code": "AAAAAA", "table": duel.table.slug})
    assert wrong.status_code == 400 and "no screen shows that pairing code" in wrong.get_data(as_text=True)
    done = phone.post("/pair", data={"code": code, "table": duel.table.slug})
    assert done.status_code == 200 and 'data-testid="pair-done"' in done.get_data(as_text=True)
    assert tv.get("/screen/status").get_json() == {"state": "paired", "table": duel.table.slug}


def test_the_pair_page_is_rate_limited(duel: Table) -> None:
    phone = gm_browser(duel)
    limit = duel.app.config["BATTLEBOARD"].join_attempts_per_minute
    for _ in range(limit):
        assert phone.post("/pair", data={"code": "AAAAAA", "table": duel.table.slug}).status_code == 400
    assert phone.post("/pair", data={"code": "AAAAAA", "table": duel.table.slug}).status_code == 429


def test_a_paired_screen_gets_nothing_the_spectators_do_not(duel: Table) -> None:
    """A paired screen's browser holds no key: its socket is a spectator's."""
    tv = duel.app.test_client()
    code = screen_code(tv)
    gm_socket(duel).emit("display_pair", {"code": code}, callback=True)
    page = tv.get(f"/screen/t/{duel.table.slug}")
    body = page.get_data(as_text=True)
    for secret in (duel.table.gm_token, duel.table.join_code, duel.seat_a.token):
        assert secret not in body
    with duel.service.session() as s:
        screen = s.exec(select(DisplayScreen)).one()
    assert screen.token not in body and screen.token not in json.dumps(duel.gm().emit("sync", {}, callback=True))
    socket = socketio.test_client(duel.app, auth={"table": duel.table.slug, "token": None}, flask_test_client=tv)
    assert socket.emit("sync", {}, callback=True)["table"]["role"] == "spectator"


def test_make_app_keeps_the_screens_in_the_database(tmp_path: Any) -> None:
    """A screen's pairing lives in the database: a second app (another process) on the same file sees it."""
    first = make_app(tmp_path)
    duel = Table(first)
    tv = first.test_client()
    code = screen_code(tv)
    second = make_app(tmp_path)
    try:
        gm = socketio.test_client(second, auth={"table": duel.table.slug, "token": duel.table.gm_token})
        assert gm.emit("display_pair", {"code": code}, callback=True)["ok"] is True
        assert tv.get("/screen/status").get_json() == {"state": "paired", "table": duel.table.slug}
    finally:
        first.extensions["battleboard"].service.engine.dispose()
        second.extensions["battleboard"].service.engine.dispose()
