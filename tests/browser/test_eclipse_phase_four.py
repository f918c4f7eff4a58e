"""Eclipse Phase in real Chromium: a four-combatant fight, two players on phones, the GM screen and a spectator,
from initiative to the end. For the first two action turns each page does whatever its board offers it
(every kind of step of the fight comes up on each phone and the GM's screen); the GM's socket client
plays the rest the same way (about a hundred more steps that only repeat those), every page following
it to the outcome, the spectator's socket watched throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import GmSocket, LiveServer, SocketSpy, create_table, start_with_seeds_in_turn
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser


def setup_table(gm: Any, server: LiveServer) -> None:
    create_table(gm, server, "Tunnel fight", "eclipse-phase", ("Jinx", "Habitat guard", "Security synth", "Scrap drone"))
    # Jinx and the guard on side A, the synth and the drone on side B
    gm.select_option("[data-testid=lineup-1] select[aria-label=side]", "A")


CAUGHT_UP = "(v) => Number(document.querySelector('[data-testid=battle]')?.dataset.version) >= v"
#: the action turns played on the pages themselves: by the end of the first, each phone and the GM
#: has declared an attack, defended, accepted the dice and ended a turn; the later ones repeat that
UI_ACTION_TURNS = 2

# what ``act`` clicks on this page, in its order (one look at the page instead of one per button)
NEXT_BUTTON = """() => {
  for (const selector of ["[data-testid^=ep-defend-]", "[data-testid^=ep-accept-]"]) {
    const found = document.querySelector(selector);
    if (found) return `[data-testid=${found.dataset.testid}]`;
  }
  const declare = document.querySelector("[data-testid=ep-declare-attack]");
  if (declare && !declare.disabled) return "[data-testid=ep-declare-attack]";
  return document.querySelector("[data-testid=ep-end-turn]") ? "[data-testid=ep-end-turn]" : null;
}"""


def act(page: Any) -> bool:
    """Do the first thing this page may do (defend, accept the dice, declare an attack, end the
    turn); True if it did something."""
    selector = page.evaluate(NEXT_BUTTON)
    if selector is None:
        return False
    page.locator(selector).first.click()
    return True


def next_declaration(view: dict[str, Any]) -> dict[str, Any] | None:
    """What the pages' ``act`` would send from this menu (the GM's, which acts for everyone): a
    defence with the first method, the dice accepted, an attack on the first foe with the first weapon
    that reaches it, or the end of the turn."""
    legal = view.get("legal") or []
    for kind in ("defend", "accept"):
        for item in legal:
            if item["type"] == kind:
                declaration = {"type": kind, "combatant": item["combatant"]}
                if kind == "defend":
                    declaration |= {"method": item["methods"][0]["method"], "pool": "none"}
                return declaration
    for item in legal:
        if item["type"] == "attack":
            targets = [t for t in item["targets"] if not t["ally"]] or item["targets"]
            for target in targets:
                weapon = next((w for w in item["weapons"] if target["id"] in w["preview"]), None)
                if weapon is not None:
                    return {"type": "attack", "combatant": item["combatant"], "target": target["id"],
                            "weapon": weapon["index"], "mode": "single", "pool": "none"}
    return next(({"type": "end_turn", "combatant": item["combatant"]} for item in legal if item["type"] == "end_turn"), None)


def play_to_the_end(gm: Any, server: LiveServer) -> int:
    """The GM's socket client plays the rest of the fight, the pages following it on their own; the
    battle's last version."""
    client = GmSocket(server.url, gm.evaluate("document.body.dataset.table"), gm.evaluate("document.body.dataset.token"))
    try:
        known: dict[str, Any] = {}  # (the battle and version last read: only the events since come back)
        for step in range(1500):
            battle = client.call("sync", known)["battle"]
            known = {"battle_id": battle["battle_id"], "since_v": battle["v"]}
            if battle["status"] == "ended":
                return int(battle["v"])
            declaration = next_declaration(battle["view"])
            assert declaration is not None, f"nothing to do: {battle['view'].get('legal')}"
            ack = client.call("declare", {"battle_id": battle["battle_id"], "expected_v": battle["v"],
                                          "declaration": declaration, "msg_id": f"four-{step}"})
            assert ack["ok"], (declaration, ack)
        raise AssertionError("the fight did not end in 1500 steps")
    finally:
        client.close()


def test_four_combatants_two_phones(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_ctx, bob_ctx = browser.new_context(**PHONE), browser.new_context(**PHONE)
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    try:
        gm, alice, bob, watch = (c.new_page() for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx))
        for p in (gm, alice, bob, watch):
            p.on("pageerror", lambda e: errors.append(str(e)))
        setup_table(gm, live_server)
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        spy = SocketSpy(watch)
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        # the phones' client seeds are in, one after the other, before anyone acts (the same dice every run)
        start_with_seeds_in_turn(lambda: gm.click("[data-testid=start-battle]"), (alice, bob))
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-initiative]")
        assert alice.evaluate("document.documentElement.scrollWidth") <= 375
        # a player's phone folds every combatant's card away (not drawn while folded); opened, it
        # shows numbers only for its own combatant
        assert alice.locator("[data-testid=ep-roster] [data-testid^=ep-combatant-]").count() == 0
        alice.click("[data-testid=ep-roster-open]")
        alice.wait_for_selector("[data-testid=ep-combatant-c3]")
        assert alice.locator("[data-testid=ep-pools-c1]").count() == 1
        assert alice.locator("[data-testid=ep-pools-c3]").count() == 0
        # players move by tapping a highlighted square when it is their turn
        moved = False
        # the first action turns on the pages, each waited for on every page; then the GM's socket
        # client plays the rest, the same way
        for step in range(1500):
            if watch.locator("[data-testid=outcome]").count() or int(gm.get_attribute(".ep[data-round]", "data-round") or 0) > UI_ACTION_TURNS:
                break
            if not moved:
                for phone in (alice, bob):
                    if phone.locator("[data-testid=ep-move]").count():
                        phone.click("[data-testid=ep-move]")
                        phone.wait_for_selector("[data-testid=ep-move-hint]")
                        phone.screenshot(path=str(shots / "phone-move-mode.png"), full_page=True)
                        phone.click("[data-testid=ep-move]")  # cancel
                        moved = True
                        break
            did = False
            for page in (alice, bob, gm):
                version = page.get_attribute("[data-testid=battle]", "data-version")
                if act(page):
                    did = True
                    try:  # wait for the server's answer to reach this page, then the others (so the next
                        # page to act is chosen from the same board every run)
                        page.wait_for_selector(f"[data-testid=battle]:not([data-version='{version}'])", timeout=5000)
                        now = int(page.get_attribute("[data-testid=battle]", "data-version") or 0)
                        for other in (alice, bob, gm):
                            other.wait_for_function(CAUGHT_UP, arg=now)
                    except PlaywrightTimeout:
                        pass  # refused (e.g. the board moved on meanwhile): look again
                    break
            if step == 3:
                for name, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
                    p.screenshot(path=str(shots / f"{name}-early.png"), full_page=True)
            if not did:
                gm.wait_for_timeout(200)
        assert moved, "no phone was offered a move"
        last = play_to_the_end(gm, live_server)
        for p in (gm, alice, bob, watch):
            p.wait_for_function(CAUGHT_UP, arg=last)
        watch.wait_for_selector("[data-testid=outcome]")
        for name, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
            p.screenshot(path=str(shots / f"{name}-end.png"), full_page=True)
        assert not errors, errors
        assert '"durability"' not in spy.text() and '\\\\"durability\\\\"' not in spy.text()
        assert watch.locator("[data-testid=ep-att-roll]").count() == 1
    finally:
        for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx):
            c.close()
