"""A phone's screen stays awake on the LAN (issue 33). On plain http (http://192.168.x.y:5000) the
browser has no Screen Wake Lock API, so the page falls back on NoSleep.js, served by the board
(pinned and checked like the Socket.IO client), and engages it on the player's first tap (a video
may start only on a gesture). The tests remove the API from Chromium with an init script, as a page
on a LAN address has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer
from tests.browser.test_display import prepare, service_for
from tests.browser.test_duel import PHONE

# what a page served over plain http sees: no navigator.wakeLock at all
NO_WAKE_LOCK = "delete Navigator.prototype.wakeLock;"


def seated_phone(browser: Any, server: LiveServer, *, wake_lock: bool) -> tuple[Any, Any]:
    slug, _ = prepare(server, "phantoms-bane")
    service = service_for(server)
    code = service.table(slug=slug).join_code
    service.engine.dispose()
    context = browser.new_context(**PHONE)
    if not wake_lock:
        context.add_init_script(NO_WAKE_LOCK)
    phone = context.new_page()
    phone.goto(f"{server.url}/j/{code}")
    phone.fill("[data-testid=join-name]", "Alice")
    phone.click("[data-testid=join-submit]")
    phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
    return context, phone


def test_without_the_wake_lock_api_a_players_first_tap_engages_nosleep(browser: Any, live_server: LiveServer, shots: Path) -> None:
    context, phone = seated_phone(browser, live_server, wake_lock=False)
    try:
        assert phone.evaluate("'wakeLock' in navigator") is False
        # the fallback is loaded as the page goes live, and waits for a tap
        expect(phone.locator("script[data-testid=nosleep-script]")).to_have_count(1)
        phone.wait_for_function("typeof window.NoSleep === 'function'")
        expect(phone.locator("body")).to_have_attribute("data-wake-lock", "off")
        phone.tap("[data-testid=connection-status]")  # the first tap anywhere on the page
        expect(phone.locator("body")).to_have_attribute("data-wake-lock", "on")
        expect(phone.locator("body")).to_have_attribute("data-wake-lock-by", "nosleep")
        phone.screenshot(path=str(shots / "phone-awake-without-wake-lock-api.png"))
        # its script came from the board itself, never another host
        source = phone.get_attribute("script[data-testid=nosleep-script]", "src") or ""
        assert source == "/vendor/NoSleep.min.js"
        # a reload keeps the seat: loaded again, engaged again on the next tap
        phone.reload()
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        phone.wait_for_function("typeof window.NoSleep === 'function'")
        expect(phone.locator("body")).to_have_attribute("data-wake-lock", "off")
        phone.tap("[data-testid=connection-status]")
        expect(phone.locator("body")).to_have_attribute("data-wake-lock-by", "nosleep")
    finally:
        context.close()


def test_with_the_wake_lock_api_the_fallback_is_never_loaded(browser: Any, live_server: LiveServer) -> None:
    context, phone = seated_phone(browser, live_server, wake_lock=True)
    try:
        assert phone.evaluate("'wakeLock' in navigator") is True
        phone.tap("[data-testid=connection-status]")
        phone.wait_for_timeout(300)
        expect(phone.locator("script[data-testid=nosleep-script]")).to_have_count(0)
        assert phone.evaluate("typeof window.NoSleep") == "undefined"
        assert phone.get_attribute("body", "data-wake-lock-by") in (None, "wake-lock")
    finally:
        context.close()


@pytest.mark.parametrize("tap", ["fullscreen", "body"])
def test_the_table_display_on_plain_http_stays_awake_from_the_first_tap(browser: Any, live_server: LiveServer, tap: str) -> None:
    slug, _ = prepare(live_server, "phantoms-bane")
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.add_init_script(NO_WAKE_LOCK)
    try:
        tv = context.new_page()
        tv.goto(f"{live_server.url}/t/{slug}/display")
        tv.wait_for_selector("[data-testid=connection-status][data-state=live]", state="attached")
        tv.wait_for_function("typeof window.NoSleep === 'function'")
        expect(tv.locator("body")).to_have_attribute("data-wake-lock", "off")
        if tap == "fullscreen":
            tv.click("[data-testid=fullscreen]")
        else:
            tv.mouse.click(960, 540)
        expect(tv.locator("body")).to_have_attribute("data-wake-lock-by", "nosleep")
    finally:
        context.close()
