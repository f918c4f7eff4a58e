// A square grid with tokens, shared by the systems that use positions (the GM console, the phones and
// the table display). It only draws what it is given and reports taps and drops; every rule (reach,
// range, legal movement, blocked squares) is computed on the server and arrives in the spec.
//
// renderGrid(container, {
//   width, height,                 // in squares
//   cell: 44,                      // user units per square (the SVG scales to the container)
//   tokens: [{id, x, y, label, name, side, colour, portrait, cls, title, badge,
//             hp: {current, max} | {level: 0..1, label}, active, selected, dead, mine,
//             out: "unconscious" | "fled" | …}],   // out of the fight: greyed, the word after its name
//   rings:  [{x, y, r, cls, label}],           // r in squares, centred on a square
//   paths:  [{points: [[x, y], ...], cls, labels: ["1", ...]}],
//   highlights: [{x, y, cls, label}],          // squares to mark (reachable, targets…)
//   blocked: [[x, y], ...],                    // squares no token may enter: drawn hatched
//   fog: [[x, y], ...], fogLook: "dim" | "dark", // fogged squares (fog.js): dark, or dimmed on the GM's console
//   map: {url, width, height, squares_across, offset_x, offset_y} | null,   // an image under the grid
//   names: true,                   // draw each token's `name` under it (tokens with only a `label` show it in the disc)
//   nameSize: 0.24,                // the name's font size, in squares
//   minText: 0,                    // no text smaller than this, in user units (the TV asks for 24 CSS px)
//   view: {x, y, width, height},   // the part of the grid to show, in squares (default: all of it)
//   zoomable: false,               // pinch-zoom / wheel-zoom and drag to pan; taps still work
//   wheelZoom: "modifier",         // (zoomable) the wheel zooms only with Ctrl or ⌘: it scrolls the page
//   fit: {minPx: 48, floorPx} | null, // zoomable, no `view`: open on the fight at minPx a square (see fitGrid),
//                                  // with a button under the grid for the whole board and back; a fight
//                                  // too spread out for squares of floorPx: the part round the one acting
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
//
// Called again on the same container, it updates what it drew there instead of drawing afresh: the
// <svg>, its grid lines, map and blocked squares stay while the size, map and blocked squares stay
// the same; each token is kept by id (moved by its inner transform, its look redrawn only when it
// changes), so a kept element is the same node from one update to the next, and the callbacks called
// are always those of the latest spec. The active token's halo is made when it becomes active (its
// one turn plays then) and kept while it stays active. A container emptied or refilled by its caller
// since gets a fresh grid.

import { h, s } from "./ui.js";
import { nameLetters, sideMark, shortName } from "./kit.js";
import { drawFog, fogLayer, placedOnly } from "./fog.js";

let gridCount = 0;

// What each container holds (the display's board, a console's or a phone's grid box, the Map panel's
// preview, the replay page's board): its <svg>, the layers in it, its tokens by id, its zoom and the
// spec of the last call. Every listener reads the spec from here, so an element kept across updates
// calls the latest callbacks.
const boards = new WeakMap();

function initials(t) {
  if (t.label && !t.name) return String(t.label).slice(0, 3);
  return nameLetters(t.name || t.label || t.id);
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

// Write an attribute only when its value changes (null removes it): a write, even of the same value,
// makes the browser recompute the element's style.
function setAttr(el, name, value) {
  if (value === null || value === undefined) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return;
  }
  const text = String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}

// Put `nodes` in this order as `parent`'s children (dropping any other child), moving as few as can
// be: those in the longest run already in order stay put. A moved element is styled and laid out
// afresh and restarts its animations: when the turn passes, only the two tokens whose places change
// move, and the active token's halo keeps turning while it stays active.
function reorder(parent, nodes) {
  const index = new Map(nodes.map((n, i) => [n, i]));
  for (let c = parent.firstChild; c;) {
    const next = c.nextSibling;
    if (!index.has(c)) c.remove();
    c = next;
  }
  // the longest increasing run of the children's wanted places (patience sorting)
  const seq = [];
  for (let c = parent.firstChild; c; c = c.nextSibling) seq.push(index.get(c));
  const tails = []; // tails[k]: the position in seq of the smallest end of a run of length k + 1
  const prev = new Array(seq.length);
  for (let i = 0; i < seq.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]] < seq[i]) lo = mid + 1;
      else hi = mid;
    }
    prev[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
  }
  const stay = new Set();
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) stay.add(seq[i]);
  let after = null;
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (!stay.has(i)) parent.insertBefore(nodes[i], after);
    after = nodes[i];
  }
}

// What stays between updates: the board's size, the map and the blocked squares (and whether it zooms).
function geometryOf(spec) {
  const cell = spec.cell || 44;
  const width = Math.max(1, spec.width || 10);
  const height = Math.max(1, spec.height || 10);
  const m = spec.map;
  const map = m && m.url && m.width > 0 && m.height > 0 && m.squares_across > 0 ? m : null;
  const blocked = (spec.blocked || []).filter((sq) => {
    const [x, y] = sq;
    return x >= 0 && y >= 0 && x < width && y < height;
  });
  const zoomable = !!spec.zoomable;
  const fits = zoomable && !!spec.fit && !spec.view;
  const key = JSON.stringify([cell, width, height, zoomable, fits,
    map && [map.url, map.width, map.height, map.squares_across, map.offset_x || 0, map.offset_y || 0],
    blocked.map(([x, y]) => [x, y])]);
  return { cell, width, height, W: width * cell, H: height * cell, map, blocked, zoomable, fits, key };
}

/**
 * Draw the grid in `container`, or bring the one drawn there last time up to date: when the board's
 * geometry, map and blocked squares are those of the last call on this container and its <svg> is
 * still the container's only child, the svg and its static layers are kept, the overlays (highlights,
 * rings, paths) are redrawn only when they change and each token is updated in place by id (its
 * position, ring, badge, classes), so an update costs the browser only what changed. Otherwise the
 * grid is drawn afresh. Returns the <svg>.
 */
export function renderGrid(container, given) {
  const spec = placedOnly(given); // (what the fog keeps from this page comes without a square)
  const geo = geometryOf(spec);
  let b = boards.get(container);
  const kept = b && b.key === geo.key && b.svg.parentNode === container && container.childNodes.length === (b.frameButton ? 2 : 1) &&
    (!b.frameButton || b.frameButton.parentNode === container);
  if (!kept) {
    if (b && b.resize) b.resize.disconnect();
    b = build(container, geo, b);
    boards.set(container, b);
  } else if (b.svg.childElementCount !== b.layers.length) {
    // a caller added its own marks to the svg last time (costs, labels): they go, as a redraw dropped them
    for (const el of [...b.svg.children]) if (!b.layers.includes(el)) el.remove();
  }
  b.spec = spec;
  update(b, spec);
  return b.svg;
}

function build(container, geo, prev) {
  const { cell, width, height, W, H, map } = geo;
  const uid = `g${++gridCount}`;
  const svg = s("svg", {
    class: `grid${geo.zoomable ? " zoomable" : ""}${map ? " has-map" : ""}`,
    "aria-label": "battle grid", dataset: { testid: "grid", cell }, // (cell: user units a square, for the fog tools)
  });
  const defs = s("defs", {},
    s("clipPath", { id: `${uid}-clip` }, s("rect", { x: 0, y: 0, width: W, height: H })),
    s("pattern", { id: `${uid}-hatch`, width: cell / 4, height: cell / 4, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { class: "blocked-hatch-bg", width: cell / 4, height: cell / 4 }),
      s("line", { class: "blocked-hatch", x1: 0, y1: 0, x2: 0, y2: cell / 4 })),
  );
  const layers = [defs, s("rect", { class: "grid-bg", x: 0, y: 0, width: W, height: H })];

  if (map) {
    const p = map.width / map.squares_across; // image pixels per square
    const k = cell / p; // user units per image pixel
    layers.push(s("image", {
      class: "grid-map", href: map.url, x: -(map.offset_x || 0) * k, y: -(map.offset_y || 0) * k,
      width: map.width * k, height: map.height * k, preserveAspectRatio: "none", "clip-path": `url(#${uid}-clip)`,
      dataset: { testid: "grid-map" },
    }));
  }

  // every grid line in one path (one element, not one per line: cheaper to build, style and paint)
  let d = "";
  for (let x = 0; x <= width; x++) d += `M${x * cell} 0V${H}`;
  for (let y = 0; y <= height; y++) d += `M0 ${y * cell}H${W}`;
  layers.push(s("g", { class: "grid-lines" }, s("path", { d, fill: "none" })));

  const blocked = s("g", { class: "grid-blocked" });
  for (const [x, y] of geo.blocked) {
    blocked.append(s("rect", { class: "blocked", x: x * cell, y: y * cell, width: cell, height: cell, fill: `url(#${uid}-hatch)`, dataset: { testid: "blocked", x, y } },
      s("title", {}, "blocked")));
  }
  layers.push(blocked);
  const fog = fogLayer(); // the fog over the map (fog.js), under the marks and tokens
  layers.push(fog);

  const highlights = s("g", { class: "grid-highlights" });
  const rings = s("g", { class: "grid-rings" });
  const paths = s("g", { class: "grid-paths" });
  const tokens = s("g", { class: "grid-tokens" });
  const names = s("g", { class: "grid-token-names", "aria-hidden": "true" });
  layers.push(highlights, rings, paths, tokens, names);
  svg.append(...layers);

  const b = {
    key: geo.key, svg, defs, uid, cell, width, height, W, H, layers,
    highlights, rings, paths, tokens: new Map(), tokenLayer: tokens, nameLayer: names, fogLayer: fog, fogKey: null,
    overlayKeys: {}, clips: new Set(), spec: null, zoom: null,
    container, frameButton: null, resize: null, boxWidth: 0, screenHeight: 0, fitted: null,
  };
  svg.addEventListener("click", (ev) => {
    const onCellClick = b.spec && b.spec.onCellClick;
    if (!onCellClick) return;
    const p = toGrid(svg, ev, cell);
    if (p.x >= 0 && p.y >= 0 && p.x < width && p.y < height) onCellClick(p.x, p.y);
  });
  if (geo.zoomable) {
    // the zoom is kept per container across redraws of the same board size
    const old = prev && prev.zoom && prev.W === W ? prev.zoom : null;
    b.zoom = { start: old ? old.start : null, vb: old ? { ...old.vb } : null, mode: old ? old.mode : "fit", apply: null };
    makeZoomable(b);
  }
  if (geo.fits) {
    // the board's width, read once here and then told by the observer (never read during an update)
    b.boxWidth = prev && prev.boxWidth ? prev.boxWidth : 0;
    b.fitted = prev && prev.fitted ? prev.fitted : null;
    b.frameButton = h("button", { type: "button", class: "grid-frame-button", hidden: true, dataset: { testid: "grid-frame" } });
    b.frameButton.addEventListener("click", () => {
      const z = b.zoom;
      z.mode = z.mode === "fit" ? "whole" : "fit";
      if (b.spec) update(b, b.spec); // (framed again, the names placed in the part now shown)
      else frame(b);
    });
    container.replaceChildren(svg, b.frameButton);
    if (!b.boxWidth) b.boxWidth = container.clientWidth;
    b.screenHeight = window.innerHeight; // (both force a layout: read here, when the grid is built, and when it is resized)
    if (typeof ResizeObserver === "function") {
      b.resize = new ResizeObserver((entries) => {
        if (!container.isConnected || boards.get(container) !== b) { b.resize.disconnect(); return; } // (a box thrown away)
        const w = entries[entries.length - 1].contentRect.width;
        if (!w || Math.abs(w - b.boxWidth) < 1) return;
        b.boxWidth = w; // a phone turned: the fight is framed again for the new width
        b.screenHeight = window.innerHeight;
        if (b.spec) update(b, b.spec);
      });
      b.resize.observe(container);
    }
  } else {
    container.replaceChildren(svg);
  }
  return b;
}

/**
 * The grid a system module draws through (its ctx.grid), with the table's board under it: the map,
 * the blocked squares (the battle's own win over the table's) and each token's colour and portrait;
 * the module passes the battle's positions. A zoomable grid (a phone's) opens on the fight at a
 * square a finger can tap, with a button for the whole board: a wide battlefield in a phone's width
 * has squares of 15 px, and in a laptop console's 25 px. Used by the GM console (whose wheel scrolls
 * the page unless Ctrl or ⌘ is held: `wheelZoom`; and whose squares stay of `floorPx` or more),
 * the phones and the spectator's detail board.
 */
export function onTheBoard(board, view, { wheelZoom = null, floorPx = 0 } = {}) {
  const looks = (board && board.tokens) || {};
  return {
    renderGrid: (container, spec) => renderGrid(container, {
      map: (board && board.map) || null,
      blocked: (view && view.blocked) || (board && board.blocked) || [],
      fog: (board && board.fog) || [],
      fit: spec.zoomable ? { minPx: 48, floorPx } : null,
      wheelZoom,
      ...spec,
      tokens: (spec.tokens || []).map((t) => ({ ...(looks[t.id] || {}), ...t })),
    }),
  };
}

/**
 * The part of a width × height grid to show in a box of box.width × box.height pixels: the whole grid
 * when a square gets at least minPx pixels that way; otherwise the squares around `points` (tokens,
 * path points) at minPx a square, or as close to it as those points allow. With `maxPx`, the squares
 * around the points are framed even when the whole grid would read well (the table display frames
 * the fight, not an empty battlefield), at no more than maxPx a square. Returns a view in squares
 * with the box's aspect ratio. (The table display frames its board with it, and a phone its grid.)
 */
export function fitGrid(width, height, points, box, minPx = 84, maxPx = 0) {
  const aspect = box.width / Math.max(1, box.height);
  const cover = (w, h2) => (w / h2 < aspect ? [h2 * aspect, h2] : [w, w / aspect]);
  const pad = 0.3; // a token's halo and badge on the edge squares stay on the screen
  let [vw, vh] = cover(width + 2 * pad, height + 2 * pad);
  const whole = { x: (width - vw) / 2, y: (height - vh) / 2, width: vw, height: vh };
  if ((!maxPx && box.width / vw >= minPx) || !points.length) return whole;
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const minX = Math.min(...xs) - 1;
  const maxX = Math.max(...xs) + 2;
  const minY = Math.min(...ys) - 1;
  const maxY = Math.max(...ys) + 2.4; // room for the names under the lowest tokens
  const px = maxPx || minPx;
  [vw, vh] = cover(Math.max(box.width / px, maxX - minX), Math.max(box.height / px, maxY - minY));
  if (vw >= whole.width) return whole; // (points all over the board: no part of it is closer)
  const place = (lo, hi, size, total) => {
    if (size >= total + 2 * pad) return (total - size) / 2;
    return Math.max(-pad, Math.min(total + pad - size, (lo + hi) / 2 - size / 2));
  };
  return { x: place(minX, maxX, vw, width), y: place(minY, maxY, vh, height), width: vw, height: vh };
}

/**
 * A close-up at minPx a square of a fight too spread out to frame whole at a size a finger can use
 * and an eye can read (Eclipse Phase's sides begin at the two ends of the board): the part around
 * `focus` (the combatant acting, or the viewer's own), else around the most tokens one view holds.
 */
export function closeUp(width, height, points, box, minPx, focus = null) {
  const aspect = box.width / Math.max(1, box.height);
  const vw = box.width / minPx;
  const vh = vw / aspect;
  let centre = focus;
  if (!centre) {
    let most = -1;
    for (const [x, y] of points) {
      const held = points.filter(([px2, py]) => Math.abs(px2 - x) <= vw / 2 - 1 && Math.abs(py - y) <= vh / 2 - 1);
      if (held.length > most) {
        most = held.length;
        centre = [held.reduce((a, p) => a + p[0], 0) / held.length, held.reduce((a, p) => a + p[1], 0) / held.length];
      }
    }
  }
  if (!centre) return fitGrid(width, height, [], box);
  const pad = 0.3;
  const place = (c, size, total) => (size >= total + 2 * pad ? (total - size) / 2 : Math.max(-pad, Math.min(total + pad - size, c + 0.5 - size / 2)));
  return { x: place(centre[0], vw, width), y: place(centre[1], vh, height), width: vw, height: vh };
}

/**
 * `view` unless the one shown last (`last`: {key, view}) still holds it: while the newly fitted view
 * lies inside the last one and is not much smaller, the last one stays, so the board does not shift
 * and rescale at each move. Returns [the view to show, the new `last`].
 */
export function steadyView(last, view, key) {
  if (last && last.key === key) {
    const v = last.view;
    const e = 1e-6;
    const inside = view.x >= v.x - e && view.y >= v.y - e && view.x + view.width <= v.x + v.width + e && view.y + view.height <= v.y + v.height + e;
    if (inside && view.width >= v.width * 0.85) return [v, last];
  }
  return [view, { key, view }];
}

// A phone's grid (spec.fit): the fight framed at spec.fit.minPx a square in the board's width, in
// the board's own shape (no taller than three quarters of the screen). The points framed are the
// living tokens and the squares the player is offered (a move's reach, a path), not the rings: a
// charge's reach would frame the whole board again.
function fittedView(b, spec) {
  const { width, height } = b;
  const px = b.boxWidth;
  if (!px) return null;
  const box = { width: px, height: Math.min((px * height) / width, b.screenHeight * 0.75 || Infinity) };
  const tokens = spec.tokens || [];
  const living = tokens.filter((t) => !t.dead);
  const points = (living.length ? living : tokens).map((t) => [t.x, t.y]);
  for (const m of spec.highlights || []) points.push([m.x, m.y]);
  for (const p of spec.paths || []) for (const pt of p.points || []) points.push(pt);
  const minPx = spec.fit.minPx || 48;
  const whole = fitGrid(width, height, [], box);
  let fitted = fitGrid(width, height, points, box, minPx);
  // (a console's) a fight too spread out to frame with squares of floorPx (40 px: tokens of 33): the
  // part of it around the one acting, with the whole board a click away
  if (spec.fit.floorPx && px / fitted.width < spec.fit.floorPx) {
    const focus = living.find((t) => t.active) || living.find((t) => t.selected) || living.find((t) => t.mine) || null;
    fitted = closeUp(width, height, points, box, minPx, focus && [focus.x, focus.y]);
  }
  if (fitted.width >= whole.width * 0.8) fitted = whole; // (a close-up of nearly all of it is no close-up)
  const [view, last] = steadyView(b.fitted, fitted, [width, height, Math.round(px), Math.round(box.height), minPx].join(" "));
  b.fitted = last;
  return view;
}

// The zoom's modes: "fit" shows the view the spec asks for (a phone's close-up of the fight), "whole"
// the whole board, "free" where the player pinched or dragged it. The button under a phone's grid
// goes from the close-up to the whole board and back, and from a pinch back to the close-up.
function wholeView(b) {
  const z = b.zoom;
  const ratio = z.start.h / z.start.w;
  const pad = 0.6 * b.cell; // (as fitGrid's whole board: the tokens on the edge keep their halos)
  const w = Math.max(b.W + pad, (b.H + pad) / ratio);
  return { x: (b.W - w) / 2, y: (b.H - w * ratio) / 2, w, h: w * ratio };
}

function frame(b) {
  const z = b.zoom;
  if (z.mode === "whole") z.vb = wholeView(b);
  else if (z.mode === "fit") z.vb = { ...z.start };
  z.apply();
  const button = b.frameButton;
  if (!button) return;
  const closeUp = z.start.w < wholeView(b).w * 0.95;
  if (z.mode === "whole" && !closeUp) z.mode = "fit"; // (the close-up grew to the whole board)
  // from the close-up, the whole board; from the whole board or a pinch, back to what the spec asks
  const label = z.mode === "fit" ? (closeUp ? "Whole board" : "") : closeUp ? "Close up" : "Whole board";
  if (button.textContent !== label) button.textContent = label;
  if (button.hidden !== !label) button.hidden = !label;
}

function update(b, spec) {
  const { svg, cell, width, height } = b;
  const minText = spec.minText || 0;
  const fsText = (size) => `${Math.max(size, minText)}px`;
  const v = spec.view || (b.frameButton && fittedView(b, spec)) || { x: 0, y: 0, width, height };
  // a picture when nothing in it can be used; a group when its tokens take taps and keys (axe: an
  // image may not hold focusable parts)
  setAttr(svg, "role", spec.onTokenClick || spec.onCellClick || spec.onDrop ? "group" : "img");
  if (b.zoom) {
    const z = b.zoom;
    const start = { x: v.x * cell, y: v.y * cell, w: v.width * cell, h: v.height * cell };
    // a new shown part of another width starts a pinched zoom over; otherwise the pan and zoom stay
    if (!z.vb || (z.mode === "free" && (!z.start || z.start.w !== start.w))) z.mode = "fit";
    z.start = start;
    frame(b);
  } else {
    setAttr(svg, "viewBox", `${v.x * cell} ${v.y * cell} ${v.width * cell} ${v.height * cell}`);
  }

  drawFog(b, spec);
  // the overlays: each layer redrawn when what it shows changes
  const overlay = (name, items, draw) => {
    const key = JSON.stringify([items, minText]);
    if (b.overlayKeys[name] === key) return;
    b.overlayKeys[name] = key;
    const layer = b[name];
    layer.replaceChildren();
    for (const item of items) draw(layer, item);
  };
  overlay("highlights", spec.highlights || [], (layer, m) => {
    const r = s("rect", { class: `highlight ${m.cls || ""}`, x: m.x * cell + 2, y: m.y * cell + 2, width: cell - 4, height: cell - 4, rx: 4 });
    if (m.label) r.append(s("title", {}, m.label));
    layer.append(r);
  });
  overlay("rings", spec.rings || [], (layer, ring) => {
    const cx = (ring.x + 0.5) * cell;
    const cy = (ring.y + 0.5) * cell;
    layer.append(s("circle", { class: `ring ${ring.cls || ""}`, cx, cy, r: Math.max(0, ring.r) * cell }));
    if (ring.label) layer.append(s("text", { class: `ring-label ${ring.cls || ""}`, x: cx, y: cy - ring.r * cell - 4, "text-anchor": "middle", style: minText ? { "font-size": fsText(0) } : null }, ring.label));
  });
  overlay("paths", spec.paths || [], (layer, path) => {
    const pts = (path.points || []).map(([x, y]) => `${(x + 0.5) * cell},${(y + 0.5) * cell}`).join(" ");
    layer.append(s("polyline", { class: `path ${path.cls || ""}`, points: pts }));
    (path.points || []).forEach(([x, y], i) => {
      const label = path.labels && path.labels[i];
      if (label) layer.append(s("text", { class: "path-label", x: (x + 0.5) * cell, y: (y + 0.5) * cell + 4, "text-anchor": "middle", style: minText ? { "font-size": fsText(0) } : null }, label));
    });
  });

  // the tokens, by id: kept ones updated in place, new ones made, gone ones removed
  const list = spec.tokens || [];
  const sides = [...new Set(list.map((t) => t.side))].sort();
  const ordered = [...list].sort((a, b2) => (a.active ? 1 : 0) - (b2.active ? 1 : 0)); // the active one on top
  const showNames = spec.names !== false;
  const nameSize = (spec.nameSize || 0.24) * cell;
  // (names are placed in the part shown: a zoomable grid's close-up or whole board; where the
  // player pinched or dragged, anywhere on the board)
  const vb = b.zoom && b.zoom.vb;
  const shown = !b.zoom ? v : vb && b.zoom.mode !== "free" ? { x: vb.x / cell, y: vb.y / cell, width: vb.w / cell, height: vb.h / cell } : { x: 0, y: 0, width, height };
  const names = showNames ? placeNames(b, list, Math.max(nameSize, minText), shown, minText) : new Map();
  const seen = new Map();
  const outers = [];
  const nameEls = [];
  for (const t of ordered) {
    let key = String(t.id);
    if (seen.has(key)) key = `${key}\u0000${seen.size}`; // two tokens with one id: both drawn, as before
    let rec = b.tokens.get(key);
    if (!rec) {
      rec = makeToken(b, t);
      b.tokens.set(key, rec);
    }
    seen.set(key, rec);
    updateToken(b, rec, t, spec, { sides, showNames, names, nameSize, minText, fsText });
    outers.push(rec.outer);
    if (rec.name) nameEls.push(rec.name);
  }
  for (const [key, rec] of b.tokens) {
    if (seen.has(key)) continue;
    rec.outer.remove();
    if (rec.name) rec.name.remove();
    b.tokens.delete(key);
  }
  reorder(b.tokenLayer, outers);
  reorder(b.nameLayer, nameEls);
}

function makeToken(b, t) {
  const outer = s("g", { dataset: { testid: "token", combatant: t.id, id: t.id } });
  // the inner element carries the position (as it always has: tests and modules read its transform)
  const inner = s("g", { class: "token-inner", dataset: { testid: `token-${t.id}`, id: t.id } });
  outer.append(inner);
  const rec = { outer, inner, t, halo: null, look: null, pos: null, name: null, nameKey: null, draggable: false, dragWired: false };
  outer.addEventListener("click", (ev) => {
    const onTokenClick = b.spec && b.spec.onTokenClick;
    if (!onTokenClick) return; // the click goes on to the board (a cell's click)
    ev.stopPropagation();
    onTokenClick(rec.t.id);
  });
  outer.addEventListener("keydown", (ev) => {
    const onTokenClick = b.spec && b.spec.onTokenClick;
    if (onTokenClick && (ev.key === "Enter" || ev.key === " ")) onTokenClick(rec.t.id);
  });
  return rec;
}

function updateToken(b, rec, t, spec, o) {
  const { cell } = b;
  const { outer, inner } = rec;
  rec.t = t;
  const mark = sideMark(t.side, o.sides);
  const label = t.title || t.name || t.label || t.id;
  const clickable = !!spec.onTokenClick;
  setAttr(outer, "class", `token ${mark.cls} ${t.cls || ""} ${t.active ? "active" : ""} ${t.selected ? "selected" : ""} ${t.dead ? "dead" : ""} ${t.out ? "out" : ""}`);
  setAttr(outer, "data-side", t.side ?? "");
  setAttr(outer, "tabindex", clickable ? 0 : null);
  setAttr(outer, "role", clickable ? "button" : null);
  setAttr(outer, "aria-label", label);
  const pos = `translate(${(t.x + 0.5) * cell} ${(t.y + 0.5) * cell})`;
  if (rec.pos !== pos) { inner.setAttribute("transform", pos); rec.pos = pos; }

  // the halo: made when the token becomes active (its one turn plays then) and kept while it stays so
  if (t.active && !rec.halo) {
    rec.halo = s("circle", { class: "token-active-halo", r: cell * 0.56, "stroke-width": cell * 0.06 });
    inner.prepend(rec.halo);
  } else if (!t.active && rec.halo) {
    rec.halo.remove();
    rec.halo = null;
  }

  const frac = hpFraction(t.hp);
  const badge = t.badge !== undefined && t.badge !== null && t.badge !== "" ? t.badge : null;
  const look = JSON.stringify([initials(t), t.colour || null, t.portrait || null, frac, mark.shape, mark.letter, badge, typeof badge, !!t.dead, t.out || "", label, o.minText]);
  if (rec.look !== look) {
    rec.look = look;
    while (inner.lastChild && inner.lastChild !== rec.halo) inner.lastChild.remove();
    inner.append(...tokenParts(b, t, mark, frac, badge, label, o));
  }

  const drag = !!(spec.canDrag && spec.onDrop && spec.canDrag(t.id));
  if (drag !== rec.draggable) {
    rec.draggable = drag;
    inner.classList.toggle("draggable", drag);
    if (drag && !rec.dragWired) { rec.dragWired = true; makeDraggable(b, rec); }
  }

  const placed = o.showNames && t.name ? o.names.get(t) : null;
  if (placed) {
    const { place, text, shift } = placed;
    const nameKey = JSON.stringify([text, t.out || "", place, shift, pos, !!t.active, o.fsText(o.nameSize)]);
    if (!rec.name) {
      rec.name = s("text", { class: "token-name", "text-anchor": "middle", dataset: { combatant: t.id } });
    }
    if (rec.nameKey !== nameKey) {
      rec.nameKey = nameKey;
      const name = rec.name;
      // the name, and the word for a combatant out of the fight ("unconscious", "fled") after it
      name.replaceChildren(text, ...(t.out ? [s("tspan", { class: "token-state" }, ` · ${t.out}`)] : []));
      setAttr(name, "class", t.active ? "token-name active" : "token-name");
      const sideways = place === "right" || place === "left";
      setAttr(name, "text-anchor", place === "right" ? "start" : place === "left" ? "end" : "middle");
      setAttr(name, "dominant-baseline", place === "below" ? "hanging" : sideways ? "central" : "auto");
      // (inside: its baseline at the square's foot)
      setAttr(name, "y", place === "above" ? -cell * 0.5 : sideways ? 0 : cell * 0.47);
      setAttr(name, "x", place === "right" ? cell * 0.45 : place === "left" ? -cell * 0.45 : shift || null);
      setAttr(name, "transform", pos);
      if (name.style.getPropertyValue("font-size") !== o.fsText(o.nameSize)) name.style.setProperty("font-size", o.fsText(o.nameSize));
    }
  } else if (rec.name) {
    rec.name.remove();
    rec.name = null;
    rec.nameKey = null;
  }
}

// Where each token's name goes, so that no name lies over another token (it would hide that token's
// badges, its action points or its health) or over another name: under its token as a rule; else
// above it, else beside it (right, then left), each kept inside the part of the grid shown; a long
// name is shortened ("Prince Vasyl of Ostgrund": "Prince") before it is put on its own token's foot.
// Each of those may also be moved half a square aside. The active token's name is placed first, then
// the rest from the top left. The sizes are estimates in user units (a bold name is up to 0.62 of its
// font size a letter), kept a tenth of a square inside the edges.
function placeNames(b, tokens, fs, v, minText) {
  const { cell } = b;
  const out = new Map();
  const discs = tokens.map((t) => ({ t, x: (t.x + 0.5) * cell, y: (t.y + 0.5) * cell }));
  const placed = [];
  const view = { l: (v.x + 0.1) * cell, t: v.y * cell, r: (v.x + v.width - 0.1) * cell, b: (v.y + v.height) * cell };
  const lineH = fs * 1.15;
  // another token's footprint: its disc and ring, its badge at its upper right and its side's mark
  // at its lower left (as tokenParts draws them)
  const circles = (d) => [
    [d.x, d.y, cell * 0.47],
    [d.x - cell * 0.33, d.y + cell * 0.3, Math.max(cell * 0.16, minText / 1.25)],
    ...(d.t.badge !== undefined && d.t.badge !== null && d.t.badge !== "" ? [[d.x + cell * 0.34, d.y - cell * 0.34, Math.max(cell * 0.2, minText * 0.8)]] : []),
  ];
  const hits = (box, [x, y, r]) => Math.hypot(Math.max(box.l, Math.min(x, box.r)) - x, Math.max(box.t, Math.min(y, box.b)) - y) < r;
  const overDisc = (box, own) => discs.some((d) => d.t !== own && circles(d).some((c) => hits(box, c)));
  const overName = (box) => placed.some((p) => box.l < p.r && box.r > p.l && box.t < p.b && box.b > p.t);
  const order = tokens.filter((t) => t.name).sort((a, c) => (c.active ? 1 : 0) - (a.active ? 1 : 0) || a.y - c.y || a.x - c.x);
  for (const t of order) {
    const cx = (t.x + 0.5) * cell;
    const cy = (t.y + 0.5) * cell;
    if (cx < view.l || cx > view.r || cy < view.t || cy > view.b) continue; // (a token outside the part shown: no name at its edge)
    let best = null;
    for (const limit of [16, 10]) {
      const text = shortName(t.name, limit);
      const w = (text.length + (t.out ? t.out.length + 3 : 0)) * 0.62 * fs + cell * 0.06;
      const below = cy + cell * 0.47;
      const above = cy - cell * 0.5 - fs * 0.9; // (its baseline at the square's top, its descenders under it)
      const tries = [
        ["below", below, 0], ["above", above, 0], ["right", cy - lineH / 2, 0], ["left", cy - lineH / 2, 0],
        ["below", below, 0.5], ["below", below, -0.5], ["above", above, 0.5], ["above", above, -0.5],
      ];
      // (a name's box: from its top to its descenders; above a token, its baseline at the square's top)
      for (const [place, top, nudge] of tries) {
        let l = place === "right" ? cx + cell * 0.45 : place === "left" ? cx - cell * 0.45 - w : cx - w / 2 + nudge * cell;
        if (place === "below" || place === "above") l = Math.max(view.l, Math.min(view.r - w, l)); // (kept inside the part shown)
        const box = { l, t: top, r: l + w, b: top + lineH };
        if (box.l < view.l - 1 || box.r > view.r + 1 || box.t < view.t || box.b > view.b) continue;
        if (overDisc(box, t) || overName(box)) continue;
        best = { place, text, shift: place === "below" || place === "above" ? Math.round(l - (cx - w / 2)) : 0, box };
        break;
      }
      if (best) break;
    }
    if (!best) { // nowhere free: on its own token's foot, shortened
      const text = shortName(t.name, 10);
      const w = (text.length + (t.out ? t.out.length + 3 : 0)) * 0.62 * fs;
      const l = Math.max(view.l, Math.min(view.r - w, cx - w / 2));
      best = { place: "inside", text, shift: Math.round(l - (cx - w / 2)), box: { l, t: cy + cell * 0.47 - lineH, r: l + w, b: cy + cell * 0.47 } };
    }
    placed.push(best.box);
    out.set(t, best);
  }
  return out;
}

// What a token shows under its halo: its disc (colour or portrait, or its letters), its health ring,
// its side's shape and letter, its badge, a cross when dead, and its title.
function tokenParts(b, t, mark, frac, badge, label, o) {
  const { cell } = b;
  const fs = (size) => ({ "font-size": o.fsText(size) });
  const r = cell * 0.42;
  const parts = [];
  const body = s("circle", { class: "token-body", r });
  if (t.colour) body.style.setProperty("fill", t.colour);
  parts.push(body);
  if (t.portrait) {
    const clip = `${b.uid}-p-${String(t.id).replace(/[^A-Za-z0-9_-]/g, "")}`;
    if (!b.clips.has(clip)) {
      b.clips.add(clip);
      b.defs.append(s("clipPath", { id: clip }, s("circle", { r: r * 0.9 })));
    }
    parts.push(s("image", { class: "token-portrait", href: t.portrait, x: -r * 0.9, y: -r * 0.9, width: r * 1.8, height: r * 1.8, preserveAspectRatio: "xMidYMid slice", "clip-path": `url(#${clip})` }));
  } else {
    parts.push(s("text", { class: "token-label", "text-anchor": "middle", "dominant-baseline": "central", style: fs(cell * 0.3) }, initials(t)));
  }
  if (t.out) {
    // out of the fight (down, unconscious, fled, surrendered, dead): a grey broken ring, never the
    // health colours (a green ring read as healthy), and the word after the name
    parts.push(s("circle", { class: "token-ring-out", r: cell * 0.465, "stroke-width": cell * 0.06, "stroke-dasharray": `${cell * 0.12} ${cell * 0.1}` }));
  } else if (frac !== null) {
    const rr = cell * 0.465;
    const circ = 2 * Math.PI * rr;
    const level = frac > 0.5 ? "high" : frac > 0.25 ? "mid" : "low";
    parts.push(s("circle", { class: "token-ring-bg", r: rr, "stroke-width": cell * 0.06 }));
    parts.push(s("circle", { class: `token-ring token-ring-${level}`, r: rr, "stroke-width": cell * 0.06, "stroke-dasharray": `${(frac * circ).toFixed(2)} ${circ.toFixed(2)}`, transform: "rotate(-90)" }));
  }
  // the side: its shape with its letter, at the token's lower left
  const sr = Math.max(cell * 0.16, o.minText / 1.25);
  parts.push(s("g", { class: `token-side kit-shape-${mark.shape}`, transform: `translate(${-cell * 0.33} ${cell * 0.3})` }, sideShape(mark.shape, sr),
    s("text", { class: "token-side-letter", "text-anchor": "middle", "dominant-baseline": "central", style: fs(sr * 1.25), y: mark.shape === "triangle" ? sr * 0.2 : 0 }, mark.letter)));
  if (badge !== null) {
    const neg = typeof badge === "number" ? badge < 0 : String(badge).startsWith("-");
    const br = Math.max(cell * 0.2, o.minText * 0.8);
    parts.push(s("circle", { class: `token-badge-bg ${neg ? "negative" : ""}`, cx: cell * 0.34, cy: -cell * 0.34, r: br }));
    parts.push(s("text", { class: `token-badge ${neg ? "negative" : ""}`, x: cell * 0.34, y: -cell * 0.34, "text-anchor": "middle", "dominant-baseline": "central", style: fs(cell * 0.2) }, String(badge)));
  }
  if (t.dead) parts.push(s("path", { class: "token-dead-mark", d: `M${-r * 0.6},${-r * 0.6} L${r * 0.6},${r * 0.6} M${r * 0.6},${-r * 0.6} L${-r * 0.6},${r * 0.6}` }));
  parts.push(s("title", {}, label));
  return parts;
}

function toGrid(svg, ev, cell) {
  const pt = svg.createSVGPoint();
  pt.x = ev.clientX;
  pt.y = ev.clientY;
  const ctm = svg.getScreenCTM();
  const p = ctm ? pt.matrixTransform(ctm.inverse()) : { x: 0, y: 0 };
  return { x: Math.floor(p.x / cell), y: Math.floor(p.y / cell) };
}

// A token the spec lets drag (canDrag) follows the pointer and is dropped on a square (onDrop). The
// listeners stay on the token while it is kept and read the latest spec and token.
function makeDraggable(b, rec) {
  const { svg, cell, width, height } = b;
  const g = rec.inner;
  let dragging = false;
  let moved = false;
  g.addEventListener("pointerdown", (ev) => {
    if (!rec.draggable) return;
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
    rec.pos = null; // the next update puts the token where the server has it
    g.setAttribute("transform", `translate(${p.x} ${p.y})`);
  });
  g.addEventListener("pointerup", (ev) => {
    if (!dragging) return;
    dragging = false;
    if (!moved) return;
    const p = toGrid(svg, ev, cell);
    const x = Math.max(0, Math.min(width - 1, p.x));
    const y = Math.max(0, Math.min(height - 1, p.y));
    const pos = `translate(${(x + 0.5) * cell} ${(y + 0.5) * cell})`;
    g.setAttribute("transform", pos);
    rec.pos = pos;
    const t = rec.t;
    const onDrop = b.spec && b.spec.onDrop;
    if (onDrop && (x !== t.x || y !== t.y)) onDrop(t.id, x, y);
  });
  g.addEventListener("pointercancel", () => {
    dragging = false;
    if (moved) { // back where it was
      const t = rec.t;
      rec.pos = `translate(${(t.x + 0.5) * cell} ${(t.y + 0.5) * cell})`;
      g.setAttribute("transform", rec.pos);
    }
  });
}

// Zoom and pan by changing the viewBox: two fingers pinch, one finger (or the mouse) drags, the wheel
// zooms. A press that moves less than a few pixels stays a tap (its click goes through); after a
// drag the click that follows is swallowed. The zoom (b.zoom: the shown part the spec asks for,
// `start`, and the one shown, `vb`) is kept per grid container across updates and redraws.
function makeZoomable(b) {
  const { svg, cell } = b;
  const z = b.zoom;
  const full = { x: 0, y: 0, w: b.W, h: b.H };
  const minW = Math.min(full.w, cell * 3);
  const ratio = () => z.start.h / z.start.w;
  const apply = () => {
    const vb = z.vb;
    vb.w = Math.max(minW, Math.min(Math.max(wholeView(b).w, z.start.w), vb.w)); // (no wider than the whole board)
    vb.h = vb.w * ratio();
    vb.x = Math.max(full.x - vb.w * 0.25, Math.min(full.x + full.w - vb.w * 0.75, vb.x));
    vb.y = Math.max(full.y - vb.h * 0.25, Math.min(full.y + full.h - vb.h * 0.75, vb.y));
    setAttr(svg, "viewBox", `${vb.x} ${vb.y} ${vb.w} ${vb.h}`);
  };
  z.apply = apply;
  const pointers = new Map();
  let moved = false;
  let pinch = null;
  const unitsPerPx = () => {
    const r = svg.getBoundingClientRect();
    return r.width > 0 ? z.vb.w / r.width : 1;
  };
  svg.addEventListener("pointerdown", (ev) => {
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY, sx: ev.clientX, sy: ev.clientY });
    if (pointers.size === 1) moved = false;
    if (pointers.size === 2) {
      const [a, c] = [...pointers.values()];
      pinch = { d: Math.hypot(a.x - c.x, a.y - c.y) || 1, vb: { ...z.vb }, cx: (a.x + c.x) / 2, cy: (a.y + c.y) / 2 };
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
    if (!moved) {
      moved = true;
      try { svg.setPointerCapture(ev.pointerId); } catch { /* gone */ }
      if (z.mode !== "free") { z.mode = "free"; frame(b); } // (the button offers the way back)
    }
    const vb = z.vb;
    if (pointers.size >= 2 && pinch) {
      const [a, c] = [...pointers.values()];
      const d = Math.hypot(a.x - c.x, a.y - c.y) || 1;
      const rect = svg.getBoundingClientRect();
      const k = pinch.d / d;
      const fx = (pinch.cx - rect.left) / rect.width;
      const fy = (pinch.cy - rect.top) / rect.height;
      const w = pinch.vb.w * k;
      vb.w = w;
      vb.x = pinch.vb.x + (pinch.vb.w - w) * fx;
      vb.y = pinch.vb.y + (pinch.vb.h - w * ratio()) * fy;
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
    // on a console the wheel scrolls the page; Ctrl (or ⌘, or a touchpad's pinch) with it zooms the grid
    if (b.spec && b.spec.wheelZoom === "modifier" && !ev.ctrlKey && !ev.metaKey) return;
    ev.preventDefault();
    const vb = z.vb;
    const rect = svg.getBoundingClientRect();
    const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    const fx = (ev.clientX - rect.left) / rect.width;
    const fy = (ev.clientY - rect.top) / rect.height;
    const w = vb.w * k;
    const hh = w * ratio();
    vb.x += (vb.w - w) * fx;
    vb.y += (vb.h - hh) * fy;
    vb.w = w;
    z.mode = "free";
    frame(b);
  }, { passive: false });
}
