"""Tables of the ledger (append-only entries, change queue, recompute runs):
defined here, created by their own Alembic revision."""

from __future__ import annotations

import sqlalchemy as sa


def define(md: sa.MetaData, srid: int) -> None:
    """Add this concern's tables to the metadata (schema ledger)."""
