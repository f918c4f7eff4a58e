// The table display (/t/<slug>/display, for the TV or projector) and the spectator page (/t/<slug>/watch).
// Public, with spectator rights: it connects without a key and receives the spectator's projection,
// so nothing hidden can reach it. It has no controls but the full-screen button.
//
// Display mode: everything is laid out on a 1920×1080 stage that is scaled to fit the screen (a
// 1280×720 laptop or a 3840×2160 TV show the same picture), never scrolled. Watch mode: the same
// pieces, laid out for whatever screen opens the link (a phone stacks them and scrolls).
//
// The shell owns the connection, the turn cue, the latest result, the dice, the log lines and the join
// corner; the system's renderer (static/js/display/<system-id>.js, or generic.js for a system whose traits say
// `board_module: "generic"`: it reads the common view shape alone) draws the board:
//   export function render(board, view, ctx)  // ctx: {kit, ui, grid, table, events, fresh, box, mode, seatName}
//   export function cue(view, ctx) -> {now: "Jinx" | null, seat: seat id | null, detail: "Round 2, missile phase"}
//   export function result(view, ctx) -> "words" | null   (optional: the latest result in large words)

import { connect } from "./connection.js";
import * as ui from "./ui.js";
import * as kit from "./kit.js";
import * as grid from "./grid.js";
import { keepAwake } from "./wake-lock.js";

const { h, replace } = ui;
const body = document.body;
const mode = body.dataset.mode === "watch" ? "watch" : "display";
const systemId = body.dataset.system;
const staticRoot = body.dataset.static || "/static/";
const STAGE_W = 1920;
const STAGE_H = 1080;

const els = {
  stage: document.getElementById("stage"),
  board: document.getElementById("board"),
  cue: document.getElementById("cue"),
  phase: document.getElementById("phase"),
  status: document.getElementById("connection"),
  result: document.getElementById("result"),
  dice: document.getElementById("dice"),
  log: document.getElementById("log"),
  join: document.getElementById("join"),
  systemName: document.getElementById("system-name"),
  fullscreen: document.getElementById("fullscreen"),
  details: document.getElementById("details"),
};

let renderer = null;
// the table payload comes first on a connection; the modules are named by its traits (`board_module`:
// "generic" for a system without modules of its own, static/js/display/generic.js), so they wait for it
let tableArrived = null;
const tableReady = new Promise((resolve) => { tableArrived = resolve; });
const moduleName = () => (table && table.traits && table.traits.board_module) || systemId;
let detailModule = null; // watch mode: the system's own board module, read-only, under the display
let table = null;
let battle = null; // the connection's state
let lastFresh = [];
let diceShownV = null;
let replayLinkKey = null;

// --- fitting the stage to the screen ----------------------------------------------------------
function fitStage() {
  if (mode !== "display") return;
  const k = Math.min(window.innerWidth / STAGE_W, window.innerHeight / STAGE_H);
  const x = (window.innerWidth - STAGE_W * k) / 2;
  const y = (window.innerHeight - STAGE_H * k) / 2;
  els.stage.style.transform = `translate(${x}px, ${y}px) scale(${k})`;
}
fitStage();

let resizeTimer = null;
window.addEventListener("resize", () => {
  fitStage();
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => { boxCache = null; if (battle) renderBoard(false); }, 150);
});

// --- full screen and the screen wake lock -----------------------------------------------------
const canFullscreen = !!(document.documentElement.requestFullscreen && document.fullscreenEnabled !== false);
function syncFullscreenButton() {
  els.fullscreen.hidden = !canFullscreen || !!document.fullscreenElement;
}
syncFullscreenButton();
els.fullscreen.addEventListener("click", async () => {
  try { await document.documentElement.requestFullscreen({ navigationUI: "hide" }); } catch { /* refused */ }
  keepAwake();
});
document.addEventListener("fullscreenchange", syncFullscreenButton);

// the TV's screen stays awake (wake-lock.js: the Wake Lock API, or NoSleep.js from the first tap on
// plain http, where the API is missing; the full-screen button is such a tap)
if (mode === "display") keepAwake();

// --- the connection ---------------------------------------------------------------------------
function setStatus(stateName, detail) {
  els.status.dataset.state = stateName;
  replace(els.status, stateName === "live" ? "● live" : stateName === "refused" ? `not connected: ${detail || "refused"}` : "reconnecting…");
  body.classList.toggle("offline", stateName !== "live");
}

async function loadRenderer() {
  if (renderer) return renderer;
  try {
    await tableReady;
    renderer = await import(`${staticRoot}js/display/${moduleName()}.js`);
  } catch (err) {
    console.error(err);
    renderer = { render: (root, view) => replace(root, h("p", { class: "d-empty" }, view.status || "…")) };
  }
  return renderer;
}

async function loadDetails() {
  if (detailModule || !els.details) return detailModule;
  try {
    await tableReady;
    detailModule = await import(`${staticRoot}js/systems/${moduleName()}.js`);
  } catch (err) {
    console.error(err);
    detailModule = { render: () => {} };
  }
  return detailModule;
}

const conn = connect({
  table: body.dataset.table,
  token: null,
  onStatus: setStatus,
  onError: (text) => console.warn(text),
  onTable: (payload) => {
    table = payload;
    tableArrived();
    replace(els.systemName, payload.system ? payload.system.name : "");
    renderJoin();
    if (battle) renderAround();
  },
  onBattle: async (state, fresh) => {
    battle = state;
    lastFresh = fresh || [];
    await loadRenderer();
    boxCache = null; // measured when a renderer first asks (Olympia's never does)
    renderBoard(true);
    renderAround();
    import(`${staticRoot}js/hiding.js`).then((m) => m.showArrivals(els.board, lastFresh)).catch(() => {}); // a revealed combatant arrives
    // a shared battle's replay (H10): looked at when the battle or its status changes, not on every update
    const replayKey = `${state.battleId}|${state.status}`;
    if (replayKey !== replayLinkKey) {
      replayLinkKey = replayKey;
      import(`${staticRoot}js/replay-link.js`).then((m) => m.mountDisplayReplayLink(els.join.parentElement, body.dataset.table, state.battleId, state.status)).catch(() => {});
    }
    if (els.details) {
      await loadDetails();
      renderDetails();
    }
  },
});
// who's winning (issue 37): a bar over the board while the GM has it on (chances.js)
import("./chances.js").then((m) => m.followChances(conn, { before: els.board, role: mode, table: () => table })).catch(() => {});

// the pointer's rings and the table's rolls between battles (issue 36)
import(`${staticRoot}js/display-tools.js`).then((m) => m.mountDisplayTools({ conn, board: els.board, dice: els.dice, log: els.log, result: els.result, view: () => battle && battle.view })).catch((err) => console.error(err));

// The board's size, read once per update and only when a renderer asks (the grid's do, before they
// write): a read after the board was redrawn would force a synchronous layout of the whole stage.
let boxCache = null;
function boardBox() {
  if (!boxCache) boxCache = { width: els.board.clientWidth || 1600, height: els.board.clientHeight || 700 };
  return boxCache;
}

function ctxFor(fresh) {
  return {
    kit, ui, grid, table, mode,
    events: battle ? battle.events : [],
    undone: battle ? battle.undone : new Set(),
    fresh,
    get box() { return boardBox(); },
    seatName: (seat) => (seat && table && table.seat_names ? table.seat_names[seat] || null : null),
  };
}

function renderBoard(fresh) {
  const root = els.board;
  root.dataset.version = String(battle.v);
  if (!battle.view) {
    replace(root, h("div", { class: "d-empty" }, h("p", {}, "Waiting for the GM to start a battle…")));
    return;
  }
  try {
    renderer.render(root, battle.view, ctxFor(fresh && lastFresh.length > 0));
  } catch (err) {
    console.error(err);
    replace(root, h("p", { class: "d-empty" }, "The board could not be drawn."));
  }
}

const narrowScreen = window.matchMedia("(max-width: 600px)");
narrowScreen.addEventListener("change", () => { if (battle && detailModule) renderDetails(); });

// Watch mode: the system's module draws its full spectator board under the display (read-only: a
// spectator has no legal actions, and anything sent would be refused by the server anyway).
function renderDetails() {
  const root = els.details;
  root.dataset.version = String(battle.v);
  if (!battle.view) { replace(root, h("p", { class: "d-muted" }, "Waiting for the GM to start a battle…")); return; }
  const refuse = async () => ({ ok: false, error: "Spectators watch only." });
  // its grid has the table's map and blocked squares, and on a phone it pinches and opens on the
  // fight, as a player's does (at a fixed 30 px a square it scrolled sideways)
  const ctx = {
    role: "spectator", seat: null, table, ui, kit, conn, notice: () => {}, send: refuse, command: refuse,
    grid: grid.onTheBoard((table && table.board) || {}, battle.view), zoomable: narrowScreen.matches,
    events: battle.events, undone: battle.undone, version: battle.v, battleId: battle.battleId,
  };
  try {
    detailModule.render(root, battle.view, ctx);
  } catch (err) {
    console.error(err);
  }
}

function renderAround() {
  renderCue();
  renderResult();
  renderDice();
  renderLog();
  renderOdds();
}

// Odds on the TV (issue 17), only while the GM has switched them on: odds.js is not even loaded before.
let oddsBox = null;
function renderOdds() {
  const on = Boolean(table && table.display && table.display.show_odds === true) && mode === "display";
  if (!on) { if (oddsBox) { oddsBox.remove(); oddsBox = null; } return; }
  if (!battle || !battle.view) return;
  import(`${staticRoot}js/odds.js`).then((odds) => {
    if (!(table && table.display && table.display.show_odds === true)) return;
    if (!oddsBox) {
      oddsBox = h("aside", { class: "display-odds", dataset: { testid: "display-odds" }, "aria-label": "Odds" });
      els.board.parentElement.append(oddsBox);
      boxCache = null;
      renderBoard(false); // the board fits the narrower room
    }
    odds.renderDisplayOdds(oddsBox, { traits: table.traits, view: battle.view, conn, battleId: battle.battleId, version: battle.v });
  }).catch((err) => console.error(err));
}

function renderCue() {
  const view = battle && battle.view;
  let cue = { now: null, seat: null, detail: "" };
  if (view && renderer && renderer.cue) {
    try { cue = renderer.cue(view, ctxFor(false)) || cue; } catch (err) { console.error(err); }
  }
  const seatName = ctxFor(false).seatName(cue.seat);
  const nowText = cue.now ? `Now: ${cue.now}${seatName ? ` (${seatName})` : ""}` : (cue.headline || (view ? "" : "Waiting for the battle…"));
  if (same(els.cue, [nowText, cue.detail || ""])) return; // unchanged: nothing to lay out again
  els.cue.dataset.active = cue.now ? "true" : "false";
  els.cue.dataset.long = nowText.length > 34 ? "true" : "false";
  if (nowText) textIn(els.cue, "span", "d-now", nowText);
  else replace(els.cue);
  textIn(els.phase, null, null, cue.detail || "");
}

// `el` showing `text` alone, in a child <tag class=cls> (or as its own text when tag is null): the
// child and its text node are kept and their words changed (ui.setWords), so an update lays out new
// words but builds, styles and attaches no new element (each update of a phase changes every one).
function textIn(el, tag, cls, text) {
  let holder = el;
  if (tag) {
    holder = el.firstElementChild;
    if (!holder || el.childNodes.length !== 1 || holder.localName !== tag || holder.className !== cls) {
      replace(el, h(tag, { class: cls }, text));
      return;
    }
  }
  ui.setWords(holder, text);
}

// Whether `el` already shows what `shown` describes (remembered on it); a part around the board is
// drawn again only when its words change, so most updates lay out the board alone.
function same(el, shown) {
  const key = JSON.stringify(shown);
  if (el.__shown === key) return true;
  el.__shown = key;
  return false;
}

// Dice worth showing on the TV: real dice, not a mass battle's draws.
const showable = kit.showableRoll;

// (each event is looked at once: the same event objects come back at every update, and an Olympia
// battle's hundreds of roll summaries are not tested again twice an update)
const hasDice = new WeakMap();
function eventsWithRolls(events) {
  const undone = battle ? battle.undone : null;
  return events.filter((e) => {
    if (undone && undone.has(e.v)) return false; // the GM took that step back: its dice no longer count
    let yes = hasDice.get(e);
    if (yes === undefined) {
      yes = Boolean(e.rolls && e.rolls.some(showable));
      hasDice.set(e, yes);
    }
    return yes;
  });
}

function renderResult() {
  const view = battle && battle.view;
  let words = null;
  if (view && renderer && renderer.result) {
    try { words = renderer.result(view, ctxFor(false)); } catch (err) { console.error(err); }
  }
  if (!words && battle) {
    const rolled = eventsWithRolls(battle.events);
    const last = rolled[rolled.length - 1] || [...battle.events].reverse().find((e) => e.rolls && e.rolls.length && e.text && !battle.undone.has(e.v));
    words = last ? last.text : null;
  }
  els.result.dataset.testid = "last-result-words";
  if (same(els.result, words)) return;
  if (words) textIn(els.result, "p", "d-result-text", words);
  else textIn(els.result, "p", "d-muted", "No result yet");
}

function renderDice() {
  if (!battle) return;
  const rolled = eventsWithRolls(battle.events);
  if (!rolled.length) { textIn(els.dice, "p", "d-muted", "No dice yet"); diceShownV = null; return; } // (a mass battle's every update)
  const lastV = rolled[rolled.length - 1].v;
  const rolls = rolled.filter((e) => e.v === lastV).flatMap((e) => e.rolls).filter(showable);
  const fresh = diceShownV !== lastV && lastFresh.some((e) => e.v === lastV);
  if (diceShownV === lastV && els.dice.childElementCount) return;
  diceShownV = lastV;
  const many = rolls.reduce((n, r) => n + (r.faces || []).length, 0);
  els.dice.dataset.count = many > 8 ? "many" : "few";
  // the last rolls of the update (on the TV at most four: they must read from the sofa)
  replace(els.dice, kit.dice(rolls.slice(-4), { fresh, max: 4 }));
  if (mode !== "display") return;
  // on the TV the tray has a fixed height: the oldest rolls go until the rest fit (a row cut in half
  // reads badly from the sofa), and a roll alone that still does not fit (twenty dice) says what it
  // was for in one line instead of two; measured once per new roll, not on every update
  const tray = els.dice.firstElementChild;
  const over = () => els.dice.scrollHeight > els.dice.clientHeight + 1;
  els.dice.dataset.tight = "false";
  while (tray && tray.childElementCount > 1 && over()) tray.firstElementChild.remove();
  if (tray && over()) els.dice.dataset.tight = "true";
}

function renderLog() {
  if (!battle) return;
  const lines = battle.events.filter((e) => e.text).slice(mode === "watch" ? -8 : -3).reverse();
  const undone = battle.undone;
  if (same(els.log, lines.map((e) => [e.v, e.type || "", e.text, undone.has(e.v)]))) return;
  // the lines move down one by one: the same number of lines are written in place
  if (els.log.childElementCount !== lines.length) {
    replace(els.log, lines.map((e, i) => logLine(h("li", { class: i === 0 ? "d-log-latest" : "" }), e, undone.has(e.v))));
    return;
  }
  lines.forEach((e, i) => logLine(els.log.children[i], e, undone.has(e.v)));
}

// One line of the log; a step the GM took back is struck through and labelled "undone" in words.
function logLine(li, e, isUndone) {
  li.dataset.type = e.type || "";
  li.dataset.v = String(e.v);
  li.dataset.undone = String(isUndone);
  if (isUndone) replace(li, h("span", { class: "d-undone-tag" }, "undone"), " ", h("s", { class: "d-undone-text" }, e.text));
  else if (li.firstElementChild) replace(li, e.text);
  else textIn(li, null, null, e.text);
  return li;
}

// --- the join corner --------------------------------------------------------------------------
function renderJoin() {
  const join = table && table.join;
  els.join.hidden = !join;
  body.classList.toggle("has-join", !!join);
  if (!join) { replace(els.join); return; }
  replace(els.join,
    join.qr ? h("img", { class: "d-join-qr", src: join.qr, alt: "QR code to join the table", width: 180, height: 180 }) : null,
    h("div", { class: "d-join-text" },
      h("span", { class: "d-join-label" }, "Join on your phone"),
      h("strong", { class: "d-join-code", dataset: { testid: "join-corner-code" } }, join.code || ""),
      join.url ? h("span", { class: "d-join-url" }, join.url.replace(/^https?:\/\//, "")) : null));
}
