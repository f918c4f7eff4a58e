"""The table display in real Chromium, for each of the five systems: it fits 1920×1080 (and 1280×720,
3840×2160) without scrolling, its smallest text is 24 px at 1080p, the board covers at least half the
screen, grid tokens are at least 64 px, and nothing only the GM may see reaches its DOM or its socket.

The tables are set up through the service on the live server's own database before any page opens
(the server reads every table and battle from the database), so the test does not depend on the GM
console's forms."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rules.core import Viewer
from tests.browser.conftest import WORDS_BROKEN, LiveServer, SocketSpy, at_rest, box_of
from webapp.db import make_engine
from webapp.service import BattleService

pytestmark = pytest.mark.browser

GM_NOTE = "GMNOTE-ambush-behind-the-reactor-7Q"
SYSTEMS = ["phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances"]
GRID_SYSTEMS = {"eclipse-phase", "adnd", "battles-and-balances"}


def service_for(server: LiveServer) -> BattleService:
    return BattleService(make_engine(f"sqlite:///{server.instance / 'battleboard.sqlite3'}"))


def lineup_for(system: str) -> list[dict[str, Any]]:
    from rules.registry import get_system

    presets = {p["name"]: p for p in get_system(system).presets()}

    def pick(name: str, side: str, **extra: Any) -> dict[str, Any]:
        return {**presets[name], "side": side, "controller": "gm", **extra}

    if system == "phantoms-bane":
        return [pick("Jharek", "A"), pick("Wild Monster", "B")]
    if system == "eclipse-phase":
        return [pick("Jinx", "A"), pick("Exhuman stalker", "B", durability=47), pick("Habitat guard", "A"), pick("Security synth", "B")]
    if system == "olympia":
        return [pick("Lord of the keep", "A"), pick("Knight commander", "B"), pick("Captain of archers", "B"), pick("Noble with two pikemen", "A")]
    if system == "adnd":
        return [pick("Fighter (1st level)", "A"), pick("Cleric (2nd level)", "A"), pick("Orc", "B", hp=37), pick("Goblin", "B")]
    return [pick("Prince Vasyl of Ostgrund", "A"), pick("Shock Trooper", "B"), pick("Baerg the Fighter", "A"), pick("Huge Orc", "B")]


def prepare(server: LiveServer, system: str) -> tuple[str, str]:
    """A table of ``system`` with its battle started, a GM note and (Phantom's Bane) one side's secret
    choice pending; returns its slug and the GM's key."""
    service = service_for(server)
    table = service.create_table(f"Display {system}", system)
    service.set_lineup(table.id, lineup_for(system))
    service.set_notes(table.id, GM_NOTE)
    result = service.start_battle(table.id, seed="display-test")
    if system == "phantoms-bane":
        service.declare(result.battle_id, Viewer.gm(), {"type": "choose", "combatant": "c1", "option": "run_away"})
    service.engine.dispose()
    return table.slug, table.gm_token


MEASURE = """() => {
  const stage = document.getElementById('stage');
  const vw = window.innerWidth, vh = window.innerHeight;
  let smallest = Infinity, smallestText = '';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    const el = node.parentElement;
    if (!el || (el.checkVisibility && !el.checkVisibility({visibilityProperty: true}))) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) continue;
    const board = el.closest('[data-testid=board]');
    if (board) {
      const b = board.getBoundingClientRect();
      if (r.right <= b.left || r.left >= b.right || r.bottom <= b.top || r.top >= b.bottom) continue;  // clipped away
    }
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement) {
      const m = el.getScreenCTM();
      size *= Math.hypot(m.a, m.b);
    } else {
      size *= stage.getBoundingClientRect().width / stage.offsetWidth;
    }
    if (size < smallest) { smallest = size; smallestText = node.textContent.trim().slice(0, 40); }
  }
  const board = document.querySelector('[data-testid=board]').getBoundingClientRect();
  const tokens = [...document.querySelectorAll('[data-testid=token]')].map((t) => {
    const body = t.querySelector('.token-body') || t.querySelector('.kit-token-disc') || t;
    const r = body.getBoundingClientRect();
    return {id: t.dataset.combatant, w: r.width, h: r.height, visible: r.right > board.left && r.left < board.right && r.bottom > board.top && r.top < board.bottom};
  });
  return {
    scrollW: document.documentElement.scrollWidth, scrollH: document.documentElement.scrollHeight,
    bodyW: document.body.scrollWidth, bodyH: document.body.scrollHeight,
    vw, vh, smallest, smallestText, board: {w: board.width, h: board.height}, tokens,
    text: document.body.innerText,
  };
}"""


TRAY_PURPOSES = """() => {
  const tray = document.querySelector('[data-testid=dice-tray]');
  const purposes = [...tray.querySelectorAll('[data-testid=roll] .kit-roll-purpose')];
  const cut = (p) => p.scrollWidth > p.clientWidth + 1 || p.scrollHeight > p.clientHeight + 1; // (cut across, or its lines clamped)
  return {rolls: purposes.length, cut: purposes.filter(cut).map((p) => p.textContent),
          scroll: tray.scrollHeight, client: tray.clientHeight};
}"""


def measure(page: Any) -> dict[str, Any]:
    return page.evaluate(MEASURE)


def assert_fits(m: dict[str, Any], label: str) -> None:
    assert m["scrollW"] <= m["vw"] and m["scrollH"] <= m["vh"], f"{label}: the page scrolls ({m['scrollW']}×{m['scrollH']} in {m['vw']}×{m['vh']})"
    assert m["bodyW"] <= m["vw"] and m["bodyH"] <= m["vh"], f"{label}: the body overflows"


def open_display(browser: Any, url: str, width: int, height: int, **extra: Any) -> tuple[Any, Any, SocketSpy]:
    context = browser.new_context(viewport={"width": width, "height": height}, **extra)
    page = context.new_page()
    spy = SocketSpy(page)
    page.goto(url)
    page.wait_for_selector("[data-testid=connection-status][data-state=live]")
    return context, page, spy


@contextmanager
def display_of(browser: Any, server: LiveServer, system: str) -> Iterator[Any]:
    """The table display of a new table of ``system`` (its battle started) at 1920×1080, its board
    drawn: the page, closed afterwards."""
    slug, _gm_token = prepare(server, system)
    context, page, _spy = open_display(browser, f"{server.url}/t/{slug}/display", 1920, 1080)
    try:
        wait_for_board(page, system)
        yield page
    finally:
        context.close()


def wait_for_board(page: Any, system: str) -> None:
    if system in GRID_SYSTEMS:
        page.wait_for_selector("[data-testid=board] [data-testid=token]")
    elif system == "olympia":
        page.wait_for_selector("[data-testid=board] [data-testid^=unit-]")
    else:
        page.wait_for_selector("[data-testid=board] [data-testid=chosen-c1][data-chosen=true]")
    at_rest(page)  # before the screenshot


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_table_display_reads_from_across_the_room(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    slug, gm_token = prepare(live_server, system)
    url = f"{live_server.url}/t/{slug}/display"
    context, page, spy = open_display(browser, url, 1920, 1080)
    try:
        page.wait_for_selector("[data-testid=table-display]")
        wait_for_board(page, system)
        page.screenshot(path=str(shots / f"display-{system}-1080p.png"))
        m = measure(page)
        assert_fits(m, "1920×1080")
        assert m["smallest"] >= 24 - 0.01, f"text {m['smallestText']!r} is {m['smallest']:.1f} px at 1080p"
        assert m["board"]["w"] * m["board"]["h"] >= 0.5 * 1920 * 1080, f"the board covers only {m['board']}"
        if system in GRID_SYSTEMS:
            visible = [t for t in m["tokens"] if t["visible"]]
            assert len(visible) == len(lineup_for(system)), f"not every token is on the board: {m['tokens']}"
            for t in visible:
                assert t["w"] >= 64 and t["h"] >= 64, f"token {t['id']} is {t['w']:.0f}×{t['h']:.0f} px"
            # the dice tray: its rolls fit it whole, and each says in full what it was for (the
            # initiative rolls of four combatants read "Habitat guard i…" when they stood side by side)
            tray = page.evaluate(TRAY_PURPOSES)
            assert not tray["cut"] and tray["scroll"] <= tray["client"] + 1, tray
            if system == "eclipse-phase":
                assert tray["rolls"] == 4, tray  # (the four initiative rolls of the first action turn)
        # the turn cue names who acts (or what is awaited) in large words
        cue = page.inner_text("[data-testid=turn-cue]")
        assert cue.strip(), "no turn cue"
        if system in ("eclipse-phase", "battles-and-balances"):
            assert cue.startswith("Now: "), cue

        # nothing only the GM sees: the GM's note, the GM's key, hidden NPC values, a pending choice
        frames = spy.text()
        assert frames, "the display received nothing"
        html = page.content()
        for where, text in (("DOM", html), ("socket", frames)):
            assert GM_NOTE not in text, f"the GM's note reached the display's {where}"
            assert gm_token not in text, f"the GM's key reached the display's {where}"
            assert '"gm_notes"' not in text and '"lineup"' not in text, f"the GM's table payload reached the display's {where}"
        if system == "eclipse-phase":
            assert '"durability"' not in frames, "an NPC's Durability reached the display's socket"
            assert "/47" not in m["text"] and "47" not in page.inner_text("[data-testid=board]"), "an NPC's Durability is on the display"
        if system == "adnd":
            assert '"hp_max"' not in frames and '"hp": 37' not in frames, "an NPC's hit points reached the display's socket"
            assert "37" not in page.inner_text("[data-testid=board]"), "an NPC's hit points are on the display"
        if system == "phantoms-bane":
            leaks = [p for p in (r'"choice":\s*"run_away"', r'"option":\s*"run_away"', r"will run away") if re.search(p, frames)]
            assert not leaks, f"the pending choice reached the display's socket: {leaks}"
            assert "Run Away" not in m["text"], "the pending choice is on the display"
            assert page.get_attribute("[data-testid=chosen-c2]", "data-chosen") == "false"

        # the same picture scaled to a 720p laptop and a 4K TV, never scrolled
        for width, height in ((1280, 720), (3840, 2160)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(400)
            m = measure(page)
            assert_fits(m, f"{width}×{height}")
            assert m["board"]["w"] >= 0.6 * width, f"the board does not scale with the screen at {width}×{height}"
            page.screenshot(path=str(shots / f"display-{system}-{height}p.png"))
    finally:
        context.close()


def test_the_spectator_link_shows_the_same_display_on_a_phone(browser: Any, live_server: LiveServer, shots: Path) -> None:
    slug, gm_token = prepare(live_server, "eclipse-phase")
    context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True, device_scale_factor=2)
    try:
        page = context.new_page()
        spy = SocketSpy(page)
        page.goto(f"{live_server.url}/t/{slug}/watch")
        page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        page.wait_for_selector("[data-testid=board] [data-testid=token]")
        page.wait_for_timeout(600)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, "the spectator page scrolls sideways on a phone"
        assert page.locator("[data-testid=board] [data-testid=token]").count() == 4
        # the battle in detail under it: its grid pinches and fits the phone's width, as a player's
        # does, instead of scrolling sideways at a fixed size
        page.wait_for_selector("#details svg.grid")
        assert page.get_attribute("#details svg.grid", "class").split().count("zoomable") == 1
        sideways = page.evaluate("""() => [...document.querySelectorAll('.d-details *')].filter((e) => {
          const o = getComputedStyle(e).overflowX;
          return (o === 'auto' || o === 'scroll') && e.scrollWidth > e.clientWidth + 1;
        }).map((e) => e.className.baseVal ?? e.className)""")
        assert not sideways, f"the battle in detail scrolls sideways on a phone: {sideways}"
        grid_box = box_of(page.locator("#details svg.grid"))
        assert grid_box and grid_box["x"] >= 0 and grid_box["x"] + grid_box["width"] <= 375, grid_box
        page.screenshot(path=str(shots / "watch-eclipse-phase-phone.png"), full_page=True)
        # the spectator zooms in with the wheel (a pinch on the phone) and drags the board along
        view_box = "() => document.querySelector('[data-testid=board] svg').getAttribute('viewBox').split(' ').map(Number)"
        before = page.evaluate(view_box)
        box = box_of(page.locator("[data-testid=board] svg"))
        assert box
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, -300)
        zoomed = page.evaluate(view_box)
        assert zoomed[2] < before[2], f"the wheel did not zoom: {before} -> {zoomed}"
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2, steps=6)
        page.mouse.up()
        panned = page.evaluate(view_box)
        assert panned[0] < zoomed[0] and panned[2] == zoomed[2], f"the drag did not pan: {zoomed} -> {panned}"
        assert GM_NOTE not in spy.text() and gm_token not in spy.text()
        assert json.dumps(GM_NOTE) not in page.content()
    finally:
        context.close()


def test_a_large_army_scrolls_on_the_spectators_board(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """On the spectator's page (laid out for its screen, not fitted like the TV's) an Olympia battle of
    30 units a side scrolls on the board, from the keyboard too, instead of losing its last units
    under the board's edge; the blocks under the tiles scroll with them. On a wide screen the armies
    face each other, as on the TV."""
    from rules.registry import get_system

    presets = get_system("olympia").presets()
    troops = {f.name for f in get_system("olympia").combatant_fields()} - {"health", "behind", "leader", "noble_attack", "noble_defence"}
    lineup = []
    for i in range(60):
        entry = {**presets[i % len(presets)], "side": "AB"[i % 2], "controller": "gm", "seat": None}
        entry.update({k: v * 40 for k, v in entry.items() if k in troops and isinstance(v, int) and not isinstance(v, bool)})
        entry.update(id=f"c{i + 1}", name=f"{entry['name']} {i + 1}"[:40], leader=i < 2)
        lineup.append(entry)
    service = service_for(live_server)
    table = service.create_table("Sixty units", "olympia")
    service.set_lineup(table.id, lineup)
    service.start_battle(table.id, seed="watch-test")
    service.engine.dispose()
    for width, height in ((1280, 720), (1920, 1080)):
        context, page, _spy = open_display(browser, f"{live_server.url}/t/{table.slug}/watch", width, height)
        try:
            page.wait_for_selector("[data-testid=board] [data-testid=unit-c60]")
            page.wait_for_timeout(400)
            sides = page.evaluate("""() => ['A', 'B'].map((s) => document.querySelector(`[data-testid=board] [data-testid=side-${s}]`).getBoundingClientRect())
                                           .map((r) => ({x: r.x, y: r.y}))""")
            if width >= 1400:
                assert sides[0]["y"] == sides[1]["y"] and sides[0]["x"] < sides[1]["x"], f"the armies do not face each other: {sides}"
            else:
                assert sides[0]["y"] < sides[1]["y"], f"the armies are not one above the other: {sides}"
            board = page.locator("[data-testid=board] .old")
            assert board.get_attribute("tabindex") == "0" and board.get_attribute("aria-label")
            overflow = page.evaluate("() => { const el = document.querySelector('[data-testid=board] .old'); return [el.scrollHeight, el.clientHeight, document.querySelector('[data-testid=board]').clientHeight, document.querySelectorAll('[data-testid=board] [data-testid^=unit-]').length]; }")
            assert overflow[0] > overflow[1], f"the armies fit the board: nothing to scroll {overflow}"
            board.focus()
            page.keyboard.press("End")
            page.wait_for_timeout(300)
            last = page.evaluate("""() => {
              const box = document.querySelector('[data-testid=board]').getBoundingClientRect();
              const tiles = [...document.querySelectorAll('[data-testid=board] [data-testid=side-B] [data-testid^=unit-]')].map((t) => t.getBoundingClientRect());
              const lowest = tiles.reduce((a, b) => (b.bottom > a.bottom ? b : a));
              return {bottom: lowest.bottom, boardBottom: box.bottom, top: lowest.top, boardTop: box.top};
            }""")
            assert last["boardTop"] <= last["top"] and last["bottom"] <= last["boardBottom"] + 1, f"side B's last unit is not reachable: {last}"
            # the canvas under the tiles covers them all: the lowest unit of side B has its block drawn
            lowest = page.evaluate("""() => [...document.querySelectorAll('[data-testid=board] [data-testid=side-B] [data-testid^=unit-]')]
              .reduce((a, b) => (b.getBoundingClientRect().bottom > a.getBoundingClientRect().bottom ? b : a)).dataset.testid.slice(5)""")
            drawn = olympia_tile_pixels(page, lowest)
            assert drawn["block"] > 30, f"the block of {lowest} is not under its tile: {drawn}"
            page.screenshot(path=str(shots / f"watch-olympia-sixty-units-{width}.png"))
        finally:
            context.close()


def test_the_join_corner_shows_until_the_battle_starts(browser: Any, live_server: LiveServer, shots: Path) -> None:
    service = service_for(live_server)
    table = service.create_table("Friday night", "battles-and-balances")
    service.set_lineup(table.id, lineup_for("battles-and-balances"))
    context, page, _spy = open_display(browser, f"{live_server.url}/t/{table.slug}/display", 1920, 1080)
    try:
        corner = page.locator("[data-testid=join-corner]")
        corner.wait_for()
        assert page.inner_text("[data-testid=join-corner-code]") == table.join_code
        page.wait_for_function("() => document.querySelector('.d-join-qr') && document.querySelector('.d-join-qr').naturalWidth > 0")
        box = box_of(page.locator(".d-join-qr"))
        assert box and box["width"] >= 160, "the QR code is too small to scan from the sofa"
        m = measure(page)
        assert_fits(m, "join corner")
        assert m["smallest"] >= 24 - 0.01, f"text {m['smallestText']!r} is {m['smallest']:.1f} px"
        page.screenshot(path=str(shots / "display-join-corner.png"))
        # a player joins and the battle starts: the corner goes, and the cue names the player's seat
        _table, seat = service.join(table.join_code, "Alice")
        lineup = lineup_for("battles-and-balances")
        lineup[0] |= {"controller": "seat", "seat": seat.public_id}
        service.set_lineup(table.id, lineup)
        service.start_battle(table.id, seed="join-corner")
        page.reload()
        page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        page.wait_for_selector("[data-testid=board] [data-testid=token]")
        assert page.locator("[data-testid=join-corner]").is_hidden()
        assert page.inner_text("[data-testid=turn-cue]") == "Now: Prince Vasyl of Ostgrund (Alice)"
    finally:
        context.close()
        service.engine.dispose()


GM_DECLARE = """async ([slug, token, declarations]) => {
  const socket = io({auth: {table: slug, token}, transports: ['websocket']});
  await new Promise((resolve) => socket.on('connect', resolve));
  const call = (event, payload) => new Promise((resolve) => socket.emit(event, payload, resolve));
  const acks = [];
  for (const declaration of declarations) {
    const sync = await call('sync', {battle_id: null, since_v: 0});
    acks.push(await call('declare', {battle_id: sync.battle.battle_id, expected_v: sync.battle.v, declaration, msg_id: Math.random().toString(36).slice(2)}));
  }
  socket.disconnect();
  return acks;
}"""


def gm_declares(helper: Any, server: LiveServer, slug: str, gm_token: str, *declarations: dict[str, Any]) -> None:
    """The GM sends declarations over a socket of its own (as its console would), so the display
    receives them live; the helper page only borrows the Socket.IO client."""
    if not helper.evaluate("typeof io !== 'undefined'"):
        helper.goto(server.url + "/")
        helper.add_script_tag(url=server.url + "/vendor/socket.io.min.js")
    acks = helper.evaluate(GM_DECLARE, [slug, gm_token, list(declarations)])
    assert all(ack and ack.get("ok") for ack in acks), acks


TILE_PIXELS = """(id) => {
  const tile = document.querySelector(`[data-testid=unit-${id}]`);
  const canvas = tile.closest('.old-side').querySelector('canvas.old-canvas');
  const t = tile.getBoundingClientRect(), c = canvas.getBoundingClientRect();
  const k = canvas.width / c.width;
  const data = canvas.getContext('2d').getImageData(Math.round((t.left - c.left) * k), Math.round((t.top - c.top) * k),
    Math.max(1, Math.round(t.width * k)), Math.max(1, Math.round(t.height * k))).data;
  let red = 0, block = 0, white = 0;
  for (let i = 0; i < data.length; i += 4) {
    const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
    if (a < 250) continue;
    if (Math.abs(r - 0xc0) < 8 && Math.abs(g - 0x39) < 8 && Math.abs(b - 0x2b) < 8) red++;
    else if (r > 240 && g > 240 && b > 240) white++;
    else block++;
  }
  return {red, block, white};
}"""


def olympia_tile_pixels(page: Any, unit: str) -> dict[str, int]:
    """What the Olympia display's canvas shows in a unit's tile: pixels of the red of its losses, of
    its block (any other opaque colour) and of its number of men (white)."""
    return page.evaluate(TILE_PIXELS, unit)


def test_the_display_animates_what_happens(browser: Any, live_server: LiveServer, shots: Path) -> None:
    helper_context = browser.new_context()
    helper = helper_context.new_page()
    slug, gm_token = prepare(live_server, "olympia")
    context, page, _spy = open_display(browser, f"{live_server.url}/t/{slug}/display", 1920, 1080, reduced_motion="no-preference")
    try:
        page.wait_for_selector("[data-testid=board] [data-testid^=unit-]")
        men_before = int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0)
        gm_declares(helper, live_server, slug, gm_token, {"type": "begin"}, {"type": "step", "by": "phase"})
        # the missile phase: the lord's unit loses men, the part that fell shows red round its block,
        # the side's strength bar falls, the result is in words
        page.wait_for_selector("[data-testid=unit-c1]:not([data-lost='0'])")
        assert int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0) < men_before
        drawn = olympia_tile_pixels(page, "c1")
        assert drawn["red"] > 50 and drawn["block"] > 50, f"the lord's block and its losses are not drawn: {drawn}"
        assert "fell" in (page.get_attribute("[data-testid=unit-c1]", "aria-label") or "")
        assert re.search(r"missile attacks: side A loses \d", page.inner_text("[data-testid=last-result-words]"))
        assert "melee phase next" in page.inner_text("[data-testid=phase]")
        at_rest(page)
        page.screenshot(path=str(shots / "display-olympia-casualties.png"))
        # the phase's rolls of many dice say in full what they were for, and fit the tray
        tray = page.evaluate(TRAY_PURPOSES)
        assert tray["rolls"] and not tray["cut"] and tray["scroll"] <= tray["client"] + 1, tray
        gm_declares(helper, live_server, slug, gm_token, {"type": "step", "by": "battle"})
        page.wait_for_selector("[data-testid^=side-][data-broken=true]")
        at_rest(page)  # (the shake is over)
        page.screenshot(path=str(shots / "display-olympia-broken.png"))
        assert_fits(measure(page), "Olympia at the end")

        # Phantom's Bane: both choose, and the display reveals both options with the dice
        slug, gm_token = prepare(live_server, "phantoms-bane")
        page.goto(f"{live_server.url}/t/{slug}/display")
        page.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        gm_declares(helper, live_server, slug, gm_token, {"type": "choose", "combatant": "c2", "option": "attack"})
        page.wait_for_selector("[data-testid=reveal-c1]")
        assert "Run Away" in page.inner_text("[data-testid=reveal-c1]")
        assert "Attack" in page.inner_text("[data-testid=reveal-c2]")
        # with this seed the runner is caught and has to attack: the TV says so beside the choice (the
        # blows that follow are an attack's); the one who chose to attack has no such line
        assert "got away" not in page.inner_text("body")
        assert page.inner_text("[data-testid=forced-c1]") == "caught: Attack"
        assert page.locator("[data-testid=forced-c2]").count() == 0
        at_rest(page)
        page.screenshot(path=str(shots / "display-phantoms-bane-reveal.png"))
        m = measure(page)
        assert_fits(m, "the reveal")
        assert m["smallest"] >= 24 - 0.01, f"text {m['smallestText']!r} is {m['smallest']:.1f} px"
    finally:
        context.close()
        helper_context.close()


def test_a_map_lies_under_the_grid_with_blocked_squares_and_token_colours(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """The map's own grid (20 squares across a 1000 px image, first lines at pixel 25, 10) lines up
    with the board's; blocked squares are hatched; a token's own colour replaces its side's."""
    import hashlib
    import io

    from PIL import Image, ImageDraw

    from webapp.models import StoredImage

    image = Image.new("RGB", (1000, 800), (40, 52, 40))
    draw = ImageDraw.Draw(image)
    for x in range(25, 1000, 50):
        draw.line([(x, 0), (x, 800)], fill=(200, 40, 40), width=3)
    for y in range(10, 800, 50):
        draw.line([(0, y), (1000, y)], fill=(200, 40, 40), width=3)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    data = buffer.getvalue()
    digest = hashlib.sha256(data).hexdigest()

    service = service_for(live_server)
    table = service.create_table("Map night", "battles-and-balances")
    with service.session() as s:
        s.add(StoredImage(sha256=digest, content_type="image/png", width=1000, height=800, size=len(data), data=data, table_id=table.id))
        s.commit()
    blocked = [[5, 3], [5, 4], [6, 4]]
    service.write_board(table.id, {
        "map": {"image": digest, "type": "image/png", "width": 1000, "height": 800, "squares_across": 20, "offset_x": 25, "offset_y": 10},
        "tokens": {"c2": {"colour": "#8a2be2", "portrait": None}},
        "blocked": blocked,
    })
    service.set_lineup(table.id, lineup_for("battles-and-balances"))
    service.start_battle(table.id, seed="map")
    service.engine.dispose()
    context, page, _spy = open_display(browser, f"{live_server.url}/t/{table.slug}/display", 1920, 1080)
    try:
        page.wait_for_selector("[data-testid=board] [data-testid=token]")
        page.wait_for_function("() => document.querySelectorAll('[data-testid=grid-map]').length === 1")
        # 100 user units a square; the map's square is 50 image pixels: 2 units a pixel, its first
        # lines at pixel (25, 10) fall on the board's corner (0, 0)
        geometry = page.evaluate("""() => { const m = document.querySelector('[data-testid=grid-map]');
            return ['x', 'y', 'width', 'height'].map((k) => Number(m.getAttribute(k))); }""")
        assert geometry == [-50, -20, 2000, 1600]
        page.wait_for_function("""(url) => performance.getEntriesByType('resource').some((e) => e.name.endsWith(url))""",
                               arg=f"/img/{digest}.png", timeout=10_000)  # the map image is fetched
        drawn = sorted(page.evaluate("""() => [...document.querySelectorAll('[data-testid=board] [data-testid=blocked]')]
            .map((r) => [Number(r.dataset.x), Number(r.dataset.y)])"""))
        assert drawn == sorted(blocked)
        fill = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=board] [data-combatant=c2] .token-body')).fill")
        assert fill == "rgb(138, 43, 226)"
        at_rest(page)
        page.screenshot(path=str(shots / "display-map-blocked.png"))
    finally:
        context.close()


def test_a_duels_spectator_on_a_phone_sees_both_duellists_whole(browser: Any, live_server: LiveServer, shots: Path) -> None:
    """On a phone the spectator's board stacks the two duellists; after a reveal (the options and the
    dice on each card, the tallest they get) both cards are whole on the board, none under its edge."""
    slug, gm_token = prepare(live_server, "phantoms-bane")
    helper_context = browser.new_context()
    context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True, device_scale_factor=2)
    try:
        gm_declares(helper_context.new_page(), live_server, slug, gm_token, {"type": "choose", "combatant": "c2", "option": "attack"})
        page = context.new_page()
        page.goto(f"{live_server.url}/t/{slug}/watch")
        page.wait_for_selector("[data-testid=board] [data-testid=reveal-c2]")
        at_rest(page)  # (the reveal turned over, the dice rolled in)
        board = box_of(page.locator("[data-testid=board]"))
        assert board
        for cid in ("c1", "c2"):
            card = box_of(page.locator(f"[data-testid=board] [data-testid=combatant-{cid}]"))
            assert card and card["y"] + card["height"] <= board["y"] + board["height"] + 1, f"{cid}'s card falls under the board's edge: {card} {board}"
            assert card["x"] >= board["x"] - 1 and card["x"] + card["width"] <= board["x"] + board["width"] + 1, (cid, card, board)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        # no name is broken inside a word, on the board or in the battle in detail under it
        broken = page.evaluate(WORDS_BROKEN, ".pbd-name, .pb-name")
        assert not broken, f"a duellist's name is broken inside a word on the spectator's phone: {broken}"
        page.screenshot(path=str(shots / "watch-phantoms-bane-phone.png"), full_page=True)
    finally:
        context.close()
        helper_context.close()
