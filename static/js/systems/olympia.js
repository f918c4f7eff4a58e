// Olympia board: each side as bands of rows (front row, back rows) holding the nobles' units with
// their troop counts, the structure each side fights from with its damage, a strength bar moving
// toward the side's break line, the GM's phase/round/battle buttons and the battle report.
// Before the battle the GM (or a noble's player) drags a unit to another row — or taps it and then
// taps a row on a phone — and the leader's player or the GM sets the break point.
// Everything shown comes from the server's view; what may be sent comes from view.legal.

import * as kit from "../kit.js"; // the shared front-end kit (token, die, health bar, turn strip, action button, panel)
import * as odds from "../odds.js"; // each side's chance to win, simulated by the server (issue 17)
import { count as fmt, setWords } from "../ui.js"; // fmt: 1234567 -> "1,234,567"

// Troop badges: a short mark and a colour family per kind (drawing only; the ratings live on the server).
const BADGES = {
  peasant: ["Pe", "levy"], postulant: ["Po", "levy"], worker: ["Wo", "levy"], sailor: ["Sa", "levy"],
  skirmisher: ["Sk", "foot"], soldier: ["So", "foot"], ninja: ["Ni", "foot"], pirate: ["Pi", "foot"],
  pikeman: ["Pk", "foot"], fanatic: ["Fa", "foot"], light_foot: ["LF", "foot"], heavy_foot: ["HF", "foot"],
  angel: ["An", "holy"], cavalier: ["Ca", "horse"], knight: ["Kn", "horse"], paladin: ["Pa", "horse"],
  light_crossbowman: ["LX", "shot"], heavy_crossbowman: ["HX", "shot"], archer: ["Ar", "shot"],
  horse_archer: ["HA", "shot"], elite_archer: ["EA", "shot"], catapult: ["Cp", "siege"], battering_ram: ["Rm", "siege"],
};
const STRUCTURE_MARKS = { castle: "Castle", tower: "Tower", galley: "Galley", roundship: "Ship", building: "Hall" };
const PHASES = { volley: "opening volley", special: "special attacks", missile: "missile attacks", melee: "melee" };

let picked = null; // the unit id tapped for a move (phones)
let previous = {}; // unit id -> {kind: count} of the last view drawn, to flash what fell
let previousVersion = null;
let previousStrength = {}; // side -> percentage of the strength bar last drawn, so it slides to the new one
let specialDraft = { preset: "dragon_fire", side: "A" };
let armiesOpen = {}; // a phone's fold of each army, as the player left it (side -> open; unset: open while one of the player's units in it can be moved)
let latest = null; // the newest {root, view, ctx}: a unit kept from an earlier draw redraws the newest view

// Troop counts that fall from what they were to what they are (the GM's console and the spectators'
// pages): in a few steps over about 0.6 s, all of them on one timer. Each written count lays the
// board out again; a mass battle has hundreds of counts, and written at every frame they kept a
// laptop busy for the whole fall (about 5 ms of layout per frame at 30 units a side).
const FALL_STEPS = 5;
const FALL_STEP_MS = 120;
const falling = new Map(); // count's element -> {from, to}
let fallTimer = null;
let fallStep = 0;
function startFalls(items) {
  for (const [span, { to }] of falling) setWords(span, fmt(to)); // a fall still under way ends at once
  falling.clear();
  // (a count drawn again since, with its new number at once, does not fall back up)
  for (const [span, from, to] of items) if (span.isConnected && span.textContent === fmt(from)) falling.set(span, { from, to });
  fallStep = 0;
  clearTimeout(fallTimer);
  fallTimer = falling.size ? setTimeout(stepFalls, FALL_STEP_MS) : null;
}
function stepFalls() {
  fallStep += 1;
  const k = fallStep / FALL_STEPS;
  for (const [span, { from, to }] of falling) setWords(span, fmt(Math.round(from + (to - from) * k)));
  if (fallStep < FALL_STEPS) fallTimer = setTimeout(stepFalls, FALL_STEP_MS);
  else { falling.clear(); fallTimer = null; }
}

function redraw() {
  if (latest) render(latest.root, latest.view, latest.ctx);
}

// A unit being dragged (its id), and whether an update came in meanwhile: the rows are not drawn
// again while a drag is under way (a row drawn afresh under the pointer took the drop with it, and
// an empty back row went away), and the update is drawn when the drag ends.
let dragging = null;
let dropped = false;
let heldBack = false;

export function render(root, view, ctx) {
  // health-like bars from the shared kit (numbers as text, never colour alone)
  const kitBar = (current, max, text) => kit.healthBar(current, max, { label: text, text });
  const { h, replace, keyed, part, always, keptBoard } = ctx.ui;
  latest = { root, view, ctx };
  if (dragging) { heldBack = true; return; }
  const legal = view.legal || [];
  const moves = Object.fromEntries(legal.filter((t) => t.type === "set_behind").map((t) => [t.combatant, t]));
  const breakForms = Object.fromEntries(legal.filter((t) => t.type === "set_break_point").map((t) => [t.side, t]));
  const structureForms = Object.fromEntries(legal.filter((t) => t.type === "set_structure").map((t) => [t.side, t]));
  const steps = legal.filter((t) => t.type === "step");
  const begin = legal.find((t) => t.type === "begin");
  const addSpecial = legal.find((t) => t.type === "add_special");
  const removals = Object.fromEntries(legal.filter((t) => t.type === "remove_special").map((t) => [t.special, t]));
  if (picked && !moves[picked]) picked = null;

  // what fell since the last view (a new version only): unit id -> {kind: lost}
  const fallen = {};
  const current = {};
  for (const side of Object.values(view.sides)) {
    for (const row of side.rows) {
      for (const u of row.units) {
        current[u.id] = Object.fromEntries(u.troops.map((t) => [t.kind, t.count]));
        current[u.id].noble = u.state === "fighting" ? 1 : 0;
        const before = previous[u.id];
        if (before && ctx.version !== previousVersion) {
          const lost = {};
          for (const [k, n] of Object.entries(before)) if ((current[u.id][k] || 0) < n) lost[k] = n - (current[u.id][k] || 0);
          if (Object.keys(lost).length) fallen[u.id] = lost;
        }
      }
    }
  }
  const freshVersion = ctx.version !== previousVersion;
  previous = current;
  previousVersion = ctx.version;
  const afterDraw = []; // animations started once the new DOM is in place
  const falls = []; // [count's element, from, to]: counts that fall (startFalls)
  const still = typeof window !== "undefined" && window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  // The board is kept between draws and only what changed is drawn again (ui.keyed): each side, row
  // and unit is keyed by everything it shows, so a phase redraws the units that fought, not the army.
  const movesKey = JSON.stringify([moves, picked]);
  const [top, newBoard] = keptBoard(root, `${ctx.role}|${ctx.battleId}`);
  top.className = `ol ol-role-${ctx.role}`;
  Object.assign(top.dataset, { status: view.status, round: view.round, phase: view.next_phase || "" });
  keyed(top, [
    part("banner", [view.status, view.round, view.next_phase, view.outcome, view.options, ctx.role, view.status === "setup" ? deploymentHint() : null], banner),
    part("controls", [begin, steps], controls),
    always(oddsPanel()),
    part("orders", [movesKey, breakForms, ctx.role === "player" ? Object.values(view.sides).map((sd) => [sd.break_point, sd.rows.map((r) => [r.behind, r.units.filter((u) => u.mine)])]) : null], playerOrders),
    { key: "field", build: () => fillField(h("div", { class: "ol-field" })), update: fillField },
    part("specials", [view.specials, Boolean(addSpecial), Object.keys(removals), specialDraft], specialsPanel),
    { key: "report", build: () => fillReport(h("section", { class: "ol-card ol-report", dataset: { testid: "report" } }, h("h2", {}, "Battle report"), h("ol", { class: "ol-report-list", reversed: true }))), update: fillReport },
  ]);
  // the page moves the parts due now to the top of the screen: its observer sees a new board, a
  // board redrawn in place says so
  if (!newBoard && ctx.regionsChanged) ctx.regionsChanged();

  function fillField(el) {
    return keyed(el, ["A", "B"].filter((k) => view.sides[k]).map((k) => ({
      key: `side-${k}`,
      build: () => fillSide(k, h("section", { dataset: { testid: `side-${k}` } })),
      update: (panel) => fillSide(k, panel),
    })));
  }
  if (falls.length) afterDraw.push(() => startFalls(falls));
  if (afterDraw.length && !still) requestAnimationFrame(() => requestAnimationFrame(() => afterDraw.forEach((f) => f())));

  // --- the banner and the GM's buttons ---------------------------------------------------------
  function banner() {
    if (view.status === "ended") {
      const o = view.outcome || {};
      return h("div", { class: `ol-banner ol-ended ol-result-${o.result || "over"}`, dataset: { testid: "outcome" } },
        h("strong", {}, o.text || o.reason || "The battle is over."));
    }
    if (view.status === "setup") {
      return h("div", { class: "ol-banner", dataset: { testid: "stage" } },
        h("strong", { class: "ol-stage" }, "Deployment"),
        h("span", { class: "muted" }, deploymentHint()));
    }
    const phase = view.next_phase ? PHASES[view.next_phase] : "";
    return h("div", { class: "ol-banner", dataset: { testid: "stage" } },
      h("strong", { class: "ol-stage" }, view.round ? `Round ${view.round}` : "Before round 1"),
      phase ? h("span", {}, `next: ${phase}`) : null,
      terrainLine());
  }

  // what the viewer may do before the battle: a player arranges their own units (and sets their
  // side's break point if they lead it), the GM every unit and both break points
  function deploymentHint() {
    if (ctx.role === "spectator") return "The armies are taking their places.";
    if (ctx.role === "player") {
      const mine = Object.keys(moves).length > 0;
      const leads = Object.keys(breakForms).length > 0;
      if (!mine && !leads) return "The GM arranges the armies and begins the battle.";
      const yours = [mine ? "choose your units' rows (or tap a unit, then a row)" : null, leads ? "set your side's break point" : null].filter(Boolean).join("; ");
      return `${yours[0].toUpperCase()}${yours.slice(1)}; the GM begins the battle.`;
    }
    return "Drag a unit (or tap it, then tap a row) to change its row; set each side's break point; then begin the battle.";
  }

  function terrainLine() {
    const o = view.options || {};
    const bits = [];
    if (o.terrain && o.terrain !== "plain") bits.push(o.terrain === "sea" ? "at sea" : o.terrain);
    if (o.weather && o.weather !== "clear") bits.push(o.weather);
    if (o.terrain_defence) bits.push("terrain defence");
    if (o.opening_volley) bits.push("opening volley");
    if (o.prisoners) bits.push("prisoners");
    return bits.length ? h("span", { class: "ol-terrain muted" }, bits.join(" · ")) : null;
  }

  function controls() {
    if (!begin && !steps.length) return null;
    const ids = { phase: "step-phase", round: "step-round", battle: "step-battle" };
    return h("div", { class: "ol-controls button-row", dataset: { region: "due" } },
      begin ? h("button", { type: "button", class: "big primary", dataset: { testid: "begin-battle", action: "begin" }, onclick: () => ctx.send({ type: "begin" }) }, begin.label) : null,
      steps.map((t) => h("button", {
        type: "button",
        class: `big ${t.by === "phase" ? "primary" : ""}`,
        dataset: { testid: ids[t.by], action: "step" },
        onclick: () => ctx.send({ type: "step", by: t.by }),
      }, t.label)));
  }

  // --- the GM's odds: each side's chance to win and the expected losses, from the server's simulation
  function oddsPanel() {
    if (ctx.role !== "gm" || view.status === "ended") return null;
    const body = h("div", { class: "ol-odds-body" }, h("p", { class: "muted" }, "Simulating the battle from here…"));
    const section = h("section", { class: "ol-card ol-odds", dataset: { testid: "ol-odds", state: "asking" }, "aria-live": "polite" },
      h("h2", {}, "Chance to win"), body);
    odds.withOdds(ctx, {}, (answer) => {
      const wins = (answer.outcomes || []).filter((o) => o.key.startsWith("win_") || o.key === "tie");
      const losses = (answer.expected || []).filter((o) => o.key.startsWith("casualties_"));
      const range = (o, asPct) => (o.interval ? ` (${asPct ? o.interval.map((x) => `${Math.round(x * 100)}`).join("–") + " %" : o.interval.map((x) => x.toFixed(1)).join("–")})` : "");
      replace(body,
        h("ul", { class: "ol-odds-list" }, wins.map((o) => h("li", { dataset: { key: o.key } },
          h("span", {}, o.label, ": "), h("strong", {}, odds.pct(o.p)), h("span", { class: "muted" }, range(o, true))))),
        losses.length ? h("ul", { class: "ol-odds-list" }, losses.map((o) => h("li", { dataset: { key: o.key } },
          h("span", {}, o.label, ": "), h("strong", {}, o.value.toFixed(1)), h("span", { class: "muted" }, range(o, false))))) : null,
        h("p", { class: "muted", dataset: { testid: "ol-odds-battles" } }, `${answer.battles} simulated battles from the current state; 95 % intervals in brackets.`),
        odds.disclosure(answer, { summary: "Every figure", id: "olympia" }));
      section.dataset.state = "ready";
    }, () => section.isConnected);
    return section;
  }

  // --- the player's orders at the top of the phone: the rows of their own units, their side's break point
  function playerOrders() {
    if (ctx.role !== "player") return null;
    const units = [];
    for (const side of Object.values(view.sides)) for (const row of side.rows) for (const u of row.units) if (u.mine) units.push(u);
    const forms = Object.keys(breakForms).map((k) => [k, view.sides[k]]).filter(([, side]) => side);
    if (!units.length && !forms.length) return null;
    const rowName = (b) => (b === 0 ? "Front" : `Back ${b}`);
    const movable = units.filter((u) => moves[u.id]);
    return h("section", { class: "ol-card ol-orders", dataset: { testid: "ol-orders", region: "due", yourTurn: String(movable.length > 0 || forms.length > 0) } },
      movable.length ? h("h2", {}, "Your units' rows") : null,
      movable.map((u) => {
        const key = sideOf(u.id);
        const side = view.sides[key];
        const used = side.rows.map((r) => r.behind);
        const deepest = Math.min(9, Math.max(0, ...used) + 1);
        const here = moves[u.id].behind;
        const choices = [];
        for (let b = 0; b <= deepest; b += 1) choices.push(b);
        return h("div", { class: "ol-order" },
          h("div", {}, h("strong", {}, u.name), h("span", { class: "muted" }, ` · ${fmt(u.men)} men · side ${key}`)),
          h("div", { class: "button-row ol-row-buttons", role: "group", "aria-label": `Row of ${u.name}` }, choices.map((b) => h("button", {
            type: "button",
            class: `ol-row-choice${b === here ? " selected" : ""}`,
            "aria-pressed": String(b === here),
            dataset: { testid: `row-choice-${u.id}-${b}`, action: "set_behind" },
            onclick: () => moveTo(u.id, b),
          }, rowName(b)))));
      }),
      forms.map(([k, side]) => breakPoint(k, side)),
      !movable.length && !forms.length && units.length ? h("ul", { class: "ol-mine-list", dataset: { testid: "ol-mine" } }, units.map((u) => h("li", {},
        h("strong", {}, u.name), u.men > 0 ? ` · ${fmt(u.men)} men · side ${sideOf(u.id)}${u.state !== "fighting" ? ` · ${u.state}` : ""}`
          : ` · side ${sideOf(u.id)} · ${aloneText(u, rowLabelOf(u))}`))) : null,
      !movable.length && !forms.length ? h("p", { class: "muted" }, units.length
        ? "The GM steps the battle; the table display shows both armies."
        : "") : null,
    );
  }

  // --- one side ---------------------------------------------------------------------------------
  function fillSide(key, panel) {
    const side = view.sides[key];
    const band = (behind, units, label) => rowBand(key, behind, units, label);
    // a noble whose men are all gone leaves his row, as on the TV (he stood in the front row as
    // "★ 0 men"): he is named under the rows, fighting on alone or out of the battle (one who may
    // still be moved before the battle stays in his row)
    const withMen = (u) => u.men > 0 || Boolean(moves[u.id]);
    const kept = side.rows.map((r) => ({ ...r, units: r.units.filter(withMen) })).filter((r) => r.units.length);
    const rows = kept.map((r) => band(r.behind, r.units, r.label));
    const blocks = kept.reduce((n, r) => n + r.units.length, 0);
    const alone = side.rows.flatMap((r) => r.units.filter((u) => !withMen(u)).map((u) => [u, r.label]));
    if (Object.values(moves).some((t) => sideOf(t.combatant) === key)) {
      // empty rows a unit may be moved into (the next back row, and the front row if it is empty)
      // every empty row up to one past the deepest, so any row order can be built
      const used = new Set(side.rows.map((r) => r.behind));
      const deepest = Math.min(9, Math.max(0, ...used) + 1);
      for (let b = 0; b <= deepest; b += 1) {
        if (!used.has(b)) rows.splice(b, 0, band(b, [], b === 0 ? "front row" : `back row ${b}`));
      }
    }
    panel.className = `ol-side side-${key.toLowerCase()}${side.broken ? " ol-broken" : ""}`;
    return keyed(panel, [
      part("head", [side.name, side.broken], () => h("header", { class: "ol-side-head" },
        h("h2", { class: "ol-side-name" }, sentence(side.name)),
        side.broken ? h("span", { class: "ol-tag ol-tag-broken" }, "broken") : null)),
      // (kept between draws: a phase rewrites its numbers and slides its fill, nothing is rebuilt)
      { key: "strength", build: () => strength(key, side, null), update: (el) => strength(key, side, el) },
      ctx.role === "player" ? null : part("break", [breakForms[key], side.break_point], () => breakPoint(key, side)),
      part("structure", [side.structure, structureForms[key]], () => structure(key, side)),
      ctx.role === "player" ? (blocks ? armyFold(key, side, rows, blocks) : null)
        : { key: "rows", build: () => keyed(h("div", { class: "ol-rows" }), rows), update: (el) => keyed(el, rows) },
      part("alone", alone.map(([u, where]) => [u.id, u.name, u.leader, u.state, u.wound, u.mine, where]), () => aloneList(key, alone)),
    ]);
  }

  function aloneText(u, where) {
    const fate = u.state === "fighting" ? `fights on alone in the ${where}` : u.wound ? `${u.state} (${u.wound})` : u.state;
    return `no men left, ${fate}`;
  }

  function aloneList(key, alone) {
    if (!alone.length) return null;
    return h("ul", { class: "ol-alone", dataset: { testid: `alone-${key}` } }, alone.map(([u, where]) => h("li", {
      class: `ol-alone-one${u.mine ? " ol-mine" : ""}`, dataset: { testid: `alone-${u.id}` },
    },
    h("span", { class: `ol-badge ol-badge-noble${u.leader ? " ol-badge-leader" : ""}`, "aria-hidden": "true" }, u.leader ? "★" : "N"),
    h("strong", {}, u.name), u.leader ? h("span", { class: "ol-tag ol-tag-leader" }, "leader") : null,
    h("span", { class: "ol-alone-fate" }, aloneText(u, where)))));
  }

  // On a phone the armies fold away (the TV shows them; the phone keeps the player's own numbers and
  // the strength bars on its first screen): a folded army is not drawn at all, so a phase costs the
  // phone almost nothing. The army holding a unit the player may move now is open (to arrange its
  // rows before the battle); the other one stays folded, a tap away.
  function armyFold(key, side, rows, count) {
    const open = armiesOpen[key] ?? Object.values(moves).some((t) => sideOf(t.combatant) === key);
    const fill = (fold) => {
      if (fold.open !== open) fold.open = open;
      setText(fold.firstElementChild, `${open ? "Hide" : "Show"} the ${count} ${count === 1 ? "unit" : "units"} of ${side.name}`);
      if (open) keyed(fold.lastElementChild, rows);
      else fold.lastElementChild.replaceChildren();
      return fold;
    };
    return {
      key: "army",
      build: () => fill(h("details", {
        class: "ol-army",
        dataset: { testid: `army-${key}` },
        ontoggle: (ev) => { if (ev.currentTarget.open !== open) { armiesOpen[key] = ev.currentTarget.open; redraw(); } },
      }, h("summary", {}), h("div", { class: "ol-rows" }))),
      update: fill,
    };
  }

  function rowLabelOf(u) {
    for (const side of Object.values(view.sides)) for (const r of side.rows) if (r.units.some((x) => x.id === u.id)) return r.label;
    return "front row";
  }

  function sideOf(cid) {
    for (const [k, side] of Object.entries(view.sides)) {
      if (side.rows.some((r) => r.units.some((u) => u.id === cid))) return k;
    }
    return null;
  }

  function strength(key, side, box) {
    const start = side.start_total || 0;
    const pct = start > 0 ? Math.max(0, Math.min(100, (100 * side.total) / start)) : 0;
    const line = start > 0 ? Math.max(0, Math.min(100, (100 * side.threshold) / start)) : 0;
    const near = pct - line < 10;
    const from = freshVersion && previousStrength[key] !== undefined && !still ? previousStrength[key] : pct;
    previousStrength[key] = pct;
    if (!box) {
      box = h("div", { class: "ol-strength-box" },
        h("div", { class: "ol-strength", role: "meter", "aria-label": `Strength of side ${key}`, dataset: { testid: `strength-${key}` } },
          // scaled, not resized: the slide runs on the compositor without a layout on every frame
          h("span", { class: "ol-strength-fill" }), h("span", { class: "ol-break-line" })),
        h("div", { class: "ol-strength-text" }, h("strong", {}), h("span", {})));
      box.__shown = {};
    }
    const shown = box.__shown;
    const [meter, words] = box.children;
    const [fill, breakLine] = meter.children;
    const put = (name, value, write) => { if (shown[name] !== value) { shown[name] = value; write(value); } };
    put("near", near, (v) => meter.classList.toggle("ol-near", v));
    put("now", side.total, (v) => { meter.setAttribute("aria-valuenow", v); meter.dataset.total = v; });
    put("max", start, (v) => meter.setAttribute("aria-valuemax", v));
    put("threshold", side.threshold, (v) => { meter.dataset.threshold = v; breakLine.title = `breaks at ${fmt(v)}`; });
    put("line", line, (v) => { breakLine.style.left = `${v}%`; });
    if (from !== pct) {
      fill.style.transform = `scaleX(${from / 100})`;
      shown.fill = pct;
      afterDraw.push(() => { fill.style.transform = `scaleX(${pct / 100})`; });
    } else put("fill", pct, (v) => { fill.style.transform = `scaleX(${v / 100})`; });
    put("total", fmt(side.total), (v) => { words.firstElementChild.textContent = v; });
    put("rest", ` of ${fmt(start)} — breaks at ${fmt(side.threshold)} (${side.break_point}%)`, (v) => { words.lastElementChild.textContent = v; });
    return box;
  }

  function breakPoint(key, side) {
    const form = breakForms[key];
    if (!form) return null;
    const input = h("input", { type: "number", min: 0, max: 100, step: 1, value: side.break_point, inputmode: "numeric", "aria-label": `Break point of side ${key}`, dataset: { testid: `break-point-${key}` } });
    const send = () => {
      const value = Number(input.value);
      const decl = { type: "set_break_point", break_point: value };
      if (form.combatant) decl.combatant = form.combatant; else decl.side = key;
      ctx.send(decl);
    };
    return h("div", { class: "ol-break-form" },
      h("label", {}, "Break point % ", input),
      h("button", { type: "button", dataset: { testid: `set-break-point-${key}`, action: "set_break_point" }, onclick: send }, "Set"));
  }

  function structure(key, side) {
    const s = side.structure;
    const form = structureForms[key];
    const box = [];
    if (s) {
      const left = Math.max(0, s.destroyed_at - s.damage);
      box.push(h("div", { class: `ol-structure${s.destroyed ? " ol-destroyed" : ""}`, dataset: { testid: `structure-${key}`, damage: s.damage } },
        h("span", { class: `ol-structure-icon ol-structure-${s.kind}`, "aria-hidden": "true" }, STRUCTURE_MARKS[s.kind] || "Hall"),
        h("span", { class: "ol-structure-name" }, s.label, s.destroyed ? " — destroyed" : ""),
        kitBar(left, s.destroyed_at, `damage ${s.damage} of ${s.destroyed_at}`),
        h("small", { class: "muted" }, `defence +${s.defence} for the first ${fmt(s.shelters)} men`)));
    }
    if (form) {
      const kind = h("select", { "aria-label": `Structure of side ${key}`, dataset: { testid: `structure-kind-${key}` } },
        form.fields[0].choices.map(([v, label]) => h("option", { value: v, selected: (s ? s.kind : "none") === v }, label)));
      const damage = h("input", { type: "number", min: 0, max: 99, value: s ? s.damage : 0, "aria-label": "Damage", inputmode: "numeric" });
      box.push(h("div", { class: "ol-structure-form" }, kind, damage,
        h("button", { type: "button", dataset: { testid: `place-structure-${key}` }, onclick: () => ctx.send({ type: "set_structure", side: key, structure: kind.value, damage: Number(damage.value) }) }, "Place")));
    }
    return box.length ? h("div", { class: "ol-structure-box" }, box) : null;
  }

  // --- rows and units ------------------------------------------------------------------------------
  // a row as a keyed item: the band is kept while its label and the moves it accepts are the same,
  // and its units are keyed each
  function rowBand(key, behind, units, label) {
    const target = picked && sideOf(picked) === key && moves[picked];
    const accepts = Object.values(moves).some((t) => sideOf(t.combatant) === key);
    const fill = (band) => {
      keyed(band.lastElementChild, units.length ? units.map((u) => ({
        key: unitShape(u),
        build: () => unitBlock(u),
        update: (el) => fillUnit(el, u),
      })) : [always(h("span", { class: "muted ol-empty" }, "empty"))]);
      return band;
    };
    return { key: `${key}-${behind}|${label}|${movesKey}`, build: () => fill(bandOf(key, behind, label, target, accepts)), update: fill };
  }

  // every row takes a dragged unit (a row of the other side too): a drop that cannot be made says why
  function bandOf(key, behind, label, target, accepts) {
    const band = h("div", {
      class: `ol-row${behind === 0 ? " ol-front" : ""}${target ? " ol-drop-target" : ""}${accepts ? " ol-accepts" : ""}`,
      dataset: { testid: `row-${key}-${behind}`, behind },
      ondragover: (ev) => { ev.preventDefault(); band.classList.add("ol-drag-over"); },
      ondragleave: (ev) => { if (!band.contains(ev.relatedTarget)) band.classList.remove("ol-drag-over"); },
      ondrop: (ev) => {
        ev.preventDefault();
        dropped = true;
        band.classList.remove("ol-drag-over");
        const cid = ev.dataTransfer.getData("text/plain");
        const why = refusal(cid, key, behind, label);
        if (why) ctx.notice(why);
        else moveTo(cid, behind);
      },
    },
    h("div", { class: "ol-row-label" }, label[0].toUpperCase() + label.slice(1),
      target && moves[picked].behind !== behind
        ? h("button", { type: "button", class: "ol-move-here", dataset: { testid: `move-here-${key}-${behind}` }, onclick: () => moveTo(picked, behind) }, "Move here")
        : null),
    h("div", { class: "ol-units" }));
    return band;
  }

  // why a unit cannot be dropped on this row, or null when it can
  function refusal(cid, key, behind, label) {
    const unit = unitOf(cid);
    const name = unit ? unit.name : "That unit";
    if (!moves[cid]) return `${name} cannot be moved now: units change rows before the battle begins, each by its own player or the GM.`;
    if (sideOf(cid) !== key) return `${name} fights for ${view.sides[sideOf(cid)].name}: drop it on one of that side's rows.`;
    if (moves[cid].behind === behind) return `${name} is already in the ${label}.`;
    return null;
  }

  function unitOf(cid) {
    for (const side of Object.values(view.sides)) for (const row of side.rows) for (const u of row.units) if (u.id === cid) return u;
    return null;
  }

  function moveTo(cid, behind) {
    picked = null;
    if (moves[cid] && moves[cid].behind !== behind) ctx.send({ type: "set_behind", combatant: cid, behind });
    else redraw();
  }

  // A unit is built once and then kept: its key (in rowBand) holds what shapes it (name, state, troop
  // kinds, whether it can be moved or is picked); the numbers that change every phase are written
  // into it in place by fillUnit, so a phase costs a few text changes, not a new army.
  function unitShape(u) {
    return `${u.id}|${u.name}|${u.leader}|${u.state}|${u.wound}|${u.mine}|${u.troops.map((t) => `${t.kind}:${t.label}`).join(",")}|${movesKey}`;
  }

  function unitBlock(u) {
    const movable = Boolean(moves[u.id]);
    const out = u.state !== "fighting";
    const counts = {};
    const block = h("div", {
      class: `ol-unit${u.mine ? " ol-mine" : ""}${out ? ` ol-out ol-${u.state}` : ""}${picked === u.id ? " ol-picked" : ""}${movable ? " ol-movable" : ""}`,
      dataset: { testid: `unit-${u.id}` },
      draggable: movable ? "true" : null,
      role: movable ? "button" : null,
      tabindex: movable ? 0 : null,
      "aria-pressed": movable ? String(picked === u.id) : null,
      ondragstart: movable ? (ev) => {
        ev.dataTransfer.setData("text/plain", u.id);
        ev.dataTransfer.effectAllowed = "move";
        dragging = u.id;
        dropped = false;
        root.classList.add("ol-dragging");
      } : null,
      ondragend: movable ? () => {
        const missed = !dropped;
        dragging = null;
        root.classList.remove("ol-dragging");
        if (missed) ctx.notice(`Drop ${u.name} on one of its side's rows to move it there.`);
        if (heldBack) { heldBack = false; redraw(); }
      } : null,
      onclick: movable ? () => { picked = picked === u.id ? null : u.id; redraw(); } : null,
      onkeydown: movable ? (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); picked = picked === u.id ? null : u.id; redraw(); } } : null,
    },
    h("div", { class: "ol-unit-head" },
      h("span", { class: `ol-badge ol-badge-noble${u.leader ? " ol-badge-leader" : ""}`, "aria-hidden": "true" }, u.leader ? "★" : "N"),
      h("strong", { class: "ol-unit-name" }, u.name),
      u.leader ? h("span", { class: "ol-tag ol-tag-leader" }, "leader") : null,
      out ? h("span", { class: `ol-tag ol-tag-${u.state}` }, u.wound ? `${u.state} (${u.wound})` : u.state) : null),
    h("div", { class: "ol-unit-sub muted" }),
    h("ul", { class: "ol-troops" }, u.troops.map((t) => {
      const count = h("span", { class: "ol-count" });
      const li = h("li", { class: "ol-troop", dataset: { testid: `troop-${u.id}-${t.kind}` }, title: t.label },
        h("span", { class: `ol-badge ol-badge-${(BADGES[t.kind] || ["", "levy"])[1]}`, "aria-hidden": "true" }, (BADGES[t.kind] || [t.kind.slice(0, 2)])[0]),
        count,
        h("span", { class: "ol-kind" }, t.label));
      counts[t.kind] = { li, count, fell: null };
      return li;
    })));
    block.__parts = { sub: block.children[1], head: block.firstElementChild, counts, fell: null, flash: null };
    return fillUnit(block, u);
  }

  function fillUnit(block, u) {
    const lost = fallen[u.id] || {};
    const parts = block.__parts;
    const men = String(u.men);
    if (block.dataset.men !== men) block.dataset.men = men;
    setText(parts.sub, `${fmt(u.men)} men · health ${u.health}`);
    const hit = Object.keys(lost).length > 0;
    block.classList.toggle("ol-hit", hit);
    if (parts.flash) { parts.flash.remove(); parts.flash = null; }
    if (hit) {
      // a new flash element: its fade starts afresh on every loss
      parts.flash = h("span", { class: "ol-flash", "aria-hidden": "true" });
      block.append(parts.flash);
    }
    if (lost.noble && !parts.fell) parts.fell = parts.head.appendChild(h("span", { class: "ol-fell" }, "✖"));
    else if (!lost.noble && parts.fell) { parts.fell.remove(); parts.fell = null; }
    for (const t of u.troops) {
      const c = parts.counts[t.kind];
      if (!c) continue;
      const count = String(t.count);
      if (c.li.dataset.count !== count) c.li.dataset.count = count;
      c.li.classList.toggle("ol-gone", t.count === 0);
      setCount(c.count, t.count, lost[t.kind]);
      const fell = lost[t.kind] ? `−${fmt(lost[t.kind])}` : null;
      if (fell && !c.fell) c.fell = c.li.appendChild(h("span", { class: "ol-fell" }, fell));
      else if (fell) setText(c.fell, fell);
      else if (c.fell) { c.fell.remove(); c.fell = null; }
    }
    return block;
  }

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function setCount(span, count, lost) {
    falling.delete(span); // (a fall from an earlier phase would write over it)
    if (!lost || ctx.role === "player" || still) {
      setText(span, fmt(count)); // a phone shows the new count at once (the −N beside it says what fell)
      return;
    }
    // the count falls from what it was to what it is
    setText(span, fmt(count + lost));
    falls.push([span, count + lost, count]);
  }

  // --- special attacks and the report --------------------------------------------------------------
  function specialsPanel() {
    const list = view.specials || [];
    if (!list.length && !addSpecial) return null;
    const items = list.map((s) => h("li", { class: "ol-special", dataset: { testid: `special-${s.id}` } },
      h("strong", {}, s.name),
      ` for side ${s.side}: ${fmt(s.attacks)} attacks at ${s.rating}, ${s.reach === "any" ? "any man" : "front row"}, `,
      s.rounds ? `${s.used} of ${s.rounds} rounds used` : "every round",
      removals[s.id] ? h("button", { type: "button", class: "ol-small", onclick: () => ctx.send({ type: "remove_special", special: s.id }) }, "Remove") : null));
    let form = null;
    if (addSpecial) {
      const preset = h("select", {
        "aria-label": "Special attack",
        dataset: { testid: "special-preset" },
        onchange: (ev) => { specialDraft.preset = ev.target.value; redraw(); },
      },
      (view.special_library || []).map((p) => h("option", { value: p.key, selected: p.key === specialDraft.preset }, `${p.name} (${p.attacks}×${p.rating}, ${p.reach === "any" ? "any man" : "front row"})`)),
      h("option", { value: "", selected: specialDraft.preset === "" }, "Your own…"));
      const side = h("select", { "aria-label": "Fights for", onchange: (ev) => { specialDraft.side = ev.target.value; } },
        ["A", "B"].map((s) => h("option", { value: s, selected: s === specialDraft.side }, `for side ${s}`)));
      const own = specialDraft.preset === "";
      const input = (name, label, attrs) => h("label", { class: "ol-own-field" }, h("span", {}, label), h("input", { name, ...attrs }));
      const ownFields = own ? h("div", { class: "ol-own-special" },
        input("name", "Name", { type: "text", maxlength: 40, value: "Battle spell", dataset: { testid: "special-name" } }),
        input("attacks", "Attacks", { type: "number", min: 1, max: 100000, value: 10, inputmode: "numeric" }),
        input("rating", "Attack rating", { type: "number", min: 1, max: 10000, value: 100, inputmode: "numeric" }),
        input("rounds", "Rounds (0 = every round)", { type: "number", min: 0, max: 1000, value: 1, inputmode: "numeric" }),
        h("label", { class: "ol-own-field" }, h("span", {}, "Reach"),
          h("select", { name: "reach" }, h("option", { value: "any" }, "any man"), h("option", { value: "front" }, "front row only")))) : null;
      const add = () => {
        const decl = { type: "add_special", side: side.value };
        if (own) {
          for (const el of ownFields.querySelectorAll("input, select")) {
            decl[el.name] = el.type === "number" ? Number(el.value) : el.value;
          }
        } else {
          decl.preset = preset.value;
        }
        ctx.send(decl);
      };
      form = h("div", { class: "ol-special-form" },
        h("div", { class: "button-row" }, preset, side, h("button", { type: "button", dataset: { testid: "add-special" }, onclick: add }, "Add")),
        ownFields);
    }
    return h("section", { class: "ol-card ol-specials" }, h("h2", {}, "Special attacks"),
      items.length ? h("ul", {}, items) : h("p", { class: "muted" }, "None: dragons and battle spells go here."), form);
  }

  // the report, newest first: each entry is kept once drawn (only the newest changes its look); a
  // phone shows the newest phase and folds the earlier ones away (drawn only while open)
  function fillReport(section) {
    const reports = view.report || [];
    if (section.hidden !== !reports.length) section.hidden = !reports.length;
    const count = reports.length;
    const item = ({ r, n }) => ({
      key: `${n}|${n === count - 1}|${r.title}|${r.text}`,
      build: () => h("li", { class: n === count - 1 ? "ol-latest" : "", value: n + 1 }, h("strong", {}, r.title), h("p", {}, sentence(r.text.slice(r.title.length + 2)))),
    });
    const entries = reports.map((r, n) => ({ r, n })).reverse();
    if (ctx.role !== "player") {
      keyed(section.querySelector(".ol-report-list"), entries.map(item));
      return section;
    }
    let fold = section.querySelector(".ol-report-fold");
    if (!fold) {
      fold = h("details", { class: "ol-report-fold phone-fold", dataset: { testid: "report-earlier" }, ontoggle: () => redraw() },
        h("summary", {}), h("ol", { class: "ol-report-list", reversed: true }));
      section.append(fold);
    }
    keyed(section.querySelector(".ol-report-list"), entries.slice(0, 1).map(item));
    const earlier = entries.slice(1);
    fold.hidden = !earlier.length;
    const label = `Earlier phases (${earlier.length})`;
    if (fold.firstElementChild.textContent !== label) fold.firstElementChild.textContent = label;
    keyed(fold.lastElementChild, fold.open ? earlier.map(item) : []);
    return section;
  }

  function sentence(text) {
    return text ? text[0].toUpperCase() + text.slice(1) : text;
  }
}
