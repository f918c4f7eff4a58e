"""The sixth system in real Chromium: a GM starts a one-die duel (tests/systems/one_die/, registered by
BATTLEBOARD_SYSTEMS alone, which every server the tests start inherits) on the GM console and plays it
with the generic board module; the TV shows it with the generic display module (the system brings no
front end: its traits say ``board_module: "generic"``), readable from across the room at 1080p."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, at_rest, create_table
from tests.browser.test_display import assert_fits, measure

pytestmark = pytest.mark.browser


def test_the_gm_starts_a_one_die_duel_and_the_tv_shows_it(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        gm, tv = gm_context.new_page(), tv_context.new_page()
        create_table(gm, live_server, "Dice at dawn", "one-die", ("Ann the Bold", "Bert the Brave"))
        slug = gm.evaluate("document.body.dataset.table")
        spy = SocketSpy(tv)
        tv.goto(f"{live_server.url}/t/{slug}/display")
        tv.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(tv.locator("[data-testid=turn-cue]")).to_contain_text("Waiting")

        gm.click("[data-testid=start-battle]")
        # the GM console draws the duel with the generic module: whose turn, and a button per legal entry
        gm.wait_for_selector("[data-action=roll][data-combatant=c1]")
        expect(gm.locator("[data-testid=acting]").first).to_have_text("Round 1, roll the die")
        tv.wait_for_selector("[data-testid=board] [data-testid=generic-board]")
        expect(tv.locator("[data-testid=board] [data-testid=combatant-c1]")).to_contain_text("Ann the Bold")
        expect(tv.locator("[data-testid=board] [data-testid=combatant-c2]")).to_contain_text("Bert the Brave")
        expect(tv.locator("[data-testid=phase]")).to_have_text("Round 1, roll the die")

        gm.click("[data-action=roll][data-combatant=c1]")
        # the first roll of the round stays with its side: the TV hears that Ann rolled, not what
        expect(tv.locator("[data-testid=log]")).to_contain_text("Ann the Bold has rolled.")
        expect(tv.locator("[data-testid=turn-cue]")).to_have_text("Now: Bert the Brave")
        gm.click("[data-action=roll][data-combatant=c2]")
        expect(tv.locator("[data-testid=phase]")).to_have_text("Round 2, roll the die")
        expect(tv.locator("[data-testid=last-result-words]")).to_contain_text("Round 1: ")
        at_rest(tv)  # the dice settle before the screenshot
        tv.screenshot(path=str(shots / "display-one-die-1080p.png"))
        m = measure(tv)
        assert_fits(m, "1920×1080")
        assert m["smallest"] >= 24 - 0.01, f"text {m['smallestText']!r} is {m['smallest']:.1f} px at 1080p"
        assert m["board"]["w"] * m["board"]["h"] >= 0.5 * 1920 * 1080, f"the board covers only {m['board']}"
        for t in m["tokens"]:
            assert t["w"] >= 64 and t["h"] >= 64, f"token {t['id']} is {t['w']:.0f}×{t['h']:.0f} px"

        # the GM rolls for both until someone has three hits; the TV says it is over and who is out
        for _ in range(60):
            if gm.locator("[data-action=force]").count() == 0:
                break
            gm.click("[data-action=force]")
            gm.wait_for_timeout(150)
        expect(tv.locator("[data-testid=turn-cue]")).to_have_text("The battle is over")
        expect(tv.locator("[data-testid=board] [data-out=true]")).to_have_count(1)
        expect(tv.locator("[data-testid=last-result-words]")).to_contain_text("(3 of 3)")
        expect(tv.locator("[data-testid=log]")).to_contain_text("wins the duel.")
        at_rest(tv)
        tv.screenshot(path=str(shots / "display-one-die-ended-1080p.png"))
        assert "in secret" not in spy.text(), "a secret roll's face reached the TV"
    finally:
        gm_context.close()
        tv_context.close()
