// Small DOM helpers shared by the shell and the rule-system modules.
// Everything is built with text nodes: data never goes through innerHTML.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * h("button", {class: "big", onclick: fn, dataset: {testid: "x"}}, "Label", child...)
 * Attribute values: functions become listeners (on...), `dataset` fills data-*, `style` an object,
 * booleans toggle the attribute, null/undefined skip it.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Same as h() for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

function applyAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (key === "style" && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) el.style.setProperty(k, String(v));
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * A number for people: 1234567 -> "1,234,567", as Intl's en-GB format writes whole numbers, at a
 * fraction of its cost (a mass battle formats a few hundred numbers an update); other numbers and
 * values as they are.
 */
export function count(n) {
  if (Number.isInteger(n)) return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return typeof n === "number" ? n.toLocaleString("en-GB") : String(n);
}

/**
 * `el`'s words set to `text`, written into its one text node when it has one: a changed text node is
 * only laid out again, where a new one (textContent) is also attached and styled. For the words an
 * update changes every time (a display's cue and log, a unit's name).
 */
export function setWords(el, text) {
  const node = el.firstChild;
  if (node && node.nodeType === Node.TEXT_NODE && !node.nextSibling) {
    if (node.data !== text) node.data = text;
  } else {
    el.textContent = text;
  }
}

/** Replace the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Bring `parent`'s children in line with `items` ([{key, build, update}], in order) without drawing
 * again what did not change. `key` is a string that changes whenever the child must be built anew
 * (its id and everything it shows or its handlers read); a child whose key is still there is kept
 * as it is (no restyle, no relayout, no repaint) and `update(el)` (optional) refreshes the parts
 * of it that are drawn every time; the others are built with `build()`. Children not in `items` are
 * removed. Keeps a long list (a side's units, a grid's combatants) cheap to redraw on a phone.
 * A kept child the page has moved elsewhere (a part due now, moved to the top of a phone's screen)
 * stays where it is; it is removed from there when it is no longer wanted.
 */
export function keyed(parent, items) {
  const wanted = new Set();
  for (const item of items) if (item) wanted.add(item.key);
  const before = parent.__keyedAll || new Map();
  const drawn = new Map();
  const kept = new Map();
  // the children that go are removed first, so the kept ones stay where they are (a kept child
  // moved past a stale one would be taken out and put back: restyled and laid out again)
  for (const child of [...parent.childNodes]) {
    if (child.__key !== undefined && wanted.has(child.__key) && !kept.has(child.__key)) kept.set(child.__key, child);
    else child.remove();
  }
  let cursor = parent.firstChild;
  for (const item of items) {
    if (!item || drawn.has(item.key)) continue;
    let el = kept.get(item.key);
    if (!el) {
      const away = before.get(item.key);
      if (away && away.isConnected && away.parentNode !== parent) {
        if (item.update) item.update(away);
        drawn.set(item.key, away);
        continue;
      }
    }
    if (el) {
      if (item.update) item.update(el);
    } else {
      el = item.build();
      if (!el) continue;
      el.__key = item.key;
      el.__keyedOwner = parent;
    }
    drawn.set(item.key, el);
    if (el === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(el, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
  for (const [key, el] of before) if (!drawn.has(key) && el.parentNode && el.parentNode !== parent) el.remove();
  parent.__keyedAll = drawn;
  return parent;
}

let drawnSerial = 0;

/** A keyed item (for keyed()) drawn again only when its inputs change (compared as JSON); built lazily. */
export function part(name, inputs, build) {
  return { key: `${name}|${JSON.stringify(inputs)}`, build };
}

/** A keyed item drawn anew on every draw (the parts that hold a viewer's choices). */
export function always(el) {
  drawnSerial += 1;
  return { key: `drawn-${drawnSerial}`, build: () => el };
}

/**
 * The element a module keeps as its board inside `root` between draws: the same one while `owner`
 * (e.g. role and battle) is unchanged, a new one otherwise. Returns [board, isNew].
 */
export function keptBoard(root, owner) {
  const top = root.firstElementChild;
  if (top && top.__boardOwner === owner) return [top, false];
  const board = document.createElement("div");
  board.__boardOwner = owner;
  root.replaceChildren(board);
  return [board, true];
}

const keptElements = new Map();

/**
 * The same element for `name` while `owner` (e.g. role and battle) is unchanged, a new one from
 * `build()` otherwise: a module that draws its board afresh keeps its grid's box this way, so the
 * grid updates its tokens in place and a phone's pinch-zoom survives the next update.
 */
export function keptElement(name, owner, build) {
  const kept = keptElements.get(name);
  if (kept && kept.owner === owner) return kept.el;
  const el = build();
  keptElements.set(name, { owner, el });
  return el;
}

/** A health-like bar: current of max. */
export function bar(current, max, label = "") {
  const pct = max > 0 ? Math.max(0, Math.min(100, (100 * current) / max)) : 0;
  const fill = h("span", { class: "bar-fill" });
  fill.style.width = `${pct}%`;
  const level = pct > 50 ? "high" : pct > 25 ? "mid" : "low";
  return h("span", { class: `bar bar-${level}`, role: "meter", "aria-valuenow": current, "aria-valuemax": max, "aria-label": label },
    fill, h("span", { class: "bar-text" }, label || `${current}/${max}`));
}

/** One die face. */
export function die(face, { sides = 6, fresh = false, cls = "" } = {}) {
  return h("span", { class: `die d${sides} ${fresh ? "rolling" : ""} ${cls}`, title: `d${sides}` }, String(face));
}

/** The faces of a die from its notation ("2d6" -> 6, "0-99" -> 100). */
export function sidesOf(notation) {
  const m = /d(\d+)/.exec(notation || "");
  if (m) return Number(m[1]);
  const r = /^(-?\d+)-(\d+)$/.exec(notation || "");
  if (!r) return 6;
  const low = Number(r[1]);
  const high = Number(r[2]);
  return low === 0 ? high + 1 : high; // 0-99 is a d100
}

/** The dice of a list of roll records ({dice, purpose, faces, modifier, total}). */
export function diceTray(rolls, { fresh = false } = {}) {
  return h("div", { class: "rolls" }, rolls.map((roll) =>
    h("div", { class: "roll", dataset: { testid: "roll" } },
      h("span", { class: "roll-purpose" }, roll.purpose),
      h("span", { class: "roll-faces" }, roll.faces.map((f) => die(f, { sides: sidesOf(roll.dice), fresh }))),
      h("span", { class: "roll-total" }, roll.faces.length > 1 || roll.modifier ? `= ${roll.total}` : ""),
      // dice typed in by hand (physical dice): a hand, and who typed them
      roll.physical ? h("span", { class: "roll-physical", title: `real dice, typed by ${roll.entered_by || "hand"}`, role: "img", "aria-label": "real dice" }, handIcon()) : null,
    )));
}

/** A small raised hand (dice typed in by hand): drawn, so it needs no emoji font. */
export function handIcon(cls = "hand-icon") {
  return s("svg", { class: cls, viewBox: "0 0 22 24", width: "1em", height: "1em", "aria-hidden": "true", fill: "currentColor" },
    [5, 8.2, 11.4, 14.6].map((x, i) => s("rect", { x, y: i === 0 || i === 3 ? 4 : 2, width: 2.8, height: 12, rx: 1.4 })),
    s("rect", { x: 5, y: 10, width: 12.4, height: 11, rx: 4.5 }),
    s("rect", { x: 15.5, y: 11, width: 2.8, height: 8, rx: 1.4, transform: "rotate(35 16.9 15)" }));
}

/** Plain label for a value that may be current/max. */
export function slash(current, max) {
  return current === max ? String(current) : `${current}/${max}`;
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", onclick, ...attrs }, label);
}
