"""Eclipse Phase in real Chromium: one exchange between two phones, with the GM screen and a spectator watching.

Suggested home: tests/browser/test_eclipse_phase.py (the Eclipse Phase engineer owns no file in tests/browser).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer, SocketSpy, box_of, create_table
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
        gm.click("[data-testid=start-battle]")
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
            assert p.inner_text("[data-testid=ep-attack-target]").endswith("70")
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
        if results == {"hit"}:
            assert "Gets through" in watch.inner_text("[data-testid=ep-damage]")
        for n, p in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
            p.screenshot(path=str(shots / f"{n}-after-exchange.png"), full_page=True)
        assert '"durability"' not in spy.text() and '\\\\"durability\\\\"' not in spy.text()
        assert not errors, errors
    finally:
        for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx):
            c.close()
