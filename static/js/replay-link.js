// Links to a finished battle's replay page (/t/<slug>/battles/<id>/replay).
//
// replayLink(table, state): for the GM console's battle controls (setup.js renderControls): once the
// table's battle has ended, a large link to its replay (the GM's own: every event, hidden ones too).
// It returns an element (or null while no battle has ended), so the controls can re-draw it freely.
//
// mountDisplayReplayLink(root, slug, battleId, status): for the table display, after a battle ends:
// asks the board whether this (public) screen may open the replay — only when the GM marked the
// battle shareable — and shows its address with a QR code that phones at the table can scan.

import { h, replace } from "./ui.js";

export function replayUrl(slug, battleId) {
  return `/t/${encodeURIComponent(slug)}/battles/${encodeURIComponent(battleId)}/replay`;
}

export function replayLink(table, state) {
  if (!table || !state || !state.battleId || state.status !== "ended") return null;
  return h("p", { class: "replay-link" },
    h("a", { class: "replay-link-a", href: replayUrl(table.slug, state.battleId), target: "_blank", rel: "noopener", dataset: { testid: "replay-link" } },
      "▶ Watch the replay"),
    h("span", { class: "muted" }, " Step through this battle again, hidden choices included. Share it to let anyone open it."));
}

const asked = new Map(); // battle id -> the board's answer, so a re-draw does not ask again

export async function mountDisplayReplayLink(root, slug, battleId, status) {
  if (!root) return;
  if (!battleId || status !== "ended") { replace(root); root.hidden = true; return; }
  let answer = asked.get(battleId);
  if (!answer) {
    try {
      const response = await fetch(`${replayUrl(slug, battleId)}/link`, { credentials: "same-origin" });
      answer = response.ok ? await response.json() : { available: false };
    } catch {
      answer = { available: false };
    }
    if (answer.available) asked.set(battleId, answer); // a refusal is asked again: the GM may share it soon
  }
  if (!answer.available || !answer.public) { replace(root); root.hidden = true; return; }
  root.hidden = false;
  replace(root,
    answer.qr ? h("img", { class: "replay-link-qr", src: answer.qr, alt: "QR code of the replay", width: 160, height: 160 }) : null,
    h("div", { class: "replay-link-text" },
      h("span", { class: "replay-link-label" }, "Watch this battle again"),
      h("a", { href: answer.url, dataset: { testid: "display-replay-link" } }, answer.url.replace(/^https?:\/\//, ""))));
}
