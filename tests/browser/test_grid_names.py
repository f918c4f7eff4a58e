"""Token names on the grid keep clear of other tokens: a name goes under its token, but not over a
token in the square below (it would hide that token's badges, its action points or its health): it
goes above when that square is free and shown, else beside its token where the squares are free,
else on its own token's foot. Drawn by grid.js (the display's, the GM's and the phones' grid) in a
page of the board itself, at the table display's size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer
from tests.browser.test_display import display_of

pytestmark = pytest.mark.browser

# tokens: a column of two in the middle, a column of two on the top row (no room above), a pair side
# by side, and one alone; each name's box against every other token's disc
NAMES = """async () => {
  const grid = await import('/static/js/grid.js');
  const box = document.createElement('div');
  box.style.cssText = 'position: fixed; left: 0; top: 0; width: 1200px; height: 800px; background: #12151c; z-index: 10;';
  box.className = 'd-board';
  document.body.append(box);
  const token = (id, x, y, name, side) => ({id, x, y, name, side, hp: {current: 5, max: 10}, badge: 24});
  const tokens = [
    token('t1', 4, 3, 'Prince Vasyl', 'A'), token('t2', 4, 4, 'Baerg the Fighter', 'A'),
    token('t3', 9, 0, 'Shock Trooper', 'B'), token('t4', 9, 1, 'Huge Orc', 'B'),
    token('t5', 1, 6, 'Jinx', 'A'), token('t6', 2, 6, 'Habitat guard', 'B'),
    token('t7', 7, 6, 'Goblin', 'B'),
  ];
  grid.renderGrid(box, {width: 12, height: 8, cell: 100, tokens, names: true, nameSize: 0.26, minText: 26,
                        view: {x: -0.3, y: -0.3, width: 12.6, height: 8.6}});
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const rect = (el) => { const r = el.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const overlap = (a, b) => Math.max(0, Math.min(a.r, b.r) - Math.max(a.l, b.l)) * Math.max(0, Math.min(a.b, b.b) - Math.max(a.t, b.t));
  const discs = Object.fromEntries([...box.querySelectorAll('[data-testid=token]')].map((g) => [g.dataset.combatant, rect(g)]));
  const names = [...box.querySelectorAll('text.token-name')].map((el) => ({id: el.dataset.combatant, text: el.textContent, box: rect(el)}));
  const svg = rect(box.querySelector('svg'));
  return names.map((n) => ({
    id: n.id, text: n.text,
    // (a token's box holds its badges; a name brushing a badge's corner is not over the token)
    over: Object.entries(discs).filter(([id]) => id !== n.id).map(([id, d]) => [id, Math.round(overlap(n.box, d))]).filter(([, a]) => a > 200),
    inside: n.box.l >= svg.l - 1 && n.box.r <= svg.r + 1 && n.box.t >= svg.t - 1 && n.box.b <= svg.b + 1,
    below: n.box.t > discs[n.id].t + (discs[n.id].b - discs[n.id].t) / 2,
  }));
}"""


def test_token_names_keep_clear_of_the_tokens_around_them(browser: Any, live_server: LiveServer, shots: Path) -> None:
    with display_of(browser, live_server, "battles-and-balances") as page:
        names = {n["id"]: n for n in page.evaluate(NAMES)}
        assert set(names) == {f"t{i}" for i in range(1, 8)}, names
        for n in names.values():
            assert not n["over"], f"{n['text']}'s name lies over another token: {n}"
            assert n["inside"], f"{n['text']}'s name is cut off at the edge: {n}"
        # a name with nothing under its token is under it, as usual
        assert names["t2"]["below"] and names["t4"]["below"] and names["t7"]["below"], names
        # the one above another token, with the square above it free, is above it
        assert not names["t1"]["below"], names["t1"]
        page.screenshot(path=str(shots / "grid-names.png"))
