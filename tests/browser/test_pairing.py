"""Pairing a TV in real Chromium: the TV opens the front page and chooses "Use this screen as a table
display", the GM pairs it by its code (on the console's Join tab) or by scanning its QR code (the
pairing page on the GM's phone), the TV shows the table display, and unpairing sends it back to a
new pairing code. The GM, the TV and the phone are separate browser contexts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, box_of, create_table

pytestmark = pytest.mark.browser

TV = {"viewport": {"width": 1920, "height": 1080}}
PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def tv_pairing_code(tv: Any, server: LiveServer) -> str:
    tv.goto(server.url + "/")
    tv.click("[data-testid=use-as-display]")
    code_box = tv.wait_for_selector("[data-testid=pairing-code]")
    tv.wait_for_load_state("load")  # (its stylesheets applied: the code is there before screen.css)
    code = code_box.get_attribute("data-code")
    assert code and len(code) == 6
    # the code reads from across the room, and the QR code is there for the GM's phone
    assert float(tv.evaluate("getComputedStyle(document.querySelector('[data-testid=pairing-code]')).fontSize").removesuffix("px")) >= 96
    assert box_of(tv.locator("[data-testid=pairing-qr]"))["width"] >= 250
    assert tv.evaluate("document.documentElement.scrollHeight <= innerHeight && document.documentElement.scrollWidth <= innerWidth")
    return code


def table_slug(gm: Any) -> str:
    return gm.evaluate("document.body.dataset.table")


def open_join_tab(gm: Any) -> bool:
    """The console's Join tab with the pairing panel; False if this console has none."""
    if gm.locator("[data-testid=tab-join]").count():
        gm.click("[data-testid=tab-join]")
    try:
        gm.wait_for_selector("[data-testid=pair-code-input]", timeout=5000)
    except Exception:  # noqa: BLE001 - the console does not show the panel
        return False
    return True


def gm_emit(gm: Any, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Send a GM event from the GM's page over a socket of its own (when the console lacks the panel)."""
    return gm.evaluate(
        """([event, payload]) => new Promise((resolve) => {
            const socket = io({ auth: { table: document.body.dataset.table, token: document.body.dataset.token }, transports: ["websocket"] });
            socket.on("connect", () => socket.emit(event, payload, (ack) => { socket.disconnect(); resolve(ack); }));
        })""",
        [event, payload],
    )


def expect_display(tv: Any, slug: str) -> None:
    tv.wait_for_url(f"**/screen/t/{slug}", timeout=15000)
    tv.wait_for_selector("[data-testid=table-display]", timeout=10000)
    tv.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=10000)


def test_a_tv_is_paired_by_its_code_and_goes_back_when_unpaired(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context, tv_context = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context(**TV)
    try:
        gm, tv = gm_context.new_page(), tv_context.new_page()
        create_table(gm, live_server, "Pairing night", "phantoms-bane", ("Jharek", "Wild Monster"))
        slug = table_slug(gm)
        code = tv_pairing_code(tv, live_server)
        tv.screenshot(path=str(shots / "tv-pairing-code.png"))

        panel = open_join_tab(gm)
        if panel:
            gm.fill("[data-testid=pair-code-input]", f"{code[:3].lower()} {code[3:]}")
            gm.click("[data-testid=pair-submit]")
            expect(gm.locator("[data-testid=paired-screen]")).to_have_count(1)
            gm.screenshot(path=str(shots / "gm-join-tab-paired.png"))
        else:
            ack = gm_emit(gm, "display_pair", {"code": code})
            assert ack["ok"], ack
        expect_display(tv, slug)
        # before the battle, the display's corner shows the join code
        expect(tv.locator("[data-testid=join-corner]")).to_contain_text(gm.evaluate("document.querySelector('[data-testid=join-code-display]')?.textContent || ''"))
        tv.screenshot(path=str(shots / "tv-paired-display.png"))

        # once the battle runs the corner goes, until the GM switches it on for the TV
        assert gm_emit(gm, "battle_start", {})["ok"]
        expect(tv.locator("[data-testid=join-corner]")).to_be_hidden()
        if panel:
            gm.click("[data-testid=tab-join]")
            gm.click("[data-testid=show-join-toggle]")
            expect(gm.locator("[data-testid=show-join-toggle]")).to_have_attribute("aria-pressed", "true")
        else:
            assert gm_emit(gm, "display_set", {"show_join": True})["ok"]
        expect(tv.locator("[data-testid=join-corner]")).to_be_visible()
        tv.screenshot(path=str(shots / "tv-battle-with-join-corner.png"))

        if panel:
            gm.click("[data-testid=unpair-screen]")
            expect(gm.locator("[data-testid=no-paired-screens]")).to_be_visible()
        else:
            screens = gm_emit(gm, "sync", {})["table"]["screens"]
            assert gm_emit(gm, "display_unpair", {"screen": screens[0]["id"]})["ok"]
        tv.wait_for_url("**/screen", timeout=15000)
        new_code = tv.wait_for_selector("[data-testid=pairing-code]").get_attribute("data-code")
        assert new_code and new_code != code
        tv.screenshot(path=str(shots / "tv-unpaired-new-code.png"))
    finally:
        gm_context.close()
        tv_context.close()


def test_the_gms_phone_pairs_a_tv_from_its_qr_code(browser: Any, live_server: LiveServer, shots: Path) -> None:
    laptop, tv_context, phone_context = browser.new_context(), browser.new_context(**TV), browser.new_context(**PHONE)
    try:
        gm, tv, phone = laptop.new_page(), tv_context.new_page(), phone_context.new_page()
        create_table(gm, live_server, "Scan night", "phantoms-bane", ("Jharek", "Wild Monster"))
        slug = table_slug(gm)
        code = tv_pairing_code(tv, live_server)
        pair_url = tv.locator(".screen-url").inner_text().strip()
        assert pair_url.endswith(f"/pair/{code}")

        phone.goto(pair_url)  # what the QR code holds: without the GM key the phone is told what to do
        expect(phone.locator("[data-testid=pair-no-gm]")).to_contain_text("GM link")
        phone.screenshot(path=str(shots / "phone-pair-without-gm-key.png"))
        gm_link = f"{live_server.url}/t/{slug}/gm?key=" + gm.evaluate("document.body.dataset.token")
        phone.goto(gm_link)
        phone.goto(pair_url)
        phone.screenshot(path=str(shots / "phone-pair-choose-table.png"))
        phone.click(f"[data-testid=pair-with-{slug}]")
        expect(phone.locator("[data-testid=pair-done]")).to_contain_text("Scan night")
        phone.screenshot(path=str(shots / "phone-pair-done.png"))
        expect_display(tv, slug)
    finally:
        for context in (laptop, tv_context, phone_context):
            context.close()


@pytest.mark.parametrize("size", [(1280, 720), (3840, 2160), (1024, 768)])
def test_the_pairing_screen_fits_every_tv(browser: Any, live_server: LiveServer, shots: Path, size: tuple[int, int]) -> None:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        tv = context.new_page()
        tv.goto(live_server.url + "/screen")
        tv.wait_for_selector("[data-testid=pairing-code]")
        assert tv.evaluate("document.documentElement.scrollHeight <= innerHeight && document.documentElement.scrollWidth <= innerWidth")
        smallest = tv.evaluate(
            "Math.min(...[...document.querySelectorAll('main *')].filter((e) => e.childNodes.length && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))"
            ".map((e) => parseFloat(getComputedStyle(e).fontSize)))"
        )
        assert smallest >= 24, f"the smallest text on the pairing screen is {smallest}px"
        tv.screenshot(path=str(shots / f"tv-pairing-{size[0]}x{size[1]}.png"))
    finally:
        context.close()
