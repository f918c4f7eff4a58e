"""Export -> import -> verify -> replay on PostgreSQL: a battle played on SQLite travels to a board on
PostgreSQL and back, and a battle played on PostgreSQL (the psycopg command path writes the client-seed
mix) verifies after export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules import Viewer
from tests.conftest import make_app
from tests.server.test_fair_dice import play_battle
from webapp.export import export_battle, export_json, import_document, load_document
from webapp.replay import replay_battle
from webapp.store import PostgresCommandStore
from webapp.verify import verify_document

pytestmark = pytest.mark.services


@pytest.mark.parametrize("system_id", ["phantoms-bane", "olympia", "eclipse-phase"])
def test_export_import_verify_replay_on_postgresql(tmp_path: Path, pg_url: str, system_id: str) -> None:
    sqlite_app = make_app(tmp_path / "sqlite")
    pg_app = make_app(tmp_path / "pg", database_url=pg_url)
    try:
        on_sqlite, on_pg = sqlite_app.extensions["battleboard"].service, pg_app.extensions["battleboard"].service
        assert isinstance(on_pg._store, PostgresCommandStore)
        # played on PostgreSQL: client seeds go through the psycopg write statement
        table, battle_id = play_battle(on_pg, system_id)
        battle = on_pg.battle(battle_id)
        assert battle.mix and battle.setup is not None
        doc = load_document(export_json(on_pg, battle_id))
        assert verify_document(doc).ok
        assert replay_battle(on_pg, battle_id).ok
        # to SQLite and back to PostgreSQL
        _, on_sqlite_id = import_document(on_sqlite, doc)
        assert replay_battle(on_sqlite, on_sqlite_id).ok
        back = json.loads(json.dumps(export_battle(on_sqlite, on_sqlite_id)))
        new_table, imported = import_document(on_pg, back)
        assert on_pg.battle(imported).status == "ended" and new_table.gm_token != table.gm_token
        assert replay_battle(on_pg, imported).ok
        again = export_battle(on_pg, imported)
        assert verify_document(json.loads(json.dumps(again))).ok and again["dice"] == doc["dice"]
        # the imported battle is finished: a declaration is refused
        if system_id == "phantoms-bane":
            with pytest.raises(Exception, match="ended"):
                on_pg.declare(imported, Viewer.gm(), {"type": "choose", "combatant": "c1", "option": "attack"}, actor="gm")
    finally:
        sqlite_app.extensions["battleboard"].service.engine.dispose()
        pg_app.extensions["battleboard"].service.engine.dispose()
