"""Tables of the rule checks: the catalogue of checks, check runs, their findings and the
per-permit outcome of every check: defined here, created by their own Alembic revision
(migrations/versions/0004_checks.py).

Why four tables and not one: a finding is a failure with a place on the map, but staff also
need to see that a check passed or did not apply to a permit (`pub.permit_compliance`), and
both must be traceable to the run that produced them. Runs are kept, so "what changed since
last night" is a comparison of two runs. The check functions themselves live in sql/200-299;
each check file registers its checks in `checks.rule_check` (which function evaluates them,
revision 0021), and the runner calls what the catalogue names.
"""

from __future__ import annotations

import sqlalchemy as sa
from geoalchemy2 import Geometry
from sqlalchemy.dialects.postgresql import JSONB

SEVERITIES = ("error", "warning", "info")
# not_evaluated (revision 0016): the check applies but an input it needs is missing (no land
# cover over part of a subwatershed, no hydroperiod analysis): a finding, never a pass.
OUTCOMES = ("pass", "fail", "not_evaluated", "not_applicable")
WORSE = ("higher", "lower", "flag")
# The review of a finding (revision 0022, sql/287): open until staff acknowledge or waive it,
# resolved by the run that no longer finds it, open again when a later run finds it again.
REVIEW_STATES = ("open", "acknowledged", "waived", "resolved")
# What a history row records: the runner's events and the staff's.
REVIEW_EVENTS = ("found", "resolved", "reopened", "acknowledged", "waived", "opened", "noted")
_CHECK_KEY = ["checks.rule_check.paragraph", "checks.rule_check.check_code"]
# The longest review note and waiver reference, in characters (revision 0037; the same
# numbers in checks.review_text_limits(), sql/287, and docs/checks.md "Finding review").
NOTE_MAX = 4000
REFERENCE_MAX = 200


def _codes(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _at_most(column: str, limit: int) -> str:
    return f"{column} IS NULL OR char_length({column}) <= {limit}"


def _layer_write(md: sa.MetaData) -> None:
    """ops.layer_write: one row per statement that wrote a core table (sql/285), so that an
    incremental check run finds the layers written since the run before in one index scan
    instead of scanning every layer (revision 0009)."""
    sa.Table(
        "layer_write", md,
        sa.Column("layer_write_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Statement number."),
        sa.Column("table_name", sa.Text, nullable=False,
                  comment="Table written (schema.name)."),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"),
                  comment="Start of the writing transaction (the valid_from of the versions "
                          "it opened)."),
        sa.Index("ix_layer_write_written_at", "written_at"),
        sa.Index("ix_layer_write_table_name", "table_name", "layer_write_id"),  # revision 0012
        schema="ops",
        comment="Which core tables were written when (one row per statement): what the "
                "incremental rule check runs look at first.",
    )


def _buffer_site_cache(md: sa.MetaData, srid: int) -> None:
    """checks.buffer_site_cache: the buffer sites of one check run's transaction (sql/205,
    280; revision 0015). Why a table of the owner's and not a temporary table: a site read
    from the caller's temporary schema could be an object the caller made, and published
    views reach checks.buffer_site through definer functions; rows here are written and
    deleted inside checks.evaluate's transaction, so no other session ever sees them."""
    geometry = [
        sa.Column(name, Geometry("GEOMETRY", srid=srid, spatial_index=False), comment=text)
        for name, text in (("parcels", "The permit's parcels."),
                           ("edge", "Protected edge (6(a), 6(c))."),
                           ("wetland", "Wetland near the parcels after the permit's work."),
                           ("central", "Central contiguous wetland near the parcels."),
                           ("buffer", "Every current buffer near the parcels."),
                           ("own_buffer", "The permit's own buffers."),
                           ("effective", "Buffer less trails and wetland (6(f)(iv))."))]
    sa.Table(
        "buffer_site_cache", md,
        sa.Column("xact", sa.BigInteger, nullable=False,
                  comment="Transaction (pg_current_xact_id) of the check run that wrote it."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("permit_id", sa.BigInteger, nullable=False, comment="Permit."),
        sa.Column("baseline_on", sa.Date, comment="The permit's baseline date."),
        *geometry,
        sa.Index("ix_buffer_site_cache_key", "xact", "plan_area_id", "permit_id"),
        schema="checks",
        prefixes=["UNLOGGED"],
        comment="Derived, transient: the buffer sites of a check run, written and deleted "
                "within its transaction (sql/280 checks.evaluate).",
    )


def _evaluation_stage(md: sa.MetaData, srid: int) -> None:
    """checks.evaluation_stage: the evaluations of a check run's worker sessions (sql/280,
    revision 0039). Why a table: each worker evaluates its share of the permits in its own
    transaction; the run's session takes the rows back and records them in one transaction,
    so a failed run leaves no half-written findings."""
    sa.Table(
        "evaluation_stage", md,
        sa.Column("stage_id", sa.Uuid, nullable=False,
                  comment="The check run whose worker wrote the row (a random id per run)."),
        sa.Column("staged_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="When the worker wrote it."),
        sa.Column("paragraph", sa.Text, comment="Rule M paragraph."),
        sa.Column("check_code", sa.Text, comment="Check code."),
        sa.Column("severity", sa.Text, comment="error or warning."),
        sa.Column("permit_id", sa.BigInteger,
                  comment="Permit (none: a District project or the plan area)."),
        sa.Column("parcel_id", sa.BigInteger, comment="Parcel."),
        sa.Column("feature_id", sa.BigInteger, comment="Feature at fault."),
        sa.Column("passed", sa.Boolean, comment="Passed, failed, or NULL: not evaluated."),
        sa.Column("measured_value", sa.Numeric, comment="Measured value."),
        sa.Column("limit_value", sa.Numeric, comment="Limit."),
        sa.Column("unit", sa.Text, comment="Unit."),
        sa.Column("message", sa.Text, comment="One-line message."),
        sa.Column("geom", Geometry("GEOMETRY", srid=srid, spatial_index=False),
                  comment="Place of the case."),
        sa.Index("ix_evaluation_stage_stage", "stage_id"),
        schema="checks",
        prefixes=["UNLOGGED"],
        comment="Transient: the evaluations of a check run's worker sessions, taken back and "
                "deleted by the run (sql/280 checks.stage_evaluations).",
    )


def _finding_review(md: sa.MetaData) -> None:
    """checks.finding_case, checks.finding_occurrence, checks.finding_review (revision 0022).

    Why three tables beside checks.finding: a finding row belongs to one run (runs are kept
    and compared), but staff review a finding once and expect the review to hold the next
    night. finding_case is the finding as staff know it (same permit, check and place from run
    to run) with its review state now; finding_occurrence says which case each run's finding
    row is, written once (checks.finding stays insert-only); finding_review is the append-only
    history of every state change and note, the runner's and the staff's."""
    sa.Table(
        "finding_case", md,
        sa.Column("finding_case_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="The finding's identity, the same in every run that finds it."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area."),
        sa.Column("finding_key", sa.Text, nullable=False,
                  comment="What makes it the same finding: paragraph|check|permit|parcel|"
                          "feature|place|n (ids; place: the geometry's lower-left corner to "
                          "the metre when no feature is named; n: the rank among otherwise "
                          "equal findings)."),
        sa.Column("paragraph", sa.Text, nullable=False, comment="Rule M paragraph."),
        sa.Column("check_code", sa.Text, nullable=False, comment="Short code of the check."),
        sa.Column("permit_id", sa.BigInteger, sa.ForeignKey("core.feature.feature_id"),
                  comment="Permit concerned (NULL for a District project)."),
        sa.Column("parcel_id", sa.BigInteger, sa.ForeignKey("core.feature.feature_id"),
                  comment="Parcel concerned, when the check is per parcel."),
        sa.Column("feature_id", sa.BigInteger, sa.ForeignKey("core.feature.feature_id"),
                  comment="The feature found at fault."),
        sa.Column("review_state", sa.Text, nullable=False, server_default=sa.text("'open'"),
                  comment="open, acknowledged, waived (with waiver_reference) or resolved."),
        sa.Column("waiver_reference", sa.Text,
                  comment="The variance or decision a waived finding stands on; NULL unless "
                          "waived."),
        sa.Column("review_note", sa.Text, comment="The latest note."),
        sa.Column("reviewed_by", sa.Text,
                  comment="Database login of the latest change (a staff member, or the login "
                          "of the check run that resolved or re-opened it)."),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), comment="When of that change."),
        sa.Column("first_found_at", sa.DateTime(timezone=True), nullable=False,
                  comment="When a check run first found it."),
        # What the current acknowledgement or waiver was given for (revision 0037, sql/287).
        sa.Column("review_measure", sa.Numeric,
                  comment="The measured value the current acknowledgement or waiver was given "
                          "for: a later run that measures the finding worse (by the check's "
                          "worse direction, beyond the tolerance) re-opens it."),
        sa.Column("review_inputs", JSONB,
                  comment="Versions of the inputs the current acknowledgement or waiver was "
                          "given for ({feature_id: version_id}: the feature at fault; for a "
                          "finding without one, the permit, its features, its transfers and "
                          "the parcel): a new version re-opens it."),
        sa.Column("review_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  comment="The check run whose finding was acknowledged or waived."),
        sa.Column("first_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  nullable=False, comment="Check run that first found it."),
        sa.Column("last_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  nullable=False,
                  comment="Latest check run that found it by evaluating its permit, or "
                          "resolved it (an incremental run that carries it over unchanged "
                          "leaves it as it was)."),
        sa.CheckConstraint(f"review_state IN ({_codes(REVIEW_STATES)})",
                           name="review_state_code"),
        sa.CheckConstraint("(review_state = 'waived') = (coalesce(btrim(waiver_reference), "
                           "'') <> '')", name="waiver_has_reference"),
        # Review texts are lines a clerk writes, not files (revision 0037).
        sa.CheckConstraint(_at_most("review_note", NOTE_MAX), name="review_note_length"),
        sa.CheckConstraint(_at_most("waiver_reference", REFERENCE_MAX),
                           name="waiver_reference_length"),
        sa.ForeignKeyConstraint(["paragraph", "check_code"], _CHECK_KEY,
                                name="fk_finding_case_rule_check"),
        sa.UniqueConstraint("plan_area_id", "finding_key", name="uq_finding_case_key"),
        sa.Index("ix_finding_case_permit", "permit_id"),
        schema="checks",
        comment="A finding as staff review it: one row per identity (permit, check and place), "
                "with its review state now (sql/287).",
    )
    sa.Table(
        "finding_occurrence", md,
        # References checked per statement, not by foreign keys (revision 0047,
        # sql/281_outcome_references.sql): a state-size run links 239,000 findings.
        sa.Column("finding_id", sa.BigInteger, primary_key=True,
                  comment="Finding row of a run."),
        sa.Column("finding_case_id", sa.BigInteger, nullable=False,
                  comment="The finding it is (checks.finding_case)."),
        sa.Column("run_id", sa.BigInteger, nullable=False,
                  comment="Check run of the finding row."),
        sa.Index("ix_finding_occurrence_case", "finding_case_id", "run_id"),
        sa.Index("ix_finding_occurrence_run", "run_id"),
        schema="checks",
        comment="Which finding (checks.finding_case) each finding row of a run is; written at "
                "the end of the run.",
    )
    sa.Table(
        "finding_review", md,
        sa.Column("review_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="History row id, in the order the changes were made."),
        sa.Column("finding_case_id", sa.BigInteger,
                  sa.ForeignKey("checks.finding_case.finding_case_id"), nullable=False,
                  comment="The finding."),
        sa.Column("event", sa.Text, nullable=False,
                  comment="found, resolved, reopened (by a check run); acknowledged, waived, "
                          "opened, noted (by staff)."),
        sa.Column("review_state", sa.Text, nullable=False, comment="State after the change."),
        sa.Column("waiver_reference", sa.Text, comment="Variance or decision (waived)."),
        sa.Column("note", sa.Text, comment="Note given with the change."),
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  comment="Check run that made the change; NULL for a staff change."),
        sa.Column("changed_by", sa.Text, nullable=False,
                  server_default=sa.text("session_user"),
                  comment="Database login that made the change (session_user)."),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="When."),
        sa.CheckConstraint(f"event IN ({_codes(REVIEW_EVENTS)})", name="review_event_code"),
        sa.CheckConstraint(f"review_state IN ({_codes(REVIEW_STATES)})",
                           name="review_history_state_code"),
        sa.CheckConstraint(_at_most("note", NOTE_MAX), name="note_length"),
        sa.CheckConstraint(_at_most("waiver_reference", REFERENCE_MAX),
                           name="waiver_reference_length"),
        sa.Index("ix_finding_review_case", "finding_case_id", "review_id"),
        sa.Index("ix_finding_review_run", "run_id"),
        schema="checks",
        comment="History of every review change of every finding, append-only (sql/287).",
    )


def define(md: sa.MetaData, srid: int) -> None:
    """Add the checks schema's tables to the metadata."""
    _layer_write(md)
    _buffer_site_cache(md, srid)
    _evaluation_stage(md, srid)
    sa.Table(
        "rule_check", md,
        sa.Column("paragraph", sa.Text, primary_key=True,
                  comment="Rule M paragraph, e.g. '6(c)'."),
        sa.Column("check_code", sa.Text, primary_key=True,
                  comment="Short code of the check, e.g. 'buffer_min_width'."),
        sa.Column("severity", sa.Text, nullable=False,
                  comment="Severity of a failure: error, warning or info."),
        sa.Column("title", sa.Text, nullable=False, comment="What the rule requires."),
        sa.Column("measure", sa.Text, nullable=False,
                  comment="Exactly what is measured and compared with the limit."),
        sa.Column("unit", sa.Text, comment="Unit of the measured value and the limit."),
        sa.Column("worse", sa.Text, nullable=False,
                  comment="Which measured values are worse: higher, lower, or flag (yes/no)."),
        sa.Column("sort_order", sa.Integer, nullable=False,
                  comment="Order of the check in reports (the rule's order)."),
        # Registration (revision 0021): each check file upserts its own rows (sql/200 says
        # how), and the runner (sql/280) calls the functions the current rows name, so a new
        # check is its file and nothing else. Rows are retired, never deleted: past findings
        # and outcomes reference them.
        sa.Column("evaluated_by", sa.Text,
                  comment="Function that evaluates the check (schema.name), called as "
                          "f(plan_area_id integer, permit_id bigint) and returning "
                          "checks.evaluation rows; the runner calls every function a current "
                          "row names. NULL: no SQL file ever registered the row (before "
                          "revision 0021)."),
        sa.Column("defined_in", sa.Text,
                  comment="SQL file that registers the check beside its function, e.g. "
                          "250_check_buffer_width.sql."),
        sa.Column("district_cases", sa.Boolean, nullable=False, server_default=sa.text("false"),
                  comment="The check also evaluates cases of no permit (District projects, "
                          "the plan area as a whole): a run that re-evaluates those calls its "
                          "function plan-wide."),
        sa.Column("not_applicable_when", sa.Text,
                  comment="When a permit has nothing to check (outcome not_applicable)."),
        sa.Column("registered_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  comment="When a migration last registered it (the transaction that applied "
                          "its file)."),
        sa.Column("retired_at", sa.DateTime(timezone=True),
                  comment="When its file stopped registering it or its function was gone; "
                          "NULL: current. A retired check is not run and gets no outcome; the "
                          "row stays, for the findings and outcomes of past runs."),
        sa.CheckConstraint(f"severity IN ({_codes(SEVERITIES)})", name="severity_code"),
        sa.CheckConstraint(f"worse IN ({_codes(WORSE)})", name="worse_code"),
        schema="checks",
        comment="Catalogue of the Rule M checks: each row registered by the SQL file that "
                "defines its function (sql/210-279).",
    )
    sa.Table(
        "run", md,
        sa.Column("run_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Check run id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area checked."),
        sa.Column("permit_id", sa.BigInteger, sa.ForeignKey("core.feature.feature_id"),
                  comment="The one permit checked, or NULL when every permit was."),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="Start time."),
        sa.Column("finished_at", sa.DateTime(timezone=True), comment="End time."),
        sa.Column("permit_count", sa.Integer, comment="Permits checked."),
        sa.Column("finding_count", sa.Integer, comment="Findings recorded."),
        sa.Column("error_count", sa.Integer, comment="Findings of severity error."),
        sa.Column("warning_count", sa.Integer, comment="Findings of severity warning."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that ran the checks."),
        # Incremental runs (revision 0009, sql/285): the results of the permits nothing touched
        # are carried over from the base run instead of being evaluated again.
        sa.Column("base_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  comment="Run whose results were carried over for the permits no change "
                          "touched (an incremental run); NULL when every permit was evaluated."),
        sa.Column("rechecked_count", sa.Integer,
                  comment="Permits evaluated by this run (the rest carried over from "
                          "base_run_id)."),
        sa.Column("changes_since", sa.DateTime(timezone=True),
                  comment="Start of the oldest transaction open when this run began: data "
                          "committed by it or later may be unseen by this run, so the next "
                          "incremental run looks for changes from this time on."),
        sa.Column("rechecked_why", JSONB,
                  comment="Why each rechecked permit (or the whole plan area) was evaluated "
                          "again: the changed layers and dates."),
        sa.Index("ix_run_plan_area", "plan_area_id", "run_id"),
        schema="checks",
        comment="One row per run of the rule checks.",
    )
    sa.Table(
        "finding", md,
        sa.Column("finding_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Finding id."),
        # References checked per statement, not by foreign keys (revision 0028,
        # sql/281_outcome_references.sql).
        sa.Column("run_id", sa.BigInteger, nullable=False, comment="Check run that found it."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("paragraph", sa.Text, nullable=False,
                  comment="Rule M paragraph, e.g. '6(c)'."),
        sa.Column("check_code", sa.Text, nullable=False, comment="Short code of the check."),
        sa.Column("severity", sa.Text, nullable=False, comment="error, warning or info."),
        sa.Column("permit_id", sa.BigInteger,
                  comment="Permit concerned (NULL for a District project)."),
        sa.Column("parcel_id", sa.BigInteger,
                  comment="Parcel concerned, when the check is per parcel."),
        sa.Column("feature_id", sa.BigInteger,
                  comment="The feature found at fault (structure, BMP, replacement, ...)."),
        sa.Column("measured_value", sa.Numeric, comment="Measured value."),
        sa.Column("limit_value", sa.Numeric, comment="The rule's limit for it."),
        sa.Column("unit", sa.Text, comment="Unit of the measured value and the limit."),
        sa.Column("message", sa.Text, nullable=False, comment="What is wrong, in one line."),
        sa.Column("geom", Geometry("GEOMETRY", srid=srid, spatial_index=False),
                  comment="Where: the failing area, line or point, in the working CRS."),
        # Revision 0045: what the review links to its source's identity (sql/287).
        sa.Column("carried_from_id", sa.BigInteger,
                  comment="The base run's finding row this one copies (an incremental run "
                          "carried the permit's results over, checks.carry_over); NULL when "
                          "this run evaluated it."),
        sa.CheckConstraint(f"severity IN ({_codes(SEVERITIES)})", name="severity_code"),
        sa.Index("ix_finding_run", "run_id"),
        sa.Index("ix_finding_permit", "permit_id", "run_id"),
        sa.Index("ix_finding_parcel", "parcel_id", "run_id"),  # revision 0031
        sa.Index("ix_finding_geom", "geom", postgresql_using="gist"),
        schema="checks",
        comment="Findings of the rule checks: a failure, its measure, limit and place.",
    )
    sa.Table(
        "outcome", md,
        sa.Column("outcome_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Outcome id."),
        # References checked per statement, not by foreign keys (revision 0028,
        # sql/281_outcome_references.sql): a run writes 72,000 outcomes on the county.
        sa.Column("run_id", sa.BigInteger, nullable=False, comment="Check run."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("permit_id", sa.BigInteger, nullable=False, comment="Permit."),
        sa.Column("paragraph", sa.Text, nullable=False, comment="Rule M paragraph."),
        sa.Column("check_code", sa.Text, nullable=False, comment="Short code of the check."),
        sa.Column("outcome", sa.Text, nullable=False,
                  comment="pass, fail, not_evaluated (an input the check needs is missing) "
                          "or not_applicable."),
        sa.Column("measured_value", sa.Numeric,
                  comment="The worst measured value of the permit for this check."),
        sa.Column("limit_value", sa.Numeric, comment="The limit that value was held against."),
        sa.Column("unit", sa.Text, comment="Unit."),
        sa.Column("evaluated_count", sa.Integer, nullable=False,
                  comment="Cases evaluated (features, parcels, subwatersheds ...)."),
        sa.Column("finding_count", sa.Integer, nullable=False,
                  comment="Cases that failed or could not be evaluated (findings)."),
        sa.Column("message", sa.Text, comment="The worst case, in one line."),
        sa.CheckConstraint(f"outcome IN ({_codes(OUTCOMES)})", name="outcome_code"),
        sa.UniqueConstraint("run_id", "permit_id", "paragraph", "check_code",
                            name="uq_outcome_run_permit_check"),
        sa.Index("ix_outcome_permit", "permit_id", "run_id"),
        schema="checks",
        comment="Outcome of every check for every permit of a run: pass, fail, not evaluated "
                "or not applicable.",
    )
    # Revision 0046: an incremental run refers to the outcomes of the permits it carries over
    # instead of copying them (1.1 million rows a night at state size, sql/285).
    sa.Table(
        "run_permit", md,
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  primary_key=True, comment="Check run."),
        sa.Column("permit_id", sa.BigInteger, primary_key=True,
                  comment="A permit the run covers (in its scope: evaluated or carried over)."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("outcome_run_id", sa.BigInteger, sa.ForeignKey("checks.run.run_id"),
                  nullable=False,
                  comment="The run whose checks.outcome rows are this run's outcomes of the "
                          "permit: the run itself when it evaluated the permit, else the run "
                          "that last did (an incremental run carried them over)."),
        sa.CheckConstraint("outcome_run_id <= run_id", name="outcome_run_not_later"),
        schema="checks",
        comment="The permits each check run covers and which run holds each one's outcomes "
                "(checks.run_outcome reads a run's outcomes through it).",
    )
    _finding_review(md)
