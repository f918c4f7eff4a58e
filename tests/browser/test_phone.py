"""The phone controller in real Chromium at 375×667, in each of the five rule systems: on the player's turn
the first 667 px hold every action the player may take now (as large buttons) and the player's own numbers;
the page title, icon and a banner say it is their turn; the page is a web app with its own icons."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import BARS_CUT, NAMES, WORDS_BROKEN, LiveServer, create_table
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser

# system id -> (presets in lineup order, indexes of the lineup given to the phone)
SYSTEMS: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "phantoms-bane": (("Jharek", "Wild Monster"), (0,)),
    "eclipse-phase": (("Jinx", "Habitat guard"), (0, 1)),  # the phone plays both: it is always its turn
    "olympia": (("Lord of the keep", "Knight commander"), (0,)),
    "adnd": (("Fighter (1st level)", "Orc"), (0,)),
    "battles-and-balances": (("Prince Vasyl of Ostgrund", "Shock Trooper"), (0, 1)),
}

# every visible button that sends a declaration, with its place on the page (not the viewport); a
# closed fold's are not on the screen (Chromium lays them out all the same)
ACTION_BOXES = """() => [...document.querySelectorAll('[data-action]')]
  .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden' && !e.closest('details:not([open]) > :not(summary)'))
  .map((e) => { const r = e.getBoundingClientRect();
    return {testid: e.dataset.testid || e.textContent.trim(), top: r.top + scrollY, bottom: r.bottom + scrollY,
            height: r.height, width: r.width}; })"""


# the health bars among the player's own numbers whose words do not fit in them
def gm_steps_until_declarations(gm: Any, phone: Any) -> None:
    """AD&D: the DM runs the encounter checks and answers for the orc until the phone is asked to declare."""
    for _ in range(40):
        if phone.locator("[data-testid=declare-form]").count():
            return
        gm.wait_for_timeout(150)
        if phone.locator("[data-testid=declare-form]").count():
            return
        version = gm.get_attribute("[data-testid=battle]", "data-version")
        form = gm.locator("[data-testid=declare-form]")
        if form.count():
            form.locator("[data-testid=kind-await]").click()
            if form.locator("[data-testid=field-note]").count():
                form.locator("[data-testid=field-note]").fill("waits")
            form.locator("[data-testid=declare-submit]").click()
        else:
            step = gm.locator("[data-testid=gm-steps] button").first
            testid = step.get_attribute("data-testid")
            if testid == "gm-check_morale":  # no opening morale check: a fleeing orc would leave nobody to target
                testid = "gm-skip-morale"
                step = gm.locator(f"[data-testid=gm-steps] [data-testid={testid}]")
            step.click()
            go = gm.locator(f"[data-testid=gm-steps] [data-testid={testid}-go]")
            if go.count():
                go.click()
        gm.wait_for_selector(f"[data-testid=battle]:not([data-version='{version}'])", state="attached", timeout=10_000)
    raise AssertionError("the phone was never asked to declare")


def check_actions_on_top(phone: Any, system: str) -> None:
    """Every visible action button lies within the first 667 px of the page and is big enough for a thumb."""
    boxes = phone.evaluate(ACTION_BOXES)
    assert boxes, f"{system}: no action button on the player's turn"
    low = [b for b in boxes if b["bottom"] > 667]
    assert not low, f"{system}: action buttons below the first 667 px: {low}"
    small = [b for b in boxes if b["height"] < 44]
    assert not small, f"{system}: action buttons too small for a thumb: {small}"


TOKEN_WIDTH = "(sel) => document.querySelector(sel).getBoundingClientRect().width"


def check_grid_opens_on_the_fight(phone: Any, shots: Path, system: str) -> None:
    """The phone's grid opens on the two combatants at a size a thumb can tap and an eye can read (on
    AD&D's whole board a token was about 15 px wide), and the button under it shows the whole board
    and goes back; a board that reads well whole is shown whole, with no button."""
    token = "[data-testid=token-c1]"
    button = phone.locator("[data-testid=grid-frame]")
    phone.locator(token).scroll_into_view_if_needed()
    close = phone.evaluate(TOKEN_WIDTH, token)
    assert close >= 24, f"{system}: the phone's grid opens with tokens {close:.0f} px wide"
    if system == "battles-and-balances":  # a small board: the whole of it reads well, and there is no button
        expect(button).to_be_hidden()
        return
    expect(button).to_have_text("Whole board")
    phone.screenshot(path=str(shots / f"phone-{system}-grid-close-up.png"))
    button.click()
    expect(button).to_have_text("Close up")
    whole = phone.evaluate(TOKEN_WIDTH, token)
    assert whole < close * 0.8, f"{system}: the whole board is no smaller than the close-up ({whole:.0f} against {close:.0f} px)"
    phone.screenshot(path=str(shots / f"phone-{system}-grid-whole.png"))
    button.click()
    expect(button).to_have_text("Whole board")
    assert abs(phone.evaluate(TOKEN_WIDTH, token) - close) < 1


def reach_the_players_turn(system: str, gm: Any, phone: Any) -> None:
    if system == "adnd":
        gm_steps_until_declarations(gm, phone)
    phone.wait_for_selector("body.my-turn", timeout=15_000)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_the_players_turn_fits_the_first_screen(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    presets, given = SYSTEMS[system]
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_ctx = browser.new_context(**PHONE)
    errors: list[str] = []
    try:
        gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
        for name, page in (("gm", gm), ("phone", phone)):
            page.on("pageerror", lambda e, n=name: errors.append(f"{n}: {e}"))
        create_table(gm, live_server, f"Phone {system}", system, presets)
        join_as(phone, gm, "Alice")
        for index in given:
            give_to_player(gm, index, "Alice")
            gm.wait_for_selector(f"[data-testid=lineup-controller-{index}] option[selected]:has-text('Player: Alice')", state="attached")
        plain_title = phone.title()
        assert not plain_title.startswith("▶")
        gm.click("[data-testid=start-battle]")
        reach_the_players_turn(system, gm, phone)

        # the turn is unmissable: banner, title, icon
        expect(phone.locator("[data-testid=your-turn]")).to_be_visible()
        assert phone.title().startswith("▶ Your turn"), phone.title()
        expect(phone.locator("link[rel=icon]")).to_have_attribute("href", re.compile(r"/icons/favicon-turn-32\.png$"))  # (once the turn is painted)

        phone.evaluate("window.scrollTo(0, 0)")
        phone.wait_for_timeout(300)  # the dice and bars settle
        phone.screenshot(path=str(shots / f"phone-{system}-turn.png"))
        phone.screenshot(path=str(shots / f"phone-{system}-turn-full.png"), full_page=True)
        check_actions_on_top(phone, system)
        # the player's own numbers are up there too, when the system shows them apart
        mine = phone.evaluate("""() => [...document.querySelectorAll('#due-now [data-region~=mine]')]
            .map((e) => e.getBoundingClientRect().bottom + scrollY)""")
        assert all(bottom <= 667 for bottom in mine), f"{system}: own numbers below the first screen: {mine}"
        if system == "eclipse-phase":  # (whoever won initiative: "Habitat guard" and its tag cut the bar where "Jinx" did not)
            phone.evaluate("document.querySelector('.ep-mine-head strong').lastChild.data = 'Habitat guard'")
            phone.locator("#due-now [data-region~=mine]").first.screenshot(path=str(shots / "phone-eclipse-phase-own-numbers-long-name.png"))
        # and none of them is cut: every bar lies within its card and its words fit in it ("35/35 · WT 7",
        # not "35/35 · WT ")
        cut = phone.evaluate(BARS_CUT, "#due-now [data-region~=mine] .kit-bar")
        assert not cut, f"{system}: the player's own numbers are cut: {cut}"
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375, f"{system}: the phone scrolls sideways"
        # no combatant's, unit's or side's name is broken inside a word ("Wild Monst/er")
        broken = phone.evaluate(WORDS_BROKEN, NAMES)
        assert not broken, f"{system}: names broken inside a word on the phone: {broken}"
        # the phone's bar names the player, whole, beside a long table name, the sound switch and the
        # connection ("Playe…" before)
        name = phone.locator("[data-testid=seat-name]")
        expect(name).to_have_text("Alice")
        assert name.evaluate("""(e) => e.getBoundingClientRect().right <= e.parentElement.getBoundingClientRect().right + 1
            && e.parentElement.scrollWidth <= e.parentElement.clientWidth + 1"""), f"{system}: the player's name is cut"
        if system in ("adnd", "battles-and-balances"):
            check_grid_opens_on_the_fight(phone, shots, system)
        if system == "adnd":
            # with an action and its target picked (more fields open), Declare is still in reach
            for kind in ("melee", "charge", "move"):
                if phone.locator(f"[data-testid=kind-{kind}]").count():
                    phone.click(f"[data-testid=kind-{kind}]")
                    break
            if phone.locator("[data-testid=declare-form] [data-testid^=target-c]").count():
                phone.locator("[data-testid=declare-form] [data-testid^=target-c]").first.click()
            phone.evaluate("window.scrollTo(0, 0)")
            phone.wait_for_timeout(200)
            phone.screenshot(path=str(shots / "phone-adnd-action-picked.png"))
            check_actions_on_top(phone, system)
        gm.screenshot(path=str(shots / f"gm-{system}-phone-turn.png"))
        assert not errors, errors
    finally:
        gm_ctx.close()
        phone_ctx.close()


# records the phone's buzzes (navigator.vibrate's patterns) and the notes it plays ("tone")
CUE_SPY = """
window.__cues = [];
Object.defineProperty(Navigator.prototype, "vibrate", {configurable: true, value(pattern) { window.__cues.push(pattern); return true; }});
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.__cues.push("tone"); return start.apply(this, args); };
"""


def test_turn_cues_sound_switch_and_web_app(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """A duel: the title and icon change on the player's turn and back once they have chosen; the turn
    sound is off by default and the player's choice is remembered; the manifest and its icons are served."""
    gm_ctx = browser.new_context(viewport={"width": 1024, "height": 768})
    phone_ctx = browser.new_context(**PHONE)
    phone_ctx.add_init_script(CUE_SPY)
    try:
        gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
        create_table(gm, live_server, "Cues", "phantoms-bane", ("Jharek", "Wild Monster"))
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        expect(phone.locator("[data-testid=sound-toggle]")).to_have_attribute("aria-pressed", "false")
        phone.click("[data-testid=sound-toggle]")
        expect(phone.locator("[data-testid=sound-toggle]")).to_have_attribute("aria-pressed", "true")
        phone.reload()
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(phone.locator("[data-testid=sound-toggle]")).to_have_attribute("aria-pressed", "true")

        assert not phone.title().startswith("▶")
        phone.evaluate("window.__cues.length = 0")  # (the toggle's sample sound)
        gm.click("[data-testid=start-battle]")
        phone.wait_for_selector("body.my-turn")
        assert phone.title().startswith("▶ Your turn")
        # the phone buzzes and, the sound being on, plays its two notes, once
        phone.wait_for_function("window.__cues.filter((c) => c === 'tone').length === 2")
        assert phone.evaluate("window.__cues") == [[200, 100, 200], "tone", "tone"]
        phone.click("[data-testid=choose-attack]")
        # chosen: no longer the player's move, though the choice may still change
        phone.wait_for_selector("body:not(.my-turn)")
        assert not phone.title().startswith("▶")
        expect(phone.locator("link[rel=icon]")).to_have_attribute("href", re.compile(r"/icons/favicon-32\.png$"))
        expect(phone.locator("[data-testid=your-turn]")).to_be_hidden()

        # the web app manifest, linked from the player's page, with icons that exist
        href = phone.get_attribute("link[rel=manifest]", "href")
        response = phone.request.get(live_server.url + href)
        assert response.ok
        assert response.headers["content-type"].startswith("application/manifest+json")
        manifest = json.loads(response.text())
        assert manifest["display"] == "standalone"
        assert manifest["start_url"].endswith("/play")
        sizes = {icon["sizes"] for icon in manifest["icons"]}
        assert {"192x192", "512x512"} <= sizes
        for icon in manifest["icons"]:
            got = phone.request.get(live_server.url + icon["src"])
            assert got.ok, icon
            if icon["type"] == "image/png":
                body = got.body()
                assert body[:8] == b"\x89PNG\r\n\x1a\n"
                width, height = int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")
                assert f"{width}x{height}" == icon["sizes"]
        # the phone's tab icons are 32-pixel PNGs (the icon changes with the turn: an SVG is loaded as a
        # document of its own at each change)
        plain = phone.get_attribute("link[rel=icon]", "href")
        for href in (plain, plain.replace("favicon-32.png", "favicon-turn-32.png")):
            body = phone.request.get(live_server.url + href).body()
            assert body[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(body[16:20], "big") == 32, href
        phone.screenshot(path=str(shots / "phone-chosen.png"))
    finally:
        gm_ctx.close()
        phone_ctx.close()
