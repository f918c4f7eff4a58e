"""The one path of a command (webapp/authority.py) on the one store interface (webapp/store.py).

Every command store has the same methods; the service never asks which store it has; and the board's
own commands (undo, a phone's client seed) and a command made beside others read what they need of
the battle's log through the store, on the command's own connection: no ORM session is opened in the
middle of a command. (The PostgreSQL store runs the same through tests/services.)"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rules import Viewer
from tests.conftest import Table
from webapp.store import CommandStore, CoreCommandStore, PostgresCommandStore, SqliteCommandStore

WEBAPP = Path(__file__).resolve().parents[2] / "webapp"
INTERFACE = [name for name in vars(CommandStore) if not name.startswith("_") and callable(getattr(CommandStore, name))]


@pytest.mark.parametrize("store", [CoreCommandStore, SqliteCommandStore, PostgresCommandStore])
def test_every_command_store_has_the_whole_interface(store: type) -> None:
    assert {"connection", "read", "write", "start", "snapshot", "events_at"} <= set(INTERFACE)
    for name in INTERFACE:
        method = getattr(store, name)
        assert callable(method), name
        wanted = list(inspect.signature(getattr(CommandStore, name)).parameters)
        assert list(inspect.signature(method).parameters) == wanted, name


def test_the_service_never_asks_which_store_it_has() -> None:
    for path in WEBAPP.glob("*.py"):
        if path.name != "store.py":
            text = path.read_text()
            assert "PostgresCommandStore" not in text and "SqliteCommandStore" not in text, path.name


def test_no_python_file_of_the_web_layer_is_over_900_lines() -> None:
    assert {path.name: n for path in WEBAPP.glob("*.py") if (n := len(path.read_text().splitlines())) > 900} == {}


@pytest.fixture(params=["sqlite", "core"])
def duel(app: Any, request: pytest.FixtureRequest) -> Iterator[Table]:
    table = Table(app)
    if request.param == "core":  # the SQLAlchemy Core store, as any other database gets it
        table.service._store = CoreCommandStore(table.service.engine)
    yield table


def no_session_inside_a_command(service: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail any ORM session opened while a command makes its step; the kinds of steps made."""
    inside: list[str] = []
    made: list[str] = []
    real_make, real_session = service._make, service.session

    def make(conn: Any, battle: Any, order: Any, version: int, key: int) -> Any:
        inside.append(order.kind)
        try:
            return real_make(conn, battle, order, version, key)
        finally:
            made.append(inside.pop() or "rules")

    def session() -> Any:
        assert not inside, f"an ORM session was opened inside a command ({inside[-1] or 'rules'})"
        return real_session()

    monkeypatch.setattr(service, "_make", make)
    monkeypatch.setattr(service, "session", session)
    return made


def dice(result: Any) -> list[Any]:
    return [ev["rolls"] for ev in result.events if ev.get("rolls")]


def test_undo_and_client_seeds_read_the_log_through_the_store(duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    service, battle_id = duel.service, duel.battle_id
    assert battle_id is not None
    made = no_session_inside_a_command(service, monkeypatch)
    gm, alice, bob = Viewer.gm(), Viewer.player(duel.seat_a.public_id), Viewer.player(duel.seat_b.public_id)

    def choose(viewer: Viewer, combatant: str, option: str, msg_id: str) -> Any:
        return service.declare(battle_id, viewer, {"type": "choose", "combatant": combatant, "option": option}, msg_id=msg_id)

    service.add_entropy(battle_id, alice, "alice-phone-seed")
    seen = duel.version
    service.add_entropy(battle_id, bob, "bob-phone-seed")
    # made on the version before Bob's seed: a command beside it, still applied
    beside = service.declare(battle_id, alice, {"type": "choose", "combatant": "jharek", "option": "defend"},
                             expected_v=seen, msg_id="beside")
    first = choose(bob, "monster", "defend", "m1")
    rolled = dice(first)
    assert rolled
    assert beside.version == seen + 2 and first.version == seen + 3

    back = service.undo(battle_id, gm, msg_id="u1")
    assert back.undo_offer is not None and back.undo_offer["v"] == beside.version  # the step an undo takes back next
    again = choose(bob, "monster", "defend", "m2")
    assert dice(again) == rolled  # never a free re-roll

    ended = service.end_battle(battle_id, gm)
    assert any(ev["type"] == "dice.revealed" for ev in ended.events)
    reopened = service.undo(battle_id, gm, msg_id="u2")
    assert [ev["type"] for ev in reopened.events][-1] == "dice.committed"  # a fresh seed for the steps not rolled yet
    service.undo(battle_id, gm, msg_id="u3")  # back before Bob's choice, rolled before the end was taken back
    remade = choose(bob, "monster", "defend", "m3")
    assert dice(remade) == rolled  # its revealed dice again
    while service.undo_offer(battle_id, duel.version) is not None:
        service.undo(battle_id, gm)
    with pytest.raises(Exception, match="nothing to undo"):
        service.undo(battle_id, gm)
    assert {"undo", "entropy", "rules"} <= set(made)
