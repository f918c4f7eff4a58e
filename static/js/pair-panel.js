// The GM console's table-display panel (shown in its Join tab): the "Open on the TV" link, pairing a
// screen by the code it shows, the screens paired with this table (each with Unpair), and the
// "Show the join code on the TV" switch. The server decides everything (GM-only socket events
// display_pair, display_unpair, display_set); this only sends the GM's intent and shows the answer.
import { h, replace } from "./ui.js";
import { chanceSwitches } from "./chances.js";

const CODE_LENGTH = 6;

function when(iso) {
  if (!iso) return "";
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? "" : at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

async function ask(ctx, event, payload) {
  const ack = await ctx.conn.emit(event, payload);
  if (!ack.ok && ctx.notice) ctx.notice(ack.error || "That was not accepted.");
  return ack;
}

/**
 * renderPairPanel(root, table, ctx): `table` is the GM's table payload (slug, display, screens),
 * `ctx` page.js's ctxBase() (conn, notice). Safe to call again on every table payload: a code being
 * typed is kept.
 */
export function renderPairPanel(root, table, ctx) {
  const typing = root.querySelector("[data-testid='pair-code-input']");
  const typed = typing ? typing.value : "";
  const hadFocus = typing && document.activeElement === typing;
  const display = table.display || { show_join: false, show_odds: false };
  const screens = table.screens || [];
  const displayUrl = `/t/${encodeURIComponent(table.slug)}/display`;
  const screenUrl = `${window.location.origin}/screen`;

  const input = h("input", {
    id: "pair-code", name: "code", value: typed, maxlength: 12, autocomplete: "off", autocapitalize: "characters",
    spellcheck: "false", inputmode: "text", placeholder: "e.g. KXM 4P7", "aria-describedby": "pair-code-help",
    dataset: { testid: "pair-code-input" },
  });
  const form = h("form", {
    class: "pair-form button-row", dataset: { testid: "pair-form" },
    onsubmit: async (event) => {
      event.preventDefault();
      const code = input.value.trim();
      if (!code) { input.focus(); return; }
      const button = form.querySelector("button");
      button.disabled = true;
      const ack = await ask(ctx, "display_pair", { code });
      button.disabled = false;
      if (ack.ok) {
        input.value = "";
        if (ctx.notice) ctx.notice(`Paired: ${ack.screen.label} now shows this table.`, "ok");
      }
    },
  },
  h("label", { for: "pair-code" }, "Pairing code on the TV"),
  input,
  h("button", { type: "submit", class: "primary", dataset: { testid: "pair-submit" } }, "Pair screen"));

  const list = screens.length
    ? h("ul", { class: "pair-screens", dataset: { testid: "paired-screens" } }, screens.map((screen) => h("li", {
      class: "pair-screen", dataset: { testid: "paired-screen", screen: screen.id },
    },
    h("span", { class: "pair-screen-label" }, screen.label),
    screen.paired_at ? h("span", { class: "muted" }, ` paired at ${when(screen.paired_at)} `) : null,
    h("button", {
      type: "button", class: "danger", "aria-label": `Unpair ${screen.label}`, dataset: { testid: "unpair-screen" },
      onclick: async (event) => {
        event.currentTarget.disabled = true;
        const ack = await ask(ctx, "display_unpair", { screen: screen.id });
        if (ack.ok && ctx.notice) ctx.notice(`${screen.label} is unpaired: it shows a new pairing code.`, "ok");
      },
    }, "Unpair"))))
    : h("p", { class: "muted", dataset: { testid: "no-paired-screens" } }, "No screen is paired with this table yet.");

  const showing = display.show_join === true;
  const joinSwitch = h("button", {
    type: "button", class: "pair-join-toggle", "aria-pressed": showing ? "true" : "false", dataset: { testid: "show-join-toggle" },
    onclick: async (event) => {
      const button = event.currentTarget;
      button.disabled = true;
      const ack = await ask(ctx, "display_set", { show_join: !showing });
      button.disabled = false;
      if (ack.ok) button.setAttribute("aria-pressed", ack.display.show_join ? "true" : "false");
    },
  }, "Show the join code on the TV");
  const oddsOn = display.show_odds === true;
  const oddsSwitch = h("button", {
    type: "button", class: "pair-join-toggle", "aria-pressed": oddsOn ? "true" : "false", dataset: { testid: "show-odds-toggle" },
    onclick: async (event) => {
      const button = event.currentTarget;
      button.disabled = true;
      const ack = await ask(ctx, "display_set", { show_odds: !oddsOn });
      button.disabled = false;
      if (ack.ok) button.setAttribute("aria-pressed", ack.display.show_odds ? "true" : "false");
    },
  }, "Show the odds on the TV");

  replace(root,
    h("section", { class: "pair-panel", dataset: { testid: "pair-panel" }, "aria-labelledby": "pair-panel-title" },
      h("h3", { id: "pair-panel-title" }, "Table display"),
      h("p", { class: "button-row" },
        h("a", { class: "tv-link", href: displayUrl, target: "_blank", rel: "noopener", dataset: { testid: "open-on-tv" } }, "Open on the TV"),
        h("span", { class: "muted" }, " the board for everyone: public, no controls.")),
      h("p", { id: "pair-code-help", class: "muted" },
        "No typing on the TV: open ", h("strong", {}, screenUrl), " there (or the front page and ",
        "“Use this screen as a table display”), then type the ", String(CODE_LENGTH),
        "-letter code it shows, or scan its QR code with this phone."),
      form,
      list,
      h("p", { class: "pair-join-switch button-row" },
        joinSwitch,
        h("span", { class: "muted" }, showing ? "On: the TV shows the join code and QR." : "Off: the TV shows the join code only until the battle starts.")),
      h("p", { class: "pair-join-switch button-row" },
        oddsSwitch,
        h("span", { class: "muted" }, oddsOn ? "On: the TV shows the odds of the choices (spectators may ask for them too)." : "Off: only each player (for their own) and you see the odds.")),
      ...chanceSwitches(display, (event, payload) => ask(ctx, event, payload))));
  if (hadFocus) input.focus();
}

export default renderPairPanel;
