// Links to a finished battle's replay page (/t/<slug>/battles/<id>/replay).
//
// replayLink(table, state): for the GM console's battle controls (setup.js renderControls): once the
// table's battle has ended, a large link to its replay (the GM's own: every event, hidden ones too).
// It returns an element (or null while no battle has ended), so the controls can re-draw it freely.
//
// mountDisplayReplayLink(band, slug, battleId, status): for the table display, after a battle ends:
// asks the board whether this (public) screen may open the replay (only when the GM marked the
// battle shareable; asked again every 15 s until then) and shows its address with a QR code that
// phones at the table can scan, in a corner of the display's bottom band (where the join corner is,
// when that is not showing).

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

let current = null; // the battle the display shows: {battleId, timer}
const RECHECK_MS = 15000; // a display asks again while the battle is not shared: the GM may share it

function corner(band) {
  let el = band.querySelector("#replay-corner");
  if (!el) {
    el = h("section", { id: "replay-corner", class: "d-join d-replay-corner", dataset: { testid: "replay-corner" }, hidden: true });
    band.append(el);
    const join = band.querySelector("#join");
    if (join) new MutationObserver(() => { if (!join.hidden) el.hidden = true; }).observe(join, { attributes: true, attributeFilter: ["hidden"] });
  }
  return el;
}

export async function mountDisplayReplayLink(band, slug, battleId, status) {
  if (!band) return;
  const root = corner(band);
  const join = band.querySelector("#join");
  if (current && current.battleId !== battleId) { clearTimeout(current.timer); current = null; }
  if (!battleId || status !== "ended") { replace(root); root.hidden = true; return; }
  if (current && current.answer) { show(root, current.answer, join); return; }
  current = current || { battleId, timer: null, answer: null };
  let answer;
  try {
    const response = await fetch(`${replayUrl(slug, battleId)}/link`, { credentials: "same-origin" });
    answer = response.ok ? await response.json() : { available: false };
  } catch {
    answer = { available: false };
  }
  if (!current || current.battleId !== battleId) return; // another battle meanwhile
  if (answer.available && answer.public) {
    current.answer = answer;
  } else {
    clearTimeout(current.timer);
    current.timer = setTimeout(() => mountDisplayReplayLink(band, slug, battleId, status), RECHECK_MS);
  }
  show(root, answer, join);
}

function show(root, answer, join) {
  // the join corner keeps its place when it shows (the band has room for one corner)
  if (!answer.available || !answer.public || (join && !join.hidden)) { replace(root); root.hidden = true; return; }
  root.hidden = false;
  replace(root,
    answer.qr ? h("img", { class: "d-join-qr", src: answer.qr, alt: "QR code of the replay", width: 180, height: 180 }) : null,
    h("div", { class: "d-join-text" },
      h("span", { class: "d-join-label" }, "Watch it again"),
      h("a", { class: "d-join-url", href: answer.url, dataset: { testid: "display-replay-link" } }, answer.url.replace(/^https?:\/\//, ""))));
}
