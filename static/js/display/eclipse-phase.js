// Eclipse Phase on the table display: the grid, every combatant as a named token with its health
// ring (a level and a word: the spectator sees no Durability numbers), the active combatant, and the
// attack under way drawn from attacker to defender.
import { drawGridBoard, joinParts } from "./common.js";

export function render(root, view, ctx) {
  const list = view.combatants || [];
  const byId = Object.fromEntries(list.map((c) => [c.id, c]));
  const paths = [];
  const highlights = [];
  const exchange = view.pending || view.last_exchange;
  if (exchange && byId[exchange.attacker] && byId[exchange.defender]) {
    const a = byId[exchange.attacker];
    const d = byId[exchange.defender];
    paths.push({ points: [[a.x, a.y], [d.x, d.y]], cls: "ep-attack" });
    highlights.push({ x: d.x, y: d.y, cls: "target", label: "defender" });
  }
  drawGridBoard(root, ctx, {
    width: view.options.width,
    height: view.options.height,
    blocked: view.blocked,
    tokens: list.map((c) => ({
      id: c.id, x: c.x, y: c.y, name: c.name, side: c.side,
      hp: c.durability !== undefined ? { current: Math.max(0, c.durability - c.damage), max: c.durability } : { level: c.health ? c.health.level : 1, label: c.health ? c.health.label : "" },
      title: `${c.name}: ${c.health ? c.health.label : ""}`,
      badge: c.wounds && !outOfFight(c) ? `${c.wounds}W` : null,
      active: c.id === view.active,
      dead: c.state === "dead",
      out: outOfFight(c),
    })),
    paths,
    highlights,
  });
}

// the word for a combatant out of the fight, or null: dead, incapacitated (its Durability gone) or
// unconscious (a knocked-down, knocked-out combatant kept a green ring before)
function outOfFight(c) {
  if (c.state === "dead") return "dead";
  if ((c.conditions || []).includes("unconscious")) return "unconscious";
  if (c.state && c.state !== "ok") return String(c.state);
  return null;
}

export function cue(view) {
  if (view.status === "ended") return { now: null, headline: view.outcome ? view.outcome.text || "The fight is over" : "The fight is over", detail: `Action turn ${view.round}` };
  if (view.initiative_due && view.status === "active") return { now: null, headline: view.initiative_due.text, detail: "" };
  const active = (view.combatants || []).find((c) => c.id === view.active);
  return { now: view.active_name || (active && active.name) || null, seat: active ? active.seat : null, detail: joinParts(view.round ? `Action turn ${view.round}` : "") };
}

export function result(view) {
  if (view.outcome && view.outcome.text) return view.outcome.text;
  // a called shot just resolved: whether it came off is the result the table waits for
  const x = view.last_exchange;
  return !view.pending && x && x.called_shot && x.round === view.round ? x.called_shot.text : null;
}
