"""The replay page in Chromium: a whole Phantom's Bane duel and a whole Olympia battle, stepped
through with the buttons, the arrow keys (Home/End too), the scrubber and play/pause, on a desktop
and on a 375×667 phone. The board (drawn by the table display's renderers) changes with the steps.

The battles are played on the live server's database through the battle service (as the display
tests do); the replay is opened as the GM (whose replay shows the computer's hidden choices) and, on
the phone, as the public where this build lets the GM share a battle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from rules import Viewer
from rules.registry import get_system
from tests.browser.conftest import BARS_CUT, LiveServer, at_rest, box_of
from webapp.db import make_engine
from webapp.models import Battle
from webapp.service import BattleService

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 667}
DESKTOP = {"width": 1440, "height": 900}


def service_for(server: LiveServer) -> BattleService:
    return BattleService(make_engine(f"sqlite:///{server.instance / 'battleboard.sqlite3'}"))


def presets(system: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in get_system(system).presets()}


def play_duel(server: LiveServer) -> tuple[str, str, int, int]:
    """Jharek (the GM's) against the computer's Marsh Troll, to the end, with one undo on the way:
    returns the table's slug, the GM's key, the battle's id and its number of versions."""
    service = service_for(server)
    p = presets("phantoms-bane")
    table = service.create_table("Replay duel", "phantoms-bane")
    service.set_lineup(table.id, [
        {**p["Jharek"], "id": "jharek", "side": "A", "controller": "gm", "seat": None, "health": 12},
        {**p["Marsh Troll"], "id": "troll", "side": "B", "controller": "computer", "seat": None, "health": 12},
    ])
    battle_id = service.start_battle(table.id, seed="replay-browser-duel").battle_id
    options = ["attack", "press", "defend", "attack"]
    for turn in range(40):
        if service.battle(battle_id).status != "active":
            break
        service.declare(battle_id, Viewer.gm(), {"type": "choose", "combatant": "jharek", "option": options[turn % len(options)]})
        if turn == 1:
            service.undo(battle_id, Viewer.gm())
    battle = service.battle(battle_id)
    if battle.status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    versions = service.battle(battle_id).version
    service.engine.dispose()
    return table.slug, table.gm_token, battle_id, versions


def play_olympia(server: LiveServer) -> tuple[str, str, int, int]:
    """Two small armies fought phase by phase until one breaks."""
    service = service_for(server)
    p = presets("olympia")
    table = service.create_table("Replay field", "olympia")
    service.set_lineup(table.id, [
        {**p["Lord of the keep"], "side": "A", "controller": "gm"},
        {**p["Noble with two pikemen"], "side": "A", "controller": "gm"},
        {**p["Knight commander"], "side": "B", "controller": "gm"},
        {**p["Captain of archers"], "side": "B", "controller": "gm"},
    ])
    battle_id = service.start_battle(table.id, seed="replay-browser-olympia").battle_id
    service.declare(battle_id, Viewer.gm(), {"type": "begin"})
    for _ in range(60):
        if service.battle(battle_id).status != "active":
            break
        service.declare(battle_id, Viewer.gm(), {"type": "step", "by": "phase"})
    if service.battle(battle_id).status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    versions = service.battle(battle_id).version
    service.engine.dispose()
    return table.slug, table.gm_token, battle_id, versions


def share(server: LiveServer, battle_id: int) -> bool:
    """Mark the battle shareable where this build stores the GM's flag (the export/share work)."""
    if not hasattr(Battle, "shareable"):
        return False
    service = service_for(server)
    with service.session() as s:
        battle = s.get(Battle, battle_id)
        battle.shareable = True  # type: ignore[attr-defined]
        s.add(battle)
        s.commit()
    service.engine.dispose()
    return True


def open_replay(browser: Any, server: LiveServer, slug: str, gm_token: str | None, battle_id: int, viewport: dict[str, int], **extra: Any) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport=viewport, **extra)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    if gm_token:
        page.goto(f"{server.url}/t/{slug}/gm?key={gm_token}")
    page.goto(f"{server.url}/t/{slug}/battles/{battle_id}/replay")
    page.wait_for_selector("[data-testid=replay][data-state=ready]")
    return context, page, errors


def at(page: Any) -> tuple[int, int]:
    """The step index shown and the board's version."""
    return int(page.get_attribute("[data-testid=replay]", "data-index") or -1), int(page.get_attribute("[data-testid=board]", "data-version") or -1)


BOARD_TEXT = """() => {
  const board = document.querySelector('[data-testid=board]').cloneNode(true);
  // (an Olympia unit's losses are against the step drawn before, which depends on the way one came)
  const marks = [...board.querySelectorAll('[data-men], [data-chosen], [data-state]')].map((el) => { const d = {...el.dataset}; delete d.lost; return JSON.stringify(d); });
  return board.textContent.replace(/\\s+/g, ' ') + marks.join('');
}"""


def board_html(page: Any) -> str:
    """What the board shows: its words and numbers and its pieces' states (not the marks of what
    changed since the step drawn before, which depend on the way one came)."""
    return str(page.evaluate(BOARD_TEXT))


def wait_until(page: Any, condition: Any, timeout_ms: int) -> None:
    """Poll ``condition`` (the page's CSP forbids the string evaluation wait_for_function uses)."""
    waited = 0
    while not condition():
        assert waited < timeout_ms, "timed out"
        page.wait_for_timeout(100)
        waited += 100


def step_through(page: Any, shots: Path, name: str, steps: int) -> None:
    """Every way of moving: next to the end (the board changes), back, Home/End, arrows, the
    scrubber, play and pause, the speed."""
    assert at(page)[0] == 0
    assert page.is_disabled("[data-testid=replay-prev]") and page.is_disabled("[data-testid=replay-first]")
    page.screenshot(path=str(shots / f"{name}-first.png"))
    boards = [board_html(page)]
    for i in range(1, steps):
        page.click("[data-testid=replay-next]")
        assert at(page)[0] == i
        boards.append(board_html(page))
        assert f"Step {i + 1} of {steps}" in page.inner_text("[data-testid=replay-position]")
        if i == steps // 2:
            page.screenshot(path=str(shots / f"{name}-middle.png"))
    changed = sum(1 for a, b in zip(boards, boards[1:], strict=False) if a != b)
    assert changed >= (steps - 1) * 0.6, f"the board changed in only {changed} of {steps - 1} steps"
    assert page.is_disabled("[data-testid=replay-next]") and page.is_disabled("[data-testid=replay-last]")
    page.screenshot(path=str(shots / f"{name}-last.png"))

    page.click("[data-testid=replay-first]")
    assert at(page)[0] == 0 and board_html(page) == boards[0]
    page.click("[data-testid=replay-last]")
    assert at(page)[0] == steps - 1
    page.click("[data-testid=replay-prev]")
    assert at(page)[0] == steps - 2
    # the keyboard
    page.locator("body").focus()
    page.keyboard.press("Home")
    assert at(page)[0] == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert at(page)[0] == min(2, steps - 1)
    page.keyboard.press("ArrowLeft")
    assert at(page)[0] == 1
    page.keyboard.press("End")
    assert at(page)[0] == steps - 1 and board_html(page) == boards[-1]
    # the scrubber
    middle = steps // 2
    page.locator("[data-testid=replay-scrubber]").fill(str(middle))
    assert at(page)[0] == middle and board_html(page) == boards[middle]
    # play at 4×, pause, play again to the end (it stops there by itself); from the first step, so the
    # pause comes well before the end (from the middle of six steps the end came 0.55 s after the
    # step the test waited for: a busy machine clicked "pause" after it, which played again)
    page.click("[data-testid=replay-first]")
    page.select_option("[data-testid=replay-speed]", "4")
    page.click("[data-testid=replay-play]")
    assert page.get_attribute("[data-testid=replay-play]", "aria-pressed") == "true"
    wait_until(page, lambda: at(page)[0] > 0, 5000)
    page.click("[data-testid=replay-play]")
    assert page.get_attribute("[data-testid=replay-play]", "aria-pressed") == "false"
    paused_at = at(page)[0]
    page.wait_for_timeout(1200)
    assert at(page)[0] == paused_at, "paused, it stays"
    page.click("[data-testid=replay-play]")
    page.wait_for_selector("[data-testid=replay][data-playing=false]", timeout=2000 + 600 * steps)
    assert at(page)[0] == steps - 1
    # the address keeps the step: a reload comes back to it
    page.click("[data-testid=replay-prev]")
    version = at(page)[1]
    page.reload()
    page.wait_for_selector("[data-testid=replay][data-state=ready]")
    assert at(page) == (steps - 2, version)


def no_overflow(page: Any, label: str) -> None:
    m = page.evaluate("() => ({sw: document.documentElement.scrollWidth, vw: window.innerWidth})")
    assert m["sw"] <= m["vw"] + 1, f"{label}: the page is wider than the screen ({m})"


def test_a_whole_duel_replays_step_by_step_for_the_gm(browser: Any, live_server: LiveServer, shots: Path) -> None:
    slug, gm_token, battle_id, versions = play_duel(live_server)
    # the GM console links the finished battle's replay beside its battle controls
    console_context = browser.new_context(viewport=DESKTOP)
    console = console_context.new_page()
    console.goto(f"{live_server.url}/t/{slug}/gm?key={gm_token}")
    link = console.wait_for_selector("[data-testid=battle-controls] [data-testid=replay-link]")
    assert link.get_attribute("href") == f"/t/{slug}/battles/{battle_id}/replay"
    console.screenshot(path=str(shots / "replay-link-on-gm-console.png"))
    console_context.close()
    context, page, errors = open_replay(browser, live_server, slug, gm_token, battle_id, DESKTOP)
    try:
        assert int(page.get_attribute("[data-testid=replay]", "data-steps") or 0) == versions
        assert page.get_attribute("[data-testid=replay-role]", "data-role") == "gm"
        # the display's Phantom's Bane renderer draws both duellists
        expect(page.locator("[data-testid=combatant-jharek]")).to_be_visible()
        expect(page.locator("[data-testid=combatant-troll]")).to_be_visible()
        # the GM sees the computer's hidden choice in the step's words, marked as hidden
        assert "The computer picks" in page.inner_text("[data-testid=replay-event]")
        assert "hidden" in page.inner_text("[data-testid=replay-event] [data-testid=secret-tag]").lower()
        step_through(page, shots, "replay-duel-desktop", versions)
        # the undone steps are marked, on their step and in the log
        page.keyboard.press("Home")
        undone = False
        for _ in range(versions):
            if page.get_attribute("[data-testid=replay]", "data-undone") == "true":
                undone = True
                expect(page.locator("[data-testid=step-undone]")).to_be_visible()
                page.screenshot(path=str(shots / "replay-duel-undone-step.png"))
                break
            page.keyboard.press("ArrowRight")
        assert undone, "the undone step is in the replay"
        page.keyboard.press("End")
        assert page.locator("[data-testid=log] li.r-undone").count() >= 1
        assert "wins the duel" in page.inner_text("[data-testid=log]") or "ended" in page.inner_text("[data-testid=log]")
        expect(page.locator("[data-testid=gm-console-link]")).to_be_visible()
        assert page.locator("[data-testid=verifier-link], [data-testid=verifier-link-missing]").count() == 1
        assert page.get_attribute("[data-testid=export-link]", "href") == f"/t/{slug}/battles/{battle_id}/export.json"
        assert page.get_attribute("[data-testid=report-link]", "href") == f"/t/{slug}/battles/{battle_id}/report"
        assert page.inner_text("[data-testid=revealed-seed]") == "replay-browser-duel"
        no_overflow(page, "desktop duel")
        assert not errors, errors
    finally:
        context.close()


def test_a_whole_olympia_battle_replays_step_by_step(browser: Any, live_server: LiveServer, shots: Path) -> None:
    slug, gm_token, battle_id, versions = play_olympia(live_server)
    assert versions >= 4
    context, page, errors = open_replay(browser, live_server, slug, gm_token, battle_id, DESKTOP)
    try:
        page.wait_for_selector("[data-testid=board] [data-testid^=unit-]")
        men_first = int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0)
        step_through(page, shots, "replay-olympia-desktop", versions)
        page.keyboard.press("End")
        assert int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0) <= men_first
        assert page.locator("[data-testid=dice-tray] [data-testid=roll], [data-testid=dice-tray] .d-muted").count() >= 1
        no_overflow(page, "desktop Olympia")
        assert not errors, errors
    finally:
        context.close()


@pytest.mark.parametrize("system", ["phantoms-bane", "olympia"])
def test_the_replay_works_on_a_phone(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    slug, gm_token, battle_id, versions = (play_duel if system == "phantoms-bane" else play_olympia)(live_server)
    public = share(live_server, battle_id)
    context, page, errors = open_replay(
        browser, live_server, slug, None if public else gm_token, battle_id, PHONE, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    try:
        if public:  # the public replay: a spectator's, no hidden event
            assert page.get_attribute("[data-testid=replay-role]", "data-role") == "spectator"
            assert page.locator("[data-testid=secret-tag]").count() == 0
        # the controls are thumb-sized and on the screen
        for control in ("first", "prev", "play", "next", "last"):
            box = box_of(page.locator(f"[data-testid=replay-{control}]"))
            assert box and box["height"] >= 44 and box["width"] >= 44, (control, box)
            assert 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"] + 1, f"{control} is off the screen: {box}"
        page.screenshot(path=str(shots / f"replay-{system}-phone-first.png"))
        # the board is drawn: each side's army (or each duellist) is on the page at a size to read
        board = box_of(page.locator("[data-testid=board]"))
        assert board and board["height"] >= 150, f"the board has no room on the phone: {board}"
        parts = page.locator("[data-testid=board] [data-testid^=side-], [data-testid=board] [data-testid^=combatant-]")
        assert parts.count() == 2
        for i in range(2):
            part = box_of(parts.nth(i))
            assert part and part["height"] >= 80 and part["x"] >= 0 and part["x"] + part["width"] <= PHONE["width"] + 1, part
            assert part["y"] >= board["y"] - 1 and part["y"] + part["height"] <= board["y"] + board["height"] + 1, (part, board)
        # and a side's strength says all of its words, the break point too
        cut = page.evaluate(BARS_CUT, "[data-testid=board] .kit-bar")
        assert not cut, f"a bar's words are cut on the phone: {cut}"
        for control in ("next", "next", "next"):
            before = at(page)[0]
            page.tap(f"[data-testid=replay-{control}]")
            assert at(page)[0] == min(before + 1, versions - 1)
        page.screenshot(path=str(shots / f"replay-{system}-phone-step.png"))
        page.tap("[data-testid=replay-first]")
        step_through(page, shots, f"replay-{system}-phone", versions)
        page.screenshot(path=str(shots / f"replay-{system}-phone-end.png"), full_page=True)
        no_overflow(page, f"phone {system}")
        assert not errors, errors
    finally:
        context.close()


def test_the_table_display_links_a_shared_battles_replay(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """After the battle ends, the TV shows the replay's address and QR code, once the GM shared it."""
    slug, _gm_token, battle_id, _versions = play_duel(live_server)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/t/{slug}/display")
        page.wait_for_selector("[data-testid=board] [data-testid=combatant-jharek]")
        page.wait_for_timeout(800)
        expect(page.locator("[data-testid=display-replay-link]"), "not shared: no replay link on the TV").to_be_hidden()
        assert share(live_server, battle_id)
        page.reload()
        link = page.wait_for_selector("[data-testid=display-replay-link]")
        assert (link.get_attribute("href") or "").endswith(f"/t/{slug}/battles/{battle_id}/replay")
        expect(page.locator("[data-testid=replay-corner] img.d-join-qr")).to_be_visible()
        at_rest(page)
        page.screenshot(path=str(shots / "display-replay-corner.png"))
        # the public follows it from the TV to the replay
        phone = browser.new_context(viewport=PHONE).new_page()
        phone.goto(link.get_attribute("href") or "")
        phone.wait_for_selector("[data-testid=replay][data-state=ready]")
        assert phone.get_attribute("[data-testid=replay-role]", "data-role") == "spectator"
        phone.context.close()
    finally:
        context.close()


def play_random(server: LiveServer, system_id: str) -> tuple[str, str, int, int]:
    """A battle of a grid system: declarations the rules offer the GM, drawn at random, then the end."""
    from tests.server import test_leaks as leaks

    service = service_for(server)
    table, battle_id, accepted = leaks.play_seated_battle(
        service, system_id, f"Replay {get_system(system_id).name}", f"replay-{system_id}", 10
    )
    if service.battle(battle_id).status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    versions = service.battle(battle_id).version
    service.engine.dispose()
    return table.slug, table.gm_token, battle_id, versions


@pytest.mark.parametrize("system_id", ["eclipse-phase", "adnd", "battles-and-balances"])
def test_the_grid_systems_replay_on_the_displays_grid(browser: Any, live_server: LiveServer, shots: Path, system_id: str) -> None:
    slug, gm_token, battle_id, versions = play_random(live_server, system_id)
    assert versions >= 3
    context, page, errors = open_replay(browser, live_server, slug, gm_token, battle_id, DESKTOP)
    try:
        page.wait_for_selector("[data-testid=board] svg [data-testid=token]")
        assert page.locator("[data-testid=board] [data-testid=token]").count() == 4
        page.locator("body").focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert at(page)[0] == 2
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / f"replay-{system_id}-desktop.png"))
        page.keyboard.press("End")
        assert at(page) == (versions - 1, versions)
        assert "ended" in page.inner_text("[data-testid=log]").lower() or "over" in page.inner_text("[data-testid=log]").lower()
        no_overflow(page, system_id)
        assert not errors, errors
    finally:
        context.close()


def test_the_replay_page_has_no_serious_accessibility_violations(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """axe-core (as tests/browser/test_accessibility.py runs it) on the replay, desktop and phone."""
    from tests.browser.test_accessibility import axe_source, axe_violations

    source = axe_source.__wrapped__()  # type: ignore[attr-defined]
    slug, gm_token, battle_id, _versions = play_duel(live_server)
    found: list[str] = []
    for label, viewport, extra in (("desktop", DESKTOP, {}), ("phone", PHONE, {"is_mobile": True, "has_touch": True})):
        context, page, errors = open_replay(browser, live_server, slug, gm_token, battle_id, viewport, **extra)
        try:
            page.keyboard.press("End")
            at_rest(page)  # the dice have rolled in
            found += axe_violations(page, source, f"replay {label}")
            assert not errors, errors
        finally:
            context.close()
    assert not found, "\n".join(found)
