"""Ledger totals kept at posting: ledger.plan_total, ledger.permit_total, ledger.parcel_total.

Why: pub.plan_balance summed every entry of the plan area at each read (county: 78 ms p50,
116-185 ms p95 with 8 clients), a cost that grows with the book's history since every change
appends a reversal and a new entry. The current balance views now read these totals, which a
statement trigger on ledger.entry (sql/165) keeps in the posting transaction: one row per plan
area, per (permit, plan area) and per (parcel, plan area), holding the sums by measure of the
entries' published acres (coalesce(acres_published, round(acres, 4)), what the views
publish). The history queries (pub.*_balance_at, *_as_of) stay sums of the entries.

The plan row also keeps how many permits and parcels are in deficit (the trigger moves the
counts as in_deficit, stored and generated, changes on the rows it writes): counting them at
read time cost milliseconds and grew with the dead row versions the updates leave. This
revision fills the totals from the entries already posted; the SQL files after it install the
trigger and the views.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The measures summed per key, with the comment each column carries (sql/180 publishes them).
MEASURES: dict[str, str] = {
    "impact": "Sum of the impact entries' published acres (memo).",
    "required": "Sum of the required entries' published acres (debit).",
    "credit": "Sum of the credit entries' published acres (counted credit, before transfers).",
    "transfer_in": "Sum of the transfer_in entries' published acres (credit).",
    "transfer_out": "Sum of the transfer_out entries' published acres (debit).",
    "credit_proposed": "Sum of the credit_proposed entries' published acres (memo).",
    "credit_constructed": "Sum of the credit_constructed entries' published acres (memo).",
    "credit_hosted": "Sum of the credit_hosted entries' published acres (memo).",
}
DEFICIT = ("round(credit + transfer_in - required - transfer_out, 4) < 0")


def _measure_columns() -> list[sa.Column]:
    return [sa.Column(m, sa.Numeric(), nullable=False, server_default="0", comment=doc)
            for m, doc in MEASURES.items()]


def _entries_column() -> sa.Column:
    return sa.Column("entries", sa.BigInteger(), nullable=False, server_default="0",
                     comment="Entries summed (reversals included).")


def _owner_table(name: str, key: str, key_doc: str, what: str) -> None:
    op.create_table(
        name,
        sa.Column(key, sa.BigInteger(), nullable=False, comment=key_doc),
        sa.Column("plan_area_id", sa.Integer(), nullable=False, comment="Plan area."),
        *_measure_columns(),
        _entries_column(),
        sa.Column("in_deficit", sa.Boolean(), sa.Computed(DEFICIT, persisted=True),
                  comment="Balance (credit + transfer_in - required - transfer_out) below "
                          "zero at 4 decimals: what pub.plan_balance counts."),
        sa.PrimaryKeyConstraint(key, "plan_area_id", name=f"pk_{name}"),
        schema="ledger",
        comment=f"Sums by measure of the ledger entries of each {what} and plan area (published "
                "acres), kept by the statement trigger ledger.entry_totals (sql/165) in the "
                "posting transaction; pub.*_balance reads them. ledger.totals_drift() compares "
                "them with the entries.")


FILL = """
INSERT INTO ledger.{table} ({keys}, impact, required, credit, transfer_in, transfer_out,
                            credit_proposed, credit_constructed, credit_hosted, {extra} entries)
SELECT {keys},
       {sums}
       {extra_sums} count(*)
FROM (SELECT e.*, coalesce(e.acres_published, round(e.acres, 4)) AS pub FROM ledger.entry e) e
WHERE {where}
GROUP BY {keys}
"""


def _fill(table: str, keys: str, where: str, extra: str = "", extra_sums: str = "") -> None:
    sums = "".join(f"coalesce(sum(e.pub) FILTER (WHERE e.measure = '{m}'), 0), "
                   for m in MEASURES)
    op.execute(FILL.format(table=table, keys=keys, sums=sums, where=where, extra=extra,
                           extra_sums=extra_sums))


def upgrade() -> None:
    op.create_table(
        "plan_total",
        sa.Column("plan_area_id", sa.Integer(), nullable=False, comment="Plan area."),
        *_measure_columns(),
        sa.Column("district_project_credit", sa.Numeric(), nullable=False, server_default="0",
                  comment="Sum of the credit entries of District projects (no permit)."),
        sa.Column("unallocated_balance", sa.Numeric(), nullable=False, server_default="0",
                  comment="Balance (credits minus debits) of the entries on no parcel."),
        _entries_column(),
        sa.Column("parcels_in_deficit", sa.BigInteger(), nullable=False, server_default="0",
                  comment="Parcels whose balance is below zero at 4 decimals "
                          "(ledger.parcel_total.in_deficit)."),
        sa.Column("permits_in_deficit", sa.BigInteger(), nullable=False, server_default="0",
                  comment="Permits whose balance is below zero at 4 decimals "
                          "(ledger.permit_total.in_deficit)."),
        sa.PrimaryKeyConstraint("plan_area_id", name="pk_plan_total"),
        schema="ledger",
        comment="Sums by measure of each plan area's ledger entries (published acres), kept by "
                "the statement trigger ledger.entry_totals (sql/165) in the posting "
                "transaction; pub.plan_balance reads them. ledger.totals_drift() compares "
                "them with the entries.")
    _owner_table("permit_total", "permit_id", "Permit (core.feature).", "permit")
    _owner_table("parcel_total", "parcel_id", "Parcel (core.feature).", "parcel")
    _fill("plan_total", "plan_area_id", "true", "district_project_credit, unallocated_balance,",
          "coalesce(sum(e.pub) FILTER (WHERE e.measure = 'credit' "
          "AND e.district_project IS NOT NULL), 0), "
          "coalesce(sum(CASE e.entry_kind WHEN 'credit' THEN e.pub WHEN 'debit' THEN -e.pub "
          "END) FILTER (WHERE e.parcel_id IS NULL), 0),")
    _fill("permit_total", "permit_id, plan_area_id", "e.permit_id IS NOT NULL")
    _fill("parcel_total", "parcel_id, plan_area_id", "e.parcel_id IS NOT NULL")
    op.execute("UPDATE ledger.plan_total t SET "
               "parcels_in_deficit = (SELECT count(*) FROM ledger.parcel_total x "
               "WHERE x.plan_area_id = t.plan_area_id AND x.in_deficit), "
               "permits_in_deficit = (SELECT count(*) FROM ledger.permit_total x "
               "WHERE x.plan_area_id = t.plan_area_id AND x.in_deficit)")


def downgrade() -> None:
    # The trigger and functions of sql/165 and the views of sql/180 that read the totals go
    # with them; forgetting sql/165's record makes the next migrate apply it and every file
    # after it again (rulem_db/catalogue/sqlfiles.py).
    op.execute("DROP TRIGGER IF EXISTS entry_totals ON ledger.entry")
    op.execute("DROP TRIGGER IF EXISTS run_all_rebuilds_totals ON ledger.run")
    op.execute("DROP FUNCTION IF EXISTS ledger.entry_totals() CASCADE")
    op.execute("DROP FUNCTION IF EXISTS ledger.run_rebuilds_totals() CASCADE")
    op.execute("DROP FUNCTION IF EXISTS ledger.rebuild_totals() CASCADE")
    op.execute("DROP FUNCTION IF EXISTS ledger.totals_drift() CASCADE")
    op.execute("DROP TABLE ledger.parcel_total, ledger.permit_total, ledger.plan_total CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name IN ('165_ledger_totals.sql', "
               "'180_ledger_balances.sql')")
