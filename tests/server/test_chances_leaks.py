"""Who's winning over the socket (webapp/chances_live.py): who gets the ``chances`` message, the GM's
two switches, a GM's secret, the sync, and a newer version superseding an older one. The leak
contract: no ``chances`` reaches a viewer who may not see it."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from rules import Viewer
from tests.conftest import Table, close_app, duel_lineup, make_app
from webapp import chances_live
from webapp.chances_live import LiveChances, Note, live


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    # the worker does not go on with a duel's exact chain between updates: only one test waits for
    # that, and it says so (else a whole chain was worked out beside every test, about 10 s of CPU)
    monkeypatch.setattr(chances_live, "REFINING", 0)
    application = make_app(tmp_path, chances_seconds=0.3)  # live chances on, kept short
    yield application
    close_app(application)


def chances_of(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "chances"]


def wait_for_chances(client: Any, v: int, timeout: float = 30.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``chances`` of version ``v`` this client was sent (waiting for the worker), and all it got."""
    got: list[dict[str, Any]] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got += chances_of(client)
        found = [c for c in got if c["v"] == v]
        if found:
            return found[-1], got
        time.sleep(0.05)
    raise AssertionError(f"no chances of version {v} within {timeout} s (got {got})")


def idle(app: Any, timeout: float = 30.0) -> None:
    """Wait until the worker has nothing left to work out."""
    chances = live(app.extensions["battleboard"])
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not chances._notes and chances.busy is None:
            return
        time.sleep(0.05)
    raise AssertionError("the chances' worker is still busy")


def choose_both(duel: Table, alice: Any, bob: Any, msg: str) -> int:
    v = duel.version
    alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": v, "msg_id": f"{msg}-a",
                           "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}}, callback=True)
    ack = bob.emit("declare", {"battle_id": duel.battle_id, "expected_v": v + 1, "msg_id": f"{msg}-b",
                               "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}}, callback=True)
    assert ack["ok"], ack
    return int(ack["v"])


def switch(gm: Any, **settings: bool) -> dict[str, Any]:
    ack: dict[str, Any] = gm.emit("display_set", settings, callback=True)
    return ack


def test_only_the_gm_gets_the_chances_by_default(app: Any) -> None:
    duel = Table(app)
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    v = choose_both(duel, alice, bob, "t1")
    message, _ = wait_for_chances(gm, v)
    assert message["battle_id"] == duel.battle_id
    assert {s["side"] for s in message["sides"]} == {"A", "B"}
    total = sum(s["p"] for s in message["sides"]) + message["draw"] + message["none"]
    assert total == pytest.approx(1.0, abs=0.002)
    idle(app)
    for other in (alice, bob, spectator):
        assert chances_of(other) == [], "no chances reach a page the GM has not let see them"


def test_the_tv_switch_and_the_phones_switch_are_apart(app: Any) -> None:
    duel = Table(app)
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    ack = switch(gm, show_chances=True)
    assert ack["ok"] and ack["display"]["show_chances"] is True and ack["display"]["phones_chances"] is False
    v = choose_both(duel, alice, bob, "t1")
    wait_for_chances(gm, v)
    seen, _ = wait_for_chances(spectator, v)
    idle(app)
    assert chances_of(alice) == [] and chances_of(bob) == []
    assert switch(gm, phones_chances=True)["ok"]
    v = choose_both(duel, alice, bob, "t2")
    for client in (gm, spectator, alice, bob):
        wait_for_chances(client, v)
    assert switch(gm, show_chances=False)["ok"]
    v = choose_both(duel, alice, bob, "t3")
    wait_for_chances(alice, v)
    idle(app)
    assert chances_of(spectator) == []


@pytest.mark.parametrize("role", ["alice", "spectator"])
def test_only_the_gm_switches(app: Any, role: str) -> None:
    duel = Table(app)
    client = getattr(duel, role)()
    for settings in ({"show_chances": True}, {"phones_chances": True}):
        ack = client.emit("display_set", settings, callback=True)
        assert ack["ok"] is False and ack["code"] == "forbidden", ack
    table = duel.service.table(table_id=duel.table.id)
    assert not (table.display or {}).get("show_chances") and not (table.display or {}).get("phones_chances")


@pytest.mark.parametrize("payload", [{"show_chances": "yes"}, {"phones_chances": 1}, {"show_chances": None},
                                     {"who_is_winning": True}, {}, "on"])
def test_bad_switches_are_refused_and_change_nothing(app: Any, payload: Any) -> None:
    duel = Table(app)
    ack = duel.gm().emit("display_set", payload, callback=True)
    assert ack["ok"] is False and ack["error"], ack
    table = duel.service.table(table_id=duel.table.id)
    assert not (table.display or {}).get("show_chances")


def test_a_gms_secret_sends_the_others_no_chances(app: Any) -> None:
    duel = Table(app)
    gm, alice, spectator = duel.gm(), duel.alice(), duel.spectator()
    switch(gm, show_chances=True, phones_chances=True)
    v = duel.version
    ack = gm.emit("declare", {"battle_id": duel.battle_id, "expected_v": v, "msg_id": "secret",
                              "declaration": {"type": "set_escape", "possible": False}}, callback=True)
    assert ack["ok"], ack
    wait_for_chances(gm, v + 1)
    idle(app)
    for client in (alice, spectator):
        assert [c for c in chances_of(client) if c["v"] > v] == [], "nothing of the GM's secret version"
    # their sync holds the older version: no chances of the GM's (they wait for the next update)
    synced = spectator.emit("sync", {"battle_id": duel.battle_id, "since_v": v}, callback=True)
    assert synced["battle"]["v"] == v and synced["chances"] is None


def test_a_page_that_syncs_gets_the_chances_of_its_version(app: Any) -> None:
    duel = Table(app)
    gm, alice, bob = duel.gm(), duel.alice(), duel.bob()
    v = choose_both(duel, alice, bob, "t1")
    sent, _ = wait_for_chances(gm, v)
    synced = duel.gm().emit("sync", {"battle_id": duel.battle_id, "since_v": 0}, callback=True)
    assert synced["chances"] == sent
    spectator = duel.spectator()
    assert spectator.emit("sync", {}, callback=True)["chances"] is None, "the TV switch is off"
    switch(gm, show_chances=True)
    assert spectator.emit("sync", {}, callback=True)["chances"] == sent


def test_a_newer_version_supersedes_the_older(app: Any) -> None:
    duel = Table(app)
    hub = app.extensions["battleboard"]
    battle = duel.service.battle(duel.battle_id)

    def note(v: int) -> Note:
        return Note(battle.id, battle.table_id, v, True, battle.system_id, battle.state, battle.seed)

    # (a worker of its own, held back, so that nothing else picks its notes up meanwhile)
    held = LiveChances(hub)
    held._running = True
    # a computation under way stops when a newer version of its battle is noted, and sends nothing
    with held._guard:
        held._notes[battle.id] = note(battle.version + 1)
    assert held.run(note(battle.version)) is None and held.superseded == 1
    with held._guard:
        held._notes.clear()
    # waiting notes: the newer replaces the older, so one computation is made per battle
    gm = duel.gm()
    idle(app)
    gm.get_received()
    held.note(note(battle.version))
    held.note(note(battle.version + 1))
    assert list(held._notes.values()) == [note(battle.version + 1)]
    picked = held._next()
    assert picked == note(battle.version + 1) and held._next() is None
    held.run(picked)
    message, got = wait_for_chances(gm, battle.version + 1)
    assert [c["v"] for c in got] == [battle.version + 1]


def test_the_chances_never_hold_up_a_command(app: Any) -> None:
    """The command is answered and broadcast before its chances are worked out."""
    duel = Table(app)
    gm, alice, bob = duel.gm(), duel.alice(), duel.bob()
    chances = live(app.extensions["battleboard"])
    chances.budget = 5.0
    started = time.monotonic()
    v = choose_both(duel, alice, bob, "t1")
    answered = time.monotonic() - started
    updates = [m for m in gm.get_received() if m["name"] == "update"]
    assert updates and updates[-1]["args"][0]["v"] == v, "the update is out before the chances"
    wait_for_chances(gm, v)
    assert answered < 5.0


def test_the_report_draws_the_chances_kept_and_names_the_turning_points(app: Any) -> None:
    """Every update's chances are kept; the report (the GM's, and the public one once shared) draws them
    over the battle and names its three largest swings, each with the event that made it."""
    from webapp import report as report_module
    from webapp.models import BattleChances

    duel = Table(app)
    alice, bob = duel.alice(), duel.bob()
    for turn in range(1, 30):
        if duel.service.battle(duel.battle_id).status == "ended":
            break
        choose_both(duel, alice, bob, f"t{turn}")
        idle(app)
    if duel.service.battle(duel.battle_id).status != "ended":
        duel.service.end_battle(duel.battle_id, Viewer.gm())
    idle(app)
    service = duel.service
    with service.session() as s:
        kept = s.exec(select(BattleChances).where(BattleChances.battle_id == duel.battle_id)).all()
    assert len(kept) >= 3 and all(row.payload["battle_id"] == duel.battle_id for row in kept)
    report = report_module.build_report(service, duel.battle_id, gm=True)
    [chart] = [c for c in report["charts"] if c["key"] == "chances"]
    assert set(chart["series"]) == {"A", "B"} and len(chart["series"]["A"]) == len(kept)
    points = report["turning_points"]
    assert 1 <= len(points) <= 3
    for point in points:
        assert re.search(r": \d+ % → \d+ %$", point["text"]), point
    markdown = report_module.render_markdown(report)
    assert "## Turning points" in markdown and points[0]["text"] in markdown
    service.set_shareable(duel.battle_id, duel.table.id, True)
    public = report_module.build_report(service, duel.battle_id, gm=False)
    assert [p["text"] for p in public["turning_points"]] and any(c["key"] == "chances" for c in public["charts"])


def test_the_replay_carries_the_chances_kept_at_each_step(app: Any) -> None:
    """The GM's replay has each step's chances; a spectator's (once the battle is over and shared) too."""
    from webapp.replay_view import ReplayAccess, replay_data

    duel = Table(app)
    alice, bob = duel.alice(), duel.bob()
    for turn in (1, 2):
        if duel.service.battle(duel.battle_id).status != "ended":
            choose_both(duel, alice, bob, f"t{turn}")
            idle(app)
    service = duel.service
    table = service.table(table_id=duel.table.id)
    battle = service.battle(duel.battle_id)
    running = replay_data(service, table, ReplayAccess(battle, Viewer.gm()), {})
    with_chances = [step for step in running["steps"] if step["chances"]]
    assert with_chances and all(step["chances"]["v"] == step["v"] for step in with_chances)
    # a spectator's replay of a running battle carries none (the bar could hint at hidden strength)
    assert not any(step["chances"] for step in replay_data(service, table, ReplayAccess(battle, Viewer.spectator()), {})["steps"])
    if battle.status != "ended":
        service.end_battle(duel.battle_id, Viewer.gm())
        idle(app)
    ended = service.battle(duel.battle_id)
    public = replay_data(service, table, ReplayAccess(ended, Viewer.spectator()), {})
    assert any(step["chances"] for step in public["steps"])


def test_a_turning_point_follows_the_side_whose_chance_moved_most() -> None:
    """The GM ends a battle with no winner: the leader's chance falls (98 % → 0 %), the other's barely
    moves (2 % → 0 %); the turning point is the leader's, named with the GM's end."""
    from webapp.report_chances import chances_part

    def kept(a: float, b: float) -> dict[str, Any]:
        return {"sides": [{"side": "A", "name": "Jinx", "p": a}, {"side": "B", "name": "Stalker", "p": b}]}

    found = {1: kept(0.02, 0.98), 2: kept(0.03, 0.97), 3: kept(0.0, 0.0)}
    events = [{"v": 2, "text": "Jinx misses."}, {"v": 3, "text": "The GM ended the battle."}]
    part = chances_part(found, [1, 2, 3], events, None, lambda e: False)
    assert [(p["name"], p["text"]) for p in part["turning_points"]] == [("Stalker", "The GM ended the battle: 97 % → 0 %")]
    assert set(part["chances_chart"]["series"]) == {"A", "B"}


def test_a_duels_estimate_is_replaced_by_its_exact_chances_once_worked_out(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Phantom's Bane duel whose chain is not worked out yet: its update gets playouts at once (the
    exact way given no time here), then the worker, with nothing else to do, works the chain out and
    sends the exact chances of the same version, which the replay and the report keep."""
    from rules.systems.phantoms_bane import chances as duel_chances
    from webapp.report_chances import kept

    monkeypatch.setattr(chances_live, "EXACT_SHARE", 0.0)
    monkeypatch.setattr(chances_live, "REFINING", 100)
    duel_chances._CHAINS.clear()
    # Jharek with 4 health rather than 7: a chain of the same kind, worked out in about 2 s rather than 10
    duel = Table(app, start=False)
    duel.service.set_lineup(duel.table.id, duel_lineup(a={"controller": "seat", "seat": duel.seat_a.public_id, "health": 4},
                                                       b={"controller": "seat", "seat": duel.seat_b.public_id}))
    duel.battle_id = duel.service.start_battle(duel.table.id, seed="fixed-seed").battle_id
    gm, alice, bob = duel.gm(), duel.alice(), duel.bob()
    v = choose_both(duel, alice, bob, "r1")
    got: list[dict[str, Any]] = []
    end = time.monotonic() + 60
    while not any(c["v"] == v and c["method"] == "exact" for c in got):
        assert time.monotonic() < end, f"no exact chances of version {v} (got {got})"
        got += chances_of(gm)
        time.sleep(0.05)
    mine = [c for c in got if c["v"] == v]
    assert mine[0]["method"] == "playouts" and mine[0]["n"] >= 1
    exact = mine[-1]
    assert sum(s["p"] for s in exact["sides"]) + exact["draw"] + exact["none"] == pytest.approx(1.0, abs=1e-3)
    # the same as the rules' own exact answer, and kept in place of the estimate
    from rules import chances, get_system

    service = app.extensions["battleboard"].service
    battle = service.battle(duel.battle_id)
    assert battle.version == v
    assert {s["side"]: s["p"] for s in exact["sides"]} == pytest.approx(chances.chances(get_system("phantoms-bane"), battle.state, seed="x").sides, abs=1e-4)
    idle(app, timeout=60)  # (kept just after it is sent)
    kept_by = time.monotonic() + 30
    while True:
        with service.session() as session:
            if kept(session, duel.battle_id)[v]["method"] == "exact":
                break
        assert time.monotonic() < kept_by, "the exact chances were not kept"
        time.sleep(0.05)


def test_a_closed_worker_stops_what_it_works_out_and_takes_no_more(app: Any) -> None:
    """``LiveChances.close`` (an app done with its worker, as every test's is at its end): the
    computation under way stops at its next check, sends nothing, and no later update is worked out."""
    duel = Table(app)
    gm, alice, bob = duel.gm(), duel.alice(), duel.bob()
    chances = live(app.extensions["battleboard"])
    chances.budget = 30.0  # (a computation that would go on far longer than this test waits)
    choose_both(duel, alice, bob, "c1")
    end = time.monotonic() + 10
    while chances.busy is None:
        assert time.monotonic() < end, "the worker never took the update up"
        time.sleep(0.01)
    gm.get_received()
    chances.close()
    idle(app, timeout=10)  # stopped well before its 30 s
    v = choose_both(duel, alice, bob, "c2")
    time.sleep(0.3)
    assert v > 0 and chances_of(gm) == [] and not chances._notes
