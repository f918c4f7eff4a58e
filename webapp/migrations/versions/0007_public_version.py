"""What players and spectators were told of: battle.public_version.

The last version the players and spectators were told of: a GM's secret raises the version, not
this (None: the same as the version).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from webapp.migrations import add_column_if_missing

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_column_if_missing("battle", sa.Column("public_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("battle") as batch:
        batch.drop_column("public_version")
