// AD&D 1e (Demon Idol procedure) board: the DM's checklist, the grid with charge rings and paths,
// the segment track 1-10 with every visible action placed on its segment, spells in progress,
// the phone's declaration form with its running clock, and the recap of the round.
// It draws only what the server sent: every order, reach and arrival segment comes from the view.

import * as kit from "../kit.js"; // the shared front-end kit (token, die, health bar, turn strip, action button, panel)
import * as odds from "../odds.js"; // odds before committing, from the server (issue 17)

const ODDS_KINDS = ["melee", "missile", "charge"];
const ODDS_PARTS = [{ key: "any_hit", word: "hit", always: true }, { key: "damage_this_round", word: "dmg" }, { key: "slay", word: "slay" }];

let selected = null; // combatant whose charge reach is drawn
let target = null; // foe the selected combatant would charge
let draft = {}; // the declaration being filled in on this screen
let draftFor = null;
let clockTimer = null;
let clockOffset = 0; // client time minus server time, seconds
let clockServerTime = null;
const openForms = {};
const formValues = {};

const LETTER_NAMES = {
  P: "Psionics", A: "Avoid", B: "Parley", C: "Await", D: "Missiles, spells, devices, turning",
  E: "Movement and charges", F: "Set against a charge", G: "Melee", "-": "Nothing",
};

export function render(root, view, ctx) {
  // health-like bars from the shared kit (numbers as text, never colour alone)
  const kitBar = (current, max, text) => kit.healthBar(current, max, { label: text, text });
  const { h, replace } = ctx.ui;
  const list = view.combatants || [];
  const byId = Object.fromEntries(list.map((c) => [c.id, c]));
  const legal = view.legal || [];
  const gm = ctx.role === "gm";
  if (clockTimer) { clearInterval(clockTimer); clockTimer = null; }
  const synced = ctx.conn && ctx.conn.state ? ctx.conn.state.clockOffset : null;
  if (typeof synced === "number") {
    // the server's clock as the last sync read it: a page reloaded mid-declaration counts from the
    // server's start of the clock, not from when it loaded
    clockOffset = synced;
  } else if (view.clock && view.clock.server_time != null && view.clock.server_time !== clockServerTime) {
    // (no sync has told the server's time: the time of the last command, read as it arrives)
    clockServerTime = view.clock.server_time;
    clockOffset = Date.now() / 1000 - clockServerTime;
  }
  if (selected && !byId[selected]) selected = null;
  if (!selected) {
    const mine = list.find((c) => c.mine && c.condition === "ok");
    selected = mine ? mine.id : null;
  }
  if (target && (!selected || !view.charges[selected] || !view.charges[selected].targets[target])) target = null;

  const declareTemplates = legal.filter((t) => t.type === "declare");
  if (!declareTemplates.some((t) => t.combatant === draftFor)) {
    draft = {};
    draftFor = declareTemplates.length ? declareTemplates[0].combatant : null;
  }

  // the grid's box is kept while the role and battle are the same: tokens update in place, zoom stays
  const gridBox = ctx.ui.keptElement("ad-grid", `${ctx.role}|${ctx.battleId}`, () => h("div", { class: "ad-grid", dataset: { testid: "ad-grid" } }));
  replace(root, h("div", { class: `ad ad-role-${ctx.role}`, dataset: { phase: view.phase || "" } },
    banner(),
    h("div", { class: "ad-main" },
      h("div", { class: "ad-col ad-col-play" },
        declarePanel(),
        gm ? gmPanel() : null, // the DM's next step before the call-offs
        playerActions(),
        myResults(),
        checklist(),
      ),
      h("div", { class: "ad-col ad-col-board" },
        gridBox,
        chargePanel(),
        trackPanel(),
        spellsPanel(),
        declarationsPanel(),
        recapPanel(),
        gm ? gmTools() : null,
      ),
    ),
  ));
  drawGrid(gridBox);
  if (view.clock) tickClock();

  // --- banner and checklist -------------------------------------------------------------------
  function banner() {
    if (view.status === "ended") {
      return h("div", { class: "ad-banner ad-ended", dataset: { testid: "outcome" } },
        h("strong", {}, (view.outcome && view.outcome.text) || "The encounter is over."));
    }
    const sur = view.surprise || {};
    const where = sur.segment ? `Surprise segment ${sur.segment} of ${sur.segments}` : view.round ? `Round ${view.round}` : "Encounter";
    const init = view.initiative;
    return h("div", { class: "ad-banner" },
      h("span", { class: "ad-where", dataset: { testid: "round" } }, where),
      h("span", { class: "ad-phase", dataset: { testid: "phase" } }, view.phase_label),
      init ? h("span", { class: "ad-init", dataset: { testid: "initiative" } },
        ["A", "B"].map((s) => h("span", { class: `ad-die side-${s.toLowerCase()} ${init.winner === s ? "ad-win" : ""}` }, `${s} ${init.dice[s]}`)),
        init.winner ? ` side ${init.winner} first` : " tie") : null,
      h("span", { class: "ad-scale muted" }, view.grid.unit),
    );
  }

  function checklist() {
    const proc = view.procedure || { steps: [] };
    const steps = h("ol", { class: "ad-steps" }, proc.steps.map((s) => h("li", {
      class: `ad-step ad-step-${s.state}`, dataset: { testid: `step-${s.key}`, state: s.state },
    }, h("span", { class: "ad-step-label" }, s.label), s.state === "skipped" ? h("span", { class: "ad-tag" }, "skipped") : null,
    s.note ? h("span", { class: "ad-step-note muted" }, s.note) : null)));
    const now = proc.steps.find((s) => s.state === "current");
    return h("section", { class: "ad-card ad-checklist", dataset: { testid: "checklist" } },
      h("h2", {}, "Procedure"),
      // a phone folds the ten steps under the one under way (its turn fits one screen)
      ctx.role === "player" ? h("details", { class: "phone-fold ad-steps-fold" }, h("summary", {}, now ? `Now: ${now.label}` : "The steps"), steps) : steps,
      (proc.pending || []).length ? h("ul", { class: "ad-pending", dataset: { testid: "pending" } },
        proc.pending.map((p) => h("li", {}, p))) : null,
      view.clock ? h("p", { class: "ad-await" }, "Clock: ", h("span", { class: "ad-clock-text", dataset: { testid: "await-clock" } }, "")) : null,
    );
  }

  function clockText() {
    const c = view.clock;
    if (!c || c.open_at == null) return "";
    const now = c.paused_since != null ? c.paused_since : Date.now() / 1000 - clockOffset;
    const secs = Math.max(0, now - c.open_at - (c.paused_total || 0));
    const late = Math.floor(secs / c.seconds_per_segment + 1e-9);
    return `${c.name}: ${Math.floor(secs)} s${c.paused_since != null ? " (paused)" : ""} — ${late ? `${late} segment${late > 1 ? "s" : ""} late` : "on time"}`;
  }

  function tickClock() {
    const update = () => {
      // the declaration form may sit at the top of the phone or of the DM's Battle panel, outside root
      for (const el of document.querySelectorAll(".ad-clock-text")) el.textContent = clockText();
    };
    update();
    clockTimer = setInterval(() => {
      if (!root.isConnected) { clearInterval(clockTimer); clockTimer = null; return; }
      update();
    }, 500);
  }

  // --- the grid with charge rings and paths ---------------------------------------------------
  function drawGrid(box) {
    const rings = [];
    const paths = [];
    const highlights = [];
    const sel = selected ? byId[selected] : null;
    const ch = selected ? view.charges[selected] : null;
    if (sel && ch) {
      for (let s = 1; s <= 10; s++) {
        const r = (s * ch.per_segment_inches);
        if (s === 10 || s % 2 === 0 || s === 1) rings.push({ x: sel.x, y: sel.y, r, cls: `ad-ring ad-ring-${s === 10 ? "round" : "seg"}`, label: s === 10 ? `charge ${ch.reach_inches}"` : `seg ${s}` });
      }
      for (const [tid, info] of Object.entries(ch.targets)) {
        const t = byId[tid];
        if (t) highlights.push({ x: t.x, y: t.y, cls: tid === target ? "ad-target" : "ad-foe", label: info.arrival_segment ? `arrives segment ${info.arrival_segment}` : "out of reach this round" });
      }
      if (target && byId[target]) {
        const info = ch.targets[target];
        const points = [[sel.x, sel.y], ...info.path];
        const labels = ["", ...info.path.map((_, i) => String(i + 1))];
        paths.push({ points, labels, cls: info.arrival_segment ? "ad-path" : "ad-path ad-short" });
        for (const r of info.retaliators) {
          if (byId[r]) highlights.push({ x: byId[r].x, y: byId[r].y, cls: "ad-retaliator", label: `${byId[r].name} can strike back` });
        }
      }
    }
    const tokens = list.filter((c) => c.condition !== "fled").map((c) => ({
      id: c.id, x: c.x, y: c.y, label: kit.nameLetters(c.name), name: c.name, side: c.side,
      cls: `${c.mine ? "mine" : ""} ${c.condition === "down" ? "ad-down" : ""} ${c.condition === "surrendered" ? "surrendered" : ""}`,
      title: `${c.name}: ${c.status}${c.hp != null ? `, ${c.hp}/${c.hp_max} hp` : ""}`,
      badge: c.hp != null ? c.hp : null,
      hp: c.hp != null ? { current: Math.max(0, c.hp), max: c.hp_max } : null,
      active: view.clock && view.clock.combatant === c.id,
      selected: c.id === selected || c.id === target,
      dead: c.condition === "dead",
    }));
    if (draftFor && draft.kind === "move" && draft.x !== undefined) highlights.push({ x: draft.x, y: draft.y, cls: "ad-dest", label: "destination" });
    ctx.grid.renderGrid(box, {
      zoomable: !!ctx.zoomable,
      width: view.grid.width, height: view.grid.height, tokens, rings, paths, highlights,
      onCellClick: (x, y) => {
        if (draftFor && draft.kind === "move") { draft.x = x; draft.y = y; render(root, view, ctx); }
      },
      onTokenClick: (id) => {
        const c = byId[id];
        if (selected && selected !== id && view.charges[selected] && view.charges[selected].targets[id]) {
          target = target === id ? null : id;
        } else {
          selected = selected === id ? null : id;
          target = null;
        }
        if (draftFor && c && ["melee", "missile", "charge", "turn", "spell"].includes(draft.kind) && id !== draftFor) draft.target = id;
        render(root, view, ctx);
      },
      canDrag: () => gm && view.status === "active",
      onDrop: (id, x, y) => ctx.send({ type: "move", combatant: id, x, y }),
    });
  }

  function chargePanel() {
    const sel = selected ? byId[selected] : null;
    const ch = selected ? view.charges[selected] : null;
    if (!sel) return h("p", { class: "muted ad-hint" }, "Tap a token to see how far it can charge; then tap a foe.");
    if (!ch) return h("section", { class: "ad-card" }, h("strong", {}, sel.name), ` — ${sel.status}`);
    const t = target ? byId[target] : null;
    const info = t ? ch.targets[target] : null;
    return h("section", { class: "ad-card ad-charge", dataset: { testid: "charge-panel" } },
      h("h2", {}, `${sel.name}: charge`),
      h("p", {}, `${ch.per_segment_feet} ft each segment, ${ch.reach_feet} ft this round (${ch.reach_inches}" on the grid); weapon ${ch.weapon_length_feet} ft long.`),
      info ? h("p", { class: "ad-charge-target", dataset: { testid: "charge-target" } },
        // (whole feet at the table: the distance is measured between centres, 100.45 ft read as noise)
        `Against ${t.name} (${Number.isInteger(info.distance_feet) ? "" : "about "}${Math.round(info.distance_feet)} ft away): `,
        info.arrival_segment ? h("strong", { dataset: { testid: "arrival-segment" } }, `strikes in segment ${info.arrival_segment}`) : h("strong", {}, "cannot reach this round"),
        info.retaliators.length ? `. Can strike back: ${info.retaliators.map((r) => byId[r] ? byId[r].name : r).join(", ")}.` : ". Nobody can strike back.") :
        h("p", { class: "muted" }, "Tap a foe to see the arrival segment and who can strike back."),
    );
  }

  // --- the segment track ------------------------------------------------------------------------
  function trackPanel() {
    const track = view.track || [];
    if (!track.length) return null;
    const cols = [];
    for (let s = 1; s <= 10; s++) {
      const items = track.filter((a) => a.segment === s);
      cols.push(h("div", { class: `ad-seg ${view.current_segment === s ? "ad-seg-now" : ""}`, dataset: { testid: `segment-${s}` } },
        h("div", { class: "ad-seg-num" }, String(s)),
        // (a column is a tenth of the card: the combatant goes by its token's letters, "MU", as on the
        // grid; the list under the track and the chip's title give the whole name and its action)
        items.map((a) => h("div", {
          class: `ad-act ad-act-${a.status} side-${a.side.toLowerCase()} ${a.together ? "ad-together" : ""}`,
          title: [`${a.name}: ${a.label}`, ...a.why].join("; "), dataset: { testid: `act-${a.combatant}`, status: a.status },
        }, h("span", { class: "ad-step-no" }, `#${a.step}`), h("span", { class: "ad-letter" }, a.letter),
        h("span", { class: "ad-act-who" }, kit.nameLetters(a.name))))));
    }
    return h("section", { class: "ad-card", dataset: { testid: "segment-track" } },
      h("h2", {}, "Segments"),
      h("div", { class: "ad-track" }, cols),
      h("ol", { class: "ad-order" }, track.map((a) => h("li", { class: `ad-act-${a.status}` },
        h("strong", {}, `#${a.step} seg ${a.segment} · ${a.name}`), ` ${a.label}`,
        a.status !== "pending" ? h("span", { class: "ad-tag" }, a.status) : null,
        a.why.length ? h("div", { class: "muted ad-why" }, a.why.join("; ")) : null))),
    );
  }

  function spellsPanel() {
    const spells = view.spells || [];
    if (!spells.length) return null;
    return h("section", { class: "ad-card", dataset: { testid: "spells" } }, h("h2", {}, "Spells in progress"),
      h("ul", {}, spells.map((sp) => h("li", {}, h("strong", {}, sp.name), ` ${sp.spell}`,
        sp.completes_segment ? ` — completes in segment ${sp.completes_segment}` : ` — ${sp.remaining} segment(s) to go`,
        sp.target && byId[sp.target] ? ` at ${byId[sp.target].name}` : ""))));
  }

  function declarationsPanel() {
    const decls = view.declarations || [];
    if (!decls.length || !["declarations", "initiative", "resolution"].includes(view.phase)) return null;
    return h("section", { class: "ad-card", dataset: { testid: "declarations" } }, h("h2", {}, "Declared"),
      h("ul", {}, decls.map((d) => h("li", {}, h("strong", {}, d.name), ` ${d.label}`,
        d.delay ? h("span", { class: "ad-tag ad-late" }, `+${d.delay} seg`) : null))));
  }

  function recapPanel() {
    if (!view.recap) return null;
    return h("section", { class: "ad-card ad-recap", dataset: { testid: "recap" } }, h("h2", {}, `Recap of round ${view.recap.round}`),
      h("ul", {}, view.recap.lines.map((l) => h("li", {}, l))));
  }

  // --- the declaration form (phones, and the DM's notes) --------------------------------------
  function declarePanel() {
    const templates = legal.filter((t) => t.type === "declare");
    if (!templates.length) return null;
    const t = templates.find((x) => x.combatant === draftFor) || templates[0];
    if (draftFor !== t.combatant) { draftFor = t.combatant; draft = {}; }
    const action = t.actions.find((a) => a.kind === draft.kind);
    const send = async () => {
      const d = { type: "declare", combatant: t.combatant, kind: draft.kind };
      for (const k of ["target", "spell", "casting_time", "damage", "segments", "trigger", "note", "x", "y"]) {
        if (draft[k] !== undefined && draft[k] !== "") d[k] = draft[k];
      }
      if (draft.prepared) d.prepared = true;
      const ack = await ctx.send(d);
      if (ack && ack.ok) { draft = {}; }
    };
    const ready = action && (!action.needs_target || draft.target);
    const switcher = templates.length > 1 ? h("div", { class: "button-row ad-switch" }, templates.map((x) => h("button", {
      type: "button", class: x.combatant === t.combatant ? "selected" : "", dataset: { testid: `declare-for-${x.combatant}` },
      onclick: () => { draftFor = x.combatant; draft = {}; selected = x.combatant; render(root, view, ctx); },
    }, byId[x.combatant] ? byId[x.combatant].name : x.combatant))) : null;
    return h("section", { class: "ad-card ad-declare", dataset: { testid: "declare-form", combatant: t.combatant, region: "due", yourTurn: "true" } },
      switcher,
      h("h2", {}, t.label),
      t.clock ? h("p", { class: "ad-clock" }, h("span", { class: "ad-clock-text", dataset: { testid: "clock" } }, "")) : null,
      h("div", { class: "ad-kinds" }, t.actions.map((a) => h("button", {
        type: "button", class: `ad-kind ${draft.kind === a.kind ? "selected" : ""}`, "aria-pressed": draft.kind === a.kind ? "true" : "false",
        dataset: { testid: `kind-${a.kind}` }, title: LETTER_NAMES[a.letter] || "",
        onclick: () => {
          draft = { kind: a.kind }; if (a.targets.length === 1) draft.target = a.targets[0].id; render(root, view, ctx);
          // the next choice (the target, the details) comes into view above the sticky Declare button
          const next = root.querySelector("[data-testid=declare-form] .ad-targets");
          if (next) next.scrollIntoView({ block: "nearest", behavior: "smooth" });
        },
      }, h("span", { class: "ad-kind-letter" }, a.letter), h("span", { class: "ad-kind-label" }, a.label.replace(/^.{1,2} · /, ""))))),
      action && action.targets.length ? h("div", { class: "ad-targets" }, h("span", { class: "muted" }, "Target"),
        h("div", { class: "button-row" }, action.targets.map((tg) => targetButton(t, action, tg)))) : null,
      action && action.kind === "move" ? h("p", { class: "ad-hint", dataset: { testid: "move-destination" } },
        draft.x !== undefined ? `Destination: square ${draft.x}, ${draft.y} (tap the grid to change)` : "Tap a square on the grid to set where to go (or leave it to the DM).") : null,
      action ? extraFields(t, action) : null,
      h("button", { type: "button", class: "primary big ad-send", disabled: !ready, dataset: { testid: "declare-submit", action: "declare" }, onclick: send },
        ready ? `Declare: ${action.label}` : "Choose an action"),
      ready && ODDS_KINDS.includes(action.kind) && draft.target ? oddsDetails(t.combatant, action.kind, draft.target) : null,
    );
  }

  // a target with the odds of this blow on it: P(hit), expected damage, chance to slay; a charge's arrival
  function targetButton(t, action, tg) {
    const button = h("button", {
      type: "button", class: `big ${draft.target === tg.id ? "selected" : ""}`, dataset: { testid: `target-${tg.id}` },
      onclick: () => { draft.target = tg.id; target = tg.id; render(root, view, ctx); },
    }, tg.name);
    if (ODDS_KINDS.includes(action.kind)) {
      odds.withOdds(ctx, { combatant: t.combatant, kind: action.kind, target: tg.id }, (answer) => {
        // a foe whose armour class is the DM's secret: the chance per armour class is in the details
        const chip = answer.stats_known === false
          ? odds.decorate(button, answer, [{ key: "damage_per_hit", word: "dmg a hit" }])
          : odds.decorate(button, answer, ODDS_PARTS);
        if (chip && answer.charge) {
          chip.append(answer.charge.reaches === false ? " · out of reach" : ` · arrives seg ${answer.charge.arrival_segment}`);
        }
      }, () => button.isConnected);
    }
    return button;
  }

  function oddsDetails(cid, kind, tid) {
    const slot = h("div", { class: "odds-slot" });
    odds.withOdds(ctx, { combatant: cid, kind, target: tid }, (answer) => {
      replace(slot, odds.disclosure(answer, { summary: "Odds of this action in detail", id: `adnd-${cid}` }));
    }, () => slot.isConnected || true);
    return slot;
  }

  function extraFields(t, action) {
    const wanted = {
      spell: ["spell", "casting_time", "damage"], device: ["segments"], custom: ["segments"],
    }[action.kind] || [];
    const fields = t.fields.filter((f) => wanted.includes(f.name) || ["prepared", "trigger", "note"].includes(f.name));
    return h("div", { class: "stack ad-fields" }, fields.map((f) => {
      if (f.name === "trigger" && !draft.prepared) return null;
      return fieldInput(f, draft[f.name], (v) => { draft[f.name] = v; if (f.kind === "bool") render(root, view, ctx); });
    }));
  }

  function fieldInput(f, value, onchange) {
    const id = `ad-f-${f.name}-${Math.random().toString(36).slice(2, 7)}`;
    let input;
    if (f.kind === "bool") {
      input = h("input", { id, type: "checkbox", checked: !!value, dataset: { testid: `field-${f.name}` }, onchange: (e) => onchange(e.target.checked) });
      return h("label", { class: "ad-check", for: id }, input, ` ${f.label}`);
    }
    if (f.kind === "choice") {
      input = h("select", { id, dataset: { testid: `field-${f.name}` }, onchange: (e) => onchange(e.target.value) },
        f.choices.map(([v, label]) => h("option", { value: v, selected: String(value ?? f.default) === String(v) }, label)));
    } else {
      input = h("input", {
        id, type: f.kind === "int" ? "number" : "text", value: value ?? (f.kind === "int" ? f.default : ""),
        min: f.min, max: f.kind === "int" ? f.max : null, maxlength: f.kind === "text" ? f.max || 60 : null,
        inputmode: f.kind === "int" ? "numeric" : null, dataset: { testid: `field-${f.name}` },
        oninput: (e) => onchange(f.kind === "int" ? Number(e.target.value) : e.target.value),
      });
    }
    return h("label", { for: id }, f.label, input);
  }

  // --- players: cancel, trigger, results ------------------------------------------------------
  function playerActions() {
    const items = legal.filter((t) => t.type === "cancel" || t.type === "trigger");
    if (!items.length) return null;
    // calling off is optional (not a turn); a prepared action's trigger asks the player now
    const asks = items.some((t) => t.type === "trigger");
    return h("section", { class: "ad-card", dataset: { region: "due", yourTurn: String(asks) } }, h("h2", {}, "During resolution"),
      h("div", { class: "button-row" }, items.map((t) => h("button", {
        type: "button", class: `big ${t.type === "trigger" ? "primary" : "danger"}`, dataset: { testid: t.testid, action: t.type },
        onclick: () => ctx.send({ type: t.type, combatant: t.combatant }),
      }, t.label))));
  }

  function myResults() {
    if (ctx.role !== "player") return null;
    const mine = new Set(list.filter((c) => c.mine).map((c) => c.id));
    const events = (ctx.events || []).filter((e) => {
      const d = e.data || {};
      return mine.has(d.combatant) || mine.has(d.attacker) || mine.has(d.target);
    }).slice(-6);
    const cards = list.filter((c) => c.mine).map((c) => h("div", { class: `ad-me side-${c.side.toLowerCase()}`, dataset: { testid: `me-${c.id}` } },
      kit.sideBadge(c.side, [...new Set(list.map((x) => x.side))].sort()), h("strong", {}, c.name), ` ${c.status}`, c.hp != null ? kitBar(Math.max(0, c.hp), c.hp_max, `${c.hp}/${c.hp_max} hp`) : null,
      h("span", { class: "muted" }, ` AC ${c.ac} · ${c.weapon} · MV ${c.move}"`)));
    if (!cards.length) return null;
    return [
      h("section", { class: "ad-card ad-mine", dataset: { testid: "my-combatants", region: "mine" }, "aria-label": "Your combatants" }, cards),
      h("section", { class: "ad-card", dataset: { testid: "my-results" } }, h("h2", {}, "What happened to yours"),
        events.length ? h("ul", { class: "ad-results" }, events.map((e) => (ctx.undone && ctx.undone.has(e.v)
          ? h("li", { dataset: { undone: "true" } }, h("span", { class: "undone-tag" }, "undone"), " ", h("s", { class: "undone-text" }, e.text))
          : h("li", {}, e.text)))) : h("p", { class: "muted" }, "Nothing yet.")),
    ];
  }

  // --- the DM's step buttons and tools --------------------------------------------------------
  function templateButton(t) {
    const key = `${t.type}:${t.testid}`;
    const fields = t.fields || [];
    const values = formValues[key] || (formValues[key] = {});
    const submit = () => {
      const d = { type: t.type, ...(t.fixed || {}) };
      if (t.combatant) d.combatant = t.combatant;
      for (const f of fields) d[f.name] = values[f.name] !== undefined ? values[f.name] : f.default;
      openForms[key] = false;
      return ctx.send(d);
    };
    if (!fields.length) {
      return h("button", { type: "button", class: "big primary", dataset: { testid: t.testid, action: t.type }, onclick: submit }, t.label);
    }
    if (!openForms[key]) {
      return h("button", { type: "button", class: "big", dataset: { testid: t.testid }, onclick: () => { openForms[key] = true; render(root, view, ctx); } }, t.label);
    }
    return h("div", { class: "ad-form stack" },
      fields.map((f) => fieldInput(f, values[f.name], (v) => { values[f.name] = v; })),
      h("div", { class: "button-row" },
        h("button", { type: "button", class: "primary big", dataset: { testid: `${t.testid}-go` }, onclick: submit }, t.label),
        h("button", { type: "button", onclick: () => { openForms[key] = false; render(root, view, ctx); } }, "Close")));
  }

  function gmPanel() {
    const steps = legal.filter((t) => !["declare", "move", "set_scale", "first_aid", "set_hp", "check_morale", "cancel", "trigger"].includes(t.type) ||
      (t.type === "check_morale" && view.phase === "morale"));
    if (!steps.length) return null;
    return h("section", { class: "ad-card ad-gm-steps", dataset: { testid: "gm-steps", region: "due" } }, h("h2", {}, "DM: next step"),
      h("div", { class: "stack" }, steps.map(templateButton)));
  }

  function gmTools() {
    const tools = legal.filter((t) => ["move", "set_scale", "first_aid", "set_hp"].includes(t.type) || (t.type === "check_morale" && view.phase !== "morale"));
    if (!tools.length) return null;
    return h("section", { class: "ad-card ad-gm-tools", dataset: { testid: "gm-tools", region: "tools" } }, h("h2", {}, "DM tools"),
      h("p", { class: "muted" }, "Drag a token to move it."),
      h("div", { class: "stack" }, tools.map(templateButton)));
  }
}
