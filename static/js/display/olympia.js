// Olympia on the table display: the two armies face each other, each as its front row (nearest the
// middle) and back rows of unit blocks whose size follows the men they hold; each side's strength
// against its break line as a bar; a phase's casualties shrink the blocks that lost men (the part
// that fell shows red), and a broken side is marked and shaken.
//
// Every unit of both armies is on the screen: each row is a grid of equal tiles, as many columns as
// fit its units. A tile is plain DOM that hardly changes during a battle (its border, the unit's
// name, its state when it routs or flees); what changes at every phase is drawn on a canvas under
// the tiles: the unit's block, scaled to its men against the largest unit the battle began with, its
// number of men, and around the block in red the part that fell in the last phase, while the side's
// strength bar falls (an animation of the compositor's). So an update lays out and repaints no tile,
// only the words around the board: the TV keeps up with a battle of 30 units a side. (In a browser a
// changed text costs a layout of its own; on a canvas it is one drawing call.) Nothing else moves:
// on a TV's laptop every animated pixel is drawn again at every frame.
// The tiles' places are measured once when the rows are laid out (a new battle, a unit moved up a
// row) or the board changes size, never on an ordinary update. Each tile carries the unit's numbers
// for assistive technology and tests (aria-label; data-men, data-lost, data-state).
import { count as fmt, setWords } from "../ui.js"; // fmt: 1234567 -> "1,234,567"
import { joinParts } from "./common.js";

const PHASES = { volley: "opening volley", special: "special attacks", missile: "missile phase", melee: "melee phase" };
const GAP = 8; // px between tiles (as in display.css)
const TILE_MAX = 190; // px: the tallest a tile grows when a row has few units
const BASE = "#14171f"; // the dark a side's colour is mixed with for its blocks
const LOSS = "#c0392b"; // the part of a block that fell
let previousMen = {}; // unit id -> men in the last view drawn
let previousBroken = {};
let board = null; // the skeleton drawn last: {el, sidesKey, sides: Map(side id -> parts), units: Map(side:id -> parts), memo}
let lastBattle = null; // ctx.battleId when the page passes it
let lastVersion = null;

// Writers that touch the DOM only when the value differs from the one written last (kept in `memo`,
// never read back from the DOM: a read after a write would force a layout).
// Text is written into the part's own text node (ui.setWords).
function setText(memo, key, el, text) {
  if (memo[key] === text) return;
  memo[key] = text;
  setWords(el, text);
}
function setShown(memo, key, el, text) { // an optional part: its text, or hidden and empty
  setText(memo, key, el, text || "");
  const hidden = !text;
  if (memo[`${key}:hidden`] === hidden) return;
  memo[`${key}:hidden`] = hidden;
  el.hidden = hidden;
}
function setClass(memo, el, cls, on) {
  if (memo[`.${cls}`] === on) return;
  memo[`.${cls}`] = on;
  el.classList.toggle(cls, on);
}
function setData(memo, el, key, value) { // key: one lower-case word ("men")
  const text = String(value);
  if (memo[`@${key}`] === text) return;
  memo[`@${key}`] = text;
  el.setAttribute(`data-${key}`, text); // (dataset's setter converts the name at every call)
}
function setAttr(memo, el, name, value) {
  const text = String(value);
  if (memo[`=${name}`] === text) return;
  memo[`=${name}`] = text;
  el.setAttribute(name, text);
}
function setStyle(memo, el, prop, value) {
  if (memo[`:${prop}`] === value) return;
  memo[`:${prop}`] = value;
  el.style.setProperty(prop, value);
}

export function render(root, view, ctx) {
  const sideIds = Object.keys(view.sides || {}).sort();
  const version = Number(root.dataset.version);

  // Another battle: nothing in it "fell" against the last battle drawn, and no side "just broke".
  // display.js passes no battle id; there a version going back means a new battle (the replay jumps
  // back and forth in one battle, and compares with the step drawn before, as a redraw did).
  const battleId = ctx.battleId ?? null;
  const newBattle = (battleId !== null && battleId !== lastBattle) ||
    (ctx.mode === "display" && lastVersion !== null && Number.isFinite(version) && version < lastVersion);
  lastBattle = battleId;
  lastVersion = Number.isFinite(version) ? version : lastVersion;
  if (newBattle) { previousMen = {}; previousBroken = {}; }

  const sidesKey = sideIds.join(",");
  if (!board || root.firstChild !== board.el || root.childNodes.length !== 1 || board.sidesKey !== sidesKey) {
    board = build(root, sideIds, ctx);
  }
  setData(board.memo, board.el, "status", view.status || "");
  setData(board.memo, board.el, "round", view.round || 0);

  // blocks are scaled against the largest unit the battle began with (units only lose men once it
  // is fought), so a block shrinks as its unit falls, the largest one too
  let maxMen = newBattle || view.status === "setup" || !board.maxMen ? 1 : board.maxMen;
  for (const sid of sideIds) for (const row of view.sides[sid].rows || []) for (const u of row.units || []) if ((u.men || 0) > maxMen) maxMen = u.men || 0;
  board.maxMen = maxMen;

  const men = {};
  const broken = {};
  const seen = new Set();
  for (const sid of sideIds) {
    const side = view.sides[sid];
    const panel = board.sides.get(sid);
    broken[sid] = !!side.broken;
    updateSide(panel, side, sid, ctx, previousBroken[sid] === false && side.broken, newBattle);
    // a unit whose men are all gone leaves its row (a leader stood in the front box as "★ 0 men"):
    // its noble is named under the rows, fighting alone or out of the battle
    const rows = [...(side.rows || [])].sort((a, b) => a.behind - b.behind)
      .map((row) => ({ ...row, units: (row.units || []).filter((u) => u.men > 0) })).filter((row) => row.units.length);
    const alone = (side.rows || []).flatMap((row) => (row.units || []).filter((u) => !(u.men > 0)).map((u) => [u, row.label]));
    const aloneText = alone.map(([u, where]) => `${u.leader ? "★ " : ""}${u.name}: no men left, ${u.state === "fighting" ? `fights on alone in the ${where}` : u.state}`).join(" · ");
    const aloneShown = !panel.alone.hidden;
    setShown(panel.memo, "alone", panel.alone, aloneText);
    if (aloneShown !== !panel.alone.hidden) panel.measured = false; // (the rows' box changed height)
    const rowsKey = rows.map((row) => `${row.behind}:${(row.units || []).map((u) => u.id).join(",")}`).join("|");
    if (panel.rowsKey !== rowsKey) {
      layRows(panel, rows, sid, sideIds, ctx);
      panel.rowsKey = rowsKey;
    }
    for (const row of rows) {
      for (const u of row.units || []) {
        const key = `${sid}:${u.id}`;
        seen.add(key);
        men[u.id] = u.men;
        const before = previousMen[u.id];
        if (updateUnit(board.units.get(key), u, before !== undefined && u.men < before ? before - u.men : 0, maxMen)) panel.measured = false;
      }
    }
  }
  for (const key of [...board.units.keys()]) if (!seen.has(key)) board.units.delete(key); // gone with their rows
  previousMen = men;
  previousBroken = broken;

  // the canvases: measured again when the rows or the screen changed, then drawn
  const screen = `${window.innerWidth}x${window.innerHeight}@${window.devicePixelRatio || 1}`;
  if (board.screen !== screen) { board.screen = screen; for (const panel of board.sides.values()) panel.measured = false; }
  const unmeasured = [...board.sides.values()].filter((panel) => !panel.measured);
  if (unmeasured.length) measure(unmeasured, ctx.mode === "display");
  draw(unmeasured.length > 0);
}

// --- the skeleton ------------------------------------------------------------------------------
function build(root, sideIds, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  if (board && board.resize) board.resize.disconnect();
  const next = { el: null, sidesKey: sideIds.join(","), sides: new Map(), units: new Map(), memo: {}, screen: null, resize: null, frame: null };
  const panels = sideIds.map((sid, i) => {
    const name = document.createTextNode("");
    const brokenTag = h("span", { class: "old-broken-tag", hidden: true });
    const structure = h("div", { class: "old-structure", hidden: true });
    const rowsEl = h("div", { class: "old-rows", role: "list", "aria-label": `the units of side ${sid}` });
    const alone = h("p", { class: "old-alone", hidden: true, dataset: { testid: `alone-${sid}` } });
    const canvas = h("canvas", { class: "old-canvas", "aria-hidden": "true" });
    const box = h("div", { class: "old-rows-box" }, canvas, rowsEl);
    const el = h("section", { class: `old-side ${kit.sideMark(sid, sideIds).cls} old-side-${i === 0 ? "left" : "right"}`, dataset: { testid: `side-${sid}` } },
      h("header", { class: "old-side-head" }, h("h2", { class: "old-side-name" }, kit.sideBadge(sid, sideIds), " ", name), brokenTag),
      structure, box, alone);
    next.sides.set(sid, { el, name, brokenTag, structure, rowsEl, box, canvas, alone, bar: null, rowsKey: null, memo: {}, units: [], measured: false, colour: null, font: null, scale: 1 });
    return el;
  });
  // (on the spectator's page a large army scrolls on the board: the keyboard can scroll it too)
  const scrolls = ctx.mode === "watch";
  next.el = h("div", { class: "old", tabindex: scrolls ? "0" : null, role: scrolls ? "group" : null, "aria-label": scrolls ? "The two armies" : null }, panels);
  replace(root, next.el);
  // a board that changes size (a phone turned, the spectator's window resized) is measured again
  if (typeof ResizeObserver === "function") {
    next.resize = new ResizeObserver((entries) => {
      if (board !== next) return;
      const moved = entries.some((e) => {
        const panel = [...next.sides.values()].find((p) => p.box === e.target);
        const size = e.contentRect;
        return panel && panel.size && (Math.abs(panel.size[0] - size.width) > 0.5 || Math.abs(panel.size[1] - size.height) > 0.5);
      });
      if (!moved) return; // (the first report is the size just measured)
      for (const panel of next.sides.values()) panel.measured = false;
      measure([...next.sides.values()], ctx.mode === "display");
      draw(true);
    });
    for (const panel of next.sides.values()) next.resize.observe(panel.box);
  }
  return next;
}

// The rows of one side, keeping the tiles of the units still there (moved, not redrawn).
function layRows(panel, rows, sid, sideIds, ctx) {
  const { h } = ctx.ui;
  panel.units = [];
  const els = rows.map((row) => {
    const units = row.units || [];
    const stack = h("div", { class: "old-row-stack" }, units.map((u) => {
      const key = `${sid}:${u.id}`;
      let parts = board.units.get(key);
      if (!parts) {
        parts = unitTile(u, sid, sideIds, ctx);
        board.units.set(key, parts);
      }
      panel.units.push(parts);
      return parts.el;
    }));
    const el = h("div", { class: `old-row ${row.behind === 0 ? "is-front" : ""}`, dataset: { behind: row.behind } },
      h("div", { class: "old-row-label" }, row.behind === 0 ? "Front" : `Back ${row.behind}`),
      h("div", { class: "old-row-units" }, stack));
    // a row's share of the side's width follows its units (the front row a little wider), so a row
    // of many units does not crowd into the width of a row of two
    el.style.flexGrow = String((row.behind === 0 ? 1.3 : 1) * Math.sqrt(Math.max(1, units.length)));
    el.__stack = { stack, count: units.length };
    return el;
  });
  panel.rowsEl.replaceChildren(...els);
  panel.stacks = els.map((el) => el.__stack);
  panel.measured = false;
}

function unitTile(u, sid, sideIds, ctx) {
  const { h } = ctx.ui;
  const parts = {
    // the name in two parts: the words, cut with an ellipsis when the tile is narrow, and its number
    // ("Knight 12": "Kni… 12"), always shown: it is what tells two units of one kind apart
    words: h("span", { class: "old-unit-words" }),
    number: h("span", { class: "old-unit-number", hidden: true }),
    leader: h("span", { class: "old-leader", hidden: true }),
    line: h("div", { class: "old-unit-men", "aria-hidden": "true" }), // the canvas writes the men here
    state: h("div", { class: "old-unit-state", hidden: true }),
    men: 0, troops: "", lost: 0, dirty: true, // what the canvas draws (and whether it changed since)
    k: 0, ghost: 0, // the block's scale, and the red's (the size before this phase's losses)
    rect: null, lineTop: 0, lineHeight: 0, // measured
    memo: {},
  };
  parts.el = h("div", { class: "old-unit", role: "listitem", dataset: { testid: `unit-${u.id}` } }, h("div", { class: "old-unit-body" },
    h("div", { class: "old-unit-head" }, h("span", { class: "old-unit-name" }, parts.words, parts.number), parts.leader), // (the side's badge is on its panel)
    parts.line, parts.state));
  return parts;
}

// Each row's tiles in as many columns as suit its box (the columns that give the largest tiles of
// a wide shape: a name and a number in large type), then every tile's place relative to its side's
// canvas, the canvas's size in device pixels and the side's colours. Reads the layout once.
function measure(panels, fitted) {
  if (fitted) {
    const boxes = panels.map((panel) => panel.stacks.map(({ stack }) => [stack.clientWidth, stack.clientHeight]));
    panels.forEach((panel, p) => panel.stacks.forEach(({ stack, count }, i) => {
      const [w, hgt] = boxes[p][i];
      let best = { score: -1, cols: 1, rows: count };
      for (let cols = 1; cols <= Math.max(1, count); cols++) {
        const rowsN = Math.ceil(count / cols);
        const tw = (w - GAP * (cols - 1)) / cols;
        const th = Math.min(TILE_MAX, (hgt - GAP * (rowsN - 1)) / rowsN);
        const score = Math.min(tw / 2.4, th);
        if (score > best.score + 0.5) best = { score, cols, rows: rowsN };
      }
      stack.style.gridTemplateColumns = `repeat(${best.cols}, minmax(0, 1fr))`;
      stack.style.gridTemplateRows = `repeat(${best.rows}, minmax(0, 1fr))`;
      stack.style.maxHeight = `${best.rows * TILE_MAX + GAP * (best.rows - 1)}px`;
    }));
  }
  for (const panel of panels) {
    const box = panel.box.getBoundingClientRect();
    const scale = panel.box.offsetWidth ? box.width / panel.box.offsetWidth : 1; // the stage's scale on the TV
    const at = (r) => ({ x: (r.left - box.left) / scale, y: (r.top - box.top) / scale, w: r.width / scale, h: r.height / scale });
    for (const parts of panel.units) {
      parts.rect = at(parts.el.getBoundingClientRect());
      parts.fits = 0;
      parts.tooWide = Infinity;
      const line = at(parts.line.getBoundingClientRect());
      parts.lineTop = line.y;
      parts.lineHeight = line.h;
      parts.lineLeft = line.x;
    }
    const style = getComputedStyle(panel.el);
    panel.colour = mix(style.getPropertyValue("--side").trim() || "#888888", 0.42, BASE);
    panel.ground = style.backgroundColor || "#1a1e27";
    const lineStyle = panel.units.length ? getComputedStyle(panel.units[0].line) : style;
    const family = lineStyle.fontFamily || "sans-serif";
    panel.font = `900 ${parseFloat(lineStyle.fontSize) || 30}px ${family}`;
    panel.smallFont = `600 24px ${family}`;
    const dpr = window.devicePixelRatio || 1;
    const w = panel.box.offsetWidth;
    const hgt = panel.box.offsetHeight;
    panel.size = [panel.box.clientWidth, panel.box.clientHeight];
    panel.scale = scale * dpr;
    const cw = Math.max(1, Math.round(w * panel.scale)); // (a new size clears the canvas and makes a new one)
    const ch = Math.max(1, Math.round(hgt * panel.scale));
    if (panel.canvas.width !== cw) panel.canvas.width = cw;
    if (panel.canvas.height !== ch) panel.canvas.height = ch;
    const g = panel.canvas.getContext("2d");
    const t = g.getTransform();
    if (t.a !== panel.scale || t.d !== panel.scale) g.setTransform(panel.scale, 0, 0, panel.scale, 0, 0);
    g.textBaseline = "middle";
    panel.context = g;
    panel.measured = true;
  }
}

// "#4aa3ff" at `amount` over `base`, as an rgb() string (as CSS color-mix in srgb does)
function mix(colour, amount, base) {
  const rgb = (hex) => {
    const m = /^#?([0-9a-f]{6})$/i.exec(hex) || /^#?([0-9a-f]{3})$/i.exec(hex);
    if (!m) return [136, 136, 136];
    const s = m[1].length === 3 ? m[1].split("").map((c) => c + c).join("") : m[1];
    return [0, 2, 4].map((i) => parseInt(s.slice(i, i + 2), 16));
  };
  const a = rgb(colour);
  const b = rgb(base);
  return `rgb(${a.map((v, i) => Math.round(v * amount + b[i] * (1 - amount))).join(",")})`;
}

// --- drawing the canvases -------------------------------------------------------------------------
// Each side's canvas, drawn where it changed: the tiles of the units whose numbers changed, or all
// of them after a measure; in passes (the red, the blocks, the numbers), so that a colour or a font
// is set once per pass, not once per tile.
function draw(all = false) {
  if (!board) return;
  for (const panel of board.sides.values()) {
    if (!panel.measured) continue;
    const dirty = all ? panel.units.filter((p) => p.rect) : panel.units.filter((p) => p.rect && p.dirty);
    if (!dirty.length) continue;
    for (const p of dirty) p.dirty = false;
    const g = panel.context;
    if (all) g.clearRect(0, 0, panel.canvas.width / panel.scale, panel.canvas.height / panel.scale);
    else for (const p of dirty) g.clearRect(p.rect.x, p.rect.y, p.rect.w, p.rect.h);
    // (each block filled on its own: one path of every block costs Chromium's rasteriser about
    // half as much again, as it works over the whole path's bounds)
    g.fillStyle = LOSS; // the part of a block that fell in the last phase: red around what is left
    for (const p of dirty) if (p.lost > 0 && p.ghost > 0) block(g, p.rect, p.ghost);
    g.fillStyle = panel.colour;
    for (const p of dirty) if (p.k > 0) block(g, p.rect, p.k);
    // the numbers of men (white on the block, the red and the ground alike): "1,121 men" where it
    // fits, else the number alone (squeezed only if even that is too wide)
    g.fillStyle = "#ffffff";
    g.font = panel.font;
    for (const p of dirty) {
      if (!p.lineHeight) continue;
      const room = p.rect.x + p.rect.w - p.lineLeft - 8;
      const count = fmt(p.men);
      const full = `${count} ${p.men === 1 ? "man" : "men"}`;
      // (measured once per length: the digits are as wide as each other, so a length that fitted
      // once fits again, and one that did not never will)
      const fits = full.length <= p.fits || (full.length < p.tooWide && g.measureText(full).width <= room);
      if (fits) p.fits = Math.max(p.fits, full.length);
      else p.tooWide = Math.min(p.tooWide, full.length);
      if (fits) g.fillText(full, p.lineLeft, p.lineTop + p.lineHeight / 2);
      else g.fillText(count, p.lineLeft, p.lineTop + p.lineHeight / 2, Math.max(10, room));
    }
    // a tall tile (few units in its row) also tells what troops the unit holds
    const tall = dirty.filter((p) => p.troops && p.lineHeight && p.rect.h >= 130 && p.memo["state:hidden"]);
    if (tall.length) {
      g.font = panel.smallFont;
      g.fillStyle = "#e4e7ee";
      for (const p of tall) g.fillText(fitted(g, p.troops, p.rect.x + p.rect.w - p.lineLeft - 12), p.lineLeft, p.lineTop + p.lineHeight + 20);
    }
  }
}

// `text` cut to `room` pixels in the canvas's font: whole parts ("10 knights · 2 paladins") first,
// then letters, with an ellipsis
function fitted(g, text, room) {
  if (g.measureText(text).width <= room) return text;
  const parts = text.split(" · ");
  while (parts.length > 1) {
    parts.pop();
    const cut = `${parts.join(" · ")} …`;
    if (g.measureText(cut).width <= room) return cut;
  }
  let cut = text;
  while (cut.length > 1 && g.measureText(`${cut}…`).width > room) cut = cut.slice(0, -1);
  return `${cut}…`;
}

// a unit's block, filled: the tile (inside its border) scaled by k about its middle
function block(g, r, k) {
  const w = (r.w - 6) * k;
  const hgt = (r.h - 6) * k;
  g.beginPath();
  g.roundRect(r.x + (r.w - w) / 2, r.y + (r.h - hgt) / 2, w, hgt, 10 * Math.max(0.3, k));
  g.fill();
}

// --- one update --------------------------------------------------------------------------------
function updateSide(panel, side, sid, ctx, justBroke, newBattle) {
  const { memo, el } = panel;
  setClass(memo, el, "is-broken", !!side.broken);
  setClass(memo, el, "just-broke", !!justBroke); // off at the next update, so a later break shakes again
  setData(memo, el, "broken", side.broken ? "true" : "false");
  setText(memo, "name", panel.name, side.name);
  setShown(memo, "broken-tag", panel.brokenTag, side.broken ? "BROKEN" : "");
  setShown(memo, "structure", panel.structure, side.structure ? structureText(side.structure) : "");
  strengthBar(panel, side, sid, ctx, newBattle);
}

// The side's strength against its break line: kit.healthBar's bar, made once and then written in
// place (its fill scaled rather than resized, so a fall animates on the compositor). A new battle's
// armies are whole at once: their bars do not slide back up (nothing was won back).
function strengthBar(panel, side, sid, ctx, newBattle) {
  const total = side.total;
  const start = side.start_total;
  const hasMarker = side.threshold !== null && start > 0; // as kit.healthBar draws its marker
  // (no-break spaces hold "1,038 / 1,990" and "breaks at 995" together where the words wrap: a phone)
  const text = `Strength ${fmt(total)}\u00a0/\u00a0${fmt(start)} · breaks\u00a0at\u00a0${fmt(side.threshold)}`;
  if (!panel.bar || panel.bar.hasMarker !== hasMarker) {
    const el = ctx.kit.healthBar(total, start, { label: "Strength", marker: side.threshold, cls: "old-strength", testid: `strength-${sid}`, text });
    const fill = el.querySelector(".kit-bar-fill");
    fill.style.width = "100%"; // scaled below instead
    if (panel.bar) panel.bar.el.replaceWith(el);
    else panel.structure.before(el);
    panel.bar = { el, fill, marker: el.querySelector(".kit-bar-marker"), text: el.querySelector(".kit-bar-text"), hasMarker, memo: {} };
  }
  const bar = panel.bar;
  const frac = start > 0 ? Math.max(0, Math.min(1, total / start)) : 0;
  const level = frac > 0.5 ? "high" : frac > 0.25 ? "mid" : "low"; // as kit.healthBar colours it
  for (const l of ["high", "mid", "low"]) setClass(bar.memo, bar.el, `kit-${l}`, l === level);
  setAttr(bar.memo, bar.el, "aria-valuenow", total);
  setAttr(bar.memo, bar.el, "aria-valuemax", start);
  setClass(bar.memo, bar.el, "old-no-slide", !!newBattle); // (off again at the next update: its fall slides)
  setStyle(bar.memo, bar.fill, "transform", `scaleX(${frac.toFixed(4)})`);
  if (bar.marker) setStyle(bar.memo, bar.marker, "left", `${Math.max(0, Math.min(100, (100 * side.threshold) / start)).toFixed(1)}%`);
  setText(bar.memo, "text", bar.text, text);
}

// The tile's words and labels, and what the canvas draws of it. True when the tile's state line
// (WOUNDED, DEAD…) appeared or went: the tile's words move (they are centred in it), so its side is
// measured again before the canvas draws the men's number where its line now is.
function updateUnit(parts, u, lost, maxMen) {
  const { memo, el } = parts;
  const stateShown = u.state !== "fighting";
  const moved = parts.stateShown !== undefined && parts.stateShown !== stateShown;
  parts.stateShown = stateShown;
  const troops = (u.troops || []).filter((t) => t.count > 0).map((t) => `${fmt(t.count)} ${t.label}`).join(" · ");
  const stateCls = u.state !== "fighting" ? `is-${u.state}` : null; // wounded, dead, prisoner
  if (memo.stateCls !== stateCls) {
    if (memo.stateCls) el.classList.remove(memo.stateCls);
    if (stateCls) el.classList.add(stateCls);
    memo.stateCls = stateCls;
  }
  setClass(memo, el, "is-leader", !!u.leader);
  setData(memo, el, "men", u.men);
  setData(memo, el, "lost", lost);
  setData(memo, el, "state", u.state);
  const [words, number] = tileName(u.name);
  setText(memo, "name", parts.words, words);
  setShown(memo, "number", parts.number, number);
  setShown(memo, "leader", parts.leader, u.leader ? "★" : "");
  setShown(memo, "state", parts.state, u.state !== "fighting" ? String(u.state) : "");
  setAttr(memo, el, "aria-label", `${u.name}: ${fmt(u.men)} ${u.men === 1 ? "man" : "men"}${troops ? ` (${troops})` : ""}${lost > 0 ? `, ${fmt(lost)} fell` : ""}${u.state !== "fighting" ? `, ${u.state}` : ""}`);
  // the block's area follows its men (square root: a unit of 400 reads bigger than one of 100, not
  // four times), with a floor so a handful of men still shows; the red, the size it had before
  const k = u.men > 0 ? Math.max(0.14, Math.sqrt(u.men / maxMen)) : 0;
  const ghost = lost > 0 ? Math.min(1, Math.max(0.14, Math.sqrt((u.men + lost) / maxMen))) : 0;
  if (parts.k !== k || parts.ghost !== ghost || parts.men !== u.men || parts.lost !== lost || parts.troops !== troops) parts.dirty = true;
  parts.k = k;
  parts.ghost = ghost;
  parts.men = u.men;
  parts.lost = lost;
  parts.troops = troops;
  return moved;
}

// A unit's name on its tile: [its words, its number or ""] ("Noble with two pikemen 12" is
// ["Noble", "12"]: a long name ending in a number keeps its first word and the number)
function tileName(name) {
  const text = String(name || "").trim();
  const words = text.split(/\s+/);
  const last = words[words.length - 1];
  if (words.length < 2 || !/^\d+$/.test(last)) return [text, ""];
  return [text.length <= 12 ? words.slice(0, -1).join(" ") : words[0], last];
}

function structureText(st) {
  if (!st || typeof st !== "object") return String(st || "");
  return joinParts(st.name || st.kind, st.damage !== undefined ? `damage ${st.damage}` : "");
}

export function cue(view) {
  if (view.status === "ended") return { now: null, headline: view.outcome && view.outcome.text ? view.outcome.text : "The battle is over", detail: view.round ? `Round ${view.round}` : "" };
  if (view.status === "setup") return { now: null, headline: "The armies deploy", detail: "Before the battle" };
  const phase = view.next_phase ? PHASES[view.next_phase] || view.next_phase : "";
  return { now: null, headline: phase ? `Next: ${phase}` : "", detail: joinParts(view.round ? `Round ${view.round}` : "Before round 1", phase ? `${phase} next` : "") };
}

export function result(view) {
  if (view.outcome && view.outcome.text) return view.outcome.text;
  const reports = view.report || [];
  const last = reports[reports.length - 1];
  if (!last) return null;
  if (typeof last === "string") return last;
  // in large words: the phase and how many fell on each side
  const losses = Object.entries(last.losses || {}).map(([sid, kinds]) => {
    const n = Object.values(kinds || {}).reduce((a, b) => a + b, 0);
    return n ? `side ${sid} loses ${fmt(n)}` : null;
  }).filter(Boolean);
  const broke = Object.entries(view.sides || {}).filter(([, s]) => s.broken).map(([sid]) => `side ${sid} breaks!`);
  return `${last.title || ""}: ${[...losses, ...broke].join(", ") || "no one falls"}`;
}
