// A square grid with tokens, shared by the systems that use positions.
// It only draws what it is given and reports taps and drops; every rule (reach, range, legal
// movement) is computed on the server and arrives in the spec.
//
// renderGrid(container, {
//   width, height,                 // in squares
//   cell: 44,                      // pixels per square (the SVG scales to the container)
//   tokens: [{id, x, y, label, side, cls, title, badge, hp: {current, max}, active, selected, dead}],
//   rings:  [{x, y, r, cls, label}],           // r in squares, centred on a square
//   paths:  [{points: [[x, y], ...], cls, labels: ["1", ...]}],
//   highlights: [{x, y, cls, label}],          // squares to mark (reachable, targets…)
//   onTokenClick(id), onCellClick(x, y), canDrag(id) -> bool, onDrop(id, x, y)
// })

import { s } from "./ui.js";

const SIDE_CLASSES = ["side-a", "side-b", "side-c", "side-d"];

function sideClass(side, sides) {
  const i = sides.indexOf(side);
  return SIDE_CLASSES[i >= 0 ? i % SIDE_CLASSES.length : 0];
}

export function renderGrid(container, spec) {
  const cell = spec.cell || 44;
  const width = Math.max(1, spec.width || 10);
  const height = Math.max(1, spec.height || 10);
  const W = width * cell;
  const H = height * cell;
  const svg = s("svg", { class: "grid", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "battle grid", dataset: { testid: "grid" } });
  const sides = [...new Set((spec.tokens || []).map((t) => t.side))];

  const lines = s("g", { class: "grid-lines" });
  for (let x = 0; x <= width; x++) lines.append(s("line", { x1: x * cell, y1: 0, x2: x * cell, y2: H }));
  for (let y = 0; y <= height; y++) lines.append(s("line", { x1: 0, y1: y * cell, x2: W, y2: y * cell }));
  const cells = s("rect", { class: "grid-bg", x: 0, y: 0, width: W, height: H });
  svg.append(cells, lines);

  const marks = s("g", { class: "grid-highlights" });
  for (const m of spec.highlights || []) {
    const r = s("rect", { class: `highlight ${m.cls || ""}`, x: m.x * cell + 2, y: m.y * cell + 2, width: cell - 4, height: cell - 4, rx: 4 });
    if (m.label) r.append(s("title", {}, m.label));
    marks.append(r);
  }
  svg.append(marks);

  const rings = s("g", { class: "grid-rings" });
  for (const ring of spec.rings || []) {
    const cx = (ring.x + 0.5) * cell;
    const cy = (ring.y + 0.5) * cell;
    rings.append(s("circle", { class: `ring ${ring.cls || ""}`, cx, cy, r: Math.max(0, ring.r) * cell }));
    if (ring.label) rings.append(s("text", { class: `ring-label ${ring.cls || ""}`, x: cx, y: cy - ring.r * cell - 4, "text-anchor": "middle" }, ring.label));
  }
  svg.append(rings);

  const paths = s("g", { class: "grid-paths" });
  for (const path of spec.paths || []) {
    const pts = (path.points || []).map(([x, y]) => `${(x + 0.5) * cell},${(y + 0.5) * cell}`).join(" ");
    paths.append(s("polyline", { class: `path ${path.cls || ""}`, points: pts }));
    (path.points || []).forEach(([x, y], i) => {
      const label = path.labels && path.labels[i];
      if (label) paths.append(s("text", { class: "path-label", x: (x + 0.5) * cell, y: (y + 0.5) * cell + 4, "text-anchor": "middle" }, label));
    });
  }
  svg.append(paths);

  const tokens = s("g", { class: "grid-tokens" });
  for (const t of spec.tokens || []) {
    const g = s("g", {
      class: `token ${sideClass(t.side, sides)} ${t.cls || ""} ${t.active ? "active" : ""} ${t.selected ? "selected" : ""} ${t.dead ? "dead" : ""}`,
      transform: `translate(${(t.x + 0.5) * cell} ${(t.y + 0.5) * cell})`,
      dataset: { testid: `token-${t.id}`, id: t.id },
      tabindex: 0,
    });
    g.append(s("circle", { class: "token-body", r: cell * 0.42 }));
    g.append(s("text", { class: "token-label", "text-anchor": "middle", y: 5 }, (t.label || t.id).slice(0, 3)));
    if (t.hp && t.hp.max > 0) {
      const frac = Math.max(0, Math.min(1, t.hp.current / t.hp.max));
      g.append(s("rect", { class: "token-hp-bg", x: -cell * 0.4, y: cell * 0.3, width: cell * 0.8, height: 5 }));
      g.append(s("rect", { class: "token-hp", x: -cell * 0.4, y: cell * 0.3, width: cell * 0.8 * frac, height: 5 }));
    }
    if (t.badge !== undefined && t.badge !== null && t.badge !== "") {
      const neg = typeof t.badge === "number" ? t.badge < 0 : String(t.badge).startsWith("-");
      g.append(s("circle", { class: `token-badge-bg ${neg ? "negative" : ""}`, cx: cell * 0.34, cy: -cell * 0.34, r: cell * 0.2 }));
      g.append(s("text", { class: `token-badge ${neg ? "negative" : ""}`, x: cell * 0.34, y: -cell * 0.34 + 4, "text-anchor": "middle" }, String(t.badge)));
    }
    g.append(s("title", {}, t.title || t.label || t.id));
    if (spec.onTokenClick) {
      g.addEventListener("click", (ev) => { ev.stopPropagation(); spec.onTokenClick(t.id); });
      g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") spec.onTokenClick(t.id); });
    }
    if (spec.canDrag && spec.canDrag(t.id) && spec.onDrop) makeDraggable(svg, g, t, cell, width, height, spec.onDrop);
    tokens.append(g);
  }
  svg.append(tokens);

  if (spec.onCellClick) {
    svg.addEventListener("click", (ev) => {
      const p = toGrid(svg, ev, cell);
      if (p.x >= 0 && p.y >= 0 && p.x < width && p.y < height) spec.onCellClick(p.x, p.y);
    });
  }
  container.replaceChildren(svg);
  return svg;
}

function toGrid(svg, ev, cell) {
  const pt = svg.createSVGPoint();
  pt.x = ev.clientX;
  pt.y = ev.clientY;
  const ctm = svg.getScreenCTM();
  const p = ctm ? pt.matrixTransform(ctm.inverse()) : { x: 0, y: 0 };
  return { x: Math.floor(p.x / cell), y: Math.floor(p.y / cell) };
}

function makeDraggable(svg, g, token, cell, width, height, onDrop) {
  g.classList.add("draggable");
  let dragging = false;
  let moved = false;
  g.addEventListener("pointerdown", (ev) => {
    dragging = true;
    moved = false;
    g.setPointerCapture(ev.pointerId);
  });
  g.addEventListener("pointermove", (ev) => {
    if (!dragging) return;
    const pt = svg.createSVGPoint();
    pt.x = ev.clientX;
    pt.y = ev.clientY;
    const ctm = svg.getScreenCTM();
    if (!ctm) return;
    const p = pt.matrixTransform(ctm.inverse());
    moved = true;
    g.setAttribute("transform", `translate(${p.x} ${p.y})`);
  });
  g.addEventListener("pointerup", (ev) => {
    if (!dragging) return;
    dragging = false;
    if (!moved) return;
    const p = toGrid(svg, ev, cell);
    const x = Math.max(0, Math.min(width - 1, p.x));
    const y = Math.max(0, Math.min(height - 1, p.y));
    g.setAttribute("transform", `translate(${(x + 0.5) * cell} ${(y + 0.5) * cell})`);
    if (x !== token.x || y !== token.y) onDrop(token.id, x, y);
  });
}
