// The page shell for the GM console, the player's phone and the spectator screen.
// It owns the connection, the log, the dice tray and the help; the rule system's module draws the battle.
// GM console: the board is the main area and the GM's tools sit in tabs (Battle, Lineup, Options, Rosters,
// Map, Notes, Join). Phone: what the player may do now sits at the top of the page, the rest below.
// A module marks its parts with data-region: "due" (what is due now: moved to the top of the GM's
// Battle panel or of the phone), "mine" (the player's own numbers: moved to the top of the phone),
// "tools" (the GM's standing tools: moved into the Battle panel below its controls).

import { connect } from "./connection.js";
import * as ui from "./ui.js";
import * as grid from "./grid.js";
import * as kit from "./kit.js";
import { renderControls, renderSetup, renderNotes, renderOptions, renderRosters } from "./setup.js";
import { renderDiceEntry } from "./dice-entry.js";
import { keepAwake } from "./wake-lock.js";

const { h, replace } = ui;
const body = document.body;
const role = body.dataset.role;
const systemId = body.dataset.system;
const slug = body.dataset.table;
const staticRoot = body.dataset.static || "/static/";
const baseTitle = document.title;

const els = {
  battle: document.getElementById("battle"),
  log: document.getElementById("log"),
  logLatest: document.getElementById("log-latest"),
  logFold: document.getElementById("log-fold"),
  dice: document.getElementById("dice"),
  status: document.getElementById("connection"),
  notice: document.getElementById("notice"),
  who: document.getElementById("who"),
  systemName: document.getElementById("system-name"),
  help: document.getElementById("help"),
  controls: document.getElementById("controls"),
  setup: document.getElementById("setup"),
  options: document.getElementById("options"),
  rosters: document.getElementById("rosters"),
  notes: document.getElementById("notes"),
  due: document.getElementById("due-now"),
  tools: document.getElementById("gm-tools"),
  turnArea: document.getElementById("turn"),
  yourTurn: document.getElementById("your-turn"),
  soundToggle: document.getElementById("sound-toggle"),
  pairPanel: document.getElementById("pair-panel"),
  mapPanel: document.getElementById("map-panel"),
  fogPanel: document.getElementById("fog-panel"),
  seatWait: document.getElementById("seat-wait"),
  seatWaits: document.getElementById("seat-waits"),
};

let systemModule = null;
let table = null;
// the table payload comes first on a connection; the module is named by its traits (`board_module`:
// "generic" for a system without a module of its own, static/js/systems/generic.js), so it waits for it
let tableArrived = null;
const tableReady = new Promise((resolve) => { tableArrived = resolve; });
let noticeTimer = null;

function notice(text, kind = "error") {
  els.notice.hidden = false;
  els.notice.className = `notice notice-${kind}`;
  els.notice.dataset.testid = "notice";
  replace(els.notice, text);
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { els.notice.hidden = true; }, 6000);
}

function setStatus(stateName, detail) {
  els.status.dataset.state = stateName;
  const text = stateName === "live" ? "● live" : stateName === "refused" ? `not connected: ${detail || "refused"}`
    : `reconnecting…${detail && detail !== "websocket error" && detail !== "xhr poll error" ? ` (${detail})` : ""}`;
  if (stateName === "refused") {
    replace(els.battle, h("div", { class: "empty-battle" }, h("p", { class: "big-text" }, `This page cannot join the table: ${detail || "refused"}.`),
      h("p", {}, h("a", { href: "/join" }, "Join again with the code"), " · ", h("a", { href: "/" }, "Front page"))));
  }
  replace(els.status, text);
  body.classList.toggle("offline", stateName !== "live" && stateName !== "refused"); // refused: not coming back
  if (stateName === "live") wakeLock.want();
}

async function loadSystem() {
  if (systemModule) return systemModule;
  try {
    await tableReady;
    systemModule = await import(`${staticRoot}js/systems/${(table.traits && table.traits.board_module) || systemId}.js`);
  } catch (err) {
    systemModule = { render: fallbackRender };
  }
  return systemModule;
}

function fallbackRender(root, view) {
  replace(root, h("pre", { class: "raw-view" }, JSON.stringify(view, null, 2)));
}

// ---- the GM console's tabs ------------------------------------------------------------------------
const tabs = (() => {
  const list = document.getElementById("console-tabs");
  if (!list) return null;
  const key = `battleboard:gm-tab:${slug}`;
  const buttons = [...list.querySelectorAll("[role=tab]")];
  const names = buttons.map((b) => b.dataset.tab);
  let remembered = null;
  try { remembered = localStorage.getItem(key); } catch (err) { remembered = null; }
  let current = null;

  function show(name, { focus = false, remember = false } = {}) {
    if (!names.includes(name)) name = names[0];
    current = name;
    for (const b of buttons) {
      const on = b.dataset.tab === name;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(b.getAttribute("aria-controls"));
      if (panel) panel.hidden = !on;
      if (on && focus) b.focus();
    }
    body.dataset.tab = name;
    if (remember) {
      remembered = name;
      try { localStorage.setItem(key, name); } catch (err) { /* private mode: remembered for this page only */ }
    }
  }

  list.addEventListener("click", (ev) => {
    const b = ev.target.closest("[role=tab]");
    if (b) show(b.dataset.tab, { remember: true });
  });
  list.addEventListener("keydown", (ev) => {
    const i = names.indexOf(current);
    const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: names.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    show(names[(to + names.length) % names.length], { focus: true, remember: true });
  });
  show(remembered || "lineup");
  return {
    show,
    get current() { return current; },
    /** The battle started (or a new one): the GM's eyes go to the Battle panel. */
    battleStarted() { show("battle", { remember: true }); },
    /** Before the first battle, with nothing remembered, the Lineup panel is open. */
    settle(hasBattle) { if (!remembered) show(hasBattle ? "battle" : "lineup"); },
  };
})();

// ---- moving the module's marked regions to the top of the Battle panel / the phone ------------------
function relocate() {
  const root = els.battle;
  const wrapper = root.firstElementChild;
  const family = wrapper && wrapper.classList.length ? wrapper.classList[0] : "";
  const pick = (name) => [...root.querySelectorAll(`[data-region~="${name}"]`)];
  // (a slot that already holds exactly these parts is left alone: moving them again would restyle
  // them; a part a module keeps between draws (ui.keyed) stays in the slot while its board is shown,
  // and the module removes it when it is no longer wanted)
  const fill = (slot, found) => {
    const kept = [...slot.children].filter((el) => el.__key !== undefined && el.__keyedOwner && el.__keyedOwner.isConnected && !found.includes(el));
    const all = [...kept, ...found];
    if (role === "player") {
      const rank = (el) => ((el.dataset.region || "").split(" ").includes("mine") ? 0 : 1);
      all.sort((a, b) => rank(a) - rank(b));
    }
    // only the parts out of place are moved (a part taken out and put back is styled and laid out
    // afresh: the player's own numbers stay put when the actions below them change)
    all.forEach((el, i) => { if (slot.children[i] !== el) slot.insertBefore(el, slot.children[i] || null); });
    while (slot.childElementCount > all.length) slot.lastElementChild.remove();
  };
  // (a part with nothing in it stays where it is: a board whose actions are all held while real dice
  // are due must not leave the GM an empty "Due now")
  const filled = (el) => el.textContent.trim() !== "" || el.querySelector("button, input, select, textarea, img, svg, canvas") !== null;
  if (els.due) {
    const found = (role === "player" ? [...pick("mine"), ...pick("due")] : pick("due")).filter(filled);
    els.due.className = `due-slot ${family}`;
    fill(els.due, found);
  }
  if (els.tools) {
    els.tools.className = `tools-slot ${family}`;
    fill(els.tools, pick("tools"));
  }
  if (els.turnArea) els.turnArea.hidden = !els.due.childElementCount;
}
// (a module that keeps its board between draws and redraws parts of it calls ctx.regionsChanged())
if (els.due || els.tools) new MutationObserver(relocate).observe(els.battle, { childList: true });

// ---- "your turn" cues on the phone ----------------------------------------------------------------
const turnCue = (() => {
  const key = "battleboard:turn-sound";
  let sound = false;
  try { sound = localStorage.getItem(key) === "on"; } catch (err) { sound = false; }
  let audio = null;
  let mine = false;
  const icon = document.querySelector("link[rel=icon]");
  const plainIcon = icon ? icon.getAttribute("href") : null;
  const turnIcon = `${staticRoot}icons/favicon-turn-32.png`; // (a player's page: PNGs, see board.html)

  function drawToggle() {
    if (!els.soundToggle) return;
    els.soundToggle.setAttribute("aria-pressed", String(sound));
    replace(els.soundToggle, sound ? "♪ on" : "♪ off");
  }
  function beep() {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      const now = audio.currentTime;
      for (const [at, freq] of [[0, 660], [0.18, 880]]) {
        const osc = audio.createOscillator();
        const gain = audio.createGain();
        osc.type = "sine";
        osc.frequency.value = freq;
        gain.gain.setValueAtTime(0.0001, now + at);
        gain.gain.exponentialRampToValueAtTime(0.3, now + at + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, now + at + 0.16);
        osc.connect(gain).connect(audio.destination);
        osc.start(now + at);
        osc.stop(now + at + 0.17);
      }
    } catch (err) { /* no audio here */ }
  }
  if (els.soundToggle) {
    drawToggle();
    els.soundToggle.addEventListener("click", () => {
      sound = !sound;
      try { localStorage.setItem(key, sound ? "on" : "off"); } catch (err) { /* remembered for this page only */ }
      drawToggle();
      if (sound) beep(); // a sample, and it unlocks the audio on phones that need a tap first
    });
  }
  return {
    set(isMine) {
      if (isMine === mine && body.dataset.turn) return; // (nothing to write: the same title, the same icon)
      body.classList.toggle("my-turn", isMine);
      body.dataset.turn = isMine ? "mine" : "waiting";
      if (els.yourTurn) els.yourTurn.hidden = !isMine;
      document.title = isMine ? `▶ Your turn — ${baseTitle}` : baseTitle;
      // (the icon once the update is painted: a new icon is fetched and decoded, an SVG as a document of its own)
      if (icon) afterPaint(() => icon.setAttribute("href", mine ? turnIcon : plainIcon));
      if (isMine && !mine) {
        // (the buzz and the sound as the turn shows: a call to vibrate cost the update a few milliseconds)
        afterPaint(() => {
          if (navigator.vibrate) { try { navigator.vibrate([200, 100, 200]); } catch (err) { /* not allowed yet */ } }
          if (sound) beep();
        });
      }
      mine = isMine;
    },
  };
})();

function isMyTurn(view) {
  if (!view || role !== "player") return false;
  if (view.status === "ended") return false;
  // a module may say whether its due region asks the player to act (it may be in the board or moved already)
  // (a fresh draw is still in the board when this runs; the moved copy in #due-now is then the last one)
  let marks = [...els.battle.querySelectorAll("[data-your-turn]")];
  if (!marks.length && els.battle.querySelector("[data-region]") === null && els.due) marks = [...els.due.querySelectorAll("[data-your-turn]")];
  if (marks.length) return marks.some((m) => m.dataset.yourTurn === "true");
  return (view.legal || []).length > 0;
}

// ---- a screen wake lock while seated (wake-lock.js: NoSleep.js where the Wake Lock API is missing) ---
const wakeLock = { want: () => { if (role === "player") keepAwake(); } };

// ---- the GM's side panels loaded on demand (built by other parts of the board) ----------------------
const extraPanels = { pair: null, map: null, fog: null };
async function loadExtra(name, file, exportName) {
  if (extraPanels[name] !== null) return extraPanels[name];
  try {
    const mod = await import(`${staticRoot}js/${file}`);
    extraPanels[name] = typeof mod[exportName] === "function" ? mod[exportName] : false;
  } catch (err) {
    extraPanels[name] = false;
  }
  return extraPanels[name];
}

async function renderExtras(payload) {
  if (role !== "gm") return;
  const pair = els.pairPanel ? await loadExtra("pair", "pair-panel.js", "renderPairPanel") : false;
  if (pair) { try { pair(els.pairPanel, payload, ctxBase()); } catch (err) { console.error(err); } }
  // the pairing panel brings its own "Open on the TV" link: ours is the fallback while it is absent
  const fallback = document.querySelector(".join-tv-fallback");
  if (fallback) fallback.hidden = !!(els.pairPanel && els.pairPanel.querySelector("[data-testid=open-on-tv]"));
  const map = els.mapPanel ? await loadExtra("map", "map-panel.js", "renderMapPanel") : false;
  if (map) { try { map(els.mapPanel, payload, ctxBase()); } catch (err) { console.error(err); } }
  const fog = els.fogPanel ? await loadExtra("fog", "fog-panel.js", "renderFogPanel") : false; // (fog-panel.js)
  if (fog) { try { fog(els.fogPanel, payload, ctxBase()); } catch (err) { console.error(err); } }
}

let lastBattleId = null;
let lastRunning = false;
let seenFirst = false;

const conn = connect({
  table: body.dataset.table,
  token: body.dataset.token,
  onStatus: setStatus,
  onError: (text) => notice(text),
  onTable: (payload) => {
    table = payload;
    tableArrived();
    replace(els.systemName, payload.system.name);
    // (on a phone's narrow bar the name alone: "Playe…" told a player nothing)
    if (payload.seat) replace(els.who, h("span", { class: "who-role" }, "Player: "), h("span", { class: "who-name", dataset: { testid: "seat-name" } }, payload.seat.name));
    renderHelp(payload.help || []);
    if (role === "gm") {
      renderSetup(els.setup, payload, ctxBase());
      renderOptions(els.options, payload, ctxBase());
      renderRosters(els.rosters, payload, ctxBase());
      renderNotes(els.notes, payload, ctxBase());
      renderControls(els.controls, payload, conn.state, ctxBase());
      renderExtras(payload);
    }
    renderSeatWaits(conn.state);
  },
  onBattle: async (state, fresh) => {
    await loadSystem();
    state.fresh = fresh;
    renderBattle(state);
    renderLog(state.events);
    renderDice(state.events, fresh);
    const running = !!state.view && state.status !== "ended";
    if (role === "gm" && table) {
      if (extraPanels.fog && extraPanels.fog.redraw) extraPanels.fog.redraw(); // (its board's tokens move with the battle)
      renderControls(els.controls, table, state, ctxBase());
      if (running !== lastRunning || !seenFirst) renderSetup(els.setup, table, ctxBase());
    }
    if (tabs) {
      if (seenFirst && running && (!lastRunning || state.battleId !== lastBattleId)) tabs.battleStarted();
      else if (!seenFirst) tabs.settle(!!state.view);
    }
    seenFirst = true;
    lastRunning = running;
    lastBattleId = state.battleId;
    renderSeatWaits(state);
    turnCue.set(isMyTurn(state.view));
    // the phone's client seed (H7), sent once the update is on the screen: sending a command costs a
    // phone about as much as drawing the update (a new battle's first update took twice as long)
    if (role === "player") afterPaint(() => import("./entropy.js").then((m) => m.offerEntropy(conn, conn.state)).catch(() => {}));
    if (role === "gm") import("./export-button.js").then((m) => m.mountExportButton(els.controls, table, state, ctxBase())).catch(() => {}); // download + share (H7)
  },
});

// the dice roller and the pointer (issue 36): modules of their own, mounted once (spectators neither roll nor point)
if (role === "gm" || role === "player") {
  import("./roller.js").then((m) => m.mountRoller({ conn, role, slug, seat: body.dataset.seat || null, notice, kit, ui })).catch((err) => console.error(err));
  import("./pointer.js").then((m) => { m.watchPresses({ conn, board: els.battle, notice }); m.showPointers({ socket: conn.socket, board: els.battle, view: () => conn.state.view }); }).catch((err) => console.error(err));
}
// who's winning (issue 37): a bar beside the board (the GM's at the top of the console), drawn by chances.js
import("./chances.js").then((m) => m.followChances(conn, { before: (role === "gm" && document.getElementById("console-tabs")) || els.battle, role, table: () => table })).catch(() => {});

// ---- seats with no combatant yet -------------------------------------------------------------------
// A player who joined and plays nothing is told that the GM will give them a combatant (not left
// reading the board as a spectator would); the GM's Battle panel names every such player under
// what is due now, with a way to hand them one.
function renderSeatWaits(state) {
  const running = !!(state && state.view) && state.status !== "ended";
  if (role === "player" && els.seatWait) {
    const waiting = running && !(state.yours || []).length;
    const name = table && table.seat ? table.seat.name : "";
    const key = waiting ? `${name}` : "";
    if (els.seatWait.__key === key) return;
    els.seatWait.__key = key;
    els.seatWait.hidden = !waiting;
    replace(els.seatWait, waiting ? [
      h("strong", { class: "seat-wait-head" }, name ? `${name}, you have a seat.` : "You have a seat."),
      " The GM will give you a combatant: your choices show here as soon as they do. Until then, follow the battle below.",
    ] : []);
    return;
  }
  if (role !== "gm" || !els.seatWaits || !table) return;
  // in a battle: the seats that play none of its combatants; before one: none of the lineup's
  const playing = new Set(running ? state.seatsPlaying || []
    : (table.lineup || []).filter((e) => e.controller === "seat").map((e) => e.seat));
  const waiting = (table.seats || []).filter((seat) => !playing.has(seat.id));
  const key = JSON.stringify([running, waiting.map((seat) => [seat.id, seat.name])]);
  if (els.seatWaits.__key === key) return;
  els.seatWaits.__key = key;
  els.seatWaits.hidden = !waiting.length;
  const handOver = () => {
    if (!running) { if (tabs) tabs.show("lineup", { remember: true }); return; }
    const list = els.controls.querySelector(".assignments");
    if (!list) return;
    list.open = true;
    list.scrollIntoView({ block: "nearest" });
    // the first combatant no player plays yet
    const selects = [...list.querySelectorAll("select")];
    const free = selects.find((el) => !el.value.startsWith("seat:")) || selects[0];
    if (free) free.focus();
  };
  replace(els.seatWaits, waiting.map((seat) => h("li", { class: "seat-waits-item", dataset: { testid: "seat-waiting", seat: seat.id } },
    h("span", { class: "seat-waits-text" }, h("strong", {}, seat.name), " is waiting for a combatant"),
    ui.button("Give one", handOver, { class: "link-button", "aria-label": `Give ${seat.name} a combatant`, title: running ? "Who plays whom, below" : "In the lineup" }))));
}

// Work that can wait until the update is painted (at once when the page is hidden: no frame comes).
function afterPaint(work) {
  if (document.visibilityState !== "visible") { setTimeout(work, 0); return; }
  requestAnimationFrame(() => setTimeout(work, 0));
}

function ctxBase() {
  return {
    role,
    seat: table && table.seat ? table.seat.id : null,
    table,
    ui,
    kit,
    grid,
    conn,
    notice,
    // a phone's and a GM's grid open on the fight with the whole board a tap away (on a laptop a
    // 20-square board beside the console had squares of 25 px, its names unreadable)
    zoomable: role === "player" || role === "gm",
    send: async (declaration) => {
      const ack = await conn.declare(declaration);
      if (!ack.ok) {
        notice(ack.error || "That was not accepted.");
        if (ack.code === "stale") conn.sync();
      }
      return ack;
    },
    command: async (event, payload) => {
      const ack = await conn.command(event, payload);
      if (!ack.ok) notice(ack.error || "That was not accepted.");
      return ack;
    },
    showTab: (name) => { if (tabs) tabs.show(name, { remember: true }); },
    regionsChanged: () => { if (els.due || els.tools) relocate(); },
  };
}

function renderBattle(state) {
  const root = els.battle;
  root.dataset.version = String(state.v);
  if (!state.view) {
    replace(root, h("div", { class: "empty-battle" },
      h("p", { class: "big-text" }, role === "gm" ? "No battle yet: build the lineup and start one." : "Waiting for the GM to start a battle…")));
    return;
  }
  const ctx = { ...ctxBase(), grid: grid.onTheBoard((table && table.board) || {}, state.view, role === "gm" ? { wheelZoom: "modifier", floorPx: 40 } : {}), events: state.events, undone: state.undone, version: state.v, battleId: state.battleId };
  try {
    systemModule.render(root, state.view, ctx);
  } catch (err) {
    console.error(err);
    fallbackRender(root, state.view);
  }
  try { renderDiceEntry(root, state.view, ctx); } catch (err) { console.error(err); } // real dice due (H9)
  import("./hiding.js").then((m) => { if (role === "gm") m.renderHiding(root, state, ctx); m.showArrivals(root, state.fresh); }).catch((err) => console.error(err)); // hidden combatants
}

// The log is announced politely: only the lines new since the last draw are added (a re-drawn list
// would be read out whole).
// A phone shows the latest line (announced) and folds the whole log away: folded, the log is not
// drawn, and opening the fold brings it up to date.
let logShown = { battleId: null, lastV: -1, count: 0 };
function renderLog(events) {
  if (els.logLatest) {
    let latest = "";
    for (let i = events.length - 1; i >= 0; i--) if (events[i].text) { latest = events[i].text; break; }
    if (els.logLatest.textContent !== latest) els.logLatest.textContent = latest;
  }
  if (els.logFold && !els.logFold.open) return;
  const items = events.filter((e) => e.text).slice(-150);
  const battleId = conn.state.battleId;
  const undone = conn.state.undone;
  const lastV = items.length ? items[items.length - 1].v : -1;
  const item = (e) => {
    const li = h("li", { class: `log-${(e.type || "").split(".")[0]}`, dataset: { type: e.type, v: e.v } });
    li.__text = e.text;
    return markUndone(li, undone.has(e.v));
  };
  const grows = battleId === logShown.battleId && lastV >= logShown.lastV && els.log.childElementCount === logShown.count;
  if (grows) {
    const added = items.filter((e) => e.v > logShown.lastV);
    for (const e of added) els.log.prepend(item(e));
    while (els.log.childElementCount > 150) els.log.lastElementChild.remove();
    // an undo strikes through the lines of the step it took back (written in place: the rest stays)
    if (undone.size !== logShown.undone) for (const li of els.log.children) markUndone(li, undone.has(Number(li.dataset.v)));
  } else {
    replace(els.log, items.slice().reverse().map(item));
  }
  logShown = { battleId, lastV, count: els.log.childElementCount, undone: undone.size };
}

// A log line of a step the GM took back: struck through, and labelled "undone" in words (not only
// by its look), as on every screen of the table.
function markUndone(li, isUndone) {
  if ((li.dataset.undone === "true") === isUndone && li.firstChild) return li;
  li.dataset.undone = String(isUndone);
  if (isUndone) replace(li, h("span", { class: "undone-tag" }, "undone"), " ", h("s", { class: "undone-text" }, li.__text));
  else replace(li, li.__text);
  return li;
}

if (els.logFold) els.logFold.addEventListener("toggle", () => { if (els.logFold.open) renderLog(conn.state.events); });

function renderDice(events, fresh) {
  const lastV = events.length ? events[events.length - 1].v : 0;
  const recent = events.filter((e) => e.v === lastV && e.rolls && e.rolls.length);
  const freshVs = new Set((fresh || []).map((e) => e.v));
  if (!recent.length) {
    if (!els.dice.childElementCount) replace(els.dice, h("p", { class: "muted" }, "No dice rolled yet."));
    else if (conn.state.undone.has(els.dice.__shown)) { // the GM took back the step that rolled them
      els.dice.__shown = "undone";
      replace(els.dice, h("p", { class: "muted", dataset: { testid: "dice-undone" } }, "The GM took back the last roll: those dice no longer count."));
    }
    return;
  }
  let rolls = recent.flatMap((e) => e.rolls);
  if (role === "player") {
    // a phone shows real dice only (a mass battle's phase draws hundreds of numbers: the report says
    // what they did), and its first rolls up to a dozen dice (at least one roll), so that they read
    // on one screen and roll in quickly
    let faces = 0;
    rolls = rolls.filter(kit.showableRoll).filter((roll, i) => {
      faces += (roll.faces || []).length;
      return i === 0 || faces <= 12;
    });
    if (!rolls.length) {
      if (els.dice.__shown !== "none") { els.dice.__shown = "none"; replace(els.dice, h("p", { class: "muted" }, "No dice to show for this step.")); }
      return;
    }
  }
  els.dice.__shown = lastV;
  replace(els.dice, kit.dice(rolls, { fresh: freshVs.has(lastV), max: 24 }));
}

function renderHelp(sections) {
  if (!els.help) return;
  if (!sections.length) { els.help.hidden = true; return; }
  replace(els.help, h("details", {}, h("summary", {}, "How this system works"),
    sections.map((s) => h("section", {}, h("h3", {}, s.title), h("p", {}, s.text)))));
}
