// Battles&Balances board: the grid with tokens and AP badges, reach and range rings around the
// selected character, the AP panel, the timeline of coming turns, the acting viewer's actions with
// their costs, the GM's contest/check and healing tools, and the last check or contest.
// It draws only what the server sent; every cost, range and legal action comes from the view.

import * as kit from "../kit.js"; // the shared front-end kit (token, die, health bar, turn strip, action button, panel)
import * as odds from "../odds.js"; // odds before committing, from the server (issue 17)

let selected = null; // id of the token whose rings are shown
let moveMode = false; // the acting viewer is picking a square to move to
let openTool = null; // the GM tool whose form is open
const toolValues = {}; // what the GM last typed into each tool form
let allyOpen = false; // the fold of attacks on allies is open
let scrollToGrid = false; // bring the grid into view once move mode starts (a phone has it above the buttons)

export function render(root, view, ctx) {
  // health-like bars from the shared kit (numbers as text, never colour alone)
  const kitBar = (current, max, text) => kit.healthBar(current, max, { label: text, text });
  const { h, replace } = ctx.ui;
  const list = view.combatants || [];
  const byId = Object.fromEntries(list.map((c) => [c.id, c]));
  const legal = view.legal || [];
  const actions = legal.filter((t) => !t.tool);
  const tools = legal.filter((t) => t.tool);
  const moveTemplate = actions.find((t) => t.type === "move");
  if (!moveTemplate) moveMode = false;
  if (selected && !byId[selected]) selected = null;
  if (!selected) {
    const mine = list.find((c) => c.mine && !c.defeated);
    selected = (mine && mine.id) || view.actor || null;
  }

  // the grid's box is kept while the role and battle are the same: tokens update in place, zoom stays
  const gridBox = ctx.ui.keptElement("bb-grid", `${ctx.role}|${ctx.battleId}`, () => h("div", { class: "bb-grid", dataset: { testid: "bb-grid" } }));
  replace(
    root,
    h(
      "div",
      { class: `bb bb-role-${ctx.role}`, dataset: { status: view.status || "" } },
      banner(),
      lastResult(),
      h(
        "div",
        { class: "bb-main" },
        h("div", { class: "bb-board" }, gridBox, moveMode ? h("p", { class: "bb-hint", dataset: { testid: "move-hint" } }, "Tap a highlighted square to move there (its cost shows on the square). Tap Move again to cancel.") : null),
        h("div", { class: "bb-panel" }, actionPanel(), selectedCard(), apPanel(), timelinePanel()),
      ),
      lastRolls(),
      toolPanel(),
    ),
  );
  drawGrid(gridBox);
  if (scrollToGrid) {
    scrollToGrid = false;
    if (gridBox.scrollIntoView) gridBox.scrollIntoView({ block: "center" });
  }

  // ---------------------------------------------------------------------------------------
  function banner() {
    if (view.status === "ended") {
      const text = (view.outcome && view.outcome.text) || "The battle is over.";
      return h("div", { class: "bb-banner bb-ended", dataset: { testid: "outcome" } }, h("strong", {}, text));
    }
    if (!list.length) {
      return h("div", { class: "bb-banner" }, h("strong", {}, "A scene without fighters: the GM can run checks and contests."));
    }
    const actor = view.actor ? byId[view.actor] : null;
    const next = view.next ? byId[view.next] : null;
    return h(
      "div",
      { class: "bb-banner" },
      h("span", { class: "bb-now", dataset: { testid: "actor" } }, actor ? `Now: ${actor.name}` : "Nobody can act"),
      actor ? apBadge(actor.ap, "bb-now-ap") : null,
      next ? h("span", { class: "bb-next", dataset: { testid: "next-actor" } }, `Next: ${next.name}`) : null,
      h("span", { class: "muted bb-turn" }, `Turn ${view.turn}`),
    );
  }

  function apBadge(ap, cls = "") {
    return h("span", { class: `bb-ap ${ap < 0 ? "bb-ap-neg" : ap === 0 ? "bb-ap-zero" : ""} ${cls}` }, `${ap} AP`);
  }

  // ---------------------------------------------------------------------------------------
  function drawGrid(box) {
    const sel = selected ? byId[selected] : null;
    const rings = [];
    if (sel && !sel.defeated) {
      rings.push({ x: sel.x, y: sel.y, r: sel.reach + 0.5, cls: "melee", label: `reach ${sel.reach}` });
      if (sel.launcher) rings.push({ x: sel.x, y: sel.y, r: sel.missile_range + 0.5, cls: "missile", label: `range ${sel.missile_range}` });
    }
    const highlights = [];
    if (moveMode && moveTemplate) {
      for (const d of moveTemplate.destinations) {
        highlights.push({ x: d.x, y: d.y, cls: `${d.leaves_reach ? "bb-leave" : "bb-step"}${d.cost > (byId[moveTemplate.combatant] || {}).ap ? " bb-borrow" : ""}`, label: `${d.cost} AP` });
      }
    }
    for (const t of actions) {
      if ((t.type === "attack" || t.type === "shoot") && byId[t.target]) {
        highlights.push({ x: byId[t.target].x, y: byId[t.target].y, cls: "target", label: t.label });
      }
    }
    const tokens = list.map((c) => ({
      id: c.id,
      x: c.x,
      y: c.y,
      label: initials(c.name),
      side: c.side,
      cls: `${c.mine ? "mine" : ""} ${c.luck && c.luck.attack !== "normal" ? `luck-${c.luck.attack}` : ""}`,
      title: `${c.name}: ${c.ap} AP, ${c.wounds}/${c.health} wounds`,
      badge: c.ap,
      hp: { current: Math.max(0, c.health - c.wounds), max: c.health },
      active: c.id === view.actor,
      selected: c.id === selected,
      dead: c.defeated,
    }));
    const svg = ctx.grid.renderGrid(box, {
      zoomable: !!ctx.zoomable,
      width: view.grid.width,
      height: view.grid.height,
      tokens,
      rings,
      highlights,
      onTokenClick: (id) => {
        const strike = actions.find((t) => (t.type === "attack" || t.type === "shoot") && t.target === id);
        if (selected === id && strike) {
          ctx.send(declarationOf(strike));
          return;
        }
        selected = id;
        render(root, view, ctx);
      },
      onCellClick: (x, y) => {
        if (!moveMode || !moveTemplate) return;
        if (!moveTemplate.destinations.some((d) => d.x === x && d.y === y)) return;
        moveMode = false;
        ctx.send({ type: "move", combatant: moveTemplate.combatant, x, y });
      },
      canDrag: (id) => ctx.role === "gm" && tools.some((t) => t.type === "place") && !(byId[id] || {}).defeated,
      onDrop: (id, x, y) => ctx.send({ type: "place", combatant: id, x, y }),
    });
    if (moveMode && moveTemplate && svg) labelCosts(svg);
  }

  function labelCosts(svg) {
    // write each destination's cost into its square, so a phone shows it without hovering
    const cell = svg.viewBox.baseVal.width / view.grid.width;
    const ns = "http://www.w3.org/2000/svg";
    const g = document.createElementNS(ns, "g");
    g.setAttribute("class", "bb-costs");
    for (const d of moveTemplate.destinations) {
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", String((d.x + 0.5) * cell));
      t.setAttribute("y", String((d.y + 0.5) * cell + 5));
      t.setAttribute("text-anchor", "middle");
      t.setAttribute("class", d.leaves_reach ? "bb-cost bb-cost-leave" : "bb-cost");
      t.textContent = String(d.cost);
      g.append(t);
    }
    const tokens = svg.querySelector(".grid-tokens");
    svg.insertBefore(g, tokens);
  }

  // ---------------------------------------------------------------------------------------
  function selectedCard() {
    const c = selected ? byId[selected] : null;
    if (!c) return null;
    const luck = c.luck || {};
    const rows = [
      ["Size", `d${c.size}`],
      ["Attack", c.attack_pool],
      ["Defence", c.defence_pool],
      ["Damage modifier", signed(c.damage_modifier)],
      ["Attack costs", `${c.attack_cost} AP`],
      ["Muscle / Stamina / Agility / Speed / Focus", `${c.muscle} / ${c.stamina} / ${c.agility} / ${c.speed} / ${c.focus}`],
    ];
    const head = h("h3", {}, c.name, c.defeated ? h("span", { class: "bb-tag bb-tag-out" }, "out of play") : null);
    return h(
      ctx.role === "player" ? "details" : "section", // (a phone folds the card: its turn fits one screen)
      { class: `bb-card bb-selected side-${String(c.side).toLowerCase()} ${ctx.role === "player" ? "phone-fold" : ""}`, dataset: { testid: `selected-${c.id}` } },
      ctx.role === "player" ? h("summary", {}, head) : head,
      h("div", { class: "bb-health" }, kitBar(Math.max(0, c.health - c.wounds), c.health, `Wounds ${c.wounds} of ${c.health}`)),
      h("dl", { class: "bb-stats" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      gearList(c),
      luck.enabled ? luckLine(c) : null,
      effectsLine(c),
      view.status === "active" && !c.defeated ? rangesLine(c) : null,
      c.notes ? h("p", { class: "bb-notes muted" }, `GM notes: ${c.notes}`) : null,
    );
  }

  function gearList(c) {
    const items = [];
    if (c.weapon) items.push(`${c.weapon} (+${c.weapon_attack}${c.weapon_die ? `, d${c.weapon_die}` : ""}, reach ${c.weapon_reach})${c.weapon_drawn ? "" : " — not in hand"}`);
    else items.push("Unarmed");
    if (c.launcher) items.push(`${c.launcher} (+${c.launcher_attack}, d${c.ammo_die}, range ${c.missile_range}) — ${c.ammo} shots`);
    if (c.shield) items.push(`${c.shield} (+${c.shield_defence})`);
    if (c.armour) {
      const wear = view.options && view.options.armour_wear ? `, wear ${c.armour_wear}/${c.armour_weight}` : "";
      items.push(`${c.armour} (protection ${c.armour_protection}${wear})${c.armour_broken ? " — worn through" : ""}`);
    }
    return h("ul", { class: "bb-gear", dataset: { testid: `gear-${c.id}` } }, items.map((t) => h("li", {}, t)));
  }

  function luckLine(c) {
    const luck = c.luck;
    const bits = [];
    if (luck.blessings) bits.push(h("span", { class: "bb-tag bb-blessed" }, `${luck.blessings} blessing${luck.blessings > 1 ? "s" : ""}`));
    if (luck.curses) bits.push(h("span", { class: "bb-tag bb-cursed" }, `${luck.curses} curse${luck.curses > 1 ? "s" : ""}`));
    if (luck.weapon !== "normal") bits.push(h("span", { class: `bb-tag bb-${luck.weapon}` }, `${luck.weapon} weapon`));
    if (luck.shield !== "normal") bits.push(h("span", { class: `bb-tag bb-${luck.shield}` }, `${luck.shield} shield`));
    bits.push(h("span", { class: "muted" }, `next attack ${luck.attack}, next defence ${luck.defence}`));
    return h("div", { class: "bb-luck", dataset: { testid: `luck-${c.id}`, attack: luck.attack, defence: luck.defence } }, bits);
  }

  function effectsLine(c) {
    const names = Object.keys(c.effects || {});
    if (!names.length) return null;
    return h("div", { class: "bb-effects" }, names.map((n) => h("span", { class: "bb-tag bb-effect" }, `${n} ×${c.effects[n]}`)));
  }

  function rangesLine(c) {
    const bands = { melee: [], missile: [], out: [] };
    for (const [oid, band] of Object.entries(c.ranges || {})) if (byId[oid]) bands[band].push(byId[oid].name);
    return h(
      "div",
      { class: "bb-ranges" },
      bands.melee.length ? h("div", {}, h("strong", {}, "In reach: "), bands.melee.join(", ")) : null,
      bands.missile.length ? h("div", {}, h("strong", {}, "In missile range: "), bands.missile.join(", ")) : null,
      bands.out.length ? h("div", { class: "muted" }, "Out of range: ", bands.out.join(", ")) : null,
    );
  }

  // ---------------------------------------------------------------------------------------
  function actionPanel() {
    if (!actions.length) {
      if (ctx.role !== "player" || view.status !== "active") return null;
      const mine = list.filter((c) => c.mine);
      const actor = view.actor ? byId[view.actor] : null;
      if (!mine.length) return null; // a seat with no character: the page says the GM will give it one
      return h(
        "section",
        { class: "bb-card bb-actions", dataset: { testid: "actions", region: "due" } },
        h("p", { class: "big-text muted" }, `Waiting: ${actor ? actor.name : "nobody"} acts now.`),
        mine.map((c) => ownSummary(c)),
      );
    }
    const who = byId[actions[0].combatant];
    const custom = actions.find((t) => t.type === "custom_action");
    // the server lists foes first and marks an attack on an ally (ally: true): those stand apart,
    // after every other action, and each asks to be confirmed
    const onAllies = actions.filter((t) => t.ally);
    const listEl = h(
      "div",
      { class: "bb-action-list" },
      actions.filter((t) => t.type !== "custom_action" && !t.ally).map((t) => actionButton(t)),
    );
    const alliesEl = onAllies.length ? h("details", { class: "bb-ally-actions", open: allyOpen, dataset: { testid: "ally-actions" },
      ontoggle: (ev) => { allyOpen = ev.currentTarget.open; } },
    h("summary", {}, onAllies.length === 1 ? "Attack an ally instead" : `Attack an ally instead (${onAllies.length})`),
    h("div", { class: "bb-action-list" }, onAllies.map((t) => actionButton(t)))) : null;
    // each attack's P(hit) and P(out of play) on its button, the details a tap away (asked once for all)
    const oddsSlot = h("div", { class: "odds-slot" });
    if (actions.some((t) => t.type === "attack" || t.type === "shoot")) {
      odds.withOdds(ctx, { combatant: who.id }, (answer) => {
        for (const choice of answer.choices || []) {
          const button = listEl.querySelector(`[data-testid="action-${choice.type}-${choice.target}"]`) ||
            (alliesEl && alliesEl.querySelector(`[data-testid="action-${choice.type}-${choice.target}"]`));
          if (button) odds.decorate(button, choice, [{ key: "hit", word: "hit", always: true }, { key: "defeat", word: "out" }]);
        }
        replace(oddsSlot, odds.disclosure(answer, { summary: "Odds of each attack in detail", id: `bb-${who.id}` }));
      }, () => listEl.isConnected);
    }
    return h(
      "section",
      { class: "bb-card bb-actions", dataset: { testid: "actions", region: "due" } },
      h("h2", {}, ctx.role === "player" ? who.name : `${who.name}: ${who.ap} AP`), // (a phone's AP is in the line under it)
      ctx.role === "player" ? ownLine(who) : null,
      listEl,
      alliesEl,
      custom ? customForm(custom) : null,
      oddsSlot,
      ctx.role === "player" ? h("details", { class: "bb-own-more" }, h("summary", {}, "Your gear, luck and effects"), ownSummary(who)) : null,
    );
  }

  // the numbers a player chooses by, in one line above the buttons
  function ownLine(c) {
    return h("div", { class: "bb-own bb-own-line-top", dataset: { testid: `own-line-${c.id}` } },
      h("div", { class: "bb-own-line" }, apBadge(c.ap), h("span", {}, ` of ${c.ap_max}`), c.borrowed ? h("span", { class: "bb-tag bb-borrowed" }, "borrowed") : null),
      kitBar(Math.max(0, c.health - c.wounds), c.health, `Wounds ${c.wounds} of ${c.health}`));
  }

  function ownSummary(c) {
    return h(
      "div",
      { class: "bb-own", dataset: { testid: `own-${c.id}` } },
      h("div", { class: "bb-own-line" }, apBadge(c.ap), h("span", {}, ` of ${c.ap_max}`), c.borrowed ? h("span", { class: "bb-tag bb-borrowed" }, "borrowed") : null),
      kitBar(Math.max(0, c.health - c.wounds), c.health, `Wounds ${c.wounds} of ${c.health}`),
      c.luck && c.luck.enabled ? luckLine(c) : null,
      effectsLine(c),
      gearList(c),
    );
  }

  function actionButton(t) {
    const costText = t.type === "move" ? `from ${t.cost} AP` : `${t.cost} AP`;
    const after = t.type === "move" ? "" : t.borrows ? `→ ${t.ap_after} (borrows)` : `→ ${t.ap_after}`;
    const testid = t.target ? `action-${t.type}-${t.target}` : `action-${t.type}`;
    return h(
      "button",
      {
        type: "button",
        class: `big bb-action bb-action-${t.type}${t.borrows ? " bb-borrows" : ""}${t.type === "move" && moveMode ? " selected" : ""}${t.ally ? " bb-ally" : ""}`,
        "aria-pressed": t.type === "move" ? String(moveMode) : null,
        dataset: { testid, cost: t.cost, action: t.type },
        onclick: () => {
          if (t.type === "move") {
            moveMode = !moveMode;
            scrollToGrid = moveMode;
            render(root, view, ctx);
            return;
          }
          const target = t.target ? byId[t.target] : null;
          if (t.ally && !confirm(`${target ? target.name : "That character"} is on your side. ${t.label}?`)) return;
          ctx.send(declarationOf(t));
        },
      },
      t.ally ? h("span", { class: "bb-ally-tag" }, "Ally") : null,
      h("span", { class: "bb-action-label" }, t.label),
      h("span", { class: "bb-action-cost" }, costText, " ", h("small", {}, after)),
    );
  }

  function customForm(t) {
    const values = toolValues.custom_action || (toolValues.custom_action = {});
    return h(
      "details",
      { class: "bb-custom", open: openTool === "custom_action" },
      h("summary", { onclick: () => { openTool = openTool === "custom_action" ? null : "custom_action"; } }, "Other action (GM sets the cost)"),
      fieldsForm(t.fields, values, "Spend and act", "tool-custom_action", (data) => ctx.send({ type: "custom_action", combatant: t.combatant, ...data })),
    );
  }

  // ---------------------------------------------------------------------------------------
  function apPanel() {
    if (!list.length) return null;
    return h(
      "section",
      { class: "bb-card bb-ap-panel", dataset: { testid: "ap-panel" } },
      h("h2", {}, "Action points"),
      h(
        "ul",
        { class: "bb-ap-list" },
        list.map((c) =>
          h(
            "li",
            {
              class: `bb-ap-row side-${String(c.side).toLowerCase()}${c.id === view.actor ? " bb-acting" : ""}${c.defeated ? " bb-out" : ""}`,
              dataset: { testid: `ap-${c.id}`, ap: c.ap },
              onclick: () => { selected = c.id; render(root, view, ctx); },
            },
            h("span", { class: "bb-ap-name" }, c.name),
            apBadge(c.ap),
            h("span", { class: "muted bb-ap-max" }, `/${c.ap_max}`),
            h("span", { class: "bb-ap-wounds" }, `${c.wounds}/${c.health} wounds`),
            c.defeated ? h("span", { class: "bb-tag bb-tag-out" }, "out") : null,
          )),
      ),
    );
  }

  function timelinePanel() {
    const line = view.timeline || [];
    const sideList = [...new Set(list.map((c) => c.side))].sort();
    if (!line.length) return null;
    const entries = line.map((e, i) => ({
      id: e.combatant,
      name: e.name,
      side: (byId[e.combatant] || {}).side,
      sides: sideList,
      active: i === 0,
      detail: e.kind === "act" ? `acts (${e.ap} → ${e.after})` : `recovers (${e.ap} → ${e.after})`,
    }));
    const shown = ctx.role === "player" ? 4 : entries.length; // a phone: the next four, the rest folded
    return h(
      "section",
      { class: "bb-card bb-timeline", dataset: { testid: "timeline" } },
      h("h2", {}, "Coming turns"),
      kit.turnStrip(entries.slice(0, shown), { label: "Coming turns", testid: "timeline-strip" }),
      entries.length > shown ? h("details", { class: "phone-fold bb-timeline-more" }, h("summary", {}, `${entries.length - shown} more turns`),
        kit.turnStrip(entries.slice(shown), { label: "Later turns", testid: "timeline-later" })) : null,
      h("p", { class: "muted bb-small" }, "Guessing an attack for each turn; moves and other actions change it."),
    );
  }

  // ---------------------------------------------------------------------------------------
  function lastRolls() {
    // (a step the GM took back rolled dice that no longer count)
    const events = (ctx.events || []).filter((e) => e.rolls && e.rolls.length && !(ctx.undone && ctx.undone.has(e.v)));
    if (!events.length) return null;
    const lastV = events[events.length - 1].v;
    const recent = events.filter((e) => e.v === lastV);
    return h(
      "section",
      { class: "bb-card bb-rolls", dataset: { testid: "last-rolls" } },
      h("h2", {}, "Last roll, die by die"),
      recent.map((e) =>
        h(
          "div",
          { class: "bb-roll-event" },
          h("p", { class: "bb-roll-text" }, e.text),
          e.rolls.map((r) =>
            h(
              "div",
              { class: `bb-roll${r.kept === false ? " bb-discarded" : ""}`, dataset: { testid: "bb-roll" } },
              h("span", { class: "bb-roll-purpose" }, r.purpose, r.luck && r.luck !== "normal" ? ` (${r.luck}${r.kept === false ? ", not kept" : ", kept"})` : ""),
              h("span", { class: "bb-roll-faces" }, r.faces.map((f) => ctx.ui.die(f, { sides: sidesOf(r.dice) }))),
              h("span", { class: "bb-roll-total" }, r.modifier ? `${signed(r.modifier)} = ${r.total}` : `= ${r.total}`),
            )),
        )),
    );
  }

  function lastResult() {
    const r = view.last_result;
    if (!r) return null;
    if (r.kind === "check") {
      return h(
        "section",
        { class: `bb-result ${r.success ? "bb-success" : "bb-failure"}`, dataset: { testid: "last-result", kind: "check", success: String(r.success) } },
        h("div", { class: "bb-result-title" }, `${r.who}: ${r.label}`),
        h("div", { class: "bb-result-big" }, `${r.totals.join(" + ")} = ${r.total}`, h("span", { class: "bb-result-vs" }, ` vs ${r.target}`)),
        h("div", { class: "bb-result-verdict" }, r.success ? "Success" : "Failure", r.reached ? ` — reaches ${r.reached}` : ""),
        h("div", { class: "muted" }, `${r.pool}${r.luck && r.luck !== "normal" ? `, ${r.luck}` : ""}, three rolls${r.chance !== null && r.chance !== undefined ? `; chance was ${Math.round(r.chance * 100)}%` : ""}`),
      );
    }
    return h(
      "section",
      { class: `bb-result ${r.winner ? "bb-success" : "bb-draw"}`, dataset: { testid: "last-result", kind: "contest" } },
      h("div", { class: "bb-result-title" }, `${r.label} (${r.mode === "summed" ? "summed" : "best two of three"})`),
      h(
        "div",
        { class: "bb-contest" },
        h("div", {}, h("strong", {}, r.a), ` ${r.a_pool}: ${r.a_rolls.join(", ")}`, h("span", { class: "bb-result-score" }, ` → ${r.a_score}`)),
        h("div", {}, h("strong", {}, r.b), ` ${r.b_pool}: ${r.b_rolls.join(", ")}`, h("span", { class: "bb-result-score" }, ` → ${r.b_score}`)),
      ),
      h("div", { class: "bb-result-verdict" }, r.winner ? `${r.winner} wins` : "A draw"),
    );
  }

  // ---------------------------------------------------------------------------------------
  function toolPanel() {
    if (ctx.role !== "gm" || !tools.length) return null;
    return h(
      "section",
      { class: "bb-card bb-tools", dataset: { testid: "gm-tools", region: "tools" } },
      h("h2", {}, "GM tools"),
      h(
        "div",
        { class: "bb-tool-buttons" },
        tools.map((t) =>
          h("button", {
            type: "button",
            class: `bb-tool-button${openTool === t.type ? " selected" : ""}`,
            dataset: { testid: `open-${t.type}` },
            onclick: () => { openTool = openTool === t.type ? null : t.type; render(root, view, ctx); },
          }, t.label)),
      ),
      tools.filter((t) => t.type === openTool).map((t) => {
        const values = toolValues[t.type] || (toolValues[t.type] = {});
        const form = fieldsForm(t.fields, values, t.type === "check" || t.type === "contest" ? "Roll" : "Apply", `tool-${t.type}`,
          (data) => ctx.send({ type: t.type, ...data }));
        return h("div", { class: "bb-tool-form" }, h("h3", {}, t.label), form,
          t.type === "check" || t.type === "contest" ? toolOdds(t.type, form) : null);
      }),
    );
  }

  // the chance of a check or contest before the GM rolls it, asked again as the form changes
  function toolOdds(type, form) {
    const line = h("p", { class: "odds-inline", role: "status", dataset: { testid: `tool-${type}-odds`, state: "asking" } }, "Odds: working out…");
    const slot = h("div", { class: "odds-slot" });
    const schedule = odds.debounced((answer) => {
      if (!line.isConnected) return;
      if (!answer) { line.textContent = "Odds: not available for these values."; slot.replaceChildren(); return; }
      const shown = (answer.outcomes || []).filter((o) => type === "contest" || o.key === "success"); // the rest in the details
      line.textContent = `Odds: ${shown.map((o) => `${o.label} ${odds.pct(o.p)}`).join(" · ")}`;
      line.dataset.state = "ready";
      replace(slot, odds.disclosure(answer, { summary: "The odds in detail", id: `bb-tool-${type}` }));
    });
    const ask = () => {
      const data = { type };
      for (const el of form.elements) {
        if (!el.name) continue;
        data[el.name] = el.type === "checkbox" ? el.checked : el.type === "number" ? (el.value === "" ? null : Number(el.value)) : el.value;
        if (data[el.name] === null) delete data[el.name];
      }
      schedule(ctx, data);
    };
    form.addEventListener("change", ask);
    form.addEventListener("input", ask);
    queueMicrotask(ask);
    return [line, slot];
  }

  function fieldsForm(fields, values, submitLabel, testid, onSubmit) {
    const inputs = fields.map((f) => {
      const fallback = f.name === "combatant" && selected && f.choices.some(([v]) => v === selected) ? selected : f.default;
      const value = f.name in values ? values[f.name] : fallback;
      let input;
      if (f.kind === "choice") {
        input = h("select", { name: f.name }, f.choices.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
      } else if (f.kind === "bool") {
        input = h("input", { type: "checkbox", name: f.name, checked: !!value });
      } else if (f.kind === "int") {
        input = h("input", { type: "number", name: f.name, value, min: f.min ?? null, max: f.max ?? null, inputmode: "numeric" });
      } else {
        input = h("input", { type: "text", name: f.name, value: value ?? "", maxlength: f.max || 80 });
      }
      return [f, input];
    });
    const read = () => {
      const data = {};
      for (const [f, input] of inputs) {
        if (f.kind === "bool") data[f.name] = input.checked;
        else if (f.kind === "int") data[f.name] = input.value === "" ? f.default : Number(input.value);
        else data[f.name] = input.value;
        values[f.name] = data[f.name];
      }
      return data;
    };
    return h(
      "form",
      {
        class: "bb-form",
        onsubmit: (ev) => { ev.preventDefault(); onSubmit(read()); },
        onchange: () => read(),
      },
      inputs.map(([f, input]) => h("label", { class: `bb-field bb-field-${f.kind}` }, h("span", {}, f.label), input)),
      h("button", { type: "submit", class: "big primary", dataset: { testid } }, submitLabel),
    );
  }
}

function declarationOf(t) {
  const d = { type: t.type, combatant: t.combatant };
  if (t.target) d.target = t.target;
  return d;
}

function initials(name) {
  const words = String(name).split(/\s+/).filter(Boolean);
  if (words.length === 1) return words[0].slice(0, 3);
  return words.slice(0, 3).map((w) => w[0]).join("").toUpperCase();
}

function signed(n) {
  return n >= 0 ? `+${n}` : String(n);
}

function sidesOf(notation) {
  const m = /d(\d+)/.exec(notation || "");
  return m ? Number(m[1]) : 6;
}
