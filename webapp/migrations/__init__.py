"""The database's migrations (Alembic): ``versions/`` holds one file per change of the schema, run in
order at start-up by :func:`webapp.db.migrate`. docs/migrations.md says how to add one.

Databases made before the migrations existed already have some or all of what the first ones make,
so those steps look before they act: the baseline creates a table only where it is missing
(``create_all``, which checks first), and the helpers below add a column or an index only where it
is missing. A migration added later may assume the database is at its predecessor.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op


def has_column(table: str, column: str) -> bool:
    return column in {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def has_index(table: str, index: str) -> bool:
    return index in {i["name"] for i in sa.inspect(op.get_bind()).get_indexes(table)}


def add_column_if_missing(table: str, column: sa.Column[Any]) -> None:
    """``ALTER TABLE ... ADD COLUMN`` unless the table has it (SQLite adds a column in place)."""
    if not has_column(table, column.name):
        op.add_column(table, column)


def create_index_if_missing(index: str, table: str, columns: list[str], *, unique: bool = False) -> None:
    if not has_index(table, index):
        op.create_index(index, table, columns, unique=unique)
