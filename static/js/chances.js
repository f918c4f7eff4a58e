// Who's winning (issue 37): the bar of each side's chance to win, over the board.
//
// The server works the chances out after each update and sends `chances {battle_id, v, sides, draw,
// none, method, n}` only to the pages that may see them: the GM's always, the TV and the spectators'
// page while the GM has "who's winning" on, the phones while the GM allows it (webapp/chances_live.py).
// This draws what arrives and never works anything out; figures are words, never colour alone.
// Styles: static/css/chances.css, linked on first import (the CSP allows no inline style).
import { h, replace } from "./ui.js";

(function linkStyles() {
  const href = new URL("../css/chances.css", import.meta.url).href;
  if (!document.querySelector(`link[href="${href}"]`)) document.head.append(h("link", { rel: "stylesheet", href }));
})();

const percent = (p) => `${Math.round(p * 100)} %`;

/**
 * followChances(conn, { before, role, table }): draws the bar just before the `before` element (the
 * board), for the page's `role` ("gm", "player", "spectator", "display"); `table()` gives the latest
 * table payload (the GM's switches: a page that may no longer see the chances hides them at once).
 */
export function followChances(conn, { before, role, table }) {
  const bar = h("aside", { class: `chances-bar chances-${role}`, dataset: { testid: "chances-bar" }, "aria-label": "Who's winning", hidden: true });
  before.before(bar);
  let latest = null;

  function allowed() {
    if (role === "gm") return true;
    const display = (table() || {}).display || {};
    return role === "player" ? display.phones_chances === true : display.show_chances === true;
  }

  function draw() {
    const state = conn.state;
    if (!latest || latest.battle_id !== state.battleId || !allowed() || !state.view) {
      bar.hidden = true;
      return;
    }
    bar.hidden = false;
    bar.dataset.v = String(latest.v);
    bar.classList.toggle("chances-stale", latest.v !== state.v);
    const parts = latest.sides.map((s) => ({ key: `side-${s.side}`, label: s.name, p: s.p, cls: `chances-side chances-side-${s.side}` }));
    if (latest.draw > 0.005) parts.splice(1, 0, { key: "draw", label: "Draw", p: latest.draw, cls: "chances-draw" });
    if (latest.none > 0.005) parts.push({ key: "none", label: "No winner", p: latest.none, cls: "chances-none" });
    const strip = h("div", { class: "chances-strip", role: "img", "aria-label": parts.map((x) => `${x.label} ${percent(x.p)}`).join(", ") },
      parts.map((x) => {
        const seg = h("span", { class: x.cls, dataset: { testid: `chances-${x.key}` } }, x.p >= 0.12 ? percent(x.p) : "");
        seg.style.flexGrow = String(Math.max(x.p, 0.002));
        return seg;
      }));
    // (a busy board may get few games into an update's time: the words say how rough the guess is)
    const games = `${latest.n} game${latest.n === 1 ? "" : "s"}`;
    const how = latest.method === "exact" ? "worked out exactly"
      : latest.n < 20 ? `a rough first guess, from ${games} played out` : `from ${games} played out`;
    replace(bar,
      h("div", { class: "chances-head" },
        h("span", { class: "chances-title" }, "Who's winning"),
        h("span", { class: "chances-how muted" }, latest.v !== state.v ? "working it out…" : how)),
      strip,
      h("ul", { class: "chances-legend" }, parts.map((x) => h("li", { class: x.cls, dataset: { testid: `chances-legend-${x.key}` } },
        h("span", { class: "chances-name" }, x.label), " ", h("strong", {}, percent(x.p))))));
  }

  conn.socket.on("chances", (message) => {
    if (!message || typeof message.v !== "number") return;
    if (latest && latest.battle_id === message.battle_id && latest.v > message.v) return; // an older one, late
    latest = message;
    draw();
  });
  conn.socket.on("update", () => queueMicrotask(draw));
  conn.socket.on("table", () => queueMicrotask(draw));
  return { draw };
}

/**
 * chanceSwitches(display, ask): the GM's two switches for the Table display panel (pair-panel.js):
 * who's winning on the TV and the spectators' page, and on the players' phones.
 */
export function chanceSwitches(display, ask) {
  function toggle(key, label, on, words) {
    const button = h("button", {
      type: "button", class: "pair-join-toggle", "aria-pressed": on ? "true" : "false", dataset: { testid: `${key.replace("_", "-")}-toggle` },
      onclick: async () => {
        button.disabled = true;
        const ack = await ask("display_set", { [key]: !on });
        button.disabled = false;
        if (ack.ok) button.setAttribute("aria-pressed", ack.display[key] ? "true" : "false");
      },
    }, label);
    return h("p", { class: "pair-join-switch button-row" }, button, h("span", { class: "muted" }, words));
  }
  const tv = display.show_chances === true;
  const phones = display.phones_chances === true;
  return [
    toggle("show_chances", "Show who's winning on the TV", tv, tv
      ? "On: the TV and the spectators see each side's chance to win. It can hint at strength you keep hidden."
      : "Off: only you see who's winning. On, the chances can hint at strength you keep hidden (numbers, foes' health)."),
    toggle("phones_chances", "Let the players' phones show who's winning", phones, phones
      ? "On: every player sees each side's chance to win."
      : "Off: the players do not see the chances."),
  ];
}
