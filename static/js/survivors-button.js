// After a battle: its printable report, and "Survivors carry on" (issue 18 §4–5).
//
// survivorsPanel(table, state, ctx): for the GM console's battle controls (setup.js renderControls),
// once the table's battle has ended: a link to the battle's report (/t/<slug>/battles/<id>/report),
// and buttons that write the survivors' state back into a saved roster, over the one the lineup came
// from (table.roster_id) or as a new one, with the GM-only socket event
// survivors_save {battle_id, roster_id | name, load}. The server carries the values over and
// answers with the survivors and those left out (the dead); nothing is decided here.
// Returns an element (or null while no battle has ended), so the controls can re-draw it freely.

import { h, button } from "./ui.js";

export function reportUrl(slug, battleId) {
  return `/t/${encodeURIComponent(slug)}/battles/${encodeURIComponent(battleId)}/report`;
}

let keepLineup = true; // "make the survivors the lineup" stays as the GM left it between re-draws

function saved(ctx, ack) {
  if (!ack || !ack.ok) return; // ctx.command has shown the error already
  const who = ack.survivors.length === 1 ? "1 survivor" : `${ack.survivors.length} survivors`;
  const lost = ack.left_out.length ? ` Left out: ${ack.left_out.join(", ")}.` : "";
  ctx.notice(`${who} written to the roster “${ack.name}”.${lost}`, "ok");
}

export function survivorsPanel(table, state, ctx) {
  if (!table || !state || !state.battleId || state.status !== "ended") return null;
  const rosters = table.rosters || [];
  const from = table.roster_id != null ? rosters.find((r) => r.id === table.roster_id) : null;
  const name = h("input", {
    type: "text", maxlength: 80, value: `${table.name} — after the battle`.slice(0, 80),
    "aria-label": "Name of the new roster", dataset: { testid: "survivors-name" },
  });
  const load = h("input", { type: "checkbox", checked: keepLineup, dataset: { testid: "survivors-load" } });
  load.addEventListener("change", () => { keepLineup = load.checked; });
  const send = async (payload) => saved(ctx, await ctx.command("survivors_save", { ...payload, load: load.checked }));
  return h("section", { class: "survivors", dataset: { testid: "survivors-panel" } },
    h("p", { class: "report-link" },
      h("a", { href: reportUrl(table.slug, state.battleId), target: "_blank", rel: "noopener", dataset: { testid: "report-link" } },
        "Battle report"),
      h("span", { class: "muted" }, " Who fought, the key moments, start and end values, the dice and a chart: print it or keep it.")),
    h("h3", {}, "Survivors carry on"),
    h("p", { class: "muted" },
      "Write every survivor's state at the end of this battle into a saved roster, so the next battle starts where this one stopped. ",
      "The dead are left out. “How this system works” says what carries over."),
    h("label", { class: "assign-row" }, load, h("span", {}, " Make the survivors the lineup now")),
    h("div", { class: "button-row" },
      from ? button(`Write over “${from.name}”`, () => {
        if (confirm(`Replace the roster “${from.name}” with the survivors?`)) send({ roster_id: from.id });
      }, { class: "big", dataset: { testid: "survivors-over" } }) : null,
    ),
    h("div", { class: "button-row" },
      name,
      button("Save as a new roster", () => send({ name: name.value }), { class: "big", dataset: { testid: "survivors-new" } }),
    ),
  );
}
