"""Odds on screen (issue 17) in real Chromium: a compact percentage beside each choice on the phone, the
details a tap away with the server's exact fractions, the Eclipse Phase builder's odds following the
builder, the GM console's odds for a combatant it plays, and the table display showing odds only once the
GM switches them on (its socket frames carry none before)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, create_table
from tests.browser.test_duel import PHONE, give_to_player, join_as
from tests.browser.test_phone import check_actions_on_top

pytestmark = pytest.mark.browser

PERCENT = re.compile(r"(<|>)?\d{1,3}\s%")


def odds_acks(spy: SocketSpy) -> list[dict[str, Any]]:
    """The odds answers a page received (Socket.IO ack frames ``43<id>[{...}]`` holding ``odds``)."""
    found = []
    for frame in spy.frames:
        match = re.match(r"^43\d+(\[.*\])$", frame, re.S)
        if not match or '"odds"' not in frame:
            continue
        ack = json.loads(match.group(1))[0]
        if isinstance(ack, dict) and ack.get("ok") and "odds" in ack:
            found.append(ack)
    return found


def start_with_phone(browser: Any, live_server: LiveServer, system: str, presets: tuple[str, ...], given: tuple[int, ...]) -> tuple[Any, Any, Any, Any, SocketSpy]:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_ctx = browser.new_context(**PHONE)
    gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
    spy = SocketSpy(phone)
    create_table(gm, live_server, f"Odds {system}", system, presets)
    join_as(phone, gm, "Alice")
    for index in given:
        give_to_player(gm, index, "Alice")
        gm.wait_for_selector(f"[data-testid=lineup-controller-{index}] option[selected]:has-text('Player: Alice')", state="attached")
    gm.click("[data-testid=start-battle]")
    return gm_ctx, phone_ctx, gm, phone, spy


def test_phantoms_bane_phone_shows_each_options_odds_and_the_table_a_tap_away(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx, phone_ctx, gm, phone, spy = start_with_phone(browser, live_server, "phantoms-bane", ("Jharek", "Wild Monster"), (0,))
    errors: list[str] = []
    phone.on("pageerror", lambda e: errors.append(str(e)))
    try:
        phone.wait_for_selector("body.my-turn", timeout=15_000)
        for option in ("press", "attack", "defend", "run_away"):
            button = phone.locator(f"[data-testid=choose-{option}]")
            expect(button.locator("[data-testid=odds-chip]")).to_have_text(PERCENT, timeout=10_000)
            word = "escape" if option == "run_away" else "hit"
            assert word in button.locator("[data-testid=odds-chip]").inner_text()
            # the accessible name carries the odds as text
            assert PERCENT.search(button.inner_text()), button.inner_text()
        phone.evaluate("window.scrollTo(0, 0)")
        phone.screenshot(path=str(shots / "odds-phone-phantoms-bane.png"))
        check_actions_on_top(phone, "phantoms-bane")

        # the details, a tap away: the server's own exact fractions, per foe's option
        details = phone.locator("[data-testid=odds-details]").first
        expect(details).not_to_have_attribute("open", "")
        details.locator(":scope > summary").click()
        expect(details.locator(".odds-choice")).to_have_count(4)
        exact = details.locator("[data-testid=odds-exact]").first.inner_text()
        assert re.fullmatch(r"= \d+/\d+", exact), exact
        acks = [a for a in odds_acks(spy) if a["odds"].get("choices")]
        assert acks, "the phone got its odds over its own socket"
        first_choice = acks[-1]["odds"]["choices"][0]
        assert exact == f"= {first_choice['outcomes'][0]['fraction']}", (exact, first_choice["outcomes"][0])
        details.locator(".odds-choice").first.locator(".odds-case").first.locator(":scope > summary").click()
        phone.wait_for_timeout(200)
        phone.screenshot(path=str(shots / "odds-phone-phantoms-bane-details.png"), full_page=True)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        assert not errors, errors
    finally:
        gm_ctx.close()
        phone_ctx.close()
