// Odds before committing (issue 17): ask the server, keep its answers, show them.
//
// The server works the odds out from what this page may see (rules/odds/<system>.py) and answers the
// socket event `odds {battle_id, declaration}` with `{ok, battle_id, v, odds}`. This module decides
// nothing: it asks, keeps each answer per battle version and declaration (a new version asks again),
// and draws the numbers it was given — a compact figure beside a choice ("62 % hit"), and the details
// (every outcome with its exact fraction or its 95 % interval, expected values, distributions as a bar
// list, the answer per foe's option or per defence) in a <details> a tap away.
//
// Every figure is text, never colour alone. Styles: static/css/odds.css, linked on first import.

import { h, replace } from "./ui.js";

(function linkStyles() {
  const href = new URL("../css/odds.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  document.head.append(h("link", { rel: "stylesheet", href }));
})();

const NBSP = "\u00a0";
const ASK_DELAY_MS = 300;
const cache = new Map(); // "battle|v|declaration" -> Promise<answer | null>
const errors = new Map(); // same key -> the server's refusal, for whoever wants to say why

function keyOf(battleId, v, declaration) {
  return `${battleId}|${v}|${JSON.stringify(declaration)}`;
}

function where(ctx) {
  const state = (ctx.conn && ctx.conn.state) || {};
  return { battleId: ctx.battleId ?? state.battleId, v: ctx.version ?? state.v };
}

/** The answer already at hand for this declaration at this version, or undefined. */
export function cached(ctx, declaration) {
  const { battleId, v } = where(ctx);
  const entry = cache.get(keyOf(battleId, v, declaration));
  return entry && entry.done ? entry.value : undefined;
}

/** Ask the server (once per battle version and declaration): a Promise of the `odds` answer or null. */
export function ask(ctx, declaration) {
  const { battleId, v } = where(ctx);
  if (!battleId || !ctx.conn || !ctx.conn.emit) return Promise.resolve(null);
  const key = keyOf(battleId, v, declaration);
  let entry = cache.get(key);
  if (!entry) {
    // an older version's answers are of no more use
    for (const k of cache.keys()) if (!k.startsWith(`${battleId}|${v}|`)) cache.delete(k);
    entry = { done: false, value: undefined };
    // asked a moment later, so that what the page sends on a new view (its declaration, its dice
    // seed) reaches the server first: a question never holds up a move
    // (and not at all if the battle moved on meanwhile: the new view asks afresh)
    const current = () => ctx.conn.state && ctx.conn.state.battleId === battleId && ctx.conn.state.v === v;
    entry.promise = new Promise((resolve) => setTimeout(resolve, ASK_DELAY_MS)).then(() => (current()
      ? ctx.conn.emit("odds", { battle_id: battleId, declaration })
      : { ok: false, code: "moved_on", error: "The battle moved on." })).then((ack) => {
      entry.done = true;
      entry.value = ack && ack.ok ? ack.odds : null;
      if (!(ack && ack.ok)) {
        errors.set(key, (ack && ack.error) || "No odds");
        if (ack && ["offline", "timeout", "moved_on"].includes(ack.code)) cache.delete(key); // ask again later
      }
      return entry.value;
    });
    cache.set(key, entry);
  }
  return entry.promise;
}

/** Call `draw(answer)` now if the answer is at hand, or when it comes (if `alive()` still holds). */
export function withOdds(ctx, declaration, draw, alive = () => true) {
  const known = cached(ctx, declaration);
  if (known !== undefined) { if (known) draw(known); return; }
  ask(ctx, declaration).then((answer) => { if (answer && alive()) draw(answer); });
}

// --- numbers as text -------------------------------------------------------------------------------

/** "62 %", "<1 %", ">99 %", "0 %", "100 %". */
export function pct(p) {
  if (typeof p !== "number" || Number.isNaN(p)) return "–";
  if (p <= 0) return `0${NBSP}%`;
  if (p >= 1) return `100${NBSP}%`;
  if (p < 0.01) return `<1${NBSP}%`;
  if (p > 0.99) return `>99${NBSP}%`;
  return `${Math.round(p * 100)}${NBSP}%`;
}

function num(v) {
  if (typeof v !== "number") return "–";
  return Math.abs(v - Math.round(v)) < 0.005 ? String(Math.round(v)) : v.toFixed(2);
}

function interval(item, asPct) {
  const [low, high] = item.interval || [];
  if (typeof low !== "number") return "";
  const f = asPct ? (x) => `${(x * 100).toFixed(1)}${NBSP}%` : (x) => num(x);
  return `95${NBSP}% interval ${f(low)}–${f(high)}${item.n ? `, ${item.n} battles` : ""}`;
}

/** Find an outcome or expected value by key in an answer (or a choice or case of it). */
export function pick(x, key) {
  if (!x) return null;
  return (x.outcomes || []).find((o) => o.key === key) || (x.expected || []).find((o) => o.key === key) || null;
}

/**
 * The compact figure: `parts` = [{key, word, always?}] -> "62 % hit · 4 % win". A probability part is
 * left out when it is 0 unless `always`; an expected value shows its number ("1.83 dmg").
 */
export function compactText(x, parts) {
  return compactBits(x, parts).join(" · ");
}

function compactBits(x, parts) {
  const bits = [];
  for (const part of parts) {
    const item = pick(x, part.key);
    if (!item) continue;
    if ("p" in item) {
      if (item.p <= 0 && !part.always) continue;
      bits.push(`${pct(item.p)} ${part.word}`);
    } else if ("value" in item) bits.push(`${num(item.value)} ${part.word}`);
  }
  return bits;
}

/** A compact figure as an element (put inside a button, it joins the button's accessible name). */
export function chip(x, parts, { testid = "odds-chip", cls = "" } = {}) {
  const bits = compactBits(x, parts);
  if (!bits.length) return null;
  return h("span", { class: `odds-chip ${cls}`, dataset: { testid } },
    bits.map((b, i) => [i ? " · " : "", h("span", { class: "odds-bit" }, b)]));
}

/** Put the compact figure in `button` (replacing an earlier one) when the answer is at hand. */
export function decorate(button, x, parts) {
  const old = button.querySelector(".odds-chip");
  if (old) old.remove();
  const el = chip(x, parts);
  if (el) button.append(el);
  return el;
}

// --- the details --------------------------------------------------------------------------------------

function outcomeRow(o) {
  const exactText = o.exact ? o.fraction : interval(o, "p" in o);
  const figure = "p" in o ? pct(o.p) : num(o.value);
  return h("li", { class: "odds-row", dataset: { key: o.key } },
    h("span", { class: "odds-label" }, o.label),
    h("strong", { class: "odds-figure" }, figure),
    exactText ? h("span", { class: "odds-exact", dataset: { testid: "odds-exact" } }, o.exact ? `= ${exactText}` : exactText) : null);
}

function distributionList(d) {
  const values = d.values || [];
  if (!values.length) return null;
  const top = Math.max(...values.map((v) => v.p), 0.0001);
  return h("div", { class: "odds-dist", dataset: { key: d.key } },
    h("div", { class: "odds-dist-title" }, d.label),
    h("ul", { class: "odds-bars" }, values.map((v) => h("li", { class: "odds-bar-row" },
      h("span", { class: "odds-bar-value" }, String(v.value)),
      h("span", { class: "odds-bar", "aria-hidden": "true" },
        h("span", { class: "odds-bar-fill", style: { width: `${Math.max(1, Math.round((v.p / top) * 100))}%` } })),
      h("span", { class: "odds-bar-p" }, pct(v.p)),
      v.fraction ? h("span", { class: "odds-exact" }, v.fraction) : null))));
}

/** One block: outcomes, expected values and distributions of an answer, a choice or a case. */
export function block(x) {
  return h("div", { class: "odds-block" },
    (x.outcomes || []).length ? h("ul", { class: "odds-list" }, x.outcomes.map(outcomeRow)) : null,
    (x.expected || []).length ? h("ul", { class: "odds-list odds-expected" }, x.expected.map(outcomeRow)) : null,
    (x.distributions || []).map(distributionList));
}

function casesOf(x, mostLikely) {
  const cases = x.cases || [];
  if (!cases.length) return null;
  return h("div", { class: "odds-cases" }, cases.map((c) => h("details", { class: "odds-case", dataset: { key: c.key || "" } },
    h("summary", {}, c.label || c.key, c.key && c.key === mostLikely ? " (most likely)" : ""),
    block(c))));
}

function notes(answer) {
  const out = [];
  if (answer.method === "simulation" && answer.battles) out.push(`Simulated: ${answer.battles} battles from the current state; each figure with its 95${NBSP}% interval.`);
  else if (answer.method === "exact") out.push("Exact: every combination of dice counted.");
  if (answer.weighting) out.push(answer.weighting);
  if (typeof answer.attack_target === "number") out.push(`Your attack test: target ${answer.attack_target}.`);
  if (answer.numbers_known === false || answer.stats_known === false) out.push("The target's numbers are hidden from you: only what does not depend on them is shown.");
  if (answer.charge) {
    const c = answer.charge;
    out.push(c.reaches === false ? "The charge does not reach this round." : `The charge arrives in segment ${c.arrival_segment}.`);
    if (c.first) out.push(`${c.first}.`);
  }
  if (answer.note) out.push(String(answer.note));
  return out;
}

/** The full answer, every figure of it. */
export function details(answer) {
  const parts = [h("ul", { class: "odds-notes" }, notes(answer).map((n) => h("li", {}, n)))];
  if (answer.attack && answer.attack.length) parts.push(h("ul", { class: "odds-list" }, answer.attack.map(outcomeRow)));
  if (answer.by_armour_class && answer.by_armour_class.length) {
    parts.push(h("ul", { class: "odds-list odds-by-ac" }, answer.by_armour_class.filter((o) => o.p > 0 && o.p < 1).map(outcomeRow)));
  }
  if (answer.choices && answer.choices.length) {
    for (const c of answer.choices) {
      parts.push(h("section", { class: "odds-choice", dataset: { key: c.key || "" } },
        h("h4", {}, c.label), block(c), casesOf(c)));
    }
  } else {
    parts.push(block(answer));
    parts.push(casesOf(answer, answer.most_likely));
  }
  return h("div", { class: "odds-details-body" }, parts);
}

/** A <details> "Odds …" a tap away; keeps itself open across re-draws of the same `id`. */
const openIds = new Set();
export function disclosure(answer, { summary = "Odds in detail", id = "odds", testid = "odds-details" } = {}) {
  const el = h("details", { class: "odds-details", dataset: { testid, oddsId: id }, open: openIds.has(id) },
    h("summary", {}, summary), details(answer));
  el.addEventListener("toggle", () => { if (el.open) openIds.add(id); else openIds.delete(id); });
  return el;
}

/** A placeholder that fills itself with a disclosure of the answer when it comes. */
export function disclosureSlot(ctx, declaration, opts = {}) {
  const slot = h("div", { class: "odds-slot", dataset: { testid: "odds-slot" } });
  withOdds(ctx, declaration, (answer) => replace(slot, disclosure(answer, opts)), () => true);
  return slot;
}

/**
 * A debounced asker for a builder that changes (the Eclipse Phase attack builder): `schedule(ctx, decl)`
 * draws at once if that answer is at hand, otherwise waits `ms` after the last change, then asks and
 * calls `draw(answer, decl)` unless a newer change came meanwhile.
 */
export function debounced(draw, ms = 250) {
  let timer = null;
  let latest = 0;
  return function schedule(ctx, declaration) {
    const known = cached(ctx, declaration);
    latest += 1;
    const mine = latest;
    clearTimeout(timer);
    if (known !== undefined) { draw(known, declaration); return; }
    timer = setTimeout(() => {
      ask(ctx, declaration).then((answer) => { if (mine === latest) draw(answer, declaration); });
    }, ms);
  };
}

// --- the table display (only when the GM has switched odds on for the table) -------------------------

function listOf(combatants) {
  if (Array.isArray(combatants)) return combatants;
  return Object.entries(combatants || {}).map(([id, c]) => ({ id, ...c }));
}

/**
 * The questions the TV asks for a view: [{who, declaration, parts, choices?, whole?}] (public answers only),
 * read off the system's traits (`traits.odds_questions`, sent in the table payload: rules/contract.py's
 * OddsQuestion). Each descriptor says who acts (`acting`: view keys holding a combatant id or a list of ids,
 * or "*all" / "*standing", the first the view has), against whom (`against`: "each_foe", "first_foe" or ""),
 * the declaration asked about ("$acting" and "$foe" filled in), the figures shown (`parts`, or
 * `parts_by_option[choice.option]` for a choice), how many at most (`limit`), or one question about the
 * whole battle (`whole`, under `label`).
 */
function displayQuestions(traits, view) {
  // (a system's own list, whose flags say who still stands; else the common view shape's fighters)
  const all = view.combatants ? listOf(view.combatants) : (view.fighters || []).map((f) => ({ ...f, dead: f.out }));
  const byId = Object.fromEntries(all.map((c) => [c.id, c]));
  const standing = (c) => c && !c.dead && !c.defeated && !c.destroyed && c.status !== "dead";
  const foesOf = (cid) => all.filter((c) => byId[cid] && c.side !== byId[cid].side && standing(c));
  const nameOf = (cid) => (byId[cid] ? byId[cid].name : cid);
  const fill = (template, acting, foe) => Object.fromEntries(Object.entries(template || {}).map(([key, value]) => (
    [key, value === "$acting" ? acting : value === "$foe" ? foe : value])));
  const actingIds = (keys) => {
    for (const key of keys || []) {
      if (key === "*all") return all.map((c) => c.id);
      if (key === "*standing") return all.filter(standing).map((c) => c.id);
      const value = view[key];
      if (value === undefined || value === null || value === "") continue;
      return Array.isArray(value) ? value : [value];
    }
    return [];
  };
  const out = [];
  for (const q of (traits && traits.odds_questions) || []) {
    if (q.whole) {
      out.push({ who: q.label, declaration: fill(q.declaration), whole: true });
      continue;
    }
    const parts = (answer) => ((answer && (q.parts_by_option || {})[answer.option]) || q.parts || []);
    const asked = [];
    for (const cid of actingIds(q.acting)) {
      const who = q.name_key ? view[q.name_key] || cid : nameOf(cid);
      const foes = q.against === "each_foe" ? foesOf(cid) : q.against === "first_foe" ? foesOf(cid).slice(0, 1) : null;
      if (foes === null) {
        asked.push({ who, declaration: fill(q.declaration, cid), choices: Boolean(q.choices), parts });
        continue;
      }
      for (const foe of foes) {
        asked.push({ who: `${who} → ${foe.name}`, declaration: fill(q.declaration, cid, foe.id), choices: Boolean(q.choices), parts });
      }
    }
    out.push(...(q.limit ? asked.slice(0, q.limit) : asked));
  }
  return out;
}

/**
 * renderDisplayOdds(root, {traits, view, conn, battleId, version}): the TV's odds panel, large type
 * (`traits`: the table payload's, which say what to ask).
 * Asked only while the GM's `show_odds` is on (display.js loads this module only then).
 */
export function renderDisplayOdds(root, { traits, view, conn, battleId, version }) {
  const ctx = { conn, battleId, version };
  const questions = view && view.status !== "ended" ? displayQuestions(traits, view) : [];
  root.hidden = !questions.length;
  if (!questions.length) { replace(root); return; }
  const stamp = `${battleId}|${version}`;
  root.dataset.stamp = stamp;
  const rows = questions.map((q) => {
    const li = h("li", { class: "display-odds-row" }, h("span", { class: "display-odds-who" }, q.who), " ", h("span", { class: "muted" }, "…"));
    withOdds(ctx, q.declaration, (answer) => {
      let body;
      if (q.whole) {
        const wins = (answer.outcomes || []).filter((o) => o.key.startsWith("win_"));
        body = [wins.map((o) => h("div", { class: "odds-chip" }, `${o.label}: ${pct(o.p)}`)),
          answer.battles ? h("div", { class: "display-odds-note" }, `${answer.battles} simulated battles`) : null];
      } else if (q.choices) {
        body = (answer.choices || []).map((c) => h("div", {}, `${c.label} `, chip(c, q.parts(c)) || "–"));
      } else {
        body = [chip(answer, q.parts(answer)) || "–"];
      }
      replace(li, h("span", { class: "display-odds-who" }, q.who), h("div", { class: "display-odds-figures" }, body));
    }, () => root.dataset.stamp === stamp);
    return li;
  });
  replace(root, h("h3", {}, "Odds"), h("ul", {}, rows));
}
