"""The battle service: every read and write of tables, seats, rosters, screens and battles, in one
object the socket handlers, the views and the command line share.

It is made of parts, each a module of its own: the tables and their board (:mod:`webapp.tables`),
the roster libraries (:mod:`webapp.rosters`), what each page and screen is sent
(:mod:`webapp.screens`) and the one path of a command (:mod:`webapp.authority`), all on the shared
state of :mod:`webapp.desk` and the command store of :mod:`webapp.store`. Nothing here imports
Flask or Socket.IO.
"""

from __future__ import annotations

from .authority import MSG_ID_RE, RECENT_BATTLES, Authority, StaleVersion, gm_secret
from .desk import (
    MAX_ID,
    SYNC_EVENT_LIMIT,
    UNKNOWN,
    Broadcaster,
    CommandResult,
    NotFound,
    clean_id,
    clean_name,
    rules_guard,
)
from .desk import new_join_code as _join_code
from .desk import new_token as _token
from .models import utcnow
from .projection import seats_playing  # where it was before (tests import it from here)
from .rosters import MAX_ROSTERS, RosterDesk
from .screens import PAIRING_ALPHABET, PAIRING_CODE_LENGTH, PAIRING_CODE_LIFETIME, ScreenDesk, code_expired
from .tables import TableDesk, board_settings

#: what callers import from here (the parts' modules are the places to look)
__all__ = [
    "MAX_ID", "MAX_ROSTERS", "MSG_ID_RE", "PAIRING_ALPHABET", "PAIRING_CODE_LENGTH", "PAIRING_CODE_LIFETIME",
    "RECENT_BATTLES", "SYNC_EVENT_LIMIT", "UNKNOWN", "BattleService", "Broadcaster", "CommandResult", "NotFound",
    "StaleVersion", "_join_code", "_token", "board_settings", "clean_id", "clean_name", "code_expired", "gm_secret",
    "rules_guard", "seats_playing", "utcnow",
]


class BattleService(TableDesk, RosterDesk, ScreenDesk, Authority):
    """All reads and writes of tables, seats, rosters, screens and battles (see the parts)."""
