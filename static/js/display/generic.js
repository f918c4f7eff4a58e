// Any rule system on the table display, from the common view shape alone (rules/contract.py's
// VIEW_KEYS): used for a system whose traits say `board_module: "generic"` (one that brings no
// display module of its own). It reads `view.fighters` (id, name, side, controller, seat, out),
// `view.acting` ({combatants, label}) and `view.status`; never a system's own keys. The sides stand
// face to face in large type; whoever must act now is marked, whoever is out is struck.

export function render(root, view, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  const fighters = view.fighters || [];
  const sides = [...new Set(fighters.map((f) => f.side))];
  const acting = new Set((view.acting && view.acting.combatants) || []);

  function card(f) {
    const now = acting.has(f.id) && view.status === "active";
    const state = f.out ? "Out" : now ? "To act" : view.status === "active" ? "Waiting" : "";
    return h("article", {
      class: `gen-card ${kit.sideMark(f.side, sides).cls} ${f.out ? "is-out" : ""} ${now ? "is-now" : ""}`,
      dataset: { testid: `combatant-${f.id}`, now: now ? "true" : "false", out: f.out ? "true" : "false" },
    },
    kit.token({ id: f.id, name: f.name, side: f.side, sides, dead: f.out, active: now, size: "xl", short: f.name }),
    h("div", { class: "gen-info" },
      h("h2", { class: "gen-name" }, f.name),
      state ? h("div", { class: `gen-state ${f.out ? "out" : now ? "now" : "wait"}` }, state) : null));
  }

  replace(root, h("div", { class: "gen", dataset: { status: view.status || "", testid: "generic-board" } },
    sides.map((side, i) => [
      i > 0 ? h("div", { class: "gen-vs", "aria-hidden": "true" }, "vs") : null,
      h("section", { class: "gen-side", "aria-label": `Side ${side}` }, fighters.filter((f) => f.side === side).map(card)),
    ])));
}

export function cue(view) {
  const fighters = view.fighters || [];
  const label = (view.acting && view.acting.label) || "";
  if (view.status === "ended") return { now: null, headline: "The battle is over", detail: label };
  const due = ((view.acting && view.acting.combatants) || []).map((id) => fighters.find((f) => f.id === id)).filter(Boolean);
  if (due.length === 1) return { now: due[0].name, seat: due[0].seat || null, detail: label };
  return { now: null, headline: due.length ? due.map((f) => f.name).join(" and ") : "", detail: label };
}
