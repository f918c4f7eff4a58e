"""Eclipse Phase GM tools in Chromium: a labelled modifier, a condition, a damage correction, revealing durability, dragging a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer, box_of, create_table

pytestmark = pytest.mark.browser


def test_gm_tools(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors = []
    gm, watch = gm_ctx.new_page(), watch_ctx.new_page()
    for p in (gm, watch):
        p.on("pageerror", lambda e: errors.append(str(e)))
    create_table(gm, live_server, "Tools", "eclipse-phase", ("Jinx", "Exhuman stalker"))
    watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
    gm.click("[data-testid=start-battle]")
    gm.wait_for_selector("[data-testid=ep-gm-tools]")
    gm.select_option("[data-testid=ep-gm-combatant]", "c2")
    gm.fill("[data-testid=ep-gm-label]", "behind a crate")
    gm.fill("[data-testid=ep-gm-value]", "-20")
    gm.click("[data-testid=ep-gm-add-modifier]")
    gm.wait_for_selector("[data-testid=ep-combatant-c2] >> text=behind a crate −20 (next)")
    gm.click("[data-testid=ep-gm-condition-on]")
    watch.wait_for_selector("[data-testid=ep-combatant-c2] >> text=surprised (cannot defend)")
    gm.fill("[data-testid=ep-gm-damage]", "12")
    gm.fill("[data-testid=ep-gm-wounds]", "1")
    gm.click("[data-testid=ep-gm-adjust]")
    watch.wait_for_selector("[data-testid=ep-combatant-c2][data-wounds='1']")
    gm.click("[data-testid=ep-gm-reveal]")
    watch.wait_for_selector("[data-testid=ep-combatant-c2] >> text=28/40")  # (its thresholds under the bar: they ran out of it)
    watch.wait_for_selector("[data-testid=ep-combatant-c2] >> text=WT 8 · DR 60")
    # the GM drags a token; the spectator's board follows
    tok = gm.locator("[data-testid=battle] [data-testid=token-c2]")  # not the Map panel's preview
    tok.scroll_into_view_if_needed()
    before = watch.get_attribute("[data-testid=token-c2]", "transform")
    b = box_of(tok)
    gm.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    gm.mouse.down()
    gm.mouse.move(b["x"] - 60, b["y"] + 60, steps=5)
    gm.mouse.up()
    watch.wait_for_selector(f"[data-testid=token-c2]:not([transform='{before}'])")
    gm.screenshot(path=str(shots / "gm.png"), full_page=True)
    watch.screenshot(path=str(shots / "watch.png"), full_page=True)
    assert not errors, errors
    gm_ctx.close()
    watch_ctx.close()
