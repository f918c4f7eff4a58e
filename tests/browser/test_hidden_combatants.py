"""Hidden combatants in the browser (rules/hiding.py, static/js/hiding.js), in the three grid
systems: the GM hides one from the console during the battle (another was hidden in the lineup);
the TV and a phone show neither (no token, no name in their pages); the phone cannot target one;
the GM reveals it with one tap and it arrives on every screen, the TV animating its arrival.
Screenshots of the TV before and after the reveal, and of the GM's panel."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, at_rest, gm_call
from tests.browser.test_display import lineup_for, service_for

pytestmark = pytest.mark.browser
GRID_SYSTEMS = ["eclipse-phase", "adnd", "battles-and-balances"]
PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def tokens(page: Any, combatant: str) -> Any:
    return page.locator(f"[data-testid=board] [data-testid=token][data-combatant={combatant}], "
                        f"[data-testid=battle] [data-testid=token][data-combatant={combatant}]")


@pytest.mark.parametrize("system", GRID_SYSTEMS)
def test_the_gm_hides_and_reveals_a_combatant_on_every_screen(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    service = service_for(live_server)
    table = service.create_table(f"Hidden {system}", system)
    service.set_lineup(table.id, lineup_for(system))
    names = {f"c{i + 1}": entry["name"] for i, entry in enumerate(lineup_for(system))}
    service.engine.dispose()
    lurker, second = "c4", "c3"
    contexts = [browser.new_context(viewport={"width": 1400, "height": 900}), browser.new_context(viewport={"width": 1920, "height": 1080}, reduced_motion="no-preference"),
                browser.new_context(**PHONE), browser.new_context(viewport={"width": 1280, "height": 720})]
    try:
        gm, tv, phone, watcher = (c.new_page() for c in contexts)
        gm.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=15000)
        # the GM marks the lurker hidden in the lineup, and starts the battle
        gm.click("[data-testid=tab-lineup]")
        gm.check("[data-testid=lineup-hidden-3]")
        expect(gm.locator("[data-testid=lineup-hidden-3]")).to_be_checked()
        for _ in range(50):
            if gm_call(gm, "sync", {})["table"]["lineup"][3].get("hidden") is True:
                break
            gm.wait_for_timeout(100)
        assert gm_call(gm, "sync", {})["table"]["lineup"][3].get("hidden") is True
        started = gm_call(gm, "battle_start", {})
        assert started["ok"], started
        battle_id = started["battle_id"]
        gm.click("[data-testid=tab-battle]")
        tv.goto(f"{live_server.url}/t/{table.slug}/display")
        watcher.goto(f"{live_server.url}/t/{table.slug}/watch")
        phone.goto(f"{live_server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        for page in (tv, phone, watcher):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=15000)
        seat = next(s["id"] for s in gm_call(gm, "sync", {})["table"]["seats"] if s["name"] == "Alice")
        assert gm_call(gm, "assign", {"battle_id": battle_id, "combatant": "c1", "controller": "seat", "seat": seat})["ok"]
        # the GM sees the lurker (dimmed) and its row in the panel; the TV and the phone do not
        expect(gm.locator(f"[data-testid=hidden-{lurker}]")).to_be_visible()
        expect(tokens(gm, lurker).first).to_have_class(re.compile("hidden-token"))
        expect(tokens(tv, "c1")).to_have_count(1)
        # the GM hides a second one during the battle, from the console
        gm.select_option("[data-testid=hide-select]", second)
        gm.click("[data-testid=hide-button]")
        expect(gm.locator(f"[data-testid=hidden-{second}]")).to_be_visible()
        for page in (tv, phone, watcher):
            expect(tokens(page, second)).to_have_count(0)
            expect(tokens(page, lurker)).to_have_count(0)
        expect(tokens(phone, "c1").first).to_be_visible()
        at_rest(tv)
        for page in (tv, phone, watcher):  # (the second was seen before the GM hid it: the log keeps what was said then)
            html = page.content()
            at = html.find(names[lurker])
            assert at < 0, f"{system}: the hidden lurker's name is in a page: …{html[max(0, at - 300):at + 50]}…"
        tv.screenshot(path=str(shots / f"hidden-{system}-tv-before.png"))
        gm.screenshot(path=str(shots / f"hidden-{system}-gm-panel.png"))
        phone.screenshot(path=str(shots / f"hidden-{system}-phone.png"))
        # the phone cannot target it (its own socket, its own key)
        refused = gm_call(phone, "declare", {"battle_id": battle_id, "expected_v": 0, "msg_id": "try-1",
                                             "declaration": {"type": "attack", "combatant": "c1", "target": lurker}})
        assert not refused["ok"], refused
        # one tap: it arrives on every screen
        gm.click(f"[data-testid=reveal-{lurker}]")
        expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant={lurker}][data-arrived=yes]")).to_have_count(1)
        tv.wait_for_timeout(900)  # (the arrival's middle: the token large in its bright ring)
        tv.screenshot(path=str(shots / f"hidden-{system}-tv-arriving.png"))
        for page in (phone, watcher, gm):
            expect(tokens(page, lurker).first).to_be_visible()
        expect(gm.locator(f"[data-testid=hidden-{lurker}]")).to_have_count(0)
        expect(tokens(tv, second)).to_have_count(0)
        at_rest(tv)
        tv.screenshot(path=str(shots / f"hidden-{system}-tv-after.png"))
    finally:
        for context in contexts:
            context.close()
