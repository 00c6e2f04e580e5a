"""Publishing: QGIS layer styles and project storage.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa  # noqa: F401
from alembic import context, op  # noqa: F401

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # noqa: F841  (the working CRS)


def downgrade() -> None:
    pass
