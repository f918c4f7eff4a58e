// A pointer for the table (issue 36): the GM, or a player on their phone, presses and holds a square
// or a token for half a second; every page, the TV above all, shows a pulsing ring there for about two
// seconds in the colour of whoever pointed, with their name. Nothing is stored. On a grid the page
// sends the square alone (the server never passes on a combatant there, so a hidden one or a fogged
// square shows nothing but the ring); elsewhere the combatant's card.
//
//   watchPresses({conn, board, notice})   the console's and phones' board: long presses become `point`
//   showPointers({socket, board, view})   any page: `pointer` messages become rings over the board

const HOLD_MS = 500;
const SLOP_PX = 10;
const CARD = /^(?:combatant|unit)-(.+)$/;

function cellOf(svg, view) {
  const bg = svg.querySelector(".grid-bg");
  const across = view && view.grid && view.grid.width;
  const w = bg ? Number(bg.getAttribute("width")) : 0;
  return across > 0 && w > 0 ? w / across : 0;
}

function squareAt(svg, view, clientX, clientY) {
  const cell = cellOf(svg, view);
  const ctm = svg.getScreenCTM();
  if (!cell || !ctm) return null;
  const pt = svg.createSVGPoint();
  pt.x = clientX;
  pt.y = clientY;
  const p = pt.matrixTransform(ctm.inverse());
  return [Math.floor(p.x / cell), Math.floor(p.y / cell)];
}

function cardOf(el, root) {
  for (let e = el; e && e !== root; e = e.parentElement) {
    const m = CARD.exec((e.dataset && e.dataset.testid) || "");
    if (m) return m[1];
    if (e.dataset && e.dataset.testid === "token" && e.dataset.combatant) return e.dataset.combatant;
  }
  return null;
}

/** Long presses on the page's board become points (a short tap stays a tap). */
export function watchPresses({ conn, board, notice }) {
  let press = null;
  const cancel = () => { if (press) { clearTimeout(press.timer); press = null; } };
  board.addEventListener("pointerdown", (ev) => {
    if (ev.button !== undefined && ev.button > 0) return;
    cancel();
    if (board.classList.contains("fog-armed")) return; // the GM is painting fog on the board (fog-panel.js)
    const target = ev.target;
    press = { x: ev.clientX, y: ev.clientY, timer: setTimeout(() => fire(target, ev.clientX, ev.clientY), HOLD_MS) };
  });
  board.addEventListener("pointermove", (ev) => {
    if (press && Math.hypot(ev.clientX - press.x, ev.clientY - press.y) > SLOP_PX) cancel();
  });
  for (const name of ["pointerup", "pointercancel", "pointerleave"]) board.addEventListener(name, cancel);
  // a long press is not also a tap, nor the phone's menu
  let swallowClick = false;
  board.addEventListener("click", (ev) => { if (swallowClick) { swallowClick = false; ev.stopPropagation(); ev.preventDefault(); } }, true);
  board.addEventListener("contextmenu", (ev) => { if (press || swallowClick) ev.preventDefault(); });

  async function fire(target, clientX, clientY) {
    press = null;
    const view = conn.state.view;
    if (!view) return;
    const svg = target.closest ? target.closest("svg[data-testid=grid]") : null;
    let payload = null;
    if (view.grid && svg) {
      const square = squareAt(svg, view, clientX, clientY);
      if (square) payload = { square };
    } else {
      const combatant = cardOf(target, board);
      if (combatant) payload = { combatant };
    }
    if (!payload) return;
    swallowClick = true;
    setTimeout(() => { swallowClick = false; }, 700);
    if (navigator.vibrate) try { navigator.vibrate(30); } catch { /* not allowed */ }
    const ack = await conn.emit("point", payload);
    if (!ack || !ack.ok) notice((ack && ack.error) || "The pointer did not go through.");
    else notice("Pointed on the TV.", "info");
  }
}

/** `pointer` messages become a ring over the board, in the pointer's colour, with their name. */
export function showPointers({ socket, board, view }) {
  ensureStyles();
  socket.on("pointer", (point) => {
    const place = placeOf(point, board, view());
    if (!place) return;
    const ring = document.createElement("div");
    ring.className = "pointer-ring";
    ring.dataset.testid = "pointer-ring";
    ring.dataset.by = point.by || "";
    if (point.square) ring.dataset.square = point.square.join(",");
    if (point.combatant) ring.dataset.combatant = point.combatant;
    const size = Math.max(place.size, 96);
    ring.style.left = `${place.x - size / 2}px`;
    ring.style.top = `${place.y - size / 2}px`;
    ring.style.width = `${size}px`;
    ring.style.height = `${size}px`;
    ring.style.setProperty("--pointer-colour", /^#[0-9a-f]{6}$/i.test(point.colour || "") ? point.colour : "#ffd23f");
    const name = document.createElement("span");
    name.className = "pointer-name";
    name.textContent = point.name || "";
    ring.append(document.createElement("span"), name);
    ring.firstChild.className = "pointer-pulse";
    document.body.append(ring);
    setTimeout(() => ring.remove(), Math.min(Number(point.ms) || 2200, 4000));
  });
}

function placeOf(point, board, view) {
  if (point.square) {
    const svg = board.querySelector("svg[data-testid=grid]");
    if (!svg) return null;
    const cell = cellOf(svg, view);
    const ctm = svg.getScreenCTM();
    if (!cell || !ctm) return null;
    const pt = svg.createSVGPoint();
    pt.x = (point.square[0] + 0.5) * cell;
    pt.y = (point.square[1] + 0.5) * cell;
    const p = pt.matrixTransform(ctm);
    return { x: p.x, y: p.y, size: Math.abs(ctm.a) * cell * 1.6 };
  }
  if (point.combatant) {
    const id = CSS.escape(point.combatant);
    const el = board.querySelector(`[data-testid="combatant-${id}"], [data-testid="unit-${id}"], [data-testid="token"][data-combatant="${id}"]`);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2, size: Math.min(Math.max(r.width, r.height) * 1.1, 520) };
  }
  return null;
}

let styled = false;
function ensureStyles() {
  if (styled) return;
  styled = true;
  const href = new URL("../css/table-tools.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  document.head.append(link);
}
