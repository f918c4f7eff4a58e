"""Olympia: a noble whose men are all gone is named under his side's rows on the GM console and the
player's phone, as the table display does, not left in the front row as a unit of "★ 0 men" (issue 33)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from rules.core import Viewer
from tests.browser.conftest import LiveServer
from tests.browser.test_display import service_for
from tests.browser.test_duel import PHONE

pytestmark = pytest.mark.browser

LORD = "c1"  # the leader of side A, Alice's, with three soldiers against knights
LINEUP = [
    {"name": "Lord Aric", "leader": True, "soldier": 3, "side": "A"},
    {"name": "Sir Bors", "behind": 1, "soldier": 400, "pikeman": 200, "side": "A", "controller": "gm"},
    {"name": "Knight commander", "leader": True, "knight": 10, "cavalier": 10, "paladin": 2, "side": "B", "controller": "gm"},
    {"name": "Captain of archers", "behind": 1, "archer": 30, "side": "B", "controller": "gm"},
]
ZERO_MEN = re.compile(r"(^|\D)0 men")


def test_a_noble_with_no_men_left_is_named_under_the_rows(browser: Any, live_server: LiveServer, shots: Path) -> None:
    service = service_for(live_server)
    table = service.create_table("Olympia night", "olympia")
    gm_context = browser.new_context(viewport={"width": 1024, "height": 768})
    phone_context = browser.new_context(**PHONE)
    try:
        gm, phone = gm_context.new_page(), phone_context.new_page()
        phone.goto(f"{live_server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        phone.goto("about:blank")  # (its client seed would stir the dice of the steps below)
        seat = service.seats(table.id)[0].public_id
        lineup = [dict(entry) for entry in LINEUP]
        lineup[0].update(controller="seat", seat=seat)
        service.set_lineup(table.id, lineup)
        battle_id = service.start_battle(table.id, seed="noble-alone").battle_id
        service.declare(battle_id, Viewer.gm(), {"type": "begin"})
        for _phase in range(12):  # phase by phase until the lord's three soldiers have fallen
            service.declare(battle_id, Viewer.gm(), {"type": "step", "by": "phase"})
            state = service.battle(battle_id).state
            if not sum(state["combatants"][LORD]["troops"].values()):
                break
        assert state["status"] == "active" and not sum(state["combatants"][LORD]["troops"].values()), "the lord still has men"
        service.engine.dispose()

        gm.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        phone.goto(f"{live_server.url}/t/{table.slug}/play")
        for page in (gm, phone):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")

        # the console: the lord is no block in the front row, but a line under side A's rows
        side = gm.locator("[data-testid=side-A]")
        expect(side.locator("[data-testid=unit-c2]")).to_be_visible()
        expect(side.locator(f"[data-testid=unit-{LORD}]")).to_have_count(0)
        alone = side.locator(f"[data-testid=alone-{LORD}]")
        expect(alone).to_be_visible()
        expect(alone).to_contain_text("Lord Aric")
        expect(alone).to_contain_text(re.compile(r"no men left, (fights on alone in the front row|\w+)"))
        assert not ZERO_MEN.search(side.inner_text()), side.inner_text()
        alone.scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / "console-noble-alone.png"))

        # the phone: Alice's own list says the same, and so does the army once unfolded
        mine = phone.locator("[data-testid=ol-mine]")
        expect(mine).to_contain_text(re.compile(r"Lord Aric · side A · no men left"))
        assert not ZERO_MEN.search(mine.inner_text()), mine.inner_text()
        phone.screenshot(path=str(shots / "phone-noble-alone.png"))
        fold = phone.locator("[data-testid=army-A] summary")
        expect(fold).to_contain_text("the 1 unit of side A")  # Sir Bors's; the lord is named below it
        fold.click()
        phone_side = phone.locator("[data-testid=side-A]")
        expect(phone_side.locator("[data-testid=unit-c2]")).to_be_visible()
        expect(phone_side.locator(f"[data-testid=unit-{LORD}]")).to_have_count(0)
        expect(phone_side.locator(f"[data-testid=alone-{LORD}]")).to_contain_text("no men left")
        assert not ZERO_MEN.search(phone_side.inner_text()), phone_side.inner_text()
        phone.locator(f"[data-testid=alone-{LORD}]").scroll_into_view_if_needed()
        phone.screenshot(path=str(shots / "phone-army-noble-alone.png"))
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "the phone scrolls sideways"
    finally:
        gm_context.close()
        phone_context.close()
