"""Who's winning, kept: battle_chances, each version's chances as the live update worked them out.

The replay and the report read them back (issue 37); a battle fought before has none.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("battle_chances"):
        return  # (made by a start that raced this one)
    op.create_table(
        "battle_chances",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("battle_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["battle_id"], ["battle.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("battle_id", "version", name="uq_chances_version"),
    )
    op.create_index("ix_battle_chances_battle_id", "battle_chances", ["battle_id"])


def downgrade() -> None:
    op.drop_index("ix_battle_chances_battle_id", table_name="battle_chances")
    op.drop_table("battle_chances")
