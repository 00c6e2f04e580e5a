"""Indexes on the natural keys (PIN, permit number, delineation number, plan name): the checks
find a permit's parcels by PIN, which scanned every parcel per permit. Not partial on current
versions, so that they never compete with the spatial index for the map views' scans.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = (("cwmp_area", "name"), ("parcel", "pin_normalized"), ("delineation", "delineation_no"),
        ("permit", "permit_no"))


def upgrade() -> None:
    for table, key in KEYS:
        op.create_index(f"ix_{table}_{key}", table, ["plan_area_id", key], unique=False,
                        schema="core")


def downgrade() -> None:
    for table, key in KEYS:
        op.drop_index(f"ix_{table}_{key}", table_name=table, schema="core")
