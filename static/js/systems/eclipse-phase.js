// Eclipse Phase 2e board: the grid with tokens, the initiative track, the exchange in progress
// (target numbers, both d100 results and what they mean, then damage, armour and wounds), the
// attack builder on the attacker's phone, the defence choice on the defender's phone, pool spending
// after the roll, and the GM's tools. Every number and every legal choice comes from the server's view.

import * as kit from "../kit.js"; // the shared front-end kit (token, die, health bar, turn strip, action button, panel)
import * as odds from "../odds.js"; // odds before committing, from the server (issue 17)
import { h } from "../ui.js";

// the attack builder's odds: asked again (debounced) as the builder changes; drawn into the builder now shown
let oddsEls = null;
const scheduleOdds = odds.debounced((answer) => {
  if (!oddsEls || !oddsEls.line.isConnected) return;
  drawBuilderOdds(answer);
});
function drawBuilderOdds(answer) {
  const { line, slot } = oddsEls;
  if (!answer) { line.textContent = "no odds"; line.removeAttribute("aria-label"); slot.replaceChildren(); return; }
  const text = odds.compactText(answer, [{ key: "hit", word: "hit", always: true }, { key: "wound", word: "wound", always: true }]);
  line.textContent = text;
  line.setAttribute("aria-label", `Odds: ${text}. Show the details`);
  line.dataset.state = "ready";
  slot.replaceChildren(h("h3", {}, "Odds in detail, each defence"), odds.details(answer));
  drawCalledOdds(answer);
}
// the called shot's chance of coming off, beside its choice: exact when the defence is known, else the
// most it can be (the attacker's own test)
function drawCalledOdds(answer) {
  const el = oddsEls.called;
  if (!el || !el.isConnected) return;
  const exact = odds.pick(answer, "called");
  const most = exact ? null : odds.pick(answer, "called_at_most");
  el.textContent = exact ? `${odds.pct(exact.p)} to come off` : most ? `at most ${odds.pct(most.p)} to come off` : "";
}
// common spots for a called shot at a named spot (any other can be typed)
const SPOTS = ["head", "eyes", "weapon arm", "leg", "sensors"];
let oddsOpen = false; // the builder's odds details, as the player left them

let selected = null; // token tapped to read its distance from the active combatant
let moveMode = false; // the acting viewer is picking a square to move to
let turnKey = ""; // round + active combatant: the builder resets when it changes
const PHONE_ORDER = 5; // entries of the initiative order on a phone
let latest = null; // the newest {root, view, ctx}: a part kept from an earlier draw redraws the newest view
let hoverLine = null; // the newest draw's distance line, for the tokens' pointer handlers
let seenRolls = ""; // the d100 pair last drawn, so dice spin only when they are new
let builder = freshBuilder();
let defence = { superior_position: false, pool: "none" };
let aimChoice = { target: null, complex: false };
let moreOpen = false; // the attack builder's folded options, as the player left them
let aimOpen = false; // the aim's fold, likewise
const gm = { combatant: "", label: "", value: -10, applies: "all", lasting: false, condition: "surprised" };

function redraw() {
  if (latest) render(latest.root, latest.view, latest.ctx);
}

function freshBuilder() {
  return { target: null, weapon: null, mode: "single", bonus: "damage", pool: "none", visibility: "clear", flags: {}, called_shot: "none", called_spot: "" };
}

function pad(n) {
  return n === null || n === undefined ? "–" : String(n).padStart(2, "0");
}

function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}

export function render(root, view, ctx) {
  // health-like bars from the shared kit (numbers as text, never colour alone)
  const kitBar = (current, max, text) => kit.healthBar(current, max, { label: text, text });
  const { h, keyed, part, always, keptBoard } = ctx.ui;
  latest = { root, view, ctx };
  const list = view.combatants || [];
  const byId = Object.fromEntries(list.map((c) => [c.id, c]));
  const legal = view.legal || [];
  const find = (type, combatant) => legal.find((t) => t.type === type && (combatant === undefined || t.combatant === combatant));
  const key = `${view.round}:${view.active}`;
  if (key !== turnKey) {
    turnKey = key;
    builder = freshBuilder();
    moveMode = false;
    defence = { superior_position: false, pool: "none" };
  }
  const moveTemplate = legal.find((t) => t.type === "move" && t.combatant && t.reachable);
  if (!moveTemplate) moveMode = false;
  if (selected && !byId[selected]) selected = null;
  const attackTemplate = find("attack");

  const rollSource = view.pending && view.pending.rolls ? view.pending.rolls : view.last_exchange ? { attacker: view.last_exchange.attack, defender: view.last_exchange.defence } : null;
  const rollKey = rollSource ? JSON.stringify([view.round, view.active, rollSource]) : "";
  const freshRolls = rollKey !== seenRolls;
  seenRolls = rollKey;

  // The board is kept between draws and only what changed is drawn again (ui.keyed): each part is
  // keyed by what it shows, the grid keeps its box (the grid redraws its tokens in place) and each
  // combatant's card is kept until its numbers change. The parts that hold the viewer's choices
  // (the actions, the GM's tools) are drawn every time.
  const [top, newBoard] = keptBoard(root, `${ctx.role}|${ctx.battleId}`);
  top.className = `ep ep-role-${ctx.role}`;
  Object.assign(top.dataset, { status: view.status || "", round: view.round });
  const exchangeNames = view.last_exchange ? [(byId[view.last_exchange.attacker] || {}).name, (byId[view.last_exchange.defender] || {}).name] : null;
  let gridBox = null;
  keyed(top, [
    part("banner", [view.status, view.outcome, view.initiative_due, view.physical && view.physical.due, view.round, view.active_name, view.pending && view.pending.waiting], banner),
    // (the order is kept between draws: when the turn passes, only the entries whose words change
    // are drawn again, not the whole strip)
    { key: "order", build: () => initiativeTrack(h("div", { class: "ep-order" })), update: initiativeTrack },
    part("exchange", [view.pending, view.last_exchange, exchangeNames, rollKey], exchangePanel),
    // (the viewer's choices are part of its key: a tap redraws it, an update that changes nothing of it keeps it)
    part("actions", [legal, builder, defence, aimChoice, moveMode, view.status, view.active_name, view.initiative_due,
      view.physical && view.physical.due, list.filter((c) => c.mine).map((c) => c.id)], actionPanel),
    part("mine", [ctx.role === "player" ? list.filter((c) => c.mine) : null, list.filter((c) => c.mine && isActing(c)).map((c) => c.id)], mineStrip),
    {
      key: "main",
      build: () => fillMain(h("div", { class: "ep-main" },
        h("div", { class: "ep-board" }, h("div", { class: "ep-hint-slot" }), h("div", { class: "ep-grid", dataset: { testid: "ep-grid" } }), h("div", { class: "ep-distance-slot" })),
        // on a phone every combatant's card folds away (the player's own numbers are at the top);
        // folded, the cards are not drawn at all, and opening the fold draws them
        ctx.role === "player"
          ? h("details", { class: "ep-card ep-roster ep-roster-fold phone-fold", dataset: { testid: "ep-roster" }, ontoggle: () => redraw() },
            h("summary", { dataset: { testid: "ep-roster-open" } }, "All combatants"), h("div", { class: "ep-roster-list" }))
          : h("section", { class: "ep-card ep-roster", dataset: { testid: "ep-roster" } }, h("h2", {}, "Combatants"), h("div", { class: "ep-roster-list" })))),
      update: fillMain,
    },
    always(gmTools()),
  ]);
  if (!newBoard && ctx.regionsChanged) ctx.regionsChanged(); // the page moves the parts due now to the top
  hoverLine = distanceLine;
  gridBox.style.setProperty("--cols", String((view.options && view.options.width) || 24));
  drawGrid(gridBox);
  hoverDistances(gridBox);

  function fillMain(main) {
    const board = main.firstElementChild;
    const [hintSlot, box, distanceSlot] = board.children;
    gridBox = box;
    hintSlot.replaceChildren(...(moveMode ? [h("p", { class: "ep-hint", dataset: { testid: "ep-move-hint" } },
      `Tap a highlighted square (up to ${moveTemplate.max_metres} m; ${moveTemplate.base_left} m before it counts as a full move).`)] : []));
    distanceSlot.replaceChildren(distanceLine());
    const roster = main.lastElementChild;
    const cards = roster.lastElementChild;
    if (roster.tagName === "DETAILS") {
      const summary = roster.firstElementChild;
      const label = `All combatants (${list.length})`;
      if (summary.textContent !== label) summary.textContent = label;
      if (!roster.open) { if (cards.firstChild) keyed(cards, []); return main; }
    }
    keyed(cards, [...list.filter((c) => c.mine), ...list.filter((c) => !c.mine)]
      .map((c) => part(`card-${c.id}`, [c, c.id === view.active], () => combatantCard(c))));
    return main;
  }

  // ---------------------------------------------------------------------------------------
  function banner() {
    if (view.status === "ended") {
      return h("div", { class: "ep-banner ep-ended", dataset: { testid: "outcome" } },
        h("strong", {}, (view.outcome && view.outcome.text) || "The fight is over."));
    }
    if (view.initiative_due) {
      // real dice: the first action turn's initiative waits for the GM to start it and the rollers to type
      const rolling = view.physical && view.physical.due;
      return h("div", { class: "ep-banner", dataset: { testid: "ep-initiative-due" } },
        h("strong", { class: "ep-now" }, rolling ? "Rolling initiative for action turn 1" : view.initiative_due.text));
    }
    const waiting = view.pending ? view.pending.waiting.map((w) => w.text).join(" ") : "";
    return h(
      "div",
      { class: "ep-banner" },
      h("span", { class: "ep-round" }, `Action turn ${view.round}`),
      h("span", { class: "ep-now", dataset: { testid: "ep-active" } }, view.active_name ? `Now: ${view.active_name}` : "Nobody can act"),
      waiting ? h("span", { class: "ep-waiting", dataset: { testid: "ep-waiting" } }, waiting) : null,
    );
  }

  function isActing(c) {
    return c.id === view.active || (view.pending && c.id === view.pending.defender);
  }

  function initiativeTrack(box) {
    const sides = [...new Set(list.map((c) => c.side))].sort();
    // a phone shows who acts now and the next few (the whole order is in the roster further down)
    let order = view.order || [];
    let more = 0;
    if (ctx.role === "player" && order.length > PHONE_ORDER) {
      const now = Math.max(0, order.findIndex((o) => o.active));
      const coming = [...order.slice(now), ...order.slice(0, now)].filter((o, i) => i === 0 || (!o.done && o.able));
      more = order.length - Math.min(PHONE_ORDER, coming.length);
      order = coming.slice(0, PHONE_ORDER);
    }
    const entries = order.map((o) => ({
      id: o.id,
      name: o.name,
      side: (byId[o.id] || {}).side,
      sides,
      active: o.active,
      done: o.done,
      out: !o.able,
      detail: o.total == null ? "" : `${o.total}`, // another's total is its own number
    }));
    if (!box.firstChild) {
      box.append(kit.turnStrip([], { label: "Initiative order", testid: "ep-initiative" }), h("p", { class: "muted ep-order-more" }));
    }
    const [strip, moreLine] = box.children;
    keyed(strip, entries.map((e) => part("entry", e, () => kit.turnStripItem(e))));
    const moreText = more ? `and ${more} more in this action turn's order` : "";
    if (moreLine.textContent !== moreText) moreLine.textContent = moreText;
    if (moreLine.hidden !== !more) moreLine.hidden = !more;
    const cls = more ? "ep-order ep-order-phone" : "ep-order";
    if (box.className !== cls) box.className = cls;
    return box;
  }

  // ---------------------------------------------------------------------------------------
  function d100(result, who, testid) {
    if (!result) return h("div", { class: "ep-test ep-test-none", dataset: { testid } }, h("span", { class: "ep-test-who" }, who), h("span", { class: "muted" }, "no defence"));
    const kind = result.critical ? (result.success ? "crit-success" : "crit-failure") : result.success ? "success" : "failure";
    return h(
      "div",
      { class: `ep-test ep-${kind}`, dataset: { testid, roll: result.roll, success: String(result.success), critical: String(result.critical) } },
      h("span", { class: "ep-test-who" }, who),
      h("span", { class: `die d100 ep-die ${freshRolls ? "rolling" : ""}` }, pad(result.roll)),
      result.target == null ? null : h("span", { class: "ep-test-vs" }, `vs ${result.target}`),
      h("strong", { class: "ep-test-label" }, result.label + (result.pool_use ? ` (after ${result.pool_use === "flip" ? "a swap" : result.pool_use === "upgrade" ? "an upgrade" : "softening"})` : "")),
    );
  }

  function exchangePanel() {
    const p = view.pending;
    if (p) {
      const def = p.defence;
      return h(
        "section",
        { class: "ep-card ep-exchange ep-pending", dataset: { testid: "ep-exchange", phase: p.phase } },
        h("h2", {}, `${p.attacker_name} attacks ${p.defender_name}`),
        h("p", { class: "ep-weapon" }, `${p.weapon.name} (${p.skill_label}${p.weapon.dv ? `, DV ${p.weapon.dv}` : ""}${p.weapon.ap ? ", armour-piercing" : ""})`,
          p.choices.mode !== "single" ? `, ${p.choices.mode === "burst" ? "burst" : "full automatic"}` : "",
          ` — ${p.metres} m`),
        p.called_label ? h("p", { class: "ep-called", dataset: { testid: "ep-called-shot", aim: p.choices.called_shot } }, `Called shot ${p.called_label}: it comes off only with a superior success or a critical.`) : null,
        // a side's target number reaches only those who see its numbers (its player, the GM): a page
        // that sees neither side's shows no target numbers at all
        p.target != null || (def && def.target != null) ? h("div", { class: "ep-targets" },
          h("div", { class: "ep-tn", dataset: { testid: "ep-attack-target" } }, h("span", { class: "ep-tn-label" }, "Attack"), h("span", { class: "ep-tn-value" }, p.target == null ? "—" : String(p.target))),
          h("div", { class: "ep-tn", dataset: { testid: "ep-defence-target" } }, h("span", { class: "ep-tn-label" }, def ? `Defence (${def.skill_label})` : "Defence"),
            h("span", { class: "ep-tn-value" }, def ? (def.target == null ? "—" : String(def.target)) : p.phase === "defence" ? "?" : "—"))) : null,
        p.breakdown ? h("p", { class: "ep-breakdown muted" }, p.breakdown) : null,
        def && def.skill_value != null ? h("p", { class: "ep-breakdown muted" }, `${def.skill_label} ${def.skill_value}${def.mods.map((m) => `, ${m.label} ${signed(m.value)}`).join("")}${def.pool ? ", pool +20" : ""}`) : null,
        p.extra && p.extra.length ? h("p", { class: "ep-extra" }, `Extra damage on a hit: ${p.extra.map((e) => `+${e.dice[0]}d${e.dice[1]} ${e.label}`).join(", ")}`) : null,
        p.rolls ? h("div", { class: "ep-rolls" }, d100(p.rolls.attacker, p.attacker_name, "ep-att-roll"), d100(p.rolls.defender, p.defender_name, "ep-def-roll")) : null,
        p.rolls ? h("p", { class: `ep-standing ep-${p.standing}`, dataset: { testid: "ep-standing" } }, p.standing === "hit" ? "As it stands: a hit" : "As it stands: a miss") : null,
      );
    }
    const x = view.last_exchange;
    if (!x) return null;
    const a = byId[x.attacker] || { name: "?" };
    const d = byId[x.defender] || { name: "?" };
    return h(
      "section",
      { class: "ep-card ep-exchange ep-last", dataset: { testid: "ep-exchange", phase: "done", result: x.result } },
      h("h2", {}, `Last attack: ${a.name} → ${d.name}`, h("span", { class: "muted" }, ` (${x.weapon})`)),
      h("div", { class: "ep-rolls" }, d100(x.attack, a.name, "ep-att-roll"), d100(x.defence, d.name, "ep-def-roll")),
      h("p", { class: `ep-standing ep-${x.result}`, dataset: { testid: "ep-result" } },
        x.result === "hit" && x.called_shot && x.called_shot.came_off && x.called_shot.aim === "disarm" ? "Hit: the weapon falls, no damage" : x.result === "hit" ? (x.attack.critical ? "Critical hit: damage doubled" : x.attack.superior ? `Hit with ${x.attack.superior} superior success${x.attack.superior > 1 ? "es" : ""}: +${x.attack.superior}d6` : "Hit") : "Miss"),
      x.called_shot ? h("p", { class: `ep-called ${x.called_shot.came_off ? "ep-called-on" : ""}`, dataset: { testid: "ep-called-shot", aim: x.called_shot.aim, cameOff: String(x.called_shot.came_off) } }, x.called_shot.text) : null,
      x.result === "hit" && x.damage !== undefined ? h(
        "dl",
        { class: "ep-damage", dataset: { testid: "ep-damage" } },
        h("dt", {}, "Damage"), h("dd", {}, x.attack.critical ? `${x.damage_rolled} × 2 = ${x.damage}` : String(x.damage)),
        x.armour == null ? null : [h("dt", {}, "Armour"), h("dd", {}, String(x.armour))],
        x.through == null ? null : [h("dt", {}, "Gets through"), h("dd", {}, String(x.through))],
        h("dt", {}, "Wounds"), h("dd", {}, String(x.wounds)),
        x.som_check ? [h("dt", {}, "SOM check"), h("dd", {}, `${pad(x.som_check.roll)}${x.som_check.target == null ? "" : ` vs ${x.som_check.target}`}: ${x.som_check.success ? "stays up" : "goes down"}`)] : null,
      ) : null,
    );
  }

  // ---------------------------------------------------------------------------------------
  function hpOf(c) {
    if (c.durability !== undefined) return { current: Math.max(0, c.durability - c.damage), max: c.durability };
    return { current: Math.round((c.health ? c.health.level : 1) * 100), max: 100 };
  }

  function drawGrid(box) {
    const highlights = [];
    const rings = [];
    const mps = (view.options && view.options.metres_per_square) || 1;
    if (moveMode && moveTemplate) {
      for (const [x, y] of moveTemplate.reachable) highlights.push({ x, y, cls: "ep-reach", label: "move here" });
      const mover = byId[moveTemplate.combatant];
      if (mover) rings.push({ x: mover.x, y: mover.y, r: moveTemplate.max_metres / mps, cls: "ep-move-ring", label: `${moveTemplate.max_metres} m` });
    }
    if (attackTemplate && builder.target && byId[builder.target]) {
      highlights.push({ x: byId[builder.target].x, y: byId[builder.target].y, cls: "target", label: "target" });
    }
    const gmMove = ctx.role === "gm" && legal.some((t) => t.type === "move" && t.anywhere);
    ctx.grid.renderGrid(box, {
      zoomable: !!ctx.zoomable,
      width: view.options.width,
      height: view.options.height,
      tokens: list.map((c) => ({
        id: c.id,
        x: c.x,
        y: c.y,
        label: c.name.replace(/[^A-Za-z0-9]/g, "").slice(0, 3) || c.id,
        name: c.name,
        side: c.side,
        cls: `${c.mine ? "mine" : ""} ${c.conditions.includes("prone") ? "ep-prone" : ""} ${c.full_defence ? "ep-fulldef" : ""}`,
        title: `${c.name}: ${c.health.label}${c.markers.length ? `; ${c.markers.join(", ")}` : ""}`,
        badge: c.wounds ? -10 * c.wounds : null,
        hp: hpOf(c),
        active: c.id === view.active,
        selected: c.id === selected,
        dead: c.state !== "ok",
      })),
      highlights,
      rings,
      onTokenClick: (id) => {
        selected = selected === id ? null : id;
        if (attackTemplate && attackTemplate.targets.some((t) => t.id === id)) builder.target = id;
        redraw();
      },
      onCellClick: (x, y) => {
        if (!moveMode || !moveTemplate) return;
        if (!moveTemplate.reachable.some(([rx, ry]) => rx === x && ry === y)) return;
        moveMode = false;
        ctx.send({ type: "move", combatant: moveTemplate.combatant, x, y });
      },
      canDrag: (id) => gmMove || (moveTemplate && moveTemplate.combatant === id),
      onDrop: (id, x, y) => ctx.send({ type: "move", combatant: id, x, y }),
    });
  }

  function distanceLine(focus = selected) {
    const dist = view.distances;
    if (!dist || !focus || focus === dist.from || !dist.to[focus]) {
      return h("p", { class: "ep-distance muted", dataset: { testid: "ep-distance" } }, view.active ? "Tap or point at a token to see its distance from the active combatant." : "");
    }
    const row = dist.to[focus];
    const from = byId[dist.from];
    const weapons = Object.entries(row.weapons || {}).map(([i, b]) => {
      const w = from && from.weapons ? from.weapons[Number(i)] : `weapon ${i}`;
      return `${w}: ${b.band} ${signed(b.modifier)}`;
    });
    return h(
      "p",
      { class: "ep-distance", dataset: { testid: "ep-distance", target: focus } },
      h("strong", {}, `${from ? from.name : "?"} → ${row.name}: ${row.metres} m`),
      ` (${row.adjacent ? "in melee reach" : row.band})`,
      weapons.length ? h("span", { class: "ep-distance-weapons" }, ` · ${weapons.join(" · ")}`) : null,
    );
  }

  function hoverDistances(box) {
    // pointing at a token (mouse) shows its distance without redrawing the board (once per token
    // element: the grid keeps its tokens between draws; the newest draw's line is used)
    for (const g of box.querySelectorAll("[data-id]")) {
      if (g.__hover) continue;
      g.__hover = true;
      g.addEventListener("mouseenter", () => {
        const line = latest && latest.root.querySelector("[data-testid=ep-distance]");
        if (line && hoverLine) line.replaceWith(hoverLine(g.dataset.id));
      });
      g.addEventListener("mouseleave", () => {
        const line = latest && latest.root.querySelector("[data-testid=ep-distance]");
        if (line && hoverLine) line.replaceWith(hoverLine());
      });
    }
  }

  // ---------------------------------------------------------------------------------------
  function actionPanel() {
    const parts = [];
    const rollInitiative = find("roll_initiative");
    if (rollInitiative) parts.push(h("button", { type: "button", class: "big primary", dataset: { testid: "ep-roll-initiative", action: "roll_initiative" }, onclick: () => ctx.send({ type: "roll_initiative" }) }, rollInitiative.label));
    for (const t of legal.filter((t) => t.type === "defend")) parts.push(defendForm(t));
    for (const t of legal.filter((t) => t.type === "accept")) parts.push(reactionBlock(t, find("spend", t.combatant)));
    const cancel = find("cancel_attack");
    if (cancel) parts.push(h("button", { type: "button", class: "big danger", dataset: { testid: "ep-withdraw", action: "cancel_attack" }, onclick: () => ctx.send({ type: "cancel_attack", combatant: cancel.combatant }) }, cancel.label));
    if (attackTemplate) parts.push(attackForm(attackTemplate));
    const turnButtons = [];
    if (moveTemplate) {
      turnButtons.push(h("button", { type: "button", class: `big ep-move ${moveMode ? "selected" : ""}`, "aria-pressed": String(moveMode), dataset: { testid: "ep-move", action: "move" },
        onclick: () => {
          moveMode = !moveMode;
          redraw();
          const box = moveMode && root.querySelector("[data-testid=ep-grid]");
          if (box && box.scrollIntoView) box.scrollIntoView({ behavior: "smooth", block: "center" });
        }, title: `${moveTemplate.label} (${moveTemplate.max_metres} m left)` }, moveMode ? "Cancel move" : `Move ${moveTemplate.max_metres}\u00a0m`));
    }
    const stand = find("stand");
    if (stand) turnButtons.push(h("button", { type: "button", class: "big", dataset: { testid: "ep-stand", action: "stand" }, onclick: () => ctx.send({ type: "stand", combatant: stand.combatant }) }, stand.label));
    for (const pick of legal.filter((t) => t.type === "pick_up")) {
      turnButtons.push(h("button", { type: "button", class: "big", dataset: { testid: `ep-pick-up-${pick.weapon}`, action: "pick_up" }, onclick: () => ctx.send({ type: "pick_up", combatant: pick.combatant, weapon: pick.weapon }) }, pick.label));
    }
    const full = find("full_defence");
    if (full) turnButtons.push(h("button", { type: "button", class: "big", dataset: { testid: "ep-full-defence", action: "full_defence" }, title: full.label, onclick: () => ctx.send({ type: "full_defence", combatant: full.combatant }) }, "Full defence"));
    const end = find("end_turn");
    if (end) turnButtons.push(h("button", { type: "button", class: "big ep-end", dataset: { testid: "ep-end-turn", action: "end_turn" }, title: end.label, onclick: () => ctx.send({ type: "end_turn", combatant: end.combatant }) }, "End turn"));
    if (turnButtons.length) parts.push(h("div", { class: "button-row ep-turn-buttons" }, turnButtons));
    const aim = find("aim");
    if (aim) parts.push(aimForm(aim));
    if (!parts.length) {
      if (ctx.role !== "player" || view.status !== "active") return null;
      const mine = list.filter((c) => c.mine);
      const typing = view.initiative_due && mine.some((c) => view.initiative_due.combatants.includes(c.id));
      if (view.initiative_due && view.physical && view.physical.due) return null; // the dice card above says who rolls
      const initiative = view.initiative_due ? `${view.initiative_due.text}: the GM starts the action turn${typing ? ", then this phone asks for your d6" : ""}.` : null;
      if (!mine.length && !initiative) return null; // a seat with no combatant: the page says the GM will give it one
      return h("section", { class: "ep-card ep-actions", dataset: { testid: "ep-actions", region: "due" } },
        h("p", { class: "big-text muted" }, initiative || `Waiting${view.active_name ? `: ${view.active_name} acts now` : ""}.`));
    }
    return h("section", { class: "ep-card ep-actions", dataset: { testid: "ep-actions", region: "due" } }, parts);
  }

  function toggle(label, on, onclick, testid) {
    return h("button", { type: "button", class: `ep-toggle ${on ? "selected" : ""}`, "aria-pressed": String(on), dataset: { testid }, onclick }, label);
  }

  // one choice among a few ([[id, label], ...]): a labelled row of buttons (thumb-sized on a phone; and
  // no form field: a browser scans the page's form fields whenever one is added, laying it out again)
  function choiceField(label, choices, value, set, testid, cls = "") {
    return h("div", { class: "ep-field" }, h("span", { class: "ep-field-label" }, label),
      h("div", { class: `button-row ${cls}`, role: "group", "aria-label": label, dataset: { testid } },
        choices.map(([id, text]) => toggle(text, value === id, () => { set(id); redraw(); }, `${testid}-${id}`))));
  }

  function poolPicker(choices, value, set, testid) {
    return choices && choices.length >= 2 ? choiceField("Pool before the roll", choices, value, set, testid) : null;
  }

  // the called shot (ruling EP-11): its aim, the spot of a named one, the chance of coming off beside it
  function calledShotField(opt, target) {
    const holds = target && target.holds;
    const aims = opt.choices.map(([id, text]) => {
      const off = id === "disarm" && !holds;
      return h("button", {
        type: "button", class: `ep-toggle ${builder.called_shot === id ? "selected" : ""}`, "aria-pressed": String(builder.called_shot === id),
        disabled: off, title: off ? `${target ? target.name : "The target"} holds nothing that can be knocked away` : null, dataset: { testid: `ep-called-${id}` },
        onclick: () => { builder.called_shot = id; if (id === "spot" && !builder.called_spot) builder.called_spot = SPOTS[0]; redraw(); },
      }, id === "disarm" && holds ? `disarm: ${holds}` : text);
    });
    const other = !SPOTS.includes(builder.called_spot);
    return h("div", { class: "ep-field ep-called-field", dataset: { testid: "ep-called" } },
      h("span", { class: "ep-field-label" }, opt.label, " ", h("span", { class: "ep-called-odds", "aria-live": "polite", dataset: { testid: "ep-called-odds" } })),
      h("div", { class: "button-row", role: "group", "aria-label": "Called shot" }, aims),
      builder.called_shot === "spot" ? h("div", { class: "button-row ep-called-spots", role: "group", "aria-label": "Spot", dataset: { testid: "ep-called-spots" } },
        SPOTS.map((spot) => toggle(spot, builder.called_spot === spot, () => { builder.called_spot = spot; redraw(); }, `ep-called-spot-${spot.replace(/ /g, "-")}`)),
        // another spot typed in: kept as typed, without a redraw at every key
        h("input", { type: "text", class: "ep-called-spot-text", maxlength: String(opt.spot_length), placeholder: "another spot", "aria-label": "Another spot",
          value: other ? builder.called_spot : "", dataset: { testid: "ep-called-spot-text" }, oninput: (ev) => { builder.called_spot = ev.target.value; } })) : null);
  }

  function targetChip(x) {
    const chip = toggle(`${x.name} · ${x.metres}\u00a0m${x.can_defend ? "" : " (cannot defend)"}`, builder.target === x.id,
      () => { builder.target = x.id; selected = x.id; redraw(); }, `ep-target-${x.id}`);
    if (x.ally) {
      chip.classList.add("ep-ally");
      chip.dataset.ally = "true";
      chip.prepend(h("span", { class: "ep-ally-tag" }, "Ally"), " ");
    }
    return chip;
  }

  function attackForm(t) {
    // the server lists the targets foes first, the nearest first, and marks each ally (ally: true)
    const targets = t.targets;
    if (!builder.target || !targets.some((x) => x.id === builder.target)) {
      const first = targets.find((x) => !x.ally) || targets[0];
      builder.target = first ? first.id : null;
    }
    if (!t.pools.some(([id]) => id === builder.pool)) builder.pool = "none";
    const usable = t.weapons.filter((w) => w.preview[builder.target]);
    if (builder.weapon === null || !usable.some((w) => w.index === builder.weapon)) builder.weapon = usable.length ? usable[0].index : null;
    const weapon = t.weapons.find((w) => w.index === builder.weapon);
    if (weapon && !weapon.modes.some(([m]) => m === builder.mode)) builder.mode = "single";
    const preview = weapon ? weapon.preview[builder.target] : null;
    const shown = t.options.filter((o) => !o.only || (o.only === "melee" && weapon && weapon.skill === "melee") || (o.only === "two_handed" && weapon && weapon.two_handed));
    const usesBonus = builder.mode !== "single" || (weapon && weapon.skill === "melee" && builder.flags.aggressive);
    const chosen = shown.filter((o) => o.kind === "bool" && builder.flags[o.name]).map((o) => o.label);
    if (builder.visibility !== "clear") {
      const vis = shown.find((o) => o.name === "visibility");
      const c = vis && vis.choices.find(([id]) => id === builder.visibility);
      if (c) chosen.push(c[1]);
    }
    if (usesBonus) chosen.push(builder.bonus === "accuracy" ? "bonus to hit" : "bonus damage dice");
    const calledOpt = t.options.find((o) => o.name === "called_shot");
    const aimed = targets.find((x) => x.id === builder.target);
    if (builder.called_shot === "disarm" && !(aimed && aimed.holds)) builder.called_shot = "none";
    if (calledOpt && builder.called_shot !== "none") chosen.push(`called shot: ${builder.called_shot === "spot" ? builder.called_spot || "a spot" : builder.called_shot === "armour" ? "bypass armour" : "disarm"}`);
    if (builder.pool !== "none") chosen.push("pool +20");
    const moreCount = chosen.length;
    const more = h("details", { class: "ep-more", open: moreOpen, dataset: { testid: "ep-more" }, ontoggle: (ev) => { moreOpen = ev.currentTarget.open; } },
      h("summary", {}, moreCount ? `Firing mode, situation, pool (${moreCount} chosen)` : "Firing mode, situation, pool"),
      preview ? h("p", { class: "muted ep-before" }, "Target number before options: ", preview.mods.length ? preview.mods.map((m) => `${m.label} ${signed(m.value)}`).join(", ") : "no modifiers", ` (${preview.band})`) : null,
      weapon && weapon.modes.length > 1 ? choiceField("Firing mode", weapon.modes, builder.mode, (m) => { builder.mode = m; }, "ep-mode") : null,
      shown.filter((o) => o.kind === "bool").length ? h("div", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Situation"),
        h("div", { class: "button-row" }, shown.filter((o) => o.kind === "bool").map((o) => toggle(o.label, Boolean(builder.flags[o.name]),
          () => { builder.flags[o.name] = !builder.flags[o.name]; redraw(); }, `ep-opt-${o.name}`)))) : null,
      calledOpt ? calledShotField(calledOpt, aimed) : null,
      ...shown.filter((o) => o.kind === "choice" && o.name !== "called_shot" && (o.name !== "bonus" || usesBonus))
        .map((o) => choiceField(o.label, o.choices, builder[o.name], (id) => { builder[o.name] = id; }, `ep-opt-${o.name}`)),
      poolPicker(t.pools, builder.pool, (v) => { builder.pool = v; }, "ep-pool"),
    );
    const currentDecl = () => {
      const decl = { type: "attack", combatant: t.combatant, target: builder.target, weapon: builder.weapon, mode: builder.mode, bonus: builder.bonus, pool: builder.pool, visibility: builder.visibility };
      for (const o of shown) if (o.kind === "bool") decl[o.name] = Boolean(builder.flags[o.name]);
      if (calledOpt && builder.called_shot !== "none") decl.called_shot = builder.called_shot;
      if (decl.called_shot === "spot") decl.called_spot = builder.called_spot;
      return decl;
    };
    const declare = () => {
      if (aimed && aimed.ally && !confirm(`${aimed.name} is on your side. Attack ${aimed.name}?`)) return;
      ctx.send(currentDecl()).then((ack) => { if (ack && ack.ok) builder = freshBuilder(); });
    };
    // the odds of the attack as built, asked again as it changes
    // the odds line is also the switch for their details (shown at the end of the builder)
    const oddsSlot = preview ? h("div", { class: "odds-slot odds-details-body", id: "ep-odds-details", hidden: !oddsOpen, dataset: { testid: "odds-details" } }) : null;
    const oddsLine = preview ? h("button", {
      type: "button", class: "odds-inline ep-odds", "aria-live": "polite", "aria-expanded": String(oddsOpen), "aria-controls": "ep-odds-details",
      title: "Tap for the odds in detail, against each defence", dataset: { testid: "ep-odds", state: "asking" },
      onclick: (ev) => { oddsOpen = !oddsOpen; oddsSlot.hidden = !oddsOpen; ev.currentTarget.setAttribute("aria-expanded", String(oddsOpen)); },
    }, "odds…") : null;
    if (preview) {
      const previous = oddsEls && oddsEls.line.isConnected ? oddsEls.line : null;
      if (previous && previous.dataset.state === "ready") { oddsLine.textContent = previous.textContent; oddsLine.dataset.state = "stale"; }
      // (the figure stays until the new answer replaces it: no jump while the builder changes)
      const called = more.querySelector("[data-testid=ep-called-odds]");
      if (called && oddsEls && oddsEls.called && oddsEls.called.isConnected) called.textContent = oddsEls.called.textContent;
      oddsEls = { line: oddsLine, slot: oddsSlot, called };
      queueMicrotask(() => scheduleOdds(ctx, currentDecl()));
    }
    return h(
      "section",
      { class: "ep-builder", dataset: { testid: "ep-attack" } },
      h("h2", {}, t.label),
      h("div", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Target"),
        h("div", { class: "button-row ep-targets-row" }, targets.filter((x) => !x.ally).map(targetChip))),
      // an attack on an ally stands apart, each chip marked, and the attack is confirmed
      targets.some((x) => x.ally) ? h("details", {
        class: "ep-field ep-ally-targets", open: targets.some((x) => x.ally && x.id === builder.target), dataset: { testid: "ep-ally-targets" },
      }, h("summary", {}, "Attack an ally instead"),
      h("div", { class: "button-row ep-targets-row" }, targets.filter((x) => x.ally).map(targetChip))) : null,
      h("div", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Weapon"),
        h("div", { class: "button-row" }, t.weapons.map((w) => h("button", {
          type: "button", class: `ep-toggle ${builder.weapon === w.index ? "selected" : ""}`, "aria-pressed": String(builder.weapon === w.index),
          disabled: !w.preview[builder.target], dataset: { testid: `ep-weapon-${w.index}` },
          onclick: () => { builder.weapon = w.index; redraw(); },
        }, h("span", { class: "ep-weapon-name" }, w.name), " ", h("span", { class: "ep-weapon-numbers" }, `${w.skill_label} ${w.skill_value} · DV ${w.dv}${w.ap ? " AP" : ""}${w.skill === "melee" ? "" : ` · ${w.range} m`}`))))),
      preview ? h("div", { class: "ep-preview", dataset: { testid: "ep-preview" } },
        h("div", { class: "ep-tn-row" },
          h("div", { class: "ep-tn" }, h("span", { class: "ep-tn-label" }, "Target number"), h("span", { class: "ep-tn-value" }, String(preview.target)), oddsLine),
          h("button", { type: "button", class: "big primary ep-declare", dataset: { testid: "ep-declare-attack", action: "attack" }, onclick: declare }, "Declare attack")),
        chosen.length ? h("p", {}, `Your options: ${chosen.join("; ")}. The exact target number shows once declared; you can still withdraw then.`) : null,
      ) : h("div", {}, h("p", { class: "muted" }, "No weapon reaches that target."),
        h("button", { type: "button", class: "big primary ep-declare", disabled: true, dataset: { testid: "ep-declare-attack", action: "attack" } }, "Declare attack")),
      more,
      oddsSlot,
    );
  }

  function defendForm(t) {
    if (!t.pools.some(([id]) => id === defence.pool)) defence.pool = "none";
    return h(
      "section",
      { class: "ep-builder ep-defend", dataset: { testid: "ep-defend" } },
      h("h2", {}, t.label),
      h("p", {}, `The attack needs ${t.attack_target} or less.`),
      h("div", { class: "button-row" }, t.options.map((o) => toggle(o.label, Boolean(defence[o.name]), () => { defence[o.name] = !defence[o.name]; redraw(); }, `ep-def-opt-${o.name}`))),
      poolPicker(t.pools, defence.pool, (v) => { defence.pool = v; }, "ep-def-pool"),
      h("div", { class: "ep-methods" }, t.methods.map((m) => h("button", {
        type: "button", class: "big primary ep-method", dataset: { testid: `ep-defend-${m.method}`, action: "defend" },
        onclick: () => ctx.send({ type: "defend", combatant: t.combatant, method: m.method, superior_position: Boolean(defence.superior_position), pool: defence.pool })
          .then((ack) => { if (ack && ack.ok) defence = { superior_position: false, pool: "none" }; }),
      }, h("span", {}, m.label), h("span", { class: "ep-method-tn" }, `target ${m.target}${m.mods.length ? ` (${m.mods.map((x) => `${x.label} ${signed(x.value)}`).join(", ")})` : ""}`)))),
      h("p", { class: "muted" }, "Superior position and a pool point are added by the server when you choose."),
    );
  }

  function reactionBlock(accept, spend) {
    // after the roll: one pool point (if any is left and none was used on this test), or accept the dice
    const who = byId[accept.combatant];
    return h(
      "section",
      { class: "ep-builder ep-spend", dataset: { testid: `ep-spend-${accept.combatant}` } },
      h("h2", {}, `${who ? who.name : accept.combatant}: after the roll`),
      spend ? h("div", { class: "ep-methods" }, spend.choices.map((c) => h("button", {
        type: "button", class: "big ep-spend-choice", dataset: { testid: `ep-spend-${c.pool}-${c.use}`, action: "spend" },
        onclick: () => ctx.send({ type: "spend", combatant: spend.combatant, pool: c.pool, use: c.use }),
      }, c.label))) : null,
      h("button", { type: "button", class: "big primary ep-accept", dataset: { testid: `ep-accept-${accept.combatant}`, action: "accept" },
        onclick: () => ctx.send({ type: "accept", combatant: accept.combatant }) }, "Accept the dice"),
    );
  }

  function aimForm(t) {
    if (!aimChoice.target || !t.targets.some((x) => x.id === aimChoice.target)) aimChoice.target = builder.target || t.targets[0].id;
    return h(
      "details",
      { class: "ep-aim", open: aimOpen, dataset: { testid: "ep-aim" }, ontoggle: (ev) => { aimOpen = ev.currentTarget.open; } },
      h("summary", {}, "Aim"),
      choiceField("Aim at", t.targets.map((x) => [x.id, x.name]), aimChoice.target, (id) => { aimChoice.target = id; }, "ep-aim-at", "ep-targets-row"),
      h("div", { class: "button-row" }, t.complex_choices.map(([complex, label]) => h("button", {
        type: "button", class: "big", dataset: { testid: complex ? "ep-aim-careful" : "ep-aim-quick" },
        onclick: () => ctx.send({ type: "aim", combatant: t.combatant, target: aimChoice.target, complex }),
      }, label))),
    );
  }

  // the player's own numbers, at the top of the phone
  function mineStrip() {
    if (ctx.role !== "player") return null;
    const all = list.filter((c) => c.mine);
    const acting = all.filter(isActing);
    const mine = acting.length ? acting : all;
    if (!mine.length) return null;
    return h("section", { class: "ep-mine", dataset: { testid: "ep-mine", region: "mine" }, "aria-label": "Your combatant" },
      mine.map((c) => {
        const numbers = c.durability !== undefined;
        const health = numbers
          ? kitBar(Math.max(0, c.durability - c.damage), c.durability, `${c.durability - c.damage}/${c.durability} · WT ${c.wound_threshold}`)
          : kitBar(Math.round(c.health.level * 100), 100, c.health.label);
        return h("div", { class: `ep-mine-one side-${String(c.side).toLowerCase()}`, dataset: { testid: `ep-mine-${c.id}` } },
          // (the side's badge goes with the name: a long name wraps its words beside it, and the tag below)
          h("div", { class: "ep-mine-head" }, h("strong", {}, kit.sideBadge(c.side, [...new Set(list.map((x) => x.side))].sort()), " ", c.name),
            c.id === view.active ? h("span", { class: "ep-tag ep-tag-now" }, "acting") : null),
          h("div", { class: "ep-mine-health" }, health),
          h("div", { class: "ep-mine-numbers" },
            c.pools ? h("span", {}, `Flex ${c.pools.flex}/${c.pools_max.flex}`) : null,
            c.pools ? h("span", {}, `Vigor ${c.pools.vigor}/${c.pools_max.vigor}`) : null,
            c.wounds ? h("span", { class: "ep-wound-mod" }, `${c.wounds} wound${c.wounds > 1 ? "s" : ""} (${signed(-10 * c.wounds)})`) : null,
            c.markers.length ? h("span", { class: "muted" }, c.markers.join(", ")) : null));
      }));
  }

  // ---------------------------------------------------------------------------------------
  function combatantCard(c) {
    const numbers = c.durability !== undefined;
    const health = numbers
      ? [kitBar(Math.max(0, c.durability - c.damage), c.durability, `${c.durability - c.damage}/${c.durability}`),
        // (beside the bar: in a narrow column "35/35 (WT 7, DR 70)" ran out of it)
        h("span", { class: "ep-health-rest muted" }, `WT ${c.wound_threshold} · DR ${c.death_rating}`)]
      : kitBar(Math.round(c.health.level * 100), 100, c.health.label);
    return h(
      "article",
      { class: `ep-combatant side-${String(c.side).toLowerCase()} ${c.id === view.active ? "active" : ""} ${c.mine ? "mine" : ""} ${c.state !== "ok" ? "out" : ""}`,
        dataset: { testid: `ep-combatant-${c.id}`, state: c.state, wounds: c.wounds } },
      h("div", { class: "ep-combatant-head" },
        h("strong", {}, c.name), h("span", { class: "muted" }, ` ${c.morph} · side ${c.side}`),
        c.id === view.active ? h("span", { class: "ep-tag ep-tag-now" }, "acting") : null),
      h("div", { class: "ep-health", dataset: { testid: `ep-health-${c.id}` } }, health),
      c.markers.length ? h("div", { class: "ep-markers" }, c.markers.map((m) => h("span", { class: "ep-tag" }, m))) : null,
      c.wounds ? h("div", { class: "ep-wound-mod" }, `${c.wounds} wound${c.wounds > 1 ? "s" : ""}: ${signed(-10 * c.wounds)} to tests, ${signed(-c.wounds)} initiative`) : null,
      c.pools ? h("div", { class: "ep-pools", dataset: { testid: `ep-pools-${c.id}` } }, `Flex ${c.pools.flex}/${c.pools_max.flex} · Vigor ${c.pools.vigor}/${c.pools_max.vigor}`) : null,
      c.fray !== undefined ? h("div", { class: "ep-stats muted" },
        `Fray ${c.fray} · Melee ${c.melee} · Guns ${c.guns} · Athletics ${c.athletics} · SOM check ${c.som_check} · armour E${c.energy_armour}/K${c.kinetic_armour} · move ${c.base_move}/${c.full_move} m`) : null,
      c.modifiers && c.modifiers.length ? h("div", { class: "ep-mods" }, c.modifiers.map((m) => h("span", { class: "ep-tag" }, `${m.label} ${signed(m.value)}${m.lasting ? "" : " (next)"}`))) : null,
      h("div", { class: "ep-weapons muted" }, c.weapons.join(" · ")),
    );
  }

  // ---------------------------------------------------------------------------------------
  function gmTools() {
    if (ctx.role !== "gm") return null;
    const tools = [];
    const advance = find("advance");
    if (advance) tools.push(h("button", { type: "button", class: "big primary", dataset: { testid: "ep-advance" }, onclick: () => ctx.send({ type: "advance" }) }, advance.label));
    const mod = find("modifier");
    const cond = find("condition");
    const reveal = find("reveal");
    const clear = find("clear_modifiers");
    if (!mod && !cond && !reveal && !tools.length) return null;
    const ids = mod ? mod.combatants : [];
    if (!gm.combatant || !ids.some(([id]) => id === gm.combatant)) gm.combatant = (view.pending && view.pending.attacker) || view.active || (ids[0] && ids[0][0]) || "";
    const who = h("select", { dataset: { testid: "ep-gm-combatant" }, onchange: (ev) => { gm.combatant = ev.target.value; redraw(); } },
      ids.map(([id, name]) => h("option", { value: id, selected: id === gm.combatant }, name)));
    if (mod) {
      tools.push(h("div", { class: "ep-gm-row" },
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Combatant"), who),
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Label"),
          h("input", { type: "text", maxlength: 40, value: gm.label, placeholder: "e.g. behind cover", dataset: { testid: "ep-gm-label" }, oninput: (ev) => { gm.label = ev.target.value; } })),
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Value"),
          h("input", { type: "number", min: mod.min, max: mod.max, step: 5, value: gm.value, dataset: { testid: "ep-gm-value" }, oninput: (ev) => { gm.value = Number(ev.target.value); } })),
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "On"),
          h("select", { onchange: (ev) => { gm.applies = ev.target.value; } }, mod.applies.map(([id, label]) => h("option", { value: id, selected: id === gm.applies }, label)))),
        h("label", { class: "ep-check" }, h("input", { type: "checkbox", checked: gm.lasting, onchange: (ev) => { gm.lasting = ev.target.checked; } }), " lasting"),
        h("button", { type: "button", class: "big", dataset: { testid: "ep-gm-add-modifier" },
          onclick: () => ctx.send({ type: "modifier", combatant: gm.combatant, label: gm.label, value: gm.value, applies: gm.applies, lasting: gm.lasting }) }, "Add modifier"),
        clear ? h("button", { type: "button", onclick: () => ctx.send({ type: "clear_modifiers", combatant: gm.combatant }) }, "Clear modifiers") : null,
      ));
    }
    if (cond) {
      tools.push(h("div", { class: "ep-gm-row" },
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Condition"),
          h("select", { dataset: { testid: "ep-gm-condition" }, onchange: (ev) => { gm.condition = ev.target.value; } }, cond.conditions.map(([id, label]) => h("option", { value: id, selected: id === gm.condition }, label)))),
        h("button", { type: "button", class: "big", dataset: { testid: "ep-gm-condition-on" }, onclick: () => ctx.send({ type: "condition", combatant: gm.combatant, condition: gm.condition, on: true }) }, "Set"),
        h("button", { type: "button", class: "big", dataset: { testid: "ep-gm-condition-off" }, onclick: () => ctx.send({ type: "condition", combatant: gm.combatant, condition: gm.condition, on: false }) }, "Clear"),
      ));
    }
    const adjust = find("adjust");
    if (adjust) {
      const now = adjust.current[gm.combatant] || [0, 0];
      const dmg = h("input", { type: "number", min: 0, max: 999, value: now[0], dataset: { testid: "ep-gm-damage" } });
      const wnd = h("input", { type: "number", min: 0, max: 99, value: now[1], dataset: { testid: "ep-gm-wounds" } });
      tools.push(h("div", { class: "ep-gm-row" },
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Damage"), dmg),
        h("label", { class: "ep-field" }, h("span", { class: "ep-field-label" }, "Wounds"), wnd),
        h("button", { type: "button", class: "big", dataset: { testid: "ep-gm-adjust" },
          onclick: () => ctx.send({ type: "adjust", combatant: gm.combatant, damage: Number(dmg.value), wounds: Number(wnd.value) }) }, adjust.label),
      ));
    }
    if (reveal) tools.push(h("button", { type: "button", class: "big", dataset: { testid: "ep-gm-reveal" }, onclick: () => ctx.send({ type: "reveal", on: reveal.on }) }, reveal.label));
    tools.push(h("p", { class: "muted" }, "Drag any token to place it. You can act and defend for every combatant from the panel above."));
    return h("details", { class: "ep-card ep-gm", open: true, dataset: { testid: "ep-gm-tools", region: "tools" } }, h("summary", {}, "GM tools"), tools);
  }
}
