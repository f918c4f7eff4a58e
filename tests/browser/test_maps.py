"""Maps in real Chromium: the GM uploads a map in the console's Map tab, lines it up with the grid (the
preview follows as the numbers change), marks a square blocked; the TV and a phone show the map and the
blocked square, and the running battle offers no move into it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, box_of, create_table

pytestmark = pytest.mark.browser

BLOCK = (4, 3)  # an empty square between the two sides


def drawn_map(path: Path, squares: int = 14, side: int = 60, offset: tuple[int, int] = (24, 18)) -> Path:
    """A dungeon-like map with its own grid: `squares` squares of `side` pixels across, its first lines
    at `offset`."""
    width, height = squares * side, 9 * side
    img = Image.new("RGB", (width, height), (196, 178, 140))
    draw = ImageDraw.Draw(img)
    for i in range(-1, squares + 1):
        x = offset[0] + i * side
        draw.line([(x, 0), (x, height)], fill=(90, 70, 50), width=3)
    for j in range(-1, 10):
        y = offset[1] + j * side
        draw.line([(0, y), (width, y)], fill=(90, 70, 50), width=3)
    # a stone pillar drawn on the square the GM will block
    x0, y0 = offset[0] + BLOCK[0] * side, offset[1] + BLOCK[1] * side
    draw.rectangle([x0 + 4, y0 + 4, x0 + side - 4, y0 + side - 4], fill=(70, 70, 75))
    img.save(path, "PNG")
    return path


def click_square(page: Any, selector: str, x: int, y: int, width: int, height: int) -> None:
    page.locator(selector).scroll_into_view_if_needed()
    box = box_of(page.locator(selector))
    page.mouse.click(box["x"] + (x + 0.5) * box["width"] / width, box["y"] + (y + 0.5) * box["height"] / height)


def last_view(spy: SocketSpy) -> dict[str, Any] | None:
    """The last battle view the page received (an update or a sync answer)."""
    for frame in reversed(spy.frames):
        match = re.match(r"^\d+(\[.*)$", frame, re.S)
        if not match:
            continue
        try:
            message = json.loads(match.group(1))
        except ValueError:
            continue
        for arg in message[1:] if isinstance(message, list) else []:
            if isinstance(arg, dict):
                view = arg.get("view") or (arg.get("battle") or {}).get("view")
                if isinstance(view, dict) and "legal" in view:
                    return view
    return None


def test_the_gm_uploads_aligns_and_blocks_and_every_screen_shows_the_map(browser: Any, live_server: LiveServer,
                                                                         shots: Path, tmp_path: Path) -> None:
    picture = drawn_map(tmp_path / "crypt.png")
    gm_context = browser.new_context(viewport={"width": 1280, "height": 900})
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    phone_context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    errors: list[str] = []
    try:
        gm = gm_context.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        spy = SocketSpy(gm)
        create_table(gm, live_server, "The crypt", "battles-and-balances", ("Prince Vasyl of Ostgrund", "Shock Trooper"))
        slug = gm.url.split("/t/")[1].split("/")[0]
        gm.click("[data-testid=tab-map]")
        panel = gm.locator("[data-testid=map-panel]")
        expect(panel).to_be_visible()

        # upload
        gm.set_input_files("[data-testid=map-file]", str(picture))
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("Map uploaded")
        preview_map = gm.locator("[data-testid=map-preview] [data-testid=grid-map]")
        expect(preview_map).to_have_count(1)
        href = preview_map.get_attribute("href")
        assert re.fullmatch(r"/img/[0-9a-f]{64}\.png", href)

        # alignment: the preview moves as the numbers change, before anything is saved
        before = preview_map.get_attribute("x")
        gm.fill("[data-testid=map-squares]", "14")
        gm.fill("[data-testid=map-offset-x]", "24")
        gm.fill("[data-testid=map-offset-y]", "18")
        moved = gm.locator("[data-testid=map-preview] [data-testid=grid-map]").get_attribute("x")
        assert moved != before
        gm.screenshot(path=str(shots / "gm-map-aligning.png"))
        gm.click("[data-testid=map-align-save]")
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("lined up")

        # paint one blocked square on the preview and save it
        gm.click("[data-testid=map-paint]")
        width, height = 12, 8  # the Battles&Balances grid
        click_square(gm, "[data-testid=map-preview] svg", BLOCK[0], BLOCK[1], width, height)
        expect(gm.locator("[data-testid=map-blocked-count]")).to_contain_text("1 blocked square (not saved yet)")
        gm.click("[data-testid=map-blocked-save]")
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("1 blocked square saved")
        expect(gm.locator(f"[data-testid=map-preview] [data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']")).to_have_count(1)
        gm.locator("[data-testid=map-preview]").scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / "gm-map-panel.png"))

        # the TV and a phone (the spectator link) are open; the GM starts the battle with the square blocked
        tv = tv_context.new_page()
        tv.on("pageerror", lambda e: errors.append(str(e)))
        tv.goto(f"{live_server.url}/t/{slug}/display")
        tv.wait_for_selector("[data-testid=table-display]")
        phone = phone_context.new_page()
        phone.on("pageerror", lambda e: errors.append(str(e)))
        phone.goto(f"{live_server.url}/t/{slug}/watch")
        gm.click("[data-testid=tab-lineup]")
        gm.click("[data-testid=start-battle]")
        expect(tv.locator("[data-testid=board] [data-testid=token]").first).to_be_visible()
        expect(tv.locator("[data-testid=board] [data-testid=grid-map]")).to_have_attribute("href", href)
        expect(tv.locator(f"[data-testid=board] [data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']")).to_have_count(1)
        expect(phone.locator("[data-testid=grid-map]").first).to_have_attribute("href", href)
        expect(phone.locator(f"[data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']").first).to_be_attached()
        # the spectator's battle in detail, under the board, draws them too
        expect(phone.locator("#details [data-testid=grid-map]")).to_have_attribute("href", href)
        expect(phone.locator(f"#details [data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']")).to_have_count(1)
        # the GM console's own battle board draws the map and the blocked square too
        expect(gm.locator("[data-testid=battle] [data-testid=grid-map]")).to_have_attribute("href", href)
        expect(gm.locator(f"[data-testid=battle] [data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']")).to_have_count(1)
        # the map image itself loaded on the TV (served by its hash)
        tv.wait_for_function("(u) => fetch(u).then((r) => r.ok && r.headers.get('cache-control').includes('immutable'))", arg=href)

        # the acting character is offered no move into the blocked square
        view = None
        for _ in range(50):
            view = last_view(spy)
            if view and view.get("blocked"):
                break
            gm.wait_for_timeout(100)
        assert view is not None and view["blocked"] == [list(BLOCK)]
        move = next(t for t in view["legal"] if t["type"] == "move")
        squares = {(d["x"], d["y"]) for d in move["destinations"]}
        assert BLOCK not in squares and (BLOCK[0] + 1, BLOCK[1]) in squares
        tv.wait_for_timeout(400)
        tv.screenshot(path=str(shots / "display-map-1080p.png"))
        phone.wait_for_timeout(400)
        phone.screenshot(path=str(shots / "watch-map-phone.png"))
        gm.screenshot(path=str(shots / "gm-map-battle.png"))

        # a bad upload in the panel: a clear message, nothing changes
        bad = tmp_path / "notes.png"
        bad.write_bytes(b"this is not a picture")
        gm.click("[data-testid=tab-map]")
        gm.set_input_files("[data-testid=map-file]", str(bad))
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("not a PNG")
        expect(gm.locator("[data-testid=map-preview] [data-testid=grid-map]")).to_have_attribute("href", href)
        assert not errors, errors
    finally:
        gm_context.close()
        tv_context.close()
        phone_context.close()


@pytest.mark.parametrize(("system", "presets", "size"), [
    ("eclipse-phase", ("Jinx", "Habitat guard"), (24, 16)),
    ("adnd", ("Fighter (1st level)", "Orc"), (20, 20)),
])
def test_the_map_and_a_blocked_square_reach_the_tv_in_the_other_grid_systems(
        browser: Any, live_server: LiveServer, shots: Path, tmp_path: Path, system: str,
        presets: tuple[str, ...], size: tuple[int, int]) -> None:
    picture = drawn_map(tmp_path / "crypt.png")
    gm_context = browser.new_context(viewport={"width": 1280, "height": 900})
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    try:
        gm = gm_context.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, f"Crypt {system}", system, presets)
        slug = gm.url.split("/t/")[1].split("/")[0]
        gm.click("[data-testid=tab-map]")
        gm.set_input_files("[data-testid=map-file]", str(picture))
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("Map uploaded")
        href = gm.locator("[data-testid=map-preview] [data-testid=grid-map]").get_attribute("href")
        gm.fill("[data-testid=map-squares]", "14")
        gm.fill("[data-testid=map-offset-x]", "24")
        gm.fill("[data-testid=map-offset-y]", "18")
        gm.click("[data-testid=map-align-save]")
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("lined up")
        gm.click("[data-testid=map-paint]")
        click_square(gm, "[data-testid=map-preview] svg", BLOCK[0], BLOCK[1], *size)
        gm.click("[data-testid=map-blocked-save]")
        expect(gm.locator("[data-testid=map-status]")).to_contain_text("1 blocked square saved")
        tv = tv_context.new_page()
        tv.on("pageerror", lambda e: errors.append(str(e)))
        tv.goto(f"{live_server.url}/t/{slug}/display")
        gm.click("[data-testid=tab-lineup]")
        gm.click("[data-testid=start-battle]")
        expect(tv.locator("[data-testid=board] [data-testid=grid-map]")).to_have_attribute("href", href)
        expect(tv.locator(f"[data-testid=board] [data-testid=blocked][data-x='{BLOCK[0]}'][data-y='{BLOCK[1]}']")).to_have_count(1)
        tv.wait_for_timeout(400)
        tv.screenshot(path=str(shots / f"display-map-{system}-1080p.png"))
        assert not errors, errors
    finally:
        gm_context.close()
        tv_context.close()
