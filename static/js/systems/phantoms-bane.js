// Phantom's Bane board: two combatant cards, the four option buttons, and the last turn's dice.
// Draws only what the server sent; what a viewer may do comes from view.legal.

import * as kit from "../kit.js"; // the shared front-end kit (token, die, health bar, turn strip, action button, panel)
import * as odds from "../odds.js"; // odds before choosing, from the server (issue 17)

const OPTION_ORDER = ["press", "attack", "defend", "run_away"];
const ATTR_LABEL = { offence: "Offence", defence: "Defence", health: "Health" };
let lastAnimatedTurn = null;
let latest = null; // the latest draw's context (a kept button row asks its odds at the latest version)

export function render(root, view, ctx) {
  latest = ctx;
  // health-like bars from the shared kit (numbers as text, never colour alone)
  const kitBar = (current, max, text) => kit.healthBar(current, max, { label: text, text });
  const { h, replace } = ctx.ui;
  const order = view.order || Object.keys(view.combatants || {});
  const cs = view.combatants || {};
  const name = (cid) => (cs[cid] ? cs[cid].name : cid);
  const labels = (view.options && view.options.labels) || {};
  const optionLabel = (o) => labels[o] || o;

  const last = view.last_turn;
  const fresh = !!last && lastAnimatedTurn !== `${view.turn}:${last.turn}`;
  if (last) lastAnimatedTurn = `${view.turn}:${last.turn}`;

  // the board is kept between updates and each part drawn again only when what it shows changes:
  // the option buttons stay the same elements while the player's thumb is on them (a client seed or
  // an odds answer landing mid-tap no longer swaps the button under it)
  const [board, newBoard] = ctx.ui.keptBoard(root, `pb|${ctx.role}|${ctx.battleId}`); // a new battle, a new board
  board.className = "pb";
  board.dataset.status = view.status || "";
  const { part } = ctx.ui;
  const chosen = order.map((cid) => cs[cid] && [cid, cs[cid].has_chosen, cs[cid].choice || null, cs[cid].controller]);
  const actionsItem = part("actions", [view.status, view.turn, view.legal || [], chosen], actions);
  actionsItem.update = (el) => {
    for (const b of el.querySelectorAll(".pb-sending")) b.classList.remove("pb-sending");
    for (const row of el.querySelectorAll(".pb-options")) {
      const folded = row.lazyOdds && !(row.closest("details") || {}).open;
      if (row.loadOdds && !folded) row.loadOdds();
    }
  };
  ctx.ui.keyed(board, [
    part("header", [view.status, view.outcome || null, view.waiting_for || [], view.turn, view.escape_possible], header),
    part("duel", [view.status, order, cs, labels], () => h("div", { class: "pb-duel" }, order.map((cid) => card(cid)))),
    actionsItem,
    part("mine", [order, cs], mineStrip),
    part("last", [view.turn, last || null], lastTurn),
  ]);
  if (!newBoard && ctx.regionsChanged) ctx.regionsChanged(); // the page moves the parts due now to the top

  function header() {
    if (view.status === "ended" && view.outcome) {
      return h(
        "div",
        { class: `pb-banner pb-result-${view.outcome.result || "ended"}`, dataset: { testid: "outcome" } },
        h("strong", {}, view.outcome.text),
      );
    }
    const waiting = (view.waiting_for || []).map(name);
    return h(
      "div",
      { class: "pb-banner" },
      h("span", { class: "pb-turn", dataset: { testid: "turn" } }, `Turn ${view.turn}`),
      h(
        "span",
        { class: "pb-waiting" },
        waiting.length ? `Waiting for ${waiting.join(" and ")}` : "Both have chosen",
      ),
      ctx.role === "gm" && view.escape_possible === false
        ? h("span", { class: "pb-tag pb-tag-warn", dataset: { testid: "escape-blocked" } }, "No escape")
        : null,
    );
  }

  function stat(label, cur, max) {
    const hurt = cur < max;
    return h(
      "div",
      { class: `pb-stat${hurt ? " pb-stat-down" : ""}`, title: label },
      h(
        "span",
        { class: "pb-stat-label" },
        h("span", { class: "pb-long" }, label),
        h("span", { class: "pb-short", "aria-hidden": "true" }, label === "Skill" ? label : label.slice(0, 3)),
      ),
      h("span", { class: "pb-stat-value" }, ctx.ui.slash(cur, max)),
    );
  }

  function gear(kind, item, labelText) {
    const natural = item && item.natural ? " · natural" : "";
    return h(
      "div",
      { class: "pb-gear" },
      h("span", { class: "pb-stat-label" }, kind),
      h("span", { class: "pb-gear-value" }, item ? `${labelText}${natural}` : "none"),
    );
  }

  function card(cid) {
    const c = cs[cid];
    const status = c.defeated ? "Defeated" : c.escaped ? "Escaped" : null;
    const chosenText =
      view.status !== "active" ? "" : c.has_chosen ? "✓ Has chosen" : "… Choosing";
    return h(
      "article",
      {
        class: `pb-card side-${String(c.side).toLowerCase()}${c.mine ? " pb-mine" : ""}${c.defeated ? " pb-defeated" : ""}`,
        dataset: { testid: `combatant-${cid}`, side: c.side },
      },
      h(
        "header",
        { class: "pb-card-head" },
        h("span", { class: "pb-side" }, `Side ${c.side}`),
        h("h3", { class: "pb-name" }, c.name),
        h("span", { class: "pb-controller muted" }, controllerText(c)),
      ),
      view.status === "active"
        ? h(
            "div",
            {
              class: `pb-chosen ${c.has_chosen ? "yes" : "no"}`,
              dataset: { testid: `chosen-${cid}`, chosen: c.has_chosen ? "true" : "false" },
            },
            chosenText,
            c.choice ? h("strong", { class: "pb-own-choice" }, ` — ${optionLabel(c.choice)}`) : null,
          )
        : null,
      status ? h("div", { class: "pb-tag pb-tag-status" }, status) : null,
      h("div", { class: "pb-health" }, kitBar(c.health, c.health_max, `Health ${ctx.ui.slash(c.health, c.health_max)}`)),
      h(
        "div",
        { class: "pb-stats" },
        stat("Offence", c.offence, c.offence_max),
        stat("Defence", c.defence, c.defence_max),
        stat("Skill", c.skill, c.skill_max),
      ),
      gear("Weapon", c.weapon, c.weapon_label),
      gear("Armour", c.armour, c.armour_label),
      c.destroyed && c.destroyed.length
        ? h(
            "div",
            { class: "pb-destroyed", dataset: { testid: `destroyed-${cid}` } },
            h("span", { class: "pb-stat-label" }, "Destroyed"),
            c.destroyed.map((d) => h("s", { class: "pb-broken" }, `${d.name} (+${d.max_bonus})`)),
          )
        : null,
      c.temperament && ctx.role === "gm" && c.controller === "computer"
        ? h("div", { class: "muted pb-temper" }, `Computer, ${c.temperament}`)
        : null,
    );
  }

  // the player's own numbers, at the top of the phone
  function mineStrip() {
    if (ctx.role !== "player") return null;
    const mine = order.filter((cid) => cs[cid] && cs[cid].mine);
    if (!mine.length) return null;
    return h("section", { class: "pb-mine", dataset: { testid: "pb-mine", region: "mine" }, "aria-label": "Your duellist" },
      mine.map((cid) => {
        const c = cs[cid];
        return h("div", { class: `pb-mine-one side-${String(c.side).toLowerCase()}` },
          h("strong", { class: "pb-mine-name" }, kit.sideBadge(c.side, ["A", "B"]), " ", c.name),
          kitBar(c.health, c.health_max, `Health ${ctx.ui.slash(c.health, c.health_max)}`),
          h("span", { class: "pb-mine-numbers" },
            `Offence ${ctx.ui.slash(c.offence, c.offence_max)} · Defence ${ctx.ui.slash(c.defence, c.defence_max)} · Skill ${ctx.ui.slash(c.skill, c.skill_max)}`));
      }));
  }

  function controllerText(c) {
    if (c.controller === "computer") return "computer";
    if (c.controller === "gm") return "GM";
    return c.mine ? "you" : "player";
  }

  function chooseButtons(cid, templates, { lazy = false } = {}) {
    const byOption = Object.fromEntries(templates.map((t) => [t.option, t]));
    const row = chooseRow(cid, templates, byOption);
    // the odds of each option (averaged over the foe's options) on its button, the table a tap away
    // (lazy: the GM's folded "choose for a player" asks only once unfolded)
    const slot = h("div", { class: "odds-slot", dataset: { testid: "odds-slot" } });
    const load = () => odds.withOdds(latest, { type: "choose", combatant: cid }, (answer) => {
      const same = JSON.stringify(answer);
      if (row.oddsDrawn === same) return; // the same figures for a newer version: an open table stays open
      row.oddsDrawn = same;
      for (const choice of answer.choices || []) {
        const button = row.querySelector(`[data-option="${choice.option}"]`);
        if (button) odds.decorate(button, choice, choice.option === "run_away"
          ? [{ key: "escape", word: "escape", always: true }, { key: "deal_damage", word: "hit" }]
          : [{ key: "deal_damage", word: "hit", always: true }, { key: "defeat_foe", word: "win" }]);
      }
      replace(slot, odds.disclosure(answer, { summary: "Odds of each option, per foe's choice", id: `pb-${cid}` }));
    }, () => row.isConnected);
    row.loadOdds = load; // asked again for each newer version while the row is kept (see the actions part)
    row.lazyOdds = lazy;
    if (!lazy) load();
    return [row, slot];
  }

  function chooseRow(cid, templates, byOption) {
    return h(
      "div",
      { class: "pb-options" },
      OPTION_ORDER.filter((o) => byOption[o]).map((o) => {
        const t = byOption[o];
        const button = kit.actionButton(t.label, (ev) => {
          ev.currentTarget.classList.add("pb-sending");
          ctx.send({ type: "choose", combatant: cid, option: o });
        }, {
          testid: `choose-${o}`, combatant: cid, pressed: !!t.selected, hint: t.help || "", title: t.help || "",
          cls: `big pb-option pb-option-${o}${t.selected ? " selected" : ""}`,
        });
        button.dataset.option = o;
        button.dataset.action = "choose";
        return button;
      }),
    );
  }

  function actions() {
    const legal = view.legal || [];
    if (view.status !== "active") return null;
    const chooses = legal.filter((t) => t.type === "choose");
    const groups = [];
    for (const cid of order) {
      const mine = chooses.filter((t) => t.combatant === cid);
      if (mine.length) groups.push([cid, mine]);
    }
    if (ctx.role === "gm") {
      const force = legal.find((t) => t.type === "force_resolve");
      const escape = legal.find((t) => t.type === "set_escape");
      return h(
        "section",
        { class: "pb-actions pb-actions-gm", dataset: { region: "due" } },
        groups.map(([cid, templates]) => {
          const c = cs[cid];
          const buttons = chooseButtons(cid, templates, { lazy: c.controller !== "gm" });
          const block = [
            h("h3", {}, `${c.name}${c.has_chosen && c.choice ? ` — ${optionLabel(c.choice)}` : ""}`),
            buttons,
          ];
          if (c.controller === "gm") return h("div", { class: "pb-choose-block" }, block);
          return h(
            "details",
            { class: "pb-choose-block pb-override", ontoggle: (ev) => { if (ev.currentTarget.open) buttons[0].loadOdds(); } },
            h("summary", {}, `Choose for ${c.name} (played by ${controllerText(c)})`),
            block.slice(1),
          );
        }),
        h(
          "div",
          { class: "button-row pb-gm-row" },
          force
            ? h(
                "button",
                {
                  type: "button",
                  class: "big primary",
                  title: force.help || "",
                  dataset: { testid: "force-resolve" },
                  onclick: () => ctx.send({ type: "force_resolve" }),
                },
                force.label,
              )
            : null,
          escape
            ? h(
                "button",
                {
                  type: "button",
                  class: "big",
                  title: escape.help || "",
                  dataset: { testid: "toggle-escape", possible: String(escape.possible) },
                  onclick: () => ctx.send({ type: "set_escape", possible: escape.possible }),
                },
                escape.label,
              )
            : null,
        ),
        escape && escape.help ? h("p", { class: "muted" }, escape.help) : null,
      );
    }
    if (ctx.role === "player") {
      if (!groups.length) {
        // a seat with no duellist: the page says the GM will give it one. A duellist's real dice
        // due: the dice card above asks for them (or says whose roll it waits for)
        const own = order.some((cid) => cs[cid] && cs[cid].mine);
        if (!own || (view.physical && view.physical.due)) return null;
        return h(
          "section",
          { class: "pb-actions", dataset: { region: "due", yourTurn: "false" } },
          h("p", { class: "pb-choose-block muted" }, "Nothing to choose just now: the board goes on."),
        );
      }
      const open = groups.some(([cid]) => !cs[cid].has_chosen);
      return h(
        "section",
        { class: "pb-actions", dataset: { region: "due", yourTurn: String(open) } },
        groups.map(([cid, templates]) => {
          const c = cs[cid];
          const foe = order.find((x) => x !== cid);
          const waiting = c.has_chosen && foe && cs[foe] && !cs[foe].has_chosen;
          return h(
            "div",
            { class: "pb-choose-block" },
            h("h3", {}, groups.length > 1 ? `${c.name}: your choice` : "Your choice"),
            chooseButtons(cid, templates),
            h(
              "p",
              { class: "pb-hint", dataset: { testid: "waiting" } },
              waiting
                ? `Waiting for the other side… you may still change your mind.`
                : c.has_chosen
                  ? "Chosen."
                  : "Pick one — the other side cannot see it.",
            ),
          );
        }),
      );
    }
    return null;
  }

  function dieBox(face, caption, highlight) {
    return h(
      "div",
      { class: `pb-die-box${highlight ? " pb-die-hot" : ""}` },
      kit.die(face, { fresh, sides: 6, label: caption }),
      h("span", { class: "pb-die-caption" }, caption),
    );
  }

  function totalsLine(cid) {
    const t = last.totals[cid];
    const part = (x) => {
      const bits = [`${x.die} die`, `${x.attribute} attr`];
      if (x.modifier) bits.push(`${x.modifier > 0 ? "+" : ""}${x.modifier} ${x.modifier > 0 ? "bonus" : "penalty"}`);
      if (x.gear) bits.push(`+${x.gear} gear`);
      return bits.join(" ");
    };
    return h(
      "div",
      { class: "pb-totals-row" },
      h("strong", {}, `${name(cid)} (${optionLabel(last.effective[cid])})`),
      h("span", {}, `Offence ${t.offence.total}`, h("small", { class: "muted" }, ` = ${part(t.offence)}`)),
      h("span", {}, `Defence ${t.defence.total}`, h("small", { class: "muted" }, ` = ${part(t.defence)}`)),
    );
  }

  function sentences() {
    const out = [];
    const esc = last.escape;
    if (esc) {
      for (const r of esc.runners) {
        if (esc.escaped.includes(r)) {
          out.push(esc.automatic ? `${name(r)} got away without a roll.` : `${name(r)} got away.`);
        } else if (esc.impossible) {
          out.push(`${name(r)} found no way out and had to attack.`);
        } else {
          out.push(`${name(r)} could not break away and had to attack.`);
        }
      }
      if (esc.rolls) {
        for (const [cid, r] of Object.entries(esc.rolls)) {
          const attr = esc.runners.includes(cid) ? "Defence" : "Offence";
          out.push(`${name(cid)}: ${r.faces.join(" + ")} + ${r.attribute} ${attr} + ${r.skill} Skill = ${r.total}`);
        }
      }
    }
    for (const cid of order) {
      const d = last.damage && last.damage[cid];
      if (!d) continue;
      if (d.hits) out.push(`${name(cid)} takes ${d.hits} from the exchange.`);
    }
    for (const p of last.penetrations || []) {
      out.push(`${name(p.by)} penetrates ${name(p.on)}: ${p.half_dice.join(" + ")} extra${p.doubled ? " (pressing: two dice)" : ""}.`);
    }
    for (const c of last.counters || []) {
      out.push(`${name(c.by)} counters ${name(c.on)}: ${c.half_dice.join(" + ")} extra${c.doubled ? " (defending: two dice)" : ""}.`);
    }
    for (const w of last.wear || []) {
      out.push(`${name(w.combatant)}'s ${w.name}: +${w.before} → +${w.after}${w.destroyed ? ", destroyed" : ""}.`);
    }
    for (const w of last.weakening || []) {
      out.push(`${name(w.combatant)} weakens: ${ATTR_LABEL[w.attribute] || w.attribute} ${w.before} → ${w.after}.`);
    }
    for (const cid of last.defeated || []) out.push(`${name(cid)} is defeated.`);
    const anyDamage = order.some((cid) => last.damage && last.damage[cid] && last.damage[cid].total);
    if (!anyDamage && last.dice) out.push("Nobody is hurt.");
    return out;
  }

  function lastTurn() {
    if (!last) {
      return h(
        "section",
        { class: "pb-last card", dataset: { testid: "last-turn" } },
        h("h2", {}, "Last turn"),
        h("p", { class: "muted" }, "No turn settled yet."),
      );
    }
    const [a, b] = order;
    const pens = new Set((last.penetrations || []).map((p) => p.by));
    const counters = new Set((last.counters || []).map((c) => c.by));
    const chosen = order.map((cid) => `${name(cid)}: ${optionLabel(last.options[cid])}`).join(" · ");
    return h(
      "section",
      { class: "pb-last card", dataset: { testid: "last-turn", turn: last.turn } },
      h("h2", {}, `Last turn: turn ${last.turn}`),
      h("p", { class: "pb-revealed" }, chosen),
      last.dice
        ? h(
            "div",
            { class: "pb-dice" },
            h(
              "div",
              { class: "pb-dice-side side-a" },
              dieBox(last.dice[a].offence, `${name(a)} offence`, pens.has(a)),
              dieBox(last.dice[a].defence, `${name(a)} defence`, counters.has(a)),
            ),
            h(
              "div",
              { class: "pb-dice-side side-b" },
              dieBox(last.dice[b].offence, `${name(b)} offence`, pens.has(b)),
              dieBox(last.dice[b].defence, `${name(b)} defence`, counters.has(b)),
            ),
          )
        : null,
      last.totals ? h("div", { class: "pb-totals" }, order.map(totalsLine)) : null,
      h("ul", { class: "pb-outcome" }, sentences().map((s) => h("li", {}, s))),
    );
  }
}
