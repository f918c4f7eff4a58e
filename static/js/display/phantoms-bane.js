// Phantom's Bane on the table display: the two duellists large, face to face, each with a "has
// chosen" cue (never the choice itself: the server keeps it until both have chosen), then the reveal
// of both options with the dice, and who is down or gone.
let lastRevealed = null;

export function render(root, view, ctx) {
  const { h, replace } = ctx.ui;
  const { kit } = ctx;
  const cs = view.combatants || {};
  const order = view.order || Object.keys(cs);
  const sides = order.map((cid) => cs[cid] && cs[cid].side);
  const labels = (view.options && view.options.labels) || {};
  const optionLabel = (o) => labels[o] || String(o || "").replace(/_/g, " ");
  const last = view.last_turn;
  const revealKey = last ? `${view.turn}:${last.turn}` : null;
  const fresh = !!last && revealKey !== lastRevealed;
  lastRevealed = revealKey;

  function card(cid) {
    const c = cs[cid];
    if (!c) return null;
    const chosen = view.status === "active" ? h("div", {
      class: `pbd-chosen ${c.has_chosen ? "yes" : "no"}`,
      dataset: { testid: `chosen-${cid}`, chosen: c.has_chosen ? "true" : "false" },
    }, c.has_chosen ? "✓ Has chosen" : "… Choosing") : null;
    const status = c.defeated ? "Defeated" : c.escaped ? "Escaped" : null;
    const revealed = last && last.options && last.options[cid];
    const dice = last && last.dice && last.dice[cid];
    const effective = last && last.effective && last.effective[cid];
    const forced = revealed && effective && effective !== revealed ? effective : null;
    return h("article", { class: `pbd-card ${kit.sideMark(c.side, sides).cls} ${c.defeated ? "is-down" : ""}`, dataset: { testid: `combatant-${cid}` } },
      kit.token({ id: cid, name: c.name, side: c.side, sides, hp: { current: c.health, max: c.health_max }, dead: c.defeated, size: "xl", short: c.name }),
      h("div", { class: "pbd-info" },
        h("h2", { class: "pbd-name" }, c.name),
        kit.healthBar(c.health, c.health_max, { label: "Health", cls: "pbd-health" }),
        h("div", { class: "pbd-stats" },
          h("span", {}, `Offence ${c.offence}`), h("span", {}, `Defence ${c.defence}`), h("span", {}, `Skill ${c.skill}`)),
        chosen,
        status ? h("div", { class: "pbd-status" }, status) : null,
        revealed ? h("div", { class: `pbd-reveal ${fresh ? "is-fresh" : ""}`, dataset: { testid: `reveal-${cid}` } },
          h("span", { class: "pbd-reveal-label" }, `Turn ${last.turn}:`), h("strong", {}, optionLabel(revealed)),
          // a runner who did not get away had to attack instead: the table sees why blows were struck
          forced ? h("span", { class: "pbd-reveal-then", dataset: { testid: `forced-${cid}` } }, `caught: ${optionLabel(forced)}`) : null) : null,
        dice ? h("div", { class: "pbd-dice" },
          dice.offence !== undefined ? h("span", { class: "pbd-die-box" }, "Off ", kit.die(dieFace(dice.offence), { sides: 6, fresh })) : null,
          dice.defence !== undefined ? h("span", { class: "pbd-die-box" }, "Def ", kit.die(dieFace(dice.defence), { sides: 6, fresh })) : null) : null,
      ));
  }

  const [a, b] = order;
  replace(root, h("div", { class: "pbd", dataset: { status: view.status || "" } },
    card(a),
    h("div", { class: "pbd-vs", "aria-hidden": "true" }, "vs"),
    card(b),
  ));
}

function dieFace(value) {
  if (value && typeof value === "object") {
    if (Array.isArray(value.faces)) return value.faces.join("+");
    if (value.total !== undefined) return value.total;
  }
  return value;
}

export function cue(view) {
  const cs = view.combatants || {};
  if (view.status === "ended") return { now: null, headline: view.outcome ? view.outcome.text : "The duel is over", detail: `Turn ${view.turn}` };
  const waiting = (view.waiting_for || []).filter((cid) => cs[cid]);
  if (waiting.length === 1) return { now: cs[waiting[0]].name, seat: cs[waiting[0]].seat || null, detail: `Turn ${view.turn}` };
  return { now: null, headline: waiting.length ? "Both choose in secret" : "Both have chosen", detail: `Turn ${view.turn}` };
}

export function result(view) {
  if (view.outcome && view.outcome.text) return view.outcome.text;
  return null;
}
