"""The tables: a table and its seats, the GM's set-up (lineup, options, notes), the board of the grid
systems (map, token looks, blocked squares) and the uploaded images the boards use."""

from __future__ import annotations

import copy
import json
import re
import secrets
import time
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any, TypedDict

from sqlalchemy import delete as sa_delete
from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from rules import IllegalDeclaration, InvalidDeclaration, NotPermitted, Viewer, get_system
from rules.terrain import clean_blocked

from .config import fixed_for_tests
from .desk import Desk, NotFound, clean_name, log, new_join_code, new_token, require_seats, rules_guard
from .fog import sight_of
from .models import (
    Battle,
    BattleEvent,
    GameTable,
    RosterCombatant,
    Seat,
    StoredImage,
    new_library_key,
    row_id,
    table_of,
    utcnow,
)
from .text import read_text

#: a roster library's key, as :func:`new_library_key` makes them (or ``shared``, the rows from before)
LIBRARY_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{6,64}$")
#: an uploaded image that no board and no saved roster uses is deleted once it is older than this
UNUSED_IMAGE_AGE = timedelta(days=1)
IMAGE_REF = re.compile(r"[0-9a-f]{64}")  # an image's sha256, wherever a board or a roster keeps it


class ImageRef(TypedDict):
    """An uploaded image as a board's map or a roster's portrait names it."""

    image: str
    type: str
    width: int
    height: int


def board_settings(stored: Any) -> dict[str, Any]:
    """A table's board as stored (:attr:`GameTable.board`), the defaults filled in: ``{"map": None |
    {image, type, width, height, squares_across, offset_x, offset_y}, "tokens": {combatant id: {colour,
    portrait: None | {image, type}}}, "blocked": [[x, y], ...], "fog": [[x, y], ...], "sight": None | n}``
    (the fog: :mod:`webapp.fog`)."""
    board = stored if isinstance(stored, dict) else {}
    return {"map": copy.deepcopy(board.get("map")), "tokens": copy.deepcopy(board.get("tokens") or {}),
            "blocked": copy.deepcopy(board.get("blocked") or []), "fog": copy.deepcopy(board.get("fog") or []),
            "sight": sight_of(board),
            **({"hidden": copy.deepcopy(board["hidden"])} if "hidden" in board else {})}  # webapp/hiding.py


def grid_size(options: Mapping[str, Any]) -> tuple[int, int]:
    """A grid system's width and height from its options (AD&D's grid may grow for the encounter
    distance: squares past the set size are refused until the GM makes the grid larger)."""
    width = options.get("width", options.get("grid_width"))
    height = options.get("height", options.get("grid_height"))
    return (width if isinstance(width, int) else 60), (height if isinstance(height, int) else 60)


class TableDesk(Desk):
    """Tables and seats, the GM's set-up and the board."""

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
                    join_code=new_join_code(),
                    gm_token=new_token(),
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
            taken = s.exec(select(func.count()).select_from(Seat).where(col(Seat.table_id) == table.id)).one()
            if taken >= self.seats_per_table:
                raise IllegalDeclaration(f"this table is full ({self.seats_per_table} seats): ask the GM")
            seat = Seat(table_id=row_id(table), public_id="s" + (fixed_for_tests(self.test_seed, 8, "seat", table.id, taken, seat_name) or secrets.token_hex(4)), name=seat_name, token=new_token())
            s.add(seat)
            s.commit()
            s.refresh(seat)
        return table, seat

    def rotate_join_code(self, table_id: int) -> GameTable:
        """A new join code for the table (the old one stops working; seats are kept: they hold
        their own keys, not the code)."""
        for _ in range(20):
            try:
                return self._set_table(table_id, join_code=new_join_code())
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
                table = table_of(model)
                conn.execute(sa_select(table).order_by(table.c.id.desc()).limit(1)).all()
            if self.engine.dialect.name == "sqlite" and time.monotonic() - self._checked_file > 60:
                verdict = conn.execute(text("PRAGMA quick_check(1)")).scalar()
                if verdict != "ok":
                    raise RuntimeError(f"database disk image is malformed ({verdict})")
                self._checked_file = time.monotonic()

    def gm_token(self, table_id: int) -> str:
        """The table's GM key as stored now (a Core read: the socket layer asks it once a second)."""
        column = table_of(GameTable).c
        with self.engine.connect() as conn:
            return str(conn.execute(sa_select(column.gm_token).where(column.id == table_id)).scalar() or "")

    def new_gm_key(self, table_id: int) -> GameTable:
        """A new GM key: the GM link and every console opened with the old key stop working."""
        return self._set_table(table_id, gm_token=new_token())

    def seat_ids(self, table_id: int) -> list[str]:
        """The public ids of a table's seats, in joining order (read at every broadcast: Core, not the ORM)."""
        return self._store.seat_ids(table_id)

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

    def _check_seats(self, s: Session, table: GameTable, lineup: Iterable[Mapping[str, Any]]) -> None:
        require_seats(lineup, s.exec(select(Seat).where(Seat.table_id == table.id)))

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
        if not get_system(table.system_id).traits.grid:  # a grid system takes a map, token looks, blocked squares
            raise IllegalDeclaration("this rule system has no grid: maps and blocked squares are for grid systems")
        board = board_settings(table.board)
        with self.session() as s:
            if "map" in patch:
                board["map"] = self._clean_map(s, patch["map"], board["map"])
            if "tokens" in patch:
                board["tokens"] = self._clean_tokens(s, table, patch["tokens"], board["tokens"])
        changed = False
        if "blocked" in patch:
            width, height = grid_size(table.options)
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
                used.update(IMAGE_REF.findall(json.dumps(board or {})))
            for stats in s.exec(select(RosterCombatant.stats)).all():
                used.update(IMAGE_REF.findall(json.dumps(stats or {})))
            unused = [image_id for image_id, sha in old if sha not in used]
            if unused:
                s.exec(sa_delete(StoredImage).where(col(StoredImage.id).in_(unused)))
                s.commit()
        if unused:
            log.info("deleted %d uploaded image(s) no board or roster uses", len(unused))
        return len(unused)

    @staticmethod
    def _image(s: Session, value: Any, what: str) -> ImageRef:
        if not isinstance(value, str) or not IMAGE_REF.fullmatch(value):
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
        new: dict[str, Any]
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
