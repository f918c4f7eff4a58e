"""The authority: one owner per battle that validates, locks, persists and hands results to the broadcaster.

Every command follows the same path (boardgame.io's master, lichess's round actor):

1. take the battle's in-process lock (Flask-SocketIO may run two handlers at once);
2. open one transaction, load the battle, check the expected version (a battle whose last version
   this process knows, because it wrote it or another process's queue message brought it, is taken
   as it is kept, unread: the compare-and-set in step 4 catches a battle moved on meanwhile, and the
   command then starts again from a fresh read);
3. run the command's step with the dice derived for it (:func:`rules.engine.step`, the code the
   verifier re-applies the log with; undo and client seeds, which read the log, are worked out here);
4. write the new snapshot with a compare-and-set on the version, the events and the command record;
5. commit, then hand the result to the broadcaster, which sends each viewer its own projection.

The compare-and-set decides across processes: two processes can never both apply a command to the
same version of a battle. Steps 2 and 4 are :mod:`webapp.store`'s (one read, one write). Nothing here
imports Flask or Socket.IO.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete as sa_delete
from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from rules import (
    IllegalDeclaration,
    InvalidDeclaration,
    NotPermitted,
    RulesError,
    Viewer,
    engine,
    get_system,
)
from rules.core import event as make_event
from rules.dice import mix_entropy
from rules.fair import (
    ENTROPY,
    clean_client_seed,
    command_dice,
    committed_event,
    entropy_declaration,
    entropy_event,
    secret_step,
    seed_at,
    seeds_by_step,
    step_lines,
    step_name,
    undone_event,
)
from rules.terrain import clean_blocked

from .config import fixed_for_tests
from .models import (
    DISPLAY_DEFAULTS,
    Battle,
    BattleCommand,
    BattleEvent,
    BattleSnapshot,
    DisplayScreen,
    GameTable,
    Roster,
    RosterCombatant,
    Seat,
    StoredImage,
    display_settings,
    new_library_key,
    utcnow,
)
from .projection import project
from .projection import seats_playing as seats_playing  # where it was before (tests import it from here)
from .store import (
    BattleRecord,
    CommandWrite,
    PostgresCommandStore,
    command_store,
    event_rows,
    record_fields,
    told_version,
)
from .text import read_text, scrub

log = logging.getLogger("battleboard")

JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
MSG_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
#: a roster library's key, as :func:`new_library_key` makes them (or ``shared``, the rows from before)
LIBRARY_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{6,64}$")
#: how many events a (re)connecting client gets at most; older ones are summarised by the view
SYNC_EVENT_LIMIT = 300
#: how many battles a process keeps as the last command it knows of left them (its own, or another
#: process's sent through the message queue): a command on one of them needs no read first
RECENT_BATTLES = 512


#: a battle record's fields in order, as another process sends it (see BattleService.learn_battle)
_RECORD_FIELDS = tuple(f.name for f in fields(BattleRecord))

#: the rule systems played on a grid: they take a map, token looks and blocked squares
GRID_SYSTEMS = frozenset({"eclipse-phase", "battles-and-balances", "adnd"})
#: an uploaded image that no board and no saved roster uses is deleted once it is older than this
UNUSED_IMAGE_AGE = timedelta(days=1)
_IMAGE_REF = re.compile(r"[0-9a-f]{64}")  # an image's sha256, wherever a board or a roster keeps it


def board_settings(stored: Any) -> dict[str, Any]:
    """A table's board as stored (:attr:`GameTable.board`), the defaults filled in: ``{"map": None |
    {image, type, width, height, squares_across, offset_x, offset_y}, "tokens": {combatant id: {colour,
    portrait: None | {image, type}}}, "blocked": [[x, y], ...]}``."""
    board = stored if isinstance(stored, dict) else {}
    return {"map": copy.deepcopy(board.get("map")), "tokens": copy.deepcopy(board.get("tokens") or {}),
            "blocked": copy.deepcopy(board.get("blocked") or [])}


def _grid_size(options: Mapping[str, Any]) -> tuple[int, int]:
    """A grid system's width and height from its options (AD&D's grid may grow for the encounter
    distance: squares past the set size are refused until the GM makes the grid larger)."""
    width = options.get("width", options.get("grid_width"))
    height = options.get("height", options.get("grid_height"))
    return (width if isinstance(width, int) else 60), (height if isinstance(height, int) else 60)


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


class StaleVersion(RulesError):
    """The client acted on an old version of the battle."""

    code = "stale"

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


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
    #: the step an undo would take back now, named for the GM's confirmation (:meth:`BattleService.undo_offer`):
    #: None when there is nothing to undo, :data:`UNKNOWN` when the service looks it up before broadcasting
    undo_offer: Any = UNKNOWN


Broadcaster = Callable[[CommandResult], None]
#: a command's work: (the battle as read, its rule system, its state (never changed), the version the
#: command makes, the step it is: its dice) -> the step it made (:class:`rules.engine.Step`)
StepFunction = Callable[[BattleRecord, Any, dict[str, Any], int, int], engine.Step]
#: what a crash of the rules on each kind of command is called in the refusal (:func:`rules_guard`)
_GUARDED = {engine.ASSIGN: "assignment", engine.DICE_ENTER: "roll", engine.END: "end", engine.DICE_PHYSICAL: "switch"}


def gm_secret(actor: str, events: list[dict[str, Any]], state: Mapping[str, Any]) -> bool:
    """Whether a command is a GM's secret: the GM's, and none of its events (it has some) reaches
    anyone but the GM. The players' and spectators' pages are told nothing of it (nor of its undo:
    :func:`rules.fair.undone_event` asks the same)."""
    return secret_step(actor, events, state)


def _actor(viewer: Viewer) -> str:
    """How a command's record names who sent it (``gm``, ``seat:<public id>``, ``spectator``)."""
    if viewer.role == "player":
        return f"seat:{viewer.seat}"
    return viewer.role


def _token() -> str:
    return secrets.token_urlsafe(24)


def _join_code() -> str:
    return "".join(secrets.choice(JOIN_ALPHABET) for _ in range(6))


#: the most rosters one library (one GM's browser) may hold, over every rule system
MAX_ROSTERS = 100
#: ids and versions are SQL integers: anything outside this range cannot name a row
MAX_ID = 2**31 - 1


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


def _require_seats(lineup: Iterable[Mapping[str, Any]], seats: Iterable[Seat]) -> None:
    """Every seat the lineup hands a combatant to must be one of the table's seats."""
    seat_ids = {seat.public_id for seat in seats}
    for entry in lineup:
        if entry.get("controller") == "seat" and entry.get("seat") not in seat_ids:
            raise InvalidDeclaration(f"{entry.get('name')}: that player seat is not at this table")


class BattleService:
    """All reads and writes of tables, seats, rosters and battles."""

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
        # SQLite takes one writer at a time and makes the others poll with sleeps of up to 100 ms;
        # queueing this process's writers on a lock hands the file over at once instead
        self._store = command_store(command_engine or engine)
        self._writer: threading.Lock | contextlib.nullcontext[None] = (
            threading.Lock() if engine.dialect.name == "sqlite" else contextlib.nullcontext()
        )
        # the battles as the last command this process knows of left them, most recent last (see _command)
        self._recent: dict[int, BattleRecord] = {}
        self._recent_guard = threading.Lock()

    # --- locking ----------------------------------------------------------------------------
    def _lock(self, battle_id: int) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(battle_id, threading.Lock())

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # --- tables and seats -------------------------------------------------------------------
    def create_table(self, name: Any, system_id: Any, *, slug: str | None = None, library: Any = None) -> GameTable:
        """A new table; ``library``: the roster library of the GM's other tables (the key their
        browser keeps), or None (or anything that is not such a key) for a library of its own."""
        if not isinstance(system_id, str):
            raise InvalidDeclaration("pick a rule system")
        system = get_system(system_id)
        table_name = clean_name(name, "table name", 80)
        if not (isinstance(library, str) and LIBRARY_KEY_RE.match(library)):
            library = new_library_key()
        with self.session() as s:
            for _ in range(20):
                table = GameTable(
                    slug=slug or secrets.token_urlsafe(6).replace("-", "x").replace("_", "y"),
                    name=table_name,
                    system_id=system.id,
                    join_code=_join_code(),
                    gm_token=_token(),
                    lineup=[],
                    options=system.validate_options({}),
                    library=library,
                )
                s.add(table)
                try:
                    s.commit()
                except IntegrityError:
                    s.rollback()
                    if slug:
                        raise InvalidDeclaration(f"a table {slug!r} exists already") from None
                    continue
                s.refresh(table)
                return table
        raise RuntimeError("could not find a free join code")

    def table(self, *, slug: str | None = None, table_id: int | None = None) -> GameTable:
        with self.session() as s:
            if slug is not None:
                table = s.exec(select(GameTable).where(GameTable.slug == slug)).first()
            else:
                table = s.get(GameTable, table_id)
            if table is None:
                raise NotFound("no such table")
            return table

    def table_by_code(self, code: Any) -> GameTable:
        if not isinstance(code, str):
            raise InvalidDeclaration("a join code is needed")
        code = read_text(code, "join code", limit=64, required=False).upper().replace(" ", "").replace("-", "")
        if not code:
            raise InvalidDeclaration("a join code is needed")
        with self.session() as s:
            table = s.exec(select(GameTable).where(GameTable.join_code == code)).first()
        if table is None:
            raise NotFound("no table has that join code")
        return table

    def join(self, code: Any, name: Any, held: Mapping[str, Any] | None = None) -> tuple[GameTable, Seat]:
        """Seat a player at the table of a join code. ``held``: the seats the phone already holds
        (its session's table slug -> seat key). A phone that holds a seat at this table keeps that
        seat under the name typed now (the same seat: the combatants it plays stay its own) rather
        than taking a second one."""
        table = self.table_by_code(code)
        seat_name = clean_name(name, "player name")
        token = (held or {}).get(table.slug)
        with self.session() as s:
            if isinstance(token, str) and token:
                seat = s.exec(select(Seat).where(Seat.token == token, Seat.table_id == table.id)).first()
                if seat is not None:
                    if seat.name != seat_name:
                        seat.name = seat_name
                        s.add(seat)
                        s.commit()
                        s.refresh(seat)
                    return table, seat
            taken = s.exec(sa_select(func.count()).select_from(Seat).where(Seat.table_id == table.id)).one()[0]
            if taken >= self.seats_per_table:
                raise IllegalDeclaration(f"this table is full ({self.seats_per_table} seats): ask the GM")
            seat = Seat(table_id=table.id, public_id="s" + (fixed_for_tests(self.test_seed, 8, "seat", table.id, taken, seat_name) or secrets.token_hex(4)), name=seat_name, token=_token())
            s.add(seat)
            s.commit()
            s.refresh(seat)
        return table, seat

    def rotate_join_code(self, table_id: int) -> GameTable:
        """A new join code for the table (the old one stops working; seats are kept: they hold
        their own keys, not the code)."""
        for _ in range(20):
            try:
                return self._set_table(table_id, join_code=_join_code())
            except IntegrityError:
                continue
        raise RuntimeError("could not find a free join code")

    def check_database(self) -> None:
        """Read the database for real (the health check): the newest rows of the tables every page
        reads, and on SQLite an integrity check of the whole file (at most once a minute: it reads
        every page). Raises whatever the database raises."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            for model in (GameTable, Seat, Battle, BattleEvent):
                table = model.__table__  # type: ignore[attr-defined]
                conn.execute(sa_select(table).order_by(table.c.id.desc()).limit(1)).all()
            if self.engine.dialect.name == "sqlite" and time.monotonic() - self._checked_file > 60:
                verdict = conn.execute(text("PRAGMA quick_check(1)")).scalar()
                if verdict != "ok":
                    raise RuntimeError(f"database disk image is malformed ({verdict})")
                self._checked_file = time.monotonic()

    def gm_token(self, table_id: int) -> str:
        """The table's GM key as stored now (a Core read: the socket layer asks it once a second)."""
        column = GameTable.__table__.c  # type: ignore[attr-defined]
        with self.engine.connect() as conn:
            return str(conn.execute(sa_select(column.gm_token).where(column.id == table_id)).scalar() or "")

    def new_gm_key(self, table_id: int) -> GameTable:
        """A new GM key: the GM link and every console opened with the old key stop working."""
        return self._set_table(table_id, gm_token=_token())

    def seat_ids(self, table_id: int) -> list[str]:
        """The public ids of a table's seats, in joining order (read at every broadcast: Core, not the ORM)."""
        return self._store.seat_ids(table_id)

    def seats(self, table_id: int) -> list[Seat]:
        with self.session() as s:
            return list(s.exec(select(Seat).where(Seat.table_id == table_id).order_by(Seat.id)))

    def tables_as_they_are(self, table_ids: Iterable[int]) -> dict[int, tuple[GameTable, list[Seat], tuple[int, int] | None]]:
        """Several tables as the database holds them now, each with its seats and its battle's
        version and the version its players and spectators were told of (three queries for all of
        them, none of a battle's state): what the heartbeat tells a process's pages."""
        ids = sorted(set(table_ids))
        if not ids:
            return {}
        with self.session() as s:
            tables = list(s.exec(select(GameTable).where(col(GameTable.id).in_(ids))))
            seats = list(s.exec(select(Seat).where(col(Seat.table_id).in_(ids)).order_by(col(Seat.id))))
            battle_ids = [t.battle_id for t in tables if t.battle_id is not None]
            rows = s.exec(select(Battle.id, Battle.version, Battle.public_version).where(col(Battle.id).in_(battle_ids))).all() if battle_ids else []
        versions = {row[0]: (row[1], row[1] if row[2] is None else row[2]) for row in rows}
        found: dict[int, tuple[GameTable, list[Seat], tuple[int, int] | None]] = {}
        for table in tables:
            assert table.id is not None
            found[table.id] = (table, [seat for seat in seats if seat.table_id == table.id],
                               versions.get(table.battle_id) if table.battle_id is not None else None)
        return found

    def viewer_for(self, table: GameTable, token: Any) -> tuple[Viewer, Seat | None]:
        """The role a token gives at a table: GM token, a seat's token, or nothing (spectator)."""
        if not token:
            return Viewer.spectator(), None
        if not isinstance(token, str) or len(token) > 64:
            raise NotPermitted("that key is not valid here")
        if secrets.compare_digest(token, table.gm_token):
            return Viewer.gm(), None
        with self.session() as s:
            seat = s.exec(select(Seat).where(Seat.token == token, Seat.table_id == table.id)).first()
        if seat is None:
            raise NotPermitted("that key is not valid at this table")
        return Viewer.player(seat.public_id), seat

    # --- the GM's set-up --------------------------------------------------------------------
    def set_lineup(self, table_id: int, lineup: Any) -> GameTable:
        with self.session() as s:
            table = self._get_table(s, table_id)
            system = get_system(table.system_id)
            with rules_guard("lineup"):
                cleaned = system.validate_draft(lineup)
            self._check_seats(s, table, cleaned)
            table.lineup = cleaned
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def set_options(self, table_id: int, options: Any) -> GameTable:
        with self.session() as s:
            table = self._get_table(s, table_id)
            with rules_guard("set of options"):
                table.options = get_system(table.system_id).validate_options(options)
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def set_notes(self, table_id: int, notes: Any) -> GameTable:
        if not isinstance(notes, str):
            raise InvalidDeclaration("notes must be text")
        if len(notes) > 5000:
            raise InvalidDeclaration("notes are too long (at most 5000 characters)")
        return self._set_table(table_id, gm_notes=read_text(notes, "notes", limit=5000, required=False, multiline=True))

    def _get_table(self, s: Session, table_id: int) -> GameTable:
        table = s.get(GameTable, table_id)
        if table is None:
            raise NotFound("no such table")
        return table

    def _check_seats(self, s: Session, table: GameTable, lineup: Iterable[Mapping[str, Any]]) -> None:
        _require_seats(lineup, s.exec(select(Seat).where(Seat.table_id == table.id)))

    # --- the board: map, token looks, blocked squares (H5) -------------------------------------
    def board_patch(self, table_id: int, patch: Any) -> tuple[dict[str, Any], bool]:
        """The table's board with a GM's ``board_set`` patch applied (nothing written yet), and whether
        its blocked squares changed. Refuses a bad patch with a clear error."""
        if not isinstance(patch, Mapping):
            raise InvalidDeclaration("board_set needs an object")
        unknown = set(patch) - {"map", "tokens", "blocked"}
        if unknown:
            raise InvalidDeclaration(f"board_set: unknown field {sorted(unknown)[0]!r} (map, tokens or blocked)")
        if not patch:
            raise InvalidDeclaration("board_set: say what to change (map, tokens or blocked)")
        table = self.table(table_id=table_id)
        if table.system_id not in GRID_SYSTEMS:
            raise IllegalDeclaration("this rule system has no grid: maps and blocked squares are for grid systems")
        board = board_settings(table.board)
        with self.session() as s:
            if "map" in patch:
                board["map"] = self._clean_map(s, patch["map"], board["map"])
            if "tokens" in patch:
                board["tokens"] = self._clean_tokens(s, table, patch["tokens"], board["tokens"])
        changed = False
        if "blocked" in patch:
            width, height = _grid_size(table.options)
            blocked = clean_blocked(patch["blocked"], width, height)
            changed = blocked != board["blocked"]
            board["blocked"] = blocked
        return board, changed

    def write_board(self, table_id: int, board: dict[str, Any]) -> GameTable:
        return self._set_table(table_id, board=board)

    def prune_unused_images(self) -> int:
        """Delete the uploaded images that no table's board (its map, its tokens' portraits) and no
        saved roster (a combatant's portrait) uses, uploaded more than :data:`UNUSED_IMAGE_AGE` ago (a GM's
        upload waits that long for the board it is meant for; uploading the same image again makes
        it new). A GM trying maps to line up, or changing a portrait, no longer leaves every earlier
        image in the database for ever. Returns how many were deleted."""
        cutoff = utcnow() - UNUSED_IMAGE_AGE
        with self.session() as s:
            old = s.exec(select(StoredImage.id, StoredImage.sha256).where(col(StoredImage.created_at) < cutoff)).all()
            if not old:
                return 0  # (nothing old enough: the boards and rosters are not read)
            used: set[str] = set()
            for board in s.exec(select(GameTable.board)).all():
                used.update(_IMAGE_REF.findall(json.dumps(board or {})))
            for stats in s.exec(select(RosterCombatant.stats)).all():
                used.update(_IMAGE_REF.findall(json.dumps(stats or {})))
            unused = [image_id for image_id, sha in old if sha not in used]
            if unused:
                s.exec(sa_delete(StoredImage).where(col(StoredImage.id).in_(unused)))  # type: ignore[call-overload]
                s.commit()
        if unused:
            log.info("deleted %d uploaded image(s) no board or roster uses", len(unused))
        return len(unused)

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

    @staticmethod
    def _image(s: Session, value: Any, what: str) -> dict[str, str]:
        if not isinstance(value, str) or not _IMAGE_REF.fullmatch(value):
            raise InvalidDeclaration(f"{what} must be the sha256 of an uploaded image")
        row = s.exec(select(StoredImage).where(StoredImage.sha256 == value)).first()
        if row is None:
            raise NotFound(f"{what}: no uploaded image {value[:12]}…; upload it first")
        return {"image": row.sha256, "type": row.content_type, "width": row.width, "height": row.height}

    def _clean_map(self, s: Session, value: Any, current: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise InvalidDeclaration("map must be an object (image, squares_across, offset_x, offset_y) or null")
        unknown = set(value) - {"image", "squares_across", "offset_x", "offset_y"}
        if unknown:
            raise InvalidDeclaration(f"map: unknown field {sorted(unknown)[0]!r}")
        if "image" in value:
            found = self._image(s, value["image"], "map image")
            new = {**found, "squares_across": max(1, min(200, round(found["width"] / 70))), "offset_x": 0, "offset_y": 0}
        elif current is not None:
            new = dict(current)
        else:
            raise InvalidDeclaration("there is no map yet: send its image first")
        if "squares_across" in value:
            n = value["squares_across"]
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 200:
                raise InvalidDeclaration("squares_across must be a whole number from 1 to 200")
            new["squares_across"] = n
        for key, size in (("offset_x", new["width"]), ("offset_y", new["height"])):
            if key in value:
                v = value[key]
                if not isinstance(v, int | float) or isinstance(v, bool) or v != v or not -size <= v <= size:
                    raise InvalidDeclaration(f"{key} must be a number of image pixels from {-size} to {size}")
                new[key] = round(float(v), 2) if isinstance(v, float) else v
        return new

    def _clean_tokens(self, s: Session, table: GameTable, value: Any, current: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise InvalidDeclaration("tokens must be an object: {combatant id: {colour, portrait}}")
        known = {entry.get("id") for entry in table.lineup}
        if table.battle_id is not None:
            known |= set(self.battle(table.battle_id).state.get("combatants", {}))
        tokens = {k: dict(v) for k, v in current.items()}
        for cid, look in value.items():
            if cid not in known:
                raise InvalidDeclaration(f"tokens: no combatant {str(cid)[:40]!r} in the lineup")
            if look is None:
                tokens.pop(cid, None)
                continue
            if not isinstance(look, Mapping) or set(look) - {"colour", "portrait"}:
                raise InvalidDeclaration("each token takes colour (#rrggbb or null) and portrait (an image or null)")
            entry = tokens.get(cid, {"colour": None, "portrait": None})
            if "colour" in look:
                colour = look["colour"]
                if colour is not None and not (isinstance(colour, str) and re.fullmatch(r"#[0-9a-fA-F]{6}", colour)):
                    raise InvalidDeclaration("a token colour is #rrggbb (or null for the side's colour)")
                entry["colour"] = colour.lower() if colour else None
            if "portrait" in look:
                p = look["portrait"]
                entry["portrait"] = None if p is None else {k: v for k, v in self._image(s, p, "portrait").items()
                                                            if k in ("image", "type")}
            tokens[cid] = entry
        if len(tokens) > 200:
            raise InvalidDeclaration("at most 200 token looks")
        return tokens

    # --- rosters ----------------------------------------------------------------------------
    def rosters(self, system_id: str, library: str) -> list[dict[str, Any]]:
        """The saved rosters of a rule system in one library, newest first: each one's name and how
        many combatants it holds (the GM's table payload carries them, sent again whenever the table
        changes, so not the lineups themselves: ``roster_load`` reads one when the GM loads it)."""
        roster, member = Roster.__table__, RosterCombatant.__table__  # type: ignore[attr-defined]
        query = (
            sa_select(roster.c.id, roster.c.name, func.count(member.c.id))
            .select_from(roster.outerjoin(member, member.c.roster_id == roster.c.id))
            .where(roster.c.system_id == system_id, roster.c.library == library)
            .group_by(roster.c.id, roster.c.name)
            .order_by(roster.c.id.desc())
        )
        with self.engine.connect() as conn:
            return [{"id": roster_id, "name": scrub(name), "size": size} for roster_id, name, size in conn.execute(query)]

    @staticmethod
    def _library_room(s: Session, library: str) -> None:
        """A library holds at most :data:`MAX_ROSTERS` rosters: a new one past that is refused."""
        count = s.exec(sa_select(func.count()).select_from(Roster).where(Roster.library == library)).one()[0]
        if count >= MAX_ROSTERS:
            raise IllegalDeclaration(f"your roster library is full ({MAX_ROSTERS} rosters): delete one first, or save over one")

    def save_roster(self, table_id: int, name: Any) -> Roster:
        roster_name = clean_name(name, "roster name", 80)
        with self.session() as s:
            table = self._get_table(s, table_id)
            if not table.lineup:
                raise IllegalDeclaration("the lineup is empty: add combatants before saving a roster")
            self._library_room(s, table.library)
            roster = Roster(name=roster_name, system_id=table.system_id, library=table.library)
            s.add(roster)
            s.flush()
            looks = board_settings(table.board)["tokens"]
            for position, entry in enumerate(table.lineup):
                stats = {k: v for k, v in entry.items() if k not in ("seat",)}
                if entry.get("id") in looks:  # the token's colour and portrait travel with it
                    stats["_token"] = looks[entry["id"]]
                # (scrubbed: a lineup stored before the board read every field may hold a broken character)
                s.add(RosterCombatant(roster_id=roster.id, position=position, name=scrub(entry["name"]), stats=scrub(stats)))
            table.roster_id = roster.id  # the lineup is now this roster's: survivors may go back into it
            s.add(table)
            s.commit()
            s.refresh(roster)
            return roster

    def load_roster(self, table_id: int, roster_id: Any, *, append: bool = False) -> GameTable:
        if not isinstance(roster_id, int) or isinstance(roster_id, bool):
            raise InvalidDeclaration("pick a roster")
        roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            table = self._get_table(s, table_id)
            roster = self._library_roster(s, table, roster_id)
            if roster.system_id != table.system_id:
                raise IllegalDeclaration("that roster belongs to another rule system")
            members = s.exec(
                select(RosterCombatant).where(RosterCombatant.roster_id == roster.id).order_by(RosterCombatant.position)
            ).all()
            entries = [dict(m.stats) for m in members]
            carried = [(entry, entry.pop("_token", None)) for entry in entries]
            for entry in entries:
                if entry.get("controller") == "seat":
                    entry["controller"], entry["seat"] = "gm", None
            lineup = (list(table.lineup) if append else []) + entries
            taken = set()
            for i, entry in enumerate(lineup):
                if not entry.get("id") or entry["id"] in taken:
                    entry["id"] = f"c{i + 1}"
                    while entry["id"] in taken:
                        entry["id"] += "x"
                taken.add(entry["id"])
            table.lineup = get_system(table.system_id).validate_draft(lineup)
            board = board_settings(table.board)
            if not append:
                board["tokens"] = {}
            for entry, look in carried:
                if isinstance(look, dict):
                    board["tokens"][entry["id"]] = look
            table.board = board
            # where the lineup came from (survivors go back there); a lineup mixed from two is nobody's
            table.roster_id = roster.id if not append or not [e for e in lineup if e not in entries] else None
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def lineup_roster(self, table_id: int) -> int | None:
        """The roster the table's lineup came from (read afresh: a table read for a new battle on
        PostgreSQL carries only the columns the battle needs)."""
        with self.engine.connect() as conn:
            return conn.execute(sa_select(GameTable.__table__.c.roster_id).where(GameTable.__table__.c.id == table_id)).scalar()  # type: ignore[attr-defined]

    def _ended_battle_of(self, table_id: int, battle_id: Any) -> Battle:
        battle = self.battle(battle_id)
        if battle.table_id != table_id:
            raise NotPermitted("that battle is not at your table")
        if battle.status != "ended":
            raise IllegalDeclaration("the battle is still running: end it first, then write its survivors back")
        return battle

    def survivors(self, table_id: int, battle_id: Any, *, fallen: bool = False) -> tuple[list[str], list[str], list[str]]:
        """Who would carry on from a finished battle and who would be left behind, as
        :meth:`save_survivors` would write them (nothing is written); and who fell but lives (carried
        only with ``fallen``). Three lists of names."""
        from rules.carry_over import carry_over

        battle = self._ended_battle_of(table_id, battle_id)
        lineup = [dict(e) for e in self.table(table_id=table_id).lineup]
        with rules_guard("carry-over"):
            entries, left_out = carry_over(battle.state, lineup, fallen=fallen)
            standing, _ = carry_over(battle.state, lineup)
            with_fallen, _ = carry_over(battle.state, lineup, fallen=True)
        up = {e["id"] for e in standing}
        return [str(e["name"]) for e in entries], left_out, [str(e["name"]) for e in with_fallen if e["id"] not in up]

    def save_survivors(self, table_id: int, battle_id: Any, *, roster_id: Any = None, name: Any = None,
                       load: bool = True, fallen: bool = False) -> tuple[Roster, list[dict[str, Any]], list[str]]:
        """Write the survivors of a finished battle into a roster of the table's library: a new one
        (``name``) or over an existing one (``roster_id``, usually the one the lineup came from), with
        each survivor's state at the end (:func:`rules.carry_over.carry_over`): those still standing,
        and with ``fallen`` those who fell but live. ``load``: the table's lineup becomes the
        survivors too, so the next battle starts where this one stopped. Returns the roster, the
        survivors' lineup entries and the names left out (the defeated)."""
        from rules.carry_over import carry_over

        if (roster_id is None) == (name is None):
            raise InvalidDeclaration("say where the survivors go: a new roster's name, or the roster_id to write over")
        battle = self._ended_battle_of(table_id, battle_id)
        roster_name = clean_name(name, "roster name", 80) if name is not None else None
        if roster_id is not None:
            if not isinstance(roster_id, int) or isinstance(roster_id, bool):
                raise InvalidDeclaration("roster_id must be a number")
            roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            table = self._get_table(s, table_id)
            system = get_system(table.system_id)
            if system.id != battle.system_id:
                raise IllegalDeclaration("this table now plays another rule system")
            with rules_guard("carry-over"):
                entries, left_out = carry_over(battle.state, [dict(e) for e in table.lineup], fallen=fallen)
                entries = system.validate_draft(entries) if entries else entries
            if not entries:
                raise IllegalDeclaration("nobody is left standing: there is no one to write back"
                                         + ("" if fallen else " (tick “Also carry on those who fell but live” to carry the fallen)"))
            if roster_id is not None:
                roster = self._library_roster(s, table, roster_id)
                if roster.system_id != table.system_id:
                    raise IllegalDeclaration("that roster belongs to another rule system")
                for member in s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == roster.id)):
                    s.delete(member)
                s.flush()
            else:
                self._library_room(s, table.library)
                roster = Roster(name=roster_name or "", system_id=table.system_id, library=table.library)
                s.add(roster)
                s.flush()
            looks = board_settings(table.board)["tokens"]
            for position, entry in enumerate(entries):
                stats = {k: v for k, v in entry.items() if k != "seat"}
                if entry.get("id") in looks:
                    stats["_token"] = looks[entry["id"]]
                # (scrubbed: a lineup stored before the board read every field may hold a broken character)
                s.add(RosterCombatant(roster_id=roster.id, position=position, name=scrub(entry["name"]), stats=scrub(stats)))
            if load:
                table.lineup = entries
                table.roster_id = roster.id
                s.add(table)
            s.commit()
            s.refresh(roster)
            return roster, entries, left_out

    def delete_roster(self, table_id: int, roster_id: Any) -> None:
        if not isinstance(roster_id, int) or isinstance(roster_id, bool):
            raise InvalidDeclaration("pick a roster")
        roster_id = clean_id(roster_id, "roster_id")
        with self.session() as s:
            roster = self._library_roster(s, self._get_table(s, table_id), roster_id)
            for member in s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == roster_id)):
                s.delete(member)
            s.flush()
            s.delete(roster)
            s.commit()

    @staticmethod
    def _library_roster(s: Session, table: GameTable, roster_id: int) -> Roster:
        """A roster of the table's library; another library's answers as a missing one does, so a
        GM of another table can neither use nor probe it."""
        roster = s.get(Roster, roster_id)
        if roster is None or roster.library != table.library:
            raise NotFound("no such roster")
        return roster

    # --- battles ----------------------------------------------------------------------------
    def battle(self, battle_id: int) -> Battle:
        battle_id = clean_id(battle_id, "battle_id")
        with self.session() as s:
            battle = s.get(Battle, battle_id)
            if battle is None:
                raise NotFound("no such battle")
            return battle

    def start_battle(self, table_id: int, *, seed: str | None = None) -> CommandResult:
        """Start a new battle from the table's lineup and options; it becomes the table's battle."""
        if isinstance(self._store, PostgresCommandStore):
            return self._start_battle_in_two_round_trips(table_id, seed)
        with self._writer, self.session() as s:
            table = self._get_table(s, table_id)
            seats = list(s.exec(select(Seat).where(Seat.table_id == table.id).order_by(Seat.id)))
            system_id, state, events, battle_seed, setup = self._setup_battle(table, seats, seed)
            battle = Battle(table_id=table.id, system_id=system_id, version=1, state=state, seed=battle_seed, status=state.get("status", "active"),
                            setup=setup)
            s.add(battle)
            s.flush()
            s.add(BattleSnapshot(battle_id=battle.id, version=1, state=state, prev_version=None, checkpoint=True))
            self._write_events(s, battle.id, 1, events)
            table.battle_id = battle.id
            s.add(table)
            s.commit()
            assert battle.id is not None  # given by the flush
            started = BattleRecord(battle.id, table_id, system_id, 1, state, battle_seed, battle.status)
        return self._started(started, table, seats, events)

    def _start_battle_in_two_round_trips(self, table_id: int, seed: str | None) -> CommandResult:
        """:meth:`start_battle` on PostgreSQL: one read and one write statement (through the ORM it
        took about ten round trips, and under gevent every round trip waits for the other greenlets,
        so a restart in a busy process took several times its own work)."""
        store = self._store
        assert isinstance(store, PostgresCommandStore)
        with store.connection() as conn:
            found = store.start_read(conn, table_id)
            if found is None:
                raise NotFound("no such table")
            table, seats = found  # the read brings the board (blocked squares) and display settings along
            system_id, state, events, battle_seed, setup = self._setup_battle(table, seats, seed)
            status = state.get("status", "active")
            battle_id = store.start_write(conn, table, state, battle_seed, status, events, utcnow(), setup)
        table.battle_id = battle_id
        return self._started(BattleRecord(battle_id, table_id, system_id, 1, state, battle_seed, status), table, seats, events)

    def _started(self, battle: BattleRecord, table: GameTable, seats: list[Seat], events: list[dict[str, Any]]) -> CommandResult:
        """A new battle written: this process knows its first version (its first command needs no
        read, and the broadcast carries it to the other processes), and every room gets it."""
        self._remember_battle(battle)
        result = CommandResult(
            battle.id, battle.table_id, 1, 0, self._wire_events(1, events), battle=battle,
            seat_ids=[seat.public_id for seat in seats], table=table, seats=seats, undo_offer=None,
        )
        self._broadcast(result)
        return result

    def _setup_battle(
        self, table: GameTable, seats: list[Seat], seed: str | None
    ) -> tuple[str, dict[str, Any], list[dict[str, Any]], str, dict[str, Any]]:
        """A new battle of the table's lineup and options: its system, first state, events (the dice
        commitment last), seed, and the lineup and options it started from."""
        system = get_system(table.system_id)
        with rules_guard("lineup"):
            lineup = system.validate_lineup(table.lineup)
        _require_seats(lineup, seats)
        if len(lineup) < system.min_combatants:
            raise IllegalDeclaration(f"{system.name} needs at least {system.min_combatants} combatants in the lineup")
        options = system.validate_options(table.options)
        blocked = board_settings(table.board)["blocked"]
        if blocked and system.id in GRID_SYSTEMS:  # the table's blocked squares, enforced by the rules
            options = {**options, "blocked": blocked}
        battle_seed = seed or fixed_for_tests(self.test_seed, 32, "battle", table.id, table.battle_id) or secrets.token_hex(16)
        setup = {"lineup": copy.deepcopy(lineup), "options": copy.deepcopy(options)}
        with rules_guard("lineup"):
            state, events = system.setup(lineup, options, command_dice(battle_seed, "", 1))
        events = list(events) or [make_event("battle.started", f"A {system.name} battle begins.")]
        return system.id, state, [*events, committed_event(battle_seed)], battle_seed, setup

    def declare(
        self,
        battle_id: int,
        viewer: Viewer,
        declaration: Any,
        *,
        expected_v: Any = None,
        msg_id: Any = None,
        actor: str = "",
        table_id: int | None = None,
    ) -> CommandResult:
        """Apply one declaration of a viewer to a battle (of the table ``table_id``, when given)."""
        if not isinstance(declaration, dict):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        if not isinstance(kind, str):
            raise InvalidDeclaration("a declaration needs a type")
        if kind in engine.RESERVED:  # the board's own commands have their own doors
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        # the time it arrived: recorded with it, and read by the systems that keep a clock
        command = engine.Command.recorded({**declaration, "at": time.time()}, viewer)
        return self._command(battle_id, expected_v, msg_id, actor or _actor(viewer), command.record(), self._step_of(command),
                             table_id=table_id)

    def undo(self, battle_id: int, viewer: Viewer, *, expected_v: Any = None, msg_id: Any = None) -> CommandResult:
        """Take back one step, the last command: the battle goes back to the state that command was
        applied to (a client seed stays mixed in: undo passes over it). Again and again, back to the
        start, after the end too. The state brought back stands at its step again, so the same
        command made again rolls the same dice (:mod:`rules.fair`)."""
        if not viewer.is_gm:
            raise NotPermitted("only the GM may undo")
        record: dict[str, Any] = {"type": "undo"}
        extra: dict[str, Any] = {}

        def step(battle: BattleRecord, system: Any, state: dict[str, Any], version: int, key: int) -> engine.Step:
            with self.session() as s:
                current = s.get(BattleSnapshot, (battle.id, version - 1))
                back_to = current.prev_version if current is not None else None
                target = s.get(BattleSnapshot, (battle.id, back_to)) if back_to is not None else None
                if target is None:
                    raise IllegalDeclaration("there is nothing to undo: the battle is back at its start")
                taken = back_to + 1  # the command applied to that state: the last step
                said = self._events_of(s, battle.id, taken)
                made_by = s.exec(select(BattleCommand.actor).where(BattleCommand.battle_id == battle.id, BattleCommand.version == taken)).first()
                extra["offer"] = self._offer_at(s, battle.id, target.prev_version + 1) if target.prev_version is not None else None
            record["step"] = taken  # the command's record: replay and the verifier take back the same step
            extra["prev"] = target.prev_version
            extra["dice_step"] = target.version if target.dice_step is None else target.dice_step
            events = [undone_event(taken, said, made_by or "", state)]
            if battle.status == "ended":
                # taking back the end of a battle, whose seed the end revealed: the battle goes on with
                # a fresh seed, committed to in the undo's own events (a running battle's seed stays
                # secret), for every step not rolled yet; a step made again rolls its revealed dice
                extra["seed"] = secrets.token_hex(16)
                events.append(committed_event(extra["seed"], self._last_step_rolled(battle.id) + 1))
            else:
                extra.pop("seed", None)
            return engine.settle(state, copy.deepcopy(target.state), events, bool(target.checkpoint), seed=battle.seed, record=dict(record))

        return self._command(battle_id, expected_v, msg_id, "gm", record, step, prev_override=extra)

    @staticmethod
    def _events_of(s: Session, battle_id: int, version: int) -> list[dict[str, Any]]:
        """The events of one version as the rules made them (with their visibility)."""
        rows = s.exec(select(BattleEvent.payload, BattleEvent.visibility).where(
            BattleEvent.battle_id == battle_id, BattleEvent.version == version).order_by(col(BattleEvent.index))).all()
        return [{**payload, "visibility": visibility} for payload, visibility in rows]

    @staticmethod
    def _offer(version: int, events: list[dict[str, Any]]) -> dict[str, Any]:
        """The step made at ``version`` (its ``events``) as the GM's confirmation names it."""
        gm = Viewer.gm()
        return {"v": version, "name": step_name(events, gm, {}) or "the last step", "lines": step_lines(events, gm, {})[:8]}

    def _offer_at(self, s: Session, battle_id: int, version: int) -> dict[str, Any]:
        return self._offer(version, self._events_of(s, battle_id, version))

    def undo_offer(self, battle_id: int, version: int) -> dict[str, Any] | None:
        """The step an undo would take back from ``version`` (the battle's version), named for the GM's
        confirmation: ``{"v", "name", "lines"}``; None at the start (nothing to undo)."""
        with self.session() as s:
            current = s.get(BattleSnapshot, (battle_id, version))
            if current is None or current.prev_version is None:
                return None
            return self._offer_at(s, battle_id, current.prev_version + 1)

    def _last_step_rolled(self, battle_id: int) -> int:
        """The highest step a command of the battle has rolled (undone ones too)."""
        column = BattleSnapshot.__table__.c  # type: ignore[attr-defined]
        with self.engine.connect() as conn:
            highest = conn.execute(sa_select(func.max(func.coalesce(column.dice_step, column.version))).where(
                column.battle_id == battle_id)).scalar()
        return int(highest or 1)

    def _seed_for(self, battle: BattleRecord, key: int) -> str:
        """The seed step ``key`` rolls from: the battle's own, unless an undo took the battle back to a
        step rolled before its end was taken back (that step rolls its revealed dice again)."""
        if key > battle.version:  # the usual: no step this high was rolled before the battle's seed
            return battle.seed
        with self.session() as s:
            rows = s.exec(select(BattleEvent.version, BattleEvent.payload).where(
                BattleEvent.battle_id == battle.id, col(BattleEvent.type).in_(("dice.committed", "dice.revealed")))).all()
        said: dict[int, list[dict[str, Any]]] = {}
        for version, payload in rows:
            said.setdefault(version, []).append(payload)
        return seed_at(seeds_by_step(said, battle.seed), key)

    def assign(self, battle_id: int, viewer: Viewer, combatant: Any, controller: Any, seat: Any = None, *, expected_v: Any = None) -> CommandResult:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may hand combatants to players")
        if not isinstance(combatant, str):
            raise InvalidDeclaration("name the combatant to assign")
        if controller not in ("gm", "computer", "seat"):
            raise InvalidDeclaration("controller must be gm, computer or seat")
        battle = self.battle(battle_id)
        if controller == "seat":
            if not isinstance(seat, str) or seat not in {x.public_id for x in self.seats(battle.table_id)}:
                raise InvalidDeclaration("that player seat is not at this table")
        else:
            seat = None

        command = engine.Command(engine.ASSIGN, {"combatant": combatant, "controller": controller, "seat": seat}, viewer)
        result = self._command(battle_id, expected_v, None, "gm", command.record(), self._step_of(command))
        with self.session() as s:  # the lineup follows, so a restart keeps the assignment
            table = self._get_table(s, battle.table_id)
            lineup = [dict(e) for e in table.lineup]
            for entry in lineup:
                if entry.get("id") == combatant:
                    entry["controller"], entry["seat"] = controller, seat
            table.lineup = lineup
            s.add(table)
            s.commit()
        return result

    def end_battle(self, battle_id: int, viewer: Viewer, *, expected_v: Any = None) -> CommandResult:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may end the battle")
        command = engine.Command(engine.END, {}, viewer)
        return self._command(battle_id, expected_v, None, "gm", command.record(), self._step_of(command))

    # --- provable dice: the players' client seeds, sharing a finished battle (H7) ---------------
    def add_entropy(self, battle_id: int, viewer: Viewer, client_seed: Any, *, table_id: int | None = None) -> CommandResult:
        """Mix a seat's client seed into the battle's dice: a command of its own (a public event
        with the seat and the seed), once per seat and battle (its message id ``entropy-<seat>``:
        a second one is answered as a duplicate and changes nothing). Undo passes over it."""
        if viewer.role != "player" or not viewer.seat:
            raise NotPermitted("only a player's phone adds a client seed")
        seed = clean_client_seed(client_seed)
        seat = viewer.seat
        extra: dict[str, Any] = {}

        record = entropy_declaration(seat, seed)

        def step(battle: BattleRecord, system: Any, state: dict[str, Any], version: int, key: int) -> engine.Step:
            if battle.status == "ended":
                raise IllegalDeclaration("this battle has ended: its dice are all rolled")
            with self.session() as s:  # undo looks through this version as if it were not there
                current = s.get(BattleSnapshot, (battle.id, version - 1))
                extra["prev"] = current.prev_version if current is not None else version - 1
                extra["offer"] = self._offer_at(s, battle.id, extra["prev"] + 1) if extra["prev"] is not None else None
            extra["mix"] = mix_entropy(battle.mix, seat, seed)
            checkpoint = bool(current.checkpoint) if current is not None else False
            return engine.settle(state, state, [entropy_event(seat, seed)], checkpoint, seed=battle.seed, record=record)

        return self._command(battle_id, None, f"entropy-{seat}", f"seat:{seat}", record, step, prev_override=extra, table_id=table_id)

    def set_shareable(self, battle_id: int, table_id: int, shareable: Any) -> Battle:
        """The GM lets anyone see (or stops showing) the battle once it has ended: replay, report, export."""
        if not isinstance(shareable, bool):
            raise InvalidDeclaration("shareable must be true or false")
        with self.session() as s:
            battle = s.get(Battle, clean_id(battle_id, "battle_id"))
            if battle is None or battle.table_id != table_id:
                raise NotFound("no such battle at this table")
            battle.shareable = shareable
            s.add(battle)
            s.commit()
            s.refresh(battle)
            return battle

    # --- physical dice: the battle waits for faces typed on a phone or the GM console (H9) --------
    def enter_dice(self, battle_id: int, viewer: Viewer, faces: Any = None, *, board: bool = False,
                   expected_v: Any = None, msg_id: Any = None, table_id: int | None = None) -> CommandResult:
        """Faces typed for the roll due (by its roller's seat or the GM), or the GM's override
        (``board``: the board's dice roll it); the pending declaration then resolves, or asks for
        the next roll. A bad entry is refused and nothing changes."""
        if board and not viewer.is_gm:
            raise NotPermitted("only the GM may roll with the board's dice for a player")
        if viewer.role == "spectator":
            raise NotPermitted("spectators watch; they cannot roll")
        # the command's record is the entry it made (replay and the verifier re-apply that)
        command = engine.Command(engine.DICE_ENTER, {"board": True} if board else {"faces": faces}, viewer)
        return self._command(battle_id, expected_v, msg_id, _actor(viewer), {"type": engine.DICE_ENTER}, self._step_of(command),
                             table_id=table_id)

    def set_physical(self, battle_id: int, viewer: Viewer, combatant: Any, on: Any, *, expected_v: Any = None) -> CommandResult:
        """The GM switches one combatant to physical dice (or back to the board's) mid-battle."""
        if not viewer.is_gm:
            raise NotPermitted("only the GM may switch a combatant to real dice")

        command = engine.Command(engine.DICE_PHYSICAL, {"combatant": combatant, "physical": on}, viewer)
        return self._command(battle_id, expected_v, None, "gm", command.record(), self._step_of(command))

    def _step_of(self, command: engine.Command) -> StepFunction:
        """The step of one command of :mod:`rules.engine`, with the dice of the step it is (the seed
        that step rolls from, and the client seeds' mix)."""

        def step(battle: BattleRecord, system: Any, state: dict[str, Any], version: int, key: int) -> engine.Step:
            def board_dice(kept: Mapping[str, Any]) -> Any:
                # the board's dice of the command that first asked for the dice typed now (the same at
                # every resumption, so the rolls around the typed ones never change while the battle waits)
                first_step = int(kept.get("version", 0))
                return command_dice(self._seed_for(battle, first_step), kept.get("mix", ""), first_step)

            with rules_guard(_GUARDED.get(command.kind, "declaration")):
                return engine.step(system, state, command, command_dice(self._seed_for(battle, key), battle.mix, key), seed=battle.seed,
                                   board={"version": key, "mix": battle.mix or ""}, board_dice=board_dice)

        return step

    def _command(
        self,
        battle_id: Any,
        expected_v: Any,
        msg_id: Any,
        actor: str,
        declaration: dict[str, Any],
        step: StepFunction,
        prev_override: dict[str, Any] | None = None,
        table_id: int | None = None,
    ) -> CommandResult:
        battle_id = clean_id(battle_id, "battle_id")
        if expected_v is not None and (not isinstance(expected_v, int) or isinstance(expected_v, bool)):
            raise InvalidDeclaration("expected_v must be a whole number")
        if msg_id is not None and (not isinstance(msg_id, str) or not MSG_ID_RE.match(msg_id)):
            raise InvalidDeclaration("msg_id must be a short string of letters, digits and -_.:")
        resend: BattleRecord | None = None
        with self._lock(battle_id), self._writer, self._store.connection() as conn:
            result = None
            recent = self._recent_battle(battle_id) if msg_id is not None else None
            if recent is not None and self._current(recent, expected_v, actor) and table_id in (None, recent.table_id):
                # This process knows the last version of the battle (it wrote it, or another process
                # sent it along with its update): apply to that without reading it. When the battle
                # has moved on meanwhile, or this message was applied already, the compare-and-set
                # or the message id refuses the write, and the command goes the long way below,
                # from a fresh read. So does a refusal by the rules
                # (it may come from the old state) and a dead connection (the message id tells,
                # after the read, whether the write landed before the connection died).
                battle = recent  # (the engine copies the state it applies a command to)
                try:
                    result = self._apply(conn, battle, None, msg_id, actor, declaration, step, prev_override)
                except RulesError:
                    result = None
                if result is None:
                    self._forget_battle(battle_id)
            if result is None:
                found = self._store.read(conn, battle_id, msg_id)
                if found is None:
                    raise NotFound("no such battle")
                battle, seen_version = found.battle, found.seen_version
                if table_id is not None and battle.table_id != table_id:
                    raise NotPermitted("that battle is not at your table")
                if seen_version is not None:
                    resend = battle if seen_version == battle.version else None
                    result = CommandResult(battle.id, battle.table_id, seen_version, seen_version - 1, [], duplicate=True)
                elif not self._current(battle, expected_v, actor) and not self._moved_on_beside(battle, expected_v, declaration, actor):
                    now = battle.version if actor == "gm" else told_version(battle)
                    raise StaleVersion(
                        f"the battle has moved on (you saw version {expected_v}, it is now at {now}); look again and retry", now,
                    )
                else:
                    # the state was decoded from the row just now: the rules may have this copy
                    result = self._apply(conn, battle, found.seat_ids, msg_id, actor, declaration, step, prev_override)
                    if result is None:
                        raise StaleVersion("another command was applied at the same moment; look again and retry", battle.version + 1)
            if result.battle is not None:
                self._remember_battle(result.battle)
        if resend is not None:  # the update of a message applied already may never have gone out (a process died)
            self._resend(resend, actor)
        self._broadcast(result)
        return result

    @staticmethod
    def _current(battle: BattleRecord, expected_v: Any, actor: str) -> bool:
        """Whether a command made on version ``expected_v`` was made on the battle as it is: the
        version itself, or for a player or spectator the last version they were told of (a GM's
        secret since then changed nothing they see, and their command must not tell them of it)."""
        return expected_v is None or expected_v == battle.version or (actor != "gm" and expected_v == told_version(battle))

    def _resend(self, battle: BattleRecord, actor: str) -> None:
        """Send the battle's last update again, to every page: the reply to a message that was
        applied already (its sender did not get the answer, so pages may lack the update too; the
        process that applied it may have died before broadcasting it). Pages that have it ignore it."""
        events = [dict(ev) for ev in self.events_since(battle.id, battle.version - 1) if ev["v"] == battle.version]
        quiet = gm_secret(actor, events, battle.state)
        self._broadcast(CommandResult(battle.id, battle.table_id, battle.version, battle.version - 1, events, battle=battle,
                                      quiet=quiet, resent=True))

    #: how many versions a command may be behind when only commands beside it came in between
    #: (client seeds, one per seat; the other side's secret choice)
    BESIDE_GAP = 16

    def _moved_on_beside(self, battle: BattleRecord, seen: Any, declaration: dict[str, Any], actor: str = "gm") -> bool:
        """Whether every command since version ``seen`` left what ``declaration`` was made on as it was,
        so that it still reads the same board and is applied rather than refused as out of date:

        - a player's client seed leaves the battle's state as it was (a player's first tap often
          races their own phone's seed);
        - when ``declaration`` is one of the system's simultaneous declarations (Phantom's Bane's
          secret choice), another combatant's simultaneous declaration: the two sides choose at the
          same moment, blind to each other, and the turn cannot have resolved without this
          combatant's own choice. A choice for the same combatant, or any other command, in between
          still makes it out of date;
        - for a player's or a spectator's command, a GM's secret (a command whose events reach only
          the GM): it changed nothing they see, and refusing would tell them it happened.
        """
        current = battle.version
        if not isinstance(seen, int) or not 0 <= seen < current or current - seen > self.BESIDE_GAP:
            return False
        system = get_system(battle.system_id)
        with self.session() as s:
            commands = s.exec(select(BattleCommand.version, BattleCommand.actor, BattleCommand.declaration).where(
                BattleCommand.battle_id == battle.id, col(BattleCommand.version) > seen, col(BattleCommand.version) <= current)).all()
            rows = s.exec(select(BattleEvent.version, BattleEvent.visibility, BattleEvent.payload).where(
                BattleEvent.battle_id == battle.id, col(BattleEvent.version) > seen)).all() if actor != "gm" else []
        said: dict[int, list[dict[str, Any]]] = {}
        for version, visibility, payload in rows:
            said.setdefault(version, []).append({**payload, "visibility": visibility})
        secret = {version for version, by, _d in commands if gm_secret(by, said.get(version, []), battle.state)}
        return len(commands) == current - seen and all(
            isinstance(d, dict) and (d.get("type") == ENTROPY or system.made_beside(declaration, d) or version in secret)
            for version, _by, d in commands)

    def _apply(
        self,
        conn: Any,
        battle: BattleRecord,
        seat_ids: list[str] | None,
        msg_id: str | None,
        actor: str,
        declaration: dict[str, Any],
        step: StepFunction,
        prev_override: dict[str, Any] | None,
    ) -> CommandResult | None:
        """Apply a command to ``battle`` (whose state the rules may change) and write it; None if the
        compare-and-set or the message id refused the write (nothing was written)."""
        current = battle.version
        new_version = current + 1
        # the step this command is (its dice): one past the step of the state it is applied to
        key = battle.at_step + 1
        made = step(battle, get_system(battle.system_id), battle.state, new_version, key)
        # (the events include the dice seed's reveal, once the battle ends)
        new_state, events, checkpoint, declaration = made.state, made.events, made.checkpoint, made.record or declaration
        status = new_state.get("status", battle.status)
        # a GM's secret (Phantom's Bane's "block escape", a hidden NPC's hit points): the others'
        # pages get nothing, and their version stays where it was
        quiet = gm_secret(actor, events, new_state)
        told = told_version(battle)
        mix = prev_override.get("mix") if prev_override else None
        new_seed = prev_override.get("seed") if prev_override else None
        # the new state stands at this command's step (an undo's at the step of the state it brings back)
        dice_step = prev_override.get("dice_step", key) if prev_override else key
        prev_version = prev_override["prev"] if prev_override and "prev" in prev_override else current
        write = CommandWrite(
            battle_id=battle.id,
            table_id=battle.table_id,
            current=current,
            new_version=new_version,
            state=new_state,
            status=status,
            prev_version=prev_version,
            checkpoint=checkpoint,
            events=events,
            msg_id=msg_id or f"auto-{new_version}-{secrets.token_hex(4)}",
            actor=actor[:80],
            declaration=declaration,
            at=utcnow(),
            mix=mix,
            seed=new_seed,
            public_version=told if quiet else new_version,
            dice_step=dice_step,
        )
        written = self._store.write(conn, write)
        if written is None:
            return None
        after = BattleRecord(battle.id, battle.table_id, battle.system_id, new_version, new_state, new_seed or battle.seed, status,
                             battle.mix if mix is None else mix, write.public_version, dice_step)
        # what an undo would take back now: this command itself, unless it was an undo or a client seed
        if prev_override and "offer" in prev_override:
            offer = prev_override["offer"]
        else:
            offer = self._offer(new_version, events) if prev_version == current else UNKNOWN
        return CommandResult(
            battle.id, battle.table_id, new_version, current, self._wire_events(new_version, events), battle=after,
            seat_ids=written.seat_ids if written.seat_ids is not None else seat_ids, quiet=quiet, prev_told=told, undo_offer=offer,
        )

    # --- the battles as the last command this process knows of left them --------------------
    def _recent_battle(self, battle_id: int) -> BattleRecord | None:
        with self._recent_guard:
            return self._recent.get(battle_id)

    def _remember_battle(self, battle: BattleRecord, *, only_newer: bool = False) -> bool:
        """Keep the battle as a command left it (its state is not changed afterwards:
        projections only read it, and the next command applies to a copy). ``only_newer``: keep it
        only if no version as new is kept already; True if it was kept."""
        with self._recent_guard:
            known = self._recent.get(battle.id)
            if only_newer and known is not None and known.version >= battle.version:
                return False
            self._recent.pop(battle.id, None)
            self._recent[battle.id] = battle
            while len(self._recent) > RECENT_BATTLES:
                del self._recent[next(iter(self._recent))]
        return True

    def learn_battle(self, sent: Mapping[str, Any]) -> bool:
        """Keep a battle as another process's command left it: its update came through the message
        queue, after that process's write was committed. The next command here then needs no read
        either (the compare-and-set still decides: a version this process has not seen yet refuses
        the write and the command reads). An older version than the one kept is ignored, and so is a
        message that does not have the shape :meth:`battle_fields` gives; True if it was kept."""
        try:
            battle = BattleRecord(*(sent[name] for name in _RECORD_FIELDS))
        except (KeyError, TypeError):
            return False
        if not (
            all(type(getattr(battle, name)) is int for name in ("id", "table_id", "version"))
            and all(type(getattr(battle, name)) is str for name in ("system_id", "seed", "status", "mix"))
            and type(battle.state) is dict
            and (battle.public_version is None or type(battle.public_version) is int)
            and (battle.dice_step is None or type(battle.dice_step) is int)
        ):
            return False
        return self._remember_battle(battle, only_newer=True)

    @staticmethod
    def battle_fields(battle: BattleRecord) -> dict[str, Any]:
        """A battle as :meth:`learn_battle` takes it from another process (JSON-shaped, shallow)."""
        return record_fields(battle)

    def _forget_battle(self, battle_id: int) -> None:
        with self._recent_guard:
            self._recent.pop(battle_id, None)

    def _write_events(self, s: Session, battle_id: int, version: int, events: list[dict[str, Any]]) -> None:
        if events:  # SQLAlchemy Core: the ORM's bulk insert costs several times more here
            s.connection().execute(BattleEvent.__table__.insert(), event_rows(battle_id, version, events, utcnow()))  # type: ignore[attr-defined]

    @staticmethod
    def _wire_events(version: int, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"v": version, "i": i, **ev} for i, ev in enumerate(events)]

    def _broadcast(self, result: CommandResult) -> None:
        """Hand an accepted command to the broadcaster, complete: the battle as it left it and the step
        an undo would take back now (the broadcaster projects from these and reads nothing)."""
        if self.broadcaster is not None and not result.duplicate:
            if result.undo_offer is UNKNOWN:
                result = replace(result, undo_offer=self.undo_offer(result.battle_id, result.version))
            self.broadcaster(result)

    # --- projections ------------------------------------------------------------------------
    def project(self, battle: Battle | BattleRecord, viewer: Viewer, events: Iterable[Mapping[str, Any]], *,
                undo_offer: Any = UNKNOWN) -> dict[str, Any]:
        """One viewer's payload of a battle (:func:`webapp.projection.project`); for the GM, the step an
        undo would take back now is looked up unless ``undo_offer`` names it."""
        if viewer.is_gm and undo_offer is UNKNOWN:
            undo_offer = self.undo_offer(battle.id, battle.version)
        return project(battle, viewer, events, None if undo_offer is UNKNOWN else undo_offer)

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

    def snapshot_for(self, battle_id: int, viewer: Viewer, since_v: int = 0) -> dict[str, Any]:
        battle = self.battle(battle_id)
        since = since_v if 0 <= since_v <= battle.version else 0
        return self.project(battle, viewer, self.events_since(battle_id, since))

    # --- the table display: its settings and the screens paired with it ------------------------
    def set_display(self, table_id: int, changes: Any) -> GameTable:
        """Change the table display's settings (``{"show_join": bool, "show_odds": bool}``, either)."""
        if not isinstance(changes, dict) or not changes:
            raise InvalidDeclaration("say what to change: show_join and/or show_odds (true or false)")
        for key, value in changes.items():
            if key not in DISPLAY_DEFAULTS:
                raise InvalidDeclaration(f"the display has no setting {str(key)[:40]!r} (only show_join and show_odds)")
            if not isinstance(value, bool):
                raise InvalidDeclaration(f"{key} must be true or false")
        with self.session() as s:
            table = self._get_table(s, table_id)
            table.display = {**display_settings(table.display), **changes}
            s.add(table)
            s.commit()
            s.refresh(table)
            return table

    def screens_of(self, table_id: int) -> list[DisplayScreen]:
        with self.session() as s:
            return list(s.exec(select(DisplayScreen).where(DisplayScreen.table_id == table_id).order_by(DisplayScreen.id)))

    def screen(self, token: Any) -> DisplayScreen | None:
        """The screen a browser's key names, or None."""
        if not isinstance(token, str) or not 0 < len(token) <= 64:
            return None
        with self.session() as s:
            return s.exec(select(DisplayScreen).where(DisplayScreen.token == token)).first()

    def new_screen(self, label: str) -> DisplayScreen:
        """A screen that wants to become a table display, with a fresh pairing code. Screens whose
        code expired long ago and that never got paired are cleared out on the way."""
        with self.session() as s:
            stale = utcnow() - SCREEN_FORGET_AFTER
            for old in s.exec(select(DisplayScreen).where(col(DisplayScreen.table_id).is_(None), DisplayScreen.code_at < stale)):
                s.delete(old)
            s.commit()
        for _ in range(20):
            screen = DisplayScreen(public_id="d" + secrets.token_hex(5), token=_token(), code=pairing_code(), label=label[:60])
            with self.session() as s:
                s.add(screen)
                try:
                    s.commit()
                except IntegrityError:
                    continue
                s.refresh(screen)
                return screen
        raise RuntimeError("could not find a free pairing code")

    def renew_code(self, screen: DisplayScreen) -> DisplayScreen:
        """A fresh pairing code for an unpaired screen (its old one expired, or the GM unpaired it)."""
        for _ in range(20):
            with self.session() as s:
                row = s.get(DisplayScreen, screen.id)
                if row is None:
                    raise NotFound("no such screen")
                row.code, row.code_at, row.table_id, row.paired_at = pairing_code(), utcnow(), None, None
                s.add(row)
                try:
                    s.commit()
                except IntegrityError:
                    continue
                s.refresh(row)
                return row
        raise RuntimeError("could not find a free pairing code")

    def pair_screen(self, table_id: int, code: Any) -> DisplayScreen:
        """Make the screen showing ``code`` the display of a table (the GM typed or scanned the code)."""
        wanted = clean_pairing_code(code)
        with self.session() as s:
            self._get_table(s, table_id)
            screen = s.exec(select(DisplayScreen).where(DisplayScreen.code == wanted)).first()
            if screen is None or screen.table_id is not None or code_expired(screen):
                raise NotFound("no screen shows that pairing code (codes expire after 10 minutes: look at the screen again)")
            screen.table_id, screen.paired_at, screen.code = table_id, utcnow(), None
            s.add(screen)
            s.commit()
            s.refresh(screen)
            return screen

    def unpair_screen(self, table_id: int, public_id: Any) -> DisplayScreen:
        """Let a screen go: it shows a new pairing code again."""
        if not isinstance(public_id, str) or not public_id or len(public_id) > 24:
            raise InvalidDeclaration("say which screen to unpair")
        with self.session() as s:
            screen = s.exec(select(DisplayScreen).where(DisplayScreen.public_id == public_id)).first()
            if screen is None or screen.table_id != table_id:
                raise NotFound("no such screen is paired with this table")
            screen.table_id, screen.paired_at, screen.code = None, None, None
            s.add(screen)
            s.commit()
            s.refresh(screen)
            return screen


#: letters and digits that read unambiguously on a TV (no 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B, Q)
PAIRING_ALPHABET = "ACDEFHJKMNPRTUVWXY3479"
PAIRING_CODE_LENGTH = 6
#: how long a pairing code stays good while its screen waits to be paired
PAIRING_CODE_LIFETIME = timedelta(minutes=10)
#: unpaired screens whose code is older than this are deleted when new screens come
SCREEN_FORGET_AFTER = timedelta(days=1)


def pairing_code() -> str:
    return "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_CODE_LENGTH))


def clean_pairing_code(raw: Any) -> str:
    """A pairing code as typed: any case, spaces and dashes ignored; refused if it cannot be one."""
    if not isinstance(raw, str):
        raise InvalidDeclaration("a pairing code is needed")
    code = raw.strip().upper().replace(" ", "").replace("-", "")
    if not code:
        raise InvalidDeclaration("a pairing code is needed")
    if len(code) != PAIRING_CODE_LENGTH or any(ch not in PAIRING_ALPHABET for ch in code):
        raise InvalidDeclaration(f"a pairing code is {PAIRING_CODE_LENGTH} letters and digits, as the screen shows it")
    return code


def aware(moment: datetime) -> datetime:
    """A stored time as UTC (SQLite gives it back without its zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def code_expired(screen: DisplayScreen, now: datetime | None = None) -> bool:
    return screen.code is None or (now or utcnow()) - aware(screen.code_at) > PAIRING_CODE_LIFETIME
