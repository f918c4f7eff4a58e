"""Undo on PostgreSQL: the psycopg command path keeps each state's step (its read brings it along,
its write stores it), so a step undone and made again rolls the same faces there too, on the read
path and on the path that applies to the battle as the process knows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rules import Viewer
from tests.conftest import duel_lineup, make_app
from webapp.export import export_battle
from webapp.replay import replay_battle
from webapp.store import PostgresCommandStore
from webapp.verify import verify_document

pytestmark = pytest.mark.services


def faces(service: Any, battle_id: int, version: int) -> list[list[int]]:
    return [r["faces"] for e in service.events_since(battle_id, version - 1) if e["v"] == version for r in e.get("rolls") or []]


@pytest.mark.parametrize("with_msg_ids", [False, True])
def test_a_step_undone_on_postgresql_rolls_the_same_faces_again(tmp_path: Path, pg_url: str, with_msg_ids: bool) -> None:
    app = make_app(tmp_path, database_url=pg_url)
    service = app.extensions["battleboard"].service
    try:
        assert isinstance(service._store, PostgresCommandStore)
        table = service.create_table("Duel on PostgreSQL", "phantoms-bane")
        service.set_lineup(table.id, duel_lineup(a={"health": 40}, b={"health": 40}))
        battle_id = service.start_battle(table.id, seed="pg-undo-seed").battle_id
        gm = Viewer.gm()
        sent = iter(range(1, 1000))

        def choose(combatant: str, option: str) -> int:
            msg_id = f"m{next(sent)}" if with_msg_ids else None
            return service.declare(battle_id, gm, {"type": "choose", "combatant": combatant, "option": option}, actor="gm", msg_id=msg_id).version

        def undo() -> None:
            service.undo(battle_id, gm, msg_id=f"u{next(sent)}" if with_msg_ids else None)

        choose("jharek", "attack")
        first = faces(service, battle_id, choose("monster", "attack"))
        choose("jharek", "press")
        second = faces(service, battle_id, choose("monster", "defend"))
        assert first and second and first != second
        undo(), undo(), undo()  # back to Jharek's first choice
        assert faces(service, battle_id, choose("monster", "attack")) == first
        choose("jharek", "press")
        assert faces(service, battle_id, choose("monster", "defend")) == second
        service.end_battle(battle_id, gm)
        undo()  # the end taken back: a new seed for the steps not rolled yet
        undo()
        assert faces(service, battle_id, choose("monster", "defend")) == second
        service.end_battle(battle_id, gm)
        doc = json.loads(json.dumps(export_battle(service, battle_id)))
        verdict = verify_document(doc)
        assert verdict.ok, verdict.message
        assert replay_battle(service, battle_id).ok
    finally:
        service.engine.dispose()
