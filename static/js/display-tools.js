// The table display's part of the table tools (issue 36): the pointer's rings (pointer.js) and the
// rolls made between battles with the table's own dice (a battle's rolls are events of its log and
// come with its updates; these come as `table_roll` messages): the tray shows their dice, the result
// line their words and the log a line, until the battle's next update draws those again.

import * as kit from "./kit.js";
import { showPointers } from "./pointer.js";

export function mountDisplayTools({ conn, board, dice, log, result, view }) {
  showPointers({ socket: conn.socket, board, view });
  conn.socket.on("table_roll", (roll) => {
    if (!roll || !roll.text) return;
    const shown = (roll.rolls || []).filter(kit.showableRoll);
    if (shown.length) {
      dice.dataset.count = shown.reduce((n, r) => n + (r.faces || []).length, 0) > 8 ? "many" : "few";
      dice.replaceChildren(kit.dice(shown.slice(-4), { fresh: true, max: 4 }));
    }
    const words = document.createElement("p");
    words.className = "d-result-text";
    words.textContent = roll.text;
    result.replaceChildren(words);
    result.__shown = undefined;
    dice.__shown = undefined;
    const li = document.createElement("li");
    li.className = "d-log-latest";
    li.dataset.type = "table.rolled";
    li.textContent = roll.text;
    for (const old of log.children) old.classList.remove("d-log-latest");
    log.prepend(li);
    while (log.childElementCount > 3) log.lastElementChild.remove();
    log.__shown = undefined;
  });
}
