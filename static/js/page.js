// The page shell for the GM screen, the player's phone and the spectator screen.
// It owns the connection, the log, the dice tray and the help; the rule system's module draws the battle.

import { connect } from "./connection.js";
import * as ui from "./ui.js";
import * as grid from "./grid.js";
import { renderControls, renderSetup, renderNotes } from "./setup.js";

const { h, replace } = ui;
const body = document.body;
const role = body.dataset.role;
const systemId = body.dataset.system;
const staticRoot = body.dataset.static || "/static/";

const els = {
  battle: document.getElementById("battle"),
  log: document.getElementById("log"),
  dice: document.getElementById("dice"),
  status: document.getElementById("connection"),
  notice: document.getElementById("notice"),
  who: document.getElementById("who"),
  systemName: document.getElementById("system-name"),
  help: document.getElementById("help"),
  controls: document.getElementById("controls"),
  setup: document.getElementById("setup"),
  notes: document.getElementById("notes"),
};

let systemModule = null;
let table = null;
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
  body.classList.toggle("offline", stateName !== "live");
}

async function loadSystem() {
  if (systemModule) return systemModule;
  try {
    systemModule = await import(`${staticRoot}js/systems/${systemId}.js`);
  } catch (err) {
    systemModule = { render: fallbackRender };
  }
  return systemModule;
}

function fallbackRender(root, view) {
  replace(root, h("pre", { class: "raw-view" }, JSON.stringify(view, null, 2)));
}

const conn = connect({
  table: body.dataset.table,
  token: body.dataset.token,
  onStatus: setStatus,
  onError: (text) => notice(text),
  onTable: (payload) => {
    table = payload;
    replace(els.systemName, payload.system.name);
    if (payload.seat) replace(els.who, `Player: ${payload.seat.name}`);
    renderHelp(payload.help || []);
    if (role === "gm") {
      renderSetup(els.setup, payload, ctxBase());
      renderNotes(els.notes, payload, ctxBase());
      renderControls(els.controls, payload, conn.state, ctxBase());
    }
  },
  onBattle: async (state, fresh) => {
    await loadSystem();
    renderBattle(state);
    renderLog(state.events);
    renderDice(state.events, fresh);
    if (role === "gm" && table) renderControls(els.controls, table, state, ctxBase());
  },
});

function ctxBase() {
  return {
    role,
    seat: table && table.seat ? table.seat.id : null,
    table,
    ui,
    grid,
    conn,
    notice,
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
  const ctx = { ...ctxBase(), events: state.events, version: state.v, battleId: state.battleId };
  try {
    systemModule.render(root, state.view, ctx);
  } catch (err) {
    console.error(err);
    fallbackRender(root, state.view);
  }
}

function renderLog(events) {
  const items = events.filter((e) => e.text).slice(-150).reverse();
  replace(els.log, items.map((e) => h("li", { class: `log-${(e.type || "").split(".")[0]}`, dataset: { type: e.type, v: e.v } }, e.text)));
}

function renderDice(events, fresh) {
  const lastV = events.length ? events[events.length - 1].v : 0;
  const recent = events.filter((e) => e.v === lastV && e.rolls && e.rolls.length);
  const freshVs = new Set((fresh || []).map((e) => e.v));
  if (!recent.length) {
    if (!els.dice.childElementCount) replace(els.dice, h("p", { class: "muted" }, "No dice rolled yet."));
    return;
  }
  const rolls = recent.flatMap((e) => e.rolls);
  replace(els.dice, ui.diceTray(rolls.slice(0, 24), { fresh: freshVs.has(lastV) }));
}

function renderHelp(sections) {
  if (!els.help) return;
  if (!sections.length) { els.help.hidden = true; return; }
  replace(els.help, h("details", {}, h("summary", {}, "How this system works"),
    sections.map((s) => h("section", {}, h("h3", {}, s.title), h("p", {}, s.text)))));
}
