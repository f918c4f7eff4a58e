// The connection to the server: versions, catching up, reconnecting, and sending intentions.
// The client applies an update only if its prev_v equals the version it holds; on any gap it syncs.
// The server's heartbeat says where the battle and the table stand in its database: a page that
// missed an update (the message queue between the server's processes down, a process killed before
// it broadcast) catches up within seconds, with nobody doing anything.

export function connect({ table, token, onTable, onBattle, onStatus, onError }) {
  // clockOffset: this device's clock minus the server's, in seconds (null until the first sync
  // says): a clock that runs on the page (AD&D's declaration clock) counts in the server's time;
  // undone: the versions the server says an undo took back (every log strikes their lines through);
  // undo: for the GM, the step an undo would take back now ({v, name, lines}, or null)
  // revision: the table payload's revision this page holds; revisionFloor: the highest revision the
  // server named (a payload or the answer to this page's own change of the table): an older table
  // payload (a sync answered late, two broadcasts crossing) is not drawn over a newer one
  const state = { battleId: null, v: 0, events: [], view: null, system: null, stamp: null, clockOffset: null, yours: [], seatsPlaying: null,
    undone: new Set(), undo: null, revision: -1, revisionFloor: -1 };
  // eslint-disable-next-line no-undef
  const socket = io({ auth: { table, token: token || null }, transports: ["websocket", "polling"], reconnectionDelayMax: 3000 });

  function emit(event, payload, timeout = 15000) {
    return new Promise((resolve) => {
      if (!socket.connected) {
        resolve({ ok: false, error: "Not connected — reconnecting to the board…", code: "offline" });
        return;
      }
      socket.timeout(timeout).emit(event, payload, (err, ack) => {
        if (err) resolve({ ok: false, error: "The server did not answer in time.", code: "timeout" });
        else {
          if (ack && typeof ack.revision === "number") state.revisionFloor = Math.max(state.revisionFloor, ack.revision);
          resolve(ack || { ok: false, error: "No answer" });
        }
      });
    });
  }

  // returns what onBattle returns (a page's drawing may be a promise: it loads its system's module)
  function acceptBattle(battle, replaceEvents) {
    if (!battle) {
      state.battleId = null; state.v = 0; state.events = []; state.view = null; state.undone = new Set(); state.undo = null;
      return onBattle(state, []);
    }
    const fresh = battle.events.filter((e) => e.v > state.v || replaceEvents);
    if (replaceEvents) { state.events = battle.events.slice(); state.undone = new Set(); }
    else state.events.push(...fresh);
    for (const v of battle.undone || []) state.undone.add(v);
    if ("undo" in battle) state.undo = battle.undo;
    if (state.events.length > 400) state.events = state.events.slice(-400);
    state.battleId = battle.battle_id;
    state.v = battle.v;
    state.view = battle.view;
    state.system = battle.system;
    state.status = battle.status;
    state.yours = battle.yours || []; // (a player's) the combatants the GM gave this seat
    state.seatsPlaying = battle.seats_playing || null; // (the GM's) the seats that play a combatant
    return onBattle(state, fresh);
  }

  let fogSeen = null; // the fog of the last table: when it changes, what stands in it may show or hide
  function takeTable(table) {
    const revision = table && typeof table.revision === "number" ? table.revision : null;
    if (revision !== null && revision < Math.max(state.revision, state.revisionFloor)) return false; // older than what it has
    if (revision !== null) state.revision = revision;
    state.stamp = table ? table.stamp : null; // what the heartbeat compares with
    const fog = JSON.stringify((table && table.board && table.board.fog) || []);
    const fogChanged = fogSeen !== null && fog !== fogSeen;
    fogSeen = fog;
    onTable(table);
    return fogChanged;
  }

  async function sync() {
    const known = state.battleId;
    const sent = Date.now();
    const ack = await emit("sync", { battle_id: known, since_v: state.v });
    if (!ack.ok) { onError(ack.error); return; }
    // the server read its clock about halfway through the round trip
    if (typeof ack.server_now === "number") state.clockOffset = (sent + Date.now()) / 2000 - ack.server_now;
    takeTable(ack.table);
    const battle = ack.battle;
    await acceptBattle(battle, !battle || battle.battle_id !== known || battle.since_v === 0);
    if (ack.chances) for (const take of socket.listeners("chances")) take(ack.chances); // who's winning (chances.js)
  }

  // "live" once connected, caught up and drawn: a page that says live shows the table as it is (a
  // GM typing into a form the first sync then draws again would lose what was typed)
  socket.on("connect", async () => {
    state.revision = -1; state.revisionFloor = -1; // (a new connection: nothing older is on its way)
    try { await sync(); } finally { if (socket.connected) onStatus("live"); }
  });
  socket.on("disconnect", () => onStatus("reconnecting"));
  socket.on("connect_error", (err) => {
    // A refusal by the server (unknown table, a key that is not valid here) is final; a network error is retried.
    if (!socket.active) { onStatus("refused", err && err.message); onError(`The board refused this page: ${err && err.message}`); }
    else onStatus("reconnecting", err && err.message);
  });
  // When the phone's network comes back, try at once rather than when the back-off timer says (up to
  // reconnectionDelayMax later). Losing it needs nothing here: the Socket.IO client closes its
  // connection on the browser's "offline" event itself, and unanswered pings catch a silent drop.
  window.addEventListener("online", () => {
    if (!socket.connected) socket.disconnect().connect();
  });
  socket.on("table", (payload) => {
    const fogChanged = takeTable(payload);
    // (a player's or the TV's battle payload leaves out what stands on fog: fetched again under the new
    // fog, and drawn again with it; the GM's board is drawn again with the new fog too)
    if (payload.battle_id !== state.battleId || (fogChanged && state.battleId !== null)) sync();
  });
  let catchingUp = null; // one sync at a time for the heartbeat
  socket.on("heartbeat", (beat) => {
    const behind = beat.battle_id !== state.battleId || (beat.v != null && beat.v > state.v) || beat.stamp !== state.stamp;
    if (!behind || catchingUp) return;
    catchingUp = sync().finally(() => { catchingUp = null; });
  });
  socket.on("update", (update) => {
    if (update.battle_id !== state.battleId) {
      // A new battle's first version carries its whole view and every event so far: take it as it
      // is (a restart then costs no round trip); anything else of another battle means a sync.
      if (update.prev_v === 0) acceptBattle(update, true);
      else sync();
      return;
    }
    if (update.v <= state.v) return; // already have it
    if (update.prev_v !== state.v) { sync(); return; }
    acceptBattle(update, false);
  });
  socket.on("error", (payload) => { if (payload && payload.error) onError(payload.error); });
  // the GM link this console was opened with was replaced: it stops, and says so (the server has
  // closed its connection; reconnecting with the old key would be refused)
  socket.on("gm_key_replaced", (payload) => {
    socket.disconnect();
    onStatus("refused", (payload && payload.message) || "the GM link was replaced");
  });

  function newMsgId() {
    return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  }

  return {
    state,
    socket,
    emit,
    sync,
    declare(declaration) {
      return emit("declare", { battle_id: state.battleId, expected_v: state.v, declaration, msg_id: newMsgId() });
    },
    command(event, payload = {}) {
      return emit(event, { battle_id: state.battleId, expected_v: state.v, ...payload });
    },
  };
}
