"""PostgreSQL away for a moment: clear errors while it is gone, and the pool recovers when it is back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import Table, make_app
from tests.server.test_sockets import choose

pytestmark = pytest.mark.services


def _admin(pg_admin: str, sql: str) -> None:
    with psycopg.connect(pg_admin, autocommit=True) as conn:
        conn.execute(sql)


def test_postgresql_going_away_gives_clear_errors_and_the_pool_recovers(pg_admin: str, pg_url: str, tmp_path: Path) -> None:
    app = make_app(tmp_path, database_url=pg_url, db_timeout=2)
    name = pg_url.rsplit("/", 1)[1]
    try:
        duel = Table(app)
        gm, alice = duel.gm(), duel.alice()
        assert choose(gm, duel, "monster", "attack")["ok"]
        before = duel.version
        # every open connection is cut (a restart, a failover): the pool must not hand out dead ones
        _admin(pg_admin, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        assert choose(alice, duel, "jharek", "defend")["ok"], "pool_pre_ping replaces connections that died"
        assert duel.version == before + 1
        # now the database refuses connections for a while
        _admin(pg_admin, f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        _admin(pg_admin, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        try:
            v = before + 1
            for client, combatant in ((gm, "monster"), (alice, "jharek")):
                client.get_received()
                ack = client.emit("declare", {"battle_id": duel.battle_id, "expected_v": v,
                                              "declaration": {"type": "choose", "combatant": combatant, "option": "press"}}, callback=True)
                assert ack["ok"] is False and ack["code"] == "unavailable", ack
                sync = client.emit("sync", {}, callback=True)
                assert sync["ok"] is False and sync["code"] == "unavailable", sync
                assert "database is unavailable" in sync["error"]
        finally:
            _admin(pg_admin, f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
        # back: the same sockets carry on, nothing was half-written
        sync: dict[str, Any] = gm.emit("sync", {}, callback=True)
        assert sync["ok"] and sync["battle"]["v"] == before + 1
        assert choose(alice, duel, "jharek", "press")["ok"]
        assert duel.version == before + 2
    finally:
        app.extensions["battleboard"].service.engine.dispose()
