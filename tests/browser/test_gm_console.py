"""The GM console in real Chromium, in each of the five rule systems: the board is the main area and the GM's
tools sit in tabs. On a tablet (1024×768) and on a phone (375×667) every tab opens its panel and every panel
can be read to its end; the tabs work from the keyboard and the console remembers the open one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import NAMES, WORDS_BROKEN, LiveServer, SocketSpy, box_of, create_table

pytestmark = pytest.mark.browser

SYSTEMS: dict[str, tuple[str, ...]] = {
    "phantoms-bane": ("Jharek", "Wild Monster"),
    "eclipse-phase": ("Jinx", "Habitat guard"),
    "olympia": ("Lord of the keep", "Knight commander"),
    "adnd": ("Fighter (1st level)", "Orc"),
    "battles-and-balances": ("Prince Vasyl of Ostgrund", "Shock Trooper"),
}
GRID_SYSTEMS = {"eclipse-phase", "adnd", "battles-and-balances"}
SIZES = {"tablet": (1024, 768), "phone": (375, 667)}


def tab_names(gm: Any) -> list[str]:
    return gm.eval_on_selector_all("[role=tablist] [role=tab]", "tabs => tabs.map((t) => t.dataset.tab)")


def assert_panel_reachable(gm: Any, name: str, width: int, height: int) -> None:
    """Open the tab; its panel shows, and scrolling (the page or the panel) brings its last part into view."""
    gm.click(f"[data-testid=tab-{name}]")
    panel = gm.locator(f"[data-testid=panel-{name}]")
    expect(panel).to_be_visible()
    expect(gm.locator(f"[data-testid=tab-{name}]")).to_have_attribute("aria-selected", "true")
    assert gm.locator("[role=tabpanel]:visible").count() == 1, "more than one panel open"
    last = panel.locator(":scope > *:visible").last
    last.scroll_into_view_if_needed()
    box = box_of(last)
    assert box, f"the {name} panel is empty"
    assert box["y"] < height and box["y"] + min(box["height"], height) > 0, f"the end of the {name} panel cannot be reached"
    outer = box_of(panel)
    assert outer["x"] >= -1 and outer["x"] + outer["width"] <= width + 1, f"the {name} panel is wider than the screen"
    assert gm.evaluate("document.documentElement.scrollWidth") <= width, f"the page scrolls sideways with the {name} panel open"


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_every_panel_can_be_reached(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    errors: list[str] = []
    try:
        gm = context.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, f"Console {system}", system, SYSTEMS[system])
        names = tab_names(gm)
        expected = ["battle", "lineup", "options", "rosters", *(["map"] if system in GRID_SYSTEMS else []), "notes", "join"]
        assert names == expected
        # before a battle the Lineup panel is open; starting the battle opens the Battle panel
        expect(gm.locator("[data-testid=panel-lineup]")).to_be_visible()
        gm.screenshot(path=str(shots / f"gm-{system}-lineup.png"))
        gm.click("[data-testid=start-battle]")
        expect(gm.locator("[data-testid=panel-battle]")).to_be_visible()
        expect(gm.locator("[data-testid=battle-controls] [data-testid=undo]")).to_be_visible()
        # the actions due now sit at the top of the Battle panel
        due = gm.locator("[data-testid=panel-battle] [data-testid=due-now]")
        expect(due).not_to_be_empty()
        # (both read at once: the chances bar above them may come in between two reads)
        due_y, controls_y = gm.evaluate("""() => ['[data-testid=panel-battle] [data-testid=due-now]', '[data-testid=battle-controls]']
            .map((s) => document.querySelector(s).getBoundingClientRect().y)""")
        assert due_y < controls_y
        gm.screenshot(path=str(shots / f"gm-{system}-tablet.png"))
        # on the tablet the board beside the console is about 640 px wide: a grid with cards beside it
        # takes its whole width (the cards go below) instead of sharing it
        grid_box = {"eclipse-phase": "ep-grid", "battles-and-balances": "bb-grid", "adnd": "ad-grid"}.get(system)
        if grid_box:
            board_width = box_of(gm.locator("[data-testid=battle]"))["width"]
            assert box_of(gm.locator(f"[data-testid={grid_box}]"))["width"] >= 0.9 * board_width

        for size, (width, height) in SIZES.items():
            gm.set_viewport_size({"width": width, "height": height})
            for name in names:
                assert_panel_reachable(gm, name, width, height)
                if size == "phone" or name in ("battle", "join"):
                    gm.screenshot(path=str(shots / f"gm-{system}-{size}-{name}.png"))
            # no name on the board or in the lineup is broken inside a word
            broken = gm.evaluate(WORDS_BROKEN, NAMES)
            assert not broken, f"{system}: names broken inside a word on the GM's {size}: {broken}"
            # the board is on the page at every size
            assert box_of(gm.locator("[data-testid=battle]"))["width"] >= min(width - 40, 560)
            if system in GRID_SYSTEMS:
                # the GM's grid zooms and opens on the fight on a phone, as a player's does, and in a
                # 1024 px window with a mouse too (a small laptop: the whole board had squares of 25 px)
                expect(gm.locator("[data-testid=battle] svg.grid.zoomable")).to_have_count(1)
            if system == "adnd" and size == "phone":  # (a 20-square board: about 17 px a square whole)
                gm.click("[data-testid=tab-battle]")
                token = gm.locator("[data-testid=battle] [data-testid=token-c1]")
                token.scroll_into_view_if_needed()
                assert box_of(token)["width"] >= 24, box_of(token)
                expect(gm.locator("[data-testid=battle] [data-testid=grid-frame]")).to_have_text("Whole board")
                gm.screenshot(path=str(shots / f"gm-{system}-phone-grid.png"))

        # the keyboard moves between tabs; the open tab survives a reload
        gm.set_viewport_size({"width": 1024, "height": 768})
        gm.click("[data-testid=tab-battle]")
        gm.keyboard.press("ArrowRight")
        expect(gm.locator("[data-testid=tab-lineup]")).to_be_focused()
        expect(gm.locator("[data-testid=panel-lineup]")).to_be_visible()
        gm.keyboard.press("End")
        expect(gm.locator("[data-testid=panel-join]")).to_be_visible()
        gm.reload()
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(gm.locator("[data-testid=panel-join]")).to_be_visible()
        expect(gm.locator("[data-testid=panel-battle]")).to_be_hidden()
        # the Join panel: code, QR, links, and the TV link to the table display
        assert gm.get_attribute("[data-testid=display-link]", "href").endswith("/display")
        expect(gm.locator("[data-testid=join-code-display]")).to_be_visible()
        expect(gm.locator("[data-testid=panel-join] img.qr")).to_be_visible()
        assert not errors, errors
    finally:
        context.close()


def test_notes_and_options_from_their_panels(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """The Notes panel saves the GM's private notes; the Options panel saves the table's options; the log is a
    polite live region."""
    context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    try:
        gm = context.new_page()
        create_table(gm, live_server, "Panels", "eclipse-phase", ("Jinx", "Habitat guard"))
        gm.click("[data-testid=tab-notes]")
        gm.fill("[data-testid=gm-notes]", "The guard has a hidden grenade")
        gm.click("[data-testid=panel-notes] button")
        expect(gm.locator("[data-testid=notice]")).to_contain_text("Notes saved")
        gm.click("[data-testid=tab-options]")
        expect(gm.locator("[data-testid=options-save]")).to_be_visible()
        gm.click("[data-testid=options-save]")
        expect(gm.locator("[data-testid=notice]")).to_contain_text("Options saved")
        gm.reload()
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(gm.locator("[data-testid=panel-options]")).to_be_visible()
        gm.click("[data-testid=tab-notes]")
        expect(gm.locator("[data-testid=gm-notes]")).to_have_value("The guard has a hidden grenade")
        assert gm.get_attribute("[data-testid=log]", "aria-live") == "polite"
        gm.screenshot(path=str(shots / "gm-phone-notes.png"), full_page=True)
    finally:
        context.close()


def test_what_the_gm_types_in_the_combatant_form_survives_a_player_joining(browser: Any, live_server: LiveServer) -> None:
    """A table update (here a player joining) redraws the lineup panel; the combatant form the GM is
    filling in keeps what was typed and the focus, and saves it."""
    from tests.browser.test_duel import PHONE, join_as

    gm_ctx, phone_ctx = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context(**PHONE)
    try:
        gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
        spy = SocketSpy(gm)
        create_table(gm, live_server, "Typing", "eclipse-phase")
        gm.select_option("[data-testid=preset]", label="Jinx")
        gm.fill("[data-testid=stat-form] input[name=x]", "7")
        gm.fill("[data-testid=stat-form] input[name=y]", "3")
        gm.fill("[data-testid=stat-name]", "Jinx the typed")
        join_as(phone, gm, "Alice")  # the GM's page gets the table with the new seat and redraws
        for _ in range(100):
            if '"Alice"' in spy.text():
                break
            gm.wait_for_timeout(100)
        assert '"Alice"' in spy.text(), "the GM's page never got the table with the new seat"
        gm.wait_for_timeout(300)  # and drew it
        expect(gm.locator("[data-testid=stat-form] input[name=x]")).to_have_value("7")
        expect(gm.locator("[data-testid=stat-form] input[name=y]")).to_have_value("3")
        expect(gm.locator("[data-testid=stat-name]")).to_have_value("Jinx the typed")
        gm.click("[data-testid=stat-save]")
        gm.wait_for_selector("[data-testid=lineup] >> text=Jinx the typed")
    finally:
        gm_ctx.close()
        phone_ctx.close()


def test_an_option_the_gm_changed_survives_a_table_update_and_is_what_is_saved(browser: Any, live_server: LiveServer) -> None:
    """The GM changes an option and, before saving, the table changes (a player joins): the options
    panel is drawn again from the table, but the changed field keeps the GM's value, and the save
    sends it (a save of the table's old value here once left a real-dice duel on the board's dice)."""
    from tests.browser.test_duel import PHONE, join_as

    gm_ctx, phone_ctx = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context(**PHONE)
    try:
        gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
        spy = SocketSpy(gm)
        create_table(gm, live_server, "Options", "phantoms-bane", ("Jharek", "Wild Monster"))
        gm.click("[data-testid=tab-options]")
        who_rolls = gm.locator("[data-testid=panel-options] select[name=who_rolls]")
        expect(who_rolls).to_have_value("board")
        who_rolls.select_option("players")
        gm.click("[data-testid=tab-lineup]")  # the focus leaves the panel: an update draws it again
        join_as(phone, gm, "Alice")
        for _ in range(100):
            if '"Alice"' in spy.text():
                break
            gm.wait_for_timeout(100)
        assert '"Alice"' in spy.text(), "the GM's page never got the table with the new seat"
        expect(gm.locator("[data-testid=lineup-controller-0] >> option:has-text('Player: Alice')")).to_be_attached()
        gm.click("[data-testid=tab-options]")
        expect(who_rolls).to_have_value("players")
        expect(gm.locator("[data-testid=panel-options] input[name=escape_impossible]")).not_to_be_checked()
        gm.click("[data-testid=options-save]")
        expect(gm.locator("[data-testid=notice]")).to_contain_text("Options saved")
        gm.reload()  # what the table keeps
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=tab-options]")
        expect(who_rolls).to_have_value("players")
    finally:
        gm_ctx.close()
        phone_ctx.close()


def test_the_battle_controls_stay_put_while_the_battle_goes_on(browser: Any, live_server: LiveServer) -> None:
    """The Battle panel's controls (who plays whom, the download and share switch) are drawn again
    only when what they show changes: a GM choosing who plays a unit keeps the list and the focus
    while the battle goes on; a new controller, and the battle's end, draw them again."""
    from tests.browser.test_display import gm_declares, prepare

    slug, gm_token = prepare(live_server, "olympia")
    context, helper_context = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context()
    try:
        gm, helper = context.new_page(), helper_context.new_page()
        gm.goto(f"{live_server.url}/t/{slug}/gm?key={gm_token}")
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.wait_for_selector("[data-testid=export-panel] [data-testid=share-battle]")
        gm_declares(helper, live_server, slug, gm_token, {"type": "begin"})  # (deployment ends: the controls show the battle fought)
        gm.wait_for_selector("[data-testid=step-phase]")
        gm.evaluate("""() => {
          const list = document.querySelector('[data-testid=assign-c1]');
          list.__kept = true;
          list.focus();
          document.querySelector('[data-testid=export-panel]').firstElementChild.__kept = true;
        }""")
        kept = """() => [document.querySelector('[data-testid=assign-c1]').__kept === true,
                         document.activeElement === document.querySelector('[data-testid=assign-c1]'),
                         document.querySelector('[data-testid=export-panel]').firstElementChild.__kept === true]"""
        for declaration in ({"type": "step", "by": "phase"}, {"type": "step", "by": "phase"}):
            version = gm.get_attribute("[data-testid=battle]", "data-version") or ""
            gm_declares(helper, live_server, slug, gm_token, declaration)
            expect(gm.locator("[data-testid=battle]")).not_to_have_attribute("data-version", version)
            gm.wait_for_timeout(200)
            assert gm.evaluate(kept) == [True, True, True], "the controls were drawn again on an update that changed nothing they show"

        gm.select_option("[data-testid=assign-c1]", "computer")
        gm.wait_for_function("() => document.querySelector('[data-testid=assign-c1]').__kept !== true")
        expect(gm.locator("[data-testid=assign-c1]")).to_have_value("computer")

        gm_declares(helper, live_server, slug, gm_token, {"type": "step", "by": "battle"})
        gm.wait_for_selector("[data-testid=survivors-panel]")
        expect(gm.locator("[data-testid=export-battle]")).to_have_text("⬇ Download this battle")
        assert gm.locator("[data-testid=assign-c1]").count() == 0
    finally:
        context.close()
        helper_context.close()


SLOW_LINEUP = """(() => {
  // the page's lineup edits leave 0.8 s late (a slow network, or a server busy with another event)
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (window.__slowLineup && typeof data === 'string' && data.includes('"lineup_set"')) setTimeout(() => send.call(this, data), 800);
    else send.call(this, data);
  };
})()"""


def test_start_battle_waits_for_the_lineup_edit_on_its_way(browser: Any, live_server: LiveServer) -> None:
    """The GM gives a combatant to a player and presses "Start battle" at once: the battle starts
    from the lineup the GM sees, with the player's combatant, not from the one before the edit (the
    server may handle two events of one page at once, so the start waits for the edit's answer)."""
    from tests.browser.test_duel import PHONE, join_as

    gm_ctx, phone_ctx = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context(**PHONE)
    gm_ctx.add_init_script(SLOW_LINEUP)
    try:
        gm, phone = gm_ctx.new_page(), phone_ctx.new_page()
        create_table(gm, live_server, "Quick start", "phantoms-bane", SYSTEMS["phantoms-bane"])
        join_as(phone, gm, "Alice")
        gm.wait_for_selector("[data-testid=lineup-controller-1] >> option:has-text('Player: Alice')", state="attached")
        gm.evaluate("window.__slowLineup = true")
        gm.select_option("[data-testid=lineup-controller-1]", label="Player: Alice")
        gm.click("[data-testid=start-battle]")
        gm.wait_for_selector("[data-testid=assign-c2]")
        expect(gm.locator("[data-testid=assign-c2] option:checked")).to_have_text("Player: Alice")
        phone.wait_for_selector("body.my-turn", timeout=10_000)
    finally:
        gm_ctx.close()
        phone_ctx.close()


@pytest.mark.parametrize("system", sorted(GRID_SYSTEMS))
def test_a_gm_on_a_touch_tablet_gets_a_grid_a_finger_can_use(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    """On a touch tablet (1024×768) the GM's grid opens on the fight with squares a finger can drag a
    token across, and offers the whole board and back, as a phone does."""
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    errors: list[str] = []
    try:
        gm = context.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, f"Tablet {system}", system, SYSTEMS[system])
        gm.click("[data-testid=start-battle]")
        expect(gm.locator("[data-testid=battle] svg.grid.zoomable")).to_have_count(1)
        token = gm.locator("[data-testid=battle] [data-testid=token]").first
        token.scroll_into_view_if_needed()
        width = box_of(token)["width"]
        frame = gm.locator("[data-testid=battle] [data-testid=grid-frame]")
        if frame.is_visible():  # (a board that reads well whole is shown whole, with no button)
            assert width >= 36, f"{system}: the GM's tokens are {width:.0f} px on a tablet"
            expect(frame).to_have_text("Whole board")
            gm.screenshot(path=str(shots / f"gm-{system}-touch-tablet.png"))
            frame.click()
            expect(frame).to_have_text("Close up")
        else:  # the fight spans the board (Eclipse Phase's sides start at its two ends): whole, and it pinches
            gm.screenshot(path=str(shots / f"gm-{system}-touch-tablet.png"))
        assert not errors, errors
    finally:
        context.close()

