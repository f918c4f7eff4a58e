"""The fog's client event and its part in every battle update (see :mod:`webapp.fog`).

- ``fog_set {all?, add?, remove?, rect?, sight?}`` (GM only, grid systems): the whole map fogged or
  cleared, squares painted or erased, a rectangle fogged or cleared (a room revealed), the sight
  switched off (null) or set (1 to 20 squares). Registered by :mod:`webapp.sockets` with its
  ``handler`` decorator, so the generic role and payload tests cover it.
- :func:`fog_for_update`: before a battle update is projected, the table's board is read as it is
  now (another process may have painted it), the players' combatants clear what they see (when the
  sight is on; written back at once), and the fog the projections hide is returned.

One lock per table and process keeps a GM's strokes and the sight's clearing from writing over each
other; two processes writing one table's fog in the same instant may lose one of the two (the next
stroke or move writes it again).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rules import IllegalDeclaration, get_system
from rules.terrain import Square

from .assets import board_payload
from .fog import change_fog, cleared_by_sight, fog_of, listed, read_board, sight_of
from .service import BattleService, CommandResult
from .tables import board_settings, grid_size

_LOCKS: dict[int, threading.Lock] = {}
_GUARD = threading.Lock()


@contextmanager
def table_lock(table_id: int) -> Iterator[None]:
    """The fog of one table is changed by one thread of this process at a time."""
    with _GUARD:
        lock = _LOCKS.setdefault(table_id, threading.Lock())
    with lock:
        yield


def on_fog_set(hub: Any, conn: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """``fog_set``: the GM's change of the fog; answers ``{board}`` (the board every page gets)."""
    service: BattleService = hub.service
    change = {k: v for k, v in payload.items() if k not in ("battle_id", "expected_v", "msg_id")}  # the page's envelope
    with table_lock(conn.table_id):
        table = service.table(table_id=conn.table_id)
        if not get_system(table.system_id).traits.grid:
            raise IllegalDeclaration("this rule system has no grid: fog is for grid systems")
        width, height = grid_size(table.options)
        board = change_fog(board_settings(table.board), change, width, height)
        if table.battle_id is not None and sight_of(board):  # with sight on, what the players see stays clear
            battle = service.battle(table.battle_id)
            if battle.status != "ended":
                blocked = battle.state.get("blocked") or board["blocked"]
                seen = cleared_by_sight(board, battle.state, blocked, width, height)
                if seen:
                    board["fog"] = listed(fog_of(board) - seen)
        table = service.write_board(conn.table_id, board)
    return {"board": board_payload(table.board)}


def fog_for_update(service: BattleService, result: CommandResult) -> tuple[frozenset[Square], bool]:
    """The fog an accepted command's update is projected under, and whether the players'
    combatants cleared some of it by sight (then written, and the table is to be sent again)."""
    battle = result.battle
    if battle is not None and not get_system(battle.system_id).traits.grid:
        return frozenset(), False  # (a system without a grid has no fog: nothing to read)
    board, options = read_board(service.engine, result.table_id)
    fog = fog_of(board)
    if not fog or battle is None or not board.get("sight"):
        return fog, False
    width, height = grid_size(options)
    blocked = battle.state.get("blocked") or board.get("blocked") or []
    if not cleared_by_sight(board, battle.state, blocked, width, height):
        return fog, False
    with table_lock(result.table_id):
        board, options = read_board(service.engine, result.table_id)  # as it is now, under the lock
        seen = cleared_by_sight(board, battle.state, blocked, width, height)
        if not seen:
            return fog_of(board), False
        new = board_settings(board)
        new["fog"] = listed(fog_of(board) - seen)
        service.write_board(result.table_id, new)
    return fog_of(new), True
