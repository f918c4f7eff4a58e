"""Who's winning on screen (issue 37) in real Chromium: the bar beside the board on the GM's console, the
TV and the spectator page showing it only once the GM switches "who's winning" on (their socket frames
carry no chances before), and a player's phone only once the GM allows it, in a switch of its own; then
the replay's line and the report's chart, turning points and dice, in every system."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from rules import Viewer, available_systems, get_system
from tests.browser.conftest import LiveServer, SocketSpy, at_rest, box_of, create_table, gm_call
from tests.browser.test_duel import PHONE, give_to_player, join_as
from tests.browser.test_replay_page import service_for
from tests.server.test_leaks import declaration_from, lineup_for
from webapp import report_chances

pytestmark = pytest.mark.browser

PERCENT = re.compile(r"\d{1,3} %")
#: a duel of two Battles&Balances presets whose outcome is open (its playouts are quick)
PRESETS = ("Prince Vasyl of Ostgrund", "Shock Trooper")


def sent_chances(spy: SocketSpy) -> bool:
    """Whether a page got any chances: a ``chances`` message, or a sync's answer that carries some."""
    text = spy.text()
    return '42["chances"' in text or re.search(r'"chances":\{', text) is not None


def test_console_bar_and_the_gm_s_two_switches(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_ctx = browser.new_context(**PHONE)
    tv_ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    try:
        gm, phone, tv = gm_ctx.new_page(), phone_ctx.new_page(), tv_ctx.new_page()
        for page in (gm, phone, tv):
            page.on("pageerror", lambda e: errors.append(str(e)))
        phone_spy, tv_spy = SocketSpy(phone), SocketSpy(tv)
        create_table(gm, live_server, "Chances", "battles-and-balances", PRESETS)
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        gm.wait_for_selector("[data-testid=lineup-controller-0] option[selected]:has-text('Player: Alice')", state="attached")
        slug = gm.url.split("/t/")[1].split("/")[0]
        tv.goto(f"{live_server.url}/t/{slug}/display")
        tv.wait_for_selector("[data-testid=connection-status][data-state=live]")
        gm.click("[data-testid=start-battle]")

        # the GM's console: always, beside the board
        bar = gm.locator("[data-testid=chances-bar]")
        expect(bar).to_be_visible(timeout=20_000)
        expect(bar.locator("[data-testid=chances-legend-side-A]")).to_contain_text(PERCENT)
        expect(bar.locator("[data-testid=chances-legend-side-B]")).to_contain_text(PERCENT)
        assert "Prince Vasyl" in bar.inner_text() and "Shock Trooper" in bar.inner_text()
        at_rest(gm)
        gm.screenshot(path=str(shots / "chances-console.png"))

        # the TV and the phone: nothing, and no chances in their frames
        at_rest(tv)
        expect(tv.locator("[data-testid=chances-bar]")).to_be_hidden()
        expect(phone.locator("[data-testid=chances-bar]")).to_be_hidden()
        assert not sent_chances(tv_spy) and not sent_chances(phone_spy)

        # the GM switches the TV on: the switch says it can hint at hidden strength
        if gm.locator("[data-testid=tab-join]").count():
            gm.click("[data-testid=tab-join]")
        toggle = gm.locator("[data-testid=show-chances-toggle]")
        expect(toggle).to_have_attribute("aria-pressed", "false")
        assert "hint" in toggle.locator("xpath=..").inner_text()
        toggle.click()
        expect(toggle).to_have_attribute("aria-pressed", "true")
        gm.screenshot(path=str(shots / "chances-switches.png"))
        # (the TV gets the chances of the next update, or at its next sync)
        tv.reload()
        tv_bar = tv.locator("[data-testid=chances-bar]")
        expect(tv_bar).to_be_visible(timeout=20_000)
        expect(tv_bar.locator("[data-testid=chances-legend-side-A]")).to_contain_text(PERCENT)
        at_rest(tv)
        tv.screenshot(path=str(shots / "chances-tv.png"))
        assert not sent_chances(phone_spy), "the phones have a switch of their own"

        # the phones, on their own switch
        phones = gm.locator("[data-testid=phones-chances-toggle]")
        phones.click()
        expect(phones).to_have_attribute("aria-pressed", "true")
        phone.reload()
        phone_bar = phone.locator("[data-testid=chances-bar]")
        expect(phone_bar).to_be_visible(timeout=20_000)
        at_rest(phone)
        phone.screenshot(path=str(shots / "chances-phone.png"))

        # the TV switched off again: its bar goes at once
        toggle.click()
        expect(toggle).to_have_attribute("aria-pressed", "false")
        expect(tv_bar).to_be_hidden(timeout=10_000)

        # a few steps (each passes its turn), then the end: the replay draws the chances kept at each step
        for _ in range(3):
            v = int(gm.get_attribute("[data-testid=battle]", "data-version") or 0)
            acks = [gm_call(gm, "declare", {"battle_id": 1, "expected_v": v, "msg_id": f"pass-{v}-{actor}",
                                            "declaration": {"type": "pass", "combatant": actor}}) for actor in ("c1", "c2")]
            assert any(ack["ok"] for ack in acks), acks  # (whoever's turn it is passes)
            expect(gm.locator("[data-testid=battle]")).to_have_attribute("data-version", str(v + 1))
            expect(bar).to_have_attribute("data-v", str(v + 1), timeout=20_000)
        assert gm_call(gm, "battle_end", {"battle_id": 1})["ok"]
        expect(bar).to_have_attribute("data-v", re.compile(r"\d+"), timeout=20_000)
        gm.wait_for_timeout(1500)  # (the end's own chances are kept after its broadcast)
        replay = gm_ctx.new_page()
        replay.on("pageerror", lambda e: errors.append(str(e)))
        replay.goto(f"{live_server.url}/t/{slug}/battles/1/replay")
        replay.wait_for_selector("[data-testid=replay][data-state=ready]")
        line = replay.locator("[data-testid=replay-chances]")
        expect(line).to_be_visible()
        assert line.locator("polyline").count() == 2
        expect(line).to_have_attribute("data-index", "0")
        replay.click("[data-testid=replay-last]")
        last = str(int(replay.get_attribute("[data-testid=replay]", "data-steps") or 1) - 1)
        expect(line).to_have_attribute("data-index", last)
        expect(replay.locator("[data-testid=replay-chances-words]")).to_contain_text(PERCENT)
        replay.screenshot(path=str(shots / "chances-replay.png"))
        # the report: the same chances as a chart, and the turning points named with their events
        replay.goto(f"{live_server.url}/t/{slug}/battles/1/report")
        expect(replay.locator("[data-testid=report-chart][data-chart=chances]")).to_be_visible()
        points = replay.locator("[data-testid=turning-point]")
        expect(points.first).to_contain_text("→")
        assert 1 <= points.count() <= 3
        assert "The GM ended the battle" in replay.locator("[data-testid=report-turning-points]").inner_text()
        replay.locator("[data-testid=report-turning-points]").scroll_into_view_if_needed()
        replay.screenshot(path=str(shots / "chances-report.png"), full_page=True)
        assert not errors, errors
    finally:
        for ctx in (gm_ctx, phone_ctx, tv_ctx):
            ctx.close()


def replay_and_report(page: Any, server: LiveServer, slug: str, battle_id: int, shots: Path, label: str) -> None:
    """The replay draws the kept chances under its scrubber, a marker following the step; the report
    shows them as a chart, names the turning points with their events and how each one's dice ran."""
    page.goto(f"{server.url}/t/{slug}/battles/{battle_id}/replay")
    page.wait_for_selector("[data-testid=replay][data-state=ready]")
    line = page.locator("[data-testid=replay-chances]")
    expect(line).to_be_visible()
    assert line.locator("polyline").count() >= 2
    expect(line).to_have_attribute("data-index", "0")
    page.click("[data-testid=replay-last]")
    last = str(int(page.get_attribute("[data-testid=replay]", "data-steps") or 1) - 1)
    expect(line).to_have_attribute("data-index", last)
    expect(page.locator("[data-testid=replay-chances-words]")).to_contain_text(PERCENT)
    at_rest(page)
    page.screenshot(path=str(shots / f"chances-replay-{label}.png"))
    page.goto(f"{server.url}/t/{slug}/battles/{battle_id}/report")
    expect(page.locator("[data-testid=report-chart][data-chart=chances]")).to_be_visible()
    points = page.locator("[data-testid=turning-point]")
    expect(points.first).to_contain_text("→")
    assert 1 <= points.count() <= 3
    luck = page.locator("[data-testid=report-luck]")
    expect(luck.first).to_contain_text("percentile")
    page.locator("[data-testid=report-turning-points]").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"chances-report-{label}.png"), full_page=True)


def wait_kept(service: Any, battle_id: int, version: int, timeout: float = 20.0) -> None:
    """Until the server has kept the chances of the battle's version (just after it sent them)."""
    deadline = time.monotonic() + timeout
    while True:
        with service.session() as session:
            if version in report_chances.kept(session, battle_id):
                return
        assert time.monotonic() < deadline, f"no chances kept for version {version} after {timeout} s"
        time.sleep(0.1)


@pytest.mark.parametrize("system_id", [system.id for system in available_systems()])
def test_who_is_winning_in_every_system(browser: Any, live_server: LiveServer, shots: Path, system_id: str) -> None:
    """A battle of each system: the console's bar from the start, the TV and the spectator page only
    once the GM switches it on (then live, with each update), the replay's line and the report."""
    system = get_system(system_id)
    service = service_for(live_server)
    table = service.create_table(f"Chances {system.name}", system_id)
    _, one = service.join(table.join_code, "One")
    _, two = service.join(table.join_code, "Two")
    service.set_lineup(table.id, lineup_for(system, [one.public_id, two.public_id]))
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    tv_ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    watch_ctx = browser.new_context(**PHONE)
    errors: list[str] = []
    try:
        gm, tv, watch = gm_ctx.new_page(), tv_ctx.new_page(), watch_ctx.new_page()
        for page in (gm, tv, watch):
            page.on("pageerror", lambda e: errors.append(str(e)))
        tv_spy, watch_spy = SocketSpy(tv), SocketSpy(watch)
        gm.goto(f"{live_server.url}/t/{table.slug}/gm?key={table.gm_token}")
        tv.goto(f"{live_server.url}/t/{table.slug}/display")
        watch.goto(f"{live_server.url}/t/{table.slug}/watch")
        for page in (gm, tv, watch):
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")
        battle_id = gm_call(gm, "battle_start", {})["battle_id"]

        bar = gm.locator("[data-testid=chances-bar]")
        expect(bar).to_have_attribute("data-v", "1", timeout=20_000)
        expect(bar.locator("[data-testid=chances-legend-side-A]")).to_contain_text(PERCENT)
        expect(bar.locator("[data-testid=chances-legend-side-B]")).to_contain_text(PERCENT)
        at_rest(gm)
        gm.screenshot(path=str(shots / f"chances-console-{system_id}.png"))
        expect(tv.locator("[data-testid=chances-bar]")).to_be_hidden()
        expect(watch.locator("[data-testid=chances-bar]")).to_be_hidden()
        assert not sent_chances(tv_spy) and not sent_chances(watch_spy), "off by default"

        # switched on, the next updates bring the TV and the spectators their chances
        assert gm_call(gm, "display_set", {"show_chances": True})["ok"]
        rng = random.Random(system_id)
        accepted = 0
        for attempt in range(40):
            battle = service.battle(battle_id)
            if battle.status == "ended" or accepted >= 4:
                break
            legal = system.view_for(battle.state, Viewer.gm()).get("legal") or []
            if not legal:
                break
            ack = gm_call(gm, "declare", {"battle_id": battle_id, "expected_v": battle.version, "msg_id": f"chances-{attempt}",
                                          "declaration": declaration_from(rng.choice(legal), rng)})
            if ack["ok"]:
                accepted += 1
                expect(bar).to_have_attribute("data-v", str(ack["v"]), timeout=20_000)
        assert accepted >= 1
        for page, label in ((tv, "tv"), (watch, "spectator")):
            shown = page.locator("[data-testid=chances-bar]")
            expect(shown).to_be_visible(timeout=20_000)
            expect(shown.locator("[data-testid=chances-legend-side-A]")).to_contain_text(PERCENT)
            at_rest(page)
            page.screenshot(path=str(shots / f"chances-{label}-{system_id}.png"))
        # on the spectator's phone the bar goes over the board, which keeps the screen's width
        assert box_of(watch.locator("[data-testid=board]"))["width"] >= 300, "the bar squeezed the board"
        assert box_of(watch.locator("[data-testid=chances-bar]"))["width"] >= 300

        if service.battle(battle_id).status != "ended":
            assert gm_call(gm, "battle_end", {"battle_id": battle_id})["ok"]
        wait_kept(service, battle_id, service.battle(battle_id).version)
        replay_and_report(gm_ctx.new_page(), live_server, table.slug, battle_id, shots, system_id)
        assert not errors, errors
    finally:
        service.engine.dispose()
        for ctx in (gm_ctx, tv_ctx, watch_ctx):
            ctx.close()
