"""Fog over the map in real Chromium, in the three grid systems: the GM fogs the whole map in one tap,
drags a rectangle to reveal a room, paints fog back with the mouse and erases it with a finger, and
clears it all; the TV goes dark where the fog lies and draws no token standing in it (its socket
frames never carry that token's square), while the GM's console shows the fog dimmed over the map."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, at_rest, box_of
from tests.browser.test_display import lineup_for, service_for
from tests.browser.test_game_night import seat_phone
from webapp.tables import grid_size

pytestmark = pytest.mark.browser

GRID_SYSTEMS = ["eclipse-phase", "adnd", "battles-and-balances"]


def _live(page: Any) -> None:
    page.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=15000)


SQUARE_CENTRE = """([selector, x, y]) => {
  const svg = document.querySelector(selector);
  const cell = Number(svg.dataset.cell) || 44;
  const pt = svg.createSVGPoint();
  pt.x = (x + 0.5) * cell;
  pt.y = (y + 0.5) * cell;
  const p = pt.matrixTransform(svg.getScreenCTM());
  return [p.x, p.y];
}"""


def _centre(page: Any, selector: str, x: int, y: int, width: int, height: int) -> tuple[float, float]:
    """Where the centre of square (x, y) of a grid is on the page (whatever part of it is shown)."""
    box_of(page.locator(selector))  # (drawn)
    cx, cy = page.evaluate(SQUARE_CENTRE, [selector, x, y])
    return float(cx), float(cy)


def _drag(page: Any, selector: str, squares: list[tuple[int, int]], width: int, height: int) -> None:
    """A mouse drag over the squares, in order."""
    page.locator(selector).scroll_into_view_if_needed()
    x, y = _centre(page, selector, *squares[0], width, height)
    page.mouse.move(x, y)
    page.mouse.down()
    for sq in squares[1:]:
        page.mouse.move(*_centre(page, selector, *sq, width, height), steps=4)
    page.mouse.up()


def _touch_drag(page: Any, cdp: Any, selector: str, squares: list[tuple[int, int]], width: int, height: int) -> None:
    """A finger dragged over the squares (real touch events: Chromium makes them pointer events of
    pointerType "touch")."""
    page.locator(selector).scroll_into_view_if_needed()
    points = [_centre(page, selector, *sq, width, height) for sq in squares]
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": points[0][0], "y": points[0][1]}]})
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        for i in range(1, 5):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x0 + (x1 - x0) * i / 4, "y": y0 + (y1 - y0) * i / 4}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def _fog_count(page: Any, scope: str) -> Any:
    return page.locator(f"{scope} [data-testid=fog]").first


def _squares_in_frames(spy: SocketSpy, cid: str) -> set[tuple[int, int]]:
    """Every square the page's frames gave combatant ``cid`` (in a view's combatants)."""
    found: set[tuple[int, int]] = set()
    for frame in spy.frames:
        match = re.match(r"^\d+(\[.*)$", frame, re.S)
        if not match:
            continue
        try:
            message = json.loads(match.group(1))
        except ValueError:
            continue

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("id") == cid and isinstance(node.get("x"), int) and isinstance(node.get("y"), int):
                    found.add((node["x"], node["y"]))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(message)
    return found


@pytest.mark.parametrize("system", GRID_SYSTEMS)
def test_the_gm_paints_fog_and_the_tv_goes_dark_over_what_stands_in_it(browser: Any, live_server: LiveServer,
                                                                         shots: Path, system: str) -> None:
    service = service_for(live_server)
    table = service.create_table(f"Fog {system}", system)
    service.set_lineup(table.id, lineup_for(system))
    battle_id = service.start_battle(table.id, seed="fog").battle_id
    state = service.battle(battle_id).state
    width, height = grid_size(service.table(table_id=table.id).options)
    combatants = state["combatants"]
    entries = combatants.values() if isinstance(combatants, dict) else combatants
    placed = {c["id"]: (c["x"], c["y"]) for c in entries if isinstance(c.get("x"), int) and isinstance(c.get("y"), int)}
    service.engine.dispose()
    assert len(placed) >= 2, placed
    room_of = sorted(placed)[0]  # the combatant the GM reveals a room round
    ax, ay = placed[room_of]
    x0, x1, y0, y1 = max(0, ax - 1), min(width - 1, ax + 1), max(0, ay - 1), min(height - 1, ay + 1)
    room = {(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    in_room = sorted(cid for cid, sq in placed.items() if sq in room)
    gm_context = browser.new_context(viewport={"width": 1280, "height": 900})
    tablet_context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    phone_context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    mine = next(cid for cid in sorted(placed) if cid not in in_room)  # the player's, outside the room
    errors: list[str] = []
    try:
        tv = tv_context.new_page()
        tv.on("pageerror", lambda e: errors.append(str(e)))
        tv_spy = SocketSpy(tv)
        tv.goto(f"{live_server.url}/t/{table.slug}/display")
        expect(tv.locator("[data-testid=board] [data-testid=token]")).to_have_count(len(placed))
        gm = gm_context.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        gm.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        _live(gm)
        gm.click("[data-testid=tab-map]")
        panel = gm.locator("[data-testid=fog-panel]")
        expect(panel).to_be_visible()
        board = "[data-testid=fog-board] svg"
        phone = phone_context.new_page()
        phone.on("pageerror", lambda e: errors.append(str(e)))
        seat_phone(phone, gm, live_server, table, mine)

        # one tap fogs the whole map: the TV is dark and draws no token
        gm.click("[data-testid=fog-fill]")
        expect(gm.locator("[data-testid=fog-count]")).to_have_text("The whole map is under fog.")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(width * height))
        expect(tv.locator("[data-testid=board] [data-testid=token]")).to_have_count(0)
        look = tv.evaluate("""() => { const p = document.querySelector('[data-testid=board] [data-testid=fog] path');
            return {look: p.closest('[data-testid=fog]').dataset.look, opacity: Number(p.getAttribute('fill-opacity')), fill: p.getAttribute('fill')}; }""")
        assert look["look"] == "dark" and look["opacity"] >= 0.95, look
        at_rest(tv)
        tv.screenshot(path=str(shots / f"fog-{system}-tv-all-fog.png"))
        # the player's phone: dark too, and the player's own combatant still shows to them (alone)
        expect(phone.locator("[data-testid=fog]").first).to_have_attribute("data-look", "dark")
        expect(phone.locator("[data-testid=fog]").first).to_have_attribute("data-count", str(width * height))
        expect(phone.locator(f"[data-testid=token][data-combatant='{mine}']").first).to_be_attached()
        for cid in placed:
            if cid != mine:
                expect(phone.locator(f"[data-testid=token][data-combatant='{cid}']")).to_have_count(0)
        at_rest(phone)
        phone.screenshot(path=str(shots / f"fog-{system}-phone-all-fog.png"), full_page=True)
        frames_before = len(tv_spy.frames)

        # the GM drags a rectangle with the mouse: the room is revealed, and what stands in it shows
        gm.click("[data-testid=fog-tool-reveal]")
        _drag(gm, board, [(x0, y0), (x1, y1)], width, height)
        expect(gm.locator("[data-testid=fog-status]")).to_have_text(f"Revealed {len(room)} squares.")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(width * height - len(room)))
        expect(tv.locator("[data-testid=board] [data-testid=token]")).to_have_count(len(in_room))
        for cid in in_room:
            expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant='{cid}']")).to_have_count(1)
        # no frame the TV got since the fog fell gave a square to anyone outside the room
        for cid, sq in placed.items():
            if cid not in in_room:
                tv_since = SocketSpy.__new__(SocketSpy)
                tv_since.frames = tv_spy.frames[frames_before:]
                assert sq not in _squares_in_frames(tv_since, cid), (cid, sq)
        at_rest(tv)
        tv.screenshot(path=str(shots / f"fog-{system}-tv-room-revealed.png"))
        gm.locator("[data-testid=fog-panel]").scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / f"fog-{system}-console-fog-panel.png"))

        # the GM paints fog back over the revealed combatant's row with the mouse
        gm.click("[data-testid=fog-tool-paint]")
        row = [(x, ay) for x in range(x0, x1 + 1)]
        _drag(gm, board, row, width, height)
        expect(gm.locator("[data-testid=fog-status]")).to_have_text(f"Fogged {len(row)} squares.")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(width * height - len(room) + len(row)))
        expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant='{room_of}']")).to_have_count(0)
        gm.click("[data-testid=fog-tool-paint]")  # tapped again: the tool is put down
        expect(gm.locator("[data-testid=fog-tool-paint]")).to_have_attribute("aria-pressed", "false")

        # and erases it again with a finger, on a tablet's console
        tablet = tablet_context.new_page()
        tablet.on("pageerror", lambda e: errors.append(str(e)))
        tablet.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        _live(tablet)
        tablet.click("[data-testid=tab-map]")
        expect(tablet.locator("[data-testid=fog-count]")).to_have_text(f"{width * height - len(room) + len(row)} squares under fog.")
        tablet.locator("[data-testid=fog-tool-erase]").tap()
        cdp = tablet_context.new_cdp_session(tablet)
        _touch_drag(tablet, cdp, board, row, width, height)
        expect(tablet.locator("[data-testid=fog-status]")).to_have_text(f"Cleared {len(row)} squares.")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(width * height - len(room)))
        expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant='{room_of}']")).to_have_count(1)
        tablet.locator("[data-testid=fog-tool-erase]").tap()  # put down
        # the other console follows
        expect(gm.locator("[data-testid=fog-count]")).to_have_text(f"{width * height - len(room)} squares under fog.")

        # with a tool picked, the GM paints on the battle board itself (beside the Map tab)
        gm.click("[data-testid=fog-tool-paint]")
        expect(gm.locator("[data-testid=fog-tool-paint]")).to_have_attribute("aria-pressed", "true")
        main = "[data-testid=battle] svg[data-testid=grid]"
        gm.click("[data-testid=fog-clear]")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", "0")
        expect(tv.locator("[data-testid=board] [data-testid=token]")).to_have_count(len(placed))
        # (squares the console's board shows: it opens on the fight, which the room is round)
        stroke = sorted({(ax, ay), (x0 if x0 != ax else x1, ay)})
        _drag(gm, main, stroke, width, height)
        expect(gm.locator("[data-testid=fog-status]")).to_have_text(f"Fogged {len(stroke)} squares.")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(len(stroke)))
        expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant='{room_of}']")).to_have_count(0)
        expect(gm.locator("[data-testid=battle] [data-testid=fog]").first).to_have_attribute("data-count", str(len(stroke)))
        at_rest(gm)
        gm.screenshot(path=str(shots / f"fog-{system}-console-painted-on-the-board.png"))
        gm.click("[data-testid=fog-tool-paint]")  # put down: the board takes taps again
        expect(gm.locator("[data-testid=fog-tool-paint]")).to_have_attribute("aria-pressed", "false")

        # the GM's own battle board shows the fog dimmed, every token still on it
        gm.click("[data-testid=fog-fill]")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", str(width * height))
        gm.click("[data-testid=tab-battle]")
        dim = gm.locator("[data-testid=battle] [data-testid=fog]").first
        expect(dim).to_have_attribute("data-look", "dim")
        expect(dim).to_have_attribute("data-count", str(width * height))
        expect(gm.locator("[data-testid=battle] [data-testid=token]")).to_have_count(len(placed))
        at_rest(gm)
        gm.screenshot(path=str(shots / f"fog-{system}-console-battle-dimmed.png"))

        # one tap clears it all: every token is back on the TV
        gm.click("[data-testid=tab-map]")
        gm.click("[data-testid=fog-clear]")
        expect(_fog_count(tv, "[data-testid=board]")).to_have_attribute("data-count", "0")
        expect(tv.locator("[data-testid=board] [data-testid=token]")).to_have_count(len(placed))

        # sight on: the whole map fogged again, the squares round the player's combatant stay clear
        gm.select_option("[data-testid=fog-sight]", "3")
        expect(gm.locator("[data-testid=fog-status]")).to_have_text("Fog now clears 3 squares round each player's combatant.")
        gm.click("[data-testid=fog-fill]")
        expect(gm.locator("[data-testid=fog-status]")).to_have_text("The whole map is under fog.")
        count = tv.locator("[data-testid=board] [data-testid=fog]").first
        expect(count).not_to_have_attribute("data-count", str(width * height))
        expect(count).not_to_have_attribute("data-count", "0")
        expect(tv.locator(f"[data-testid=board] [data-testid=token][data-combatant='{mine}']")).to_have_count(1)
        at_rest(tv)
        tv.screenshot(path=str(shots / f"fog-{system}-tv-sight.png"))
        assert errors == []
    finally:
        for context in (gm_context, tablet_context, tv_context, phone_context):
            context.close()
