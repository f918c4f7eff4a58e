"""Baseline: the board's tables, each created where it is missing.

The tables of the board as they stood when the migrations began, without the columns that the
later migrations add (0002-0008). A database made before the migrations already has its tables and
gets only those it lacks.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

#: the moment a row was made (aware, UTC: what the models write)
Moment = sa.DateTime(timezone=True)


def tables() -> sa.MetaData:
    """The tables as the baseline makes them (written out here, not read from the models: the models
    move on, a migration stays what it was)."""
    metadata = sa.MetaData()
    sa.Table(
        "game_table",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("system_id", sa.String(length=40), nullable=False),
        sa.Column("join_code", sa.String(length=12), nullable=False),
        sa.Column("gm_token", sa.String(length=64), nullable=False),
        sa.Column("lineup", sa.JSON(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("gm_notes", sa.Text(), nullable=False),
        sa.Column("battle_id", sa.Integer(), nullable=True),
        sa.Column("created_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_game_table_gm_token", "gm_token", unique=True),
        sa.Index("ix_game_table_join_code", "join_code", unique=True),
        sa.Index("ix_game_table_slug", "slug", unique=True),
    )
    sa.Table(
        "roster",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("system_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_roster_system_id", "system_id"),
    )
    sa.Table(
        "stored_image",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("content_type", sa.String(length=20), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=True),
        sa.Column("created_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_stored_image_sha256", "sha256", unique=True),
        sa.Index("ix_stored_image_table_id", "table_id"),
    )
    sa.Table(
        "battle",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("system_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("updated_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_battle_table_id", "table_id"),
    )
    sa.Table(
        "display_screen",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=24), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("code", sa.String(length=12), nullable=True),
        sa.Column("code_at", Moment, nullable=False),
        sa.Column("label", sa.String(length=60), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=True),
        sa.Column("paired_at", Moment, nullable=True),
        sa.Column("created_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_display_screen_code", "code", unique=True),
        sa.Index("ix_display_screen_public_id", "public_id", unique=True),
        sa.Index("ix_display_screen_table_id", "table_id"),
        sa.Index("ix_display_screen_token", "token", unique=True),
    )
    sa.Table(
        "roster_combatant",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("roster_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("stats", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["roster_id"], ["roster.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_roster_combatant_roster_id", "roster_id"),
    )
    sa.Table(
        "seat",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=24), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["game_table.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_seat_public_id", "public_id", unique=True),
        sa.Index("ix_seat_table_id", "table_id"),
        sa.Index("ix_seat_token", "token", unique=True),
    )
    sa.Table(
        "battle_command",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("battle_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("msg_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column("declaration", sa.JSON(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(["battle_id"], ["battle.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("battle_id", "msg_id", name="uq_command_msg"),
        sa.Index("ix_battle_command_battle_id", "battle_id"),
    )
    sa.Table(
        "battle_event",
        metadata,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("battle_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=60), nullable=False),
        sa.Column("visibility", sa.String(length=60), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(["battle_id"], ["battle.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("battle_id", "version", "index", name="uq_event_position"),
        sa.Index("ix_battle_event_battle_id", "battle_id"),
    )
    sa.Table(
        "battle_snapshot",
        metadata,
        sa.Column("battle_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("prev_version", sa.Integer(), nullable=True),
        sa.Column("checkpoint", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["battle_id"], ["battle.id"]),
        sa.PrimaryKeyConstraint("battle_id", "version"),
    )
    return metadata


def upgrade() -> None:
    # create_all looks before it creates: a table already there is left as it is
    tables().create_all(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    raise NotImplementedError("the baseline is not taken back: that would drop every table and every battle in them")
