"""Issue 32 on the real services: the text reader on PostgreSQL, rate limits shared through Redis."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from tests.conftest import Table, make_app
from tests.server.test_security import database_dump


def test_postgresql_gets_the_same_clear_refusal_of_control_characters(tmp_path: Path, pg_url: str) -> None:
    """PostgreSQL refuses NUL in text with an error of its own: the reader answers first, as on SQLite."""
    app = make_app(tmp_path, database_url=pg_url)
    try:
        duel = Table(app)
        before = database_dump(duel.service)
        browser = app.test_client()
        response = browser.post("/join", data={"code": duel.table.join_code, "name": "Eve\x00"})
        assert response.status_code == 400 and "U+0000" in response.get_data(as_text=True)
        response = browser.post("/tables", data={"name": "Null\x00Table", "system": "adnd"})
        assert response.status_code == 400
        gm = duel.gm()
        for event, payload in (("notes_set", {"notes": "a\x00b"}), ("roster_save", {"name": "R\ud800"}),
                               ("lineup_set", {"lineup": [{"name": "\x00"}]})):
            ack = gm.emit(event, payload, callback=True)
            assert ack["ok"] is False and ack["code"] == "invalid" and "character" in ack["error"], (event, ack)
        assert database_dump(duel.service) == before
        assert gm.emit("notes_set", {"notes": "tabs\tand\nnewlines"}, callback=True)["ok"]
    finally:
        app.extensions["battleboard"].service.engine.dispose()


def test_two_processes_share_their_counts_of_wrong_codes_through_redis(tmp_path: Path, redis_url: str) -> None:
    """Two app instances (as two server processes) counting in one Redis: wrong codes tried at either
    add up, so running more processes does not allow more guesses."""
    channel = f"battleboard-test-{secrets.token_hex(4)}"
    apps: list[Any] = [make_app(tmp_path / name, rate_limit_storage=redis_url, message_queue_channel=channel,
                                join_attempts_per_minute=4, database_url=f"sqlite:///{tmp_path / 'shared.sqlite3'}")
                       for name in ("one", "two")]
    try:
        duel = Table(apps[0])
        venue = {"REMOTE_ADDR": "198.51.100.7"}
        for i in range(4):
            answer = apps[i % 2].test_client().post("/join", data={"code": "ZZZZZZ", "name": "M"}, environ_base=venue)
            assert answer.status_code == 400
        for app in apps:
            refused = app.test_client().post("/join", data={"code": duel.table.join_code, "name": "M"}, environ_base=venue)
            assert refused.status_code == 429
        # another address is counted apart, through either process
        ok = apps[1].test_client().post("/join", data={"code": duel.table.join_code, "name": "Dee"},
                                        environ_base={"REMOTE_ADDR": "198.51.100.8"})
        assert ok.status_code == 302
    finally:
        for app in apps:
            app.extensions["battleboard"].service.engine.dispose()


def test_the_message_queues_redis_counts_the_limits_by_default(redis_url: str) -> None:
    from flask import Flask

    from webapp.config import Config
    from webapp.security import Limits

    queued = Limits(Flask("queued"), Config(message_queue=redis_url, message_queue_channel=f"test-{secrets.token_hex(4)}"))
    alone = Limits(Flask("alone"), Config())
    assert type(queued.limiter.limiter.storage).__name__ == "RedisStorage"
    assert type(alone.limiter.limiter.storage).__name__ == "MemoryStorage"
    assert queued.hit("tables", "192.0.2.1") and queued.allowed("tables", "192.0.2.1")
