"""What every part of the battle service shares: the database it works on, its command store, the
readers of a client's ids and names, and the answer a command gives (:class:`CommandResult`).

:class:`webapp.service.BattleService` is made of the parts that build on :class:`Desk`: the tables
(:mod:`webapp.tables`), the rosters (:mod:`webapp.rosters`), what each page and screen is sent
(:mod:`webapp.screens`) and the one path of a command (:mod:`webapp.authority`). Nothing here
imports Flask or Socket.IO.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from rules import InvalidDeclaration, RulesError, Viewer
from rules.fair import step_told

from .models import Battle, BattleEvent, GameTable, Seat
from .store import BattleRecord, CommandStore, command_store
from .text import read_text

log = logging.getLogger("battleboard")

JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: how many events a (re)connecting client gets at most; older ones are summarised by the view
SYNC_EVENT_LIMIT = 300
#: ids and versions are SQL integers: anything outside this range cannot name a row
MAX_ID = 2**31 - 1


class NotFound(RulesError):
    code = "not_found"


@contextlib.contextmanager
def rules_guard(what: str) -> Any:
    """Turn a crash of a rule system on odd input into a clear refusal (nothing is written: the
    transaction is still open). The traceback goes to the log, because it is a bug of the system."""
    try:
        yield
    except RulesError:
        raise
    except (TypeError, KeyError, IndexError, AttributeError, ValueError, ArithmeticError, RecursionError) as exc:
        log.error("the rule system failed on %s", what, exc_info=True)
        raise InvalidDeclaration(f"that {what} could not be read ({type(exc).__name__}); nothing was changed") from exc


#: a value not worked out yet (read when needed)
UNKNOWN: Any = object()


@dataclass
class CommandResult:
    """What an accepted command produced: the battle's new version and its events."""

    battle_id: int
    table_id: int
    version: int
    prev_version: int
    events: list[dict[str, Any]] = field(default_factory=list)
    duplicate: bool = False
    #: the battle as the command left it (saves the broadcaster a read of the database)
    battle: Battle | BattleRecord | None = None
    #: the table's seats as the command read them (None: the broadcaster looks them up)
    seat_ids: list[str] | None = None
    #: the table and its seats as a command that changed the table left them (a new battle): the
    #: table's broadcast needs no read of its own
    table: GameTable | None = None
    seats: list[Seat] | None = None
    #: a GM's secret: no event of the command reaches anyone but the GM, so the players' and the
    #: spectators' pages are sent nothing (their version stays where it was: :func:`told_version`)
    quiet: bool = False
    #: the version the players' and spectators' pages held before the command (None: ``prev_version``)
    prev_told: int | None = None
    #: a re-sent update (a duplicate message's reply): pages that have it already ignore it
    resent: bool = False
    #: the step an undo would take back now, named for the GM's confirmation (:meth:`Desk.undo_offer`):
    #: None when there is nothing to undo, :data:`UNKNOWN` when the service looks it up before broadcasting
    undo_offer: Any = UNKNOWN
    #: the command hid or revealed a combatant (rules/hiding.py): every room gets its table again
    #: (a hidden combatant's token look reaches the GM alone)
    hiding_changed: bool = False


Broadcaster = Callable[[CommandResult], None]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_ALPHABET) for _ in range(6))


def clean_id(raw: Any, what: str) -> int:
    """A row id from a client: a whole number in the database's range."""
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise InvalidDeclaration(f"{what} must be a number")
    if not 0 < raw <= MAX_ID:
        raise NotFound(f"no such {what.removesuffix('_id')}")
    return raw


def clean_name(raw: Any, what: str = "name", limit: int = 40) -> str:
    """A one-line name from a client, through the board's one reader of text (:mod:`webapp.text`)."""
    return read_text(raw, what, limit=limit)


def require_seats(lineup: Iterable[Mapping[str, Any]], seats: Iterable[Seat]) -> None:
    """Every seat the lineup hands a combatant to must be one of the table's seats."""
    seat_ids = {seat.public_id for seat in seats}
    for entry in lineup:
        if entry.get("controller") == "seat" and entry.get("seat") not in seat_ids:
            raise InvalidDeclaration(f"{entry.get('name')}: that player seat is not at this table")


def offer(version: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The step made at ``version`` (its ``events``) as the GM's confirmation of an undo names it."""
    name, lines = step_told(events, Viewer.gm(), {})
    return {"v": version, "name": name or "the last step", "lines": lines[:8]}


class Desk:
    """The service's shared state and the reads every part makes: a table, its seats, a battle, its
    events and the step an undo would take back."""

    def __init__(self, engine: Engine, broadcaster: Broadcaster | None = None, *, command_engine: Engine | None = None) -> None:
        """``command_engine``: the engine of the command path, if not ``engine`` (on PostgreSQL one
        whose pool does not ping first; see :mod:`webapp.store`)."""
        self.engine = engine
        self.broadcaster = broadcaster
        #: how many seats a table may have (the app sets it from its config)
        self.seats_per_table = 100
        self.test_seed: str | None = None  # tests only: fixed dice seeds and seat ids (config.test_seed)
        self._checked_file = -1e9  # when the health check last found the SQLite file whole
        self._locks: dict[int, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._store: CommandStore = command_store(command_engine or engine)
        # SQLite takes one writer at a time and makes the others poll with sleeps of up to 100 ms;
        # queueing this process's writers on a lock hands the file over at once instead
        self._writer: threading.Lock | contextlib.nullcontext[None] = (
            threading.Lock() if engine.dialect.name == "sqlite" else contextlib.nullcontext()
        )
        # the battles as the last command this process knows of left them, most recent last (see webapp.authority)
        self._recent: dict[int, BattleRecord] = {}
        self._recent_guard = threading.Lock()

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def table(self, *, slug: str | None = None, table_id: int | None = None) -> GameTable:
        with self.session() as s:
            if slug is not None:
                table = s.exec(select(GameTable).where(GameTable.slug == slug)).first()
            else:
                table = s.get(GameTable, table_id)
            if table is None:
                raise NotFound("no such table")
            return table

    def seats(self, table_id: int) -> list[Seat]:
        with self.session() as s:
            return list(s.exec(select(Seat).where(Seat.table_id == table_id).order_by(col(Seat.id))))

    def battle(self, battle_id: int) -> Battle:
        battle_id = clean_id(battle_id, "battle_id")
        with self.session() as s:
            battle = s.get(Battle, battle_id)
            if battle is None:
                raise NotFound("no such battle")
            return battle

    def _get_table(self, s: Session, table_id: int) -> GameTable:
        table = s.get(GameTable, table_id)
        if table is None:
            raise NotFound("no such table")
        return table

    def _set_table(self, table_id: int, **fields: Any) -> GameTable:
        """Write already checked values into a table's row; the table as stored."""
        with self.session() as s:
            table = self._get_table(s, table_id)
            for name, value in fields.items():
                setattr(table, name, value)
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def events_since(self, battle_id: int, since_v: int, limit: int = SYNC_EVENT_LIMIT) -> list[dict[str, Any]]:
        with self.session() as s:
            rows = s.exec(
                select(BattleEvent)
                .where(BattleEvent.battle_id == battle_id, BattleEvent.version > since_v)
                .order_by(col(BattleEvent.version).desc(), col(BattleEvent.index).desc())
                .limit(limit)
            ).all()
        rows = list(reversed(rows))
        return [{"v": r.version, "i": r.index, "visibility": r.visibility, **r.payload} for r in rows]

    def undo_offer(self, battle_id: int, version: int) -> dict[str, Any] | None:
        """The step an undo would take back from ``version`` (the battle's version), named for the GM's
        confirmation: ``{"v", "name", "lines"}``; None at the start (nothing to undo)."""
        with self._store.connection() as conn:
            return self._offer_at(conn, battle_id, version)

    def _offer_at(self, conn: Any, battle_id: int, version: int) -> dict[str, Any] | None:
        """:meth:`undo_offer` on a store connection (a command's own, inside the command)."""
        current = self._store.snapshot(conn, battle_id, version)
        if current is None or current.prev_version is None:
            return None
        taken = current.prev_version + 1
        return offer(taken, self._store.events_at(conn, battle_id, taken))
