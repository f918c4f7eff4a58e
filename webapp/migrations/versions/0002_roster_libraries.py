"""Rosters belong to a GM's library: game_table.library, roster.library.

Both indexed. The rows already there share one library, "shared", as every roster was shared
before. A database that got the columns from the board before the migrations has no index on them
(ALTER TABLE made the column only): it gets the index here.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing, create_index_if_missing

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("game_table", "roster"):
        add_column_if_missing(table, sa.Column("library", sa.String(length=64), nullable=False, server_default="shared"))
        create_index_if_missing(f"ix_{table}_library", table, ["library"])


def downgrade() -> None:
    for table in ("roster", "game_table"):
        with op.batch_alter_table(table) as batch:
            batch.drop_index(f"ix_{table}_library")
            batch.drop_column("library")
