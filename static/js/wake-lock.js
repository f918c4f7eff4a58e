// Keeps the screen awake while a page that needs it is open: a player's phone between turns, the
// table display on the TV.
//
// The Screen Wake Lock API (navigator.wakeLock) exists only in a secure context (HTTPS, or
// localhost), so on a board reached over plain http at its LAN address it is missing. There
// the page falls back on NoSleep.js (fetched pinned and checked like the Socket.IO client, served
// at /vendor/NoSleep.min.js), which plays a tiny silent looping video, and a playing video keeps
// the screen on. A video may only start on a user's gesture, so the fallback is loaded at once and
// engaged on the first tap (again on a later tap if the browser stopped it meanwhile).
//
// keepAwake() may be called as often as wanted (each connection, each return to the page).
// body[data-wake-lock] says "on" or "off", and body[data-wake-lock-by] "wake-lock" or "nosleep".

const FALLBACK = "/vendor/NoSleep.min.js";
const body = document.body;

let wanted = false;
let sentinel = null; // the Wake Lock API's lock, while held
let noSleep = null; // the fallback, once loaded and made
let loading = null;

const hasWakeLock = () => "wakeLock" in navigator && !!navigator.wakeLock && typeof navigator.wakeLock.request === "function";

function mark(on, by) {
  body.dataset.wakeLock = on ? "on" : "off";
  if (on) body.dataset.wakeLockBy = by;
  else delete body.dataset.wakeLockBy;
}

async function lockScreen() {
  if (sentinel || document.visibilityState !== "visible") return;
  try {
    sentinel = await navigator.wakeLock.request("screen");
    mark(true, "wake-lock");
    sentinel.addEventListener("release", () => { sentinel = null; mark(false); });
  } catch (err) {
    sentinel = null; // refused (battery saver, a permissions policy): tried again on the next chance
  }
}

function loadFallback() {
  if (window.NoSleep) return Promise.resolve(window.NoSleep);
  if (!loading) {
    loading = new Promise((resolve) => {
      const script = document.createElement("script");
      script.src = FALLBACK;
      script.async = true;
      script.dataset.testid = "nosleep-script";
      script.addEventListener("load", () => resolve(window.NoSleep || null));
      script.addEventListener("error", () => { loading = null; resolve(null); }); // (tried again on the next call)
      document.head.append(script);
    });
  }
  return loading;
}

const fallbackRunning = () => !!noSleep && noSleep.isEnabled && !(noSleep.noSleepVideo && noSleep.noSleepVideo.paused);

// inside a tap's handler: the browser lets a video start only there
function onTap() {
  if (!wanted) return;
  if (hasWakeLock()) { lockScreen(); return; } // (some browsers grant the lock only after a gesture)
  if (fallbackRunning() || typeof window.NoSleep !== "function") return;
  if (!noSleep) noSleep = new window.NoSleep();
  noSleep.enable().then(() => mark(true, "nosleep")).catch(() => mark(false));
}

function onVisible() {
  if (document.visibilityState !== "visible" || !wanted) return;
  if (hasWakeLock()) lockScreen();
  else if (noSleep && noSleep.isEnabled && !fallbackRunning()) {
    // the browser paused the video while the page was hidden: play it again (or on the next tap)
    noSleep.enable().then(() => mark(true, "nosleep")).catch(() => mark(false));
  }
}

let listening = false;
export function keepAwake() {
  wanted = true;
  if (!listening) {
    listening = true;
    document.addEventListener("visibilitychange", onVisible);
    document.addEventListener("click", onTap, true);
    document.addEventListener("keydown", onTap, true);
    if (!body.dataset.wakeLock) mark(false);
  }
  if (hasWakeLock()) lockScreen();
  else loadFallback();
}
