"""A Phantom's Bane duel in real Chromium: GM screen, a 375×667 phone and a spectator, in separate contexts."""

from __future__ import annotations

import re
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import (
    LiveServer,
    SocketSpy,
    at_rest,
    box_of,
    create_table,
    start_with_seeds_in_turn,
)
from tests.conftest import CSRF_FIELD
from tests.flaky_line import FlakyLine

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def create_duel_table(gm: Any, server: LiveServer, *, by_form: bool = False) -> None:
    create_table(gm, server, "Tuesday duel", "phantoms-bane", ("Jharek", "Wild Monster"), by_form=by_form)


def join_as(phone: Any, gm: Any, name: str, *, by_form: bool = False) -> None:
    """A phone joins the GM's table by its join link. ``by_form``: on the join page's form, as a
    player does (the duel's first test). Otherwise the phone sends what that form sends (the code,
    the name, its session's CSRF token) and opens the page it is sent to: the same seat, without
    drawing the join page first."""
    join_url = gm.get_attribute("[data-testid=join-link]", "href")
    if by_form:
        phone.goto(join_url)
        phone.fill("[data-testid=join-name]", name)
        phone.click("[data-testid=join-submit]")
    else:
        form = phone.request.get(join_url)
        token, code = CSRF_FIELD.search(form.text()), re.search(r'name="code" value="([^"]*)"', form.text())
        assert form.ok and token and code, f"no join form at {join_url} ({form.status})"
        joined = phone.request.post(urllib.parse.urljoin(join_url, "/join"), max_redirects=0,
                                    form={"code": code.group(1), "name": name, "csrf_token": token.group(1)})
        assert joined.status in (302, 303), f"{name} did not join ({joined.status}): {joined.text()[:300]}"
        phone.goto(urllib.parse.urljoin(join_url, joined.headers["location"]))
    phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
    # the GM's console has the new seat before the test edits the lineup: a table update of the join
    # still on its way would otherwise draw the lineup as it was before an edit made meanwhile
    if gm.locator("[data-testid=lineup-controller-0]").count():
        expect(gm.locator(f"[data-testid=lineup-controller-0] >> option:has-text('Player: {name}')")).to_be_attached()


def give_to_player(gm: Any, index: int, player: str) -> None:
    gm.wait_for_selector(f"[data-testid=lineup-controller-{index}] >> option:has-text('Player: {player}')", state="attached")
    gm.select_option(f"[data-testid=lineup-controller-{index}]", label=f"Player: {player}")
    expect(gm.locator(f"[data-testid=lineup-controller-{index}] option:checked")).to_have_text(f"Player: {player}")


def start(gm: Any) -> None:
    gm.click("[data-testid=start-battle]")
    gm.wait_for_selector("[data-testid=turn]")


def secret_leaks(text: str, option: str) -> list[str]:
    """Ways a pending choice could show in what a socket received."""
    patterns = [rf'"choice":\s*"{option}"', rf"will {option.replace('_', ' ')} this turn"]
    return [p for p in patterns if re.search(p, text)]


def test_a_duel_from_gm_screen_to_phone_to_spectator(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    watch_context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        gm, phone, watch = gm_context.new_page(), phone_context.new_page(), watch_context.new_page()
        create_duel_table(gm, live_server, by_form=True)  # (the front page's form, as a GM fills it)
        join_as(phone, gm, "Alice", by_form=True)
        give_to_player(gm, 0, "Alice")
        watch_spy = SocketSpy(watch)
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        start(gm)
        phone.wait_for_selector("[data-testid=choose-attack][data-combatant=c1]")
        # The phone shows only Jharek's buttons, big enough for a thumb.
        assert phone.locator("[data-testid^=choose-][data-combatant=c2]").count() == 0
        box = box_of(phone.locator("[data-testid=choose-press]"))
        assert box and box["height"] >= 44 and box["width"] >= 44
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "the phone page scrolls sideways"

        phone.click("[data-testid=choose-press]")
        watch.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        assert not secret_leaks(watch_spy.text(), "press"), "the spectator received the choice before the reveal"
        gm.screenshot(path=str(shots / "gm-one-side-chosen.png"), full_page=True)

        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        watch.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        phone.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        assert watch.locator("[data-testid=dice-tray] .kit-die").count() >= 4
        at_rest(watch)  # before the screenshots
        # on the spectator's laptop the two duellists stand face to face, both whole on the board
        board = box_of(watch.locator("[data-testid=board]"))
        cards = [box_of(watch.locator(f"[data-testid=board] [data-testid=combatant-{cid}]")) for cid in ("c1", "c2")]
        assert board and all(cards)
        for card in cards:
            assert card["y"] >= board["y"] - 1 and card["y"] + card["height"] <= board["y"] + board["height"] + 1, (card, board)
        assert cards[0]["x"] + cards[0]["width"] <= cards[1]["x"], f"the duellists are not side by side: {cards}"
        watch.screenshot(path=str(shots / "spectator-after-turn-1.png"), full_page=True)
        phone.screenshot(path=str(shots / "phone-after-turn-1.png"), full_page=True)
        gm.screenshot(path=str(shots / "gm-after-turn-1.png"), full_page=True)

        # Play on to the end.
        for _ in range(40):
            if watch.locator("[data-testid=outcome]").count():
                break
            turn = watch.get_attribute("[data-testid=last-turn]", "data-turn")
            # both sides tap at the same moment, once both screens show the new turn: the second choice to
            # land was made on the version before the first and still counts (no "moved on", no second tap)
            for page in (gm, phone):
                page.wait_for_selector("[data-testid=chosen-c1][data-chosen=false]")
                page.wait_for_selector("[data-testid=chosen-c2][data-chosen=false]")
            phone.click("[data-testid=choose-attack][data-combatant=c1]", no_wait_after=True)
            gm.click("[data-testid=choose-attack][data-combatant=c2]", no_wait_after=True)
            watch.wait_for_selector(f"[data-testid=last-turn]:not([data-turn='{turn}']), [data-testid=outcome]")
            for page in (gm, phone):
                shown = page.locator("[data-testid=notice]:visible")
                assert not (shown.count() and "moved on" in shown.inner_text()), "a simultaneous choice was refused"
        watch.wait_for_selector("[data-testid=outcome]")
        phone.wait_for_selector("[data-testid=outcome]")
        watch.screenshot(path=str(shots / "spectator-end.png"), full_page=True)
        phone.screenshot(path=str(shots / "phone-end.png"), full_page=True)
        gm.screenshot(path=str(shots / "gm-end.png"), full_page=True)
    finally:
        for context in (gm_context, phone_context, watch_context):
            context.close()


def test_a_second_player_never_sees_the_first_players_choice(browser: Any, live_server: LiveServer) -> None:
    gm_context, alice_context, bob_context = (browser.new_context(**PHONE) for _ in range(3))
    try:
        gm, alice, bob = gm_context.new_page(), alice_context.new_page(), bob_context.new_page()
        create_duel_table(gm, live_server)
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        bob_spy = SocketSpy(bob)
        # the phones' client seeds in, one after the other (the same dice every run); Bob's page opens
        # again after Alice's seed, its socket recorded from its first frame
        start_with_seeds_in_turn(lambda: start(gm), (alice, bob))
        alice.click("[data-testid=choose-defend][data-combatant=c1]")
        bob.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        assert not secret_leaks(bob_spy.text(), "defend")
        bob.click("[data-testid=choose-attack][data-combatant=c2]")
        bob.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        assert "Defend" in bob.inner_text("[data-testid=last-turn]"), "after the reveal both choices show"
    finally:
        for context in (gm_context, alice_context, bob_context):
            context.close()


def test_a_server_restart_mid_turn_keeps_the_fight(browser: Any, tmp_path: Path, shots: Path) -> None:
    server = LiveServer(tmp_path / "instance").start()
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    try:
        gm, phone = gm_context.new_page(), phone_context.new_page()
        create_duel_table(gm, server)
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        start(gm)
        phone.click("[data-testid=choose-run_away][data-combatant=c1]")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")

        server.kill()
        phone.wait_for_selector("[data-testid=connection-status][data-state=reconnecting]")
        gm.wait_for_selector("[data-testid=connection-status][data-state=reconnecting]")
        phone.screenshot(path=str(shots / "phone-reconnecting.png"), full_page=True)
        server = LiveServer(server.instance, port=server.port).start()

        phone.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=20_000)
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=20_000)
        phone.wait_for_selector("[data-testid=choose-run_away][data-combatant=c1][aria-pressed=true]")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        phone.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        assert "Run Away" in phone.inner_text("[data-testid=last-turn]")
    finally:
        gm_context.close()
        phone_context.close()
        server.stop()


def test_a_phone_that_loses_its_network_says_so_and_catches_up(browser: Any, tmp_path: Path, shots: Path) -> None:
    """Out of the Wi-Fi's range no packet says goodbye: the connection just goes silent. When the
    phone's browser reports the network gone, the page shows "reconnecting" at once, and tries again
    the moment the browser reports it back (not when its back-off timer says, up to 3 s later); when
    the browser does not know (the phone moved to another network), the unanswered pings show it
    within their interval plus timeout (2 + 2 s here). Either way the page catches up."""
    server = LiveServer(tmp_path / "instance", env={"BATTLEBOARD_PING_INTERVAL": "2", "BATTLEBOARD_PING_TIMEOUT": "2"}).start()
    line = FlakyLine(server.port)  # the phone's Wi-Fi
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    try:
        gm, phone = gm_context.new_page(), phone_context.new_page()
        create_duel_table(gm, server)
        join_link = gm.get_attribute("[data-testid=join-link]", "href").replace(server.url, line.url)
        phone.goto(join_link)
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        give_to_player(gm, 0, "Alice")
        start(gm)
        phone.wait_for_selector("[data-testid^=choose-][data-combatant=c1]")  # (the start reached the phone before its line goes)
        live = "[data-testid=connection-status][data-state=live]"
        reconnecting = "[data-testid=connection-status][data-state=reconnecting]"

        # 1. the browser knows: the page says so at once, long before a ping could
        line.silence()
        phone.evaluate("window.dispatchEvent(new Event('offline'))")
        phone.wait_for_selector(reconnecting, timeout=1_000)
        phone.locator("[data-testid^=choose-][data-combatant=c1]").first.click()
        expect(phone.locator("[data-testid=notice]")).to_contain_text("reconnecting")
        phone.screenshot(path=str(shots / "phone-offline.png"), full_page=True)
        gm.locator("[data-testid^=choose-][data-combatant=c2]").first.click()  # the table plays on
        gm.wait_for_selector("[data-testid=chosen-c2][data-chosen=true]")
        # the phone's retries meanwhile back off: after two refused, the next waits 2 to 3 s
        # (Socket.IO's 1 s doubled each time, ±50 %, at most reconnectionDelayMax: 3 s), so the
        # page that is live within 1.8 s of the network's return tried at once, not on its timer (a
        # second, as before, was too short for a page on a machine running two copies of the suite)
        refused = line.refused
        deadline = time.monotonic() + 15
        while line.refused < refused + 2:
            assert time.monotonic() < deadline, "the phone did not try to reconnect"
            phone.wait_for_timeout(50)
        assert phone.locator("[data-testid=chosen-c2][data-chosen=true]").count() == 0, "nothing reached the phone"
        line.restore()
        phone.evaluate("window.dispatchEvent(new Event('online'))")  # back: it tries at once
        phone.wait_for_selector(live, timeout=1_800)
        phone.wait_for_selector("[data-testid=chosen-c2][data-chosen=true]")

        # 2. the browser does not know: the unanswered pings tell the page
        line.silence()
        silenced = time.monotonic()
        phone.wait_for_selector(reconnecting, timeout=8_000)
        assert time.monotonic() - silenced < 2 + 2 + 2
        gm.click("[data-testid=force-resolve]")  # the GM settles the turn for the absent player
        gm.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        line.restore()
        phone.wait_for_selector(live, timeout=10_000)
        phone.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        phone.screenshot(path=str(shots / "phone-caught-up.png"), full_page=True)
    finally:
        gm_context.close()
        phone_context.close()
        line.close()
        server.stop()


def test_a_restart_reaches_every_screen_without_a_round_trip(browser: Any, live_server: LiveServer) -> None:
    """The new battle's first update carries its whole view, so no page asks for it again."""
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    watch_context = browser.new_context(viewport={"width": 1280, "height": 720})
    sent: list[str] = []  # every Socket.IO frame the three pages send
    try:
        gm, phone, watch = gm_context.new_page(), phone_context.new_page(), watch_context.new_page()
        for page in (gm, phone, watch):
            page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(str(frame))))
        create_duel_table(gm, live_server)
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        start(gm)
        phone.click("[data-testid=choose-attack][data-combatant=c1]")
        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        for page in (gm, phone, watch):
            page.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        assert [frame for frame in sent if '["sync"' in frame], "the spy sees the pages' frames"
        before_restart = len(sent)
        gm.on("dialog", lambda dialog: dialog.accept())
        gm.click("[data-testid=restart-battle]")
        for page in (gm, phone, watch):
            page.wait_for_selector("[data-testid=last-turn]:not([data-turn])")
        phone.click("[data-testid=choose-attack][data-combatant=c1]")
        watch.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        after = sent[before_restart:]
        assert any('["battle_restart"' in frame for frame in after) and any('["declare"' in frame for frame in after)
        assert not [frame for frame in after if '["sync"' in frame], after
    finally:
        for context in (gm_context, phone_context, watch_context):
            context.close()
