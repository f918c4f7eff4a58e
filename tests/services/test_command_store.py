"""The command store's contract, on SQLite (SQLAlchemy Core) and on PostgreSQL (psycopg directly).

Both must write a command whole or not at all: the compare-and-set decides, a message id is taken
once, and what was written reads back the same through the ORM models.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, col, select

from rules import Viewer
from tests.conftest import Table, make_app
from webapp.models import BattleCommand, BattleEvent, BattleSnapshot, Seat, utcnow
from webapp.store import CommandWrite, CoreCommandStore, PostgresCommandStore, SqliteCommandStore

pytestmark = pytest.mark.services


@pytest.fixture(params=["sqlite", "sqlite-core", "postgresql"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Table]:
    if request.param == "postgresql":
        pytest.importorskip("psycopg")
        url = request.getfixturevalue("pg_url")
        app = make_app(tmp_path, database_url=url)
    else:
        app = make_app(tmp_path)
    try:
        table = Table(app)
        if request.param == "sqlite-core":  # the SQLAlchemy Core store, used for engines without their own
            table.service._store = CoreCommandStore(table.service.engine)
        yield table
    finally:
        app.extensions["battleboard"].service.engine.dispose()


def _write(table: Table, current: int, msg_id: str, events: list[dict[str, Any]] | None = None) -> CommandWrite:
    state = dict(table.state, marker=f"after {msg_id}")
    return CommandWrite(
        battle_id=table.battle_id or 0,
        table_id=table.table.id,
        current=current,
        new_version=current + 1,
        state=state,
        status="active",
        prev_version=None,
        checkpoint=False,
        events=events if events is not None else [{"type": "test.done", "text": "<b>done</b>", "visibility": "gm", "n": 2**40}],
        msg_id=msg_id,
        actor="gm",
        declaration={"type": "test", "big": 2**53 - 1},
        at=utcnow(),
    )


def test_the_engine_gets_its_own_store(table: Table) -> None:
    store = table.service._store
    expected = PostgresCommandStore if table.service.engine.dialect.name == "postgresql" else SqliteCommandStore
    assert type(store) is expected or type(store) is CoreCommandStore


def test_a_write_is_whole_and_reads_back_through_the_models(table: Table) -> None:
    store, current = table.service._store, table.version
    with store.connection() as conn:
        found = store.read(conn, table.battle_id, "m-1")
        assert found is not None and found.seen_version is None
        assert found.battle.version == current and found.battle.table_id == table.table.id
        assert sorted(found.seat_ids or []) == sorted([table.seat_a.public_id, table.seat_b.public_id])
        assert store.write(conn, _write(table, current, "m-1"))
    assert table.version == current + 1
    assert table.state["marker"] == "after m-1"
    with Session(table.service.engine) as s:
        snap = s.get(BattleSnapshot, (table.battle_id, current + 1))
        assert snap is not None and snap.prev_version is None and snap.checkpoint is False
        assert snap.state["marker"] == "after m-1"
        events = s.exec(select(BattleEvent).where(BattleEvent.battle_id == table.battle_id, BattleEvent.version == current + 1)).all()
        assert [(e.index, e.type, e.visibility) for e in events] == [(0, "test.done", "gm")]
        assert events[0].payload == {"type": "test.done", "text": "<b>done</b>", "n": 2**40}
        command = s.exec(select(BattleCommand).where(BattleCommand.msg_id == "m-1")).one()
        assert command.version == current + 1 and command.declaration == {"type": "test", "big": 2**53 - 1}
    with store.connection() as conn:
        again = store.read(conn, table.battle_id, "m-1")
        assert again is not None and again.seen_version == current + 1


def test_a_lost_compare_and_set_writes_nothing(table: Table) -> None:
    store, current = table.service._store, table.version
    with store.connection() as conn:
        assert not store.write(conn, _write(table, current - 1, "stale-1"))
    assert table.version == current
    with Session(table.service.engine) as s:
        assert s.exec(select(BattleCommand).where(BattleCommand.msg_id == "stale-1")).first() is None
        assert s.exec(select(BattleEvent).where(col(BattleEvent.version) > current)).first() is None


def test_a_message_id_is_taken_once(table: Table) -> None:
    store, current = table.service._store, table.version
    with store.connection() as conn:
        assert store.write(conn, _write(table, current, "once"))
        # the same message id at the next version (another process racing with the same resend)
        assert not store.write(conn, _write(table, current + 1, "once"))
    assert table.version == current + 1


def test_a_write_without_events(table: Table) -> None:
    store, current = table.service._store, table.version
    with store.connection() as conn:
        assert store.write(conn, _write(table, current, "quiet", events=[]))
    assert table.version == current + 1


def test_declarations_go_through_the_store(table: Table) -> None:
    seat = table.seat_a.public_id
    before = table.version
    result = table.service.declare(
        table.battle_id, Viewer.player(seat), {"type": "choose", "combatant": "jharek", "option": "attack"},
        expected_v=before, msg_id="through-1", table_id=table.table.id,
    )
    assert result.version == before + 1 and not result.duplicate
    again = table.service.declare(
        table.battle_id, Viewer.player(seat), {"type": "choose", "combatant": "jharek", "option": "attack"},
        expected_v=before, msg_id="through-1", table_id=table.table.id,
    )
    assert again.duplicate and again.version == before + 1
    assert table.service.seat_ids(table.table.id) == [table.seat_a.public_id, table.seat_b.public_id]


def test_a_dead_pooled_connection_is_replaced_before_the_read(pg_admin: str, pg_url: str, tmp_path: Path) -> None:
    import psycopg

    app = make_app(tmp_path, database_url=pg_url)
    try:
        table = Table(app)
        store = table.service._store
        assert isinstance(store, PostgresCommandStore)
        with store.connection() as conn:  # a connection in the store's pool, which does not ping
            assert store.read(conn, table.battle_id, None) is not None
        name = pg_url.rsplit("/", 1)[1]
        with psycopg.connect(pg_admin, autocommit=True) as admin:
            admin.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        with store.connection() as conn:
            found = store.read(conn, table.battle_id, None)
            assert found is not None and found.battle.version == table.version
            assert store.write(conn, _write(table, found.battle.version, "after-restart"))
    finally:
        app.extensions["battleboard"].service.engine.dispose()


def _choose(service: Any, table: Table, seat: str, combatant: str, msg_id: str, expected_v: int | None = None) -> Any:
    return service.declare(
        table.battle_id, Viewer.player(seat), {"type": "choose", "combatant": combatant, "option": "attack"},
        expected_v=expected_v, msg_id=msg_id, table_id=table.table.id,
    )


def test_the_next_command_applies_to_the_version_this_process_wrote_without_reading_it(table: Table, monkeypatch: Any) -> None:
    service, store = table.service, table.service._store
    reads: list[int] = []
    real_read = store.read
    monkeypatch.setattr(store, "read", lambda conn, battle_id, msg_id: reads.append(battle_id) or real_read(conn, battle_id, msg_id))
    assert table.battle_id is not None
    service._forget_battle(table.battle_id)  # as in a process that has not written this battle yet
    first = _choose(service, table, table.seat_a.public_id, "jharek", "fast-1", table.version)
    assert reads == [table.battle_id]
    second = _choose(service, table, table.seat_b.public_id, "monster", "fast-2", first.version)
    assert reads == [table.battle_id], "the second command used the version the first one wrote"
    assert second.version == first.version + 1 == table.version
    assert table.state["turn"] == 2, "both choices applied: the turn resolved"
    # a resend of the last message is recognised (the message id refuses the write, then the read tells)
    again = _choose(service, table, table.seat_b.public_id, "monster", "fast-2")
    assert again.duplicate and again.version == second.version and table.version == second.version


def test_a_battle_moved_on_by_another_process_is_read_again(table: Table) -> None:
    """Two services on one database stand for two server processes."""
    from webapp.service import BattleService

    here = table.service
    there = BattleService(here.engine, command_engine=here._store.engine)
    alice, bob = table.seat_a.public_id, table.seat_b.public_id
    start = table.version
    assert _choose(here, table, alice, "jharek", "here-1", start).version == start + 1  # here remembers start + 1
    # the other process applies the next choice: the turn resolves there
    assert _choose(there, table, bob, "monster", "there-1", start + 1).version == start + 2
    resolved = table.state
    assert resolved["turn"] == 2
    # here, a choice without an expected version first tries the remembered (old) state: the
    # compare-and-set refuses it and the command is applied to the state the other process wrote
    result = _choose(here, table, alice, "jharek", "here-2")
    assert result.version == start + 3 and not result.duplicate
    after = table.state
    assert after["turn"] == 2 and after["choices"]["jharek"] == "attack" and after["choices"]["monster"] is None
    # an expected version the remembered one does not match goes the long way at once
    assert _choose(there, table, bob, "monster", "there-2", start + 3).version == start + 4
    assert _choose(here, table, alice, "jharek", "here-3", start + 4).version == start + 5
    with pytest.raises(Exception, match="moved on"):  # (a choice for jharek came in since start + 4)
        _choose(there, table, alice, "jharek", "there-3", start + 4)
    # a choice for the other side made on start + 4 read the same board: the secret choices are simultaneous
    assert _choose(there, table, bob, "monster", "there-4", start + 4).version == start + 6
    resolved = table.state  # both choices were in: turn 3 resolved (and may have ended the duel)
    assert resolved["status"] == "ended" or resolved["turn"] == 4


def test_a_refusal_from_the_remembered_state_is_checked_against_the_database(table: Table) -> None:
    from webapp.service import BattleService

    here = table.service
    there = BattleService(here.engine, command_engine=here._store.engine)
    alice = table.seat_a.public_id
    here.end_battle(table.battle_id, Viewer.gm())  # here remembers the battle as ended
    there.undo(table.battle_id, Viewer.gm())  # the other process's GM takes the ending back
    assert table.state["status"] == "active"
    result = _choose(here, table, alice, "jharek", "after-undo")  # refused by the remembered state only
    assert not result.duplicate and table.state["choices"]["jharek"] == "attack"


def test_a_dead_pooled_connection_under_a_remembered_battle_is_replaced(pg_admin: str, pg_url: str, tmp_path: Path) -> None:
    """The command that would not read first (see above) finds the connection dead on its write."""
    import psycopg

    app = make_app(tmp_path, database_url=pg_url)
    try:
        table = Table(app)
        service = table.service
        first = _choose(service, table, table.seat_a.public_id, "jharek", "before-restart", table.version)
        name = pg_url.rsplit("/", 1)[1]
        with psycopg.connect(pg_admin, autocommit=True) as admin:
            admin.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        second = _choose(service, table, table.seat_b.public_id, "monster", "after-restart", first.version)
        assert second.version == first.version + 1 and not second.duplicate
        assert table.state["turn"] == 2
    finally:
        app.extensions["battleboard"].service.engine.dispose()


def test_the_write_reads_the_seats_along(table: Table) -> None:
    store, current = table.service._store, table.version
    with store.connection() as conn:
        written = store.write(conn, _write(table, current, "seats"))
    assert written is not None
    if isinstance(store, SqliteCommandStore | PostgresCommandStore):
        assert written.seat_ids == [table.seat_a.public_id, table.seat_b.public_id]
    else:
        assert written.seat_ids is None  # the broadcaster's short seat cache covers it


def test_a_seat_that_joined_elsewhere_is_in_the_next_update_without_a_read(table: Table) -> None:
    from webapp.service import BattleService

    here = table.service
    first = _choose(here, table, table.seat_a.public_id, "jharek", "seat-1", table.version)  # here remembers the battle
    there = BattleService(here.engine, command_engine=here._store.engine)
    _, newcomer = there.join(table.table.join_code, "Carol")
    second = _choose(here, table, table.seat_b.public_id, "monster", "seat-2", first.version)
    if isinstance(here._store, SqliteCommandStore | PostgresCommandStore):
        assert second.seat_ids is not None and newcomer.public_id in second.seat_ids


def test_a_battle_another_process_sent_along_needs_no_read(table: Table, monkeypatch: Any) -> None:
    """A command's update carries the battle through the message queue: the process that gets it
    applies its own next command to that version without reading it, and the compare-and-set still
    catches a version it has not been sent."""
    from webapp import wire
    from webapp.service import BattleService

    here = table.service
    there = BattleService(here.engine, command_engine=here._store.engine)
    alice, bob = table.seat_a.public_id, table.seat_b.public_id
    reads: list[int] = []
    real_read = here._store.read
    monkeypatch.setattr(here._store, "read", lambda conn, battle_id, msg_id: reads.append(battle_id) or real_read(conn, battle_id, msg_id))

    def queue(result: Any) -> dict[str, Any]:  # as the other process's message reaches this one
        return wire.loads(wire.dumps(there.battle_fields(result.battle)))

    start = table.version
    first = _choose(there, table, alice, "jharek", "there-1", start)
    assert here.learn_battle(queue(first))
    second = _choose(here, table, bob, "monster", "here-1", first.version)
    assert reads == [], "the battle came with the other process's update"
    assert second.version == start + 2 and table.state["turn"] == 2, "both choices applied: the turn resolved"
    # an older version sent late does not replace the newer one this process wrote
    assert not here.learn_battle(queue(first))
    third = _choose(there, table, alice, "jharek", "there-2", second.version)
    # the update of `third` never arrives here: the remembered version is refused, and read again
    fourth = _choose(here, table, bob, "monster", "here-2")
    assert reads == [table.battle_id] and fourth.version == third.version + 1 and table.state["turn"] == 3
    # a message without a battle's shape is ignored
    for broken in ({}, {**queue(third), "state": None}, {**queue(third), "version": "9"}, {**queue(third), "id": None}):
        assert not here.learn_battle(broken)


def test_a_started_battle_is_whole_and_its_first_command_needs_no_read(table: Table, monkeypatch: Any) -> None:
    """A new battle (on PostgreSQL one read and one write statement, elsewhere through the ORM)
    reads back the same through the models; the process that started it knows its first version."""
    from webapp.models import Battle, GameTable

    service, store = table.service, table.service._store
    started = service.start_battle(table.table.id, seed="start-seed")
    assert started.version == 1 and started.table is not None and started.seats is not None
    assert started.table.battle_id == started.battle_id
    assert [seat.public_id for seat in started.seats] == [table.seat_a.public_id, table.seat_b.public_id] == started.seat_ids
    with Session(service.engine) as s:
        battle = s.get(Battle, started.battle_id)
        row = s.get(GameTable, table.table.id)
        assert battle is not None and row is not None and row.battle_id == started.battle_id
        assert battle.version == 1 and battle.seed == "start-seed" and battle.status == "active" and battle.table_id == row.id
        snap = s.get(BattleSnapshot, (started.battle_id, 1))
        assert snap is not None and snap.state == battle.state and snap.checkpoint is True and snap.prev_version is None
        events = s.exec(select(BattleEvent).where(BattleEvent.battle_id == started.battle_id).order_by(col(BattleEvent.index))).all()
        assert [(e.version, e.index, e.type) for e in events] == [(1, i, ev["type"]) for i, ev in enumerate(started.events)]
        # the table the start passes along (for the rooms' table views) is the table as stored
        assert row.model_dump() == started.table.model_dump()
        seats = s.exec(select(Seat).where(Seat.table_id == row.id).order_by(col(Seat.id))).all()
        assert [x.model_dump() for x in seats] == [x.model_dump() for x in started.seats]
    reads: list[int] = []
    real_read = store.read
    monkeypatch.setattr(store, "read", lambda conn, battle_id, msg_id: reads.append(battle_id) or real_read(conn, battle_id, msg_id))
    table.battle_id = started.battle_id
    first = _choose(service, table, table.seat_a.public_id, "jharek", "after-start-1", 1)
    assert reads == [] and first.version == 2 == table.version


def test_a_start_refuses_a_lineup_seat_that_is_not_at_the_table(table: Table) -> None:
    from rules import InvalidDeclaration
    from webapp.models import GameTable

    service = table.service
    with Session(service.engine) as s:
        row = s.get(GameTable, table.table.id)
        assert row is not None
        lineup = [dict(entry) for entry in row.lineup]
        lineup[0]["seat"] = "s-nobody"
        row.lineup = lineup
        s.add(row)
        s.commit()
    before = table.battle_id
    with pytest.raises(InvalidDeclaration, match="seat is not at this table"):
        service.start_battle(table.table.id)
    with Session(service.engine) as s:
        assert s.get(GameTable, table.table.id).battle_id == before  # type: ignore[union-attr]
