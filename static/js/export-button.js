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
  const key = JSON.stringify([table.slug, battleId, ended]);
  if (panel.__key === key && panel.firstChild) return panel; // (the same link and switch: kept as they are)
  panel.__key = key;
  const href = `/t/${encodeURIComponent(table.slug)}/battles/${battleId}/export.json`;
  const link = h("a", { href, download: `battle-${table.slug}-${battleId}.json`, dataset: { testid: "export-battle" } },
    ended ? "⬇ Download this battle" : "⬇ Download this battle so far");
  const what = ended
    ? " One JSON file: every command, event and die, the commitment, the players' seeds and the revealed dice seed. Anyone can check it with battleboard verify or "
    : " One JSON file of the log so far; the dice seed comes with the end. ";
  const script = h("a", { href: "/static/verify_dice.py", download: "verify_dice.py", dataset: { testid: "verify-script" } }, "verify_dice.py");
  const box = h("input", { type: "checkbox", id: `share-${battleId}`, dataset: { testid: "share-battle" } });
  box.checked = !!shared.get(battleId);
  box.addEventListener("change", async () => {
    const ack = await ctx.command("battle_share", { shareable: box.checked });
    if (ack && ack.ok) shared.set(battleId, ack.shareable);
    else box.checked = !box.checked;
  });
  // the battle's number, for `battleboard replay|export|report <id>` and for telling battles apart
  const number = h("span", { class: "muted", dataset: { testid: "battle-id" }, title: "This battle's id: battleboard replay, export and report take it" },
    `Battle #${battleId} · `);
  replace(panel,
    h("p", { class: "report-link" }, number, link, h("span", { class: "muted" }, what, ended ? script : null, ended ? "." : null)),
    h("label", { class: "assign-row", for: `share-${battleId}` }, box,
      h("span", {}, " Share once ended: anyone with the link sees the replay, the report and this file")));
  if (ended && !shared.has(battleId)) { // learn whether it is shared already (the replay link says)
    fetch(`/t/${encodeURIComponent(table.slug)}/battles/${battleId}/replay/link`, { credentials: "same-origin" })
      .then((r) => r.json()).then((answer) => {
        if (answer && answer.available) { shared.set(battleId, !!answer.public); box.checked = !!answer.public; }
      }).catch(() => {});
  }
  return panel;
}
