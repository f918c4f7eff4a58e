"""Game night, round two (issue 33), on the demo tables ``battleboard serve`` makes: the GM console on
the laptops GMs bring (1024×768 to 1440×900, with a mouse), allies as targets, the table display at a
glance, a player's turn on a phone's first screen, the log's two-digit numbers, and Olympia's rows
taking a dragged unit.

Each test plays on its own copy of a demo table, prepared on the server's database before it starts
(a fixed seed for each, so the dice, and what they leave on the board, are always the same)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from rules import Viewer
from rules.registry import SYSTEM_PACKAGES
from tests.browser.conftest import LOG_NUMBERS_CUT, TEXT_CUT, LiveServer, box_of, gm_call
from tests.browser.test_duel import PHONE
from tests.browser.test_phone import check_actions_on_top, gm_steps_until_declarations
from webapp import cli
from webapp.app import create_app
from webapp.config import load_config

pytestmark = pytest.mark.browser

#: the five systems of the board: these tests set up a scene of each (a test system has none)
SYSTEM_IDS = sorted(SYSTEM_PACKAGES)
LAPTOPS = [(1024, 768), (1280, 800), (1366, 768), (1440, 900)]
GM = Viewer.gm()

# what each test's copy of a demo table has been through before the pages open: the GM's
# declarations (the dice from the copy's seed)
TV_STEPS: dict[str, list[dict[str, Any]]] = {
    # a knocked-down, knocked-out ally (a green ring on the TV before)
    "eclipse-phase": [{"type": "condition", "combatant": "c2", "condition": c, "on": True} for c in ("prone", "unconscious")],
    # a thief down (below 0), a gnoll dead; the fight in the upper middle of a 20×20 cave
    "adnd": [{"type": "set_hp", "combatant": "c3", "hp": -3}, {"type": "set_hp", "combatant": "c5", "hp": -12}],
    # the orc and the archer brought to the prince's corner, the archer out of play
    "battles-and-balances": [{"type": "place", "combatant": "c3", "x": 2, "y": 0}, {"type": "place", "combatant": "c4", "x": 2, "y": 1},
                             {"type": "adjust", "combatant": "c4", "field": "wounds", "value": 99}],
}
# the foes in the prince's reach, beside his ally: his turn offers three attacks
FOES_AT_HAND = TV_STEPS["battles-and-balances"][:2]


def demo_copy(service: Any, system_id: str, slug: str) -> Any:
    """A copy of the system's demo table at ``slug``, its battle started on the seed ``slug``."""
    table = service.create_table(cli.DEMOS[system_id][1], system_id, slug=slug)
    service.set_lineup(table.id, cli.demo_lineup(system_id))
    battle_id = service.start_battle(table.id, seed=slug).battle_id
    if service.battle(battle_id).status == "setup":  # Olympia's deployment: the presets' rows as they are
        service.declare(battle_id, GM, {"type": "begin"}, actor="gm")
    return service.table(table_id=table.id)


def play_until(service: Any, battle_id: int, declaration: dict[str, Any], done: Any, limit: int = 40) -> None:
    for _ in range(limit):
        battle = service.battle(battle_id)
        if battle.status == "ended" or done(service.project(battle, GM, [])["view"]):
            return
        service.declare(battle_id, GM, declaration, actor="gm")
    raise AssertionError(f"{declaration} never got there")


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, Any]]]:
    instance = tmp_path_factory.mktemp("night") / "instance"
    instance.mkdir()
    app = create_app(load_config(instance_path=instance))
    service = app.extensions["battleboard"].service
    tables: dict[str, Any] = {}
    for system_id in SYSTEM_IDS:
        for use in ("console", "tv"):
            tables[f"{use}-{system_id}"] = demo_copy(service, system_id, f"{use}-{system_id}")
    for system_id, steps in TV_STEPS.items():
        for step in steps:
            service.declare(tables[f"tv-{system_id}"].battle_id, GM, step, actor="gm")
    # the duel fought to its end; the Olympia battle until a noble has no men left
    play_until(service, tables["tv-phantoms-bane"].battle_id, {"type": "choose", "combatant": "c1", "option": "attack"}, lambda v: False)
    play_until(service, tables["tv-olympia"].battle_id, {"type": "step", "by": "phase"},
               lambda v: any(u["men"] == 0 for s in v["sides"].values() for r in s["rows"] for u in r["units"]))
    for slug in ("allies-battles-and-balances", "allies-eclipse-phase", "phone-battles-and-balances", "phone-adnd"):
        tables[slug] = demo_copy(service, slug.split("-", 1)[1], slug)
    for slug in ("allies-battles-and-balances", "phone-battles-and-balances"):
        for step in FOES_AT_HAND:
            service.declare(tables[slug].battle_id, GM, step, actor="gm")
    olympia = service.create_table("Deployment", "olympia", slug="rows-olympia")  # (left in its deployment)
    service.set_lineup(olympia.id, cli.demo_lineup("olympia"))
    service.start_battle(olympia.id, seed="rows-olympia")
    tables["rows-olympia"] = service.table(table_id=olympia.id)
    service.engine.dispose()
    server = LiveServer(instance).start()
    yield server, tables
    server.stop()


def live(page: Any) -> None:
    page.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=15000)
    page.wait_for_timeout(400)  # the first renders (and their fonts and dice) settle


def open_console(context: Any, server: LiveServer, table: Any) -> Any:
    gm = context.new_page()
    gm.goto(f"{server.url}/t/{table.slug}/gm?key={table.gm_token}")
    live(gm)
    return gm


def seat_phone(phone: Any, gm: Any, server: LiveServer, table: Any, combatant: str = "c1") -> None:
    """The phone joins as Alice; the GM hands her ``combatant``."""
    phone.goto(f"{server.url}/j/{table.join_code}")
    phone.fill("[data-testid=join-name]", "Alice")
    phone.click("[data-testid=join-submit]")
    live(phone)
    synced = gm_call(gm, "sync", {})
    seat = next(s["id"] for s in synced["table"]["seats"] if s["name"] == "Alice")
    ack = gm_call(gm, "assign", {"battle_id": synced["table"]["battle_id"], "combatant": combatant, "controller": "seat", "seat": seat})
    assert ack["ok"], ack


# the grid's tokens inside the part shown, with their discs' widths, and whether the whole board is shown
GRID_SHOWN = """() => {
  const svg = document.querySelector('[data-testid=battle] svg.grid');
  const r = svg.getBoundingClientRect();
  const inside = (b) => b.left >= r.left - 1 && b.right <= r.right + 1 && b.top >= r.top - 1 && b.bottom <= r.bottom + 1;
  const discs = [...svg.querySelectorAll('[data-testid=token] .token-body')].map((d) => d.getBoundingClientRect()).filter(inside);
  return { discs: discs.map((b) => Math.round(b.width)), viewBox: svg.getAttribute('viewBox').split(' ').map(Number) };
}"""


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_the_console_reads_on_a_laptop(browser: Any, night: tuple[LiveServer, dict[str, Any]], system_id: str, shots: Path) -> None:
    """At 1024×768, 1280×800, 1366×768 and 1440×900 with a mouse: no text of the board or the
    console's Battle panel runs out of its box or over another (Phantom's Bane's odds ran into each
    other; Battles&Balances' and Eclipse Phase's actions were cut on the right); a grid opens on the
    fight with tokens of 32 px or more and its whole-board button."""
    server, tables = night
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        gm = open_console(context, server, tables[f"console-{system_id}"])
        found: list[str] = []
        for width, height in LAPTOPS:
            gm.set_viewport_size({"width": width, "height": height})
            gm.wait_for_timeout(250)  # (the grid is framed again for the new width)
            found += [f"{width}×{height}: {line}" for line in gm.evaluate(TEXT_CUT, "main")]
            if (width, height) == (1024, 768):
                gm.screenshot(path=str(shots / f"console-{system_id}-1024x768.png"))
            if gm.locator("[data-testid=battle] svg.grid").count():
                grid = gm.evaluate(GRID_SHOWN)
                assert grid["discs"] and min(grid["discs"]) >= 32, f"{system_id} at {width}×{height}: tokens of {grid['discs']} px"
                frame = gm.locator("[data-testid=battle] [data-testid=grid-frame]")
                if frame.is_visible():  # a close-up: the whole board a click away, and back
                    expect(frame).to_have_text("Whole board")
                    frame.click()
                    expect(frame).to_have_text("Close up")
                    assert gm.evaluate(GRID_SHOWN)["viewBox"][2] > grid["viewBox"][2]
                    frame.click()
                    expect(frame).to_have_text("Whole board")
        assert not found, f"{system_id}: the console reads badly on a laptop:\n" + "\n".join(found)
    finally:
        context.close()


@pytest.mark.parametrize("system_id", ["battles-and-balances", "eclipse-phase"])
def test_foes_come_first_and_an_attack_on_an_ally_asks_first(browser: Any, night: tuple[LiveServer, dict[str, Any]], system_id: str, shots: Path) -> None:
    """On the phone of a hero beside an ally, in the order the server gives: the first action (or
    target) is a foe's, whole on the screen; an attack on the ally stands apart, marked "Ally", and
    is sent only once confirmed."""
    server, tables = night
    table = tables[f"allies-{system_id}"]
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    phone_context = browser.new_context(**PHONE)
    try:
        gm = open_console(gm_context, server, table)
        phone = phone_context.new_page()
        seat_phone(phone, gm, server, table)
        phone.wait_for_selector("body.my-turn", timeout=15_000)
        if system_id == "battles-and-balances":
            first = phone.locator("[data-testid=due-now] [data-action]").first
            expect(first).to_have_attribute("data-testid", "action-attack-c3")  # Huge Orc, not Baerg beside him
            ally = phone.locator("[data-testid=ally-actions]")
            expect(ally.locator("[data-testid=action-attack-c2]")).to_be_hidden()  # apart, folded away
            ally.locator("summary").click()
            attack = ally.locator("[data-testid=action-attack-c2]")
        else:
            chips = phone.locator("[data-testid=ep-attack] [data-testid^=ep-target-]")
            first = chips.first
            expect(first).to_have_attribute("aria-pressed", "true")
            expect(first).not_to_have_attribute("data-ally", "true")
            box = box_of(first)
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375, f"the first target is cut at the screen's edge: {box}"
            ally = phone.locator("[data-testid=ep-ally-targets]")
            ally.locator("summary").click()
            ally.locator("[data-testid=ep-target-c2]").click()
            attack = phone.locator("[data-testid=ep-declare-attack]")
        expect(ally).to_contain_text("Ally")
        phone.evaluate("window.scrollTo(0, 0)")
        phone.screenshot(path=str(shots / f"phone-{system_id}-ally-apart.png"))
        version = phone.get_attribute("[data-testid=battle]", "data-version")
        asked: list[str] = []
        phone.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
        attack.click()
        assert asked and "on your side" in asked[0], asked
        phone.wait_for_timeout(300)
        assert phone.get_attribute("[data-testid=battle]", "data-version") == version, "an attack on an ally went without a yes"
        phone.once("dialog", lambda d: d.accept())
        attack.click()
        phone.wait_for_selector(f"[data-testid=battle]:not([data-version='{version}'])", state="attached")
    finally:
        gm_context.close()
        phone_context.close()


# each system's combatants out of the fight on its copy, and the word the TV shows for them
OUT_ON_THE_TV = {
    "eclipse-phase": {"c2": "unconscious"},
    "adnd": {"c3": "down", "c5": "dead"},
    "battles-and-balances": {"c4": "out of play"},
}

# every token's disc and name on the TV's grid, and the part of the board shown
TV_GRID = """() => {
  const svg = document.querySelector('[data-testid=board] svg.grid');
  const rect = (el) => { const r = el.getBoundingClientRect(); return { l: r.left, t: r.top, r: r.right, b: r.bottom }; };
  const tokens = [...svg.querySelectorAll('[data-testid=token]')].map((g) => ({
    id: g.dataset.combatant, cls: g.getAttribute('class'), box: rect(g.querySelector('.token-body')),
    rings: g.querySelectorAll('.token-ring').length }));
  const names = [...svg.querySelectorAll('text.token-name')].map((t) => ({ id: t.dataset.combatant, text: t.textContent, box: rect(t) }));
  return { tokens, names, viewBox: svg.getAttribute('viewBox').split(' ').map(Number) };
}"""


def overlap(a: dict[str, float], b: dict[str, float]) -> float:
    return max(0.0, min(a["r"], b["r"]) - max(a["l"], b["l"])) * max(0.0, min(a["b"], b["b"]) - max(a["t"], b["t"]))


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_the_tv_tells_the_story_at_a_glance(browser: Any, night: tuple[LiveServer, dict[str, Any]], system_id: str, shots: Path) -> None:
    """Mid-fight on the TV (1920×1080): everyone out of the fight is marked as such, with its word and
    no health ring (Eclipse Phase's unconscious ally kept a green one); the grid frames the living
    tokens, not the whole battlefield, its names apart; the duel says who is defeated; an Olympia
    noble whose men are all gone leaves the rows (no "★ 0 men")."""
    server, tables = night
    table = tables[f"tv-{system_id}"]
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        tv = context.new_page()
        tv.goto(f"{server.url}/t/{table.slug}/display")
        live(tv)
        tv.screenshot(path=str(shots / f"tv-{system_id}.png"))
        if system_id in OUT_ON_THE_TV:
            grid = tv.evaluate(TV_GRID)
            tokens = {t["id"]: t for t in grid["tokens"]}
            names = {n["id"]: n for n in grid["names"]}
            for cid, word in OUT_ON_THE_TV[system_id].items():
                assert "out" in tokens[cid]["cls"].split() and tokens[cid]["rings"] == 0, f"{system_id}: {cid} looks in the fight: {tokens[cid]}"
                assert word in names[cid]["text"], f"{system_id}: {cid} is not said to be {word}: {names[cid]}"
            for n in grid["names"]:
                others = [o["text"] for o in grid["names"] if o is not n and overlap(n["box"], o["box"]) > 4]
                assert not others, f"{system_id}: the name {n['text']!r} runs into {others}"
                over = [t["id"] for t in grid["tokens"] if t["id"] != n["id"] and overlap(n["box"], t["box"]) > 200]
                assert not over, f"{system_id}: the name {n['text']!r} lies over the tokens {over}"
            if system_id in ("battles-and-balances", "adnd"):  # the fight in a corner of a larger board: framed
                board = {"battles-and-balances": (12, 8), "adnd": (20, 20)}[system_id]
                view = grid["viewBox"]  # (user units: 100 a square)
                assert view[3] < board[1] * 100 * 0.8, f"{system_id}: the TV shows the whole battlefield: {view}"
        elif system_id == "phantoms-bane":
            expect(tv.locator("[data-testid=board] .pbd-status")).to_have_text(["Defeated"])
            expect(tv.locator("[data-testid=combatant-c2]")).to_have_class(re.compile(r"\bis-down\b"))
        else:  # Olympia: the noble alone is named under his side's rows
            assert tv.locator("[data-testid=board] .old-unit[data-men='0']").count() == 0, "a unit of 0 men is still in its row"
            expect(tv.locator("[data-testid=alone-A]")).to_contain_text("Noble with two knights: no men left")
    finally:
        context.close()


@pytest.mark.parametrize("system_id", ["battles-and-balances", "adnd"])
def test_a_players_turn_fits_the_first_screen_of_a_phone(browser: Any, night: tuple[LiveServer, dict[str, Any]], system_id: str, shots: Path) -> None:
    """The demo's hero on a 375×667 phone, mid-fight, on its turn: the turn cue, the hero and every
    choice in the first screen (Battles&Balances' three attacks in two columns of four-line buttons
    pushed Wait below it); the log's two-digit numbers whole on the phone and the console."""
    server, tables = night
    table = tables[f"phone-{system_id}"]
    gm_context = browser.new_context(viewport={"width": 1400, "height": 900})
    phone_context = browser.new_context(**PHONE)
    try:
        gm = open_console(gm_context, server, table)
        phone = phone_context.new_page()
        seat_phone(phone, gm, server, table)
        if system_id == "adnd":
            gm_steps_until_declarations(gm, phone)
        phone.wait_for_selector("body.my-turn", timeout=15_000)
        phone.evaluate("window.scrollTo(0, 0)")
        phone.wait_for_timeout(300)
        phone.screenshot(path=str(shots / f"phone-{system_id}-turn.png"))
        phone.screenshot(path=str(shots / f"phone-{system_id}-turn-full.png"), full_page=True)
        check_actions_on_top(phone, system_id)
        for part in ("[data-testid=your-turn]", "#due-now [data-region~=mine], #due-now [data-testid^=own-line-]"):
            assert box_of(phone.locator(part).first)["y"] + 20 <= 667, f"{system_id}: {part} is below the first screen"
        found = phone.evaluate(TEXT_CUT, "#turn")
        assert not found, f"{system_id}: the phone's turn reads badly:\n" + "\n".join(found)
        if system_id == "adnd":  # a melee picked against one of three foes: Declare still in reach
            phone.click("[data-testid=kind-melee]")
            phone.locator("[data-testid=declare-form] [data-testid^=target-c]").first.click()
            phone.evaluate("window.scrollTo(0, 0)")
            phone.wait_for_timeout(200)
            phone.screenshot(path=str(shots / "phone-adnd-melee-picked.png"))
            check_actions_on_top(phone, system_id)
    finally:
        gm_context.close()
        phone_context.close()


def test_two_digit_log_numbers_are_whole(browser: Any, night: tuple[LiveServer, dict[str, Any]], shots: Path) -> None:
    """The Olympia battle's log, past its tenth line, on the console and in a phone's full log: every
    line's number fits in the room the list leaves it ("93." was shown as "3.")."""
    server, tables = night
    table = tables["tv-olympia"]
    gm_context = browser.new_context(viewport={"width": 1024, "height": 768})
    phone_context = browser.new_context(**PHONE)
    try:
        gm = open_console(gm_context, server, table)
        assert gm.locator("[data-testid=log] li").count() >= 10
        phone = phone_context.new_page()
        phone.goto(f"{server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Bob")
        phone.click("[data-testid=join-submit]")
        live(phone)
        phone.locator("[data-testid=log-fold] summary").click()
        phone.wait_for_selector("[data-testid=log] li >> nth=9")
        phone.locator("[data-testid=log]").scroll_into_view_if_needed()
        phone.screenshot(path=str(shots / "phone-log.png"))
        for name, page in (("console", gm), ("phone", phone)):
            cut = page.evaluate(LOG_NUMBERS_CUT, "[data-testid=log]")
            assert not cut, f"the {name}'s log cuts the numbers {cut}"
    finally:
        gm_context.close()
        phone_context.close()


def start_drag(page: Any, unit: str) -> Any:
    """Pick a unit up (the browser's own drag, as a mouse starts it): the drag's data, to drop with."""
    data = page.evaluate_handle("() => new DataTransfer()")
    page.dispatch_event(f"[data-testid=unit-{unit}]", "dragstart", {"dataTransfer": data})
    return data


def drop(page: Any, row: str, unit: str, data: Any) -> None:
    page.dispatch_event(f"[data-testid={row}]", "dragover", {"dataTransfer": data})
    page.dispatch_event(f"[data-testid={row}]", "drop", {"dataTransfer": data})
    page.dispatch_event(f"[data-testid=unit-{unit}]", "dragend", {"dataTransfer": data})


def test_olympia_rows_take_a_dragged_unit_or_say_why_not(browser: Any, night: tuple[LiveServer, dict[str, Any]], shots: Path) -> None:
    """Deployment on a 1024×768 console: while a unit is dragged, every row stays on the screen and
    takes it, the empty back row too, though an update comes in meanwhile; a drop that cannot be
    made (on the other side's row, on the unit's own row) says why."""
    server, tables = night
    table = tables["rows-olympia"]
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        gm = open_console(context, server, table)
        expect(gm.locator("[data-testid=row-A-1]")).to_contain_text("empty")
        battle_id = gm_call(gm, "sync", {})["table"]["battle_id"]

        # the noble with two knights is picked up; the break point is set meanwhile (an update): the
        # empty back row is still there, the same, and takes him
        data = start_drag(gm, "c1")
        empty = gm.locator("[data-testid=row-A-1]").element_handle()
        version = gm.get_attribute("[data-testid=battle]", "data-version")
        assert gm_call(gm, "declare", {"battle_id": battle_id, "declaration": {"type": "set_break_point", "side": "B", "break_point": 40}})["ok"]
        gm.wait_for_timeout(500)  # (the update is in: the rows wait for the drop)
        assert gm.evaluate("(row) => row.isConnected && row.matches('[data-testid=row-A-1]')", empty), "the empty back row went away"
        drop(gm, "row-A-1", "c1", data)
        gm.wait_for_selector("[data-testid=row-A-1] [data-testid=unit-c1]")
        assert gm.get_attribute("[data-testid=battle]", "data-version") != version

        # refused drops say why
        notice = gm.locator("[data-testid=notice]")
        drop(gm, "row-B-0", "c2", start_drag(gm, "c2"))
        expect(notice).to_contain_text("Captain of archers fights for")
        drop(gm, "row-A-1", "c1", start_drag(gm, "c1"))
        expect(notice).to_contain_text("Noble with two knights is already in the back row 1")
        gm.screenshot(path=str(shots / "olympia-refused-drop.png"))
    finally:
        context.close()
