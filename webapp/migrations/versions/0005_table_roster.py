"""The roster a lineup came from: game_table.roster_id.

The saved roster a table's lineup came from, which survivors may be written back over.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_column_if_missing("game_table", sa.Column("roster_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game_table") as batch:
        batch.drop_column("roster_id")
