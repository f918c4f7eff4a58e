// A screen that chose "Use this screen as a table display": it asks the server every few seconds what
// to show. Waiting with a pairing code: once a GM pairs it (or its code expires) the page reloads and
// the server sends it to the table's display, or a new code. Paired: once the GM unpairs it, it goes
// back to showing a pairing code. The server keeps the pairing in its database; this page keeps
// nothing but its signed session cookie.
(function () {
  "use strict";
  const me = document.currentScript;
  const state = me ? me.dataset.state : "waiting";
  const table = me ? me.dataset.table || "" : "";
  const lifetime = me ? Number(me.dataset.lifetime || 600) : 600;
  const every = state === "paired" ? 4000 : 2000;
  const started = Date.now();

  function changed(status) {
    if (state === "paired") return status.state !== "paired" || status.table !== table;
    return status.state !== "waiting" || status.code !== (me && me.dataset.code);
  }

  async function look() {
    try {
      const answer = await fetch("/screen/status", { credentials: "same-origin", cache: "no-store" });
      if (answer.ok) {
        const status = await answer.json();
        if (changed(status)) { window.location.assign("/screen"); return; }
      }
    } catch (err) {
      // the network is away a moment: ask again at the next tick
    }
    if (state === "waiting") {
      const left = Math.max(0, lifetime - Math.round((Date.now() - started) / 1000));
      const expiry = document.getElementById("expiry");
      if (expiry) expiry.textContent = left > 60
        ? `The code is good for ${Math.ceil(left / 60)} more minutes; a new one comes by itself.`
        : "A new code comes in a moment.";
    }
    window.setTimeout(look, every);
  }
  window.setTimeout(look, every);

  // a TV should not go to sleep while it waits to be paired
  if (state === "waiting" && navigator.wakeLock && navigator.wakeLock.request) {
    const lock = () => navigator.wakeLock.request("screen").catch(() => {});
    lock();
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") lock(); });
  }
})();
