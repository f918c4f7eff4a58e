"""Scratch browser check of the Eclipse Phase board (not part of the repo)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.conftest import LiveServer, SocketSpy
from tests.browser.test_duel import PHONE, give_to_player, join_as

SHOTS = Path("/tmp/ep/shots")
SHOTS.mkdir(parents=True, exist_ok=True)


def test_ep_exchange(browser: Any, live_server: LiveServer) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_ctx = browser.new_context(**PHONE)
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    gm, phone, watch = gm_ctx.new_page(), phone_ctx.new_page(), watch_ctx.new_page()
    errors = []
    for p in (gm, phone, watch):
        p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        p.on("pageerror", lambda e: errors.append(str(e)))
    gm.goto(live_server.url + "/")
    gm.fill("[data-testid=table-name]", "EP test")
    gm.select_option("[data-testid=table-system]", "eclipse-phase")
    gm.click("[data-testid=create-table]")
    gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
    for preset in ("Jinx", "Exhuman stalker"):
        gm.select_option("[data-testid=preset]", label=preset)
        gm.click("[data-testid=stat-save]")
        gm.wait_for_selector(f"[data-testid=lineup] >> text={preset}")
    join_as(phone, gm, "Alice")
    give_to_player(gm, 0, "Alice")
    spy = SocketSpy(watch)
    watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
    watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
    gm.click("[data-testid=start-battle]")
    gm.wait_for_selector("[data-testid=ep-initiative]")
    phone.wait_for_selector("[data-testid=ep-initiative]")
    watch.wait_for_selector("[data-testid=ep-initiative]")
    gm.screenshot(path=str(SHOTS / "gm-start.png"), full_page=True)
    phone.screenshot(path=str(SHOTS / "phone-start.png"), full_page=True)
    watch.screenshot(path=str(SHOTS / "watch-start.png"), full_page=True)
    print("ERRORS", errors)
    print("phone scroll width", phone.evaluate("document.documentElement.scrollWidth"))
    print("active", gm.inner_text("[data-testid=ep-active]"))
    assert '"durability"' not in spy.text() or True
    # whoever is active attacks
    for page, name in ((phone, "phone"), (gm, "gm")):
        if page.locator("[data-testid=ep-declare-attack]").count():
            page.click("[data-testid=ep-declare-attack]")
            break
    watch.wait_for_selector("[data-testid=ep-exchange][data-phase]")
    for p, n in ((gm, "gm"), (phone, "phone"), (watch, "watch")):
        p.wait_for_timeout(500)
        p.screenshot(path=str(SHOTS / f"{n}-pending.png"), full_page=True)
    for page in (phone, gm):
        if page.locator("[data-testid^=ep-defend-]").count():
            page.locator("[data-testid^=ep-defend-]").first.click()
            break
    watch.wait_for_selector("[data-testid=ep-att-roll]")
    for p, n in ((gm, "gm"), (phone, "phone"), (watch, "watch")):
        p.wait_for_timeout(500)
        p.screenshot(path=str(SHOTS / f"{n}-rolled.png"), full_page=True)
    for _ in range(3):
        for page in (phone, gm):
            if page.locator("[data-testid^=ep-accept-]").count():
                page.locator("[data-testid^=ep-accept-]").first.click()
                page.wait_for_timeout(500)
    watch.wait_for_selector("[data-testid=ep-exchange][data-phase=done]")
    for p, n in ((gm, "gm"), (phone, "phone"), (watch, "watch")):
        p.wait_for_timeout(300)
        p.screenshot(path=str(SHOTS / f"{n}-done.png"), full_page=True)
    print("ERRORS", errors)
    print("durability leak to spectator:", '\\"durability\\"' in spy.text() or '"durability"' in spy.text())
