"""The dice roller and the pointer in real Chromium, one scene per system: a phone rolls and the TV's tray
and log show who rolled and why; the GM rolls in secret and the TV reads only "The GM rolled in
secret."; a long press on the phone and on the GM console puts a ring in their colour, with their name,
on the TV. Between battles, a phone's roll of the table's own dice reaches the TV too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from rules import get_system
from tests.browser.conftest import LiveServer, SocketSpy, at_rest, box_of
from tests.browser.test_display import service_for
from tests.server.test_leaks import lineup_for

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
SYSTEMS = ["phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances"]
SECRET = "dragon-behind-the-door"


def hold(page: Any, locator: Any) -> None:
    """Press and hold the middle of ``locator`` until the pointer went out (the ring on the TV is
    waited for by the caller; the press is let go afterwards)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 120))
    page.mouse.down()


def target_on(page: Any, system_id: str) -> Any:
    """What a long press points at on a console or a phone: the grid, or a combatant's card."""
    if get_system(system_id).traits.grid:
        return page.locator("[data-testid=battle] svg[data-testid=grid]").first
    return page.locator("[data-testid=battle] [data-testid^=combatant-], [data-testid=battle] [data-testid^=unit-]").first


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_a_phone_rolls_the_gm_rolls_in_secret_and_both_point_on_the_tv(browser: Any, live_server: LiveServer, shots: Path,
                                                                      system_id: str) -> None:
    service = service_for(live_server)
    table = service.create_table("Roll night", system_id)
    gm_context = browser.new_context(viewport={"width": 1280, "height": 860})
    phone_context = browser.new_context(**PHONE)
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        gm, phone, tv = gm_context.new_page(), phone_context.new_page(), tv_context.new_page()
        phone.goto(f"{live_server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        spy = SocketSpy(tv)
        tv.goto(f"{live_server.url}/t/{table.slug}/display")
        tv.wait_for_selector("[data-testid=connection-status][data-state=live]")

        if system_id == "phantoms-bane":  # between battles: the table's own dice, committed first
            phone.locator("[data-testid=roller]").scroll_into_view_if_needed()
            phone.screenshot(path=str(shots / "roller-phone-between-battles.png"))
            phone.fill("[data-testid=roll-notation]", "3d8 + 1d6")
            phone.click("[data-testid=roll-button]")
            expect(phone.locator("[data-testid=roll-result]")).to_contain_text("Alice rolled 3d8+1d6")
            expect(tv.locator("[data-testid=dice-tray] [data-testid=roll]")).to_have_count(2)
            expect(tv.locator("[data-testid=log]")).to_contain_text("Alice rolled 3d8+1d6")

        seat = service.seats(table.id)[0].public_id
        service.set_lineup(table.id, lineup_for(get_system(system_id), [seat, seat]))
        service.start_battle(table.id, seed=f"roller-{system_id}")
        service.engine.dispose()
        # (the battle was started beside the server: the pages open on it)
        gm.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        phone.goto(f"{live_server.url}/t/{table.slug}/play")
        tv.reload()
        for page in (gm, phone, tv):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        for page in (gm, phone):
            page.wait_for_selector("[data-testid=battle]:not([data-version='0'])")
        tv.wait_for_selector("[data-testid=board]:not([data-version='0']) > *")

        # a phone rolls, with a label: the TV's tray and log say who and why
        phone.fill("[data-testid=roll-notation]", "2d6+3")
        phone.fill("[data-testid=roll-label]", "perception check")
        phone.click("[data-testid=roll-button]")
        expect(phone.locator("[data-testid=roll-result]")).to_contain_text("Alice rolled 2d6+3 for perception check: ")
        expect(tv.locator("[data-testid=dice-tray]")).to_contain_text("Alice: perception check")
        expect(tv.locator("[data-testid=log]")).to_contain_text("Alice rolled 2d6+3 for perception check")
        expect(phone.locator("[data-testid=roll-pick]").first).to_have_text("2d6+3 · perception check")
        at_rest(tv)
        tv.screenshot(path=str(shots / f"roller-tv-{system_id}.png"))
        phone.locator("[data-testid=roller]").screenshot(path=str(shots / f"roller-phone-{system_id}.png"))

        # bad notation: a clear error, nothing rolled
        phone.fill("[data-testid=roll-notation]", "2d")
        phone.click("[data-testid=roll-button]")
        expect(phone.locator("[data-testid=roll-result]")).to_contain_text("cannot read")

        # the GM rolls in secret: the console has it, the TV only that it happened
        gm.fill("[data-testid=roll-notation]", "d100")
        gm.fill("[data-testid=roll-label]", SECRET)
        gm.check("[data-testid=roll-secret]")
        gm.click("[data-testid=roll-button]")
        expect(gm.locator("[data-testid=roll-result]")).to_contain_text(f"The GM rolled 1d100 for {SECRET} in secret")
        expect(tv.locator("[data-testid=log]")).to_contain_text("The GM rolled in secret.")
        expect(gm.locator("[data-testid=log]")).to_contain_text(f"for {SECRET} in secret")
        gm.locator("[data-testid=roller]").scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / f"roller-gm-{system_id}.png"))
        assert SECRET not in spy.text() and SECRET not in tv.content()

        # the pointer: a phone's long press, then the GM's, each a ring on the TV with the name
        hold(phone, target_on(phone, system_id))
        ring = tv.locator("[data-testid=pointer-ring]")
        expect(ring).to_be_visible()
        expect(ring).to_contain_text("Alice")
        phone.mouse.up()
        tv.screenshot(path=str(shots / f"pointer-tv-{system_id}.png"))

        expect(ring).to_have_count(0)
        hold(gm, target_on(gm, system_id))
        expect(ring).to_be_visible()
        expect(ring).to_contain_text("The GM")
        gm.mouse.up()
        assert ring.first.get_attribute("data-by") == "gm"
        box = box_of(ring.first)
        assert box is not None and box["width"] >= 96
    finally:
        gm_context.close()
        phone_context.close()
        tv_context.close()
