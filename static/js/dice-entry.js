// Physical dice (issue 17 §2): when a roll is due from real dice, the roller's phone (or the GM
// console) shows what to roll and one big button per face; a d100 is two d10 steps (tens, then units).
// The server checks the faces and resolves; this page never decides anything. The GM also gets
// "Roll with the board's dice" (for an absent player) and a per-combatant switch to real dice.
//
// renderDiceEntry(battleRoot, view, ctx): draws into its own box just above the battle area.

import { h, handIcon, replace } from "./ui.js";

let progress = { key: "", faces: [], tens: null, sending: false };
let switchesOpen = false;

function styles(ctx) {
  if (document.getElementById("dice-entry-css")) return;
  const root = (document.body.dataset.static || "/static/");
  document.head.append(h("link", { id: "dice-entry-css", rel: "stylesheet", href: `${root}css/dice-entry.css` }));
}

function box(battleRoot) {
  let el = document.getElementById("dice-entry");
  if (!el) {
    el = h("section", { id: "dice-entry", class: "dice-entry", "aria-live": "polite", "aria-label": "Real dice", dataset: { testid: "dice-entry" } });
    const anchor = document.getElementById("turn") || battleRoot;
    anchor.before(el);
  }
  return el;
}

/** The faces a button row offers: low..high (a d100 is handled in two steps). */
function isD100(due) {
  return due.high - due.low === 99;
}

function send(ctx, payload) {
  progress.sending = true;
  return ctx.command("dice_enter", payload).then((ack) => {
    if (!ack || !ack.ok) {
      progress.sending = false; progress.faces = []; progress.tens = null;
      if (ack && ack.code === "stale" && ctx.conn && ctx.conn.sync) ctx.conn.sync(); // the battle moved on: look again
    }
    return ack;
  });
}

function faceButtons(due, ctx, redraw) {
  const take = (face) => {
    if (progress.sending) return;
    progress.faces = [...progress.faces, face];
    progress.tens = null;
    if (progress.faces.length >= due.count) send(ctx, { faces: progress.faces });
    redraw();
  };
  if (isD100(due)) {
    if (progress.tens === null) {
      return h("div", { class: "dice-entry-step" },
        h("p", { class: "dice-entry-step-name" }, "Step 1 of 2: the tens die"),
        h("div", { class: "dice-entry-faces tens", role: "group", "aria-label": "Tens die" },
          [...Array(10).keys()].map((t) => h("button", {
            type: "button", class: "dice-face", disabled: progress.sending, dataset: { testid: "dice-tens", face: t },
            "aria-label": `tens ${t}0`, onclick: () => { progress.tens = t; redraw(); },
          }, `${t}0`))));
    }
    const tens = progress.tens;
    return h("div", { class: "dice-entry-step" },
      h("p", { class: "dice-entry-step-name" }, `Step 2 of 2: the units die (tens: ${tens}0)`),
      h("div", { class: "dice-entry-faces units", role: "group", "aria-label": "Units die" },
        [...Array(10).keys()].map((u) => {
          let value = tens * 10 + u;
          if (due.low === 1 && value === 0) value = 100; // 00 and 0 read 100 on a 1-100 roll
          return h("button", {
            type: "button", class: "dice-face", disabled: progress.sending, dataset: { testid: "dice-units", face: u },
            "aria-label": `units ${u}: ${value}`, onclick: () => take(value),
          }, String(u));
        })),
      h("button", { type: "button", class: "dice-entry-back", onclick: () => { progress.tens = null; redraw(); } }, "← tens again"));
  }
  const faces = [];
  for (let f = due.low; f <= due.high; f += 1) faces.push(f);
  return h("div", { class: `dice-entry-faces n${Math.min(faces.length, 12)}`, role: "group", "aria-label": `Faces of the ${due.die}` },
    faces.map((f) => h("button", {
      type: "button", class: "dice-face", disabled: progress.sending, dataset: { testid: "dice-face", face: f },
      "aria-label": `${f}`, onclick: () => take(f),
    }, String(f))));
}

function dueCard(due, ctx, redraw) {
  const count = due.count;
  const got = progress.faces;
  return h("div", { class: "dice-entry-card", dataset: { testid: "dice-due" } },
    h("p", { class: "dice-entry-kicker" }, handIcon(), " Real dice"),
    h("p", { class: "dice-entry-prompt", dataset: { testid: "dice-prompt" } }, due.prompt),
    due.modifier ? h("p", { class: "dice-entry-note" }, `The board adds ${due.modifier > 0 ? "+" : ""}${due.modifier} itself: type only the dice.`) : null,
    count > 1 ? h("p", { class: "dice-entry-count", dataset: { testid: "dice-progress" } },
      `Die ${Math.min(got.length + 1, count)} of ${count}`, got.length ? `: ${got.join(", ")}` : "",
      got.length && !progress.sending ? h("button", { type: "button", class: "dice-entry-back", onclick: () => { progress.faces = []; progress.tens = null; redraw(); } }, "start again") : null) : null,
    faceButtons(due, ctx, redraw),
    ctx.role === "gm" ? h("button", {
      type: "button", class: "dice-entry-board", disabled: progress.sending, dataset: { testid: "dice-board" },
      onclick: () => send(ctx, { board: true }),
    }, due.players ? `Roll with the board's dice (${due.roller_name} is away)` : "Roll with the board's dice") : null);
}

function waitingLine(due) {
  return h("p", { class: "dice-entry-waiting", dataset: { testid: "dice-waiting" } },
    handIcon(), due.yours ? " Yours is in. Waiting for " : " Waiting for ", h("strong", {}, due.roller_name),
    ` to roll ${due.notation} with real dice…`);
}

function switches(physical, ctx) {
  const lineup = (ctx.table && ctx.table.lineup) || [];
  if (!lineup.length) return null;
  const on = new Set((physical && physical.physical) || []);
  const mode = (physical && physical.mode) || "board";
  const words = { board: "the board rolls everything", players: "players roll their own dice", all: "everyone rolls real dice" };
  const details = h("details", { class: "dice-entry-switches", open: switchesOpen, dataset: { testid: "dice-switches" } },
    h("summary", {}, `Real dice (${on.size} of ${lineup.length}) — ${words[mode] || mode}`),
    h("p", { class: "muted" }, "Switch one combatant to real dice (or back to the board's) at any time."),
    h("ul", {}, lineup.map((c) => h("li", {},
      h("button", {
        type: "button", class: "dice-switch", "aria-pressed": String(on.has(c.id)), dataset: { testid: `dice-switch-${c.id}` },
        onclick: () => ctx.command("dice_physical", { combatant: c.id, physical: !on.has(c.id) }),
      }, `${c.name}: ${on.has(c.id) ? "real dice" : "board's dice"}`)))));
  details.addEventListener("toggle", () => { switchesOpen = details.open; }); // stays open across redraws
  return details;
}

export function renderDiceEntry(battleRoot, view, ctx) {
  styles(ctx);
  const el = box(battleRoot);
  const physical = view && view.physical;
  const due = physical && physical.due;
  const running = view && view.status !== "ended";
  const key = due ? `${ctx.battleId}:${ctx.version}:${due.roller}:${due.notation}` : "";
  if (key !== progress.key) progress = { key, faces: [], tens: null, sending: false };
  const redraw = () => renderDiceEntry(battleRoot, view, ctx);
  const parts = [];
  if (due && running) parts.push(due.mine ? dueCard(due, ctx, redraw) : waitingLine(due));
  if (ctx.role === "gm" && running) parts.push(switches(physical, ctx));
  el.hidden = !parts.some(Boolean);
  el.classList.toggle("is-due", !!(due && due.mine && running));
  replace(el, parts);
}
