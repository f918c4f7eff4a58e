// The fog over a grid (issue 36), for grid.js: the fogged squares of the table's board drawn as one
// path over the map, dark for the TV, the phones and the spectators, dimmed on the GM's console. The
// server never sends a player or the TV what stands on a fogged square (a combatant there comes
// without its square); placedOnly() drops what has no square, so nothing is drawn at NaN.
//
// The spec's `fog`: [[x, y], ...]; `fogLook`: "dim" (the GM's) or "dark" (everyone else's); by default
// the page's role says which (a GM's console dims, every other page darkens).

import { s } from "./ui.js";

const LOOKS = {
  // the TV from across a room: nothing of the map shows through, the fog's edge still reads
  dark: { fill: "#07080c", opacity: "0.97" },
  // the GM sees the map under the fog, tinted and darker, so what is hidden from the table is plain
  dim: { fill: "#0b1020", opacity: "0.55" },
};

export function fogLookOf(spec) {
  if (spec.fogLook === "dim" || spec.fogLook === "dark") return spec.fogLook;
  return document.body && document.body.dataset.role === "gm" ? "dim" : "dark";
}

function onGrid(p, width, height) {
  return Array.isArray(p) && Number.isInteger(p[0]) && Number.isInteger(p[1]) && p[0] >= 0 && p[1] >= 0 && p[0] < width && p[1] < height;
}

// The fogged squares as one path (rows of neighbouring squares joined into one rectangle each).
export function fogPath(fog, width, height, cell) {
  const rows = new Map();
  for (const p of fog || []) {
    if (!onGrid(p, width, height)) continue;
    if (!rows.has(p[1])) rows.set(p[1], []);
    rows.get(p[1]).push(p[0]);
  }
  let d = "";
  let count = 0;
  for (const [y, xs] of rows) {
    xs.sort((a, b) => a - b);
    let start = null;
    let last = null;
    for (const x of [...xs, Infinity]) {
      if (x === last) continue; // (a square listed twice)
      if (start !== null && x !== last + 1) {
        d += `M${start * cell} ${y * cell}H${(last + 1) * cell}V${(y + 1) * cell}H${start * cell}Z`;
        start = null;
      }
      if (x === Infinity) break;
      if (start === null) start = x;
      last = x;
      count += 1;
    }
  }
  return { d, count };
}

// The fog layer of a grid (made once per svg), brought up to date with the spec.
export function drawFog(b, spec) {
  const fog = spec.fog || [];
  const look = fogLookOf(spec);
  const key = `${look}|${JSON.stringify(fog)}`;
  if (b.fogKey === key) return;
  b.fogKey = key;
  const { d, count } = fogPath(fog, b.width, b.height, b.cell);
  const style = LOOKS[look];
  const layer = b.fogLayer;
  layer.dataset.count = String(count);
  layer.dataset.look = look;
  if (!d) { layer.replaceChildren(); return; }
  const parts = [s("path", { class: `fog fog-${look}`, d, fill: style.fill, "fill-opacity": style.opacity, "pointer-events": "none" })];
  if (look === "dim") {
    // the GM's fog is hatched as well as darker: plain at a glance on any map, the map still read through it
    const id = `${b.uid}-fog-hatch`;
    const step = b.cell / 5;
    parts.unshift(s("defs", {}, s("pattern", { id, width: step, height: step, patternUnits: "userSpaceOnUse", patternTransform: "rotate(-45)" },
      s("line", { x1: 0, y1: 0, x2: 0, y2: step, stroke: "#9fb4ea", "stroke-width": Math.max(1, step / 5), "stroke-opacity": "0.45" }))));
    parts.push(s("path", { class: "fog-hatch", d, fill: `url(#${id})`, "pointer-events": "none" }));
  }
  layer.replaceChildren(...parts);
}

// A fresh (empty) fog layer for a grid's svg.
export function fogLayer() {
  return s("g", { class: "grid-fog", "aria-hidden": "true", dataset: { testid: "fog", count: "0" } });
}

const placed = (o) => !!o && Number.isFinite(o.x) && Number.isFinite(o.y);

// The spec without what has no square (a combatant the fog keeps from this page comes without one).
export function placedOnly(spec) {
  const tokens = spec.tokens || [];
  if (tokens.every(placed) && (spec.highlights || []).every(placed) && (spec.rings || []).every(placed)
      && (spec.paths || []).every((p) => (p.points || []).every((q) => Number.isFinite(q[0]) && Number.isFinite(q[1])))) return spec;
  return {
    ...spec,
    tokens: tokens.filter(placed),
    highlights: (spec.highlights || []).filter(placed),
    rings: (spec.rings || []).filter(placed),
    paths: (spec.paths || []).filter((p) => (p.points || []).every((q) => Number.isFinite(q[0]) && Number.isFinite(q[1]))),
  };
}
