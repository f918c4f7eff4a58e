"""The replay page's data: a finished battle, version by version, as one viewer may see it.

Each version of a battle (one accepted command: the start, a declaration, an undo, an assignment,
the GM's end) becomes one step: the board as it stood after that command, projected for the viewer
by the system's own ``view_for`` from the stored snapshot, and that command's events the viewer may
see. The public replay is a spectator's (only public events; no GM-only value reaches it); the GM's
replay shows every event, hidden ones too (the computer's secret choices, a player's sealed
choice), each marked with its visibility.

Undone commands stay in the replay as they happened, marked undone (like the dice, which stay in
the log as undone), with the undo that took each back: the undo itself is a step that brings the
board back, and from it on the log strikes the step's lines through.

Who may see it: the GM of the table always, once the battle has ended; anyone else only when the
battle has ended and the GM marked it shareable. A running battle has no replay (its hidden events
are still secrets, even from the GM's own screen).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from typing import Any

from sqlmodel import col, select

from rules import RulesError, Viewer, engine, get_system
from rules.core import event_for
from rules.fair import ENTROPY, dice_info, undone_by

from . import report_chances
from .assets import board_payload
from .models import Battle, BattleCommand, BattleEvent, BattleSnapshot, GameTable, row_id
from .service import BattleService
from .store import told_version

#: where the standalone dice verifier may be served from static/ (the first that exists is linked)
VERIFIER_FILES = ("verify_dice.py", "verify.py", "tools/verify_dice.py", "verifier/verify_dice.py", "js/verify-dice.js")
#: the largest number of versions one replay carries (beyond it: the first ones and the last ones)
MAX_STEPS = 2000


class ReplayRefused(RulesError):
    """This viewer may not see this battle's replay (``status``: the HTTP status to answer with)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ReplayAccess:
    battle: Battle
    viewer: Viewer


def is_shareable(battle: Battle) -> bool:
    """Whether the GM marked the battle shareable (the flag belongs to the export/share work: read
    defensively, so a build without it treats every battle as not shareable)."""
    return getattr(battle, "shareable", None) is True


def replay_access(service: BattleService, table: GameTable, battle_id: Any, *, is_gm: bool) -> ReplayAccess:
    """The battle and the viewer to project it for, or :class:`ReplayRefused` with a clear reason."""
    try:
        battle = service.battle(battle_id)
    except RulesError as exc:
        raise ReplayRefused("There is no such battle at this table.", 404) from exc
    if battle.table_id != table.id:
        raise ReplayRefused("There is no such battle at this table.", 404)
    if battle.status != "ended":
        raise ReplayRefused("This battle is still running: its replay opens when it has ended.", 403 if not is_gm else 409)
    if is_gm:
        return ReplayAccess(battle, Viewer.gm())
    if not is_shareable(battle):
        raise ReplayRefused("The GM has not shared this battle's replay.", 403)
    return ReplayAccess(battle, Viewer.spectator())


def _kind(declaration: dict[str, Any] | None, version: int) -> str:
    if version == 1:
        return "start"
    kind = (declaration or {}).get("type")
    if kind == ENTROPY:
        return "entropy"
    return kind if kind in ("undo", "assign", "end") else "declaration"


def replay_data(service: BattleService, table: GameTable, access: ReplayAccess, seat_names: dict[str, str]) -> dict[str, Any]:
    """The replay of ``access.battle`` for ``access.viewer``: every version's view and visible events."""
    battle, viewer = access.battle, access.viewer
    system = get_system(battle.system_id)
    with service.session() as s:
        snapshots = list(s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle.id).order_by(col(BattleSnapshot.version))))
        rows = s.exec(
            select(BattleEvent).where(BattleEvent.battle_id == battle.id).order_by(col(BattleEvent.version), col(BattleEvent.index))
        ).all()
        commands = {
            c.version: c.declaration for c in s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle.id))
        }
        # who's winning at each step (issue 37): the GM's replay always, the others' once the battle is over
        chances = report_chances.kept(s, row_id(battle)) if viewer.is_gm or battle.status == "ended" else {}
    events_by_version: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        events_by_version.setdefault(row.version, []).append({"v": row.version, "i": row.index, "visibility": row.visibility, **row.payload})
    # the steps an undo took back, and by which undo (a player's client seed stays mixed into the dice: never undone)
    entropy = {v for v, d in commands.items() if (d or {}).get("type") == ENTROPY}
    undone = {v: by for v, by in undone_by(events_by_version).items() if v not in entropy}
    if len(snapshots) > MAX_STEPS:  # a very long battle: its start and its end
        half = MAX_STEPS // 2
        snapshots = snapshots[:half] + snapshots[-half:]
    steps = []
    shown_view: dict[str, Any] | None = None
    for snap in snapshots:
        state = snap.state
        events = events_by_version.get(snap.version, [])
        if viewer.is_gm:
            visible = events  # the GM's replay: everything, its visibility shown
        else:  # each event in the words written for this viewer (see rules.core.event_for)
            visible = [shown for ev in events if (shown := event_for(ev, viewer, state)) is not None]
        # the replay takes no action: the menus of legal declarations stay out (half its size)
        view = {k: v for k, v in engine.project(system, state, viewer).items() if k != "legal"}
        if not viewer.is_gm and snap.version > 1 and not visible and view == shown_view:
            continue  # a change this viewer never saw (a GM's secret): no step tells it happened
        shown_view = view
        steps.append({
            "v": snap.version,
            "kind": _kind(commands.get(snap.version), snap.version),
            "undone": snap.version in undone,
            # the version of the undo that took it back: the replay marks it undone from there on
            "undone_by": undone.get(snap.version),
            "status": state.get("status", "active"),
            "view": view,
            "events": visible,
            "chances": chances.get(snap.version),
        })
    return {
        "battle_id": battle.id,
        "system": {"id": system.id, "name": system.name},
        "role": viewer.role,
        "status": battle.status,
        "version": battle.version if viewer.is_gm else told_version(battle),
        "shareable": is_shareable(battle),
        # the commitment, the players' mix and (the battle has ended) the revealed seed
        "dice": dice_info(battle.seed, getattr(battle, "mix", ""), battle.status),
        "started_at": battle.created_at.isoformat() if battle.created_at else None,
        "table": {
            "slug": table.slug,
            "name": table.name,
            "system": {"id": system.id, "name": system.name},
            "board": board_payload(table.board),
            "seat_names": seat_names,
        },
        "steps": steps,
    }


def encode(payload: dict[str, Any], accept_encoding: str) -> tuple[bytes, str | None]:
    """The replay as JSON, gzipped when the browser takes it (its views repeat: about ten to one)."""
    raw = json.dumps(payload, separators=(",", ":")).encode()
    if "gzip" in (accept_encoding or "").lower() and len(raw) > 2048:
        return gzip.compress(raw, 6), "gzip"
    return raw, None
