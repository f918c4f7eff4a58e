// Hidden combatants (rules/hiding.py): the GM's panel (reveal with one tap, the board's offers to
// reveal, hiding one during the battle), the GM's dimmed tokens, and a revealed token's arrival on
// every screen. The server decides everything: this page only sends the GM's intention.
import { h, replace } from "./ui.js";

const ARRIVAL_MS = 2200;

// The GM's panel, at the top of the console's Battle panel (never inside the board: a system's
// module and the console's "due now" slot read the board's own elements).
export function renderHiding(root, state, ctx) {
  const view = state.view || {};
  const hidden = Array.isArray(view.hidden) ? view.hidden : [];
  const home = document.querySelector("[data-testid=panel-battle]");
  if (!home || !(ctx.table && ctx.table.traits && ctx.table.traits.grid)) return; // (a grid system's)
  let panel = home.querySelector(":scope > [data-testid=hiding-panel]");
  const hideable = (view.fighters || []).filter((f) => f.controller !== "seat" && !f.out && !hidden.some((x) => x.id === f.id));
  if (view.status === "ended" || (!hidden.length && !hideable.length)) { if (panel) panel.remove(); return; }
  if (!panel) {
    panel = h("section", { class: "hiding-panel", dataset: { testid: "hiding-panel" }, "aria-label": "Hidden combatants" });
    home.prepend(panel);
  }
  const send = (event, combatant) => ctx.conn.command(event, { combatant }).then((ack) => {
    if (!ack || !ack.ok) ctx.notice((ack && ack.error) || "The board did not take that.");
  });
  const rows = hidden.map((one) => {
    const offer = one.offer;
    return h("span", { class: `hidden-one${offer ? " offer" : ""}`, dataset: { testid: `hidden-${one.id}` }, role: offer ? "alert" : null },
      h("span", {}, offer ? offer.words : `${one.name} (hidden)`),
      h("button", { type: "button", class: "reveal-button", dataset: { testid: `reveal-${one.id}` },
        onclick: () => send("reveal_combatant", one.id) }, "Reveal"));
  });
  const select = h("select", { dataset: { testid: "hide-select" }, "aria-label": "Combatant to hide" },
    ...hideable.map((f) => h("option", { value: f.id }, f.name)));
  const hideRow = hideable.length
    ? h("span", { class: "hide-one" }, select,
      h("button", { type: "button", dataset: { testid: "hide-button" }, onclick: () => send("hide_combatant", select.value) }, "Hide"))
    : null;
  replace(panel, h("h3", {}, "Hidden"), ...rows, ...(hideRow ? [hideRow] : []));
  for (const one of hidden) {
    for (const token of root.querySelectorAll(`[data-testid=token][data-combatant="${CSS.escape(one.id)}"]`)) token.classList.add("hidden-token");
  }
}

// On any screen: the tokens of the combatants revealed by the fresh events arrive: each grows out
// of a bright glow (the Web Animations API on the token's outer group, which the grid keeps across
// its in-place updates and whose class it rewrites; carried on across a new drawing while it lasts).
const arrivals = new Map();
const STILL = window.matchMedia("(prefers-reduced-motion: reduce)");
export function showArrivals(root, fresh) {
  const now = Date.now();
  for (const e of fresh || []) {
    if (e.type === "combatant.revealed" && e.data && e.data.combatant) arrivals.set(e.data.combatant, now);
  }
  for (const [id, since] of arrivals) {
    const age = now - since;
    if (age >= ARRIVAL_MS) { arrivals.delete(id); continue; }
    for (const token of root.querySelectorAll(`[data-testid=token][data-combatant="${CSS.escape(id)}"]`)) {
      token.dataset.arrived = "yes";
      if (token.dataset.arrivedAt === String(since) || STILL.matches || !token.animate) continue;
      token.dataset.arrivedAt = String(since);
      token.style.transformBox = "fill-box";
      token.style.transformOrigin = "center";
      token.animate([
        { transform: "scale(0.15)", opacity: 0, filter: "drop-shadow(0 0 0 #facc15)" },
        { transform: "scale(1.6)", opacity: 1, filter: "drop-shadow(0 0 18px #facc15) brightness(1.5)", offset: 0.4 },
        { transform: "scale(1.6)", opacity: 1, filter: "drop-shadow(0 0 18px #facc15) brightness(1.5)", offset: 0.6 },
        { transform: "scale(1)", opacity: 1, filter: "drop-shadow(0 0 0 #facc15)" },
      ], { duration: ARRIVAL_MS, delay: -age, easing: "ease-out" });
    }
  }
}
