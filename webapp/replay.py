"""Replay a stored battle from its log and check it against its snapshots.

Every command was applied with a dice seed derived from the battle's seed, the players' client seeds
and the command's step (:mod:`rules.fair`), so re-applying each stored command to the previous version
must give the stored snapshot and the stored events again, exactly (:func:`webapp.verify.reapply`
does it as the authority did: declarations, undo, assignments, the GM's end, client seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import col, select

from rules.fair import seed_epochs

from .models import BattleCommand, BattleEvent, BattleSnapshot
from .service import BattleService
from .verify import AUTHORITY_COMMANDS, Mismatch, reapply, viewer_of

NOT_DECLARATIONS = AUTHORITY_COMMANDS
__all__ = ["NOT_DECLARATIONS", "ReplayReport", "replay_battle", "viewer_of"]


@dataclass
class ReplayReport:
    battle_id: int
    replayed: int = 0
    taken: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def replay_battle(service: BattleService, battle_id: int) -> ReplayReport:
    battle = service.battle(battle_id)
    report = ReplayReport(battle_id)
    with service.session() as s:
        snapshots = {snap.version: snap.state for snap in s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle_id))}
        commands = s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle_id).order_by(col(BattleCommand.version))).all()
        events: dict[int, list[dict[str, Any]]] = {}
        for row in s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id).order_by(col(BattleEvent.version), col(BattleEvent.index))):
            events.setdefault(row.version, []).append({**row.payload, "visibility": row.visibility})
    log: list[dict[str, Any]] = [{"version": c.version, "actor": c.actor, "declaration": c.declaration, "events": events.get(c.version, [])} for c in commands]
    try:
        for step in reapply(battle.system_id, seed_epochs(events, battle.seed), battle.setup, snapshots[1], log, stored_state=snapshots.get):
            if step.version == 1:
                if battle.setup is not None and (step.state != snapshots[1] or step.events != events.get(1, [])):
                    report.mismatches.append("version 1: the setup differs")
                continue
            if step.kind == "assign" and "controller" not in log[step.version - 2]["declaration"]:
                report.taken += 1
            else:
                report.replayed += 1
            if step.state != snapshots.get(step.version):
                report.mismatches.append(f"version {step.version}: the state differs")
            if [dict(e) for e in step.events] != events.get(step.version, []):
                report.mismatches.append(f"version {step.version}: the events differ")
    except Mismatch as exc:
        report.mismatches.append(str(exc))
    if battle.state != snapshots.get(battle.version):
        report.mismatches.append("the battle's current state is not its last snapshot")
    return report
