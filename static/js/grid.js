// A square grid with tokens, shared by the systems that use positions (the GM console, the phones and
// the table display). It only draws what it is given and reports taps and drops; every rule (reach,
// range, legal movement, blocked squares) is computed on the server and arrives in the spec.
//
// renderGrid(container, {
//   width, height,                 // in squares
//   cell: 44,                      // user units per square (the SVG scales to the container)
//   tokens: [{id, x, y, label, name, side, colour, portrait, cls, title, badge,
//             hp: {current, max} | {level: 0..1, label}, active, selected, dead, mine}],
//   rings:  [{x, y, r, cls, label}],           // r in squares, centred on a square
//   paths:  [{points: [[x, y], ...], cls, labels: ["1", ...]}],
//   highlights: [{x, y, cls, label}],          // squares to mark (reachable, targets…)
//   blocked: [[x, y], ...],                    // squares no token may enter: drawn hatched
//   map: {url, width, height, squares_across, offset_x, offset_y} | null,   // an image under the grid
//   names: true,                   // draw each token's `name` under it (tokens with only a `label` show it in the disc)
//   nameSize: 0.24,                // the name's font size, in squares
//   minText: 0,                    // no text smaller than this, in user units (the TV asks for 24 CSS px)
//   view: {x, y, width, height},   // the part of the grid to show, in squares (default: all of it)
//   zoomable: false,               // pinch-zoom / wheel-zoom and drag to pan; taps still work
//   onTokenClick(id), onCellClick(x, y), canDrag(id) -> bool, onDrop(id, x, y)
// })
//
// The map's geometry. The image is `map.width` × `map.height` pixels and carries a grid of its own.
// `squares_across` of the map's squares span the image's full width, so one map square is
// width / squares_across image pixels on each side (squares are square). `offset_x`, `offset_y` is
// the image pixel where the map grid's first lines cross (the top-left corner of the map's first
// square); that point is laid on the board's (0, 0) corner. So, in board squares, the image's
// top-left corner is at (-offset_x / p, -offset_y / p) and it is width / p squares wide and
// height / p squares tall, with p = width / squares_across. The part outside the board is clipped.
//
// Each token is drawn as <g data-testid="token" data-combatant="<id>" class="token side-…"> holding an
// inner <g data-testid="token-<id>" data-id="<id>">: the side's colour (or the token's own colour) and
// its shape with its letter, so no one needs to tell colours apart; a health ring; the name under it.

import { s } from "./ui.js";
import { sideMark, shortName } from "./kit.js";

let gridCount = 0;

function initials(t) {
  if (t.label && !t.name) return String(t.label).slice(0, 3);
  const words = String(t.name || t.label || t.id).split(/[\s()-]+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  if (words.length >= 2) return (words[0][0] + words[1][0]).toUpperCase();
  return (words[0] || String(t.id)).slice(0, 2);
}

function hpFraction(hp) {
  if (!hp) return null;
  if (typeof hp.level === "number") return Math.max(0, Math.min(1, hp.level));
  if (hp.max > 0) return Math.max(0, Math.min(1, hp.current / hp.max));
  return null;
}

function sideShape(shape, r) {
  if (shape === "square") return s("rect", { x: -r * 0.85, y: -r * 0.85, width: r * 1.7, height: r * 1.7, rx: r * 0.15 });
  if (shape === "triangle") return s("polygon", { points: `0,${-r} ${r * 0.95},${r * 0.75} ${-r * 0.95},${r * 0.75}` });
  if (shape === "diamond") return s("polygon", { points: `0,${-r} ${r},0 0,${r} ${-r},0` });
  return s("circle", { r });
}

export function renderGrid(container, spec) {
  const cell = spec.cell || 44;
  const width = Math.max(1, spec.width || 10);
  const height = Math.max(1, spec.height || 10);
  const W = width * cell;
  const H = height * cell;
  const uid = `g${++gridCount}`;
  const minText = spec.minText || 0;
  const fs = (size) => ({ "font-size": `${Math.max(size, minText)}px` });
  const v = spec.view || { x: 0, y: 0, width, height };
  const svg = s("svg", {
    class: `grid${spec.zoomable ? " zoomable" : ""}`,
    viewBox: `${v.x * cell} ${v.y * cell} ${v.width * cell} ${v.height * cell}`,
    // a picture when nothing in it can be used; a group when its tokens take taps and keys (axe:
    // an image may not hold focusable parts)
    role: spec.onTokenClick || spec.onCellClick || spec.onDrop ? "group" : "img", "aria-label": "battle grid", dataset: { testid: "grid" },
  });
  const sides = [...new Set((spec.tokens || []).map((t) => t.side))].sort();

  const defs = s("defs", {},
    s("clipPath", { id: `${uid}-clip` }, s("rect", { x: 0, y: 0, width: W, height: H })),
    s("pattern", { id: `${uid}-hatch`, width: cell / 4, height: cell / 4, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { class: "blocked-hatch-bg", width: cell / 4, height: cell / 4 }),
      s("line", { class: "blocked-hatch", x1: 0, y1: 0, x2: 0, y2: cell / 4 })),
  );
  svg.append(defs);
  const cells = s("rect", { class: "grid-bg", x: 0, y: 0, width: W, height: H });
  svg.append(cells);

  const map = spec.map;
  if (map && map.url && map.width > 0 && map.height > 0 && map.squares_across > 0) {
    const p = map.width / map.squares_across; // image pixels per square
    const k = cell / p; // user units per image pixel
    svg.append(s("image", {
      class: "grid-map", href: map.url, x: -(map.offset_x || 0) * k, y: -(map.offset_y || 0) * k,
      width: map.width * k, height: map.height * k, preserveAspectRatio: "none", "clip-path": `url(#${uid}-clip)`,
      dataset: { testid: "grid-map" },
    }));
    svg.classList.add("has-map");
  }

  // every grid line in one path (one element, not one per line: cheaper to build, style and paint)
  let d = "";
  for (let x = 0; x <= width; x++) d += `M${x * cell} 0V${H}`;
  for (let y = 0; y <= height; y++) d += `M0 ${y * cell}H${W}`;
  svg.append(s("g", { class: "grid-lines" }, s("path", { d, fill: "none" })));

  const blocked = s("g", { class: "grid-blocked" });
  for (const sq of spec.blocked || []) {
    const [x, y] = sq;
    if (!(x >= 0 && y >= 0 && x < width && y < height)) continue;
    blocked.append(s("rect", { class: "blocked", x: x * cell, y: y * cell, width: cell, height: cell, fill: `url(#${uid}-hatch)`, dataset: { testid: "blocked", x, y } },
      s("title", {}, "blocked")));
  }
  svg.append(blocked);

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
    if (ring.label) rings.append(s("text", { class: `ring-label ${ring.cls || ""}`, x: cx, y: cy - ring.r * cell - 4, "text-anchor": "middle", style: minText ? fs(0) : null }, ring.label));
  }
  svg.append(rings);

  const paths = s("g", { class: "grid-paths" });
  for (const path of spec.paths || []) {
    const pts = (path.points || []).map(([x, y]) => `${(x + 0.5) * cell},${(y + 0.5) * cell}`).join(" ");
    paths.append(s("polyline", { class: `path ${path.cls || ""}`, points: pts }));
    (path.points || []).forEach(([x, y], i) => {
      const label = path.labels && path.labels[i];
      if (label) paths.append(s("text", { class: "path-label", x: (x + 0.5) * cell, y: (y + 0.5) * cell + 4, "text-anchor": "middle", style: minText ? fs(0) : null }, label));
    });
  }
  svg.append(paths);

  const showNames = spec.names !== false;
  const nameSize = (spec.nameSize || 0.24) * cell;
  const tokens = s("g", { class: "grid-tokens" });
  const names = s("g", { class: "grid-token-names", "aria-hidden": "true" });
  const occupied = new Set((spec.tokens || []).map((t) => `${t.x},${t.y}`));
  const ordered = [...(spec.tokens || [])].sort((a, b) => (a.active ? 1 : 0) - (b.active ? 1 : 0));
  for (const t of ordered) {
    const mark = sideMark(t.side, sides);
    const r = cell * 0.42;
    const outer = s("g", {
      class: `token ${mark.cls} ${t.cls || ""} ${t.active ? "active" : ""} ${t.selected ? "selected" : ""} ${t.dead ? "dead" : ""}`,
      dataset: { testid: "token", combatant: t.id, id: t.id, side: t.side ?? "" },
      tabindex: spec.onTokenClick ? 0 : null,
      role: spec.onTokenClick ? "button" : null,
      "aria-label": t.title || t.name || t.label || t.id,
    });
    // the inner element carries the position (as it always has: tests and modules read its transform)
    const inner = s("g", { class: "token-inner", transform: `translate(${(t.x + 0.5) * cell} ${(t.y + 0.5) * cell})`, dataset: { testid: `token-${t.id}`, id: t.id } });
    if (t.active) inner.append(s("circle", { class: "token-active-halo", r: cell * 0.56, "stroke-width": cell * 0.06 }));
    const body = s("circle", { class: "token-body", r });
    if (t.colour) body.style.setProperty("fill", t.colour);
    inner.append(body);
    if (t.portrait) {
      const clip = `${uid}-p-${String(t.id).replace(/[^A-Za-z0-9_-]/g, "")}`;
      defs.append(s("clipPath", { id: clip }, s("circle", { r: r * 0.9 })));
      inner.append(s("image", { class: "token-portrait", href: t.portrait, x: -r * 0.9, y: -r * 0.9, width: r * 1.8, height: r * 1.8, preserveAspectRatio: "xMidYMid slice", "clip-path": `url(#${clip})` }));
    } else {
      inner.append(s("text", { class: "token-label", "text-anchor": "middle", "dominant-baseline": "central", style: fs(cell * 0.3) }, initials(t)));
    }
    const frac = hpFraction(t.hp);
    if (frac !== null) {
      const rr = cell * 0.465;
      const circ = 2 * Math.PI * rr;
      const level = frac > 0.5 ? "high" : frac > 0.25 ? "mid" : "low";
      inner.append(s("circle", { class: "token-ring-bg", r: rr, "stroke-width": cell * 0.06 }));
      inner.append(s("circle", { class: `token-ring token-ring-${level}`, r: rr, "stroke-width": cell * 0.06, "stroke-dasharray": `${(frac * circ).toFixed(2)} ${circ.toFixed(2)}`, transform: "rotate(-90)" }));
    }
    // the side: its shape with its letter, at the token's lower left
    const sr = Math.max(cell * 0.16, minText / 1.25);
    const badge = s("g", { class: `token-side kit-shape-${mark.shape}`, transform: `translate(${-cell * 0.33} ${cell * 0.3})` }, sideShape(mark.shape, sr),
      s("text", { class: "token-side-letter", "text-anchor": "middle", "dominant-baseline": "central", style: fs(sr * 1.25), y: mark.shape === "triangle" ? sr * 0.2 : 0 }, mark.letter));
    inner.append(badge);
    if (t.badge !== undefined && t.badge !== null && t.badge !== "") {
      const neg = typeof t.badge === "number" ? t.badge < 0 : String(t.badge).startsWith("-");
      const br = Math.max(cell * 0.2, minText * 0.8);
      inner.append(s("circle", { class: `token-badge-bg ${neg ? "negative" : ""}`, cx: cell * 0.34, cy: -cell * 0.34, r: br }));
      inner.append(s("text", { class: `token-badge ${neg ? "negative" : ""}`, x: cell * 0.34, y: -cell * 0.34, "text-anchor": "middle", "dominant-baseline": "central", style: fs(cell * 0.2) }, String(t.badge)));
    }
    if (t.dead) inner.append(s("path", { class: "token-dead-mark", d: `M${-r * 0.6},${-r * 0.6} L${r * 0.6},${r * 0.6} M${r * 0.6},${-r * 0.6} L${-r * 0.6},${r * 0.6}` }));
    inner.append(s("title", {}, t.title || t.name || t.label || t.id));
    outer.append(inner);
    if (showNames && t.name) {
      // side by side with another token, every other name goes above its token so the two stay apart
      const crowded = occupied.has(`${t.x - 1},${t.y}`) || occupied.has(`${t.x + 1},${t.y}`);
      const above = crowded && t.x % 2 === 1;
      const text = shortName(t.name, crowded ? 10 : 16);
      const name = s("text", {
        class: "token-name", "text-anchor": "middle", "dominant-baseline": above ? "auto" : "hanging",
        y: above ? -cell * 0.5 : cell * 0.47, style: fs(nameSize),
      }, text);
      // keep the name inside the part of the grid shown (a token at the edge would lose its ends)
      const half = text.length * 0.34 * Math.max(nameSize, minText) + cell * 0.05;
      const cx = (t.x + 0.5) * cell;
      const left = v.x * cell;
      const right = (v.x + v.width) * cell;
      const shift = cx + half > right ? right - (cx + half) : cx - half < left ? left - (cx - half) : 0;
      if (shift) name.setAttribute("x", String(shift));
      name.dataset.combatant = t.id;
      names.append(name);
      name.setAttribute("transform", `translate(${(t.x + 0.5) * cell} ${(t.y + 0.5) * cell})`);
      if (t.active) name.classList.add("active");
    }
    if (spec.onTokenClick) {
      outer.addEventListener("click", (ev) => { ev.stopPropagation(); spec.onTokenClick(t.id); });
      outer.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") spec.onTokenClick(t.id); });
    }
    if (spec.canDrag && spec.canDrag(t.id) && spec.onDrop) makeDraggable(svg, inner, t, cell, width, height, spec.onDrop);
    tokens.append(outer);
  }
  svg.append(tokens, names);

  if (spec.onCellClick) {
    svg.addEventListener("click", (ev) => {
      const p = toGrid(svg, ev, cell);
      if (p.x >= 0 && p.y >= 0 && p.x < width && p.y < height) spec.onCellClick(p.x, p.y);
    });
  }
  if (spec.zoomable) makeZoomable(svg, { x: 0, y: 0, w: W, h: H }, v, cell);
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
    ev.stopPropagation(); // a token's drag is not the board's pan
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
  g.addEventListener("pointercancel", () => { dragging = false; });
}

// Zoom and pan by changing the viewBox: two fingers pinch, one finger (or the mouse) drags, the wheel
// zooms. A press that moves less than a few pixels stays a tap (its click goes through); after a
// drag the click that follows is swallowed. The zoom is kept per grid container across re-renders.
const zoomMemory = new WeakMap();

function makeZoomable(svg, full, initial, cell) {
  const start = { x: initial.x * cell, y: initial.y * cell, w: initial.width * cell, h: initial.height * cell };
  let vb = { ...start };
  const minW = Math.min(full.w, cell * 3);
  const apply = () => {
    vb.w = Math.max(minW, Math.min(full.w, vb.w));
    vb.h = vb.w * (start.h / start.w);
    vb.x = Math.max(full.x - vb.w * 0.25, Math.min(full.x + full.w - vb.w * 0.75, vb.x));
    vb.y = Math.max(full.y - vb.h * 0.25, Math.min(full.y + full.h - vb.h * 0.75, vb.y));
    svg.setAttribute("viewBox", `${vb.x} ${vb.y} ${vb.w} ${vb.h}`);
    const holder = svg.parentNode;
    if (holder) zoomMemory.set(holder, { ...vb, baseW: start.w });
  };
  queueMicrotask(() => {
    const holder = svg.parentNode;
    const kept = holder && zoomMemory.get(holder);
    if (kept && kept.baseW === start.w) { vb = { x: kept.x, y: kept.y, w: kept.w, h: kept.h }; apply(); }
  });
  const pointers = new Map();
  let moved = false;
  let pinch = null;
  const unitsPerPx = () => {
    const r = svg.getBoundingClientRect();
    return r.width > 0 ? vb.w / r.width : 1;
  };
  svg.addEventListener("pointerdown", (ev) => {
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY, sx: ev.clientX, sy: ev.clientY });
    if (pointers.size === 1) moved = false;
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { d: Math.hypot(a.x - b.x, a.y - b.y) || 1, vb: { ...vb }, cx: (a.x + b.x) / 2, cy: (a.y + b.y) / 2 };
    }
  });
  svg.addEventListener("pointermove", (ev) => {
    const p = pointers.get(ev.pointerId);
    if (!p) return;
    const dx = ev.clientX - p.x;
    const dy = ev.clientY - p.y;
    p.x = ev.clientX;
    p.y = ev.clientY;
    if (!moved && Math.hypot(p.x - p.sx, p.y - p.sy) < 8) return;
    if (!moved) { moved = true; try { svg.setPointerCapture(ev.pointerId); } catch { /* gone */ } }
    if (pointers.size >= 2 && pinch) {
      const [a, b] = [...pointers.values()];
      const d = Math.hypot(a.x - b.x, a.y - b.y) || 1;
      const rect = svg.getBoundingClientRect();
      const k = pinch.d / d;
      const fx = (pinch.cx - rect.left) / rect.width;
      const fy = (pinch.cy - rect.top) / rect.height;
      const w = pinch.vb.w * k;
      vb.w = w;
      vb.x = pinch.vb.x + (pinch.vb.w - w) * fx;
      vb.y = pinch.vb.y + (pinch.vb.h - w * (start.h / start.w)) * fy;
      apply();
    } else if (pointers.size === 1) {
      const u = unitsPerPx();
      vb.x -= dx * u;
      vb.y -= dy * u;
      apply();
    }
  });
  const end = (ev) => {
    pointers.delete(ev.pointerId);
    if (pointers.size < 2) pinch = null;
  };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  svg.addEventListener("click", (ev) => {
    if (moved) { ev.stopPropagation(); ev.preventDefault(); moved = false; }
  }, true);
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const rect = svg.getBoundingClientRect();
    const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    const fx = (ev.clientX - rect.left) / rect.width;
    const fy = (ev.clientY - rect.top) / rect.height;
    const w = vb.w * k;
    const hh = w * (start.h / start.w);
    vb.x += (vb.w - w) * fx;
    vb.y += (vb.h - hh) * fy;
    vb.w = w;
    apply();
  }, { passive: false });
}
