// The dice roller for anything (issue 36), on the GM console and every phone: a roll typed in the
// usual notation (2d6+3, d100, 4d6kh3, 3d8 + 1d6) or picked from this page's recent ones, with an
// optional label ("perception check"); the GM can roll in secret. The server reads the notation, rolls
// and answers (rules/roller.py): this page only sends what was typed and shows what comes back.
//
// In a running battle the roll is a command of the battle's log (its dice come from the battle's
// committed seed), and it arrives like every event: in the log and the dice tray of every page. Between
// battles it rolls the table's own dice, committed to before each roll (webapp/table_dice.py): the
// page asks for the commitment first, keeps it, and the roll's answer reveals the seed; such rolls
// reach the pages as `table_roll` messages, which this module writes into the log and the tray.
//
//   mountRoller({conn, role, slug, notice, kit, ui})

const RECENT = 6;
const EXAMPLES = ["d20", "2d6+3", "4d6kh3", "d100"];

export function mountRoller({ conn, role, slug, seat, notice, kit, ui }) {
  const { h, replace } = ui;
  const logCard = document.querySelector(".log-card");
  if (!logCard || document.getElementById("roller")) return;
  ensureStyles(h);
  const key = `battleboard:recent-rolls:${slug}:${seat || role}`;
  const recent = () => { try { return JSON.parse(localStorage.getItem(key) || "[]").slice(0, RECENT); } catch { return []; } };
  const remember = (notation, label) => {
    const list = recent().filter((r) => !(r.notation === notation && r.label === label));
    list.unshift({ notation, label });
    try { localStorage.setItem(key, JSON.stringify(list.slice(0, RECENT))); } catch { /* private mode */ }
  };

  const notation = h("input", {
    type: "text", id: "roll-notation", name: "notation", maxlength: 60, required: true, placeholder: "2d6+3",
    autocomplete: "off", autocapitalize: "off", spellcheck: "false", enterkeyhint: "go",
    "aria-label": "Dice to roll", dataset: { testid: "roll-notation" },
  });
  const label = h("input", {
    type: "text", id: "roll-label", name: "label", maxlength: 60, placeholder: "what for? (optional)", autocomplete: "off",
    "aria-label": "What the roll is for", dataset: { testid: "roll-label" },
  });
  const secret = role === "gm"
    ? h("input", { type: "checkbox", id: "roll-secret", dataset: { testid: "roll-secret" } })
    : null;
  const button = h("button", { type: "submit", class: "roller-go primary", dataset: { testid: "roll-button" } }, "Roll");
  const picks = h("div", { class: "roller-recent", dataset: { testid: "roll-recent" }, "aria-label": "Recent rolls" });
  const said = h("p", { class: "roller-said", dataset: { testid: "roll-result" }, "aria-live": "polite" });
  const form = h("form", { class: "roller-form", dataset: { testid: "roller" } },
    h("div", { class: "roller-row" }, notation, button),
    label,
    secret ? h("label", { class: "roller-secret", for: "roll-secret" }, secret, " Roll in secret (only you see it)") : null,
    picks, said);
  const card = h("section", { class: "card roller-card", id: "roller", "aria-labelledby": "roller-heading" },
    h("h2", { id: "roller-heading" }, "Roll dice"), form);
  logCard.before(card);

  function drawPicks() {
    const list = recent();
    const shown = list.length ? list : EXAMPLES.map((n) => ({ notation: n, label: "" }));
    replace(picks, shown.map((r) => h("button", {
      type: "button", class: "roller-pick", dataset: { testid: "roll-pick" },
      onclick: () => { notation.value = r.notation; label.value = r.label || ""; notation.focus(); },
    }, r.label ? `${r.notation} · ${r.label}` : r.notation)));
  }
  drawPicks();

  let commit = null; // between battles: {commit_id, commitment} of this page's next roll
  const running = () => !!(conn.state.view && conn.state.status !== "ended");
  async function commitment() {
    if (commit) return commit;
    const ack = await conn.emit("roll_commit", {});
    if (!ack || !ack.ok) throw new Error((ack && ack.error) || "the board did not answer");
    commit = { commit_id: ack.commit_id, commitment: ack.commitment };
    return commit;
  }

  let busy = false;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (busy) return;
    busy = true;
    button.disabled = true;
    const payload = { notation: notation.value, label: label.value };
    if (secret && secret.checked) payload.secret = true;
    try {
      if (!running()) payload.commit_id = (await commitment()).commit_id;
      else payload.msg_id = `roll-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
      const ack = await conn.emit("roll", payload);
      if (!ack || !ack.ok) {
        if (ack && /commitment/.test(ack.error || "")) commit = null; // (a restarted server forgot it: ask again)
        notice((ack && ack.error) || "The roll did not go through.");
        replace(said, h("span", { class: "roller-error" }, (ack && ack.error) || "The roll did not go through."));
        return;
      }
      if (payload.commit_id) commit = ack.next || null;
      remember(notation.value.trim(), label.value.trim());
      drawPicks();
      replace(said, ack.text || `Total ${ack.total}`);
      said.dataset.total = String(ack.total);
    } catch (err) {
      notice(String(err.message || err));
    } finally {
      busy = false;
      button.disabled = false;
    }
  });

  // between battles: the table's rolls, in the log and the tray of this page
  conn.socket.on("table_roll", (roll) => showTableRoll(roll, { h, replace, kit }));
}

function showTableRoll(roll, { h, replace, kit }) {
  const log = document.getElementById("log");
  const latest = document.getElementById("log-latest");
  const tray = document.getElementById("dice");
  if (log) log.prepend(h("li", { class: "log-dice", dataset: { type: "table.rolled" } }, roll.text));
  if (latest) latest.textContent = roll.text;
  if (tray && roll.rolls && roll.rolls.length) replace(tray, kit.dice(roll.rolls, { fresh: true, max: 24 }));
}

let styled = false;
function ensureStyles(h) {
  if (styled) return;
  styled = true;
  const href = new URL("../css/table-tools.css", import.meta.url).href;
  if (![...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) document.head.append(h("link", { rel: "stylesheet", href }));
}
