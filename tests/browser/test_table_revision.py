"""The page's connection keeps the newest table it was given (static/js/connection.js), in real Chromium.

A table payload read before the GM's edit (a sync answered late, two broadcasts crossing) must not
be drawn over the table the edit made: the GM's next edit would be built on the old lineup and undo
the last one (a fresh-clone run once lost "Player: Alice" that way). The module runs here against a
stand-in Socket.IO client, so the order of what arrives is the test's to choose.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser

SCRIPT = """async () => {
  const handlers = {};
  const sent = [];
  // a stand-in for the Socket.IO client: the test delivers the server's messages itself
  window.io = () => ({
    connected: true, active: true,
    on(name, fn) { (handlers[name] = handlers[name] || []).push(fn); },
    listeners(name) { return handlers[name] || []; },
    timeout() { return { emit(event, payload, answer) { sent.push([event, answer]); } }; },
    disconnect() { return this; }, connect() { return this; },
  });
  const { connect } = await import("/static/js/connection.js");
  const drawn = [];
  const conn = connect({ table: "t", token: null, onTable: (t) => drawn.push(t.revision),
                         onBattle: () => {}, onStatus: () => {}, onError: () => {} });
  const deliver = (name, payload) => handlers[name].forEach((fn) => fn(payload));
  const table = (revision) => ({ revision, stamp: `s${revision}`, battle_id: null, board: {} });
  deliver("table", table(4));
  deliver("table", table(6));
  deliver("table", table(5));           // two broadcasts crossing: the older comes last
  const edit = conn.emit("lineup_set", { lineup: [] });
  sent[sent.length - 1][1](null, { ok: true, revision: 9 });   // the GM's edit made revision 9
  await edit;
  deliver("table", table(8));           // a sync read before the edit, answered after it
  deliver("table", table(9));           // the edit's own broadcast
  deliver("table", table(10));
  return { drawn, floor: conn.state.revisionFloor, held: conn.state.revision };
}"""


def test_a_page_keeps_the_newest_table_and_drops_one_read_before_its_own_edit(browser: Any, live_server: LiveServer) -> None:
    page = browser.new_page()
    page.goto(live_server.url + "/")
    result = page.evaluate(SCRIPT)
    assert result == {"drawn": [4, 6, 9, 10], "floor": 9, "held": 10}
