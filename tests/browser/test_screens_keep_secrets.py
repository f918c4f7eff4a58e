"""What the table display shows, and that a page catches up on its own, in real Chromium.

The TV's DOM never holds a value its view hides, nor a private note, at any moment of a battle
played to its end (every text and attribute the page ever wrote is recorded as it happens); and a
page that missed an update (the server that applied it never broadcast it) catches up within a
heartbeat, with nobody doing anything.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from rules import Viewer, get_system
from tests.browser.conftest import GmSocket, LiveServer
from tests.server.test_leaks import (
    FIGHTING,
    GM_NOTES,
    Secrets,
    declaration_from,
    lineup_for,
    private_note,
    sensible,
)
from webapp.db import make_engine
from webapp.service import BattleService
from webapp.store import told_version

pytestmark = pytest.mark.browser

SYSTEMS = ["phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances"]
#: the declarations each battle may take before the GM ends it (the display is not what is slow)
MOST = 40

# every text and attribute value the page ever writes, recorded as it is written
RECORD_EVERYTHING = """
window.__written = [];
new MutationObserver((changes) => {
  for (const m of changes) {
    if (m.type === 'characterData') window.__written.push(m.target.data);
    else if (m.type === 'attributes') window.__written.push(m.target.getAttribute(m.attributeName) || '');
    else for (const n of m.addedNodes) window.__written.push(n.nodeType === 1 ? n.outerHTML : n.textContent || '');
  }
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
"""


def service_for(server: LiveServer) -> BattleService:
    return BattleService(make_engine(f"sqlite:///{server.instance / 'battleboard.sqlite3'}"))


@pytest.fixture
def heartbeat_server(tmp_path: Path) -> Any:
    server = LiveServer(tmp_path / "instance", env={"BATTLEBOARD_HEARTBEAT_SECONDS": "1"}).start()
    yield server
    server.stop()


def test_the_tv_never_shows_a_hidden_value_or_a_private_note(browser: Any, heartbeat_server: LiveServer, shots: Path) -> None:
    server = heartbeat_server
    service = service_for(server)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.add_init_script(RECORD_EVERYTHING)
    try:
        for system_id in SYSTEMS:
            system = get_system(system_id)
            table = service.create_table(f"Secrets {system_id}", system_id)
            seats = [service.join(table.join_code, name)[1] for name in ("One", "Two")]
            lineup = lineup_for(system, [seat.public_id for seat in seats])
            notes = [GM_NOTES]
            if any(f.name == "notes" for f in system.combatant_fields()):
                for i, entry in enumerate(lineup):
                    entry["notes"] = private_note(200 + i)
                    notes.append(entry["notes"])
            service.set_lineup(table.id, lineup)
            service.set_notes(table.id, GM_NOTES)
            battle_id = service.start_battle(table.id, seed=f"tv-{system_id}").battle_id
            tv = context.new_page()
            tv.goto(f"{server.url}/t/{table.slug}/display")
            tv.wait_for_selector("[data-testid=connection-status][data-state=live]")
            gm = GmSocket(server.url, table.slug, table.gm_token)
            secrets = Secrets(system, Viewer.spectator())
            rng = random.Random(system_id)
            try:
                battle = service.battle(battle_id)
                for attempt in range(MOST):
                    secrets.observe(battle.state, system.view_for(battle.state, Viewer.gm()), system.view_for(battle.state, Viewer.spectator()))
                    menu = system.view_for(battle.state, Viewer.gm()).get("legal") or [] if battle.status != "ended" else []
                    if not menu:
                        break
                    fighting = [item for item in menu if item.get("type") in FIGHTING]
                    item = rng.choice(fighting if fighting and rng.random() < 0.85 else menu)
                    declaration = sensible(system_id, item, rng) or declaration_from(item, rng)
                    controller = battle.state["combatants"].get(declaration.get("combatant") or "", {}).get("controller")
                    if "note" in {f.get("name") for f in item.get("fields") or []} and controller not in (None, "seat"):
                        declaration["note"] = private_note(attempt)  # the DM's private note on an NPC's action
                        notes.append(declaration["note"])
                    gm.call("declare", {"battle_id": battle_id, "expected_v": battle.version, "declaration": declaration,
                                        "msg_id": f"tv-{attempt}"})
                    battle = service.battle(battle_id)
                if battle.status != "ended":
                    assert gm.call("battle_end", {"battle_id": battle_id})["ok"]
                    battle = service.battle(battle_id)
                secrets.observe(battle.state, system.view_for(battle.state, Viewer.gm()), system.view_for(battle.state, Viewer.spectator()))
                tv.wait_for_selector(f"[data-testid=board][data-version='{told_version(battle)}']")
                tv.screenshot(path=str(shots / f"tv-secrets-{system_id}.png"))
                written = "\n".join(tv.evaluate("window.__written")) + "\n" + tv.content()
                for note in notes:
                    assert note not in written, f"{system_id}: a private note reached the TV ({note[:24]}…)"
                for pattern in secrets.regexes():
                    hit = pattern.search(written)
                    assert hit is None, f"{system_id}: the TV showed a hidden value: …{written[max(0, hit.start() - 80):hit.end() + 20]}…"
            finally:
                gm.close()
                tv.close()
    finally:
        context.close()
        service.engine.dispose()


def test_a_page_that_missed_an_update_catches_up_on_its_own(browser: Any, heartbeat_server: LiveServer, shots: Path) -> None:
    """The server that applied a command died before broadcasting it, and a player joined through
    another server: within a heartbeat the TV shows the battle as it is and the GM's console shows
    the new player, with nobody doing anything."""
    server = heartbeat_server
    service = service_for(server)
    try:
        table = service.create_table("Catching up", "phantoms-bane")
        presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
        service.set_lineup(table.id, [{**presets["Jharek"], "id": "jharek", "side": "A", "controller": "gm"},
                                      {**presets["Wild Monster"], "id": "monster", "side": "B", "controller": "gm"}])
        battle_id = service.start_battle(table.id, seed="catching-up").battle_id
        gm_context, tv_context = browser.new_context(), browser.new_context(viewport={"width": 1280, "height": 720})
        gm, tv = gm_context.new_page(), tv_context.new_page()
        gm.goto(f"{server.url}/t/{table.slug}/gm?key={table.gm_token}")
        tv.goto(f"{server.url}/t/{table.slug}/display")
        for page in (gm, tv):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        # this test's service is "the other server": it writes to the database, and broadcasts nothing
        v = service.battle(battle_id).version
        service.declare(battle_id, Viewer.gm(), {"type": "choose", "combatant": "monster", "option": "attack"}, expected_v=v)
        service.declare(battle_id, Viewer.gm(), {"type": "choose", "combatant": "jharek", "option": "defend"}, expected_v=v + 1)
        service.join(table.join_code, "Latecomer Lou")
        battle = service.battle(battle_id)
        tv.wait_for_selector(f"[data-testid=board][data-version='{battle.version}']", timeout=8000)
        gm.wait_for_function("() => document.body.innerHTML.includes('Latecomer Lou')", timeout=8000)
        gm.wait_for_selector(f"[data-version='{battle.version}']", timeout=8000)
        tv.screenshot(path=str(shots / "tv-caught-up.png"))
        gm_context.close()
        tv_context.close()
    finally:
        service.engine.dispose()
