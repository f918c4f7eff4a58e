// Pieces the display's board renderers share: fitting a grid to the board and drawing it for the TV.

/**
 * The part of a width × height grid to show in a box of box.width × box.height pixels: the whole grid
 * when a square gets at least minPx pixels that way; otherwise the squares around `points` (tokens,
 * path points) at minPx a square, or as close to it as those points allow. Returns a view in squares
 * with the box's aspect ratio.
 */
export function fitGrid(width, height, points, box, minPx = 84) {
  const aspect = box.width / Math.max(1, box.height);
  const cover = (w, h) => (w / h < aspect ? [h * aspect, h] : [w, w / aspect]);
  const pad = 0.3; // a token's halo and badge on the edge squares stay on the screen
  let [vw, vh] = cover(width + 2 * pad, height + 2 * pad);
  if (box.width / vw >= minPx || !points.length) return { x: (width - vw) / 2, y: (height - vh) / 2, width: vw, height: vh };
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const minX = Math.min(...xs) - 1;
  const maxX = Math.max(...xs) + 2;
  const minY = Math.min(...ys) - 1;
  const maxY = Math.max(...ys) + 2.4; // room for the names under the lowest tokens
  [vw, vh] = cover(Math.max(box.width / minPx, maxX - minX), Math.max(box.height / minPx, maxY - minY));
  const place = (lo, hi, size, total) => {
    if (size >= total + 2 * pad) return (total - size) / 2;
    return Math.max(-pad, Math.min(total + pad - size, (lo + hi) / 2 - size / 2));
  };
  return { x: place(minX, maxX, vw, width), y: place(minY, maxY, vh, height), width: vw, height: vh };
}

// The view shown last on each board. While the view fitted to this update lies inside it and is not
// much smaller, it stays: the board does not shift and rescale on each move (a new scale redraws
// every token's text), and an update redraws only the tokens that changed.
const lastViews = new WeakMap();

function steadyView(root, view, dims) {
  const key = dims.join(" ");
  const last = lastViews.get(root);
  if (last && last.key === key) {
    const v = last.view;
    const e = 1e-6;
    const inside = view.x >= v.x - e && view.y >= v.y - e && view.x + view.width <= v.x + v.width + e && view.y + view.height <= v.y + v.height + e;
    if (inside && view.width >= v.width * 0.85) return v;
  }
  lastViews.set(root, { key, view });
  return view;
}

/**
 * Draw a grid system's board: tokens with their names, the table's map, token colours and portraits
 * and blocked squares, rings and paths over it, fitted to the board box with text no smaller than
 * 26 px. `spec` is grid.js's spec without the sizes.
 */
export function drawGridBoard(root, ctx, spec) {
  const board = (ctx.table && ctx.table.board) || {};
  const looks = board.tokens || {};
  const tokens = (spec.tokens || []).map((t) => ({
    ...t,
    colour: t.colour || (looks[t.id] && looks[t.id].colour) || null,
    portrait: t.portrait || (looks[t.id] && looks[t.id].portrait) || null,
  }));
  const points = tokens.map((t) => [t.x, t.y]);
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
  const view = steadyView(root, fitGrid(spec.width, spec.height, points, box, minPx), [spec.width, spec.height, box.width, box.height, minPx]);
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
