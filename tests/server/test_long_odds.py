"""A long odds simulation never holds up the rest of the board (webapp/offload.py).

``battleboard serve`` runs on gevent: one loop serves every page and socket of the process. Olympia's
odds simulate the battle a thousand times (seconds of work); run in the handler itself, they held up
every table of the process, and Ctrl+C, until they ended. Here a real ``serve`` computes them while
the same process answers a page and stops on Ctrl+C at once."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from rules.core import Viewer
from tests.browser.conftest import GmSocket, LiveServer
from tests.browser.test_display import service_for

ARMIES = [
    {"name": "Lord of the keep", "leader": True, "soldier": 900, "pikeman": 400, "side": "A", "controller": "gm"},
    {"name": "Archers of the keep", "behind": 1, "archer": 300, "side": "A", "controller": "gm"},
    {"name": "Knight commander", "leader": True, "knight": 300, "cavalier": 300, "side": "B", "controller": "gm"},
    {"name": "Levy", "soldier": 900, "side": "B", "controller": "gm"},
]


def test_a_page_is_served_and_ctrl_c_stops_the_board_while_odds_are_simulated(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "instance").start()
    try:
        service = service_for(server)
        table = service.create_table("Siege", "olympia")
        service.set_lineup(table.id, ARMIES)
        battle_id = service.start_battle(table.id, seed="long-odds").battle_id
        service.declare(battle_id, Viewer.gm(), {"type": "begin"})
        service.engine.dispose()
        gm = GmSocket(server.url, table.slug, table.gm_token)
        answered: dict[str, Any] = {}

        def ask() -> None:
            answered["ack"] = gm.client.call("odds", {"battle_id": battle_id, "declaration": {}}, timeout=120)
            answered["at"] = time.monotonic()

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        time.sleep(0.3)  # the question is in and the simulation has begun
        started = time.monotonic()
        with urllib.request.urlopen(server.url + "/healthz", timeout=30) as response:
            assert response.status == 200
        served = time.monotonic()
        assert "at" not in answered, "the simulation ended before the page was asked for: no proof either way"
        assert served - started < 2.0, f"the page waited {served - started:.1f} s for the simulation"
        asking.join(120)
        assert answered["ack"]["ok"], answered["ack"]
        gm.close()

        # and Ctrl+C stops it at once, in the middle of another simulation
        gm = GmSocket(server.url, table.slug, table.gm_token)
        threading.Thread(target=lambda: gm.client.call("odds", {"battle_id": battle_id, "declaration": {"battles": 999}},
                                                       timeout=120), daemon=True).start()
        time.sleep(0.3)
        stopping = time.monotonic()
        server.stop()
        assert server.process is not None and server.process.poll() is not None
        assert time.monotonic() - stopping < 5.0
    finally:
        server.kill()
