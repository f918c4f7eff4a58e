"""A phone's seat is its own (issue 33), in real Chromium with phones at 375x667: a rescan of the join
link goes back to the seat, a new name from the same phone renames its seat (the GM's list never
shows a player twice, and the seat keeps its combatant), a player with no combatant is told the GM
will give them one while the GM reads who is waiting, and typing real dice never reads as watching."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, box_of, create_table
from tests.browser.test_display import prepare, service_for
from tests.browser.test_duel import PHONE, give_to_player, join_as
from tests.browser.test_physical_dice import choose_on, set_who_rolls

pytestmark = pytest.mark.browser

WATCHING = re.compile(r"you are watching", re.I)


def player_options(gm: Any) -> list[str]:
    """The player seats the GM's first "played by" list offers."""
    return [t for t in gm.locator("[data-testid=lineup-controller-0] option").all_inner_texts() if t.startswith("Player:")]


def test_a_phone_keeps_its_seat_and_a_seat_without_a_combatant_is_told_what_comes(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    alice_context, bob_context = browser.new_context(**PHONE), browser.new_context(**PHONE)
    errors: list[str] = []
    try:
        gm, alice, bob = gm_context.new_page(), alice_context.new_page(), bob_context.new_page()
        for name, page in (("gm", gm), ("alice", alice), ("bob", bob)):
            page.on("pageerror", lambda e, n=name: errors.append(f"{n}: {e}"))
        create_table(gm, live_server, "Seats night", "phantoms-bane", ("Jharek", "Wild Monster"))
        join_link = gm.get_attribute("[data-testid=join-link]", "href")
        join_as(alice, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        gm.wait_for_selector("[data-testid=lineup-controller-0] option[selected]:has-text('Player: Alice')", state="attached")

        # Alice rescans the QR code: her phone goes back to her seat, no "Take a seat"
        alice.goto(join_link)
        expect(alice).to_have_url(re.compile(r"/t/[^/]+/play$"))
        alice.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(alice.locator("[data-testid=join-submit]")).to_have_count(0)
        expect(alice.locator("[data-testid=seat-name]")).to_have_text("Alice")

        # the same phone takes "a new seat" from the join form under another name: its seat is renamed
        alice.goto(live_server.url + "/join")
        alice.fill("[data-testid=join-code]", gm.inner_text("[data-testid=join-code-display]"))
        alice.fill("[data-testid=join-name]", "Alicia")
        alice.click("[data-testid=join-submit]")
        alice.wait_for_selector("[data-testid=connection-status][data-state=live]")
        expect(alice.locator("[data-testid=seat-name]")).to_have_text("Alicia")
        expect(gm.locator("[data-testid=lineup-controller-0] option:checked")).to_have_text("Player: Alicia")
        assert player_options(gm) == ["Player: Alicia"], "the GM's list shows one seat for one phone"

        # Bob joins; the battle starts with Jharek still Alicia's and nothing for Bob
        join_as(bob, gm, "Bob")
        gm.wait_for_selector("[data-testid=lineup-controller-0] option:has-text('Player: Bob')", state="attached")
        assert player_options(gm) == ["Player: Alicia", "Player: Bob"]
        gm.click("[data-testid=start-battle]")
        for page in (gm, alice, bob):
            page.wait_for_selector("[data-testid=turn]")
        expect(alice.locator("[data-testid=choose-attack][data-combatant=c1]")).to_be_visible()
        expect(alice.locator("[data-testid=seat-wait]")).to_be_hidden()

        # Bob's phone: the GM will give him a combatant, at the top of the first screen, never "watching"
        wait = bob.locator("[data-testid=seat-wait]")
        expect(wait).to_be_visible()
        expect(wait).to_contain_text("Bob")
        expect(wait).to_contain_text("The GM will give you a combatant")
        box = box_of(wait)
        assert box is not None and box["y"] + box["height"] <= 667, "the word for Bob is below the first screen"
        expect(bob.locator("body")).not_to_contain_text(WATCHING)
        bob.screenshot(path=str(shots / "phone-seated-no-combatant.png"))

        # the GM reads who is waiting, under what is due now
        waits = gm.locator("[data-testid=panel-battle] [data-testid=seat-waits]")
        expect(waits).to_be_visible()
        expect(waits).to_contain_text("Bob is waiting for a combatant")
        expect(waits).not_to_contain_text("Alicia")
        gm.screenshot(path=str(shots / "gm-bob-waiting.png"))
        # its button leads to "Who plays whom", where the GM hands Bob the monster
        waits.get_by_role("button", name="Give Bob a combatant").click()
        expect(gm.locator("[data-testid=assign-c2]")).to_be_focused()
        gm.select_option("[data-testid=assign-c2]", label="Player: Bob")
        expect(waits).to_be_hidden()
        expect(wait).to_be_hidden()
        expect(bob.locator("[data-testid=choose-attack][data-combatant=c2]")).to_be_visible()
        bob.screenshot(path=str(shots / "phone-bob-given-the-monster.png"))
        assert not errors, errors
    finally:
        for context in (gm_context, alice_context, bob_context):
            context.close()


def test_a_phone_typing_real_dice_never_says_it_is_watching(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    alice_context, bob_context = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        gm, alice, bob = gm_context.new_page(), alice_context.new_page(), bob_context.new_page()
        create_table(gm, live_server, "Real dice", "phantoms-bane", ("Jharek", "Wild Monster"))
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        gm.wait_for_selector("[data-testid=lineup-controller-0] option[selected]:has-text('Player: Alice')", state="attached")
        give_to_player(gm, 1, "Bob")
        set_who_rolls(gm, "players")
        gm.click("[data-testid=tab-lineup]")
        gm.click("[data-testid=start-battle]")
        gm.wait_for_selector("[data-testid=turn]")
        choose_on(alice, gm, "c1")
        choose_on(bob, gm, "c2", settled=False)
        # both have chosen: real dice are due from a phone; both phones show their own duellist
        for page, cid in ((alice, "c1"), (bob, "c2")):
            page.wait_for_selector("[data-testid=dice-due], [data-testid=dice-waiting]")
            expect(page.locator("[data-testid=pb-mine]")).to_contain_text(re.compile(r"Jharek|Wild Monster"))
            expect(page.locator(f"[data-testid=combatant-{cid}] .pb-controller")).to_have_text("you")
            expect(page.locator("body")).not_to_contain_text(WATCHING)
            expect(page.locator("[data-testid=seat-wait]")).to_be_hidden()
        roller = alice if alice.locator("[data-testid=dice-due]").count() else bob
        roller.screenshot(path=str(shots / "phone-typing-dice.png"))
    finally:
        for context in (gm_context, alice_context, bob_context):
            context.close()


@pytest.mark.parametrize("system", ["phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances"])
def test_every_system_tells_a_seat_without_a_combatant_what_comes(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    slug, gm_token = prepare(live_server, system)  # a battle under way, every combatant the GM's
    service = service_for(live_server)
    code = service.table(slug=slug).join_code
    service.engine.dispose()
    gm_context, phone_context = browser.new_context(viewport={"width": 1280, "height": 800}), browser.new_context(**PHONE)
    try:
        gm, carol = gm_context.new_page(), phone_context.new_page()
        gm.goto(f"{live_server.url}/t/{slug}/gm?key={gm_token}")
        gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
        carol.goto(f"{live_server.url}/j/{code}")
        carol.fill("[data-testid=join-name]", "Carol")
        carol.click("[data-testid=join-submit]")
        carol.wait_for_selector("[data-testid=connection-status][data-state=live]")
        wait = carol.locator("[data-testid=seat-wait]")
        expect(wait).to_contain_text("Carol, you have a seat. The GM will give you a combatant")
        expect(carol.locator("body")).not_to_contain_text(re.compile(r"you are watching|No (combatant|character) of yours", re.I))
        box = box_of(wait)
        assert box is not None and box["y"] + box["height"] <= 667, "below the phone's first screen"
        gm.click("[data-testid=tab-battle]")
        expect(gm.locator("[data-testid=seat-waits]")).to_have_text(re.compile(r"Carol is waiting for a combatant"))
        carol.screenshot(path=str(shots / f"phone-{system}-no-combatant.png"))
    finally:
        gm_context.close()
        phone_context.close()
