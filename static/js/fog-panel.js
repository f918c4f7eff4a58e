// The GM console's fog tools (grid systems, issue 36), in the Map tab: the board with its fog, on
// which the GM paints fog or erases it by dragging, or drags a rectangle to reveal a room; the whole
// map fogged or cleared in one tap; the sight that clears fog round the players' combatants.
//
// renderFogPanel(root, table, ctx): `table` is the GM's table payload, `ctx` page.js's ctxBase().
// Pointer Events throughout, so a finger paints as a mouse does. A stroke is drawn at once on this
// board and sent when the finger lifts, as one `fog_set` (the server checks it, stores it with the
// map and sends every page its fog; what stands in it leaves the players' and the TV's payloads).

import { h, replace, s } from "./ui.js";
import { renderGrid } from "./grid.js";

const SIGHTS = [null, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20];

// what the GM is doing, kept across the table's re-renders
const state = { slug: null, tool: null, strokeEnded: 0, stroke: null, fog: null, status: "", error: false, els: null, table: null, ctx: null };

function gridSize(table) {
  const o = table.options || {};
  return { width: o.width || o.grid_width || 20, height: o.height || o.grid_height || 12 };
}

const keyOf = (x, y) => `${x},${y}`;

function tokensOf(table, ctx) {
  const looks = (table.board && table.board.tokens) || {};
  const view = ctx && ctx.conn && ctx.conn.state ? ctx.conn.state.view : null;
  const source = view && Array.isArray(view.combatants) ? view.combatants
    : view && view.combatants && typeof view.combatants === "object" ? Object.values(view.combatants) : table.lineup || [];
  return source
    .filter((c) => c && Number.isInteger(c.x) && Number.isInteger(c.y))
    .map((c) => ({ id: c.id, x: c.x, y: c.y, name: c.name, side: c.side, dead: !!(c.dead || c.out),
      colour: (looks[c.id] && looks[c.id].colour) || null, portrait: (looks[c.id] && looks[c.id].portrait) || null }));
}

function say(text, error = false) {
  state.status = text;
  state.error = error;
  const el = state.els && state.els.status;
  if (el) { el.textContent = text; el.classList.toggle("error", error); }
}

// the square under a pointer on a grid's svg (`cell` user units a square), or null off the board
function squareAt(svg, ev, cell, width, height) {
  const ctm = svg.getScreenCTM();
  if (!ctm) return null;
  const pt = svg.createSVGPoint();
  pt.x = ev.clientX;
  pt.y = ev.clientY;
  const p = pt.matrixTransform(ctm.inverse());
  const x = Math.floor(p.x / cell);
  const y = Math.floor(p.y / cell);
  return x >= 0 && y >= 0 && x < width && y < height ? { x, y } : null;
}

function rectSquares(a, b) {
  const out = [];
  for (let x = Math.min(a.x, b.x); x <= Math.max(a.x, b.x); x++) for (let y = Math.min(a.y, b.y); y <= Math.max(a.y, b.y); y++) out.push([x, y]);
  return out;
}

function shownFog() {
  const fog = new Set(state.fog);
  const st = state.stroke;
  if (st && st.kind === "paint") for (const k of st.squares) fog.add(k);
  if (st && st.kind === "erase") for (const k of st.squares) fog.delete(k);
  return [...fog].map((k) => k.split(",").map(Number));
}

function draw() {
  const { table, ctx, els } = state;
  if (!els) return;
  const { width, height } = gridSize(table);
  const board = table.board || {};
  const st = state.stroke;
  const highlights = st && st.kind === "reveal" && st.to ? rectSquares(st.from, st.to).map(([x, y]) => ({ x, y, cls: "fog-reveal" })) : [];
  renderGrid(els.board, {
    width, height, cell: 40, map: board.map || null, blocked: board.blocked || [], fog: shownFog(), fogLook: "dim",
    tokens: tokensOf(table, ctx), names: true, highlights,
  });
  // the board's test hooks belong to the battle's board: this one's tokens go by their own
  for (const el of els.board.querySelectorAll("[data-testid^='token']")) el.dataset.testid = `fog-${el.dataset.testid}`;
  const svg = els.board.querySelector("svg");
  if (svg && svg.dataset.fogTools !== "1") attachPointer(svg);
  const n = state.fog.size;
  els.count.textContent = n === 0 ? "No fog on the map." : n === width * height ? "The whole map is under fog." : `${n} square${n === 1 ? "" : "s"} under fog.`;
  for (const [tool, button] of Object.entries(els.tools)) button.setAttribute("aria-pressed", state.tool === tool ? "true" : "false");
  document.getElementById("battle")?.classList.toggle("fog-armed", !!state.tool);
  markBattleBoard();
}

async function send(change, words) {
  const ack = await state.ctx.command("fog_set", change);
  if (ack && ack.ok) {
    const fog = (ack.board && ack.board.fog) || [];
    state.fog = new Set(fog.map(([x, y]) => keyOf(x, y)));
    say(words);
  } else {
    say((ack && ack.error) || "The fog was not changed.", true);
  }
  state.stroke = null;
  draw();
}

// whether a stroke may start: a tool is picked and the fog tools are on screen
function armed() {
  return !!state.tool && !!state.els && state.els.board.isConnected && state.els.board.offsetParent !== null;
}

function startStroke(svg, cell, ev) {
  const { width, height } = gridSize(state.table);
  const sq = squareAt(svg, ev, cell, width, height);
  if (!sq) return false;
  ev.preventDefault();
  try { svg.setPointerCapture(ev.pointerId); } catch { /* gone */ }
  state.stroke = state.tool === "reveal"
    ? { kind: "reveal", pointer: ev.pointerId, svg, cell, from: sq, to: sq }
    : { kind: state.tool, pointer: ev.pointerId, svg, cell, squares: new Set([keyOf(sq.x, sq.y)]) };
  draw();
  return true;
}

function moveStroke(ev) {
  const st = state.stroke;
  if (!st || st.pointer !== ev.pointerId) return false;
  const { width, height } = gridSize(state.table);
  const sq = squareAt(st.svg, ev, st.cell, width, height);
  if (!sq) return true;
  if (st.kind === "reveal") {
    if (st.to.x === sq.x && st.to.y === sq.y) return true;
    st.to = sq;
  } else {
    const k = keyOf(sq.x, sq.y);
    if (st.squares.has(k)) return true;
    st.squares.add(k);
  }
  draw();
  return true;
}

function endStroke(ev) {
  const st = state.stroke;
  if (!st || st.pointer !== ev.pointerId) return false;
  state.strokeEnded = Date.now();
  if (ev.type === "pointercancel") { state.stroke = null; draw(); return true; }
  if (st.kind === "reveal") {
    const [x0, y0, x1, y1] = [st.from.x, st.from.y, st.to.x, st.to.y];
    const n = (Math.abs(x1 - x0) + 1) * (Math.abs(y1 - y0) + 1);
    send({ rect: { x0, y0, x1, y1, fog: false } }, `Revealed ${n} square${n === 1 ? "" : "s"}.`);
  } else {
    const squares = [...st.squares].map((k) => k.split(",").map(Number));
    const paint = st.kind === "paint";
    send(paint ? { add: squares } : { remove: squares },
      `${paint ? "Fogged" : "Cleared"} ${squares.length} square${squares.length === 1 ? "" : "s"}.`);
  }
  return true;
}

// the stroke drawn on the battle board while it lasts (the board draws the fog the server sends)
function markBattleBoard() {
  for (const el of document.querySelectorAll(".fog-stroke")) el.remove();
  const st = state.stroke;
  if (!st || st.svg === state.els.board.querySelector("svg")) return;
  const c = st.cell;
  const squares = st.kind === "reveal" ? rectSquares(st.from, st.to) : [...st.squares].map((k) => k.split(",").map(Number));
  const group = s("g", { class: `fog-stroke fog-stroke-${st.kind}`, "pointer-events": "none" },
    squares.map(([x, y]) => s("rect", { x: x * c, y: y * c, width: c, height: c })));
  st.svg.append(group);
}

function attachPointer(svg) {
  svg.dataset.fogTools = "1";
  svg.style.touchAction = "none"; // a finger paints here: it does not scroll the page
  svg.addEventListener("pointerdown", (ev) => {
    if ((ev.button !== undefined && ev.button > 0) || !state.tool) return;
    startStroke(svg, 40, ev);
  });
  svg.addEventListener("pointermove", moveStroke);
  svg.addEventListener("pointerup", endStroke);
  svg.addEventListener("pointercancel", endStroke);
}

// With a tool picked and the fog tools open beside it, the battle board takes strokes too (in the
// capture phase: the board's own taps and drags wait until the tool is put down).
function hookBattleBoard() {
  const battle = document.getElementById("battle");
  if (!battle || battle.dataset.fogTools === "1") return;
  battle.dataset.fogTools = "1";
  battle.addEventListener("pointerdown", (ev) => {
    if (!armed() || (ev.button !== undefined && ev.button > 0)) return;
    const svg = ev.target && ev.target.closest ? ev.target.closest("svg[data-testid=grid]") : null;
    if (!svg || !battle.contains(svg)) return;
    if (startStroke(svg, Number(svg.dataset.cell) || 44, ev)) ev.stopPropagation();
  }, true);
  for (const [type, fn] of [["pointermove", moveStroke], ["pointerup", endStroke], ["pointercancel", endStroke]]) {
    battle.addEventListener(type, (ev) => { if (state.stroke && state.stroke.svg !== state.els.board.querySelector("svg") && fn(ev)) ev.stopPropagation(); }, true);
  }
  // the click that ends a stroke is not a tap on a square or a token
  battle.addEventListener("click", (ev) => {
    if (state.strokeEnded && Date.now() - state.strokeEnded < 400) { ev.stopPropagation(); ev.preventDefault(); }
  }, true);
}

function build(root) {
  const tool = (name, label) => h("button", {
    type: "button", "aria-pressed": "false", dataset: { testid: `fog-tool-${name}` },
    onclick: () => { state.tool = state.tool === name ? null : name; draw(); }, // (tapped again: put down)
  }, label);
  const tools = { paint: tool("paint", "Paint fog"), erase: tool("erase", "Erase fog"), reveal: tool("reveal", "Reveal a room") };
  const sight = h("select", {
    id: "fog-sight", dataset: { testid: "fog-sight" },
    onchange: () => {
      const n = sight.value === "" ? null : Number(sight.value);
      send({ sight: n }, n ? `Fog now clears ${n} square${n === 1 ? "" : "s"} round each player's combatant.` : "Sight is off: only you clear the fog.");
    },
  }, SIGHTS.map((n) => h("option", { value: n === null ? "" : String(n) }, n === null ? "Off: only the GM clears fog" : `${n} square${n === 1 ? "" : "s"}`)));
  const els = {
    status: h("p", { class: "map-status", role: "status", "aria-live": "polite", dataset: { testid: "fog-status" } }),
    board: h("div", { class: "fog-board", dataset: { testid: "fog-board" } }),
    count: h("p", { class: "muted", dataset: { testid: "fog-count" } }),
    tools, sight,
  };
  replace(root, h("section", { class: "fog-panel", dataset: { testid: "fog-panel" } },
    h("h3", {}, "Fog"),
    h("p", { class: "muted" },
      "The TV and the phones see fogged squares dark, and nothing standing on them; you see them dimmed. " +
      "Pick a tool, then drag on this map or on the battle board: paint or erase fog square by square, or drag a rectangle to reveal a room. Tap the tool again to put it down."),
    h("div", { class: "button-row fog-tools", role: "group", "aria-label": "Fog tool" }, Object.values(tools)),
    els.board,
    h("div", { class: "button-row" },
      h("button", { type: "button", dataset: { testid: "fog-fill" }, onclick: () => send({ all: true }, "The whole map is under fog.") }, "Fog the whole map"),
      h("button", { type: "button", dataset: { testid: "fog-clear" }, onclick: () => send({ all: false }, "All fog cleared.") }, "Clear all fog")),
    els.count,
    h("label", { for: "fog-sight", class: "fog-sight" }, "Sight of the players' combatants ", sight),
    h("p", { class: "muted" }, "With sight on, fog clears by itself round each player's combatant as it moves; blocked squares stop it."),
    els.status));
  return els;
}

function ensureStyles() {
  if (document.querySelector("link[data-fog-panel]")) return;
  const base = document.body.dataset.static || "/static/";
  document.head.append(h("link", { rel: "stylesheet", href: `${base}css/fog.css`, dataset: { fogPanel: "1" } }));
}

export function renderFogPanel(root, table, ctx) {
  if (!root) return;
  ensureStyles();
  if (state.slug !== table.slug || !state.els || !root.contains(state.els.board)) {
    Object.assign(state, { slug: table.slug, stroke: null, status: "", error: false });
    state.els = build(root);
  }
  state.table = table;
  state.ctx = ctx;
  const board = table.board || {};
  if (!state.stroke) state.fog = new Set((board.fog || []).map(([x, y]) => keyOf(x, y)));
  state.els.sight.value = board.sight ? String(board.sight) : "";
  hookBattleBoard();
  say(state.status, state.error);
  draw();
}

// the battle moved: the fog tools' board draws its tokens where they stand now (a stroke in progress is kept)
renderFogPanel.redraw = () => { if (state.els && state.table) draw(); };
