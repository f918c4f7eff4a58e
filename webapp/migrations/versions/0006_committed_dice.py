"""Committed dice: battle.mix, battle.setup, battle.shareable.

The mix of the phones' client seeds (``battle.mix``, "" before any), the setup a
battle started from (``battle.setup``, None for older battles) and whether the GM shares the
finished battle (``battle.shareable``, false for older ones).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_column_if_missing("battle", sa.Column("mix", sa.String(length=64), nullable=False, server_default=""))
    add_column_if_missing("battle", sa.Column("setup", sa.JSON(), nullable=True))
    add_column_if_missing("battle", sa.Column("shareable", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("battle") as batch:
        batch.drop_column("shareable")
        batch.drop_column("setup")
        batch.drop_column("mix")
