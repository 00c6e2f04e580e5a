"""The run's summary as Prefect artifacts, so the Prefect UI shows what the report says.

Keys are stable per plan area (`rulem-nightly-<plan>`, `rulem-finding-changes-<plan>`,
`rulem-parcel-changes-<plan>`), so the UI's Artifacts page keeps one history per key: each
night adds a version, and last night's is one click away.
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from rulem_db import db as dbmod

MAX_ROWS = 200


def key(kind: str, plan_area: str) -> str:
    """An artifact key (lower-case letters, digits and dashes only)."""
    return re.sub(r"[^a-z0-9-]+", "-", f"rulem-{kind}-{plan_area}".lower()).strip("-")


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    try:
        return round(float(value), 4)
    except (TypeError, ValueError):
        return str(value)


def publish(url: str, summary: Any) -> list[str]:
    """Create the markdown summary and the two change tables; returns the keys used."""
    with dbmod.connect(url) as conn:
        findings = conn.execute(sa.text(
            "SELECT change, permit_no, paragraph, check_code, severity, pin, measured_value, "
            "limit_value, unit, message FROM ops.run_finding_change(:r)"),
            {"r": summary.run_id}).mappings().all()
        parcels = conn.execute(sa.text(
            "SELECT pin, status_before, status_after, balance_before, balance_after, "
            "balance_change FROM ops.run_parcel_change(:r)"), {"r": summary.run_id}
        ).mappings().all()
    keys = [key("nightly", summary.plan_area), key("finding-changes", summary.plan_area),
            key("parcel-changes", summary.plan_area)]
    lines = "\n".join(f"    {line}" for line in summary.lines())
    create_markdown_artifact(
        key=keys[0],
        markdown=(f"# Rule M reconciliation, run {summary.run_id}\n\n"
                  f"**{summary.status}**: {summary.message}\n\n{lines}\n\n"
                  f"Report: `{summary.report_path}`\n"),
        description=f"Nightly reconciliation of {summary.plan_area}: what changed")
    create_table_artifact(
        key=keys[1], table=[{k: _plain(v) for k, v in r.items()} for r in findings[:MAX_ROWS]],
        description=f"New and resolved findings, run {summary.run_id}")
    create_table_artifact(
        key=keys[2], table=[{k: _plain(v) for k, v in r.items()} for r in parcels[:MAX_ROWS]],
        description=f"Parcels whose balance changed, run {summary.run_id}")
    return keys
