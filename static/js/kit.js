// The shared front-end kit: the pieces every rule system draws (token, die, health bar, turn strip,
// action button, panel), so that a system's renderer is mostly layout and a sixth system reuses them.
// Like ui.js, it builds DOM from text nodes only and decides nothing: every number and every choice
// it shows comes from the server's view.
//
// Its styles are in static/css/kit.css, linked once by this module when it is first imported (a
// page may also link it itself). Sizes follow the font size of the element they are put in (em), so
// the same token reads on a phone and on a TV.
//
//   sideMark(side, sides)            -> {index, cls: "side-a", letter: "A", shape: "circle"}
//   token({id, name, short, side, sides, colour, portrait, hp, active, dead, mine, badge, size, testid, title})
//   die(face, {sides, fresh, cls, label})
//   dice(rolls, {fresh, max})        -> the dice of roll records ({dice, purpose, faces, modifier, total})
//   showableRoll(roll)               -> whether a roll is real dice worth drawing (not a mass battle's draws)
//   healthBar(current, max, {label, text, cls, testid})
//   turnStrip(entries, {label, testid})   entries: [{id, name, side, sides, active, done, out, detail}]
//   turnStripItem(entry)             -> one entry (a strip kept between draws keeps its entries by what they show)
//   actionButton(label, onclick, {testid, combatant, primary, danger, disabled, hint, pressed, cls})
//   panel(title, children, {testid, cls, collapsible, open, id})

import { h, s, sidesOf } from "./ui.js";

const SIDE_CLASSES = ["side-a", "side-b", "side-c", "side-d"];
const SIDE_SHAPES = ["circle", "square", "triangle", "diamond"];

let styled = false;
function ensureStyles() {
  if (styled || typeof document === "undefined") return;
  styled = true;
  const href = new URL("../css/kit.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  document.head.append(h("link", { rel: "stylesheet", href }));
}
ensureStyles();

/** How a side is told apart: a colour class, its letter and a shape (never colour alone). */
export function sideMark(side, sides = []) {
  const list = sides && sides.length ? sides : [side];
  let index = list.indexOf(side);
  if (index < 0) index = 0;
  const letter = String(side ?? "?").slice(0, 1).toUpperCase() || "?";
  return { index, cls: SIDE_CLASSES[index % SIDE_CLASSES.length], letter, shape: SIDE_SHAPES[index % SIDE_SHAPES.length] };
}

/** The side's shape with its letter in it, as a small SVG (for tokens, cards and strips). */
export function sideBadge(side, sides = []) {
  const m = sideMark(side, sides);
  const shape = m.shape === "square" ? s("rect", { x: 3, y: 3, width: 18, height: 18, rx: 2 })
    : m.shape === "triangle" ? s("polygon", { points: "12,1 23,22 1,22" })
      : m.shape === "diamond" ? s("polygon", { points: "12,0 24,12 12,24 0,12" })
        : s("circle", { cx: 12, cy: 12, r: 11 });
  return s("svg", { class: `kit-side ${m.cls} kit-shape-${m.shape}`, viewBox: "0 0 24 24", role: "img", "aria-label": `side ${m.letter}` },
    shape, s("text", { x: 12, y: m.shape === "triangle" ? 20 : 18, "text-anchor": "middle" }, m.letter));
}

/** A short name that still reads: initials of a long name, or the first word. */
export function shortName(name, max = 10) {
  const text = String(name || "").trim();
  if (text.length <= max) return text;
  const words = text.split(/\s+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  const first = words[0] || text;
  if (first.length <= max && !/^(the|a|an)$/i.test(first)) return first;
  return text.slice(0, max - 1) + "…";
}

/** A combatant's letters on its grid token: "Magic-user (1st level)" -> "MU", "Fighter (1st level)" -> "F1", "Orc" -> "Or". */
export function nameLetters(name) {
  const words = String(name).split(/[\s()-]+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  if (words.length >= 2) return (words[0][0] + words[1][0]).toUpperCase();
  return (words[0] || String(name)).slice(0, 2);
}

function fraction(hp) {
  if (!hp) return null;
  if (typeof hp.level === "number") return Math.max(0, Math.min(1, hp.level));
  if (hp.max > 0) return Math.max(0, Math.min(1, hp.current / hp.max));
  return null;
}

function levelOf(frac) {
  return frac > 0.5 ? "high" : frac > 0.25 ? "mid" : "low";
}

/**
 * A token for lists, cards and strips (the grid draws its own in SVG with the same look):
 * a disc in the side's colour (or `colour`), the portrait or the side letter in it, a health ring
 * round it, and the name under it. `hp`: {current, max} or {level: 0..1, label}.
 */
export function token(t) {
  const mark = sideMark(t.side, t.sides);
  const frac = fraction(t.hp);
  const ring = s("svg", { class: "kit-token-ring", viewBox: "0 0 100 100", "aria-hidden": "true" },
    s("circle", { class: "kit-ring-bg", cx: 50, cy: 50, r: 45 }),
    frac === null ? null : s("circle", {
      class: `kit-ring-fill kit-${levelOf(frac)}`, cx: 50, cy: 50, r: 45,
      "stroke-dasharray": `${(frac * 282.7).toFixed(1)} 283`, transform: "rotate(-90 50 50)",
    }));
  const face = h("span", { class: `kit-token-face ${mark.cls}` },
    t.portrait ? h("img", { src: t.portrait, alt: "", class: "kit-portrait" }) : h("span", { class: "kit-token-letter" }, mark.letter));
  if (t.colour) face.style.setProperty("--token-colour", t.colour);
  const hpText = t.hp ? (t.hp.label || (t.hp.max ? `${t.hp.current}/${t.hp.max}` : "")) : "";
  return h("div", {
    class: `kit-token ${mark.cls} ${t.active ? "is-active" : ""} ${t.dead ? "is-dead" : ""} ${t.mine ? "is-mine" : ""} kit-size-${t.size || "m"}`,
    dataset: { testid: t.testid || "token", combatant: t.id ?? "" },
    title: t.title || [t.name, hpText].filter(Boolean).join(": "),
  },
  h("span", { class: "kit-token-disc" }, ring, face, sideBadge(t.side, t.sides),
    t.badge !== undefined && t.badge !== null && t.badge !== "" ? h("span", { class: "kit-token-badge" }, String(t.badge)) : null),
  h("span", { class: "kit-token-name" }, t.short || shortName(t.name)),
  );
}

/** One die face; `fresh` makes it roll in (a fade only under prefers-reduced-motion). */
export function die(face, { sides = 6, fresh = false, cls = "", label = "", delay = 0 } = {}) {
  const el = h("span", { class: `kit-die d${sides} ${fresh ? "rolling" : ""} ${cls}`, title: label || `d${sides}`, role: "img", "aria-label": `${label ? `${label}: ` : ""}${face} on a d${sides}` },
    h("span", { class: "kit-die-face" }, String(face)));
  if (delay) el.style.setProperty("--delay", `${delay}ms`);
  return el;
}

/**
 * Whether a roll record is worth drawing as dice: real dice (up to a d100), at least one of them (a
 * mass battle's troops that could not hit at all roll none), and not the huge draws a mass battle
 * records to pick who of thousands strikes.
 */
export function showableRoll(roll) {
  const m = /d(\d+)/.exec(roll.dice || "");
  const r = /^(-?\d+)-(\d+)$/.exec(roll.dice || "");
  const sides = m ? Number(m[1]) : r ? Number(r[2]) - Number(r[1]) + 1 : 0;
  const faces = (roll.faces || []).length;
  return sides > 0 && sides <= 100 && faces >= 1 && faces <= 20;
}

/** The dice of a list of roll records, each with its purpose and total. */
export function dice(rolls, { fresh = false, max = 12 } = {}) {
  let n = 0;
  return h("div", { class: "kit-dice" }, (rolls || []).slice(0, max).map((roll) =>
    h("div", { class: "kit-roll", dataset: { testid: "roll" } },
      h("span", { class: "kit-roll-purpose" }, roll.purpose || roll.dice),
      h("span", { class: "kit-roll-faces" }, (roll.faces || []).map((f) => die(f, { sides: sidesOf(roll.dice), fresh, delay: fresh ? 60 * n++ : 0 }))),
      (roll.faces || []).length > 1 || roll.modifier ? h("span", { class: "kit-roll-total" }, `= ${roll.total}`) : null,
    )));
}

/** A health-like bar: current of max, with its numbers as text (never colour alone). */
export function healthBar(current, max, { label = "", text = null, cls = "", testid = null, marker = null } = {}) {
  const frac = max > 0 ? Math.max(0, Math.min(1, current / max)) : 0;
  const fill = h("span", { class: "kit-bar-fill" });
  fill.style.width = `${(frac * 100).toFixed(1)}%`;
  const mark = marker !== null && max > 0 ? h("span", { class: "kit-bar-marker", title: "break line" }) : null;
  if (mark) mark.style.left = `${Math.max(0, Math.min(100, (100 * marker) / max)).toFixed(1)}%`;
  return h("span", {
    class: `kit-bar kit-${levelOf(frac)} ${cls}`, role: "meter", "aria-valuenow": current, "aria-valuemin": 0, "aria-valuemax": max,
    "aria-label": label || "health", dataset: testid ? { testid } : undefined,
  }, fill, mark, h("span", { class: "kit-bar-text" }, text ?? (label ? `${label} ${current}/${max}` : `${current}/${max}`)));
}

/** Who acts, in order: the active one marked by more than colour (an arrow and "now"). */
export function turnStrip(entries, { label = "Order", testid = "turn-strip" } = {}) {
  return h("ol", { class: "kit-strip", "aria-label": label, dataset: { testid } }, (entries || []).map(turnStripItem));
}

/** One entry of a turn strip (for a strip kept between draws, whose entries are kept by what they show). */
export function turnStripItem(e) {
  return h("li", {
    class: `kit-strip-item ${sideMark(e.side, e.sides).cls} ${e.active ? "is-active" : ""} ${e.done ? "is-done" : ""} ${e.out ? "is-out" : ""}`,
    dataset: { combatant: e.id ?? "" }, "aria-current": e.active ? "step" : null,
  },
  e.side !== undefined && e.side !== null ? sideBadge(e.side, e.sides) : null,
  h("span", { class: "kit-strip-name" }, e.name),
  e.detail !== undefined && e.detail !== null && e.detail !== "" ? h("span", { class: "kit-strip-detail" }, String(e.detail)) : null,
  e.active ? h("span", { class: "kit-strip-now" }, "now") : null);
}

/** A large button for an action the server listed as legal. */
export function actionButton(label, onclick, { testid = null, combatant = null, primary = false, danger = false, disabled = false, hint = "", pressed = null, cls = "", title = null } = {}) {
  return h("button", {
    type: "button",
    class: `kit-action ${primary ? "primary" : ""} ${danger ? "danger" : ""} ${cls}`,
    onclick, disabled,
    "aria-pressed": pressed === null ? null : String(!!pressed),
    title,
    dataset: { ...(testid ? { testid } : {}), ...(combatant ? { combatant } : {}) },
  }, h("span", { class: "kit-action-label" }, label), hint ? h("span", { class: "kit-action-hint" }, hint) : null);
}

/** A titled section; `collapsible` makes it a <details> (open when `open`). */
export function panel(title, children, { testid = null, cls = "", collapsible = false, open = true, id = null } = {}) {
  const data = testid ? { testid } : undefined;
  if (collapsible) {
    return h("details", { class: `kit-panel ${cls}`, open, id, dataset: data }, h("summary", { class: "kit-panel-title" }, title), h("div", { class: "kit-panel-body" }, children));
  }
  return h("section", { class: `kit-panel ${cls}`, id, dataset: data },
    title ? h("h2", { class: "kit-panel-title" }, title) : null, h("div", { class: "kit-panel-body" }, children));
}
