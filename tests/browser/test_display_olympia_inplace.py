"""The Olympia table display updates its board in place: a unit's block is the same element after an
update (its numbers rewritten, not the board redrawn), a unit that lost men shows its "−N" badge, and
the badge is gone again after an update in which the unit lost no one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import LiveServer
from tests.browser.test_display import gm_declares, open_display, prepare

pytestmark = pytest.mark.browser


def test_the_olympia_display_keeps_its_unit_blocks_across_updates(browser: Any, live_server: LiveServer) -> None:
    helper_context = browser.new_context()
    helper = helper_context.new_page()
    slug, gm_token = prepare(live_server, "olympia")
    context, page, _spy = open_display(browser, f"{live_server.url}/t/{slug}/display", 1920, 1080)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.wait_for_selector("[data-testid=board] [data-testid=unit-c1]")
        men_text = page.inner_text("[data-testid=unit-c1] .old-unit-men")
        # mark the block, the board's skeleton and the strength bar: a redraw would make new elements
        page.evaluate("""() => {
          document.querySelector('[data-testid=unit-c1]').__kept = true;
          document.querySelector('[data-testid=board] .old').__kept = true;
          document.querySelector('[data-testid=strength-A]').__kept = true;
        }""")
        assert page.locator("[data-testid=unit-c1] .old-loss").count() == 0

        gm_declares(helper, live_server, slug, gm_token, {"type": "begin"}, {"type": "step", "by": "phase"})
        page.wait_for_selector("[data-testid=unit-c1] .old-loss")
        kept = page.evaluate("""() => [
          document.querySelector('[data-testid=unit-c1]').__kept === true,
          document.querySelector('[data-testid=board] .old').__kept === true,
          document.querySelector('[data-testid=strength-A]').__kept === true,
        ]""")
        assert kept == [True, True, True], f"redrawn instead of updated: {kept}"
        assert page.inner_text("[data-testid=unit-c1] .old-unit-men") != men_text
        badge = page.inner_text("[data-testid=unit-c1] .old-loss")
        assert badge.startswith("−") and int(badge[1:].replace(",", "")) > 0, badge
        assert "has-losses" in (page.get_attribute("[data-testid=unit-c1]", "class") or "")
        # the strength bar's text follows the side's strength
        assert page.inner_text("[data-testid=strength-A]").startswith("Strength ")

        # the whole battle: every update applied to the same blocks, the broken side marked
        gm_declares(helper, live_server, slug, gm_token, {"type": "step", "by": "battle"})
        page.wait_for_selector("[data-testid^=side-][data-broken=true]")
        assert page.evaluate("() => document.querySelector('[data-testid=unit-c1]').__kept === true")
        assert page.locator("[data-testid^=side-].is-broken .old-broken-tag").inner_text() == "BROKEN"
        assert not errors, errors
    finally:
        context.close()
        helper_context.close()
