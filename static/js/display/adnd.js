// AD&D on the table display: the grid with named tokens, whoever's clock runs, the charges declared
// (their paths, numbered by segment) and the round and segment in the turn cue.
import { drawGridBoard, joinParts } from "./common.js";

export function render(root, view, ctx) {
  // one who fled stays where it was last seen, marked, unless another has taken that square since
  const all = view.combatants || [];
  const held = new Set(all.filter((c) => c.condition !== "fled").map((c) => `${c.x},${c.y}`));
  const list = all.filter((c) => c.condition !== "fled" || !held.has(`${c.x},${c.y}`));
  const byId = Object.fromEntries(list.map((c) => [c.id, c]));
  const paths = [];
  for (const d of view.declarations || []) {
    const cid = d.combatant || d.id;
    const info = d.target && view.charges && view.charges[cid] && view.charges[cid].targets ? view.charges[cid].targets[d.target] : null;
    if (!info || !info.path || !byId[cid] || !/charge/i.test(String(d.kind || d.action || ""))) continue;
    paths.push({ points: [[byId[cid].x, byId[cid].y], ...info.path], labels: ["", ...info.path.map((_, i) => String(i + 1))], cls: info.arrival_segment ? "ad-path" : "ad-path ad-short" });
  }
  const clockOf = view.clock && view.clock.combatant;
  const g = view.grid || { width: 20, height: 20 };
  drawGridBoard(root, ctx, {
    width: g.width,
    height: g.height,
    blocked: view.blocked,
    tokens: list.map((c) => ({
      id: c.id, x: c.x, y: c.y, name: c.name, side: c.side,
      hp: c.hp != null ? { current: Math.max(0, c.hp), max: c.hp_max } : conditionLevel(c),
      title: `${c.name}: ${c.status}`,
      active: clockOf === c.id,
      dead: c.condition === "dead",
      out: c.condition && c.condition !== "ok" ? c.status || c.condition : null, // "down (stable)", "fled in panic", "surrendered"
      cls: c.condition === "surrendered" ? "surrendered" : "",
    })),
    paths,
  });
}

function conditionLevel(c) {
  if (c.condition === "dead") return { level: 0 };
  if (c.condition === "down" || c.condition === "unconscious") return { level: 0.15 };
  return null;
}

export function cue(view) {
  if (view.status === "ended") return { now: null, headline: view.outcome && view.outcome.text ? view.outcome.text : "The encounter is over", detail: "" };
  const sur = view.surprise || {};
  const where = sur.segment ? `Surprise segment ${sur.segment} of ${sur.segments}` : view.round ? `Round ${view.round}` : "";
  const seg = view.current_segment ? `segment ${view.current_segment}` : "";
  const clock = view.clock && (view.combatants || []).find((c) => c.id === view.clock.combatant);
  return {
    now: clock ? clock.name : null,
    seat: clock ? clock.seat : null,
    headline: clock ? null : view.phase_label || "",
    detail: joinParts(where, seg || (view.round ? view.phase_label : "")),
  };
}

export function result(view) {
  return view.outcome && view.outcome.text ? view.outcome.text : null;
}
