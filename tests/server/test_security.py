"""Hostile input over HTTP and sockets: CSP, HTML shown as text, join-code rate limit, GM rights."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from tests.conftest import Table, duel_lineup, make_app
from webapp.app import GM_EVENTS
from webapp.models import Battle, BattleCommand, BattleEvent, GameTable, Roster, Seat

REPO = Path(__file__).resolve().parents[2]
EVIL = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


class ScriptAudit(HTMLParser):
    """Collects inline scripts, inline event handlers and javascript: URLs of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._in_script = False
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "script":
            if not attributes.get("src"):
                self.problems.append("an inline <script>")
            self._in_script = True
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.problems.append(f"an inline handler {name}= on <{tag}>")
            if value and value.strip().lower().startswith("javascript:"):
                self.problems.append(f"a javascript: URL in {name}= on <{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append("script text inside a <script> element")


def audit(html: str) -> ScriptAudit:
    parser = ScriptAudit()
    parser.feed(html)
    return parser


def pages(duel: Table) -> dict[str, Any]:
    """Every HTML page, fetched as the role that may see it."""
    slug = duel.table.slug
    gm = duel.app.test_client()
    assert gm.get(f"/t/{slug}/gm?key={duel.table.gm_token}").status_code == 302
    player = duel.app.test_client()
    response = player.post("/join", data={"code": duel.table.join_code, "name": "Carol"})
    assert response.status_code == 302
    anyone = duel.app.test_client()
    return {
        "/": anyone.get("/"),
        "/join": anyone.get("/join"),
        f"/j/{duel.table.join_code}": anyone.get(f"/j/{duel.table.join_code}"),
        "gm": gm.get(f"/t/{slug}/gm"),
        "player": player.get(f"/t/{slug}/play"),
        "spectator": anyone.get(f"/t/{slug}/watch"),
        "gm without key": anyone.get(f"/t/{slug}/gm"),
        "missing": anyone.get("/t/no-such-table/watch"),
    }


# --- Content-Security-Policy -----------------------------------------------------------------


def test_every_page_has_a_csp_without_inline_scripts(duel: Table) -> None:
    for name, response in pages(duel).items():
        csp = response.headers.get("Content-Security-Policy", "")
        directives = {part.split()[0]: part.split()[1:] for part in csp.split(";") if part.strip()}
        assert "script-src" in directives or "default-src" in directives, name
        scripts = directives.get("script-src", directives.get("default-src"))
        assert scripts == ["'self'"], f"{name}: script-src {scripts}"
        assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, name
        assert directives.get("object-src") == ["'none'"] and directives.get("frame-ancestors") == ["'none'"], name
        assert response.headers.get("X-Content-Type-Options") == "nosniff", name
        if response.mimetype == "text/html":
            found = audit(response.get_data(as_text=True))
            assert not found.problems, f"{name}: {found.problems}"


def test_json_and_svg_answers_carry_the_csp_too(duel: Table) -> None:
    client = duel.app.test_client()
    assert client.get("/healthz").headers.get("Content-Security-Policy")
    client.get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}")
    qr = client.get(f"/t/{duel.table.slug}/qr.svg")
    assert qr.status_code == 200 and qr.headers.get("Content-Security-Policy")


def test_the_javascript_never_builds_html_from_strings() -> None:
    sinks = re.compile(r"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function\s*\(|setTimeout\s*\(\s*['\"`]")
    files = sorted((REPO / "static" / "js").rglob("*.js"))
    assert files, "no JavaScript found"
    for path in files:
        code = path.read_text()
        code = re.sub(r"//[^\n]*", "", code)  # comments may mention innerHTML ("never innerHTML")
        code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
        hit = sinks.search(code)
        assert hit is None, f"{path.relative_to(REPO)} uses {hit.group(0)!r}: build DOM with text nodes"


def test_templates_never_switch_autoescape_off() -> None:
    for path in (REPO / "templates").rglob("*.html"):
        text = path.read_text()
        assert "|safe" not in text.replace(" ", "") and "autoescape false" not in text and "Markup(" not in text, path


# --- HTML in names and notes -----------------------------------------------------------------


def test_html_in_names_and_notes_is_shown_as_text(app: Any) -> None:
    anyone = app.test_client()
    response = anyone.post("/tables", data={"name": EVIL[:80], "system": "phantoms-bane"})
    assert response.status_code == 302
    slug = response.headers["Location"].split("/t/")[1].split("/")[0]
    gm_page = anyone.get(f"/t/{slug}/gm")
    service = app.extensions["battleboard"].service
    table = service.table(slug=slug)
    player = app.test_client()
    assert player.post("/join", data={"code": table.join_code, "name": '<b onmouseover="x()">Eve</b>'}).status_code == 302
    service.set_notes(table.id, EVIL)
    for response in (gm_page, anyone.get(f"/t/{slug}/gm"), anyone.get(f"/t/{slug}/watch"), player.get(f"/t/{slug}/play")):
        html = response.get_data(as_text=True)
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(" in html, "the name is shown, escaped"
        assert not audit(html).problems
    # the socket side hands names over as JSON data; the page writes them with text nodes
    duel_like = Table.__new__(Table)
    duel_like.app, duel_like.service, duel_like.table = app, service, table
    gm = duel_like.gm()
    payload = gm.emit("sync", {}, callback=True)["table"]
    assert payload["name"] == EVIL[:80] and payload["gm_notes"] == EVIL
    assert any(seat["name"] == '<b onmouseover="x()">Eve</b>' for seat in payload["seats"])


def test_a_name_that_is_too_long_or_empty_is_refused_and_nothing_is_created(app: Any) -> None:
    client = app.test_client()
    service = app.extensions["battleboard"].service
    for data in ({"name": "x" * 81, "system": "phantoms-bane"}, {"name": "   ", "system": "phantoms-bane"},
                 {"name": "ok", "system": "chess"}, {"name": "ok"}, {}):
        response = client.post("/tables", data=data)
        assert response.status_code == 400, data
        assert "Battleboard" in response.get_data(as_text=True)
    with service.session() as s:
        assert s.exec(select(GameTable)).all() == []
    assert client.post("/tables", data={"name": "x" * 300_000, "system": "phantoms-bane"}).status_code == 413


# --- join codes --------------------------------------------------------------------------------


def test_join_codes_cannot_be_guessed_quickly(duel: Table) -> None:
    limit = duel.app.config["BATTLEBOARD"].join_attempts_per_minute
    guesser = duel.app.test_client()
    seats_before = len(duel.service.seats(duel.table.id))
    for i in range(limit):
        response = guesser.post("/join", data={"code": f"ZZZZ{i:02d}", "name": "Mallory"})
        assert response.status_code == 400 and "no table has that join code" in response.get_data(as_text=True)
    # the right code no longer helps this address for a while
    blocked = guesser.post("/join", data={"code": duel.table.join_code, "name": "Mallory"})
    assert blocked.status_code == 429 and "Too many attempts" in blocked.get_data(as_text=True)
    assert len(duel.service.seats(duel.table.id)) == seats_before
    # another address is not held up by Mallory's guesses
    other = duel.app.test_client()
    ok = other.post("/join", data={"code": duel.table.join_code, "name": "Dave"}, environ_base={"REMOTE_ADDR": "10.0.0.7"})
    assert ok.status_code == 302
    # the join code space: 6 characters of 32 -> 2^30 codes; 10 a minute per address
    assert len(duel.table.join_code) == 6


def test_behind_a_trusted_proxy_the_limit_counts_the_forwarded_address(tmp_path: Path) -> None:
    app = make_app(tmp_path, trusted_proxies=1, join_attempts_per_minute=2)
    duel = Table(app)
    client = app.test_client()
    for _ in range(2):
        assert client.post("/join", data={"code": "WRONG1", "name": "M"}, headers={"X-Forwarded-For": "203.0.113.5"}).status_code == 400
    assert client.post("/join", data={"code": "WRONG1", "name": "M"}, headers={"X-Forwarded-For": "203.0.113.5"}).status_code == 429
    ok = client.post("/join", data={"code": duel.table.join_code, "name": "N"}, headers={"X-Forwarded-For": "203.0.113.6"})
    assert ok.status_code == 302
    app.extensions["battleboard"].service.engine.dispose()


def test_gm_page_and_qr_refuse_without_the_gm_key(duel: Table) -> None:
    client = duel.app.test_client()
    assert client.get(f"/t/{duel.table.slug}/gm?key=wrong").status_code == 403
    assert client.get(f"/t/{duel.table.slug}/gm").status_code == 403
    assert client.get(f"/t/{duel.table.slug}/qr.svg").status_code == 403
    page = client.get(f"/t/{duel.table.slug}/watch").get_data(as_text=True)
    assert duel.table.gm_token not in page and duel.table.join_code not in page


# --- GM rights ---------------------------------------------------------------------------------


def database_dump(service: Any) -> str:
    with service.session() as s:
        rows: list[Any] = []
        for model in (GameTable, Seat, Roster, Battle, BattleEvent, BattleCommand):
            rows += [row.model_dump(mode="json") for row in s.exec(select(model)).all()]
    return json.dumps(rows, sort_keys=True, default=str)


def gm_payloads(duel: Table) -> dict[str, list[dict[str, Any]]]:
    """For each GM-only event, payloads a GM would send successfully, and a few sly variants."""
    roster = duel.service.save_roster(duel.table.id, "Saved by the GM")
    lineup = duel.service.table(table_id=duel.table.id).lineup
    bid = duel.battle_id
    return {
        "undo": [{"battle_id": bid}, {"battle_id": bid, "as": "gm"}],
        "assign": [{"battle_id": bid, "combatant": "monster", "controller": "seat", "seat": duel.seat_a.public_id},
                   {"battle_id": bid, "combatant": "jharek", "controller": "gm"}],
        "battle_start": [{"replace": True}, {"replace": True, "role": "gm"}],
        "battle_restart": [{}, {"token": duel.table.gm_token[:-1] + "x"}],
        "battle_end": [{"battle_id": bid}, {"battle_id": bid, "viewer": {"role": "gm"}}],
        "lineup_set": [{"lineup": lineup[::-1]}, {"lineup": []}],
        "options_set": [{"options": {}}],
        "notes_set": [{"notes": "players rule now"}],
        "roster_save": [{"name": "stolen"}],
        "roster_load": [{"roster_id": roster.id}, {"roster_id": roster.id, "append": True}],
        "roster_delete": [{"roster_id": roster.id}],
        "board_set": [{"blocked": []}],
        "fog_set": [{"all": True}, {"add": [[0, 0]]}, {"sight": 3}],
        "battle_share": [{"battle_id": bid, "shareable": True}],
        "display_set": [{"show_join": True}, {"show_odds": True}, {"show_chances": True}, {"phones_chances": True}],
        "display_pair": [{"code": "ABCDEF"}],
        "display_unpair": [{"screen": 1}],
        "dice_physical": [{"battle_id": bid, "combatant": "jharek", "physical": True}],
        "survivors_save": [{"battle_id": bid, "name": "stolen"}, {"battle_id": bid, "roster_id": roster.id}],
        "survivors_preview": [{"battle_id": bid}, {"battle_id": bid, "fallen": True}],
        "hide_combatant": [{"battle_id": bid, "combatant": "monster"}],
        "reveal_combatant": [{"battle_id": bid, "combatant": "monster"}],
    }


def test_every_gm_event_is_refused_to_players_and_spectators_and_changes_nothing(duel: Table) -> None:
    payloads = gm_payloads(duel)
    assert set(payloads) == set(GM_EVENTS), "a new GM event needs a case here"
    alice, spectator = duel.alice(), duel.spectator()
    before = database_dump(duel.service)
    for client, role in ((alice, "player"), (spectator, "spectator")):
        for event in GM_EVENTS:
            for payload in payloads[event]:
                ack = client.emit(event, payload, callback=True)
                assert ack == {"ok": False, "error": ack["error"], "code": "forbidden"}, (role, event, ack)
        # and no event gave the client the GM's view of the table
        sync = client.emit("sync", {}, callback=True)
        assert sync["table"]["role"] == role and "join_code" not in sync["table"] and "gm_notes" not in sync["table"]
        text = json.dumps(client.get_received())
        assert duel.table.join_code not in text and duel.table.gm_token not in text
    assert database_dump(duel.service) == before
    # the same payloads work for the GM: the refusals above were about the role, not the payload
    gm = duel.gm()
    assert gm.emit("notes_set", payloads["notes_set"][0], callback=True)["ok"]
    assert gm.emit("assign", payloads["assign"][0], callback=True)["ok"]


@pytest.mark.parametrize("token", ["", None, 0, [], {"role": "gm"}, "gm", "x" * 65, "' OR 1=1 --"])
def test_odd_keys_give_a_spectator_at_most(duel: Table, token: Any) -> None:
    from webapp.app import socketio

    client = socketio.test_client(duel.app, auth={"table": duel.table.slug, "token": token})
    if client.is_connected():
        ack = client.emit("sync", {}, callback=True)
        assert ack["table"]["role"] == "spectator"
        assert client.emit("notes_set", {"notes": "x"}, callback=True)["code"] == "forbidden"


def test_join_validates_the_form_and_creates_nothing_on_bad_input(duel: Table) -> None:
    client = duel.app.test_client()
    seats = len(duel.service.seats(duel.table.id))
    for i, data in enumerate(({"code": duel.table.join_code, "name": ""}, {"code": duel.table.join_code, "name": "x" * 41},
                              {"code": duel.table.join_code}, {"name": "Zed"}, {"code": "", "name": "Zed"})):
        response = client.post("/join", data=data, environ_base={"REMOTE_ADDR": f"10.1.0.{i}"})
        assert response.status_code == 400, data
        assert "Join" in response.get_data(as_text=True) or "join" in response.get_data(as_text=True)
    assert len(duel.service.seats(duel.table.id)) == seats
    assert client.get("/j/" + "A" * 500).status_code == 200  # a silly link shows the form, trimmed
    assert "A" * 13 not in client.get("/j/" + "A" * 500).get_data(as_text=True)


def test_a_battle_of_another_table_cannot_be_probed_by_message_id(app: Any) -> None:
    ours, theirs = Table(app), Table(app)
    gm_theirs = theirs.gm()
    ack = gm_theirs.emit("declare", {"battle_id": theirs.battle_id, "msg_id": "their-1",
                                     "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}}, callback=True)
    assert ack["ok"]
    before = database_dump(ours.service)
    probe = ours.gm().emit("declare", {"battle_id": theirs.battle_id, "msg_id": "their-1",
                                       "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}}, callback=True)
    assert probe["ok"] is False and probe["code"] == "forbidden", probe
    assert "v" not in probe and database_dump(ours.service) == before


# --- roster libraries ---------------------------------------------------------------------------


def test_a_gm_of_another_table_can_neither_list_load_nor_delete_your_rosters(app: Any) -> None:
    """Anyone may make a table and be its GM: that must not open other GMs' saved combatants."""
    ours, theirs = Table(app), Table(app)
    gm = ours.gm()
    saved = gm.emit("roster_save", {"name": "The dragon's stat block"}, callback=True)["roster_id"]
    stranger = theirs.gm()
    listed = stranger.emit("sync", {}, callback=True)["table"]["rosters"]
    assert listed == [], "another table's GM sees none of our rosters"
    before = database_dump(ours.service)
    for event, payload in (("roster_load", {"roster_id": saved}), ("roster_load", {"roster_id": saved, "append": True}),
                           ("roster_delete", {"roster_id": saved})):
        ack = stranger.emit(event, payload, callback=True)
        assert ack["ok"] is False and ack["code"] == "not_found" and ack["error"] == "no such roster", (event, ack)
    assert database_dump(ours.service) == before
    assert "dragon" not in json.dumps(stranger.get_received())
    assert [r["id"] for r in gm.emit("sync", {}, callback=True)["table"]["rosters"]] == [saved]
    assert gm.emit("roster_delete", {"roster_id": saved}, callback=True)["ok"], "our own GM still may"


def test_the_tables_a_gm_makes_from_one_browser_share_their_rosters(app: Any) -> None:
    from webapp.app import socketio

    def make_table(browser: Any, name: str) -> Any:
        response = browser.post("/tables", data={"name": name, "system": "phantoms-bane"})
        assert response.status_code == 302
        slug = response.headers["Location"].split("/t/")[1].split("/")[0]
        return service.table(slug=slug)

    def gm_of(table: Any) -> Any:
        client = socketio.test_client(app, auth={"table": table.slug, "token": table.gm_token}, flask_test_client=app.test_client())
        assert client.is_connected()
        return client

    service = app.extensions["battleboard"].service
    my_browser, other_browser = app.test_client(), app.test_client()
    tuesday = make_table(my_browser, "Tuesday")
    service.set_lineup(tuesday.id, duel_lineup())
    saved = gm_of(tuesday).emit("roster_save", {"name": "Regulars"}, callback=True)["roster_id"]
    thursday = make_table(my_browser, "Thursday")
    assert thursday.library == tuesday.library
    next_week = gm_of(thursday)
    assert [r["id"] for r in next_week.emit("sync", {}, callback=True)["table"]["rosters"]] == [saved]
    assert next_week.emit("roster_load", {"roster_id": saved}, callback=True)["ok"]
    strangers = make_table(other_browser, "Another GM's table")
    assert strangers.library != tuesday.library
    assert gm_of(strangers).emit("sync", {}, callback=True)["table"]["rosters"] == []
    # the GM link opened in a new browser (a second screen): tables made there join the same library
    laptop = app.test_client()
    assert laptop.get(f"/t/{tuesday.slug}/gm?key={tuesday.gm_token}").status_code == 302
    assert make_table(laptop, "Made on the laptop").library == tuesday.library
    # the library key is the browser's and the server's only: no page or payload carries it
    page = my_browser.get(f"/t/{tuesday.slug}/gm").get_data(as_text=True)
    assert tuesday.library not in page
    assert tuesday.library not in json.dumps(next_week.get_received())


def test_a_database_from_before_roster_libraries_is_brought_up_to_date(tmp_path: Path) -> None:
    """Its tables and rosters share one library, as every roster was shared before."""
    import sqlalchemy as sa

    from webapp.db import create_tables, make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    create_tables(engine)
    with engine.begin() as conn:  # the schema as it was
        for table in ("game_table", "roster"):
            conn.execute(sa.text(f"DROP INDEX ix_{table}_library"))
            conn.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN library"))
        conn.execute(sa.text("DROP TABLE alembic_version"))  # and from before the migrations
        conn.execute(sa.text("INSERT INTO game_table (slug, name, system_id, join_code, gm_token, lineup, options, gm_notes, created_at) "
                             "VALUES ('old', 'Old table', 'phantoms-bane', 'OLDCDE', 'old-gm-key', '[]', '{}', '', '2026-01-01')"))
        conn.execute(sa.text("INSERT INTO roster (name, system_id, created_at) VALUES ('Old roster', 'phantoms-bane', '2026-01-01')"))
    engine.dispose()
    app = make_app(tmp_path, database_url=f"sqlite:///{tmp_path / 'old.sqlite3'}")
    service = app.extensions["battleboard"].service
    old = service.table(slug="old")
    assert old.library == "shared"
    assert [r["name"] for r in service.rosters("phantoms-bane", old.library)] == ["Old roster"]
    new = service.create_table("New table", "phantoms-bane")
    assert new.library != "shared" and service.rosters("phantoms-bane", new.library) == []
    create_tables(service.engine)  # a second start changes nothing
    service.engine.dispose()


def test_tables_cannot_be_created_in_a_flood(tmp_path: Path) -> None:
    app = make_app(tmp_path, tables_per_minute=3)
    service = app.extensions["battleboard"].service
    script = app.test_client()
    for i in range(3):
        assert script.post("/tables", data={"name": f"Spam {i}", "system": "phantoms-bane"}).status_code == 302
    refused = script.post("/tables", data={"name": "Spam 4", "system": "phantoms-bane"})
    assert refused.status_code == 429 and "Too many new tables" in refused.get_data(as_text=True)
    with service.session() as s:
        assert len(s.exec(select(GameTable)).all()) == 3
    other = app.test_client()  # another address is not held up
    assert other.post("/tables", data={"name": "A GM", "system": "phantoms-bane"}, environ_base={"REMOTE_ADDR": "10.0.0.9"}).status_code == 302
    service.engine.dispose()
