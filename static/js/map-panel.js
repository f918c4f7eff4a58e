// The GM console's Map tab (grid systems): a map image under the grid, its alignment with a live
// preview, blocked squares painted on the grid, and each token's colour and portrait.
//
// renderMapPanel(root, table, ctx): `table` is the GM's table payload (its `board`, `lineup`, `options`,
// `slug`), `ctx` page.js's ctxBase(). Uploads go to POST /t/<slug>/images (the GM's cookie plus the
// GM key the page carries); everything else is the GM's `board_set` socket event. The server checks
// every value and the rules enforce blocked squares: this panel only collects what the GM wants.

import { h, replace } from "./ui.js";
import { renderGrid } from "./grid.js";

const MAX_BYTES = 10 * 1024 * 1024;
const TYPES = ["image/png", "image/jpeg", "image/webp"];

// what the GM is editing, kept across re-renders (a table event redraws the panel)
const draft = { slug: null, align: null, blocked: null, painting: false, status: "", error: false };

function gridSize(table) {
  const o = table.options || {};
  return {
    width: o.width || o.grid_width || 20,
    height: o.height || o.grid_height || 12,
  };
}

function keyOfMap(map) {
  return map ? `${map.url}` : "";
}

function battleView(ctx) {
  const view = ctx && ctx.conn && ctx.conn.state ? ctx.conn.state.view : null;
  return view && view.status !== "ended" ? view : null;
}

function previewTokens(table, ctx) {
  const looks = (table.board && table.board.tokens) || {};
  const view = battleView(ctx);
  const source = view && Array.isArray(view.combatants) ? view.combatants : table.lineup || [];
  return source
    .filter((c) => Number.isInteger(c.x) && Number.isInteger(c.y) && c.x >= 0 && c.y >= 0)
    .map((c) => ({
      id: c.id, x: c.x, y: c.y, name: c.name, side: c.side,
      colour: (looks[c.id] && looks[c.id].colour) || null,
      portrait: (looks[c.id] && looks[c.id].portrait) || null,
    }));
}

async function upload(table, file) {
  if (!file) return null;
  if (!TYPES.includes(file.type)) throw new Error("Choose a PNG, JPEG or WebP image.");
  if (file.size > MAX_BYTES) throw new Error("That image is larger than 10 MB.");
  const response = await fetch(`/t/${encodeURIComponent(table.slug)}/images`, {
    method: "POST",
    body: file,
    credentials: "same-origin",
    headers: {
      "Content-Type": file.type,
      "X-Battleboard-Key": document.body.dataset.token || "",
      "X-CSRFToken": document.body.dataset.csrf || "",
    },
  });
  let reply = null;
  try { reply = await response.json(); } catch (err) { reply = null; }
  if (!response.ok || !reply || !reply.ok) {
    throw new Error((reply && reply.error) || `The upload failed (${response.status}).`);
  }
  return reply.image;
}

function say(root, text, error = false) {
  draft.status = text;
  draft.error = error;
  const el = root.querySelector("[data-testid='map-status']");
  if (el) {
    el.textContent = text;
    el.classList.toggle("error", error);
  }
}

function ensureStyles() {
  if (document.querySelector("link[data-map-panel]")) return;
  const base = document.body.dataset.static || "/static/";
  document.head.append(h("link", { rel: "stylesheet", href: `${base}css/map-panel.css`, dataset: { mapPanel: "1" } }));
}

export function renderMapPanel(root, table, ctx) {
  ensureStyles();
  if (draft.slug !== table.slug) {
    Object.assign(draft, { slug: table.slug, align: null, blocked: null, painting: false, status: "", error: false });
  }
  const board = table.board || { map: null, tokens: {}, blocked: [] };
  const map = board.map;
  const { width, height } = gridSize(table);
  const view = battleView(ctx);
  const serverBlocked = (view && Array.isArray(view.blocked) ? view.blocked : board.blocked) || [];
  if (!draft.align || draft.align.key !== keyOfMap(map) || !draft.align.dirty) {
    draft.align = map
      ? { key: keyOfMap(map), squares: map.squares_across, ox: map.offset_x, oy: map.offset_y, dirty: false }
      : { key: "", squares: 20, ox: 0, oy: 0, dirty: false };
  }
  if (!draft.blocked || !draft.blocked.dirty) {
    draft.blocked = { squares: new Set(serverBlocked.map(([x, y]) => `${x},${y}`)), dirty: false };
  }

  const preview = h("div", { class: "map-preview", dataset: { testid: "map-preview" } });
  const previewMap = () => (map ? {
    ...map, squares_across: draft.align.squares, offset_x: draft.align.ox, offset_y: draft.align.oy,
  } : null);
  const drawPreview = () => {
    const blocked = [...draft.blocked.squares].map((k) => k.split(",").map(Number));
    renderGrid(preview, {
      width, height, cell: 40, map: previewMap(), blocked, tokens: previewTokens(table, ctx), names: true,
      highlights: [],
      onCellClick: (x, y) => {
        if (!draft.painting) return;
        const key = `${x},${y}`;
        if (draft.blocked.squares.has(key)) draft.blocked.squares.delete(key);
        else draft.blocked.squares.add(key);
        draft.blocked.dirty = true;
        drawPreview();
        refreshBlockedButtons();
      },
    });
    // the board's test hooks belong to the board: the preview's tokens go by their own
    for (const el of preview.querySelectorAll("[data-testid^='token']")) {
      el.dataset.testid = `preview-${el.dataset.testid}`;
    }
  };

  // --- the map image ----------------------------------------------------------------------
  const fileInput = h("input", {
    type: "file", accept: TYPES.join(","), id: "map-file", dataset: { testid: "map-file" },
    onchange: async () => {
      const file = fileInput.files && fileInput.files[0];
      if (!file) return;
      say(root, "Uploading…");
      try {
        const image = await upload(table, file);
        const ack = await ctx.command("board_set", { map: { image: image.sha256 } });
        if (ack && ack.ok) {
          say(root, `Map uploaded: ${image.width} × ${image.height} pixels. Now line its grid up with the board's.`);
        } else {
          say(root, (ack && ack.error) || "The map was not set.", true);
        }
      } catch (err) {
        say(root, err.message, true);
      }
      fileInput.value = "";
    },
  });
  const imageSection = h("section", { class: "map-section", dataset: { testid: "map-image" } },
    h("h3", {}, "Map image"),
    map
      ? h("p", {}, `The board shows a map of ${map.width} × ${map.height} pixels under the grid.`)
      : h("p", { class: "muted" }, "No map yet: the grid shows on its plain background."),
    h("label", { for: "map-file", class: "file-label" }, map ? "Replace the map (PNG, JPEG or WebP, up to 10 MB)" : "Upload a map (PNG, JPEG or WebP, up to 10 MB)"),
    fileInput,
    map ? h("div", { class: "button-row" },
      h("button", {
        type: "button", class: "danger", dataset: { testid: "map-remove" },
        onclick: async () => {
          const ack = await ctx.command("board_set", { map: null });
          if (ack && ack.ok) say(root, "The map is removed.");
        },
      }, "Remove the map")) : null);

  // --- alignment ----------------------------------------------------------------------------
  const number = (label, key, testid, attrs) => {
    const input = h("input", {
      type: "number", value: String(draft.align[key]), dataset: { testid }, ...attrs,
      oninput: () => {
        const v = Number(input.value);
        if (input.value === "" || !Number.isFinite(v)) return;
        draft.align[key] = key === "squares" ? Math.round(v) : v;
        draft.align.dirty = true;
        drawPreview();
      },
    });
    return h("label", {}, label, input);
  };
  const alignSection = map ? h("section", { class: "map-section", dataset: { testid: "map-align" } },
    h("h3", {}, "Line the map up with the grid"),
    h("p", { class: "muted" },
      "Count the squares drawn across the whole map for “squares across”. The offsets say where the map's first grid " +
      "lines cross, in the image's pixels; the preview follows as you type."),
    h("div", { class: "stat-form map-align-form" },
      number("Squares across the map", "squares", "map-squares", { min: 1, max: 200, step: 1 }),
      number("Offset x (pixels)", "ox", "map-offset-x", { min: -map.width, max: map.width, step: 1 }),
      number("Offset y (pixels)", "oy", "map-offset-y", { min: -map.height, max: map.height, step: 1 })),
    h("div", { class: "button-row" },
      h("button", {
        type: "button", class: "primary", dataset: { testid: "map-align-save" },
        onclick: async () => {
          const ack = await ctx.command("board_set", {
            map: { squares_across: draft.align.squares, offset_x: draft.align.ox, offset_y: draft.align.oy },
          });
          if (ack && ack.ok) {
            draft.align.dirty = false;
            say(root, "The map is lined up; every screen shows it so.");
          }
        },
      }, "Save the alignment"),
      h("button", {
        type: "button", dataset: { testid: "map-align-reset" },
        onclick: () => { draft.align = null; renderMapPanel(root, table, ctx); },
      }, "Undo changes"))) : null;

  // --- blocked squares ------------------------------------------------------------------------
  const paintButton = h("button", {
    type: "button", "aria-pressed": draft.painting ? "true" : "false", dataset: { testid: "map-paint" },
    onclick: () => {
      draft.painting = !draft.painting;
      paintButton.setAttribute("aria-pressed", draft.painting ? "true" : "false");
      paintButton.textContent = draft.painting ? "Stop marking squares" : "Mark blocked squares";
      preview.classList.toggle("painting", draft.painting);
    },
  }, draft.painting ? "Stop marking squares" : "Mark blocked squares");
  const saveBlocked = h("button", {
    type: "button", class: "primary", dataset: { testid: "map-blocked-save" },
    onclick: async () => {
      const blocked = [...draft.blocked.squares].map((k) => k.split(",").map(Number));
      const ack = await ctx.command("board_set", { blocked });
      if (ack && ack.ok) {
        draft.blocked.dirty = false;
        say(root, `${blocked.length} blocked square${blocked.length === 1 ? "" : "s"} saved${view ? " — the battle uses them now" : ""}.`);
        refreshBlockedButtons();
      } else if (ack) {
        say(root, ack.error || "The blocked squares were not saved.", true);
      }
    },
  }, "Save blocked squares");
  const clearBlocked = h("button", {
    type: "button", dataset: { testid: "map-blocked-clear" },
    onclick: () => {
      draft.blocked.squares.clear();
      draft.blocked.dirty = true;
      drawPreview();
      refreshBlockedButtons();
    },
  }, "Clear all");
  const blockedCount = h("p", { class: "muted", dataset: { testid: "map-blocked-count" } });
  function refreshBlockedButtons() {
    const n = draft.blocked.squares.size;
    blockedCount.textContent = `${n} blocked square${n === 1 ? "" : "s"}${draft.blocked.dirty ? " (not saved yet)" : ""}.`;
    saveBlocked.disabled = !draft.blocked.dirty;
  }
  const blockedSection = h("section", { class: "map-section", dataset: { testid: "map-blocked" } },
    h("h3", {}, "Blocked squares"),
    h("p", { class: "muted" },
      "Walls, pillars, pits: no token moves into or through a blocked square, and reach and charges go around them. " +
      "Switch marking on, tap squares on the preview, then save." + (view ? " The battle running now takes them at once." : "")),
    h("div", { class: "button-row" }, paintButton, saveBlocked, clearBlocked),
    blockedCount);

  // --- tokens ---------------------------------------------------------------------------------
  const looks = board.tokens || {};
  const combatants = (view && Array.isArray(view.combatants) ? view.combatants : table.lineup || [])
    .filter((c) => c && c.id);
  const tokenRows = combatants.map((c) => {
    const look = looks[c.id] || {};
    const colour = h("input", {
      type: "color", value: look.colour || "#888888", "aria-label": `Token colour of ${c.name}`,
      dataset: { testid: `token-colour-${c.id}` },
      onchange: async () => {
        const ack = await ctx.command("board_set", { tokens: { [c.id]: { colour: colour.value } } });
        if (ack && ack.ok) say(root, `${c.name}'s token is now ${colour.value}.`);
      },
    });
    const portrait = h("input", {
      type: "file", accept: TYPES.join(","), "aria-label": `Portrait of ${c.name}`,
      dataset: { testid: `token-portrait-${c.id}` },
      onchange: async () => {
        const file = portrait.files && portrait.files[0];
        if (!file) return;
        say(root, "Uploading…");
        try {
          const image = await upload(table, file);
          const ack = await ctx.command("board_set", { tokens: { [c.id]: { portrait: image.sha256 } } });
          if (ack && ack.ok) say(root, `${c.name} has a portrait now.`);
        } catch (err) {
          say(root, err.message, true);
        }
        portrait.value = "";
      },
    });
    return h("li", { class: "token-look", dataset: { testid: `token-look-${c.id}` } },
      h("span", { class: "token-look-name" }, `${c.name} (side ${c.side})`),
      look.portrait ? h("img", { src: look.portrait, alt: `portrait of ${c.name}`, width: 40, height: 40, class: "token-look-portrait" }) : null,
      h("label", {}, "Colour ", colour),
      h("label", {}, "Portrait ", portrait),
      look.colour || look.portrait ? h("button", {
        type: "button", class: "link-button", dataset: { testid: `token-reset-${c.id}` },
        onclick: async () => { await ctx.command("board_set", { tokens: { [c.id]: null } }); },
      }, "Side colour, no portrait") : null);
  });
  const tokenSection = h("section", { class: "map-section", dataset: { testid: "map-tokens" } },
    h("h3", {}, "Tokens"),
    tokenRows.length
      ? h("ul", { class: "token-looks" }, tokenRows)
      : h("p", { class: "muted" }, "Add combatants to the lineup to give their tokens a colour or a portrait."),
    h("p", { class: "muted" }, "The side's letter and shape stay on every token, so no one has to tell colours apart."));

  const status = h("p", { class: `map-status${draft.error ? " error" : ""}`, role: "status", "aria-live": "polite", dataset: { testid: "map-status" } }, draft.status);
  replace(root,
    h("div", { class: "map-panel", dataset: { testid: "map-panel" } },
      status, imageSection,
      h("section", { class: "map-section" }, h("h3", {}, "Preview"), preview),
      alignSection, blockedSection, tokenSection));
  preview.classList.toggle("painting", draft.painting);
  drawPreview();
  refreshBlockedButtons();
}
