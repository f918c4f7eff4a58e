"""Undo in Chromium (issue 33): the GM's console asks before it takes back a step, naming it, and
the lines of the step taken back are struck through and labelled "undone" on the console, the
phone, the TV, the spectator's page and the replay. A GM on a 1280×800 laptop, Alice's phone at
375×667, the TV at 1920×1080 and a spectator, each in a context of its own."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, create_table, gm_call, wait_for_client_seed
from tests.browser.test_duel import PHONE, give_to_player, join_as, start
from tests.browser.test_gm_console import SYSTEMS
from tests.server.test_leaks import FIGHTING, declaration_from

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
TV = {"width": 1920, "height": 1080}

#: how a struck line looks and reads: its text drawn struck through, and the word "undone" beside it
STRUCK = """(li) => ({
  text: li.textContent,
  tag: (li.querySelector('.undone-tag, .d-undone-tag, .r-tag-undone') || {}).textContent || '',
  struck: getComputedStyle(li.querySelector('s, .r-text')).textDecorationLine.includes('line-through'),
})"""


def caught_up(pages: tuple[Any, ...], version: str | None) -> None:
    """Every page shows the battle at ``version`` (the board's version mark: the GM's version is the
    others' too here, nothing being the GM's secret)."""
    for page in pages:
        page.wait_for_selector(f"[data-testid=battle][data-version='{version}'], [data-testid=board][data-version='{version}']")


def struck_lines(page: Any, selector: str) -> list[dict[str, Any]]:
    return [page.locator(selector).nth(i).evaluate(STRUCK) for i in range(page.locator(selector).count())]


class Dialogs:
    """Answers every confirm() a page asks ("OK" while ``accept``), recording its words."""

    def __init__(self, page: Any) -> None:
        self.asked: list[str] = []
        self.accept = True
        page.on("dialog", self._answer)

    def _answer(self, dialog: Any) -> None:
        self.asked.append(dialog.message)
        if self.accept:
            dialog.accept()
        else:
            dialog.dismiss()


def test_undo_names_the_step_and_every_screen_strikes_it_through(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport=LAPTOP)
    phone_context = browser.new_context(**PHONE)
    tv_context = browser.new_context(viewport=TV)
    watch_context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        gm, phone, tv, watch = (c.new_page() for c in (gm_context, phone_context, tv_context, watch_context))
        errors: list[str] = []
        for page in (gm, phone, tv, watch):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        create_table(gm, live_server, "Undo night", "phantoms-bane", ("Jharek", "Wild Monster"))
        slug = gm.evaluate("document.body.dataset.table")
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        tv.goto(f"{live_server.url}/t/{slug}/display")
        watch.goto(f"{live_server.url}/t/{slug}/watch")
        for page in (tv, watch):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        start(gm)
        wait_for_client_seed(phone)  # (its own step, in before the turn: the step undone is the turn)
        # nothing to take back yet
        expect(gm.locator("[data-testid=battle-controls] [data-testid=undo]")).to_be_disabled()
        expect(gm.locator("[data-testid=undo-step]")).to_have_text("Nothing to undo: the battle is at its start.")

        # turn 1: Alice attacks on her phone, the GM's monster attacks; the dice roll
        phone.click("[data-testid=choose-attack][data-combatant=c1]")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        for page in (gm, phone, watch):
            page.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        caught_up((tv,), gm.get_attribute("[data-testid=battle]", "data-version"))
        # the console names the last step beside the button
        named = gm.locator("[data-testid=undo-step]")
        expect(named).to_contain_text("Turn 1: dice")
        step_name = named.locator("q").inner_text()
        faces = re.match(r"Turn 1: dice ([\d ]+)\.", step_name + ".")
        assert faces, step_name

        # the confirmation names the step; answered "cancel", nothing is undone
        dialogs = Dialogs(gm)
        dialogs.accept = False
        version = gm.get_attribute("[data-testid=battle]", "data-version")
        gm.click("[data-testid=battle-controls] [data-testid=undo]")
        assert dialogs.asked and dialogs.asked[0].startswith(f"Undo “{step_name}”?"), dialogs.asked
        assert "• Wild Monster has chosen." in dialogs.asked[0] and f"• {step_name}. Jharek" in dialogs.asked[0], "the question lists the step's lines"
        gm.wait_for_timeout(300)  # (a refused confirmation sends nothing: there is no answer to wait for)
        assert gm.get_attribute("[data-testid=battle]", "data-version") == version

        # "OK": the step is taken back, one step (Alice's choice stays)
        dialogs.accept = True
        gm.click("[data-testid=battle-controls] [data-testid=undo]")
        gm.wait_for_selector("[data-testid=last-turn][data-turn='1']", state="detached")
        caught_up((gm, phone, tv, watch), str(int(version or 0) + 1))
        assert len(dialogs.asked) == 2 and dialogs.asked[-1].startswith(f"Undo “{step_name}”?")
        gm.wait_for_selector("[data-testid=chosen-c1][data-chosen=true]")
        expect(gm.locator("[data-testid=undo-step]")).to_contain_text("Jharek has chosen")

        # every log strikes the step's lines through, and says "undone" in words
        took_back = f"The GM took back “{step_name}”."
        phone.locator("[data-testid=log-fold] summary").click()
        logs = {gm: "[data-testid=log] li", phone: "[data-testid=log] li", tv: "[data-testid=log] li", watch: "[data-testid=log] li"}
        for page, selector in logs.items():
            expect(page.locator(f"{selector}[data-undone=true]").first).to_be_visible()
            expect(page.locator(selector).first).to_have_text(took_back)
            for line in struck_lines(page, f"{selector}[data-undone=true]"):
                assert line["struck"] and line["tag"].lower() == "undone", line
            kept = page.locator(f"{selector}[data-undone=false]")
            assert kept.count() >= 1 and not kept.first.locator("s").count()
        # the turn's line itself on the console and the spectator's page
        for page in (gm, watch):
            assert any(step_name in line["text"] for line in struck_lines(page, "[data-testid=log] li[data-undone=true]"))
        assert phone.inner_text("[data-testid=log-latest]") == took_back
        gm.screenshot(path=str(shots / "undo-gm-console.png"), full_page=True)
        controls = gm.locator("[data-testid=battle-controls]")
        controls.scroll_into_view_if_needed()
        controls.screenshot(path=str(shots / "undo-gm-controls.png"))
        phone.screenshot(path=str(shots / "undo-phone.png"), full_page=True)
        tv.screenshot(path=str(shots / "undo-tv.png"))
        watch.screenshot(path=str(shots / "undo-spectator.png"), full_page=True)

        # made again the same way: the same dice (no re-roll by undoing)
        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        watch.wait_for_selector("[data-testid=last-turn][data-turn='1']")
        expect(gm.locator("[data-testid=undo-step] q")).to_have_text(step_name)

        # the GM ends the battle; undo is still there, and takes the end back
        gm.click("[data-testid=battle-controls] [data-testid=end-battle]")
        watch.wait_for_selector("[data-testid=outcome]")
        gm.wait_for_selector("[data-testid=battle-controls] [data-testid=undo]")
        expect(gm.locator("[data-testid=undo-step]")).to_contain_text("The GM ended the battle")
        gm.click("[data-testid=battle-controls] [data-testid=undo]")
        watch.wait_for_selector("[data-testid=outcome]", state="detached")
        assert dialogs.asked[-2] == "End this battle?" and dialogs.asked[-1].startswith("Undo “The GM ended the battle”?")
        tv.wait_for_selector("[data-testid=log] li[data-undone=true]")
        # and ends it for good: the replay marks the steps taken back too
        gm.click("[data-testid=battle-controls] [data-testid=end-battle]")
        watch.wait_for_selector("[data-testid=outcome]")
        replay_href = gm.get_attribute("[data-testid=battle-controls] [data-testid=replay-link]", "href")
        assert replay_href
        gm.goto(live_server.url + replay_href)
        gm.wait_for_selector("[data-testid=replay][data-state=ready]")
        gm.keyboard.press("End")
        undone = gm.locator("[data-testid=log] li.r-undone")
        assert undone.count() >= 3, "the turn and the end taken back"
        for line in struck_lines(gm, "[data-testid=log] li.r-undone"):
            assert line["struck"] and line["tag"].lower() == "undone", line
        # step by step: the turn stands (unmarked) until the undo that takes it back, struck from there on
        gm.keyboard.press("Home")
        for _ in range(12):
            if "The GM took back" in gm.inner_text("[data-testid=replay-event]"):
                break
            assert gm.locator("[data-testid=log] li.r-undone").count() == 0, "struck through before it was undone"
            gm.keyboard.press("ArrowRight")
        expect(gm.locator("[data-testid=replay-event]")).to_contain_text(took_back)
        assert gm.locator("[data-testid=log] li.r-undone").count() >= 2
        gm.locator("[data-testid=log] li.r-undone").first.scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / "undo-replay.png"), full_page=True)
        assert not errors, errors
    finally:
        for context in (gm_context, phone_context, tv_context, watch_context):
            context.close()


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_the_console_names_the_step_to_undo_in_every_system(browser: Any, live_server: LiveServer, shots: Path, system: str) -> None:
    """On a 1024×768 laptop: the GM's step named beside the undo button and in the question, then
    taken back, its lines struck through in the console's log."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        gm = context.new_page()
        errors: list[str] = []
        gm.on("pageerror", lambda exc: errors.append(str(exc)))
        dialogs = Dialogs(gm)
        create_table(gm, live_server, f"Undo {system}", system, SYSTEMS[system])
        gm.click("[data-testid=start-battle]")
        expect(gm.locator("[data-testid=battle-controls] [data-testid=undo]")).to_be_disabled()
        synced = gm_call(gm, "sync", {})["battle"]
        if synced["status"] == "setup":  # Olympia's deployment
            assert gm_call(gm, "declare", {"battle_id": synced["battle_id"], "declaration": {"type": "begin"}})["ok"]
            synced = gm_call(gm, "sync", {})["battle"]
        # one step of the GM's, from the GM's own menu
        rng = random.Random(system)
        legal = [item for item in synced["view"]["legal"] if item.get("type") in FIGHTING] or synced["view"]["legal"]
        for _ in range(20):
            reply = gm_call(gm, "declare", {"battle_id": synced["battle_id"], "expected_v": synced["v"],
                                            "declaration": declaration_from(rng.choice(legal), rng)})
            if reply["ok"]:
                break
        assert reply["ok"], reply
        offer = gm_call(gm, "sync", {})["battle"]["undo"]
        expect(gm.locator("[data-testid=undo-step] q")).to_have_text(offer["name"])
        gm.locator("[data-testid=battle-controls]").scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / f"undo-{system}-console.png"))
        gm.click("[data-testid=battle-controls] [data-testid=undo]")
        expect(gm.locator("[data-testid=undo-step]")).not_to_contain_text(offer["name"])
        assert dialogs.asked[-1].startswith(f"Undo “{offer['name']}”?"), dialogs.asked
        struck = gm.locator(f"[data-testid=log] li[data-undone=true][data-v='{offer['v']}']")
        expect(struck.first).to_be_visible()
        for line in struck_lines(gm, f"[data-testid=log] li[data-undone=true][data-v='{offer['v']}']"):
            assert line["struck"] and line["tag"].lower() == "undone", line
        expect(gm.locator("[data-testid=log] li").first).to_have_text(f"The GM took back “{offer['name']}”.")
        assert not errors, errors
    finally:
        context.close()
