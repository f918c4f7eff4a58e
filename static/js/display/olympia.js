// Olympia on the table display: the two armies face each other, each as its front row (nearest the
// middle) and back rows of unit blocks whose size follows the men they hold; each side's strength
// against its break line as a bar; casualties fall off a block as a phase resolves and a broken side
// is marked and shaken.
import { joinParts } from "./common.js";

const PHASES = { volley: "opening volley", special: "special attacks", missile: "missile phase", melee: "melee phase" };
let previousMen = {}; // unit id -> men in the last view drawn
let previousBroken = {};
let previousStrength = {};

const numbers = new Intl.NumberFormat("en-GB"); // one formatter (toLocaleString builds one per call)
const fmt = (n) => (typeof n === "number" ? numbers.format(n) : String(n));

export function render(root, view, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  const sideIds = Object.keys(view.sides || {}).sort();
  const allMen = [];
  for (const sid of sideIds) for (const row of view.sides[sid].rows || []) for (const u of row.units || []) allMen.push(u.men || 0);
  const maxMen = Math.max(1, ...allMen);
  const men = {};
  const broken = {};
  const strength = {};

  function unitBlock(u, sid) {
    men[u.id] = u.men;
    const before = previousMen[u.id];
    const lost = before !== undefined && u.men < before ? before - u.men : 0;
    const troops = (u.troops || []).filter((t) => t.count > 0).map((t) => `${fmt(t.count)} ${t.label}`).join(" · ");
    const block = h("div", {
      class: `old-unit ${u.state !== "fighting" ? `is-${u.state}` : ""} ${u.leader ? "is-leader" : ""} ${lost ? "has-losses" : ""}`,
      dataset: { testid: `unit-${u.id}`, men: u.men, state: u.state },
      title: `${u.name}: ${troops}`,
    },
    h("div", { class: "old-unit-head" }, kit.sideBadge(sid, sideIds), h("span", { class: "old-unit-name" }, u.name), u.leader ? h("span", { class: "old-leader" }, "★") : null),
    h("div", { class: "old-unit-men" }, `${fmt(u.men)} ${u.men === 1 ? "man" : "men"}`),
    troops ? h("div", { class: "old-unit-troops" }, troops) : null,
    u.state !== "fighting" ? h("div", { class: "old-unit-state" }, u.state) : null,
    lost ? h("div", { class: "old-loss", "aria-label": `${lost} fell` }, `−${fmt(lost)}`) : null);
    // the block's size follows its men (square root: a unit of 400 reads bigger than one of 100, not
    // four times), with a floor so a small unit's name still reads
    block.style.flexGrow = String(0.35 + Math.sqrt(Math.max(0, u.men) / maxMen));
    return block;
  }

  function sidePanel(sid) {
    const side = view.sides[sid];
    broken[sid] = !!side.broken;
    const justBroke = side.broken && previousBroken[sid] === false;
    const pct = side.start_total > 0 ? (100 * side.total) / side.start_total : 0;
    strength[sid] = pct;
    const rows = [...(side.rows || [])].sort((a, b) => a.behind - b.behind);
    return h("section", {
      class: `old-side ${kit.sideMark(sid, sideIds).cls} ${side.broken ? "is-broken" : ""} ${justBroke ? "just-broke" : ""} old-side-${sideIds.indexOf(sid) === 0 ? "left" : "right"}`,
      dataset: { testid: `side-${sid}`, broken: side.broken ? "true" : "false" },
    },
    h("header", { class: "old-side-head" },
      h("h2", { class: "old-side-name" }, kit.sideBadge(sid, sideIds), " ", side.name),
      side.broken ? h("span", { class: "old-broken-tag" }, "BROKEN") : null),
    kit.healthBar(side.total, side.start_total, {
      label: "Strength", marker: side.threshold, cls: "old-strength", testid: `strength-${sid}`,
      text: `Strength ${fmt(side.total)} / ${fmt(side.start_total)} · breaks at ${fmt(side.threshold)}`,
    }),
    side.structure ? h("div", { class: "old-structure" }, structureText(side.structure)) : null,
    h("div", { class: "old-rows" }, rows.map((row) => h("div", { class: `old-row ${row.behind === 0 ? "is-front" : ""}`, dataset: { behind: row.behind } },
      h("div", { class: "old-row-label" }, row.behind === 0 ? "Front" : `Back ${row.behind}`),
      h("div", { class: "old-row-units" }, (row.units || []).map((u) => unitBlock(u, sid)))))));
  }

  replace(root, h("div", { class: "old", dataset: { status: view.status || "", round: view.round || 0 } },
    sideIds.map((sid) => sidePanel(sid))));
  previousMen = men;
  previousBroken = broken;
  previousStrength = strength;
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
