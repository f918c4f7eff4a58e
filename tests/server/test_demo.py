"""The demo tables of ``battleboard serve``: one per rule system, each with a lineup from the system's
presets and its battle started, prepared once (a restart keeps them), and the links printed for each
(table display, GM console, join, spectators); ``battleboard tables`` prints the display link too."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rules import Viewer, available_systems, get_system
from tests.browser.conftest import free_port
from tests.conftest import make_app
from webapp import cli
from webapp.models import GameTable

REPO = Path(__file__).resolve().parents[2]
SYSTEM_IDS = sorted(system.id for system in available_systems())


def started(service: Any, table: GameTable) -> dict[str, Any]:
    assert table.battle_id is not None, f"{table.system_id}: the demo's battle is started"
    battle = service.battle(table.battle_id)
    assert battle.status == "active", f"{table.system_id}: the demo is ready to play, not {battle.status}"
    view = get_system(table.system_id).view_for(battle.state, Viewer.gm())
    assert view.get("legal"), f"{table.system_id}: the GM has something to do in the demo"
    return battle.state


def test_ensure_demo_prepares_a_started_battle_of_every_system_once(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    try:
        tables = cli.ensure_demo(app)
        assert sorted(t.system_id for t in tables) == SYSTEM_IDS == sorted(cli.DEMOS)
        for table in tables:
            started(service, table)
            names = [entry["name"] for entry in table.lineup]
            presets = {p["name"] for p in get_system(table.system_id).presets()}
            assert set(names) <= presets and len(names) >= 2, f"{table.system_id}: a lineup from the presets"
            assert {entry["side"] for entry in table.lineup} == {"A", "B"}
        again = cli.ensure_demo(app)  # a restart of the server
        assert [(t.id, t.battle_id) for t in again] == [(t.id, t.battle_id) for t in tables]
        with service.session() as s:
            assert len(s.query(GameTable).all()) == len(SYSTEM_IDS)
    finally:
        service.engine.dispose()


def test_a_demo_table_left_without_a_battle_gets_one(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    try:
        slug, name, _ = cli.DEMOS["eclipse-phase"]
        service.create_table(name, "eclipse-phase", slug=slug)  # a start that stopped half-way
        table = next(t for t in cli.ensure_demo(app) if t.slug == slug)
        started(service, table)
    finally:
        service.engine.dispose()


def test_the_demo_report_has_every_link(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    try:
        tables = cli.ensure_demo(app)
        report = cli.demo_report(tables, ["http://127.0.0.1:5000", "http://192.168.1.20:5000"])
        for table in tables:
            for base in ("http://127.0.0.1:5000", "http://192.168.1.20:5000"):
                assert f"Table display: {base}/t/{table.slug}/display" in report
                assert f"GM console:    {base}/t/{table.slug}/gm?key={table.gm_token}" in report
                assert f"Players join:  {base}/j/{table.join_code}" in report
                assert f"Spectators:    {base}/t/{table.slug}/watch" in report
        assert "http://192.168.1.20:5000/screen" in report
    finally:
        service.engine.dispose()


def _env(instance: Path) -> dict[str, str]:
    env = {**os.environ, "BATTLEBOARD_INSTANCE": str(instance), "BATTLEBOARD_SECRET_KEY": "demo-test-secret"}
    env["DATABASE_URL"] = f"sqlite:///{instance / 'demo.sqlite3'}"
    return env


def test_serve_prints_the_links_of_five_demos_and_tables_prints_the_display_links(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    instance.mkdir()
    env = _env(instance)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "webapp.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Create more tables"):
                break
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
    printed = "".join(lines)
    assert len(re.findall(r"Table display: http://127\.0\.0\.1:\d+/t/[\w-]+/display", printed)) == len(SYSTEM_IDS), printed
    assert len(re.findall(r"GM console: +http://127\.0\.0\.1:\d+/t/[\w-]+/gm\?key=\S+", printed)) == len(SYSTEM_IDS)
    assert len(re.findall(r"Players join: +http://127\.0\.0\.1:\d+/j/[A-Z0-9]+", printed)) == len(SYSTEM_IDS)
    for system_id in SYSTEM_IDS:
        assert f"({system_id})" in printed

    listed = subprocess.run(
        [sys.executable, "-m", "webapp.cli", "tables", "--host", "127.0.0.1", "--port", "5000"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    for slug, _, _ in cli.DEMOS.values():
        assert f"Table display: http://127.0.0.1:5000/t/{slug}/display" in listed.stdout


@pytest.mark.parametrize("system_id", sorted(cli.DEMOS))
def test_every_demo_lineup_comes_from_the_presets(system_id: str) -> None:
    lineup = cli.demo_lineup(system_id)
    assert get_system(system_id).validate_draft(lineup)
