"""Tables of the nightly reconciliation runs: the run record, the files each run took from the
inbox, and what each run saw (parcel balances, findings): defined here, created by their own
Alembic revision (migrations/versions/0005_runs.py).

Why snapshots: "what changed since last night" must be answerable for any run, later, exactly
as the report said it, whatever the ledger and checks have done since. So every completed run
keeps the parcel balances and findings it saw (small: only parcels with impact or credit, and
one row per finding, no geometry), and the comparison of two runs is a query over these rows
(sql/300_runs.sql). Geometry stays in the ledger and checks tables and in the report's files.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg

RUN_STATUS = ("running", "done", "partial", "failed", "abandoned")
RUN_FLOWS = ("nightly_reconciliation", "ingest_inbox")
FILE_OUTCOMES = ("loaded", "duplicate", "quarantined", "left")


def _codes(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _run(md: sa.MetaData) -> None:
    sa.Table(
        "run", md,
        sa.Column("run_id", sa.BigInteger, sa.Identity(), primary_key=True, comment="Run id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area reconciled."),
        sa.Column("flow", sa.Text, nullable=False,
                  comment="nightly_reconciliation or ingest_inbox."),
        sa.Column("status", sa.Text, nullable=False, server_default="running",
                  comment="running; done; partial (done, but some inbox files were "
                          "quarantined); failed; abandoned (found running after its process "
                          "had gone)."),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="Start time."),
        sa.Column("finished_at", sa.DateTime(timezone=True), comment="End time."),
        sa.Column("started_via", sa.Text,
                  comment="How it was started: schedule (a Prefect deployment), command "
                          "(rulem-db reconcile), demo, api."),
        sa.Column("host", sa.Text, comment="Host name of the process that ran it."),
        sa.Column("pid", sa.Integer, comment="Process id on that host."),
        sa.Column("backend_pid", sa.Integer,
                  comment="Database backend pid of the session holding the run's lock."),
        sa.Column("prefect_flow_run_id", sa.Text,
                  comment="Prefect flow run id, when run through Prefect."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that ran it."),
        sa.Column("previous_run_id", sa.BigInteger, sa.ForeignKey("ops.run.run_id"),
                  comment="The run this one was compared with (the last completed run)."),
        sa.Column("ledger_run_id", sa.BigInteger, sa.ForeignKey("ledger.run.run_id"),
                  comment="The ledger recompute of this run."),
        sa.Column("check_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  comment="The rule check run of this run."),
        sa.Column("inbox", sa.Text, comment="Inbox folder read (NULL: no ingest)."),
        sa.Column("files_loaded", sa.Integer, comment="Inbox files loaded."),
        sa.Column("files_duplicate", sa.Integer,
                  comment="Inbox files already loaded before (same SHA-256), archived."),
        sa.Column("files_quarantined", sa.Integer,
                  comment="Inbox files refused and moved to quarantine with their report."),
        sa.Column("entries_posted", sa.Integer,
                  comment="Ledger entries the recompute posted (new entries and reversals)."),
        sa.Column("finding_count", sa.Integer, comment="Current findings after the checks."),
        sa.Column("findings_new", sa.Integer, comment="Findings not in the previous run."),
        sa.Column("findings_resolved", sa.Integer,
                  comment="Findings of the previous run that are gone."),
        sa.Column("parcels_changed", sa.Integer,
                  comment="Parcels whose balance (to 4 decimals of an acre) or status changed."),
        sa.Column("changed", sa.Boolean,
                  comment="Whether anything changed since the previous run: files loaded, "
                          "entries posted, findings or balances."),
        sa.Column("plan_totals", pg.JSONB,
                  comment="The plan area's balance after the run (pub.plan_balance row)."),
        sa.Column("changes", pg.JSONB,
                  comment="What changed, for the report: counts, plan totals before and after."),
        sa.Column("report_path", sa.Text, comment="Folder of the run's report (index.html)."),
        # Revision 0009: a run that saw what the run before saw keeps no copy of it.
        sa.Column("balance_state", pg.JSONB,
                  comment="Fingerprint of what the parcel balances were read from: current "
                          "parcels (count, newest version) and the newest ledger entry of the "
                          "plan area. Equal fingerprints mean equal balances."),
        sa.Column("parcels_seen_in_run_id", sa.BigInteger, sa.ForeignKey("ops.run.run_id"),
                  comment="Run whose ops.run_parcel_balance rows hold the balances this run "
                          "saw, when they had not changed (no copy kept); NULL: its own rows."),
        sa.Column("findings_seen_in_run_id", sa.BigInteger, sa.ForeignKey("ops.run.run_id"),
                  comment="Run whose ops.run_finding rows hold the findings this run saw, "
                          "when its check run was the same (no copy kept); NULL: its own rows."),
        sa.Column("message", sa.Text, comment="Outcome in one line (the error when failed)."),
        sa.CheckConstraint(f"status IN ({_codes(RUN_STATUS)})", name="status_code"),
        sa.CheckConstraint(f"flow IN ({_codes(RUN_FLOWS)})", name="flow_code"),
        sa.Index("ix_run_plan_area", "plan_area_id", "flow", "run_id"),
        schema="ops",
        comment="One row per reconciliation run (nightly flow or inbox ingest): start, end, "
                "status, counts, what changed, where the report is.",
    )


def _run_file(md: sa.MetaData) -> None:
    sa.Table(
        "run_file", md,
        sa.Column("run_file_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Row id."),
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("ops.run.run_id"), nullable=False,
                  comment="Run that took the file."),
        sa.Column("file_name", sa.Text, nullable=False,
                  comment="Path of the file relative to the inbox."),
        sa.Column("layer", sa.Text, comment="Layer it was loaded as (NULL: unknown)."),
        sa.Column("file_sha256", sa.Text, comment="SHA-256 of the file."),
        sa.Column("outcome", sa.Text, nullable=False,
                  comment="loaded, duplicate (archived), quarantined, or left (in the inbox "
                          "after a database error, for the next run)."),
        sa.Column("batch_id", sa.BigInteger, sa.ForeignKey("ops.batch.batch_id"),
                  comment="Ingest batch, when one was recorded."),
        sa.Column("moved_to", sa.Text, comment="Where the file is now (archive, quarantine)."),
        sa.Column("message", sa.Text, comment="Outcome in one line (the reason it was refused)."),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="When."),
        sa.CheckConstraint(f"outcome IN ({_codes(FILE_OUTCOMES)})", name="outcome_code"),
        sa.Index("ix_run_file_run", "run_id"),
        schema="ops",
        comment="Files a run took from the inbox and what became of each.",
    )


def _snapshots(md: sa.MetaData) -> None:
    acres = "acres, full precision, as pub.parcel_balance showed it"
    # run_id and parcel_id are checked once per statement, not by foreign keys (revision
    # 0049; ops.run_rows_while_running, sql/300): a run and a feature are never deleted
    sa.Table(
        "run_parcel_balance", md,
        sa.Column("run_id", sa.BigInteger, primary_key=True, comment="Run."),
        sa.Column("parcel_id", sa.BigInteger, primary_key=True,
                  comment="Parcel (stable feature id)."),
        sa.Column("pin", sa.Text, comment="Parcel PIN."),
        sa.Column("impact_acres", sa.Numeric, comment=f"Impact {acres}."),
        sa.Column("required_acres", sa.Numeric, comment=f"Required replacement {acres}."),
        sa.Column("credit_acres", sa.Numeric, comment=f"Counted credit {acres}."),
        sa.Column("credit_proposed_acres", sa.Numeric, comment=f"Proposed credit {acres}."),
        sa.Column("credit_hosted_acres", sa.Numeric, comment=f"Hosted credit {acres}."),
        sa.Column("balance_acres", sa.Numeric, comment=f"Balance {acres}."),
        sa.Column("status", sa.Text, comment="deficit, balanced or surplus."),
        schema="ops",
        comment="Parcel balances a run saw (parcels with status other than none).",
    )
    sa.Table(
        "run_finding", md,
        sa.Column("run_id", sa.BigInteger, primary_key=True, comment="Run."),  # revision 0049
        sa.Column("finding_key", sa.Text, primary_key=True,
                  comment="Identity of the finding across runs: paragraph, check, permit, "
                          "parcel, feature, and its rank among equal ones."),
        sa.Column("finding_id", sa.BigInteger, comment="checks.finding row it was read from."),
        sa.Column("paragraph", sa.Text, comment="Rule M paragraph."),
        sa.Column("check_code", sa.Text, comment="Check."),
        sa.Column("severity", sa.Text, comment="error, warning or info."),
        sa.Column("permit_no", sa.Text, comment="Permit number."),
        sa.Column("pin", sa.Text, comment="Parcel PIN."),
        sa.Column("measured_value", sa.Numeric, comment="Measured value."),
        sa.Column("limit_value", sa.Numeric, comment="Limit."),
        sa.Column("unit", sa.Text, comment="Unit."),
        sa.Column("message", sa.Text, comment="Message."),
        sa.Index("ix_run_finding_finding", "run_id", "finding_id"),  # revision 0048
        schema="ops",
        comment="Findings a run saw, for the comparison with the next run.",
    )


def define(md: sa.MetaData, srid: int) -> None:
    """Add this concern's tables to the metadata (schema ops)."""
    _run(md)
    _run_file(md)
    _snapshots(md)
