"""Issue 32: nobody locked out, no other site changes a session, no input that breaks a battle, a join
link a phone can open, limits that fit a venue, a health check that means it."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from PIL import Image

import tests.server.test_fair_dice as fair_dice
from tests.conftest import Table, duel_lineup, make_app
from tests.server.test_security import database_dump
from webapp.app import CLIENT_EVENTS, socketio
from webapp.export import export_json, load_document
from webapp.verify import verify_document

REPO = Path(__file__).resolve().parents[2]


def gm_browser(duel: Table) -> FlaskClient:
    """A browser holding the GM's session cookie (it opened the GM link), with the CSRF token."""
    browser = duel.app.test_client()
    assert browser.get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}").status_code == 302
    return browser


def raw_browser(app: Any) -> FlaskClient:
    """A test client that posts as another site's page would: no CSRF token of its own."""
    client = app.test_client()
    client.csrf = False  # type: ignore[attr-defined]
    return client


def cookie_of(client: FlaskClient) -> str | None:
    cookie = client.get_cookie("session")
    return cookie.value if cookie else None


def post_targets(duel: Table) -> list[tuple[str, dict[str, Any]]]:
    """Every state-changing route of the app, with its address filled in for the duel's table."""
    targets = []
    for rule in duel.app.url_map.iter_rules():
        if not (rule.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"} or rule.rule.startswith("/socket.io"):
            continue
        values = {"slug": duel.table.slug, "code": "ABC123", "battle_id": duel.battle_id or 1}
        path = rule.rule
        for name in rule.arguments:
            path = re.sub(rf"<(?:\w+:)?{name}>", str(values[name]), path)
        data = {"name": "Mallory's table", "system": "phantoms-bane", "code": duel.table.join_code, "table": duel.table.slug}
        targets.append((path, data))
    return targets


# --- §1 no other website can change anyone's session -------------------------------------------------


def test_the_session_cookie_is_httponly_and_samesite_lax_and_secure_behind_https(tmp_path: Path) -> None:
    app = make_app(tmp_path / "plain")
    response = app.test_client().get("/join")
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    secure = make_app(tmp_path / "https", public_url="https://board.example")
    assert "Secure" in secure.test_client().get("/join").headers["Set-Cookie"]
    over_https = app.test_client().get("/join", base_url="https://localhost")
    assert "Secure" in over_https.headers["Set-Cookie"]
    for one in (app, secure):
        one.extensions["battleboard"].service.engine.dispose()


def test_every_state_changing_request_from_elsewhere_is_refused_without_touching_the_session(duel: Table) -> None:
    gm = gm_browser(duel)
    token = re.search(r'name="csrf_token" value="([^"]+)"', gm.get("/join").get_data(as_text=True)).group(1)
    gm.csrf = False  # type: ignore[attr-defined]
    cookie = cookie_of(gm)
    before = database_dump(duel.service)
    targets = post_targets(duel)
    assert {"/tables", "/join", "/import", "/pair", f"/t/{duel.table.slug}/images", f"/t/{duel.table.slug}/gm-key",
            f"/t/{duel.table.slug}/join-code"} <= {path for path, _ in targets}
    for path, data in targets:
        attempts = {
            "no token": {},
            "another site's Origin": {"headers": {"Origin": "http://evil.example", "X-CSRFToken": token}},
            "a sibling port's Origin": {"headers": {"Origin": "http://localhost:8081", "X-CSRFToken": token}},
            "a cross-site fetch": {"headers": {"Sec-Fetch-Site": "cross-site", "X-CSRFToken": token}},
            "a sandboxed frame": {"headers": {"Origin": "null", "X-CSRFToken": token}},
        }
        for what, extra in attempts.items():
            response = gm.post(path, data=data, **extra)
            assert response.status_code == 403, (path, what, response.status_code)
            assert "Set-Cookie" not in response.headers, (path, what)
            # and a browser without any cookie (SameSite kept it back) gets none either
            stranger = raw_browser(duel.app).post(path, data=data, **extra)
            assert stranger.status_code == 403 and "Set-Cookie" not in stranger.headers, (path, what)
    assert cookie_of(gm) == cookie
    assert database_dump(duel.service) == before
    # the GM's page still works, and the board's own form (same origin, with its token) too
    assert gm.get(f"/t/{duel.table.slug}/gm").status_code == 200
    ok = gm.post("/tables", data={"name": "Own table", "system": "phantoms-bane", "csrf_token": token},
                 headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert ok.status_code == 302


# --- §2 a GM is never locked out ---------------------------------------------------------------------


def test_a_gm_link_followed_from_another_site_asks_before_it_changes_the_session(duel: Table) -> None:
    browser = duel.app.test_client()
    link = f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}"
    asked = browser.get(link, headers={"Sec-Fetch-Site": "cross-site"})
    assert asked.status_code == 200 and "Open the GM console here" in asked.get_data(as_text=True)
    assert _gm_keys(browser) == []
    confirmed = browser.post(f"/t/{duel.table.slug}/gm", data={"key": duel.table.gm_token})
    assert confirmed.status_code == 302 and _gm_keys(browser) == [(duel.table.slug, duel.table.gm_token)]
    # opened from the address bar, a bookmark or a scanned QR code: at once
    direct = duel.app.test_client()
    assert direct.get(link, headers={"Sec-Fetch-Site": "none"}).status_code == 302 and _gm_keys(direct)


def test_the_gm_console_shows_the_gm_link_with_a_qr_code_and_a_warning(duel: Table) -> None:
    page = gm_browser(duel).get(f"/t/{duel.table.slug}/gm").get_data(as_text=True)
    assert f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}" in page
    assert 'data-testid="gm-link-qr"' in page and 'src="data:image/svg+xml' in page
    assert "Whoever holds this link is the GM" in page and 'data-testid="copy-gm-link"' in page
    # nobody else's page carries it
    for path in (f"/t/{duel.table.slug}/watch", f"/t/{duel.table.slug}/display", "/"):
        assert duel.table.gm_token not in duel.app.test_client().get(path).get_data(as_text=True)


def test_the_front_page_lists_my_tables(app: Any) -> None:
    browser = app.test_client()
    for name in ("The Orc Wars", "The Lich Crypt"):
        assert browser.post("/tables", data={"name": name, "system": "adnd"}).status_code == 302
    page = browser.get("/").get_data(as_text=True)
    assert page.index("The Lich Crypt") < page.index("The Orc Wars")  # the latest first
    service = app.extensions["battleboard"].service
    keys = _gm_keys(browser)
    assert len(keys) == 2
    for slug, _token in keys:
        table = service.table(slug=slug)
        assert f"/t/{slug}/gm" in page and f"/t/{slug}/display" in page and f"/j/{table.join_code}" in page
    assert "My tables" not in app.test_client().get("/").get_data(as_text=True)


def _gm_keys(browser: FlaskClient) -> list[tuple[str, str]]:
    with browser.session_transaction() as session:
        return list((session.get("gm") or {}).items())


def test_the_gm_rotates_the_join_code_and_seated_players_keep_their_seats(duel: Table) -> None:
    old_code = duel.table.join_code
    alice = duel.alice()
    spectator_in = duel.spectator()
    assert raw_browser(duel.app).post(f"/t/{duel.table.slug}/join-code").status_code == 403
    assert duel.app.test_client().post(f"/t/{duel.table.slug}/join-code").status_code == 403  # no GM key
    response = gm_browser(duel).post(f"/t/{duel.table.slug}/join-code")
    assert response.status_code == 302 and response.headers["Location"].endswith("#join")
    new_code = duel.service.table(table_id=duel.table.id).join_code
    assert new_code != old_code
    player = duel.app.test_client()
    assert player.post("/join", data={"code": old_code, "name": "Late"}).status_code == 400
    assert player.post("/join", data={"code": new_code, "name": "Late"}).status_code == 302
    assert alice.emit("sync", {}, callback=True)["table"]["seat"]["id"] == duel.seat_a.public_id  # still seated
    assert duel.alice().is_connected()
    del spectator_in


def gm_browser_post_notes(duel: Table, browser: FlaskClient) -> bool:
    """The GM's new console changes the table: every GM room gets the table again."""
    console = socketio.test_client(duel.app, auth={"table": duel.table.slug,
                                                   "token": duel.service.table(table_id=duel.table.id).gm_token})
    return bool(console.emit("lineup_set", {"lineup": duel_lineup()}, callback=True)["ok"])


def test_replacing_the_gm_link_stops_every_console_of_the_old_key(duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    from webapp import sockets

    old_key = duel.table.gm_token
    here = gm_browser(duel)
    elsewhere = gm_browser(duel)  # the same GM on another device
    console = duel.gm()
    response = here.post(f"/t/{duel.table.slug}/gm-key")
    assert response.status_code == 302
    new_key = duel.service.table(table_id=duel.table.id).gm_token
    assert new_key != old_key
    told = [m for m in console.get_received() if m["name"] == "gm_key_replaced"]
    assert told and "replaced" in told[0]["args"][0]["message"]
    # it gets no more of the GM's view, and whatever it still sends is refused
    duel.service.set_notes(duel.table.id, "changed")
    assert gm_browser_post_notes(duel, here) and not [m for m in console.get_received() if m["name"] == "table"]
    ack = console.emit("notes_set", {"notes": "old key"}, callback=True)
    assert not ack["ok"] and "replaced" in ack["error"] and not console.is_connected()
    # this browser goes on with the new key; the other device and the old link are refused
    assert here.get(f"/t/{duel.table.slug}/gm").status_code == 200
    assert elsewhere.get(f"/t/{duel.table.slug}/gm").status_code == 403
    assert duel.app.test_client().get(f"/t/{duel.table.slug}/gm?key={old_key}").status_code == 403
    refused = socketio.test_client(duel.app, auth={"table": duel.table.slug, "token": old_key})
    assert not refused.is_connected()
    # a console of the old key on another process is stopped at its next event
    duel.table = duel.service.table(table_id=duel.table.id)
    other_process = duel.gm()
    monkeypatch.setattr(sockets, "SEAT_CACHE_SECONDS", 0.0)
    duel.service.new_gm_key(duel.table.id)  # as another process would write it
    ack = other_process.emit("notes_set", {"notes": "still the GM?"}, callback=True)
    assert not ack["ok"] and "replaced" in ack["error"]
    assert duel.service.table(table_id=duel.table.id).gm_notes != "still the GM?"


# --- §4 no input breaks a battle ---------------------------------------------------------------------
BROKEN = ("Jinx\ud800", "Jinx\x00", "bell\x07", "esc\x1b[31m", "c1\x85")


def test_every_socket_event_refuses_broken_and_control_characters(duel: Table) -> None:
    gm = duel.gm()
    before = database_dump(duel.service)
    for event in CLIENT_EVENTS:
        for text in BROKEN:
            payload = {"battle_id": duel.battle_id, "name": text, "notes": text, "lineup": [{"name": text}],
                       "declaration": {"type": "choose", "combatant": "jharek", "option": "attack", "note": text}}
            ack = gm.emit(event, payload, callback=True)
            assert ack["ok"] is False and ack["code"] == "invalid", (event, text, ack)
            assert "character" in ack["error"], (event, ack)
        # a key is text too
        ack = gm.emit(event, {"battle_id": duel.battle_id, "x\x00": 1}, callback=True)
        assert ack["ok"] is False and ack["code"] == "invalid"
    assert database_dump(duel.service) == before


def test_notes_keep_newlines_and_tabs_and_refuse_a_lone_surrogate_clearly(duel: Table) -> None:
    gm = duel.gm()
    ack = gm.emit("notes_set", {"notes": "Orc ambush\r\n\tround 3"}, callback=True)
    assert ack["ok"]
    assert duel.service.table(table_id=duel.table.id).gm_notes == "Orc ambush\n\tround 3"
    ack = gm.emit("notes_set", {"notes": "bad \ud800 note"}, callback=True)
    assert ack == {"ok": False, "code": "invalid",
                   "error": "notes_set holds a broken character (lone surrogate U+D800): type only letters, digits, punctuation, newlines and tabs"}
    ack = gm.emit("lineup_set", {"lineup": duel_lineup(a={"name": "Null\x00Hero"})}, callback=True)
    assert not ack["ok"] and "U+0000" in ack["error"]


def test_forms_refuse_control_characters_and_store_nothing(duel: Table) -> None:
    before = database_dump(duel.service)
    browser = duel.app.test_client()
    for data in ({"name": "Null\x00Table", "system": "phantoms-bane"}, {"name": "Esc\x1b[31m", "system": "adnd"}):
        response = browser.post("/tables", data=data)
        assert response.status_code == 400 and "character" in response.get_data(as_text=True)
    response = browser.post("/join", data={"code": duel.table.join_code, "name": "Eve\x00"})
    assert response.status_code == 400 and "U+0000" in response.get_data(as_text=True)
    assert browser.get("/join?code=%00").status_code == 400
    assert database_dump(duel.service) == before
    # a tab in a one-line name is a space; a name that is all control characters never arrives
    assert browser.post("/join", data={"code": duel.table.join_code, "name": "Tab\tby"}).status_code == 302
    assert "Tab by" in [seat.name for seat in duel.service.seats(duel.table.id)]


@pytest.mark.parametrize("system_id", ["phantoms-bane", "adnd"])
def test_a_battle_stored_with_broken_characters_still_exports_reports_and_verifies(
        app: Any, monkeypatch: pytest.MonkeyPatch, system_id: str) -> None:
    """Battles stored before the board read every field: names with a lone surrogate and a NUL."""
    service = app.extensions["battleboard"].service
    real = fair_dice.lineup_for

    def broken_names(system: Any, seats: list[str]) -> list[dict[str, Any]]:
        return [{**entry, "name": f"{entry['name']}\ud800\x00"} for entry in real(system, seats)]

    monkeypatch.setattr(fair_dice, "lineup_for", broken_names)
    table, battle_id = fair_dice.play_battle(service, system_id, max_accepted=8)
    raw = export_json(service, battle_id)
    text = raw.decode("utf-8")  # valid UTF-8
    assert "\ufffd" in text and "\\ud800" not in text and "\x00" not in text
    assert verify_document(load_document(raw)).ok
    gm = app.test_client()
    assert gm.get(f"/t/{table.slug}/gm?key={table.gm_token}").status_code == 302
    for suffix in ("report", "report?format=md", "export.json"):
        response = gm.get(f"/t/{table.slug}/battles/{battle_id}/{suffix}")
        assert response.status_code == 200, suffix
        response.get_data().decode("utf-8")
    assert service.save_roster(table.id, "Old heroes").id


def test_deeply_nested_json_is_answered_clearly_on_import_and_by_verify(app: Any, tmp_path: Path) -> None:
    nested = ("[" * 100_000 + "]" * 100_000).encode()
    response = app.test_client().post("/import", data={"battle": (io.BytesIO(nested), "deep.json")},
                                      content_type="multipart/form-data")
    assert response.status_code == 400 and "nested too deeply" in response.get_data(as_text=True)
    shallow_but_deep = json.dumps(json.loads("{" + '"a":{' * 200 + "}" * 200 + "}")).encode()
    response = app.test_client().post("/import", data={"battle": (io.BytesIO(shallow_but_deep), "deep.json")},
                                      content_type="multipart/form-data")
    assert response.status_code == 400 and "nested too deeply" in response.get_data(as_text=True)
    file = tmp_path / "deep.json"
    file.write_bytes(nested)
    done = subprocess.run([sys.executable, "-m", "webapp.cli", "verify", str(file)], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 1 and "NOT VERIFIED" in done.stdout and "nested too deeply" in done.stdout
    assert "Traceback" not in done.stderr


def _huge_png(side: int = 7000) -> bytes:
    out = io.BytesIO()
    Image.new("1", (side, side)).save(out, "PNG")  # about 50 KB on disk, 49 megapixels decoded
    return out.getvalue()


def test_an_image_is_bounded_by_its_decoded_pixels_and_uploads_are_limited_per_table(tmp_path: Path) -> None:
    from tests.server.test_maps import png

    app = make_app(tmp_path, uploads_per_minute=3)
    duel, other = Table(app), Table(app)
    gm, other_gm = gm_browser(duel), gm_browser(other)

    def upload(browser: FlaskClient, table: Table, data: bytes) -> Any:
        return browser.post(f"/t/{table.table.slug}/images", data=data, content_type="image/png",
                            headers={"X-Battleboard-Key": table.table.gm_token})

    huge = upload(gm, duel, _huge_png())
    assert huge.status_code == 413 and "megapixels" in huge.get_json()["error"]
    assert upload(gm, duel, png(64, 64, "RGB")).status_code == 200
    assert upload(gm, duel, png(65, 64, "RGB")).status_code == 200
    limited = upload(gm, duel, png(66, 64, "RGB"))
    assert limited.status_code == 429 and "wait a minute" in limited.get_json()["error"]
    assert upload(other_gm, other, png(67, 64, "RGB")).status_code == 200  # another table is not held up
    app.extensions["battleboard"].service.engine.dispose()


def test_a_roster_library_is_capped_and_the_payload_lists_names_and_sizes(duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    from webapp import rosters as service_module

    monkeypatch.setattr(service_module, "MAX_ROSTERS", 3)
    gm = duel.gm()
    for i in range(3):
        assert gm.emit("roster_save", {"name": f"Roster {i}"}, callback=True)["ok"]
    full = gm.emit("roster_save", {"name": "One too many"}, callback=True)
    assert not full["ok"] and "full" in full["error"]
    rosters = gm.emit("sync", {}, callback=True)["table"]["rosters"]
    assert [set(r) for r in rosters] == [{"id", "name", "size"}] * 3 and {r["size"] for r in rosters} == {2}
    loaded = gm.emit("roster_load", {"roster_id": rosters[0]["id"]}, callback=True)
    assert [c["name"] for c in loaded["lineup"]] == ["Jharek", "Wild Monster"]  # the lineup comes when loaded


# --- §5 the join link is one a phone can open --------------------------------------------------------


def lan_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lan: list[str], **overrides: Any) -> Any:
    from webapp import net

    monkeypatch.setattr(net, "lan_addresses", lambda: list(lan))
    return make_app(tmp_path, listen_host=overrides.pop("listen_host", "0.0.0.0"), listen_port=5000, **overrides)


def test_the_join_link_is_the_lan_address_whatever_host_a_request_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = lan_app(tmp_path, monkeypatch, ["192.168.1.23"])
    duel = Table(app, start=False)
    wanted = f"http://192.168.1.23:5000/j/{duel.table.join_code}"
    gm = gm_browser(duel)
    for host in ("127.0.0.1:5000", "evil.example"):  # a console on loopback, a forged Host
        page = app.test_client().get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}", headers={"Host": host},
                                     follow_redirects=True).get_data(as_text=True)
        assert wanted in page and "evil.example" not in page and 'data-testid="join-warning"' not in page
        forged = socketio.test_client(app, auth={"table": duel.table.slug}, headers={"Host": host})
        assert forged.emit("sync", {}, callback=True)["table"]["join"]["url"] == wanted
    svg = gm.get(f"/t/{duel.table.slug}/qr.svg").get_data()
    assert svg.startswith(b"<?xml") or b"<svg" in svg
    app.extensions["battleboard"].service.engine.dispose()


def test_a_public_url_wins_and_a_machine_without_a_lan_address_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    public = lan_app(tmp_path / "public", monkeypatch, ["192.168.1.23"], public_url="https://board.example/")
    table = Table(public, start=False)
    page = gm_browser(table).get(f"/t/{table.table.slug}/gm").get_data(as_text=True)
    assert f"https://board.example/j/{table.table.join_code}" in page
    alone = lan_app(tmp_path / "alone", monkeypatch, [])
    table = Table(alone, start=False)
    page = gm_browser(table).get(f"/t/{table.table.slug}/gm").get_data(as_text=True)
    assert 'data-testid="join-warning"' in page and "no address on a local network" in page
    loopback = lan_app(tmp_path / "loopback", monkeypatch, ["192.168.1.23"], listen_host="127.0.0.1")
    table = Table(loopback, start=False)
    page = gm_browser(table).get(f"/t/{table.table.slug}/gm").get_data(as_text=True)
    assert "listens on this machine only" in page and "--host 0.0.0.0" in page
    for one in (public, alone, loopback):
        one.extensions["battleboard"].service.engine.dispose()


# --- §6 limits fit a real venue ----------------------------------------------------------------------


def test_thirty_players_behind_one_address_all_join_and_wrong_codes_are_what_is_limited(tmp_path: Path) -> None:
    app = make_app(tmp_path, join_attempts_per_minute=3, seats_per_table=32)
    duel = Table(app, start=False)  # two seats already
    venue = {"REMOTE_ADDR": "203.0.113.9"}
    for i in range(30):
        phone = app.test_client()
        response = phone.post("/join", data={"code": duel.table.join_code, "name": f"Player {i}"}, environ_base=venue)
        assert response.status_code == 302, i
    full = app.test_client().post("/join", data={"code": duel.table.join_code, "name": "One more"})
    assert full.status_code == 400 and "full" in full.get_data(as_text=True)
    guesser = app.test_client()
    for _ in range(3):
        assert guesser.post("/join", data={"code": "ZZZZZZ", "name": "M"}, environ_base=venue).status_code == 400
    assert guesser.post("/join", data={"code": "ZZZZZZ", "name": "M"}, environ_base=venue).status_code == 429
    app.extensions["battleboard"].service.engine.dispose()


# --- §7 the health check means it --------------------------------------------------------------------


def test_the_health_check_answers_503_on_a_corrupted_database(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    for i in range(30):
        service.create_table(f"Table {i}" * 4, "phantoms-bane")
    client = app.test_client()
    assert client.get("/healthz").get_json() == {"ok": True}
    service.engine.dispose()
    database = tmp_path / "test.sqlite3"
    data = bytearray(database.read_bytes())
    data[8192:] = b"\x5a" * (len(data) - 8192)  # every page past the second overwritten
    database.write_bytes(bytes(data))
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["ok"] is False and "malformed" in body["error"]
    service.engine.dispose()
