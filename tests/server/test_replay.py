"""Same seed, same battle: a stored log replays to the stored snapshots, exactly."""

from __future__ import annotations

import random
from typing import Any

from rules import Viewer
from tests.conftest import Table
from webapp.replay import replay_battle


def play_random_turns(duel: Table, turns: int, rng: random.Random) -> None:
    options = ["press", "attack", "defend", "run_away"]
    for _ in range(turns):
        if duel.state["status"] != "active":
            return
        for cid, seat in (("jharek", duel.seat_a.public_id), ("monster", duel.seat_b.public_id)):
            if duel.state["status"] == "active" and duel.state["choices"][cid] is None:
                duel.service.declare(duel.battle_id, Viewer.player(seat), {"type": "choose", "combatant": cid, "option": rng.choice(options)})


def test_a_played_duel_replays_exactly(app: Any) -> None:
    rng = random.Random(7)
    for _ in range(3):
        duel = Table(app)
        play_random_turns(duel, 4, rng)
        if duel.state["status"] == "active":
            duel.service.undo(duel.battle_id, Viewer.gm())
            play_random_turns(duel, 6, rng)
        report = replay_battle(duel.service, duel.battle_id)
        assert report.ok, report.mismatches
        assert report.replayed >= 2


def test_a_tampered_snapshot_is_caught(app: Any) -> None:
    duel = Table(app)
    play_random_turns(duel, 1, random.Random(1))
    from webapp.models import BattleSnapshot

    with duel.service.session() as s:
        snap = s.get(BattleSnapshot, (duel.battle_id, duel.version))
        state = dict(snap.state)
        state["turn"] = 99
        snap.state = state
        s.add(snap)
        s.commit()
    report = replay_battle(duel.service, duel.battle_id)
    assert not report.ok and any("differs" in m for m in report.mismatches)
