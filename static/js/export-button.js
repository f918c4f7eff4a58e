// The GM console's "Download this battle" link (a JSON export: every command, event and die, the
// commitment, the client seeds and, once ended, the revealed seed) and the "share" switch of a
// finished battle (replay, report and download for anyone). Mount with
// mountExportButton(afterElement, table, state, ctx); it keeps one panel of its own right after
// afterElement, so re-rendering the controls does not remove it.
import { h, replace } from "./ui.js";

const shared = new Map(); // battle id -> shareable, as the server last said

export function mountExportButton(after, table, state, ctx) {
  if (!after || !table || !state || !state.battleId) return null;
  let panel = after.parentElement.querySelector(":scope > [data-testid=export-panel]");
  if (!panel) {
    panel = h("div", { class: "export-panel", dataset: { testid: "export-panel" } });
    after.after(panel);
  }
  const battleId = state.battleId;
  const ended = state.status === "ended";
  const href = `/t/${encodeURIComponent(table.slug)}/battles/${battleId}/export.json`;
  const link = h("a", { href, download: `battle-${table.slug}-${battleId}.json`, class: "button", dataset: { testid: "export-battle" } },
    ended ? "Download this battle (JSON, with the revealed dice seed)" : "Download this battle so far (JSON; the seed comes with the end)");
  const box = h("input", { type: "checkbox", id: `share-${battleId}`, dataset: { testid: "share-battle" } });
  box.checked = !!shared.get(battleId);
  box.addEventListener("change", async () => {
    const ack = await ctx.command("battle_share", { shareable: box.checked });
    if (ack && ack.ok) shared.set(battleId, ack.shareable);
    else box.checked = !box.checked;
  });
  const label = h("label", { for: `share-${battleId}` },
    " Share this battle once it has ended: anyone with its link may see the replay, the report and this download");
  replace(panel, h("p", {}, link), h("p", {}, box, label));
  if (ended && !shared.has(battleId)) { // learn whether it is shared already (the replay link says)
    fetch(`/t/${encodeURIComponent(table.slug)}/battles/${battleId}/replay/link`, { credentials: "same-origin" })
      .then((r) => r.json()).then((answer) => {
        if (answer && answer.available) { shared.set(battleId, !!answer.public); box.checked = !!answer.public; }
      }).catch(() => {});
  }
  return panel;
}
