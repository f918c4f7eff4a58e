"""An Olympia battle in real Chromium: the GM arranges two armies with a tower, a noble's player moves
his unit and sets the break point from a 375 px phone, and a spectator watches it fought round by round."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, at_rest, box_of, console_settled, create_table

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


# every text a troop count shows on the page, from now on (a count's words are written in place)
WATCH_COUNT_WRITES = """() => {
  window.__countTexts = new Map();
  const seen = (el) => {
    const texts = window.__countTexts.get(el) || [];
    if (texts[texts.length - 1] !== el.textContent) texts.push(el.textContent);
    window.__countTexts.set(el, texts);
  };
  document.querySelectorAll('.ol-count').forEach(seen);
  new MutationObserver((records) => records.forEach((r) => {
    const el = r.target.nodeType === Node.TEXT_NODE ? r.target.parentElement : r.target;
    if (el && el.classList.contains('ol-count')) seen(el);
  })).observe(document.body, {subtree: true, characterData: true, childList: true});
}"""
READ_COUNT_WRITES = """() => [...window.__countTexts].filter(([el]) => el.isConnected).map(([el, texts]) => ({
  texts, final: el.textContent, count: Number(el.closest('[data-testid^=troop-]').dataset.count)}))"""

# every count shows the number the server sent (its fall is over)
FALLEN = """() => [...document.querySelectorAll('.ol-count')].every((el) =>
  el.textContent === Number(el.closest('[data-testid^=troop-]').dataset.count).toLocaleString('en-US'))"""


def counts(page: Any, side: str) -> dict[str, int]:
    cells = page.locator(f"[data-testid=side-{side}] [data-testid^=troop-]")
    return {cells.nth(i).get_attribute("data-testid"): int(cells.nth(i).get_attribute("data-count")) for i in range(cells.count())}


def test_olympia_battle_round_by_round(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    watch_context = browser.new_context(viewport={"width": 1280, "height": 720}, reduced_motion="no-preference")  # (its counts fall)
    try:
        gm, phone, watch = gm_context.new_page(), phone_context.new_page(), watch_context.new_page()
        create_table(gm, live_server, "Siege of the keep", "olympia", ("Lord of the keep", "Knight commander", "Captain of archers"))
        gm.select_option("[data-testid=lineup-2] select[aria-label=side]", "A")
        gm.wait_for_selector("[data-testid=lineup-2] select[aria-label=side] >> option:checked >> text=Side A", state="attached")

        phone.goto(gm.get_attribute("[data-testid=join-link]", "href"))
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.wait_for_selector("[data-testid=lineup-controller-0] >> option:has-text('Player: Alice')", state="attached")
        gm.select_option("[data-testid=lineup-controller-0]", label="Player: Alice")

        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=start-battle]")
        gm.wait_for_selector("[data-testid=begin-battle]")

        # Deployment from the phone: tap the unit, tap a row; set the break point. No sideways scrolling.
        # (the phone's banner says what the player may do: their units' rows and, as their side's
        # leader, its break point; the GM's says to begin)
        phone.wait_for_selector("[data-testid=stage] >> text=Choose your units' rows")
        assert "set your side's break point; the GM begins the battle." in phone.inner_text("[data-testid=stage]")
        assert "then begin the battle" in gm.inner_text("[data-testid=stage]")
        phone.click("[data-testid=unit-c1]")
        phone.click("[data-testid=move-here-A-1]")
        watch.wait_for_selector("[data-testid=row-A-1] [data-testid=unit-c1]")
        phone.fill("[data-testid=break-point-A]", "40")
        phone.click("[data-testid=set-break-point-A]")
        watch.wait_for_selector("[data-testid=strength-A][data-threshold='1272']")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        box = box_of(phone.locator("[data-testid=set-break-point-A]"))
        assert box and box["height"] >= 44
        assert phone.locator("[data-testid=step-phase]").count() == 0
        assert watch.locator("[data-testid=begin-battle]").count() == 0

        # The GM moves the unit back to the front (a tap on it, a tap on the row: dragging is
        # test_game_night's; a synthetic drag on a busy machine was lost now and then), puts side B
        # in a tower and begins.
        expect(gm.locator("[data-testid=battle]")).to_have_attribute("data-version", watch.get_attribute("[data-testid=battle]", "data-version") or "")
        console_settled(gm)
        gm.click("[data-testid=unit-c1]")
        gm.click("[data-testid=move-here-A-0]")
        watch.wait_for_selector("[data-testid=row-A-0] [data-testid=unit-c1]")
        gm.select_option("[data-testid=structure-kind-B]", "tower")
        gm.click("[data-testid=place-structure-B]")
        watch.wait_for_selector("[data-testid=structure-B][data-damage='0']")
        gm.select_option("[data-testid=special-preset]", "")
        gm.fill("[data-testid=special-name]", "Hail of stones")
        gm.click("[data-testid=add-special]")
        watch.wait_for_selector("[data-testid=special-s1] >> text=Hail of stones")
        gm.click("[data-testid=begin-battle]")
        gm.wait_for_selector("[data-testid=step-round]")
        gm.screenshot(path=str(shots / "gm-ready.png"), full_page=True)

        # The first round on the spectator's page: the counts that fell count down to the new ones in
        # a few steps (not rewritten at every frame: a mass battle has hundreds of them), and end on
        # the count the server sent
        watch.evaluate(WATCH_COUNT_WRITES)
        version = watch.get_attribute("[data-testid=battle]", "data-version")
        gm.click("[data-testid=step-round]")
        expect(watch.locator("[data-testid=battle]")).not_to_have_attribute("data-version", version or "")
        watch.wait_for_function(FALLEN)  # (the fall takes about 0.6 s)
        falls = watch.evaluate(READ_COUNT_WRITES)
        fell = [f for f in falls if len(set(f["texts"])) > 1]
        assert fell, f"no count fell: {falls}"
        assert all(f["final"] == f"{f['count']:,}" for f in falls), falls
        assert max(len(f["texts"]) for f in falls) <= 7, fell  # the count it fell from and at most five steps (and a redraw)
        assert any(len(set(f["texts"])) > 2 for f in fell), f"the counts jumped instead of falling: {fell}"

        # Round by round until a side breaks; the spectator's counts only ever fall.
        before = counts(watch, "B")
        rounds = 0
        while watch.locator("[data-testid=outcome]").count() == 0 and rounds < 30:
            version = watch.get_attribute("[data-testid=battle]", "data-version")
            gm.click("[data-testid=step-round]")
            expect(watch.locator("[data-testid=battle]")).not_to_have_attribute("data-version", version or "")
            after = counts(watch, "B")
            assert all(after[k] <= before[k] for k in before)
            before = after
            rounds += 1
        watch.wait_for_selector("[data-testid=outcome]")
        outcome = watch.inner_text("[data-testid=outcome]")
        assert "wins" in outcome or "tie" in outcome
        report = watch.inner_text("[data-testid=report]")
        assert "Round 1, melee" in report or "Round 1, missile attacks" in report
        phone.wait_for_selector("[data-testid=outcome]")
        # the phone's dice tray: its first rolls up to a dozen dice, every roll inside the card (a roll
        # of many dice wraps its faces instead of running off the edge)
        tray = phone.evaluate("""() => {
          const tray = document.querySelector('[data-testid=dice-tray]');
          const rolls = [...tray.querySelectorAll('[data-testid=roll]')];
          return {rolls: rolls.length, dice: tray.querySelectorAll('.kit-die').length, width: tray.clientWidth,
                  widest: Math.max(0, ...rolls.map((r) => r.scrollWidth))};
        }""")
        assert tray["rolls"] == 1 or tray["dice"] <= 12, tray
        assert tray["widest"] <= tray["width"], tray
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        at_rest(watch)  # before the screenshot
        watch.screenshot(path=str(shots / "spectator-end.png"), full_page=True)
        phone.screenshot(path=str(shots / "phone-end.png"), full_page=True)
    finally:
        gm_context.close()
        phone_context.close()
        watch_context.close()
