// Any rule system on the GM console, the phones and the spectator's page, from the common view shape
// alone (rules/contract.py's VIEW_KEYS): used for a system whose traits say `board_module: "generic"`.
// It shows whose turn it is (`view.acting`), the combatants by side (`view.fighters`) and one button
// per entry of `view.legal`, which sends the entry as it stands (its `fields` filled with their
// defaults); never a system's own keys. See README.md here for the module contract.

const PRESENTATION = new Set(["label", "help", "testid", "selected", "fields", "destinations", "reachable", "params", "name"]);

function declarationOf(item) {
  const decl = {};
  for (const [key, value] of Object.entries(item)) {
    if (!PRESENTATION.has(key) && (value === null || typeof value !== "object")) decl[key] = value;
  }
  for (const field of item.fields || []) {
    if (field.default !== undefined && field.default !== null) decl[field.name] = field.default;
  }
  return decl;
}

export function render(root, view, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  const fighters = view.fighters || [];
  const sides = [...new Set(fighters.map((f) => f.side))];
  const acting = new Set((view.acting && view.acting.combatants) || []);
  const legal = view.legal || [];
  const mine = legal.some((item) => item.combatant !== undefined);

  const due = h("section", { class: "gen-due", dataset: { region: "due", ...(ctx.role === "player" ? { yourTurn: String(mine) } : {}) } },
    h("p", { class: "gen-acting", dataset: { testid: "acting" } }, (view.acting && view.acting.label) || ""),
    legal.length ? h("div", { class: "button-row" }, legal.map((item) => kit.actionButton(item.label || item.type, () => ctx.send(declarationOf(item)), {
      testid: `action-${item.type}${item.combatant ? `-${item.combatant}` : ""}`, combatant: item.combatant || null, hint: item.help || "",
      primary: item.combatant !== undefined,
    }))) : null);
  // (every button that sends a declaration carries data-action="<type>", as in every board module)
  for (const [i, b] of [...due.querySelectorAll("button")].entries()) b.dataset.action = legal[i] ? legal[i].type : "";

  const list = h("div", { class: "gen-sides" }, sides.map((side) => h("section", { class: "gen-side-list", "aria-label": `Side ${side}` },
    fighters.filter((f) => f.side === side).map((f) => h("div", {
      class: `gen-row ${f.out ? "is-out" : ""}`, dataset: { testid: `combatant-${f.id}`, out: f.out ? "true" : "false" },
    }, kit.token({ id: f.id, name: f.name, side: f.side, sides, dead: f.out, active: acting.has(f.id), size: "m" }),
    h("span", { class: "gen-row-state" }, f.out ? "out" : acting.has(f.id) ? "to act" : ""))))));

  replace(root, h("div", { class: "gen-board", dataset: { status: view.status || "" } }, due, list));
}
