// After a battle: its printable report, and "Survivors carry on" (issue 18 §4–5).
//
// survivorsPanel(table, state, ctx): for the GM console's battle controls (setup.js renderControls),
// once the table's battle has ended: a link to the battle's report (/t/<slug>/battles/<id>/report),
// and buttons that write the survivors' state back into a saved roster, over the one the lineup came
// from (table.roster_id) or as a new one, with the GM-only socket event
// survivors_save {battle_id, roster_id | name, load, fallen}. Only those still standing carry on; the
// defeated are left behind, and the panel says who before anything is written (survivors_preview),
// in the "write over" confirmation and in the result. "Also carry on those who fell but live" (shown where
// someone fell without dying) carries them too. The server decides all of it; nothing is decided here.
// Returns an element (or null while no battle has ended), so the controls can re-draw it freely.

import { h, button, replace } from "./ui.js";

export function reportUrl(slug, battleId) {
  return `/t/${encodeURIComponent(slug)}/battles/${encodeURIComponent(battleId)}/report`;
}

let keepLineup = true; // "make the survivors the lineup" stays as the GM left it between re-draws
let carryFallen = false; // "Also carry on those who fell but live": off unless the GM ticks it

function names(list) { return list.join(", "); }

// what a carry-over does, in the GM's words: "Carries on 3 survivors: …. 2 defeated are left behind: …."
export function carryWords(ack, { done = false } = {}) {
  const n = ack.survivors.length;
  const who = n === 1 ? "1 survivor" : `${n} survivors`;
  const left = ack.left_out.length;
  const carried = done ? `Carried on ${who}` : `Carries on ${who}`;
  return `${carried}${n ? `: ${names(ack.survivors)}` : ""}. `
    + (left ? `${left} defeated ${left === 1 ? "is" : "are"} left behind: ${names(ack.left_out)}.` : "Nobody is left behind.");
}

function saved(ctx, ack) {
  if (!ack || !ack.ok) return; // ctx.command has shown the error already
  ctx.notice(`${carryWords(ack, { done: true })} Written to the roster “${ack.name}”.`, "ok");
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
  const fallen = h("input", { type: "checkbox", checked: carryFallen, dataset: { testid: "survivors-fallen" } });
  const fallenRow = h("label", { class: "assign-row", hidden: true }, fallen, h("span", {}, " Also carry on those who fell but live"));
  // who carries on, as the server says (asked again when the GM ticks or unticks the fallen)
  const summary = h("p", { class: "survivors-summary", "aria-live": "polite", dataset: { testid: "survivors-summary" } }, "…");
  let preview = null;
  const ask = async () => {
    preview = null;
    const ack = ctx.conn ? await ctx.conn.command("survivors_preview", { fallen: fallen.checked }) : null;
    if (!ack) { replace(summary, ""); return; }
    if (!ack.ok) { replace(summary, ack.error || "The survivors cannot be written."); return; }
    preview = ack;
    fallenRow.hidden = !ack.fallen.length;
    if (ack.fallen.length) replace(fallenRow.lastChild, ` Also carry on those who fell but live: ${names(ack.fallen)}`);
    replace(summary, carryWords(ack));
  };
  fallen.addEventListener("change", () => { carryFallen = fallen.checked; ask(); });
  ask();
  const send = async (payload) => saved(ctx, await ctx.command("survivors_save", { ...payload, load: load.checked, fallen: fallen.checked }));
  return h("section", { class: "survivors", dataset: { testid: "survivors-panel" } },
    h("p", { class: "report-link" },
      h("a", { href: reportUrl(table.slug, state.battleId), target: "_blank", rel: "noopener", dataset: { testid: "report-link" } },
        "Battle report"),
      h("span", { class: "muted" }, " Who fought, the key moments, start and end values, the dice and a chart: print it or keep it.")),
    h("h3", {}, "Survivors carry on"),
    h("p", { class: "muted" },
      "Write the state of those still standing at the end of this battle into a saved roster, so the next battle starts where this one stopped. ",
      "The defeated are left behind. “How this system works” says what carries over."),
    summary,
    fallenRow,
    h("label", { class: "assign-row" }, load, h("span", {}, " Make the survivors the lineup now")),
    h("div", { class: "button-row" },
      from ? button(`Write over “${from.name}”`, () => {
        const what = preview ? ` ${carryWords(preview)}` : "";
        if (confirm(`Replace the roster “${from.name}” with the survivors?${what}`)) send({ roster_id: from.id });
      }, { class: "big", dataset: { testid: "survivors-over" } }) : null,
    ),
    h("div", { class: "button-row" },
      name,
      button("Save as a new roster", () => send({ name: name.value }), { class: "big", dataset: { testid: "survivors-new" } }),
    ),
  );
}
