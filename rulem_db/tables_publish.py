"""Tables of publishing (QGIS's layer_styles and project storage):
defined here, created by their own Alembic revision."""

from __future__ import annotations

import sqlalchemy as sa


def define(md: sa.MetaData, srid: int) -> None:
    """Add this concern's tables to the metadata."""
