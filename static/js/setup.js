// The GM's set-up: lineup built from the rule system's stat form (or presets and saved rosters),
// options, seat assignment, and the battle controls (start, restart, end, undo).

import { h, replace, button } from "./ui.js";
import { replayLink } from "./replay-link.js";
import { survivorsPanel } from "./survivors-button.js";

let editing = null; // index of the lineup entry being edited, "new", {preset}, or null
let latest = null; // the last [root, table, ctx] drawn, so a re-draw always uses the newest table
let draft = null; // the lineup as our own unanswered edits left it
let inflight = 0; // lineup edits sent and not yet answered
let awaited = -1; // the table revision the last answered edit made: its draft stands until a table that new is drawn
let sending = Promise.resolve(); // the lineup edits go one after another: the server applies them in the GM's order
const edits = new Set(); // their promises: "Start battle" waits for them (the server may handle two events of one page at once)

function redraw() {
  if (latest) renderSetup(...latest);
}

function controllerChoices(seats) {
  return [["gm", "GM"], ["computer", "Computer"], ...seats.map((s) => [`seat:${s.id}`, `Player: ${s.name}`])];
}

function controllerValue(entry) {
  return entry.controller === "seat" ? `seat:${entry.seat}` : entry.controller;
}

function splitController(value) {
  return value.startsWith("seat:") ? { controller: "seat", seat: value.slice(5) } : { controller: value, seat: null };
}

function select(options, value, attrs = {}) {
  return h("select", attrs, options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
}

export function renderControls(root, table, state, ctx) {
  const running = state.view && state.status !== "ended";
  const send = (event, payload = {}) => ctx.command(event, payload);
  // the step an undo would take back now, as the server names it (there is one after the end too)
  const step = state.view ? state.undo : null;
  // (the common view shape's list of fighters: id, name, controller, seat; rules/contract.py's VIEW_KEYS)
  const listed = state.view ? state.view.fighters || state.view.combatants : null;
  const combatants = listed ? Object.entries(normaliseCombatants(listed)) : [];
  // drawn again only when something it shows changed, not at every turn: a GM choosing who plays
  // whom keeps the open list and the focus while the battle goes on (and a mass battle's update does
  // not lay out a list per unit again)
  const key = JSON.stringify([
    Boolean(state.view), state.status, state.battleId,
    combatants.map(([id, c]) => [id, c.name, controllerValue(c)]),
    (table.seats || []).map((s) => [s.id, s.name]),
    table.slug, table.name, table.roster_id, (table.rosters || []).map((r) => [r.id, r.name]),
  ]);
  root.__undoStep = step; // (what the undo button takes back when clicked: the newest the server named)
  if (root.__controlsKey === key && root.firstChild) { drawUndoStep(root, step); return; }
  root.__controlsKey = key;
  replace(root,
    h("h2", {}, "Battle"),
    !running ? h("p", { class: "muted" }, state.view ? "The battle is over. " : "No battle is running. ",
      "Build the lineup and start one from the Lineup tab.",
      button("Go to the lineup", () => ctx.showTab("lineup"), { class: "link-button" })) : null,
    state.view ? h("div", { class: "undo-group" },
      button("Undo last step", () => { const last = root.__undoStep; if (last && confirm(undoQuestion(last))) send("undo"); },
        { class: "big", dataset: { testid: "undo" }, "aria-describedby": "undo-step" }),
      h("p", { class: "undo-step muted", id: "undo-step", dataset: { testid: "undo-step" } })) : null,
    h("div", { class: "button-row" },
      running ? button("End battle", () => { if (confirm("End this battle?")) send("battle_end"); }, { class: "big danger", dataset: { testid: "end-battle" } }) : null,
      state.view ? button("Restart", () => { if (confirm("Start the battle again from the lineup?")) send("battle_restart"); }, { class: "big", dataset: { testid: "restart-battle" } }) : null,
    ),
    replayLink(table, state),
    survivorsPanel(table, state, ctx),
    running && combatants.length ? h("details", { class: "assignments", open: assignmentsOpen },
      h("summary", {}, h("h3", {}, "Who plays whom")),
      combatants.map(([id, c]) => h("label", { class: "assign-row" }, h("span", {}, c.name),
        select(controllerChoices(table.seats || []), controllerValue(c), {
          dataset: { testid: `assign-${id}` },
          onchange: async (ev) => {
            const ack = await send("assign", { combatant: id, ...splitController(ev.target.value) });
            if (!ack || !ack.ok) ev.target.value = controllerValue(c); // refused: the list shows who still plays it
          },
        })))) : null,
  );
  drawUndoStep(root, step);
  const details = root.querySelector(".assignments");
  if (details) details.addEventListener("toggle", () => { assignmentsOpen = details.open; });
}

let assignmentsOpen = true;

// The undo button and the step it takes back, written in place at every update (the rest of the
// controls is drawn again only when what it shows changes: a GM choosing who plays whom keeps the focus).
function drawUndoStep(root, step) {
  const undo = root.querySelector("[data-testid=undo]");
  const said = root.querySelector("[data-testid=undo-step]");
  if (!undo || !said) return;
  undo.disabled = !step;
  const key = step ? `${step.v}|${step.name}` : "";
  if (said.__key === key) return;
  said.__key = key;
  replace(said, step ? ["Takes back ", h("q", {}, step.name)] : "Nothing to undo: the battle is at its start.");
}

// "Undo “Fighter hits Gnoll: 16 against 12 needed, 6 damage”?", and every line of that step
function undoQuestion(step) {
  const lines = step.lines || [];
  return [`Undo “${step.name}”?`, lines.length ? `\nThat step:\n${lines.map((line) => `• ${line}`).join("\n")}` : null,
    "\nThe battle goes back to just before it. Made again the same way, it rolls the same dice."].filter(Boolean).join("\n");
}

function normaliseCombatants(combatants) {
  if (Array.isArray(combatants)) return Object.fromEntries(combatants.map((c) => [c.id, c]));
  return combatants;
}

export function renderNotes(root, table, ctx) {
  const area = h("textarea", { rows: 4, maxlength: 5000, placeholder: "Only you see these notes.", dataset: { testid: "gm-notes" } });
  area.value = table.gm_notes || "";
  replace(root, h("h2", {}, "GM notes"), h("p", { class: "muted" }, "Private: they never reach the players, the spectators or the TV."), area,
    button("Save notes", async () => {
      const ack = await ctx.conn.emit("notes_set", { notes: area.value });
      if (ack.ok) ctx.notice("Notes saved.", "ok"); else ctx.notice(ack.error);
    }));
}

export function renderSetup(root, table, ctx) {
  latest = [root, table, ctx];
  // While an edit is on its way (or the table it made is not here yet), later edits build on it,
  // not on the last lineup the server echoed.
  const revision = typeof table.revision === "number" ? table.revision : Infinity;
  if (inflight === 0 && revision >= awaited) draft = null;
  const lineup = (draft || table.lineup || []).map((e) => ({ ...e }));
  const fields = table.forms.combatant;
  const emit = async (event, payload) => {
    const ack = await ctx.conn.emit(event, payload);
    if (!ack.ok) ctx.notice(ack.error);
    return ack;
  };
  const saveLineup = async (next) => {
    draft = next.map((e) => ({ ...e }));
    inflight += 1;
    const lineupNow = next.map((e) => ({ ...e }));
    const sent = sending.then(() => emit("lineup_set", { lineup: lineupNow }));
    sending = sent.catch(() => {});
    edits.add(sent);
    try {
      const ack = await sent;
      if (ack.ok && typeof ack.revision === "number") awaited = Math.max(awaited, ack.revision);
      return ack;
    } finally {
      edits.delete(sent);
      inflight -= 1;
      if (inflight === 0 && (latest ? (latest[1].revision ?? Infinity) : Infinity) >= awaited) draft = null;
    }
  };
  // the battle starts from the lineup the GM sees: the edits still on their way are answered first
  const startBattle = async () => {
    await Promise.allSettled([...edits]);
    return ctx.command("battle_start", { replace: true });
  };

  const rows = lineup.map((entry, i) => h("li", { class: "lineup-row", dataset: { testid: `lineup-${i}` } },
    h("span", { class: "lineup-name" }, entry.name),
    select(table.forms.sides.map((s) => [s, `Side ${s}`]), entry.side, {
      "aria-label": "side", onchange: (ev) => { lineup[i].side = ev.target.value; saveLineup(lineup); },
    }),
    select(controllerChoices(table.seats || []), controllerValue(entry), {
      "aria-label": "played by", dataset: { testid: `lineup-controller-${i}` },
      onchange: (ev) => { Object.assign(lineup[i], splitController(ev.target.value)); if (lineup[i].controller === "seat") delete lineup[i].hidden; saveLineup(lineup); },
    }),
    // hidden from the table when the battle starts (rules/hiding.py; a grid system's; not a player's combatant)
    table.traits && table.traits.grid && entry.controller !== "seat" ? h("label", { class: "lineup-hidden" },
      h("input", { type: "checkbox", checked: entry.hidden === true, dataset: { testid: `lineup-hidden-${i}` },
        onchange: (ev) => { if (ev.target.checked) lineup[i].hidden = true; else delete lineup[i].hidden; saveLineup(lineup); } }),
      " Hidden") : null,
    button("Edit", () => { editing = i; redraw(); }, { "aria-label": `Edit ${entry.name}` }),
    button("✕", () => { lineup.splice(i, 1); saveLineup(lineup); }, { "aria-label": `remove ${entry.name}`, class: "danger" }),
  ));

  const presetSelect = select([["", "— start from a preset —"], ...(table.presets || []).map((p, i) => [String(i), p.name])], "", { "aria-label": "Start from a preset", dataset: { testid: "preset" } });
  presetSelect.addEventListener("change", () => {
    if (presetSelect.value === "") return;
    const preset = table.presets[Number(presetSelect.value)];
    editing = { preset };
    redraw();
  });

  const form = editing === null ? null : statForm(fields, table, editing === "new" ? {} : typeof editing === "number" ? lineup[editing] : editing.preset,
    async (values) => {
      const next = lineup.slice();
      if (typeof editing === "number") next[editing] = { ...next[editing], ...values };
      else {
        const presetSide = editing && editing.preset && table.forms.sides.includes(editing.preset.side) ? editing.preset.side : null;
        const side = presetSide || table.forms.sides[Math.min(next.length, table.forms.sides.length - 1)];
        next.push({ controller: "gm", side, ...values, id: freeId(next) });
      }
      const ack = await saveLineup(next);
      if (ack.ok) { editing = null; redraw(); }
    },
    () => { editing = null; redraw(); });

  // what the GM has typed in the open form outlives the redraw an update brings (a player joining, a
  // lineup echo): the same form is built again with the typed values and the focus put back
  const before = root.querySelector("form.stat-form[data-testid=stat-form]");
  if (form && before && before.__editing === editing) keepTyped(before, form);
  if (form) form.__editing = editing;

  const state = ctx.conn ? ctx.conn.state : {};
  const running = !!(state && state.view && state.status !== "ended");
  const canStart = lineup.length >= (table.forms ? table.forms.min_combatants : 2);
  replace(root,
    h("h2", {}, "Lineup"),
    !running ? h("div", { class: "button-row start-row" },
      button(state && state.view ? "Start a new battle" : "Start battle", startBattle,
        { class: "big primary", disabled: !canStart, dataset: { testid: "start-battle" } }),
      canStart ? null : h("span", { class: "muted" }, `At least ${table.forms ? table.forms.min_combatants : 2} combatants.`)) : null,
    running ? h("p", { class: "muted" }, "A battle is running: changes here count from the next start or restart.") : null,
    h("ol", { class: "lineup", dataset: { testid: "lineup" } }, rows),
    form || h("div", { class: "button-row" },
      button("Add combatant", () => { editing = "new"; redraw(); }, { dataset: { testid: "add-combatant" } }),
      presetSelect),
  );
}

export function renderOptions(root, table, ctx) {
  const emit = async (event, payload) => {
    const ack = await ctx.conn.emit(event, payload);
    if (!ack.ok) ctx.notice(ack.error); else ctx.notice("Options saved.", "ok");
    return ack;
  };
  if (!(table.forms.options || []).length) {
    replace(root, h("h2", {}, "Options"), h("p", { class: "muted" }, "This rule system has no options to set."));
    return;
  }
  // keep what the GM is typing when another update arrives
  if (root.contains(document.activeElement) && root.querySelector("form")) return;
  const before = root.querySelector("form.options-form");
  const form = optionsForm(table, async (options) => {
    const ack = await emit("options_set", { options });
    // saved: the table's options are what the form sent (a field changed again meanwhile stays changed)
    const current = root.querySelector("form.options-form");
    if (ack.ok && current) {
      for (const f of table.forms.options) if (readField(f, current) === options[f.name]) current.__changed.delete(f.name);
    }
    return ack;
  });
  // a field the GM changed and has not saved yet keeps its value when an update draws the form
  // again (a player joining, a lineup edit's echo): the other fields show the table's options
  if (before) carryChanged(before, form);
  replace(root, form);
}

/** The fields of ``from`` the GM changed since it was drawn, with their values, into ``to``. */
function carryChanged(from, to) {
  for (const name of copyFields(from, to, from.__changed || [])) to.__changed.add(name);
}

export function renderRosters(root, table, ctx) {
  const emit = async (event, payload) => {
    const ack = await ctx.conn.emit(event, payload);
    if (!ack.ok) ctx.notice(ack.error);
    return ack;
  };
  const typed = root.querySelector("[data-testid=roster-name]");
  const rosterName = h("input", { placeholder: "Roster name", maxlength: 80, "aria-label": "Roster name", dataset: { testid: "roster-name" } });
  if (typed) rosterName.value = typed.value;
  const rosters = table.rosters || [];
  replace(root,
    h("h2", {}, "Rosters"),
    h("p", { class: "muted" }, "Save the lineup to load it at another table of yours."),
    h("div", { class: "button-row" }, rosterName,
      button("Save lineup as roster", () => emit("roster_save", { name: rosterName.value }), { dataset: { testid: "roster-save" } })),
    rosters.length ? h("ul", { class: "rosters" }, rosters.map((r) => h("li", {},
      h("span", {}, `${r.name} (${r.size} ${r.size === 1 ? "combatant" : "combatants"})`),
      button("Load", () => emit("roster_load", { roster_id: r.id }), { dataset: { testid: `roster-load-${r.id}` }, "aria-label": `Load ${r.name}` }),
      button("Add", () => emit("roster_load", { roster_id: r.id, append: true }), { "aria-label": `Add ${r.name} to the lineup` }),
      button("Delete", () => { if (confirm(`Delete roster ${r.name}?`)) emit("roster_delete", { roster_id: r.id }); }, { class: "danger", "aria-label": `Delete ${r.name}` }),
    ))) : h("p", { class: "muted" }, "No saved rosters yet."),
  );
}

function freeId(lineup) {
  const taken = new Set(lineup.map((e) => e.id));
  let i = lineup.length + 1;
  while (taken.has(`c${i}`)) i += 1;
  return `c${i}`;
}

function fieldInput(field, value) {
  const v = value === undefined ? field.default : value;
  if (field.kind === "bool") return h("input", { type: "checkbox", name: field.name, checked: !!v });
  if (field.kind === "choice") return select(field.choices, v, { name: field.name });
  if (field.kind === "int") return h("input", { type: "number", name: field.name, value: v, min: field.min ?? undefined, max: field.max ?? undefined, inputmode: "numeric" });
  return h("input", { type: "text", name: field.name, value: v ?? "", maxlength: field.max || 60 });
}

function readField(field, form) {
  const input = form.elements.namedItem(field.name);
  if (field.kind === "bool") return input.checked;
  if (field.kind === "int") return input.value === "" ? null : Number(input.value);
  return input.value;
}

function groupFields(fields) {
  const groups = new Map();
  for (const f of fields) {
    const key = f.group || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(f);
  }
  return groups;
}

/** The values of the fields ``names`` of form ``from`` into the same fields of ``to``; the names copied. */
function copyFields(from, to, names) {
  const copied = [];
  for (const name of names) {
    const old = from.elements.namedItem(name);
    const now = to.elements.namedItem(name);
    if (!old || !now || now.type !== old.type) continue;
    if (old.type === "checkbox") now.checked = old.checked;
    else now.value = old.value;
    copied.push(name);
  }
  return copied;
}

function keepTyped(from, to) {
  const focused = from.contains(document.activeElement) ? document.activeElement.name : null;
  copyFields(from, to, [...from.elements].map((el) => el.name).filter(Boolean));
  if (focused) queueMicrotask(() => { const el = to.elements.namedItem(focused); if (el && el.focus) el.focus(); });
}

function statForm(fields, table, initial, onSave, onCancel) {
  const form = h("form", { class: "stat-form", dataset: { testid: "stat-form" } });
  const name = h("input", { name: "name", required: true, maxlength: 40, value: initial.name || "", dataset: { testid: "stat-name" } });
  const blocks = [];
  for (const [group, list] of groupFields(fields)) {
    blocks.push(h("fieldset", {}, group ? h("legend", {}, group) : null,
      list.map((f) => h("label", { title: f.help || "" }, h("span", {}, f.label), fieldInput(f, initial[f.name])))));
  }
  form.append(h("label", {}, h("span", {}, "Name"), name), ...blocks,
    h("div", { class: "button-row" }, h("button", { type: "submit", class: "primary", dataset: { testid: "stat-save" } }, "Save combatant"), button("Cancel", onCancel)));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const values = { name: name.value };
    for (const f of fields) values[f.name] = readField(f, form);
    onSave(values);
  });
  return form;
}

function optionsForm(table, onSave) {
  const fields = table.forms.options;
  const form = h("form", { class: "stat-form options-form" },
    h("h2", {}, "Options"),
    fields.map((f) => h("label", { title: f.help || "" }, h("span", {}, f.label), fieldInput(f, table.options[f.name]))),
    fields.some((f) => f.help) ? h("ul", { class: "option-help" }, fields.filter((f) => f.help).map((f) => h("li", {}, h("strong", {}, f.label), `: ${f.help}`))) : null,
    h("button", { type: "submit", dataset: { testid: "options-save" } }, "Save options"));
  // the fields the GM changed since the form was drawn (see carryChanged)
  form.__changed = new Set();
  const changed = (ev) => { if (ev.target.name) form.__changed.add(ev.target.name); };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const values = {};
    for (const f of fields) values[f.name] = readField(f, form);
    onSave(values);
  });
  return form;
}
