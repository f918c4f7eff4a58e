// Battles&Balances on the table display: the grid with named tokens, health rings, action points as
// a badge, the acting combatant, and its reach (and missile range) drawn round it.
import { drawGridBoard, joinParts } from "./common.js";

export function render(root, view, ctx) {
  const list = view.combatants || [];
  const actor = list.find((c) => c.id === view.actor);
  const rings = [];
  if (actor && !actor.defeated) {
    rings.push({ x: actor.x, y: actor.y, r: (actor.reach || 1) + 0.5, cls: "reach", label: `reach ${actor.reach || 1}` });
    if (actor.launcher) rings.push({ x: actor.x, y: actor.y, r: actor.missile_range + 0.5, cls: "missile", label: `range ${actor.missile_range}` });
  }
  const g = view.grid || { width: 12, height: 8 };
  drawGridBoard(root, ctx, {
    width: g.width,
    height: g.height,
    blocked: view.blocked,
    tokens: list.map((c) => ({
      id: c.id, x: c.x, y: c.y, name: c.name, side: c.side,
      hp: { current: Math.max(0, c.health - c.wounds), max: c.health },
      title: `${c.name}: ${Math.max(0, c.health - c.wounds)}/${c.health} health, ${c.ap} AP`,
      badge: c.defeated ? null : `${c.ap}`,
      active: c.id === view.actor,
      dead: !!c.defeated,
      out: c.defeated ? "out of play" : null,
    })),
    rings,
  });
}

export function cue(view) {
  if (view.status === "ended") return { now: null, headline: view.outcome && view.outcome.text ? view.outcome.text : "The battle is over", detail: `Turn ${view.turn}` };
  const actor = (view.combatants || []).find((c) => c.id === view.actor);
  return {
    now: view.actor_name || (actor && actor.name) || null,
    seat: actor ? actor.seat : null,
    detail: joinParts(view.turn ? `Turn ${view.turn}` : "", actor ? `${actor.ap} AP left` : ""),
  };
}

export function result(view) {
  return view.outcome && view.outcome.text ? view.outcome.text : null;
}
