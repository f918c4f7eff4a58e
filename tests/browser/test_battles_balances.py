"""A Battles&Balances fight in real Chromium: the GM builds it, a 375 px phone spends action points,
the spectator follows the AP panel, and the GM runs a check whose result shows on the shared screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, box_of, create_table

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def test_action_points_shown_and_spent_from_a_phone(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    watch_context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        gm, phone, watch = gm_context.new_page(), phone_context.new_page(), watch_context.new_page()
        create_table(gm, live_server, "Ostgrund", "battles-and-balances", ("Prince Vasyl of Ostgrund", "Shock Trooper"))
        phone.goto(gm.get_attribute("[data-testid=join-link]", "href"))
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.wait_for_selector("[data-testid=lineup-controller-0] >> option:has-text('Player: Alice')", state="attached")
        gm.select_option("[data-testid=lineup-controller-0]", label="Player: Alice")
        expect(gm.locator("[data-testid=lineup-controller-0] option:checked")).to_have_text("Player: Alice")
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=start-battle]")

        # The prince (c1) acts first with his full 16 AP; the trooper (c2) stands across the grid.
        phone.wait_for_selector("[data-testid=action-move]")
        expect(phone.locator("[data-testid=ap-c1]")).to_have_attribute("data-ap", "16")
        expect(watch.locator("[data-testid=ap-c2]")).to_have_attribute("data-ap", "24")
        expect(watch.locator("[data-testid=timeline] li").first).to_contain_text("Prince Vasyl")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "the phone page scrolls sideways"
        box = box_of(phone.locator("[data-testid=action-move]"))
        assert box and box["height"] >= 44

        # Move next to the trooper: tap Move, then the square left of the trooper (cost = squares moved).
        phone.click("[data-testid=action-move]")
        trooper = watch.locator("[data-testid=board] [data-testid=token-c2]")  # the display's board (the details repeat it)
        expect(trooper).to_be_visible()
        grid = phone.locator("[data-testid=bb-grid] svg")
        grid.scroll_into_view_if_needed()
        where = phone.get_attribute("[data-testid=bb-grid] [data-testid=token-c2]", "transform")
        cx, cy = (float(v) for v in where.removeprefix("translate(").removesuffix(")").split())
        # the square just left of the trooper (44 SVG units per square), on the screen through the
        # grid's own transform (the phone's grid opens on the fight, not on the whole board)
        x, y = phone.evaluate(
            """([x, y]) => { const svg = document.querySelector('[data-testid=bb-grid] svg');
                 const p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM()); return [p.x, p.y]; }""", [cx - 44, cy])
        phone.mouse.click(x, y)
        expect(phone.locator("[data-testid=ap-c1]")).to_have_attribute("data-ap", "8")  # 16 - 8 squares
        expect(watch.locator("[data-testid=ap-c1]")).to_have_attribute("data-ap", "8")
        phone.screenshot(path=str(shots / "phone-after-move.png"), full_page=True)

        # The GM attacks with the trooper (9 AP), then the phone attacks (5 AP) with the cost on the button.
        gm.click("[data-testid=action-attack-c1]")
        expect(gm.locator("[data-testid=ap-c2]")).to_have_attribute("data-ap", "15")
        attack = phone.locator("[data-testid=action-attack-c2]")
        expect(attack).to_have_attribute("data-cost", "5")
        attack.click()
        expect(watch.locator("[data-testid=ap-c1]")).to_have_attribute("data-ap", "3")
        phone.wait_for_selector("[data-testid=bb-roll] .die >> nth=3")  # his pool shown die by die (at least 4 dice)
        phone.screenshot(path=str(shots / "phone-after-attack.png"), full_page=True)

        # A static check from the GM's tools, shown on the shared screen.
        gm.click("[data-testid=open-check]")
        gm.fill(".bb-tool-form input[name=name]", "Jinx")
        gm.fill(".bb-tool-form input[name=dice]", "4")
        gm.fill(".bb-tool-form input[name=size]", "6")
        gm.click("[data-testid=tool-check]")
        expect(watch.locator("[data-testid=last-result]")).to_be_visible()
        watch.screenshot(path=str(shots / "spectator-check.png"), full_page=True)
        gm.screenshot(path=str(shots / "gm-check.png"), full_page=True)
    finally:
        for context in (gm_context, phone_context, watch_context):
            context.close()
