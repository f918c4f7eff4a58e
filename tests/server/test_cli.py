"""The ``battleboard`` command's small things (issue 33): ``serve`` runs on gevent's WSGI server (no
Werkzeug "production deployment" warning), ``tables`` prints the port the board really runs on, and
``replay`` of a battle that does not exist says so without a traceback. Also a table's own address
``/t/<slug>/``, which sends each viewer to its page."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.browser.conftest import free_port
from webapp import cli

REPO = Path(__file__).resolve().parents[2]


def _env(instance: Path) -> dict[str, str]:
    env = {**os.environ, "BATTLEBOARD_INSTANCE": str(instance), "BATTLEBOARD_SECRET_KEY": "cli-test-secret"}
    env["DATABASE_URL"] = f"sqlite:///{instance / 'cli.sqlite3'}"
    for name in ("BATTLEBOARD_PORT", "BATTLEBOARD_HOST", "BATTLEBOARD_PUBLIC_URL", "BATTLEBOARD_ASYNC_MODE"):
        env.pop(name, None)
    return env


def battleboard(instance: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webapp.cli", *args], cwd=REPO, env=_env(instance),
                          capture_output=True, text=True, timeout=120)


def test_serve_runs_on_gevent_without_a_warning_and_tables_prints_its_real_port(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    instance.mkdir()
    port = free_port()
    assert port != 5000
    output = tmp_path / "serve.log"
    with open(output, "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "webapp.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO, env=_env(instance), stdout=log, stderr=subprocess.STDOUT, text=True,
        )
    try:
        deadline = time.monotonic() + 60
        answer = None
        while time.monotonic() < deadline and answer is None:
            assert process.poll() is None, output.read_text()
            try:
                answer = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            except OSError:
                time.sleep(0.2)
        assert answer is not None and answer.status == 200
        server = answer.headers.get("Server") or ""
        assert "Werkzeug" not in server, server
        # while it runs, `tables` (no --port) prints the links on the port it runs on
        listed = battleboard(instance, "tables")
        assert listed.returncode == 0, listed.stderr
        for slug, _, _ in cli.DEMOS.values():
            assert f"Table display: http://127.0.0.1:{port}/t/{slug}/display" in listed.stdout, listed.stdout
        assert ":5000" not in listed.stdout
        # an explicit port still wins
        assert "http://127.0.0.1:5123/t/demo/display" in battleboard(instance, "tables", "--port", "5123").stdout
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
    printed = output.read_text()
    assert "Create more tables from the front page" in printed
    for unwanted in ("Werkzeug", "production deployment", "development server", "Traceback", "KeyboardInterrupt"):
        assert unwanted not in printed, printed
    assert process.returncode == 0
    recorded = json.loads((instance / cli.SERVING_FILE).read_text())
    assert (recorded["host"], recorded["port"]) == ("127.0.0.1", port)


def test_tables_uses_the_port_and_public_address_serve_noted(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    instance.mkdir()
    cli.record_serving(instance, "0.0.0.0", 8765, "https://board.example.org/")
    args = type("Args", (), {"host": None, "port": None})()
    assert cli._link_base(args, instance) == ["https://board.example.org"]
    cli.record_serving(instance, "127.0.0.1", 8765, None)
    assert cli._link_base(args, instance) == ["http://127.0.0.1:8765"]
    args.port = 6000
    assert cli._link_base(args, instance) == ["http://127.0.0.1:6000"]
    (instance / cli.SERVING_FILE).write_text("not json")
    args.port, args.host = None, "127.0.0.1"
    assert cli._link_base(args, instance) == ["http://127.0.0.1:5000"]  # serve's own default


def test_replay_of_a_battle_that_does_not_exist_says_so_without_a_traceback(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    instance.mkdir()
    done = battleboard(instance, "replay", "999")
    assert done.returncode == 1
    assert "battle 999: no such battle" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


# --- /t/<slug>/: each viewer to its page ---------------------------------------------------------------


def test_the_tables_own_address_sends_each_viewer_to_its_page(app: Any) -> None:
    service = app.extensions["battleboard"].service
    table = service.create_table("Address", "phantoms-bane")
    here = f"/t/{table.slug}/"

    anyone = app.test_client()
    answer = anyone.get(here)
    assert answer.status_code == 302 and answer.headers["Location"] == f"/t/{table.slug}/watch"
    assert anyone.get(f"/t/{table.slug}").status_code in (301, 308)  # without the slash: to the address with it

    gm = app.test_client()
    answer = gm.get(f"{here}?key={table.gm_token}")  # the GM link's key: the console, which checks it
    assert answer.status_code == 302 and answer.headers["Location"] == f"/t/{table.slug}/gm?key={table.gm_token}"
    assert gm.get(answer.headers["Location"]).status_code == 302  # the console keeps the key in this browser
    answer = gm.get(here)  # later, without the key
    assert answer.status_code == 302 and answer.headers["Location"] == f"/t/{table.slug}/gm"
    assert gm.get(answer.headers["Location"]).status_code == 200

    player = app.test_client()
    joined = player.post("/join", data={"code": table.join_code, "name": "Alice"})
    assert joined.status_code == 302
    answer = player.get(here)
    assert answer.status_code == 302 and answer.headers["Location"] == f"/t/{table.slug}/play"
    assert player.get(answer.headers["Location"]).status_code == 200

    # a wrong key goes to the console, which refuses it; a seat of another table counts for nothing here
    assert gm.get(f"/t/{table.slug}/gm?key=wrong").status_code == 403
    other = service.create_table("Elsewhere", "phantoms-bane")
    assert player.get(f"/t/{other.slug}/").headers["Location"] == f"/t/{other.slug}/watch"


def test_an_unknown_table_address_stays_not_found(app: Any) -> None:
    client = app.test_client()
    assert client.get("/t/no-such-table/").status_code == 404
    assert client.get("/t/no-such-table/?key=abc").status_code == 404
