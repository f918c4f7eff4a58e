"""Provable dice in Chromium: the phone adds its client seed by itself, the GM downloads the finished
battle from the console, the file verifies, and another browser imports it from the front page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import LiveServer
from tests.browser.test_duel import PHONE, create_duel_table, give_to_player, join_as, start

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def test_phone_seed_download_verify_and_import(browser: Any, live_server: LiveServer, shots: Path, tmp_path: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    phone_context = browser.new_context(**PHONE)
    other_context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        gm, phone, other = gm_context.new_page(), phone_context.new_page(), other_context.new_page()
        create_duel_table(gm, live_server)
        join_as(phone, gm, "Alice")
        give_to_player(gm, 0, "Alice")
        start(gm)
        # the phone sends its client seed by itself: the log on every screen says so
        gm.wait_for_selector("[data-type='dice.entropy']", state="attached")
        phone.wait_for_selector("[data-testid=choose-attack][data-combatant=c1]")
        panel = gm.locator("[data-testid=export-panel]")
        panel.wait_for()
        assert "so far" in panel.inner_text()  # running: no seed in the download yet
        phone.click("[data-testid=choose-attack][data-combatant=c1]")
        gm.click("[data-testid=choose-attack][data-combatant=c2]")
        gm.wait_for_selector("li:has-text('Turn 1: dice')", state="attached")  # turn 1 rolled, from the mixed seed
        gm.on("dialog", lambda dialog: dialog.accept())
        if gm.locator("[data-testid=end-battle]").count():
            gm.click("[data-testid=end-battle]")
        gm.wait_for_selector("[data-testid=export-panel] [data-testid=verify-script]")
        gm.click("[data-testid=share-battle]")
        gm.wait_for_timeout(300)
        panel.scroll_into_view_if_needed()
        gm.screenshot(path=str(shots / "gm-export-panel.png"), full_page=True)
        panel.screenshot(path=str(shots / "gm-export-panel-close.png"))
        with gm.expect_download() as info:
            gm.click("[data-testid=export-battle]")
        path = tmp_path / "battle.json"
        info.value.save_as(str(path))
        doc = json.loads(path.read_text())
        assert doc["dice"]["seed"] and doc["dice"]["client_seeds"] and doc["dice"]["client_seeds"][0]["client_seed"]
        run = subprocess.run([sys.executable, "-m", "webapp.cli", "verify", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert run.returncode == 0 and run.stdout.startswith("OK:"), run.stdout + run.stderr
        script = subprocess.run([sys.executable, "-I", str(ROOT / "static" / "verify_dice.py"), str(path)], capture_output=True, text=True, timeout=60)
        assert script.returncode == 0, script.stdout + script.stderr
        # the board serves the script
        assert other.goto(live_server.url + "/static/verify_dice.py").status == 200
        # another browser imports it from the front page and lands on its replay
        other.goto(live_server.url + "/")
        other.set_input_files("[data-testid=import-file]", str(path))
        other.screenshot(path=str(shots / "front-page-import.png"), full_page=True)
        other.click("[data-testid=import-battle]")
        other.wait_for_url("**/replay")
        assert "/battles/" in other.url
        other.screenshot(path=str(shots / "imported-replay.png"), full_page=True)
    finally:
        for context in (gm_context, phone_context, other_context):
            context.close()
