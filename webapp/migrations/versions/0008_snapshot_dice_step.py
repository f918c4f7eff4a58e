"""Undo never re-rolls: battle_snapshot.dice_step.

The step each state stands at, so that a step made again after an undo rolls the same dice (None:
the version itself, as for every state before).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_column_if_missing("battle_snapshot", sa.Column("dice_step", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("battle_snapshot") as batch:
        batch.drop_column("dice_step")
