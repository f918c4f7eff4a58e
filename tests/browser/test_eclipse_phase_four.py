"""Eclipse Phase in real Chromium: a four-combatant fight, two players on phones, the GM screen and a spectator,
from initiative to the end, each page doing whatever its board offers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import LiveServer, SocketSpy, create_table, wait_for_client_seed
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser


def setup_table(gm: Any, server: LiveServer) -> None:
    create_table(gm, server, "Tunnel fight", "eclipse-phase", ("Jinx", "Habitat guard", "Security synth", "Scrap drone"))
    # Jinx and the guard on side A, the synth and the drone on side B
    gm.select_option("[data-testid=lineup-1] select[aria-label=side]", "A")


CAUGHT_UP = "(v) => Number(document.querySelector('[data-testid=battle]')?.dataset.version) >= v"


def act(page: Any) -> bool:
    """Do the first thing this page may do; True if it did something."""
    for selector in ("[data-testid^=ep-defend-]", "[data-testid^=ep-accept-]"):
        loc = page.locator(selector)
        if loc.count():
            loc.first.click()
            return True
    declare = page.locator("[data-testid=ep-declare-attack]")
    if declare.count() and declare.is_enabled():
        declare.click()
        return True
    end = page.locator("[data-testid=ep-end-turn]")
    if end.count():
        end.click()
        return True
    return False


def test_four_combatants_two_phones(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_ctx, bob_ctx = browser.new_context(**PHONE), browser.new_context(**PHONE)
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    try:
        gm, alice, bob, watch = (c.new_page() for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx))
        for p in (gm, alice, bob, watch):
            p.on("pageerror", lambda e: errors.append(str(e)))
        setup_table(gm, live_server)
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        spy = SocketSpy(watch)
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=start-battle]")
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-initiative]")
        for phone in (alice, bob):  # the phones' client seeds are in before anyone acts (the same dice every run)
            wait_for_client_seed(phone)
        assert alice.evaluate("document.documentElement.scrollWidth") <= 375
        # a player's phone folds every combatant's card away (not drawn while folded); opened, it
        # shows numbers only for its own combatant
        assert alice.locator("[data-testid=ep-roster] [data-testid^=ep-combatant-]").count() == 0
        alice.click("[data-testid=ep-roster-open]")
        alice.wait_for_selector("[data-testid=ep-combatant-c3]")
        assert alice.locator("[data-testid=ep-pools-c1]").count() == 1
        assert alice.locator("[data-testid=ep-pools-c3]").count() == 0
        # players move by tapping a highlighted square when it is their turn
        moved = False
        for step in range(1500):
            if watch.locator("[data-testid=outcome]").count():
                break
            if not moved:
                for phone in (alice, bob):
                    if phone.locator("[data-testid=ep-move]").count():
                        phone.click("[data-testid=ep-move]")
                        phone.wait_for_selector("[data-testid=ep-move-hint]")
                        phone.screenshot(path=str(shots / "phone-move-mode.png"), full_page=True)
                        phone.click("[data-testid=ep-move]")  # cancel
                        moved = True
                        break
            did = False
            for page in (alice, bob, gm):
                version = page.get_attribute("[data-testid=battle]", "data-version")
                if act(page):
                    did = True
                    try:  # wait for the server's answer to reach this page, then the others (so the next
                        # page to act is chosen from the same board every run)
                        page.wait_for_selector(f"[data-testid=battle]:not([data-version='{version}'])", timeout=5000)
                        now = int(page.get_attribute("[data-testid=battle]", "data-version") or 0)
                        for other in (alice, bob, gm):
                            other.wait_for_function(CAUGHT_UP, arg=now)
                    except PlaywrightTimeout:
                        pass  # refused (e.g. the board moved on meanwhile): look again
                    break
            if step == 3:
                for name, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
                    p.screenshot(path=str(shots / f"{name}-early.png"), full_page=True)
            if not did:
                gm.wait_for_timeout(200)
        watch.wait_for_selector("[data-testid=outcome]", timeout=5000)
        for name, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
            p.screenshot(path=str(shots / f"{name}-end.png"), full_page=True)
        assert not errors, errors
        assert '"durability"' not in spy.text() and '\\\\"durability\\\\"' not in spy.text()
        assert watch.locator("[data-testid=ep-att-roll]").count() == 1
    finally:
        for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx):
            c.close()
