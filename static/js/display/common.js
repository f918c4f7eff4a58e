// Pieces the display's board renderers share: fitting a grid to the board and drawing it for the TV.

import { fitGrid, steadyView } from "../grid.js";

// The view shown last on each board (grid.steadyView: while the view fitted to this update lies inside
// it and is not much smaller, it stays, so the board does not shift and rescale on each move: a new
// scale redraws every token's text, and an update redraws only the tokens that changed).
const lastViews = new WeakMap();

function steadyOn(root, view, dims) {
  const [shown, last] = steadyView(lastViews.get(root), view, dims.join(" "));
  lastViews.set(root, last);
  return shown;
}

/**
 * Draw a grid system's board: tokens with their names, the table's map, token colours and portraits
 * and blocked squares, rings and paths over it, framed on the fight (the living tokens) in the board
 * box with text no smaller than 26 px. `spec` is grid.js's spec without the sizes.
 */
export function drawGridBoard(root, ctx, spec) {
  const board = (ctx.table && ctx.table.board) || {};
  const looks = board.tokens || {};
  const tokens = (spec.tokens || []).filter((t) => Number.isFinite(t.x) && Number.isFinite(t.y)).map((t) => ({
    ...t,
    colour: t.colour || (looks[t.id] && looks[t.id].colour) || null,
    portrait: t.portrait || (looks[t.id] && looks[t.id].portrait) || null,
  }));
  // the fight framed as on a phone: the living tokens (and the paths drawn) with a margin, at no more
  // than 150 px a square, never the whole battlefield with the fight in a corner of it
  const living = tokens.filter((t) => !t.dead && !t.out);
  const points = (living.length ? living : tokens).map((t) => [t.x, t.y]);
  for (const p of spec.paths || []) for (const pt of p.points || []) points.push(pt);
  let box = ctx.box;
  if (ctx.mode === "watch" && root.clientWidth) {
    // on a spectator's screen the board takes the grid's own shape (capped), so a phone's narrow
    // board is not mostly empty; the spectator pinches to zoom
    const h = Math.max(240, Math.min(window.innerHeight * 0.72, (root.clientWidth * spec.height) / spec.width + 8));
    const height = `${Math.round(h)}px`;
    if (root.style.height !== height) root.style.height = height;
    box = { width: root.clientWidth, height: h };
  }
  const minPx = ctx.mode === "display" ? 84 : 48;
  const view = steadyOn(root, fitGrid(spec.width, spec.height, points, box, minPx, ctx.mode === "display" ? 150 : 0), [spec.width, spec.height, box.width, box.height, minPx]);
  const cell = 100;
  const px = box.width / view.width; // screen pixels per square
  const minText = ((ctx.mode === "display" ? 26 : 14) * cell) / px;
  const svg = ctx.grid.renderGrid(root, {
    ...spec,
    tokens,
    cell,
    view,
    names: true,
    nameSize: Math.max(0.22, minText / cell),
    minText,
    map: spec.map !== undefined ? spec.map : board.map || null,
    blocked: spec.blocked || board.blocked || [],
    fog: spec.fog || (document.body.classList.contains("replay-body") ? [] : board.fog || []), // (a replay shows the battle whole)
    zoomable: ctx.mode === "watch",
  });
  // written only when they change: renderGrid keeps the svg from one update to the next, and a write
  // of the same value still costs a style recalculation
  if (svg.getAttribute("preserveAspectRatio") !== "xMidYMid meet") svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  if (svg.dataset.px !== px.toFixed(1)) svg.dataset.px = px.toFixed(1);
  return svg;
}

/** "Round 2, missile phase" style joining of the parts that are there. */
export function joinParts(...parts) {
  return parts.filter((p) => p !== null && p !== undefined && p !== "").join(", ");
}
