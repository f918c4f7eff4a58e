"""The database tables (SQLModel): game tables, seats, rosters, battles and the append-only event log."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import JSON, Column, Integer, LargeBinary, Table, Text, UniqueConstraint, event, false, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapper
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Row(Protocol):
    @property
    def id(self) -> int | None: ...


def row_id(row: _Row) -> int:
    """The id of a row read from the database (or flushed to it), where it always has one."""
    if row.id is None:
        raise ValueError(f"{type(row).__name__} has no id: it was never stored")
    return row.id


def table_of(model: type[SQLModel]) -> Table:
    """The SQLAlchemy table of a table model, for Core statements."""
    table: Table = model.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__ on its table classes but does not declare it
    return table


def new_library_key() -> str:
    """The key of a new roster library (see :attr:`GameTable.library`)."""
    return secrets.token_urlsafe(24)


class GameTable(SQLModel, table=True):
    """One group's session: a rule system, a GM, the players' seats and the current battle."""

    __tablename__ = "game_table"
    #: the revision a write raises (:func:`_table_changed`) comes back with the write (RETURNING)
    __mapper_args__ = {"eager_defaults": True}

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(index=True, unique=True, max_length=32)
    name: str = Field(max_length=80)
    system_id: str = Field(max_length=40)
    join_code: str = Field(index=True, unique=True, max_length=12)
    gm_token: str = Field(index=True, unique=True, max_length=64)
    lineup: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    gm_notes: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    battle_id: int | None = Field(default=None)
    created_at: datetime = Field(default_factory=utcnow)
    #: the key of the roster library this table's GM saves to and loads from: the tables a GM makes
    #: from one browser share it, other GMs' tables cannot see it (it never reaches a page)
    library: str = Field(default_factory=new_library_key, max_length=64, index=True)
    #: what the table display shows besides the board: ``{"show_join": bool, "show_odds": bool}``
    #: (None until the GM changes one: both off; see :func:`display_settings`)
    display: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: the board under the grid: ``{"map", "tokens", "blocked"}`` (None until the GM sets one; see
    #: :func:`webapp.tables.board_settings`)
    board: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: the saved roster the lineup was loaded from (or last saved as): survivors may be written back
    #: over it (None: a lineup built by hand, or mixed from several rosters). A plain number, no
    #: foreign key: deleting the roster leaves it pointing nowhere, which the service reads as None
    roster_id: int | None = Field(default=None)
    #: raised by every change to the table or its seats (:func:`_table_changed`, in the change's own
    #: write): a page keeps the table payload of the highest revision it was given, so a payload read
    #: before an edit and delivered after it never draws the table as it was
    revision: int = Field(default=0, sa_column=Column(Integer, nullable=False, default=0, server_default="0"))


class Seat(SQLModel, table=True):
    """A player who joined a table from a phone."""

    id: int | None = Field(default=None, primary_key=True)
    table_id: int = Field(foreign_key="game_table.id", index=True)
    public_id: str = Field(index=True, unique=True, max_length=24)
    name: str = Field(max_length=40)
    token: str = Field(index=True, unique=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)


@event.listens_for(GameTable, "before_update")
def _table_changed(_mapper: Mapper[Any], _connection: Connection, table: GameTable) -> None:
    """Every write of a table raises its revision, in the database (two writes at once raise it
    twice); the row's revision is read again when next asked for (as ``refresh`` does)."""
    table.revision = GameTable.revision + 1  # a SQL expression, evaluated in the UPDATE


@event.listens_for(Seat, "after_insert")
@event.listens_for(Seat, "after_update")
@event.listens_for(Seat, "after_delete")
def _seat_changed(_mapper: Mapper[Any], connection: Connection, seat: Seat) -> None:
    """A seat joining, renamed or gone changes its table's payload: the table's revision goes up, in
    the same transaction."""
    tables = table_of(GameTable)
    connection.execute(update(tables).where(tables.c.id == seat.table_id).values(revision=tables.c.revision + 1))


class Roster(SQLModel, table=True):
    """A saved group of combatants of one rule system, in one GM's library."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=80)
    system_id: str = Field(max_length=40, index=True)
    created_at: datetime = Field(default_factory=utcnow)
    #: the library it belongs to (:attr:`GameTable.library`): only that library's tables list, load
    #: or delete it
    library: str = Field(max_length=64, index=True)


class RosterCombatant(SQLModel, table=True):
    """One combatant of a roster: name and stat block."""

    __tablename__ = "roster_combatant"

    id: int | None = Field(default=None, primary_key=True)
    roster_id: int = Field(foreign_key="roster.id", index=True)
    position: int = 0
    name: str = Field(max_length=40)
    stats: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Battle(SQLModel, table=True):
    """A battle of a table: the current snapshot and its version (raised by one per accepted command)."""

    id: int | None = Field(default=None, primary_key=True)
    table_id: int = Field(foreign_key="game_table.id", index=True)
    system_id: str = Field(max_length=40)
    version: int = 0
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    #: the dice seed: stored, never sent to a client
    seed: str = Field(max_length=64)
    status: str = Field(default="active", max_length=16)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    #: the mix of the client seeds the players' phones sent (:func:`rules.dice.mix_entropy`; "" before any)
    mix: str = Field(default="", max_length=64, sa_column_kwargs={"server_default": ""})
    #: the lineup and options the battle started from: ``{"lineup", "options"}`` (None for older battles)
    setup: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: the GM let anyone see the finished battle (its replay, report and export)
    shareable: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    #: the last version the players and spectators were told of: a GM's secret change (one whose
    #: events reach nobody else) raises the version but not this (None: the same as ``version``)
    public_version: int | None = Field(default=None)


class BattleSnapshot(SQLModel, table=True):
    """The state after each version, for undo and for audit."""

    __tablename__ = "battle_snapshot"

    battle_id: int = Field(foreign_key="battle.id", primary_key=True)
    version: int = Field(primary_key=True)
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    #: the version this state logically follows (an undo copies its target's predecessor)
    prev_version: int | None = None
    checkpoint: bool = True
    #: the step this state stands at (:mod:`rules.fair`): the command that made it, whose dice it
    #: rolled; the next command is this + 1. An undo gives back the step of the state it restores,
    #: so a step made again rolls the same dice (None: the version itself, as before undos took
    #: back one step)
    dice_step: int | None = None


class BattleEvent(SQLModel, table=True):
    """The append-only event log: every event of every accepted command, with its visibility."""

    __tablename__ = "battle_event"
    __table_args__ = (UniqueConstraint("battle_id", "version", "index", name="uq_event_position"),)

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", index=True)
    version: int
    index: int
    type: str = Field(max_length=60)
    visibility: str = Field(max_length=60)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class BattleCommand(SQLModel, table=True):
    """Each accepted command: who sent it, what it was, and its message id (resends are answered, not reapplied)."""

    __tablename__ = "battle_command"
    __table_args__ = (UniqueConstraint("battle_id", "msg_id", name="uq_command_msg"),)

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", index=True)
    version: int
    msg_id: str = Field(max_length=64)
    actor: str = Field(max_length=80)
    declaration: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class BattleChances(SQLModel, table=True):
    """Who's winning at one version of a battle, as the live update worked it out (issue 37,
    webapp/chances_live.py): the ``chances`` message. The replay and the report read them back."""

    __tablename__ = "battle_chances"
    __table_args__ = (UniqueConstraint("battle_id", "version", name="uq_chances_version"),)

    id: int | None = Field(default=None, primary_key=True)
    battle_id: int = Field(foreign_key="battle.id", index=True)
    version: int
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


#: the table display's settings and their defaults (:attr:`GameTable.display`)
DISPLAY_DEFAULTS: dict[str, bool] = {"show_join": False, "show_odds": False,
                                     "show_chances": False, "phones_chances": False}  # who's winning: webapp/chances_live.py


def display_settings(stored: Any) -> dict[str, bool]:
    """A table's display settings, the defaults filled in (a table from before has none stored)."""
    settings = dict(DISPLAY_DEFAULTS)
    if isinstance(stored, dict):
        settings.update({k: v for k, v in stored.items() if k in DISPLAY_DEFAULTS and isinstance(v, bool)})
    return settings


class DisplayScreen(SQLModel, table=True):
    """A TV or laptop that chose "Use this screen as a table display": it shows a short pairing code
    until a GM pairs it with a table, then that table's display until the GM unpairs it.

    The screen's browser keeps ``token`` (in its signed session cookie) and asks the server what to
    show; the row is all there is to it, so any server process answers alike."""

    __tablename__ = "display_screen"

    id: int | None = Field(default=None, primary_key=True)
    #: the id the GM's console names it by (never the token)
    public_id: str = Field(index=True, unique=True, max_length=24)
    token: str = Field(index=True, unique=True, max_length=64)
    #: the pairing code it shows while unpaired (None while paired or until it asks for a new one)
    code: str | None = Field(default=None, index=True, unique=True, max_length=12)
    code_at: datetime = Field(default_factory=utcnow)
    label: str = Field(default="Screen", max_length=60)
    table_id: int | None = Field(default=None, foreign_key="game_table.id", index=True)
    paired_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class StoredImage(SQLModel, table=True):
    """An uploaded map or token portrait: checked by decoding, re-encoded without metadata, kept in the
    database (so every server process serves it, and it survives a restart), named by its content hash."""

    __tablename__ = "stored_image"

    id: int | None = Field(default=None, primary_key=True)
    #: SHA-256 of ``data``, in hex: the image's address (``/img/<sha256>.<ext>``)
    sha256: str = Field(index=True, unique=True, max_length=64)
    #: ``image/png``, ``image/jpeg`` or ``image/webp``
    content_type: str = Field(max_length=20)
    width: int
    height: int
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    #: the table whose GM uploaded it first (for the record; the image is public by its hash)
    table_id: int | None = Field(default=None, index=True)
    created_at: datetime = Field(default_factory=utcnow)
