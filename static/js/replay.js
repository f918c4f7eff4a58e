// The replay page (/t/<slug>/battles/<id>/replay): a finished battle, step by step.
//
// One step is one version of the battle (one accepted command: the start, a declaration, an undo,
// the GM's end) with the board as it stood after it and that command's events. The board is drawn by
// the table display's own renderer for the system (static/js/display/<system-id>.js, on kit.js and
// grid.js), so the replay looks like the TV did. The data comes from replay.json, projected on the
// server for this viewer: a spectator's view for the public replay, the GM's (every event, hidden
// ones marked) for the GM. Undone steps stay in, marked undone; their lines in the log are struck
// through from the undo that took them back on.
//
// Controls: first, previous, play/pause, next, last, a speed and a scrubber; ← → step, Home/End
// jump, Space plays or pauses. The step is kept in the address (#v=12) so a link can point at it.

import * as ui from "./ui.js";
import * as kit from "./kit.js";
import * as grid from "./grid.js";

const { h, replace } = ui;
const body = document.body;
const staticRoot = body.dataset.static || "/static/";
const systemId = body.dataset.system;
const isGm = body.dataset.role === "gm";
const BASE_DELAY = 2200; // ms a step stays at 1×

const els = {
  stage: document.getElementById("stage"),
  board: document.getElementById("board"),
  cue: document.getElementById("cue"),
  phase: document.getElementById("phase"),
  event: document.getElementById("event"),
  result: document.getElementById("result"),
  dice: document.getElementById("dice"),
  log: document.getElementById("log"),
  links: document.getElementById("links"),
  first: document.getElementById("first"),
  prev: document.getElementById("prev"),
  play: document.getElementById("play"),
  next: document.getElementById("next"),
  last: document.getElementById("last"),
  scrubber: document.getElementById("scrubber"),
  speed: document.getElementById("speed"),
  position: document.getElementById("position"),
  systemName: document.getElementById("system-name"),
};

let data = null;
let renderer = null;
let index = 0;
let timer = null;
let drawnIndex = null;
let chanceLine = null; // who's winning under the scrubber (replay-chances.js), once loaded

const VISIBILITY_WORDS = { public: null, gm: "GM only", hidden: "hidden" };
function visibilityWord(visibility) {
  if (!visibility || !isGm) return null;
  if (visibility in VISIBILITY_WORDS) return VISIBILITY_WORDS[visibility];
  if (visibility.startsWith("owner:")) return "player's secret";
  if (visibility.startsWith("combatant:")) return "GM and its player";
  return visibility;
}

// Dice worth showing: as on the table display (real dice, not a mass battle's draws)
const showable = kit.showableRoll;

async function loadRenderer() {
  try {
    renderer = await import(`${staticRoot}js/display/${systemId}.js`);
  } catch (err) {
    // a system without a display module of its own (traits.board_module "generic"): the common view shape's
    try { renderer = await import(`${staticRoot}js/display/generic.js`); return; } catch (again) { console.error(again); }
    console.error(err);
    renderer = { render: (root, view) => replace(root, h("p", { class: "d-empty" }, view.status || "…")) };
  }
}

async function load() {
  let response;
  try {
    response = await fetch(body.dataset.replay, { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch {
    fail("The replay could not be loaded: the board is not reachable.");
    return;
  }
  const payload = await response.json().catch(() => null);
  if (!response.ok || !payload || !payload.ok) {
    fail((payload && payload.error) || `The replay could not be loaded (${response.status}).`);
    return;
  }
  data = payload;
  indexEvents();
  await loadRenderer();
  replace(els.systemName, `${data.system.name} · replay of battle ${data.battle_id}`);
  els.scrubber.max = String(Math.max(0, data.steps.length - 1));
  els.stage.dataset.steps = String(data.steps.length);
  renderLinks();
  chanceLine = await import("./replay-chances.js").then((m) => m.mountChanceLine(els.scrubber.closest(".r-scrub") || els.scrubber, data.steps)).catch(() => null);
  const fromHash = /(?:^#|&)v=(\d+)/.exec(window.location.hash);
  const at = fromHash ? data.steps.findIndex((s) => s.v === Number(fromHash[1])) : -1;
  show(at >= 0 ? at : 0);
  // ready once the first step is drawn (before, a reader could find the page "ready" with no board)
  els.stage.dataset.state = "ready";
}

function fail(message) {
  els.stage.dataset.state = "failed";
  replace(els.event, h("p", { class: "r-error", role: "alert" }, message));
  for (const b of [els.first, els.prev, els.play, els.next, els.last, els.scrubber, els.speed]) b.disabled = true;
}

// --- drawing one step -------------------------------------------------------------------------
let allEvents = []; // every step's events in order, undone ones marked
let ends = []; // ends[i]: how many of them the steps up to i hold

function indexEvents() {
  allEvents = [];
  ends = data.steps.map((step) => {
    // (undoneBy: the version of the undo that took the step back; from that step on its lines are struck)
    for (const e of step.events) allEvents.push(step.undone ? { ...e, undoneBy: step.undone_by ?? step.v } : e);
    return allEvents.length;
  });
}

// an event the GM had taken back by the step shown (its step's undo is that step or an earlier one)
function undoneAt(e, step) {
  return e.undoneBy !== undefined && e.undoneBy !== null && e.undoneBy <= step.v;
}

function eventsUpTo(i) {
  return allEvents.slice(0, ends[i]);
}

// On a phone the renderers lay the board out as on the spectator's screen ("watch": the grid takes
// its own shape and pinch-zooms); on a wide screen the board has a fixed box beside the step's words,
// and the grid is fitted into it (any mode but "watch" and "display" fits the box at spectator sizes).
const wide = window.matchMedia("(min-width: 1000px)");
function boardMode() { return wide.matches ? "replay" : "watch"; }

function ctxFor(i, fresh) {
  return {
    kit, ui, grid, mode: boardMode(),
    table: data.table,
    events: eventsUpTo(i),
    fresh,
    box: { width: els.board.clientWidth || 800, height: els.board.clientHeight || 480 },
    seatName: (seat) => (seat && data.table.seat_names ? data.table.seat_names[seat] || null : null),
  };
}

const KIND_WORDS = {
  start: "The battle begins", undo: "The GM undoes", assign: "The GM hands over a combatant", end: "The GM ends the battle",
  entropy: "A player's phone adds to the dice",
};

function show(i) {
  if (!data) return;
  index = Math.max(0, Math.min(data.steps.length - 1, i));
  const step = data.steps[index];
  const fresh = drawnIndex !== null && index === drawnIndex + 1;
  drawnIndex = index;
  els.stage.dataset.index = String(index);
  els.stage.dataset.version = String(step.v);
  els.stage.dataset.undone = step.undone ? "true" : "false";
  els.board.dataset.version = String(step.v);
  if (wide.matches) els.board.style.removeProperty("height"); // a phone's grid-shaped height, after a resize
  try {
    renderer.render(els.board, step.view, ctxFor(index, fresh));
  } catch (err) {
    console.error(err);
    replace(els.board, h("p", { class: "d-empty" }, "The board could not be drawn."));
  }
  // a combatant revealed at this step arrives, as it did on the TV (static/js/hiding.js)
  if (fresh) import("./hiding.js").then((m) => m.showArrivals(els.board, step.events)).catch(() => {});
  renderCue(step);
  renderEvent(step);
  renderResult(step);
  renderDice(step, fresh);
  renderLog();
  renderPosition(step);
  if (window.history && window.history.replaceState) window.history.replaceState(null, "", `#v=${step.v}`);
}

function renderCue(step) {
  let cue = { now: null, seat: null, detail: "" };
  if (renderer.cue) {
    try { cue = renderer.cue(step.view, ctxFor(index, false)) || cue; } catch (err) { console.error(err); }
  }
  const seatName = ctxFor(index, false).seatName(cue.seat);
  const nowText = cue.now ? `Now: ${cue.now}${seatName ? ` (${seatName})` : ""}` : (cue.headline || "");
  els.cue.dataset.active = cue.now ? "true" : "false";
  els.cue.dataset.long = nowText.length > 34 ? "true" : "false";
  replace(els.cue, nowText ? h("span", { class: "d-now" }, nowText) : null);
  replace(els.phase, cue.detail || "");
}

function eventLine(e, cls = "") {
  const word = visibilityWord(e.visibility);
  return h("li", { class: `${cls} ${word ? "r-secret" : ""} ${e.undone ? "r-undone" : ""}`.trim(), dataset: { type: e.type || "", v: e.v, visibility: e.visibility || "public" } },
    word ? h("span", { class: "r-tag", dataset: { testid: "secret-tag" } }, word) : null,
    e.undone ? h("span", { class: "r-tag r-tag-undone" }, "undone") : null,
    h("span", { class: "r-text" }, e.text));
}

function renderEvent(step) {
  const lines = step.events.filter((e) => e.text);
  const head = h("p", { class: "r-event-head" },
    h("span", { class: "r-step-no" }, `Step ${index + 1}`),
    KIND_WORDS[step.kind] ? h("span", { class: "r-kind" }, KIND_WORDS[step.kind]) : null,
    step.undone ? h("span", { class: "r-tag r-tag-undone", dataset: { testid: "step-undone" } }, "Undone later by the GM") : null);
  els.event.dataset.long = lines.reduce((n, e) => n + e.text.length, 0) > 160 ? "true" : "false";
  replace(els.event, head, lines.length
    ? h("ul", { class: "r-event-lines", tabindex: "0", "aria-label": "This step's events", dataset: { testid: "replay-event-lines" } }, lines.map((e) => eventLine({ ...e, undone: false })))
    : h("p", { class: "d-muted" }, "Nothing anyone else could see happened in this step."));
}

function renderResult(step) {
  let words = null;
  if (renderer.result) {
    try { words = renderer.result(step.view, ctxFor(index, false)); } catch (err) { console.error(err); }
  }
  if (!words) { // (the dice of a step taken back no longer count)
    const rolled = eventsUpTo(index).filter((e) => e.text && e.rolls && e.rolls.some(showable) && !undoneAt(e, step));
    words = rolled.length ? rolled[rolled.length - 1].text : null;
  }
  replace(els.result, words ? h("p", { class: "d-result-text" }, words) : h("p", { class: "d-muted" }, "No result yet"));
}

function renderDice(step, fresh) {
  const rolls = step.events.flatMap((e) => e.rolls || []).filter(showable);
  if (!rolls.length) { replace(els.dice, h("p", { class: "d-muted" }, "No dice in this step")); return; }
  const many = rolls.reduce((n, r) => n + (r.faces || []).length, 0);
  els.dice.dataset.count = many > 8 ? "many" : "few";
  replace(els.dice, kit.dice(rolls.slice(-6), { fresh, max: 6 }));
}

const LOG_LINES = 150; // the newest lines of the log so far (a long battle's whole log would slow each step)

function renderLog() {
  const lines = [];
  const step = data.steps[index];
  for (let k = ends[index] - 1; k >= 0 && lines.length < LOG_LINES; k -= 1) if (allEvents[k].text) lines.push(allEvents[k]);
  replace(els.log, lines.map((e, i) => eventLine({ ...e, undone: undoneAt(e, step) }, i === 0 ? "d-log-latest" : "")));
}

function renderPosition(step) {
  const n = data.steps.length;
  els.scrubber.value = String(index);
  els.scrubber.setAttribute("aria-valuetext", `Step ${index + 1} of ${n}, version ${step.v}`);
  replace(els.position, `Step ${index + 1} of ${n}`);
  if (chanceLine) chanceLine.mark(index);
  els.first.disabled = els.prev.disabled = index === 0;
  els.next.disabled = els.last.disabled = index === n - 1;
  if (index === n - 1 && timer) pause();
}

// --- playing ----------------------------------------------------------------------------------
function delay() { return BASE_DELAY / (Number(els.speed.value) || 1); }

function play() {
  if (!data) return;
  if (index >= data.steps.length - 1) show(0);
  clearInterval(timer);
  timer = setInterval(() => {
    if (index >= data.steps.length - 1) { pause(); return; }
    show(index + 1);
  }, delay());
  els.play.setAttribute("aria-pressed", "true");
  els.stage.dataset.playing = "true";
  replace(els.play, "❚❚", h("span", { class: "r-btn-word" }, "Pause"));
}

function pause() {
  clearInterval(timer);
  timer = null;
  els.play.setAttribute("aria-pressed", "false");
  els.stage.dataset.playing = "false";
  replace(els.play, "▶", h("span", { class: "r-btn-word" }, "Play"));
}

function toggle() { if (timer) pause(); else play(); }
function step(to) { pause(); show(to); }

els.first.addEventListener("click", () => step(0));
els.prev.addEventListener("click", () => step(index - 1));
els.next.addEventListener("click", () => step(index + 1));
els.last.addEventListener("click", () => step(data ? data.steps.length - 1 : 0));
els.play.addEventListener("click", toggle);
els.scrubber.addEventListener("input", () => step(Number(els.scrubber.value)));
els.speed.addEventListener("change", () => { if (timer) play(); });

document.addEventListener("keydown", (ev) => {
  if (!data || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const target = ev.target;
  if (target === els.scrubber || target === els.speed) return; // they step by themselves
  const keys = { ArrowLeft: () => step(index - 1), ArrowRight: () => step(index + 1), Home: () => step(0), End: () => step(data.steps.length - 1) };
  if (ev.key === " " && !(target instanceof HTMLButtonElement)) { ev.preventDefault(); toggle(); return; }
  if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
});

let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (!data || !renderer) return; // a resize before the board's renderer has loaded: the first step draws it
    if (wide.matches) els.board.style.removeProperty("height");
    try { renderer.render(els.board, data.steps[index].view, ctxFor(index, false)); } catch (err) { console.error(err); }
  }, 150);
});

// --- links: the verifier, the download, the GM console -----------------------------------------
function renderLinks() {
  const links = [];
  if (body.dataset.verifier) {
    links.push(h("a", { class: "r-link", href: body.dataset.verifier, download: "", dataset: { testid: "verifier-link" } }, "Check the dice yourself (standalone script)"));
  } else {
    // VERIFIER: the standalone dice verifier (issue 18 §1) is linked here once it is served from static/
    links.push(h("span", { class: "r-link r-link-missing", dataset: { testid: "verifier-link-missing" } }, "Dice verifier: not on this board yet"));
  }
  if (body.dataset.export) {
    links.push(h("a", { class: "r-link", href: body.dataset.export, dataset: { testid: "export-link" } }, "Download the battle (JSON)"));
  }
  if (body.dataset.report) {
    links.push(h("a", { class: "r-link", href: body.dataset.report, dataset: { testid: "report-link" } }, "The battle report"));
  }
  const dice = data && data.dice;
  if (dice && dice.commitment) {
    links.push(h("span", { class: "r-seal", dataset: { testid: "dice-seal" } },
      h("span", {}, "Dice sealed: SHA-256 "), h("code", {}, dice.commitment),
      dice.seed ? [h("span", {}, " · seed revealed: "), h("code", { dataset: { testid: "revealed-seed" } }, dice.seed)] : null,
      dice.mix ? [h("span", {}, " · players' mix: "), h("code", {}, dice.mix)] : null));
  }
  if (body.dataset.gm) links.push(h("a", { class: "r-link", href: body.dataset.gm, dataset: { testid: "gm-console-link" } }, "Back to the GM console"));
  if (isGm && data && !data.shareable) {
    links.push(h("span", { class: "r-note", dataset: { testid: "not-shared" } }, "Only you can open this replay: mark the battle shareable on the GM console to share it."));
  }
  replace(els.links, links);
}

load();
