"""Physical dice in real Chromium: a Phantom's Bane duel and an Eclipse Phase exchange with the faces typed on phones."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, box_of, create_table, start_with_seeds_in_turn
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser


def set_who_rolls(gm: Any, mode: str) -> None:
    gm.click("[data-testid=tab-options]")
    gm.select_option("[data-testid=panel-options] select[name=who_rolls]", mode)
    gm.click("[data-testid=options-save]")
    expect(gm.locator("[data-testid=notice]")).to_contain_text("Options saved")


def version(page: Any) -> int:
    return int(page.get_attribute("[data-testid=battle]", "data-version") or 0)


def type_face(page: Any, face: int, testid: str = "dice-face") -> None:
    """Tap one face button and wait for the board to move on."""
    before = version(page)
    page.click(f"[data-testid=dice-entry] [data-testid={testid}][data-face='{face}']")
    if testid != "dice-tens":
        expect(page.locator("[data-testid=battle]")).not_to_have_attribute("data-version", str(before))


def choose_on(phone: Any, gm: Any, cid: str, settled: bool = True) -> None:
    """Attack with ``cid`` from its phone; once more if the phone's view was behind (a stale refusal
    makes the page look again)."""
    for attempt in range(3):
        phone.click(f"[data-testid=choose-attack][data-combatant={cid}]")
        try:
            if settled:
                gm.wait_for_selector(f"[data-testid=chosen-{cid}][data-chosen=true]", timeout=10_000)
            else:
                gm.wait_for_selector("[data-testid=dice-due], [data-testid=outcome]", timeout=10_000)
            return
        except Exception:
            if attempt == 2:
                raise
            phone.wait_for_timeout(500)


def test_a_phantoms_bane_duel_with_dice_typed_on_two_phones(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_context, bob_context = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        gm, alice, bob = gm_context.new_page(), alice_context.new_page(), bob_context.new_page()
        create_table(gm, live_server, "Real dice duel", "phantoms-bane", ("Jharek", "Wild Monster"))
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        set_who_rolls(gm, "players")
        gm.click("[data-testid=tab-lineup]")
        # the phones' client seeds are in, one after the other: no later version resets a typed die
        start_with_seeds_in_turn(lambda: gm.click("[data-testid=start-battle]"), (alice, bob))
        gm.wait_for_selector("[data-testid=turn]")
        phones = {"c1": alice, "c2": bob}
        # the GM console lists who rolls real dice, with a switch per combatant
        gm.click("[data-testid=dice-switches] summary")
        expect(gm.locator("[data-testid=dice-switch-c1]")).to_have_attribute("aria-pressed", "true")
        expect(gm.locator("[data-testid=dice-switch-c2]")).to_contain_text("real dice")
        assert alice.locator("[data-testid=dice-switches]").count() == 0
        # each turn: both choose attack; Jharek rolls 6s, the monster 1s (Jharek gets through with a half-die)
        faces = {"c1": 6, "c2": 1}
        shot_taken = overridden = False
        for turn in range(1, 13):
            if turn > 1:  # every screen has the last turn settled before the next choices
                for page in (gm, alice, bob):
                    page.wait_for_selector(f"[data-testid=last-turn][data-turn='{turn - 1}'], [data-testid=outcome]")
            if alice.locator("[data-testid=outcome]").count():
                break
            for cid, phone in phones.items():
                phone.wait_for_selector(f"[data-testid=choose-attack][data-combatant={cid}]")
            choose_on(alice, gm, "c1")
            # one side has chosen: nothing to roll yet (the choice stays secret)
            assert alice.locator("[data-testid=dice-due]").count() == 0
            choose_on(bob, gm, "c2", settled=False)
            for _ in range(8):
                alice.wait_for_selector("[data-testid=dice-due], [data-testid=dice-waiting], [data-testid=outcome], [data-testid=last-turn]")
                due_on = next((cid for cid, p in phones.items() if p.locator("[data-testid=dice-due]").count()), None)
                if due_on is None:
                    # the last roll may still be on its way to this phone
                    alice.wait_for_timeout(200)
                    due_on = next((cid for cid, p in phones.items() if p.locator("[data-testid=dice-due]").count()), None)
                    if due_on is None:
                        break
                phone = phones[due_on]
                prompt = phone.inner_text("[data-testid=dice-prompt]")
                assert re.match(r"Roll 1d[36] for ", prompt), prompt
                if not shot_taken:
                    other = bob if phone is alice else alice
                    expect(other.locator("[data-testid=dice-waiting]")).to_be_visible()
                    gm.wait_for_selector("[data-testid=dice-due]")  # the GM console can type it too
                    expect(gm.locator("[data-testid=dice-board]")).to_be_visible()
                    expect(other.locator("[data-testid^=choose-]").first).to_be_hidden()  # nobody declares meanwhile
                    expect(gm.locator("[data-testid=due-now]")).to_be_hidden()  # (no empty "Due now" beside the roll)
                    for page in (alice, bob, gm):  # the choice held for the dice counts as made: nobody is "choosing"
                        expect(page.locator(".pb-waiting")).to_have_text("Both have chosen")
                        expect(page.locator("[data-testid=combatant-c2]")).to_contain_text("Has chosen")
                    phone.screenshot(path=str(shots / "pb-phone-roll-due.png"))
                    other.screenshot(path=str(shots / "pb-other-phone-waiting.png"))
                    gm.screenshot(path=str(shots / "pb-gm-waiting.png"))
                    box = box_of(phone.locator("[data-testid=dice-face]").first)
                    assert box and box["height"] >= 60 and box["width"] >= 60, "face buttons are big enough for a thumb"
                    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
                    shot_taken = True
                if due_on == "c2" and not overridden:
                    # Bob looks away: the GM rolls his die with the board's dice from the console
                    before = version(gm)
                    gm.click("[data-testid=dice-entry] [data-testid=dice-board]")
                    expect(gm.locator("[data-testid=battle]")).not_to_have_attribute("data-version", str(before))
                    overridden = True
                    continue
                face = faces[due_on] if "d3" not in prompt else 3
                type_face(phone, face)
        alice.wait_for_selector("[data-testid=outcome]")
        gm.wait_for_selector("[data-testid=outcome]")
        # the log and the tray mark the typed dice with a hand
        expect(gm.locator("[data-testid=log] li", has_text=re.compile(r"^Turn 1: dice .*\(real dice\)$")).first).to_be_visible()
        assert overridden
        gm.screenshot(path=str(shots / "pb-gm-ended.png"), full_page=True)
        alice.screenshot(path=str(shots / "pb-phone-ended.png"), full_page=True)
    finally:
        gm_context.close()
        alice_context.close()
        bob_context.close()


def roll_due(phones: dict[str, Any], faces: dict[str, list[int]], shots: Path, seen: set[str]) -> bool:
    """Type the next due roll on whichever phone shows it (d100s in two steps); False when none is due."""
    for name, phone in phones.items():
        if not phone.locator("[data-testid=dice-due]").count():
            continue
        prompt = phone.inner_text("[data-testid=dice-prompt]")
        face = faces[name].pop(0)
        if phone.locator("[data-testid=dice-tens]").count():
            if "d100" not in seen:
                phone.screenshot(path=str(shots / f"ep-{name}-d100-tens.png"))
            phone.click(f"[data-testid=dice-entry] [data-testid=dice-tens][data-face='{face // 10}']")
            phone.wait_for_selector("[data-testid=dice-units]")
            if "d100" not in seen:
                assert "tens: " in phone.inner_text("[data-testid=dice-due]")
                phone.screenshot(path=str(shots / f"ep-{name}-d100-units.png"))
                assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "the units step is wider than the phone"
                last = box_of(phone.locator("[data-testid=dice-units][data-face='9']"))
                assert last and last["x"] + last["width"] <= 375 and last["height"] >= 60
                seen.add("d100")
            type_face(phone, face % 10, "dice-units")
        else:
            assert re.match(r"Roll \d+d\d+ for ", prompt), prompt
            count = int(prompt.split()[1].split("d")[0])
            for _ in range(count - 1):
                phone.click(f"[data-testid=dice-entry] [data-testid=dice-face][data-face='{face}']")
            type_face(phone, face)
        return True
    return False


def test_an_eclipse_phase_exchange_with_d100s_typed_on_phones(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_context, bob_context = browser.new_context(**PHONE), browser.new_context(**PHONE)
    errors: list[str] = []
    try:
        gm, alice, bob = gm_context.new_page(), alice_context.new_page(), bob_context.new_page()
        for p in (gm, alice, bob):
            p.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, "Real dice exchange", "eclipse-phase")
        add_ep_preset(gm, "Jinx", 2, 5)
        add_ep_preset(gm, "Habitat guard", 12, 5)
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        set_who_rolls(gm, "players")
        gm.click("[data-testid=tab-lineup]")
        # the phones' client seeds are in, one after the other, before the first die is typed: a seed
        # landing later moves the version, and a page then starts its d100 again
        start_with_seeds_in_turn(lambda: gm.click("[data-testid=start-battle]"), (alice, bob))
        phones = {"alice": alice, "bob": bob}
        seen: set[str] = set()
        # the first action turn's initiative waits for real dice: the GM starts it, each phone types its d6
        for p in (gm, alice, bob):
            expect(p.locator("[data-testid=ep-initiative-due]")).to_contain_text("Roll initiative to begin")
        expect(alice.locator("[data-testid=ep-actions]")).to_contain_text("then this phone asks for your d6")
        alice.screenshot(path=str(shots / "ep-alice-initiative-due.png"))
        gm.screenshot(path=str(shots / "ep-gm-initiative-due.png"))
        gm.click("[data-testid=ep-roll-initiative]")
        alice.wait_for_selector("[data-testid=dice-due]")
        expect(alice.locator("[data-testid=dice-prompt]")).to_contain_text("Roll 1d6 for Jinx initiative")
        alice.screenshot(path=str(shots / "ep-alice-initiative-d6.png"))
        expect(bob.locator("[data-testid=dice-waiting]")).to_contain_text("Waiting for Jinx")
        expect(gm.locator("[data-testid=ep-initiative-due]")).to_contain_text("Rolling initiative for action turn 1")
        bob.screenshot(path=str(shots / "ep-bob-initiative-waiting.png"))
        type_face(alice, 6)
        bob.wait_for_selector("[data-testid=dice-due]")
        expect(bob.locator("[data-testid=dice-prompt]")).to_contain_text("Roll 1d6 for Habitat guard initiative")
        type_face(bob, 1)
        # Jinx 9 + 6 against the guard's 7 + 1: Jinx acts first
        expect(gm.locator("[data-testid=log] li", has_text="Action turn 1. Initiative: Jinx 15, Habitat guard 8").first).to_be_visible()
        alice.wait_for_selector("[data-testid=ep-declare-attack]")
        alice.click("[data-testid=ep-target-c2]")
        alice.click("[data-testid=ep-declare-attack]")
        bob.wait_for_selector("[data-testid=ep-defend-fray]")
        bob.click("[data-testid=ep-defend-fray]")
        # Alice types her attack (35: a success under Guns 70), Bob his defence (81: a failure)
        alice.wait_for_selector("[data-testid=dice-tens]")
        expect(bob.locator("[data-testid=dice-waiting]")).to_contain_text("Yours is in")
        faces = {"alice": [35, 4, 4, 4], "bob": [81, 50, 50]}
        assert roll_due(phones, faces, shots, seen)
        bob.wait_for_selector("[data-testid=dice-tens]")
        assert roll_due(phones, faces, shots, seen)
        for p in (gm, alice, bob):
            p.wait_for_selector("[data-testid=ep-att-roll]")
        assert alice.get_attribute("[data-testid=ep-att-roll]", "data-roll") == "35"
        assert bob.get_attribute("[data-testid=ep-def-roll]", "data-roll") == "81"
        # both accept; the damage (Alice's) and any SOM check (Bob's) are typed too
        for _ in range(12):
            if gm.locator("[data-testid=ep-exchange][data-phase=done]").count():
                break
            if roll_due(phones, faces, shots, seen):
                continue
            if alice.locator("[data-testid=ep-accept-c1]").count():
                alice.click("[data-testid=ep-accept-c1]")
            elif bob.locator("[data-testid=ep-accept-c2]").count():
                bob.click("[data-testid=ep-accept-c2]")
            gm.wait_for_timeout(300)
        gm.wait_for_selector("[data-testid=ep-exchange][data-phase=done]")
        assert gm.get_attribute("[data-testid=ep-exchange]", "data-result") == "hit"
        expect(gm.locator("[data-testid=log] li", has_text=re.compile(r"damage.*\(real dice\)$|\(real dice\)$")).first).to_be_visible()
        for name, page in (("gm", gm), ("alice", alice), ("bob", bob)):
            page.screenshot(path=str(shots / f"ep-{name}-after-exchange.png"), full_page=True)
        assert not errors, errors
    finally:
        gm_context.close()
        alice_context.close()
        bob_context.close()


def add_ep_preset(gm: Any, preset: str, x: int, y: int) -> None:
    gm.select_option("[data-testid=preset]", label=preset)
    gm.fill("[data-testid=stat-form] input[name=x]", str(x))
    gm.fill("[data-testid=stat-form] input[name=y]", str(y))
    gm.click("[data-testid=stat-save]")
    gm.wait_for_selector(f"[data-testid=lineup] >> text={preset}")
