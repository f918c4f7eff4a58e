"""Small things on the GM console (issue 33): the battle's id is shown in the Battle tab, and
"Survivors carry on" says who carries on and who is left behind before and after it writes, with
only those still standing carried unless the GM asks for the fallen who live."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from rules import Viewer
from tests.browser.conftest import LiveServer
from tests.browser.test_display import service_for
from webapp import cli


def ended_caves(server: LiveServer) -> tuple[str, str, int, dict[str, str]]:
    """An AD&D battle ended with the thief down at -3 and the orc and the gnoll dead; its lineup came
    from the roster "The company"."""
    service = service_for(server)
    table = service.create_table("Orc caves", "adnd")
    service.set_lineup(table.id, cli.demo_lineup("adnd"))
    service.save_roster(table.id, "The company")
    battle_id = service.start_battle(table.id, seed="caves").battle_id
    for cid, hp in (("c3", -3), ("c4", -20), ("c5", -20)):
        service.declare(battle_id, Viewer.gm(), {"type": "set_hp", "combatant": cid, "hp": hp}, actor="gm")
    service.end_battle(battle_id, Viewer.gm())
    names = {e["id"]: e["name"] for e in service.table(table_id=table.id).lineup}
    service.engine.dispose()
    return table.slug, table.gm_token, battle_id, names


def test_the_console_shows_the_battle_id_and_survivors_say_who_is_left_behind(browser: Any, live_server: LiveServer, shots: Path) -> None:
    slug, key, battle_id, names = ended_caves(live_server)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        gm = context.new_page()
        gm.goto(f"{live_server.url}/t/{slug}/gm?key={key}")
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=tab-battle]")
        expect(gm.locator("[data-testid=battle-id]")).to_contain_text(f"Battle #{battle_id}")

        summary = gm.locator("[data-testid=survivors-summary]")
        standing = ", ".join(names[c] for c in ("c1", "c2", "c6"))
        behind = ", ".join(names[c] for c in ("c3", "c4", "c5"))
        expect(summary).to_have_text(f"Carries on 3 survivors: {standing}. 3 defeated are left behind: {behind}.")
        gm.locator("[data-testid=survivors-panel]").scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / "console-survivors-1024x768.png"))

        # the thief fell but lives: the GM may carry him on too
        fallen = gm.locator("[data-testid=survivors-fallen]")
        expect(fallen).to_be_visible()
        expect(fallen).not_to_be_checked()
        fallen.check()
        expect(summary).to_have_text(re.compile(r"^Carries on 4 survivors: .*2 defeated are left behind: "
                                                + re.escape(", ".join(names[c] for c in ("c4", "c5"))) + r"\.$"))
        fallen.uncheck()
        expect(summary).to_contain_text("3 defeated are left behind")

        # the confirmation of "write over" says who is left behind; so does the result
        asked: list[str] = []
        gm.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        gm.click("[data-testid=survivors-over]")
        notice = gm.locator("[data-testid=notice]")
        expect(notice).to_contain_text("Carried on 3 survivors")
        expect(notice).to_contain_text(f"3 defeated are left behind: {behind}.")
        expect(notice).to_contain_text("“The company”")
        assert asked and "The company" in asked[0] and f"3 defeated are left behind: {behind}." in asked[0], asked
        gm.screenshot(path=str(shots / "console-survivors-written.png"))
    finally:
        context.close()
