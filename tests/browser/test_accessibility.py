"""axe-core in real Chromium on every surface of every rule system: the table display, the GM console
(each of its tabs) and a player's phone, on the demo tables ``battleboard serve`` prepares; and the
front, pairing and join pages. No serious or critical violation is allowed.

axe-core is fetched pinned and checksum-checked (``webapp/vendor.py``, ``fetch-assets --tests``) and
evaluated in the page through the DevTools protocol, so the pages keep their strict CSP."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer, gm_call, settle, wait_for_client_seed
from webapp import cli
from webapp.app import create_app
from webapp.config import load_config
from webapp.vendor import ensure_axe

pytestmark = pytest.mark.browser

BLOCKING = ("serious", "critical")
PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
SYSTEM_IDS = sorted(cli.DEMOS)


@pytest.fixture(scope="module")
def axe_source() -> str:
    instance = Path(os.environ.get("BATTLEBOARD_INSTANCE", Path.cwd() / "instance")).resolve()
    return ensure_axe(instance).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, Any]]]:
    """A server on a database holding the five demo tables (as ``battleboard serve`` makes them)."""
    instance = tmp_path_factory.mktemp("a11y") / "instance"
    instance.mkdir()
    app = create_app(load_config(instance_path=instance))
    service = app.extensions["battleboard"].service
    tables = {table.system_id: table for table in cli.ensure_demo(app)}
    service.engine.dispose()
    server = LiveServer(instance).start()
    yield server, tables
    server.stop()


def axe_violations(page: Any, source: str, label: str) -> list[str]:
    """Run axe-core on the page as it is now; the serious and critical violations, one line each
    ("<surface>: <rule id> (<impact>) at <selector>: <what to fix>")."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(source)
    found = page.evaluate("async () => (await axe.run(document, { resultTypes: ['violations'] })).violations")
    lines = []
    for violation in found:
        if violation.get("impact") not in BLOCKING:
            continue
        for node in violation["nodes"]:
            target = " ".join(json.dumps(t) if not isinstance(t, str) else t for t in node["target"])
            summary = " ".join((node.get("failureSummary") or "").split())[:200]
            lines.append(f"{label}: {violation['id']} ({violation['impact']}) at {target}: {summary}")
    return lines


def unique(lines: list[str]) -> list[str]:
    """Each violation once, with the tabs it showed in (the board beside the tabs shows in all)."""
    seen: dict[str, list[str]] = {}
    for line in lines:
        label, rest = line.split(": ", 1)
        surface, _, tab = label.partition(", ")
        seen.setdefault(f"{surface}: {rest}", []).append(tab)
    return [f"{key} [{', '.join(t for t in tabs if t)}]" if any(tabs) else key for key, tabs in seen.items()]


def live(page: Any) -> None:
    page.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=15000)
    settle(page)  # the first renders in their fonts


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_display_console_and_phone_have_no_serious_violations(
    browser: Any, demo_server: tuple[LiveServer, dict[str, Any]], axe_source: str, system_id: str, shots: Path
) -> None:
    server, tables = demo_server
    table = tables[system_id]
    found: list[str] = []
    tv_context = browser.new_context(viewport={"width": 1920, "height": 1080})
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    phone_context = browser.new_context(**PHONE)
    try:
        tv = tv_context.new_page()
        tv.goto(f"{server.url}/t/{table.slug}/display")
        live(tv)
        found += axe_violations(tv, axe_source, f"{system_id} display")

        gm = gm_context.new_page()
        gm.goto(f"{server.url}/t/{table.slug}/gm?key={table.gm_token}")
        live(gm)
        tabs = gm.locator("[role=tab]")
        names = [tabs.nth(i).get_attribute("data-tab") or str(i) for i in range(tabs.count())] or ["page"]
        for index, name in enumerate(names):
            if tabs.count():
                tabs.nth(index).click()
                gm.wait_for_selector(f"#{tabs.nth(index).get_attribute('aria-controls')}:not([hidden])")
                settle(gm)
            found += axe_violations(gm, axe_source, f"{system_id} GM console, {name} tab")

        phone = phone_context.new_page()
        phone.goto(f"{server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        live(phone)
        wait_for_client_seed(phone)  # (its command, then the GM's: the phone draws the last one)
        synced = gm_call(gm, "sync", {})
        seat = next(s["id"] for s in synced["table"]["seats"] if s["name"] == "Alice")
        ack = gm_call(gm, "assign", {"battle_id": synced["table"]["battle_id"], "combatant": "c1", "controller": "seat", "seat": seat})
        assert ack["ok"], ack
        phone.wait_for_selector(f"[data-testid=battle][data-version='{ack['v']}']")
        settle(phone)
        found += axe_violations(phone, axe_source, f"{system_id} phone")
        phone.screenshot(path=str(shots / f"{system_id}-phone.png"), full_page=True)
    finally:
        for context in (tv_context, gm_context, phone_context):
            context.close()
    assert not found, "serious or critical accessibility violations:\n" + "\n".join(unique(found))


def test_front_pairing_and_join_pages_have_no_serious_violations(
    browser: Any, demo_server: tuple[LiveServer, dict[str, Any]], axe_source: str
) -> None:
    server, tables = demo_server
    table = tables["phantoms-bane"]
    found: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        for label, path in (("front page", "/"), ("join page", f"/j/{table.join_code}"), ("pairing screen", "/screen")):
            page.goto(server.url + path)
            found += axe_violations(page, axe_source, label)
        code = page.get_attribute("[data-testid=pairing-code]", "data-code")
        page.goto(f"{server.url}/pair/{code}")
        found += axe_violations(page, axe_source, "pair page without a GM key")
        page.goto(f"{server.url}/t/{table.slug}/gm?key={table.gm_token}")
        page.goto(f"{server.url}/pair/{code}")
        found += axe_violations(page, axe_source, "pair page")
    finally:
        context.close()
    assert not found, "serious or critical accessibility violations:\n" + "\n".join(found)
