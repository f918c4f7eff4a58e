// Olympia on the table display: the two armies face each other, each as its front row (nearest the
// middle) and back rows of unit blocks whose size follows the men they hold; each side's strength
// against its break line as a bar; casualties fall off a block as a phase resolves and a broken side
// is marked and shaken.
//
// The board is built once (per page, per set of sides) and then updated in place: an update writes
// only what changed (a number, a class, a block's flex-grow), so the TV restyles, relays out and
// repaints the few blocks that lost men, not the whole 1920×1080 stage. Unit blocks are kept by side
// and id and only moved when the rows really change (a unit moved up a row, another lineup).
import { joinParts } from "./common.js";

const PHASES = { volley: "opening volley", special: "special attacks", missile: "missile phase", melee: "melee phase" };
let previousMen = {}; // unit id -> men in the last view drawn
let previousBroken = {};
let board = null; // the skeleton drawn last: {el, sidesKey, sides: Map(side id -> parts), units: Map(side:id -> parts), observer}
let lastBattle = null; // ctx.battleId when the page passes it
let lastVersion = null;

const still = typeof matchMedia === "function" ? matchMedia("(prefers-reduced-motion: reduce)") : null;
const partsOf = new WeakMap(); // a unit's block -> its parts (for the observer)
// what a unit's losses do: the "−N" drops in and falls, the block's rim flashes twice (transform and
// opacity only: the compositor plays them)
const FALL = [
  { transform: "translateY(-10px) scale(1.4)", opacity: 0, easing: "ease-out" },
  { offset: 0.15, transform: "none", opacity: 1, easing: "ease-out" },
  { transform: "translateY(30px)", opacity: 0.85 },
];
const FLASH = [{ opacity: 0, easing: "ease" }, { offset: 0.5, opacity: 1, easing: "ease" }, { opacity: 0 }];

const numbers = new Intl.NumberFormat("en-GB"); // one formatter (toLocaleString builds one per call)
const fmt = (n) => (typeof n === "number" ? numbers.format(n) : String(n));

// Writers that touch the DOM only when the value differs from the one written last (kept in `memo`,
// never read back from the DOM: a read after a write would force a layout).
// Text is written into the part's own text node (a new text node would be re-attached, restyled and
// relaid out; a changed one is only relaid out).
function setText(memo, key, el, text) {
  if (memo[key] === text) return;
  memo[key] = text;
  const node = el.firstChild;
  if (node && node.nodeType === 3 && !node.nextSibling) node.data = text;
  else el.textContent = text;
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
function setData(memo, el, key, value) {
  const text = String(value);
  if (memo[`@${key}`] === text) return;
  memo[`@${key}`] = text;
  el.dataset[key] = text;
}
function setAttr(memo, el, name, value) {
  const text = String(value);
  if (memo[`=${name}`] === text) return;
  memo[`=${name}`] = text;
  el.setAttribute(name, text);
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

  let maxMen = 1;
  for (const sid of sideIds) for (const row of view.sides[sid].rows || []) for (const u of row.units || []) if ((u.men || 0) > maxMen) maxMen = u.men || 0;

  const men = {};
  const broken = {};
  const seen = new Set();
  for (const sid of sideIds) {
    const side = view.sides[sid];
    const panel = board.sides.get(sid);
    broken[sid] = !!side.broken;
    updateSide(panel, side, sid, ctx, previousBroken[sid] === false && side.broken);
    const rows = [...(side.rows || [])].sort((a, b) => a.behind - b.behind);
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
        updateUnit(board.units.get(key), u, before !== undefined && u.men < before ? before - u.men : 0, maxMen, ctx);
      }
    }
  }
  for (const [key, parts] of board.units) { // units gone from the rows (already out of the DOM)
    if (seen.has(key)) continue;
    if (board.observer) board.observer.unobserve(parts.el);
    board.units.delete(key);
  }
  previousMen = men;
  previousBroken = broken;
}

// --- the skeleton ------------------------------------------------------------------------------
function build(root, sideIds, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  if (board && board.observer) board.observer.disconnect();
  const next = { el: null, sidesKey: sideIds.join(","), sides: new Map(), units: new Map(), memo: {}, observer: null };
  // On the TV a long row runs past the board's edge: the blocks it cuts off are marked is-off and
  // their insides are not drawn (content-visibility: hidden), so their numbers cost no layout, and
  // their size and losses are not written. The observer reports after a frame, without forcing a
  // layout. (A row that runs over gives every block its 140 px floor, whatever its flex-grow: the
  // ones not written are written when they come into view.)
  if (ctx.mode === "display" && typeof IntersectionObserver === "function") {
    next.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const parts = partsOf.get(e.target);
        if (!parts) continue;
        parts.off = !e.isIntersecting;
        e.target.classList.toggle("is-off", parts.off);
        if (!parts.off) writeGrow(parts);
      }
    }, { root });
  }
  const panels = sideIds.map((sid, i) => {
    const name = document.createTextNode("");
    const brokenTag = h("span", { class: "old-broken-tag", hidden: true });
    const structure = h("div", { class: "old-structure", hidden: true });
    const rowsEl = h("div", { class: "old-rows" });
    const el = h("section", { class: `old-side ${kit.sideMark(sid, sideIds).cls} old-side-${i === 0 ? "left" : "right"}`, dataset: { testid: `side-${sid}` } },
      h("header", { class: "old-side-head" }, h("h2", { class: "old-side-name" }, kit.sideBadge(sid, sideIds), " ", name), brokenTag),
      structure, rowsEl);
    next.sides.set(sid, { el, name, brokenTag, structure, rowsEl, bar: null, rowsKey: null, memo: {} });
    return el;
  });
  next.el = h("div", { class: "old" }, panels);
  replace(root, next.el);
  return next;
}

// The rows of one side, keeping the blocks of the units still there (moved, not redrawn).
function layRows(panel, rows, sid, sideIds, ctx) {
  const { h } = ctx.ui;
  const els = rows.map((row) => h("div", { class: `old-row ${row.behind === 0 ? "is-front" : ""}`, dataset: { behind: row.behind } },
    h("div", { class: "old-row-label" }, row.behind === 0 ? "Front" : `Back ${row.behind}`),
    h("div", { class: "old-row-units" }, h("div", { class: "old-row-stack" }, (row.units || []).map((u) => {
      const key = `${sid}:${u.id}`;
      let parts = board.units.get(key);
      if (!parts) {
        parts = unitBlock(u, sid, sideIds, ctx);
        board.units.set(key, parts);
        partsOf.set(parts.el, parts);
        if (board.observer) board.observer.observe(parts.el);
      } else if (parts.off && board.observer) { // moved: in view until the observer says otherwise
        parts.off = false;
        parts.el.classList.remove("is-off");
        board.observer.unobserve(parts.el);
        board.observer.observe(parts.el);
      }
      return parts.el;
    })))));
  panel.rowsEl.replaceChildren(...els);
}

function unitBlock(u, sid, sideIds, ctx) {
  const { h } = ctx.ui;
  const parts = {
    name: h("span", { class: "old-unit-name" }),
    leader: h("span", { class: "old-leader", hidden: true }),
    men: h("div", { class: "old-unit-men" }),
    troops: h("div", { class: "old-unit-troops", hidden: true }),
    state: h("div", { class: "old-unit-state", hidden: true }),
    title: "",
    off: false, // cut off by the board's edge (the observer says)
    grow: null, // the flex-grow to write (written once the block is in view)
    loss: null, // the "−N" of this update and the flash of the block's rim: made at its first loss, then kept
    hit: null,
    played: [], // their animations, kept (cancelled while there is no loss)
    memo: {},
  };
  parts.el = h("div", { class: "old-unit", dataset: { testid: `unit-${u.id}` } }, h("div", { class: "old-unit-body" },
    h("div", { class: "old-unit-head" }, ctx.kit.sideBadge(sid, sideIds), parts.name, parts.leader),
    parts.men, parts.troops, parts.state));
  parts.el.addEventListener("pointerenter", () => { if (parts.el.title !== parts.title) parts.el.title = parts.title; });
  return parts;
}

// --- one update --------------------------------------------------------------------------------
function updateSide(panel, side, sid, ctx, justBroke) {
  const { memo, el } = panel;
  setClass(memo, el, "is-broken", !!side.broken);
  setClass(memo, el, "just-broke", !!justBroke); // off at the next update, so a later break shakes again
  setData(memo, el, "broken", side.broken ? "true" : "false");
  setText(memo, "name", panel.name, side.name);
  setShown(memo, "broken-tag", panel.brokenTag, side.broken ? "BROKEN" : "");
  setShown(memo, "structure", panel.structure, side.structure ? structureText(side.structure) : "");
  strengthBar(panel, side, sid, ctx);
}

// The side's strength against its break line: kit.healthBar's bar, made once and then written in
// place (its fill scaled rather than resized, so a fall animates on the compositor).
function strengthBar(panel, side, sid, ctx) {
  const total = side.total;
  const start = side.start_total;
  const hasMarker = side.threshold !== null && start > 0; // as kit.healthBar draws its marker
  const text = `Strength ${fmt(total)} / ${fmt(start)} · breaks at ${fmt(side.threshold)}`;
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
  const scale = `scaleX(${frac.toFixed(4)})`;
  if (bar.memo.scale !== scale) {
    bar.memo.scale = scale;
    bar.fill.style.transform = scale;
  }
  if (bar.marker) {
    const left = `${Math.max(0, Math.min(100, (100 * side.threshold) / start)).toFixed(1)}%`;
    if (bar.memo.left !== left) { bar.memo.left = left; bar.marker.style.left = left; }
  }
  setText(bar.memo, "text", bar.text, text);
}

function updateUnit(parts, u, lost, maxMen, ctx) {
  const { memo, el } = parts;
  const troops = (u.troops || []).filter((t) => t.count > 0).map((t) => `${fmt(t.count)} ${t.label}`).join(" · ");
  const stateCls = u.state !== "fighting" ? `is-${u.state}` : null; // routed, fled, destroyed…
  if (memo.stateCls !== stateCls) {
    if (memo.stateCls) el.classList.remove(memo.stateCls);
    if (stateCls) el.classList.add(stateCls);
    memo.stateCls = stateCls;
  }
  setClass(memo, el, "is-leader", !!u.leader);
  setClass(memo, el, "has-losses", lost > 0);
  setData(memo, el, "men", u.men);
  setData(memo, el, "state", u.state);
  parts.title = `${u.name}: ${troops}`; // written on hover only: a changed title restyles the block
  setText(memo, "name", parts.name, u.name);
  setShown(memo, "leader", parts.leader, u.leader ? "★" : "");
  setText(memo, "men", parts.men, `${fmt(u.men)} ${u.men === 1 ? "man" : "men"}`);
  setShown(memo, "troops", parts.troops, troops);
  setShown(memo, "state", parts.state, u.state !== "fighting" ? String(u.state) : "");
  // the block's size follows its men (square root: a unit of 400 reads bigger than one of 100, not
  // four times), with a floor so a small unit's name still reads; in steps of 1/40, so that a unit
  // losing a handful of men is not relaid out for a change no one would see
  parts.grow = String(Math.round(40 * (0.35 + Math.sqrt(Math.max(0, u.men) / maxMen))) / 40);
  if (!parts.off) writeGrow(parts);
  showLoss(parts, parts.off ? 0 : lost, ctx);
}

function writeGrow(parts) {
  if (parts.grow === null || parts.memo.grow === parts.grow) return;
  parts.memo.grow = parts.grow;
  parts.el.style.flexGrow = parts.grow;
}

// This update's losses: the "−N" badge (class old-loss while it shows) and the rim's flash, played
// again for each loss. The two elements are kept once made: a loss changes a text and starts two
// animations, no element is added or removed.
function showLoss(parts, lost, ctx) {
  const { memo } = parts;
  if (lost > 0 && !parts.loss) {
    const { h } = ctx.ui;
    parts.hit = h("div", { class: "old-hit", "aria-hidden": "true" });
    parts.loss = h("div", { class: "old-badge" });
    parts.el.append(parts.hit, parts.loss);
  }
  if (!parts.loss) return;
  setText(memo, "loss", parts.loss, lost > 0 ? `−${fmt(lost)}` : "");
  setClass(memo, parts.loss, "old-loss", lost > 0);
  if (lost > 0) {
    setAttr(memo, parts.loss, "aria-label", `${lost} fell`);
    if (!(still && still.matches) && typeof parts.loss.animate === "function") {
      // made once and then played from the start again (element.animate parses its keyframes anew
      // each time: a quarter of a millisecond a call here)
      if (!parts.played.length) parts.played.push(parts.loss.animate(FALL, { duration: 2400, fill: "both" }), parts.hit.animate(FLASH, { duration: 600, iterations: 2 }));
      else for (const a of parts.played) { a.currentTime = 0; a.play(); }
    } else {
      for (const a of parts.played) a.cancel();
    }
  } else {
    for (const a of parts.played) a.cancel();
    if (memo["=aria-label"]) {
      memo["=aria-label"] = "";
      parts.loss.removeAttribute("aria-label");
    }
  }
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
