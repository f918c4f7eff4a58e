"""Eclipse Phase in real Chromium: one exchange between two phones, with the GM screen and a spectator watching.

Suggested home: tests/browser/test_eclipse_phase.py (the Eclipse Phase engineer owns no file in tests/browser).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, box_of, create_table, start_with_seeds_in_turn
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser


def add_preset(gm: Any, preset: str, x: int, y: int) -> None:
    gm.select_option("[data-testid=preset]", label=preset)
    gm.fill("[data-testid=stat-form] input[name=x]", str(x))
    gm.fill("[data-testid=stat-form] input[name=y]", str(y))
    gm.click("[data-testid=stat-save]")
    gm.wait_for_selector(f"[data-testid=lineup] >> text={preset}")


def test_one_exchange_between_two_phones(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_ctx, bob_ctx = browser.new_context(**PHONE), browser.new_context(**PHONE)
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    try:
        gm, alice, bob, watch = (c.new_page() for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx))
        for p in (gm, alice, bob, watch):
            p.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, "Tunnel", "eclipse-phase")
        add_preset(gm, "Jinx", 2, 5)  # side A
        add_preset(gm, "Habitat guard", 12, 5)  # side B: 10 m away, close range
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        give_to_player(gm, 0, "Alice")
        give_to_player(gm, 1, "Bob")
        spy = SocketSpy(watch)
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")
        # the phones' client seeds in, one after the other (the same dice every run)
        start_with_seeds_in_turn(lambda: gm.click("[data-testid=start-battle]"), (alice, bob))
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-initiative]")
        if bob.locator("[data-testid=ep-end-turn]").count():  # the guard won initiative: it waits
            bob.click("[data-testid=ep-end-turn]")
        alice.wait_for_selector("[data-testid=ep-declare-attack]")
        assert alice.evaluate("document.documentElement.scrollWidth") <= 375, "the phone page scrolls sideways"
        box = box_of(alice.locator("[data-testid=ep-declare-attack]"))
        assert box and box["height"] >= 44
        # the attacker sees the target number before anything is rolled
        assert alice.inner_text("[data-testid=ep-preview]").count("70") >= 1  # Guns 70, close range +0
        # the builder's choices are buttons, not form fields (a field added to the page makes the
        # browser scan the page's forms and lay it out again at every turn): poor sight is chosen
        alice.locator("[data-testid=ep-more] > summary").click()
        assert alice.locator("[data-testid=ep-actions] :is(select, input, textarea)").count() == 0
        alice.click("[data-testid=ep-opt-visibility-minor]")
        alice.wait_for_selector("[data-testid=ep-opt-visibility-minor][aria-pressed=true]")
        assert "poor sight" in alice.inner_text("[data-testid=ep-preview]"), alice.inner_text("[data-testid=ep-preview]")
        assert alice.get_attribute("[data-testid=ep-opt-visibility-clear]", "aria-pressed") == "false"
        assert alice.locator("[data-testid=ep-more]").get_attribute("open") is not None, "the options folded away on a choice"
        alice.locator("[data-testid=ep-opt-visibility]").scroll_into_view_if_needed()
        alice.screenshot(path=str(shots / "attacker-options.png"))
        # the aim's target likewise: a button in its fold, which stays open
        alice.locator("[data-testid=ep-aim] > summary").click()
        alice.click("[data-testid=ep-aim-at-c2]")
        alice.wait_for_selector("[data-testid=ep-aim-at-c2][aria-pressed=true]")
        assert alice.locator("[data-testid=ep-aim]").get_attribute("open") is not None, "the aim folded away on a choice"
        alice.locator("[data-testid=ep-aim] > summary").click()
        alice.click("[data-testid=ep-opt-visibility-clear]")
        alice.wait_for_selector("[data-testid=ep-opt-visibility-clear][aria-pressed=true]")
        assert "poor sight" not in alice.inner_text("[data-testid=ep-preview]")
        alice.click("[data-testid=ep-target-c2]")
        alice.click("[data-testid=ep-declare-attack]")
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-exchange][data-phase=defence]")
        # the target number is the attacker's own number: its player and the GM see it, nobody else
        for p in (gm, alice):
            assert p.inner_text("[data-testid=ep-attack-target]").endswith("70")
        for p in (bob, watch):
            assert p.locator("[data-testid=ep-attack-target]").count() == 0
        # only the defender's phone (and the GM) get the defence choice
        bob.wait_for_selector("[data-testid=ep-defend-fray]")
        assert alice.locator("[data-testid^=ep-defend-]").count() == 0
        assert watch.locator("[data-testid^=ep-defend-]").count() == 0
        bob.screenshot(path=str(shots / "defender-phone.png"), full_page=True)
        bob.click("[data-testid=ep-defend-fray]")
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-att-roll]")
        rolls = {n: (p.get_attribute("[data-testid=ep-att-roll]", "data-roll"), p.get_attribute("[data-testid=ep-def-roll]", "data-roll"))
                 for n, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch))}
        assert len(set(rolls.values())) == 1, rolls
        watch.screenshot(path=str(shots / "spectator-rolled.png"), full_page=True)
        # each side accepts (or spends); the GM answers for Bob as if he had left the table
        for _ in range(4):
            if watch.locator("[data-testid=ep-exchange][data-phase=done]").count():
                break
            if alice.locator("[data-testid=ep-accept-c1]").count():
                alice.click("[data-testid=ep-accept-c1]")
            elif gm.locator("[data-testid=ep-accept-c2]").count():
                gm.click("[data-testid=ep-accept-c2]")
            watch.wait_for_timeout(300)
        for p in (gm, alice, bob, watch):
            p.wait_for_selector("[data-testid=ep-exchange][data-phase=done]")
        results = {p.get_attribute("[data-testid=ep-exchange]", "data-result") for p in (gm, alice, bob, watch)}
        assert len(results) == 1
        if results == {"hit"}:  # what got through is the defender's damage: its player and the GM see it
            assert "Gets through" in bob.inner_text("[data-testid=ep-damage]")
            assert "Gets through" not in watch.inner_text("[data-testid=ep-damage]")
        for n, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
            p.screenshot(path=str(shots / f"{n}-after-exchange.png"), full_page=True)
        assert '"durability"' not in spy.text() and '\\\\"durability\\\\"' not in spy.text()
        assert not errors, errors
    finally:
        for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx):
            c.close()


def test_a_called_shot_from_the_phone_with_its_odds_and_its_outcome_everywhere(
        browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx, alice_ctx = browser.new_context(viewport={"width": 1400, "height": 900}), browser.new_context(**PHONE)
    tv_ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    try:
        gm, alice, tv = (c.new_page() for c in (gm_ctx, alice_ctx, tv_ctx))
        for p in (gm, alice, tv):
            p.on("pageerror", lambda e: errors.append(str(e)))
        create_table(gm, live_server, "Called shots", "eclipse-phase")
        add_preset(gm, "Jinx", 2, 5)
        add_preset(gm, "Habitat guard", 12, 5)  # the GM's, holding a submachine gun
        join_as(alice, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        tv.goto(gm.get_attribute("[data-testid=display-link]", "href"))
        gm.click("[data-testid=start-battle]")
        alice.wait_for_selector("[data-testid=ep-initiative]")
        if gm.locator("[data-testid=ep-end-turn]").count() and not alice.locator("[data-testid=ep-declare-attack]").count():
            gm.click("[data-testid=ep-end-turn]")  # the guard won initiative: it waits
        alice.wait_for_selector("[data-testid=ep-declare-attack]")
        # the aims sit in the builder's fold, disarm naming what the guard holds, the chance of coming off beside them
        alice.locator("[data-testid=ep-more] > summary").click()
        alice.click("[data-testid=ep-called-spot]")
        alice.wait_for_selector("[data-testid=ep-called-spot-eyes]")
        alice.click("[data-testid=ep-called-spot-eyes]")
        alice.wait_for_selector("[data-testid=ep-called-spot-eyes][aria-pressed=true]")
        assert alice.inner_text("[data-testid=ep-called-disarm]") == "disarm: Compact submachine gun"
        alice.click("[data-testid=ep-called-disarm]")
        alice.wait_for_selector("[data-testid=ep-called-disarm][aria-pressed=true]")
        assert alice.locator("[data-testid=ep-called-spots]").count() == 0
        # the guard's defence is not Alice's to see: the most the shot can come off, from her own test
        expect(alice.locator("[data-testid=ep-called-odds]")).to_have_text(re.compile(r"^at most \d+\u00a0% to come off$"))
        assert alice.evaluate("document.documentElement.scrollWidth") <= 375, "the phone page scrolls sideways"
        assert "called shot: disarm" in alice.inner_text("[data-testid=ep-preview]")
        alice.locator("[data-testid=ep-called]").scroll_into_view_if_needed()
        alice.screenshot(path=str(shots / "called-shot-phone.png"))
        alice.click("[data-testid=ep-declare-attack]")
        for p in (gm, alice):
            expect(p.locator("[data-testid=ep-called-shot]")).to_have_text(
                "Called shot to disarm: it comes off only with a superior success or a critical.")
        gm.click("[data-testid=ep-defend-fray]")
        # the GM accepts the dice for both sides until the exchange is done
        done = "[data-testid=ep-exchange][data-phase=done]"
        while True:
            gm.wait_for_selector(f":is({done}, [data-testid^=ep-accept-])")
            if gm.locator(done).count():
                break
            v = gm.get_attribute("[data-testid=battle]", "data-version")
            gm.locator("[data-testid^=ep-accept-]").first.click()
            gm.wait_for_selector(f"[data-testid=battle]:not([data-version='{v}'])", state="attached")
        outcome = gm.locator(f"{done} [data-testid=ep-called-shot]")
        came_off = outcome.get_attribute("data-came-off")
        words = outcome.inner_text()
        assert re.fullmatch(r"Jinx's called shot to disarm (comes off: Habitat guard drops the Compact submachine gun, "
                            r"and the hit deals no damage|does not come off(: without a superior success it is an "
                            r"ordinary hit)?)\.", words), words
        assert (came_off == "true") == ("comes off" in words)
        alice.wait_for_selector(done)
        assert alice.inner_text(f"{done} [data-testid=ep-called-shot]") == words
        # the TV: the result words and the log say it
        expect(tv.locator("[data-testid=last-result-words]")).to_have_text(words)
        expect(tv.locator("#log")).to_contain_text(words)
        if came_off == "true":
            expect(gm.locator("[data-testid=ep-combatant-c2]")).to_contain_text("Compact submachine gun dropped")
        for name, p in (("gm", gm), ("phone", alice), ("tv", tv)):
            p.screenshot(path=str(shots / f"called-shot-{name}-after.png"), full_page=name != "tv")
        assert not errors, errors
    finally:
        for c in (gm_ctx, alice_ctx, tv_ctx):
            c.close()
