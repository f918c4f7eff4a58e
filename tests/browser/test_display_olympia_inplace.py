"""The Olympia table display updates its board in place: a unit's tile is the same element after an
update (its numbers drawn again on the canvas under it, not the board rebuilt), and a unit that lost
men shows it: its data-lost and its accessible name say how many, and the canvas draws the red of the
part that fell round its block; a new battle's strength bars are full at once (no slide back up), and
a fall slides in a few steps (each step is a frame the TV's compositor draws). The words around the
board (the turn cue, the latest result, the log's lines) are written into the
same elements at every update, not built again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer, at_rest
from tests.browser.test_display import display_of, gm_declares, olympia_tile_pixels, open_display, prepare

pytestmark = pytest.mark.browser

GM_RESTART = """async ([slug, token]) => {
  const socket = io({auth: {table: slug, token}, transports: ['websocket']});
  await new Promise((resolve) => socket.on('connect', resolve));
  const ack = await new Promise((resolve) => socket.emit('battle_restart', {}, resolve));
  socket.disconnect();
  return ack;
}"""
FILL_TRANSITION = "(sid) => getComputedStyle(document.querySelector(`[data-testid=strength-${sid}] .kit-bar-fill`)).transitionDuration"
FILL_TIMING = "(sid) => getComputedStyle(document.querySelector(`[data-testid=strength-${sid}] .kit-bar-fill`)).transitionTimingFunction"
# the words around the board: each element marked before an update, then [still the same element, its text]
AROUND = ["#cue .d-now", "#result p", "#log li:first-child", "#log li:last-child"]
MARK_AROUND = "(sels) => sels.forEach((sel) => { document.querySelector(sel).__kept = true; })"
# where the tiles are, and how the header and the strength bar above the rows are laid out
PLACES = """() => {
  const side = document.querySelector('[data-testid=side-A]');
  const round = (r) => [r.left, r.top, r.width, r.height].map((v) => Math.round(v));
  return {
    tiles: [...document.querySelectorAll('.old-unit')].map((el) => round(el.getBoundingClientRect())),
    rowsTop: side.querySelector('.old-rows-box').getBoundingClientRect().top,
    parts: [...side.querySelectorAll(':scope > .old-side-head, :scope > .old-strength')].map((el) => ({
      cls: el.className, position: getComputedStyle(el).position, contain: getComputedStyle(el).contain,
      bottom: el.getBoundingClientRect().bottom,
    })),
  };
}"""
TRAY = """() => {
  const tray = document.querySelector('[data-testid=dice-tray]');
  return {dice: [...tray.querySelectorAll('[data-testid=roll]')].map((r) => r.querySelectorAll('.kit-die').length),
          scroll: tray.scrollHeight, client: tray.clientHeight};
}"""
READ_AROUND = "(sels) => sels.map((sel) => { const el = document.querySelector(sel); return el ? [el.__kept === true, el.textContent] : null; })"


def test_the_olympia_display_keeps_its_unit_blocks_across_updates(browser: Any, live_server: LiveServer) -> None:
    helper_context = browser.new_context()
    helper = helper_context.new_page()
    slug, gm_token = prepare(live_server, "olympia")
    context, page, _spy = open_display(browser, f"{live_server.url}/t/{slug}/display", 1920, 1080, reduced_motion="no-preference")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.wait_for_selector("[data-testid=board] [data-testid=unit-c1]")
        men_before = int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0)
        page.wait_for_function("() => document.querySelector('canvas.old-canvas').width > 0")
        before = olympia_tile_pixels(page, "c1")
        assert before["red"] == 0 and before["block"] > 100 and before["white"] > 20, f"the block and its number are not drawn: {before}"
        # mark the block, the board's skeleton and the strength bar: a redraw would make new elements
        page.evaluate("""() => {
          document.querySelector('[data-testid=unit-c1]').__kept = true;
          document.querySelector('[data-testid=board] .old').__kept = true;
          document.querySelector('[data-testid=strength-A]').__kept = true;
        }""")
        assert page.get_attribute("[data-testid=unit-c1]", "data-lost") == "0"

        gm_declares(helper, live_server, slug, gm_token, {"type": "begin"}, {"type": "step", "by": "phase"})
        page.wait_for_selector("[data-testid=unit-c1]:not([data-lost='0'])")
        kept = page.evaluate("""() => [
          document.querySelector('[data-testid=unit-c1]').__kept === true,
          document.querySelector('[data-testid=board] .old').__kept === true,
          document.querySelector('[data-testid=strength-A]').__kept === true,
        ]""")
        assert kept == [True, True, True], f"redrawn instead of updated: {kept}"
        men_after = int(page.get_attribute("[data-testid=unit-c1]", "data-men") or 0)
        lost = int(page.get_attribute("[data-testid=unit-c1]", "data-lost") or 0)
        assert lost > 0 and men_after == men_before - lost, (men_before, men_after, lost)
        label = page.get_attribute("[data-testid=unit-c1]", "aria-label") or ""
        assert f"{men_after:,} men" in label and f"{lost:,} fell" in label, label
        after = olympia_tile_pixels(page, "c1")
        assert after["red"] > 50, f"the part that fell is not drawn red: {after}"
        # the strength bar's text follows the side's strength
        assert page.inner_text("[data-testid=strength-A]").startswith("Strength ")

        # the next phase: the words around the board change in the same elements
        page.evaluate(MARK_AROUND, AROUND)
        words_before = page.evaluate(READ_AROUND, AROUND)
        gm_declares(helper, live_server, slug, gm_token, {"type": "step", "by": "phase"})
        page.wait_for_function("(text) => document.querySelector('#cue .d-now').textContent !== text", arg=words_before[0][1])
        words_after = page.evaluate(READ_AROUND, AROUND)
        assert all(w and w[0] for w in words_after), f"the words around the board were built again: {words_after}"
        changed = [sel for sel, b, a in zip(AROUND, words_before, words_after, strict=True) if b[1] != a[1]]
        assert {"#cue .d-now", "#result p", "#log li:first-child"} <= set(changed), (words_before, words_after)
        assert page.evaluate(FILL_TIMING, "A").startswith("steps("), page.evaluate(FILL_TIMING, "A")

        # the whole battle: every update applied to the same blocks, the broken side marked
        places_before = page.evaluate(PLACES)
        gm_declares(helper, live_server, slug, gm_token, {"type": "step", "by": "battle"})
        page.wait_for_selector("[data-testid^=side-][data-broken=true]")
        assert page.evaluate("() => document.querySelector('[data-testid=unit-c1]').__kept === true")
        assert page.locator("[data-testid^=side-].is-broken .old-broken-tag").inner_text() == "BROKEN"
        # the tag, the bar's new colour and the shake change nothing below them: the tiles stay where
        # the canvas draws their blocks, and the header and the bar are laid out on their own (as flex
        # items beside the rows, their change laid out both armies' rows again)
        at_rest(page)  # (the shake is over)
        places_after = page.evaluate(PLACES)
        assert places_after["tiles"] == places_before["tiles"], "the tiles moved when a side broke"
        for part in places_after["parts"]:
            assert part["position"] == "absolute" and part["contain"] == "strict", part
            assert part["bottom"] <= places_after["rowsTop"], f"{part['cls']} overlaps the rows: {places_after}"
        # the dice tray: every roll shown has its dice (troops that could not hit roll none: nothing to
        # show), and the rolls fit the tray whole
        tray = page.evaluate(TRAY)
        assert all(n >= 1 for n in tray["dice"]), tray
        assert tray["scroll"] <= tray["client"] + 1, tray
        assert page.evaluate("() => import('/static/js/kit.js').then((kit) => [kit.showableRoll({dice: '0d10', faces: []}), kit.showableRoll({dice: '3d10', faces: [1, 2, 3]})])") == [False, True]

        # a new battle: the armies are whole at once, their bars do not slide back up (nothing was won
        # back); the next phase's fall slides again
        ack = helper.evaluate(GM_RESTART, [slug, gm_token])
        assert ack and ack.get("ok"), ack
        page.wait_for_selector("[data-testid=strength-A].old-no-slide")
        assert page.evaluate(FILL_TRANSITION, "A") == "0s"
        assert page.locator("[data-testid^=side-][data-broken=true]").count() == 0
        assert page.get_attribute("[data-testid=unit-c1]", "data-lost") == "0"
        gm_declares(helper, live_server, slug, gm_token, {"type": "begin"}, {"type": "step", "by": "phase"})
        page.wait_for_selector("[data-testid=unit-c1]:not([data-lost='0'])")
        assert page.locator("[data-testid=strength-A].old-no-slide").count() == 0
        assert page.evaluate(FILL_TRANSITION, "A") == "0.6s"
        assert not errors, errors
    finally:
        context.close()
        helper_context.close()


# A noble wounded (or killed, or taken prisoner) shows his state on his tile: the tile's words are
# centred in it, so the line of its men moves up, and the men's number the canvas draws moves with
# it. The display's own renderer is given two views of a small battle, the second with the noble
# wounded; the white of the number is then centred on the men's line, not where that line was.
NOBLE_WOUNDED = """async () => {
  const [board, ui, kit] = await Promise.all(['display/olympia.js', 'ui.js', 'kit.js'].map((m) => import(`/static/js/${m}`)));
  const root = document.getElementById('board');
  const unit = (id, state) => ({id, name: `Noble ${id}`, men: 121, leader: false, state,
                                troops: [{kind: 'soldier', label: 'soldiers', count: state === 'fighting' ? 120 : 121}]});
  const side = (name, state) => ({name, broken: false, total: 400, start_total: 500, threshold: 250, structure: null,
                                  rows: [{behind: 0, units: [unit(`${name}1`, state), unit(`${name}2`, 'fighting'), unit(`${name}3`, 'fighting')]}]});
  const view = (state) => ({status: 'active', round: 2, next_phase: 'melee', report: [], sides: {A: side('a', state), B: side('b', 'fighting')}});
  const ctx = {kit, ui, mode: 'display', battleId: 'wounded-test'};
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  // where the number is drawn (the middle of the canvas's white in the tile) against the middle of
  // the men's line, in CSS px from the tile's top
  const offset = () => {
    const tile = document.querySelector('[data-testid=unit-a1]');
    const canvas = tile.closest('.old-side').querySelector('canvas.old-canvas');
    const t = tile.getBoundingClientRect(), c = canvas.getBoundingClientRect(), line = tile.querySelector('.old-unit-men').getBoundingClientRect();
    const k = canvas.width / c.width;
    const w = Math.round(t.width * k), hgt = Math.round(t.height * k);
    const data = canvas.getContext('2d').getImageData(Math.round((t.left - c.left) * k), Math.round((t.top - c.top) * k), w, hgt).data;
    let sum = 0, n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 250 && data[i] > 240 && data[i + 1] > 240 && data[i + 2] > 240) { sum += Math.floor(i / 4 / w); n++; }
    }
    return {drawn: n ? sum / n / k : null, line: line.top + line.height / 2 - t.top, white: n,
            state: tile.querySelector('.old-unit-state').hidden ? null : tile.querySelector('.old-unit-state').textContent};
  };
  root.dataset.version = '7';
  board.render(root, view('fighting'), ctx);
  await frame();
  const fighting = offset();
  root.dataset.version = '8';
  board.render(root, view('wounded'), ctx);
  await frame();
  return {fighting, wounded: offset()};
}"""


def test_a_wounded_nobles_number_moves_with_his_tiles_words(browser: Any, live_server: LiveServer, shots: Path) -> None:
    with display_of(browser, live_server, "olympia") as page:
        found = page.evaluate(NOBLE_WOUNDED)
        fighting, wounded = found["fighting"], found["wounded"]
        assert fighting["state"] is None and wounded["state"] == "wounded", found
        assert fighting["white"] > 20 and wounded["white"] > 20, found
        assert abs(fighting["drawn"] - fighting["line"]) < 4, found
        assert wounded["line"] < fighting["line"] - 4, f"the men's line did not move up: {found}"
        assert abs(wounded["drawn"] - wounded["line"]) < 4, f"the number is drawn where the men's line was: {found}"
        assert page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=unit-a1]')).borderTopStyle") == "dashed"
        page.locator("[data-testid=side-A]").screenshot(path=str(shots / "display-olympia-wounded.png"))


# Narrow tiles (a front row of many units): a unit's name is cut with an ellipsis, but never its
# number, which is what tells "Knight 12" from "Knight 13" across the room.
NARROW_NAMES = """async () => {
  const [board, ui, kit] = await Promise.all(['display/olympia.js', 'ui.js', 'kit.js'].map((m) => import(`/static/js/${m}`)));
  const root = document.getElementById('board');
  const unit = (id, name, leader) => ({id, name, men: 300, leader, state: 'fighting', troops: [{kind: 'knight', label: 'knights', count: 299}]});
  const row = (prefix, n) => Array.from({length: n}, (_, i) => unit(`${prefix}${i}`, `Cavalier ${11 + i}`, i === 0));
  const side = (name, prefix) => ({name, broken: false, total: 4000, start_total: 5000, threshold: 2500, structure: null,
                                   rows: [{behind: 0, units: row(prefix, 24)}, {behind: 1, units: [unit(`${prefix}x`, 'Noble with two pikemen 7', false)]}]});
  root.dataset.version = '9';
  board.render(root, {status: 'active', round: 1, next_phase: 'melee', report: [], sides: {A: side('a', 'a'), B: side('b', 'b')}},
               {kit, ui, mode: 'display', battleId: 'narrow-names'});
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return [...document.querySelectorAll('.old-unit')].map((tile) => {
    const t = tile.getBoundingClientRect();
    const words = tile.querySelector('.old-unit-words'), number = tile.querySelector('.old-unit-number');
    const n = number.getBoundingClientRect();
    return {id: tile.dataset.testid, words: words.textContent, number: number.hidden ? null : number.textContent,
            cut: words.scrollWidth > words.clientWidth, inside: n.width > 0 && n.left >= t.left && n.right <= t.right};
  });
}"""


def test_a_narrow_tile_cuts_a_units_name_but_not_its_number(browser: Any, live_server: LiveServer, shots: Path) -> None:
    with display_of(browser, live_server, "olympia") as page:
        tiles = page.evaluate(NARROW_NAMES)
        assert len(tiles) == 50, tiles
        for tile in tiles:
            assert tile["number"] and tile["inside"], f"the unit's number is cut off or missing: {tile}"
        cavalry = [t for t in tiles if t["words"] == "Cavalier"]
        assert len(cavalry) == 48 and {t["number"] for t in cavalry} == {str(n) for n in range(11, 35)}, tiles
        assert any(t["cut"] for t in cavalry), "the tiles are wide enough for the whole name: the test shows nothing"
        # a long name ending in a number keeps its first word and the number
        assert {(t["words"], t["number"]) for t in tiles if t["id"].endswith("x")} == {("Noble", "7")}, tiles
        page.screenshot(path=str(shots / "display-olympia-narrow-names.png"))
