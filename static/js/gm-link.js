// The GM console's "Open this console on another device": the GM link's copy button, and the Join
// tab opened when the page's address says #join (after "New join code" or "Replace the GM link").
const field = document.querySelector("[data-testid=gm-link]");
const button = document.querySelector("[data-testid=copy-gm-link]");
const status = document.querySelector("[data-testid=copy-status]");

async function copy() {
  let done = false;
  try {
    // the Clipboard API needs a secure context (https or localhost): a LAN address over http has none
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(field.value);
      done = true;
    }
  } catch (err) {
    done = false;
  }
  if (!done) {
    field.focus();
    field.select();
    try { done = document.execCommand("copy"); } catch (err) { done = false; }
  }
  status.textContent = done ? "Copied." : "Selected: copy it with your device's copy command.";
}

if (field && button && status) {
  button.addEventListener("click", copy);
  field.addEventListener("focus", () => field.select());
}

if (location.hash === "#join") {
  const tab = document.querySelector("[data-testid=tab-join]");
  if (tab) window.addEventListener("load", () => tab.click());
}
