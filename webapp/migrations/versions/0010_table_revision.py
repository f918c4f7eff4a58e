"""game_table.revision: raised by every change to a table or its seats.

A page keeps the table payload of the highest revision it was given: a payload read before an edit
and delivered after it (a sync answered late, two broadcasts crossing) no longer draws the table as
it was, nor has the GM's next edit built on it.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_column_if_missing("game_table", sa.Column("revision", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("game_table") as batch:
        batch.drop_column("revision")
