"""Replay a stored battle from its log and check it against its snapshots.

Every declaration was applied with a dice seed derived from the battle's seed and the new version,
so re-applying each stored declaration to the previous snapshot must give the stored snapshot and the
stored events again, exactly. Commands that are not declarations (undo, assign, end) are taken from
their snapshots.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import col, select

from rules import SeededDice, Viewer, derive_seed, get_system

from .models import BattleCommand, BattleEvent, BattleSnapshot
from .service import BattleService

NOT_DECLARATIONS = {"undo", "assign", "end"}


@dataclass
class ReplayReport:
    battle_id: int
    replayed: int = 0
    taken: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def viewer_of(actor: str) -> Viewer:
    if actor.startswith("seat:"):
        return Viewer.player(actor.split(":", 1)[1])
    return Viewer.gm() if actor == "gm" else Viewer.spectator()


def replay_battle(service: BattleService, battle_id: int) -> ReplayReport:
    battle = service.battle(battle_id)
    system = get_system(battle.system_id)
    report = ReplayReport(battle_id)
    with service.session() as s:
        snapshots = {snap.version: snap.state for snap in s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle_id))}
        commands = s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle_id).order_by(col(BattleCommand.version))).all()
        events: dict[int, list[dict[str, Any]]] = {}
        for row in s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id).order_by(col(BattleEvent.version), col(BattleEvent.index))):
            events.setdefault(row.version, []).append({**row.payload, "visibility": row.visibility})
    for command in commands:
        version = command.version
        if command.declaration.get("type") in NOT_DECLARATIONS:
            report.taken += 1
            continue
        before = copy.deepcopy(snapshots[version - 1])
        state, new_events = system.apply(before, command.declaration, viewer_of(command.actor), SeededDice(derive_seed(battle.seed, version)))
        report.replayed += 1
        if state != snapshots[version]:
            report.mismatches.append(f"version {version}: the state differs")
        if [dict(e) for e in new_events] != events.get(version, []):
            report.mismatches.append(f"version {version}: the events differ")
    if battle.state != snapshots.get(battle.version):
        report.mismatches.append("the battle's current state is not its last snapshot")
    return report
