// A player's phone adds its own random seed to the battle's dice (issue 18): once per battle, as soon
// as the phone holds a running battle. The server mixes every seed it receives into the dice of every
// later command and logs it publicly, so the seed the board committed to at the start can no longer
// steer the dice against seeds it did not know. The page decides nothing: it only sends randomness.

const sent = new Set();

function clientSeed() {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function storageKey(battleId) {
  return `battleboard-entropy-${location.pathname.split("/")[2] || ""}-${battleId}`;
}

// conn: the page's connection (connection.js); state: its battle state ({battleId, status, view}).
export async function offerEntropy(conn, state) {
  const battleId = state && state.battleId;
  if (!battleId || !state.view || state.status === "ended" || sent.has(battleId)) return;
  let remembered = false;
  try { remembered = localStorage.getItem(storageKey(battleId)) === "1"; } catch (_) { /* private mode */ }
  if (remembered) { sent.add(battleId); return; }
  sent.add(battleId);
  const ack = await conn.command("entropy", { client_seed: clientSeed() });
  if (ack && ack.ok) {
    try { localStorage.setItem(storageKey(battleId), "1"); } catch (_) { /* private mode */ }
  } else if (!ack || ack.code === "offline" || ack.code === "timeout") {
    sent.delete(battleId); // try again with the next update
  }
}
