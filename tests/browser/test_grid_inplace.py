"""The grid updated in place (static/js/grid.js) in real Chromium: an update that moves one token
moves that token's element (the same node) and keeps the grid lines' element; the callbacks called
after several updates are the latest spec's; the active token's halo is kept while it stays active;
a phone's zoom survives updates; a container emptied by its caller gets a fresh grid.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer, box_of, console_settled, create_table

pytestmark = pytest.mark.browser

MARK_DISPLAY = """() => {
  const q = (sel) => document.querySelector(sel);
  window.__kept = {
    svg: q('[data-testid=board] svg'),
    lines: q('[data-testid=board] .grid-lines'),
    outer: q('[data-testid=board] [data-testid=token][data-combatant=c2]'),
    inner: q('[data-testid=board] [data-testid=token-c2]'),
    other: q('[data-testid=board] [data-testid=token-c1]'),
  };
  return window.__kept.inner.getAttribute('transform');
}"""

CHECK_DISPLAY = """() => {
  const q = (sel) => document.querySelector(sel);
  const k = window.__kept;
  return {
    svg: k.svg === q('[data-testid=board] svg'),
    lines: k.lines === q('[data-testid=board] .grid-lines'),
    outer: k.outer === q('[data-testid=board] [data-testid=token][data-combatant=c2]'),
    inner: k.inner === q('[data-testid=board] [data-testid=token-c2]'),
    other: k.other === q('[data-testid=board] [data-testid=token-c1]'),
    connected: k.inner.isConnected && k.lines.isConnected,
    transform: q('[data-testid=board] [data-testid=token-c2]').getAttribute('transform'),
    tokens: document.querySelectorAll('[data-testid=board] [data-testid=token]').length,
    halos: document.querySelectorAll('[data-testid=board] .token-active-halo').length,
  };
}"""


def drag_token(page: Any, selector: str, dx: float, dy: float) -> None:
    tok = page.locator(selector)
    tok.scroll_into_view_if_needed()
    b = box_of(tok)
    assert b, selector
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2 + dx, b["y"] + b["height"] / 2 + dy, steps=5)
    page.mouse.up()


def test_display_moves_the_same_token_node(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    tv_ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    try:
        gm, tv = gm_ctx.new_page(), tv_ctx.new_page()
        for p in (gm, tv):
            p.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, "In place", "eclipse-phase", ("Jinx", "Exhuman stalker"))
        tv.goto(gm.get_attribute("[data-testid=watch-link]", "href").replace("/watch", "/display"))
        tv.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=start-battle]")
        tv.wait_for_selector("[data-testid=board] [data-testid=token-c2]")
        gm.wait_for_selector("[data-testid=battle] [data-testid=token-c2]")
        tv.wait_for_timeout(300)  # the start's updates are in
        # the console opens on the one acting (the two start at the two ends of the board): the GM
        # shows the whole board to reach the other
        gm.click("[data-testid=battle] [data-testid=grid-frame]:has-text('Whole board')")

        # the GM drags one token: the display moves that token's element, keeps everything else
        for turn in range(2):
            before = tv.evaluate(MARK_DISPLAY)
            version = tv.get_attribute("[data-testid=board]", "data-version")
            console_settled(gm)  # (the chances bar of the last update is in: nothing moves under the drag)
            drag_token(gm, "[data-testid=battle] [data-testid=token-c2]", -70 if turn == 0 else 0, 70)
            tv.wait_for_selector(f"[data-testid=board]:not([data-version='{version}'])")
            tv.wait_for_selector(f"[data-testid=board] [data-testid=token-c2]:not([transform='{before}'])")
            kept = tv.evaluate(CHECK_DISPLAY)
            assert kept["transform"] != before
            for part in ("svg", "lines", "outer", "inner", "other", "connected"):
                assert kept[part], f"update {turn + 1}: the display redrew the {part} instead of keeping it: {kept}"
            assert kept["tokens"] == 2 and kept["halos"] == 1, kept

        # after those updates a tap on a token on the GM console still selects it (the latest callback)
        gm.click("[data-testid=battle] [data-testid=token][data-combatant=c1]")
        gm.wait_for_selector("[data-testid=battle] [data-testid=token][data-combatant=c1].selected")
        gm.click("[data-testid=battle] [data-testid=token][data-combatant=c2]")
        gm.wait_for_selector("[data-testid=battle] [data-testid=token][data-combatant=c2].selected")
        assert gm.locator("[data-testid=battle] [data-testid=token].selected").count() == 1
        tv.screenshot(path=str(shots / "display-after-moves.png"))
        assert not errors, errors
    finally:
        gm_ctx.close()
        tv_ctx.close()


# renderGrid called directly, on a page that has the module (the display), with callbacks that say
# which spec they came from
UNIT = """async () => {
  const grid = await import(`${document.body.dataset.static || '/static/'}js/grid.js`);
  const box = document.createElement('div');
  box.dataset.testid = 'unit-grid';
  box.style.cssText = 'position:fixed;left:0;top:0;width:600px;height:400px;z-index:99999;background:#000';
  document.body.append(box);
  const calls = [];
  window.__unit = { grid, box, calls };
  window.__spec = (n, tokens, extra = {}) => ({
    width: 6, height: 4, cell: 100, blocked: [[5, 3]], tokens,
    onTokenClick: (id) => calls.push(`token ${id} from spec ${n}`),
    onCellClick: (x, y) => calls.push(`cell ${x},${y} from spec ${n}`),
    canDrag: (id) => id === 'a', onDrop: (id, x, y) => calls.push(`drop ${id} ${x},${y} from spec ${n}`),
    ...extra,
  });
  const t = (id, x, y, more = {}) => ({ id, x, y, name: id === 'a' ? 'Alpha' : 'Beta', side: id === 'a' ? 'A' : 'B', hp: { current: 10, max: 10 }, ...more });
  window.__t = t;
  grid.renderGrid(box, __spec(1, [t('a', 0, 0, { active: true }), t('b', 3, 2)]));
  const first = {
    svg: box.querySelector('svg'), lines: box.querySelector('.grid-lines'), blocked: box.querySelector('[data-testid=blocked]'),
    a: box.querySelector('[data-testid=token-a]'), b: box.querySelector('[data-testid=token-b]'),
    halo: box.querySelector('.token-active-halo'),
  };
  window.__first = first;
  const at = (id) => box.querySelector(`[data-testid=token-${id}]`).getAttribute('transform');
  const before = at('a');
  for (let n = 2; n <= 4; n++) {
    grid.renderGrid(box, __spec(n, [t('a', n - 1, 0, { active: true }), t('b', 3, 2, { hp: { current: 10 - n, max: 10 } })]));
  }
  return {
    sameSvg: first.svg === box.querySelector('svg'), sameLines: first.lines === box.querySelector('.grid-lines'),
    sameBlocked: first.blocked === box.querySelector('[data-testid=blocked]'),
    sameA: first.a === box.querySelector('[data-testid=token-a]'), sameB: first.b === box.querySelector('[data-testid=token-b]'),
    sameHalo: first.halo === box.querySelector('.token-active-halo'),
    moved: before !== at('a'), at: at('a'),
    ring: box.querySelector('[data-testid=token-b] .token-ring').getAttribute('stroke-dasharray'),
  };
}"""


def open_new_tables_display(page: Any, server: LiveServer, name: str, system: str) -> None:
    """A new table of ``system`` (made on its GM page), then its table display, live: a page that has
    the display's modules to import and call directly."""
    create_table(page, server, name, system)
    page.goto(page.get_attribute("[data-testid=watch-link]", "href").replace("/watch", "/display"))
    page.wait_for_selector("[data-testid=connection-status][data-state=live]")


@contextmanager
def grid_unit_page(browser: Any, server: LiveServer, name: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A new table's display at 1280×800 with UNIT run on it (grid.js at hand as window.__unit), and
    what UNIT found; the page must raise no error."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        open_new_tables_display(page, server, name, "eclipse-phase")
        yield page, page.evaluate(UNIT)
        assert not errors, errors
    finally:
        context.close()


def test_render_grid_keeps_nodes_and_calls_the_latest_callbacks(browser: Any, live_server: LiveServer) -> None:
    with grid_unit_page(browser, live_server, "Unit") as (page, r):
        assert r["sameSvg"] and r["sameLines"] and r["sameBlocked"], r
        assert r["sameA"] and r["sameB"], r
        assert r["moved"] and r["at"] == "translate(350 50)", r
        assert r["sameHalo"], f"the active token's halo was made again (its animation restarts): {r}"
        assert r["ring"] == f"{0.6 * 2 * math.pi * 46.5:.2f} {2 * math.pi * 46.5:.2f}", r  # b's ring redrawn at 6/10

        # a tap and a drag on kept tokens call the spec of the last call, not the first's
        page.click("[data-testid=unit-grid] [data-testid=token][data-combatant=b]")
        page.mouse.click(150, 350)  # an empty square, (1, 3): the grid is 600 px wide, 100 px a square
        drag_token(page, "[data-testid=unit-grid] [data-testid=token-a]", 0, 200)
        calls = page.evaluate("window.__unit.calls")
        # (the press and release on a dragged token make a click too, as they always have)
        assert calls[:3] == ["token b from spec 4", "cell 1,3 from spec 4", "drop a 3,2 from spec 4"], calls
        assert all(c.endswith("from spec 4") for c in calls), calls

        # the halo moves with the turn: made on the newly active token, gone from the other
        r2 = page.evaluate("""() => {
          const { grid, box } = window.__unit;
          grid.renderGrid(box, __spec(5, [__t('a', 3, 0), __t('b', 3, 2, { active: true })]));
          const halos = [...box.querySelectorAll('.token-active-halo')];
          return { n: halos.length, onB: halos.length === 1 && !!halos[0].closest('[data-testid=token-b]'),
                   bLast: box.querySelector('.grid-tokens').lastElementChild.dataset.combatant,
                   sameA: window.__first.a === box.querySelector('[data-testid=token-a]') };
        }""")
        assert r2 == {"n": 1, "onB": True, "bLast": "b", "sameA": True}, r2

        # tokens come and go; new blocked squares or an emptied container mean a fresh svg
        r3 = page.evaluate("""() => {
          const { grid, box } = window.__unit;
          grid.renderGrid(box, __spec(6, [__t('a', 3, 0), __t('c', 1, 1)]));
          const ids = [...box.querySelectorAll('[data-testid=token]')].map((e) => e.dataset.combatant).join(',');
          const keptSvg = window.__first.svg === box.querySelector('svg');
          grid.renderGrid(box, __spec(7, [__t('a', 3, 0)], { blocked: [[0, 3]] }));
          const newBlocked = window.__first.svg !== box.querySelector('svg') && box.querySelector('[data-testid=blocked]').dataset.x === '0';
          const svg7 = box.querySelector('svg');
          box.replaceChildren();
          grid.renderGrid(box, __spec(8, [__t('a', 3, 0)], { blocked: [[0, 3]] }));
          return { ids, keptSvg, newBlocked, afresh: box.querySelector('svg') !== svg7 && box.childNodes.length === 1 };
        }""")
        assert r3 == {"ids": "a,c", "keptSvg": True, "newBlocked": True, "afresh": True}, r3

        # a zoomable grid (a phone) keeps its zoom across updates
        r4 = page.evaluate("""() => {
          const { grid, box } = window.__unit;
          grid.renderGrid(box, __spec(9, [__t('a', 3, 0)], { zoomable: true }));
          const svg = box.querySelector('svg');
          svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -100, clientX: 300, clientY: 200, bubbles: true, cancelable: true }));
          const zoomed = svg.getAttribute('viewBox');
          grid.renderGrid(box, __spec(10, [__t('a', 4, 1)], { zoomable: true }));
          return { zoomed, after: box.querySelector('svg').getAttribute('viewBox'), same: svg === box.querySelector('svg') };
        }""")
        assert r4["same"] and r4["zoomed"] != "0 0 600 400" and r4["after"] == r4["zoomed"], r4


MARK_CONSOLE = """() => {
  const q = (sel) => document.querySelector(sel);
  window.__kept = { svg: q('[data-testid=battle] svg'), token: q('[data-testid=battle] [data-testid=token-c2]') };
  window.__kept.svg.__zoomMark = true;
  return window.__kept.token.getAttribute('transform');
}"""

CHECK_CONSOLE = """() => {
  const q = (sel) => document.querySelector(sel);
  const k = window.__kept;
  return {
    svg: k.svg === q('[data-testid=battle] svg') && k.svg.__zoomMark === true,
    token: k.token === q('[data-testid=battle] [data-testid=token-c2]'),
    transform: q('[data-testid=battle] [data-testid=token-c2]').getAttribute('transform'),
  };
}"""


@pytest.mark.parametrize("system", ["adnd", "battles-and-balances"])
def test_a_console_that_draws_its_board_afresh_keeps_its_grid(browser: Any, live_server: LiveServer, system: str) -> None:
    """AD&D and Battles&Balances draw their boards afresh on each update but keep the grid's box:
    the grid moves the token that moved and keeps its svg (and with it a phone's pinch-zoom)."""
    from tests.browser.test_display import gm_declares, prepare

    slug, gm_token = prepare(live_server, system)
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    helper_ctx = browser.new_context()
    errors: list[str] = []
    try:
        gm, helper = gm_ctx.new_page(), helper_ctx.new_page()
        gm.on("pageerror", lambda e: errors.append(str(e)))
        gm.goto(f"{live_server.url}/t/{slug}/gm?key={gm_token}")
        gm.wait_for_selector("[data-testid=battle] [data-testid=token-c2]")
        gm.wait_for_timeout(300)
        before = gm.evaluate(MARK_CONSOLE)
        version = gm.get_attribute("[data-testid=battle]", "data-version")
        move = {"type": "place" if system == "battles-and-balances" else "move", "combatant": "c2", "x": 0, "y": 0}
        gm_declares(helper, live_server, slug, gm_token, move)
        gm.wait_for_selector(f"[data-testid=battle]:not([data-version='{version}'])", state="attached")
        gm.wait_for_selector(f"[data-testid=battle] [data-testid=token-c2]:not([transform='{before}'])", state="attached")
        kept = gm.evaluate(CHECK_CONSOLE)
        assert kept["svg"] and kept["token"], f"{system}: the console redrew its grid instead of keeping it: {kept}"
        assert not errors, errors
    finally:
        gm_ctx.close()
        helper_ctx.close()


SURRENDERED = """async () => {
  const base = document.body.dataset.static || '/static/';
  const [mod, grid, kit, ui] = await Promise.all(['display/adnd.js', 'grid.js', 'kit.js', 'ui.js'].map((f) => import(`${base}js/${f}`)));
  const root = document.createElement('div');
  root.dataset.testid = 'unit-board';
  root.style.cssText = 'position:fixed;left:0;top:0;width:800px;height:600px;z-index:99999;background:#000';
  document.body.append(root);
  const who = (id, x, condition) => ({ id, x, y: 2, name: `Orc ${id}`, side: 'B', condition, status: condition, hp: 5, hp_max: 5 });
  const view = { status: 'active', grid: { width: 8, height: 6 }, declarations: [], charges: {},
                 combatants: [who('a', 1, 'ok'), who('b', 3, 'surrendered')] };
  mod.render(root, view, { grid, kit, ui, table: {}, mode: 'display', box: { width: 800, height: 600 } });
  const body = (id) => getComputedStyle(root.querySelector(`[data-testid=token][data-combatant=${id}] .token-body`));
  const token = (id) => root.querySelector(`[data-testid=token][data-combatant=${id}]`);
  return {
    cls: token('b').getAttribute('class'), dash: body('b').strokeDasharray, plainDash: body('a').strokeDasharray,
    opacity: getComputedStyle(token('b')).opacity, plainOpacity: getComputedStyle(token('a')).opacity,
  };
}"""


def test_a_surrendered_adnd_combatant_looks_out_of_the_fight_on_the_tv(browser: Any, live_server: LiveServer) -> None:
    """The AD&D display draws a surrendered combatant's token faded with a dashed rim (not like a
    fighting one), from the display's own module and the shared kit's style sheet."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        open_new_tables_display(page, live_server, "Surrender", "adnd")
        r = page.evaluate(SURRENDERED)
        assert "surrendered" in r["cls"], r
        assert r["dash"] not in ("none", "") and r["plainDash"] in ("none", ""), r
        assert float(r["opacity"]) < 1 and float(r["plainOpacity"]) == 1, r
        assert not errors, errors
    finally:
        context.close()


PHONE_FRAME = """() => {
  const { grid } = window.__unit;
  const box = document.createElement('div');
  box.style.cssText = 'position:fixed;left:0;top:0;width:300px;z-index:99999;background:#000';
  document.body.append(box);
  const t = window.__t;
  const spec = (tokens) => ({ width: 20, height: 20, cell: 44, zoomable: true, fit: { minPx: 48 }, tokens });
  grid.renderGrid(box, spec([t('a', 9, 2), t('b', 9, 5)]));
  const svg = box.querySelector('svg');
  const button = box.querySelector('[data-testid=grid-frame]');
  const look = () => {
    const vb = svg.getAttribute('viewBox').split(' ').map(Number);
    return { vb, px: (svg.getBoundingClientRect().width / vb[2]) * 44, label: button.hidden ? null : button.textContent };
  };
  const r = { fit: look() };
  button.click();
  r.whole = look();
  const hurt = { hp: { current: 4, max: 10 } };
  grid.renderGrid(box, spec([t('a', 9, 2, hurt), t('b', 9, 5)]));  // an update: the whole board stays
  r.wholeKept = look();
  button.click();
  r.back = look();
  svg.dispatchEvent(new WheelEvent('wheel', { deltaY: 100, clientX: 150, clientY: 150, bubbles: true, cancelable: true }));
  r.free = look();
  grid.renderGrid(box, spec([t('a', 9, 2), t('b', 9, 5, hurt)]));  // the player's own zoom stays too
  r.freeKept = look();
  button.click();
  r.refit = look();
  grid.renderGrid(box, spec([t('a', 0, 0), t('b', 19, 19)]));  // the fight all over the board
  r.spread = look();
  r.sameSvg = svg === box.querySelector('svg');
  r.children = box.childNodes.length;
  box.remove();
  return r;
}"""


def test_a_phones_grid_opens_on_the_fight_and_shows_the_whole_board_on_demand(browser: Any, live_server: LiveServer) -> None:
    """A phone's grid (fit): two tokens three squares apart on a 20×20 board in a 300 px wide box open
    at about 47 px a square instead of 15; the button under the grid shows the whole board and goes
    back, an update keeps what the player chose (the whole board, or their own pinch), and the button
    takes a pinched view back to the close-up. Tokens all over the board show the whole of it, with
    no margin round it and no button."""
    with grid_unit_page(browser, live_server, "Frame") as (page, _):
        r = page.evaluate(PHONE_FRAME)
        assert r["fit"]["px"] >= 40 and r["fit"]["label"] == "Whole board", r["fit"]
        assert r["whole"]["vb"][2] >= 20 * 44 and r["whole"]["px"] <= 15 and r["whole"]["label"] == "Close up", r["whole"]
        assert r["wholeKept"] == r["whole"], r
        assert r["back"] == r["fit"], r
        assert r["free"]["vb"][2] > r["fit"]["vb"][2] and r["free"]["label"] == "Close up", r["free"]
        assert r["freeKept"] == r["free"], r
        assert r["refit"] == r["fit"], r
        spread = r["spread"]
        assert [round(v, 1) for v in spread["vb"]] == [-13.2, -13.2, 906.4, 906.4] and spread["label"] is None, spread
        assert r["sameSvg"] and r["children"] == 2, r
