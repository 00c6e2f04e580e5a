"""Tables of the ledger (append-only entries, change queue, recompute runs, wetland pieces):
defined here, created by their Alembic revisions (0003; the visible study areas 0013; the
published acres of an entry 0018; its effective date 0019; the totals kept at posting 0027;
the issued annual statements 0035).

Why these tables: `ledger.entry` is the book (append-only, every number with the run, reason
and input versions that produced it); `ledger.change_queue` says which owners (permits or
District projects) the input layers' triggers saw change since the last recompute;
`ledger.run` records each recompute; `ledger.wetland_piece` holds the current wetlands cut into
small pieces, so that a small impact on a large wetland complex overlays a few pieces, not
thousands of vertices; `ledger.visible_area` (with `ledger.visible_epoch`) holds each approved
delineation's visible study area as of the latest approval (revision 0013), read only while
its delineations are current. Functions, views and triggers live in sql/100-199 (docs/ledger.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from geoalchemy2 import Geometry
from sqlalchemy.dialects import postgresql as pg

# Measures an entry can carry, with the side of the book they fall on. Debits and credits make
# the balance (credit - debit); memo measures are shown but never enter a balance.
MEASURES: dict[str, str] = {
    "impact": "memo",              # impact acres (area x factor), docs/ledger.md section 1
    "required": "debit",           # impact x replacement_ratio, 7(b)
    "credit": "credit",            # replacement credit at counted_credit_status or beyond
    "transfer_in": "credit",       # credit transferred to the permit
    "transfer_out": "debit",       # credit transferred from the permit
    "credit_proposed": "memo",     # replacement credit of status proposed
    "credit_constructed": "memo",  # replacement credit of status constructed
    "credit_hosted": "memo",       # counted credit generated on the parcel, wherever allocated
}
ENTRY_KINDS = ("debit", "credit", "memo")
RUN_MODES = ("all", "queue")
RUN_STATUS = ("running", "done", "failed", "abandoned")


def _codes(values) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _owner_check() -> sa.CheckConstraint:
    return sa.CheckConstraint("(permit_id IS NULL) <> (district_project IS NULL)", name="one_owner")


PIECE_MAX_VERTICES = 128  # ST_Subdivide's limit for ledger.wetland_piece (sql/105)


def define(md: sa.MetaData, srid: int) -> None:
    """Add this concern's tables to the metadata (schema ledger)."""
    sa.Table(
        "wetland_piece", md,
        sa.Column("wetland_piece_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Piece id."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("wetland_id", sa.BigInteger, nullable=False, comment="Wetland feature."),
        sa.Column("version_id", sa.BigInteger, nullable=False,
                  comment="The core.wetland version cut into pieces."),
        sa.Column("delineation_id", sa.BigInteger, nullable=False,
                  comment="Delineation of that wetland version."),
        sa.Column("geom", Geometry("POLYGON", srid=srid, spatial_index=False), nullable=False,
                  comment=f"One piece (at most {PIECE_MAX_VERTICES} vertices, ST_Subdivide); "
                          "the pieces of a version tile it."),
        sa.Index("ix_wetland_piece_geom", "geom", postgresql_using="gist"),
        sa.Index("ix_wetland_piece_version_id", "version_id"),
        schema="ledger",
        comment="Current wetland versions cut into small pieces for the ledger's overlays; "
                "derived, kept by triggers on core.wetland (sql/105).",
    )
    sa.Table(
        "visible_epoch", md,
        sa.Column("plan_area_id", sa.Integer, primary_key=True, comment="Plan area."),
        sa.Column("epoch", sa.Date, nullable=False,
                  comment="The latest approval date of the plan area when computed: the "
                          "stored areas are the visible study areas as of that date."),
        sa.Column("inputs", pg.ARRAY(sa.BigInteger), nullable=False,
                  comment="Version ids (sorted) of the approved current delineations the "
                          "areas were computed from; the areas are used only while these "
                          "are the approved current delineations."),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="When computed."),
        schema="ledger",
        comment="Derived: which delineations ledger.visible_area was computed from, per plan "
                "area (sql/100 ledger.refresh_visible).",
    )
    sa.Table(
        "visible_area", md,
        sa.Column("plan_area_id", sa.Integer, primary_key=True, comment="Plan area."),
        sa.Column("delineation_id", sa.BigInteger, primary_key=True,
                  comment="Delineation feature."),
        sa.Column("version_id", sa.BigInteger, nullable=False,
                  comment="Its core.delineation version."),
        sa.Column("whole", sa.Boolean, nullable=False,
                  comment="No later-approved study area overlaps it: all of it is visible."),
        sa.Column("area", Geometry("GEOMETRY", srid=srid, spatial_index=False), nullable=True,
                  comment="Its study area minus every study area approved after it (NULL: "
                          "nothing left)."),
        schema="ledger",
        comment="Derived: each approved delineation's visible study area as of "
                "ledger.visible_epoch's epoch (sql/100).",
    )
    sa.Table(
        "run", md,
        sa.Column("run_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Recompute run id."),
        sa.Column("mode", sa.Text, nullable=False,
                  comment="all (every owner recomputed) or queue (only what changed)."),
        sa.Column("status", sa.Text, nullable=False, server_default="running",
                  comment="running, done, failed, or abandoned (found running by a later run "
                          "after its session had gone: a killed process)."),
        sa.Column("workers", sa.Integer, nullable=False, server_default="1",
                  comment="Connections that drained the change queue for this run."),
        sa.Column("queue_items", sa.Integer, comment="Change queue rows processed."),
        sa.Column("owners", sa.Integer, comment="Permits and District projects recomputed."),
        sa.Column("entries", sa.Integer, comment="Entries posted (new entries and reversals)."),
        sa.Column("reversals", sa.Integer, comment="Of those, reversals."),
        sa.Column("message", sa.Text, comment="Outcome in one line (the error when failed)."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that ran the recompute."),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="Start time."),
        sa.Column("finished_at", sa.DateTime(timezone=True), comment="End time."),
        sa.Column("backend_pid", sa.Integer,
                  comment="Database backend pid of the session that started the run (revision "
                          "0009): a later run marks a run left running by a gone session "
                          "abandoned."),
        sa.CheckConstraint(f"mode IN ({_codes(RUN_MODES)})", name="mode_code"),
        sa.CheckConstraint(f"status IN ({_codes(RUN_STATUS)})", name="status_code"),
        sa.Index("ix_run_started_at", "started_at"),  # revision 0014
        sa.Index("ix_run_running", "run_id", postgresql_where=sa.text("status = 'running'")),
        schema="ledger",
        comment="One row per recompute: what it was asked to do, what it posted.",
    )
    sa.Table(
        "entry", md,
        sa.Column("entry_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Entry id."),
        # No foreign keys but the reversal chain: posting takes these ids from the rows it
        # reads in the same statement, and per-row key checks cost five times the insert
        # (they lock the referenced rows; docs/ledger.md).
        sa.Column("run_id", sa.BigInteger, nullable=False,
                  comment="Recompute run that posted the entry (ledger.run)."),
        sa.Column("plan_area_id", sa.Integer, nullable=False,
                  comment="Plan area (core.plan_area)."),
        sa.Column("permit_id", sa.BigInteger,
                  comment="Permit the entry belongs to (NULL for a District project)."),
        sa.Column("district_project", sa.Text,
                  comment="District replacement project the entry belongs to (no permit)."),
        sa.Column("parcel_id", sa.BigInteger,
                  comment="Parcel the acres are allocated to; NULL when no parcel could be "
                          "found (see docs/ledger.md)."),
        sa.Column("measure", sa.Text, nullable=False,
                  comment="What the acres measure: " + ", ".join(MEASURES) + "."),
        sa.Column("entry_kind", sa.Text, nullable=False,
                  comment="debit (required, transfer_out), credit (credit, transfer_in) or memo "
                          "(shown, never in a balance)."),
        sa.Column("acres", sa.Numeric, nullable=False,
                  comment="Acres, full precision; a reversal carries the negated acres."),
        # Revision 0018: the 4-decimal figure published for the line (docs/ledger.md 4).
        sa.Column("acres_published", sa.Numeric(14, 4),
                  comment="Acres as published, 4 decimals: the 4-decimal rounding of the "
                          "owner's lines of a measure allocated by largest remainder, so "
                          "they add up to the owner's total rounded; a reversal carries the "
                          "negated figure. NULL on entries posted before revision 0018: "
                          "round(acres, 4) stands for it."),
        # Revision 0019: the date the entry's fact took effect (docs/ledger.md section 4a).
        sa.Column("effective_on", sa.Date, nullable=False,
                  comment="Date the fact took effect: impact and required the permit's "
                          "decision date; credit the date its counted status was reached; "
                          "transfers transferred_on (docs/ledger.md 4a). A reversal carries "
                          "the date of the entry it reverses. Balances as of a date read "
                          "this; posted_at says when it was recorded."),
        sa.Column("reverses_entry_id", sa.BigInteger, sa.ForeignKey("ledger.entry.entry_id"),
                  unique=True, comment="The entry this one reverses (NULL for a new entry)."),
        sa.Column("reason", sa.Text, nullable=False,
                  comment="Why it was posted: the changes that queued the recompute."),
        sa.Column("inputs", pg.JSONB, nullable=False,
                  comment="Version ids of the inputs that produced the figure, by layer, and "
                          "the parameter rows used."),
        sa.Column("posted_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that posted it."),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"),
                  comment="When posted (transaction time); balances as of a date read this."),
        _owner_check(),
        sa.CheckConstraint(f"measure IN ({_codes(MEASURES)})", name="measure_code"),
        sa.CheckConstraint(f"entry_kind IN ({_codes(ENTRY_KINDS)})", name="entry_kind_code"),
        sa.CheckConstraint(
            "entry_kind = CASE WHEN measure IN ("
            + _codes(m for m, k in MEASURES.items() if k == "debit") + ") THEN 'debit' "
            "WHEN measure IN (" + _codes(m for m, k in MEASURES.items() if k == "credit")
            + ") THEN 'credit' ELSE 'memo' END",
            name="kind_of_measure"),
        sa.Index("ix_entry_permit_id", "permit_id", "measure"),
        sa.Index("ix_entry_parcel_id", "parcel_id", "posted_at"),
        sa.Index("ix_entry_district_project", "plan_area_id", "district_project",
                 postgresql_where=sa.text("district_project IS NOT NULL")),
        sa.Index("ix_entry_run_id", "run_id"),
        sa.Index("ix_entry_posted_at", "plan_area_id", "posted_at"),
        sa.Index("ix_entry_effective_on", "plan_area_id", "effective_on"),  # revision 0019
        schema="ledger",
        comment="The replacement ledger: append-only entries; a change is a reversal plus a "
                "new entry.",
    )
    sa.Table(
        "change_queue", md,
        sa.Column("queue_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Queue row id."),
        # No foreign keys, like ledger.entry: rows come from the triggers on core rows, and a
        # bulk ingest should not lock the plan area row once per queued change.
        sa.Column("plan_area_id", sa.Integer, nullable=False,
                  comment="Plan area (core.plan_area)."),
        sa.Column("permit_id", sa.BigInteger,
                  comment="Permit to recompute (NULL for a District project)."),
        sa.Column("district_project", sa.Text, comment="District project to recompute."),
        sa.Column("layer", sa.Text, nullable=False,
                  comment="Layer whose change queued the owner (or 'recompute')."),
        sa.Column("feature_id", sa.BigInteger, comment="Feature that changed."),
        sa.Column("version_id", sa.BigInteger, comment="Version that was opened or closed."),
        sa.Column("parcel_id", sa.BigInteger, comment="Parcel that changed, for parcel changes."),
        sa.Column("reason", sa.Text, nullable=False, comment="What changed, in words."),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="When queued."),
        sa.Column("processed_at", sa.DateTime(timezone=True),
                  comment="When a recompute processed it (NULL while waiting)."),
        sa.Column("processed_run_id", sa.BigInteger,
                  comment="Run that processed it (ledger.run)."),
        _owner_check(),
        sa.Index("ix_change_queue_waiting", "queue_id",
                 postgresql_where=sa.text("processed_at IS NULL")),
        sa.Index("ix_change_queue_waiting_permit", "permit_id",
                 postgresql_where=sa.text("processed_at IS NULL")),
        sa.Index("ix_change_queue_processed_run_id", "processed_run_id"),  # revision 0010
        schema="ledger",
        comment="Owners (permits, District projects) whose inputs changed, waiting for "
                "recompute; processed rows are kept as the audit of why for "
                "change_queue_retention_days (ops.setting, default 30), then purged by "
                "ledger.finish_run.",
    )
    _totals(md)
    _statement_issue(md)


# Revision 0035: the annual statements issued (docs/ledger.md section 4b).
def _statement_issue(md: sa.MetaData) -> None:
    """ledger.statement_issue (revision 0035).

    Why: once a year's statement is issued, its figures and the balances as of any date in
    that year never change (docs/ledger.md 4b). The record of the issue, its
    moment above all, is what the as-of functions and the statement read the closed year
    at; the digest lets an auditor prove later that the figures read are the ones issued."""
    sa.Table(
        "statement_issue", md,
        sa.Column("statement_issue_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Issue id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area whose statement was issued."),
        sa.Column("year", sa.Integer, nullable=False,
                  comment="Calendar year of effective dates the statement covers."),
        sa.Column("tz", sa.Text, nullable=False,
                  comment="Time zone the year ran in (its end splits the year's own lines "
                          "from its late postings)."),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"),
                  comment="When issued: the year (and every year before it) is read as "
                          "recorded at this moment from now on (docs/ledger.md 4b)."),
        sa.Column("issued_by", sa.Text, nullable=False, server_default=sa.text("session_user"),
                  comment="Login that issued it (session_user)."),
        sa.Column("digest", sa.Text, nullable=False,
                  comment="SHA-256 (hex) of the statement's lines as issued: figures and "
                          "entry ids (pub.ledger_statement_digest gives it as read now)."),
        sa.Column("closing_balance_acres", sa.Numeric(14, 4), nullable=False,
                  comment="Closing balance of the year as issued, published acres."),
        sa.Column("entry_count", sa.BigInteger, nullable=False,
                  comment="Entries the closing balance sums."),
        sa.Column("lines", pg.JSONB, nullable=False,
                  comment="The statement's lines as issued (pub.ledger_statement rows)."),
        sa.UniqueConstraint("plan_area_id", "year", name="uq_statement_issue_year"),
        sa.CheckConstraint("year BETWEEN 1900 AND 9999", name="year_range"),
        sa.CheckConstraint("digest ~ '^[0-9a-f]{64}$'", name="digest_hex"),
        schema="ledger",
        comment="The annual ledger statements issued (rulem-db statement --issue), "
                "append-only: one per plan area and year, in year order.",
    )


# Revision 0027: the sums kept at posting for the current balance views (sql/165).
TOTAL_MEASURES: dict[str, str] = {
    "impact": "Sum of the impact entries' published acres (memo).",
    "required": "Sum of the required entries' published acres (debit).",
    "credit": "Sum of the credit entries' published acres (counted credit, before transfers).",
    "transfer_in": "Sum of the transfer_in entries' published acres (credit).",
    "transfer_out": "Sum of the transfer_out entries' published acres (debit).",
    "credit_proposed": "Sum of the credit_proposed entries' published acres (memo).",
    "credit_constructed": "Sum of the credit_constructed entries' published acres (memo).",
    "credit_hosted": "Sum of the credit_hosted entries' published acres (memo).",
}


def _total_columns() -> list[sa.Column]:
    return [sa.Column(m, sa.Numeric, nullable=False, server_default=sa.text("0"), comment=doc)
            for m, doc in TOTAL_MEASURES.items()]


def _entries_column() -> sa.Column:
    return sa.Column("entries", sa.BigInteger, nullable=False, server_default=sa.text("0"),
                     comment="Entries summed (reversals included).")


def _totals(md: sa.MetaData) -> None:
    """ledger.plan_total, permit_total and parcel_total (revision 0027).

    Why: the current balance views read these sums, kept by a statement trigger on
    ledger.entry in the posting transaction (sql/165), instead of summing every entry at each
    read, a cost that grew with the book's history."""
    kept = ("kept by the statement trigger ledger.entry_totals (sql/165) in the posting "
            "transaction; pub.*_balance reads them. ledger.totals_drift() compares them with "
            "the entries.")
    sa.Table(
        "plan_total", md,
        sa.Column("plan_area_id", sa.Integer, primary_key=True, comment="Plan area."),
        *_total_columns(),
        sa.Column("district_project_credit", sa.Numeric, nullable=False,
                  server_default=sa.text("0"),
                  comment="Sum of the credit entries of District projects (no permit)."),
        sa.Column("unallocated_balance", sa.Numeric, nullable=False,
                  server_default=sa.text("0"),
                  comment="Balance (credits minus debits) of the entries on no parcel."),
        _entries_column(),
        sa.Column("parcels_in_deficit", sa.BigInteger, nullable=False,
                  server_default=sa.text("0"),
                  comment="Parcels whose balance is below zero at 4 decimals "
                          "(ledger.parcel_total.in_deficit)."),
        sa.Column("permits_in_deficit", sa.BigInteger, nullable=False,
                  server_default=sa.text("0"),
                  comment="Permits whose balance is below zero at 4 decimals "
                          "(ledger.permit_total.in_deficit)."),
        schema="ledger",
        comment="Sums by measure of each plan area's ledger entries (published acres), "
                + kept.replace("pub.*_balance", "pub.plan_balance"),
    )
    for name, key, key_doc in (("permit_total", "permit_id", "Permit (core.feature)."),
                               ("parcel_total", "parcel_id", "Parcel (core.feature).")):
        what = key.removesuffix("_id")
        sa.Table(
            name, md,
            sa.Column(key, sa.BigInteger, primary_key=True, comment=key_doc),
            sa.Column("plan_area_id", sa.Integer, primary_key=True, comment="Plan area."),
            *_total_columns(),
            _entries_column(),
            sa.Column("in_deficit", sa.Boolean,
                      sa.Computed("round(credit + transfer_in - required - transfer_out, 4) "
                                  "< 0", persisted=True),
                      comment="Balance (credit + transfer_in - required - transfer_out) below "
                              "zero at 4 decimals: what pub.plan_balance counts."),
            schema="ledger",
            comment=f"Sums by measure of the ledger entries of each {what} and plan area "
                    "(published acres), " + kept,
        )
