"""Issue 32 in real Chromium: a page of another origin auto-submits every form of the board while a
GM's and a player's sessions are open, and changes nothing; the GM's console keeps the GM link at hand
(copy, QR code, warning), replaces it, and the front page lists the GM's tables."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, create_table

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


class Attacker:
    """Another website on this machine: a page at /<n> auto-submits one forged form to the board."""

    def __init__(self, pages: list[str]) -> None:
        bodies = [page.encode() for page in pages]

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                body = bodies[int(self.path.strip("/"))]
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def forged_pages(board: str, slug: str, code: str) -> list[tuple[str, str]]:
    """(the board's address it posts to, the attacker's page) for each state-changing form and request."""

    def form(action: str, fields: dict[str, str], enctype: str = "application/x-www-form-urlencoded") -> str:
        inputs = "".join(f'<input name="{k}" value="{v}">' for k, v in fields.items())
        return (f'<form method="post" action="{board}{action}" enctype="{enctype}">{inputs}</form>'
                "<script>document.forms[0].submit()</script>")

    upload = (f"<script>fetch('{board}/t/{slug}/images', {{method: 'POST', mode: 'no-cors', credentials: 'include',"
              " headers: {'Content-Type': 'text/plain'}, body: 'not an image'})</script>")
    return [
        ("/tables", form("/tables", {"name": "Forged table", "system": "phantoms-bane"})),
        ("/join", form("/join", {"code": code, "name": "Forged seat"})),
        ("/pair", form("/pair", {"code": "ABC123", "table": slug})),
        ("/import", form("/import", {"battle": "{}"}, "multipart/form-data")),
        (f"/t/{slug}/join-code", form(f"/t/{slug}/join-code", {})),
        (f"/t/{slug}/gm-key", form(f"/t/{slug}/gm-key", {})),
        (f"/t/{slug}/images", upload),
    ]


def board_cookies(context: Any, server: LiveServer) -> list[tuple[str, str]]:
    """The board's cookies of a context, each by what it holds: a signed session cookie without its
    time and signature (the board's own pages, still open, re-sign the same session with a newer
    time on any request they make: a permanent session is refreshed on each; what must not change is
    what the session holds)."""
    return sorted((c["name"], c["value"].rsplit(".", 2)[0] if c["name"] == "session" else c["value"])
                  for c in context.cookies(server.url))


def test_a_page_of_another_origin_changes_no_session(live_server: LiveServer, browser: Any, shots: Path) -> None:
    server = live_server
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    phone_context = browser.new_context(**PHONE)
    try:
        gm = gm_context.new_page()
        create_table(gm, server, "Trusted table", "phantoms-bane")
        slug = gm.evaluate("document.body.dataset.table")
        code = gm.inner_text("[data-testid=join-code-display]").strip()
        phone = phone_context.new_page()
        phone.goto(f"{server.url}/j/{code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        targets = forged_pages(server.url, slug, code)
        attacker = Attacker([page for _, page in targets])
        try:
            for context, own in ((gm_context, gm), (phone_context, phone)):
                before = board_cookies(context, server)
                evil = context.new_page()
                # two other origins: another port of the same host (same-site: the cookie goes along),
                # and another host (cross-site: SameSite=Lax keeps the cookie back)
                for origin in (f"http://127.0.0.1:{attacker.port}", f"http://localhost:{attacker.port}"):
                    for n, (path, _page) in enumerate(targets):
                        with evil.expect_response(lambda r, p=path: r.url == server.url + p and r.request.method == "POST") as answer:
                            evil.goto(f"{origin}/{n}")
                        response = answer.value
                        assert response.status == 403, (origin, path, response.status)
                        assert "set-cookie" not in {k.lower() for k in response.all_headers()}, (origin, path)
                        if path == "/tables":  # what the victim's browser shows: the board's refusal
                            evil.wait_for_selector("[role=alert]")
                            evil.screenshot(path=str(shots / "refused.png"))
                evil.close()
                assert board_cookies(context, server) == before
                own.reload()
                own.wait_for_selector("[data-testid=connection-status][data-state=live]")
        finally:
            attacker.close()
        # nothing changed: the join code and the GM key hold, the front page lists one table
        assert gm.inner_text("[data-testid=join-code-display]").strip() == code
        gm.goto(server.url + "/")
        expect(gm.locator("[data-testid=my-table]")).to_have_count(1)
        expect(phone.locator("[data-testid=connection-status]")).to_have_attribute("data-state", "live")
    finally:
        gm_context.close()
        phone_context.close()


def test_the_gm_link_is_at_hand_and_replacing_it_stops_the_old_console(live_server: LiveServer, browser: Any, shots: Path) -> None:
    server = live_server
    here = browser.new_context(viewport={"width": 1280, "height": 900})
    there = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        gm = here.new_page()
        create_table(gm, server, "Lich crypt", "adnd")
        gm.click("[data-testid=tab-join]")
        gm.click("[data-testid=gm-link-panel] summary")
        link = gm.input_value("[data-testid=gm-link]")
        assert "/gm?key=" in link
        expect(gm.locator("[data-testid=gm-link-qr]")).to_be_visible()
        expect(gm.locator("[data-testid=gm-link-panel]")).to_contain_text("Whoever holds this link is the GM")
        gm.click("[data-testid=copy-gm-link]")
        expect(gm.locator("[data-testid=copy-status]")).not_to_be_empty()
        # the server here listens on 127.0.0.1 only: the link says phones cannot open it
        expect(gm.locator("[data-testid=join-warning]")).to_contain_text("phones cannot open this link")
        gm.locator("[data-testid=join-panel]").screenshot(path=str(shots / "gm-join-panel.png"))
        gm.locator("[data-testid=gm-link-panel]").screenshot(path=str(shots / "gm-link-panel.png"))
        # the same GM on another device opens the link: a second console
        other = there.new_page()
        other.goto(link)
        other.wait_for_selector("[data-testid=connection-status][data-state=live]")
        # the GM replaces the link: this console goes on, the other is told and stops
        gm.click("[data-testid=revoke-gm-link]")
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(other.locator("[data-testid=connection-status]")).to_have_attribute("data-state", "refused")
        expect(other.locator("main")).to_contain_text("the GM link was replaced")
        other.screenshot(path=str(shots / "old-console-told.png"))
        gm.click("[data-testid=gm-link-panel] summary")
        assert gm.input_value("[data-testid=gm-link]") != link
        # the front page lists the table with its console, display and join links
        gm.goto(server.url + "/")
        row = gm.locator("[data-testid=my-table]")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("Lich crypt")
        gm.locator("[data-testid=my-tables]").screenshot(path=str(shots / "my-tables.png"))
        row.locator("[data-testid=my-table-console]").click()
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
    finally:
        here.close()
        there.close()
