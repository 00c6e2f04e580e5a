"""An upgrade from the previous release: a database made by v0.1.0 is brought forward by
`rulem-db db migrate` with its ledger, balances and findings intact (docs/operations.md,
"Upgrading").

The dump (tests/upgrade/v0.1.0-demo.dump, made as tests/upgrade/README.md says) holds the
demo loaded and reconciled by v0.1.0, with one finding acknowledged, one waived and one noted.
The test restores it with pg_restore into a new database, reads what the dump holds (its own
rows, not today's figures: other releases change the measures), migrates, and compares. A
recompute afterwards may post what the new release's measures change, and nothing else: the
dump's entries stay as they were, and no line is reversed only to be posted again the same.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from rulem_cli import main as cli
from rulem_db.paths import MIGRATIONS_DIR

pytestmark = pytest.mark.slow

DUMP = Path(__file__).resolve().parents[1] / "upgrade" / "v0.1.0-demo.dump"
DUMP_REVISION = "0031"   # the head of v0.1.0

# what the dump holds (tests/upgrade/README.md): counted once here, so that a dump made again
# differently fails loudly instead of comparing nothing
DUMP_ENTRIES, DUMP_FINDINGS, DUMP_REVIEWS = 46, 44, 47

# The dump's rows that an upgrade keeps as they are, by key. The finding tables are the
# record of the checks and their review (docs/checks.md, "Finding review").
KEPT = {
    "ledger.entry": "entry_id",
    "checks.finding": "finding_id",
    "checks.finding_case": "finding_case_id",
    "checks.finding_review": "review_id",
}
BALANCES = {
    "pub.plan_balance": "plan_area_id",
    "pub.parcel_balance": "pin",
    "pub.permit_balance": "permit_no",
}
ENTRY_LINE = ("permit_id", "district_project", "parcel_id", "measure")


def _head_revision() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


@pytest.fixture
def restored(empty_db_url: str) -> Iterator[str]:
    """The dump restored by PostgreSQL's own pg_restore into a new database, not migrated."""
    url = make_url(empty_db_url)
    with sa.create_engine(url).connect() as conn:
        major = int(conn.execute(sa.text("SHOW server_version_num")).scalar()) // 10000
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGPASSWORD"] = url.password or ""
    host = url.host or url.query.get("host")
    proc = subprocess.run(
        [f"/usr/lib/postgresql/{major}/bin/pg_restore", "--no-owner", "--exit-on-error",
         "--single-transaction", "--host", str(host), "--port", str(url.port or 5432),
         "--username", str(url.username), "--dbname", str(url.database), str(DUMP)],
        env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    yield empty_db_url


def _rows(conn: sa.Connection, relation: str, key: str) -> dict[Any, dict[str, Any]]:
    """Every row of relation by its key, geometries as WKB hex (comparable)."""
    rows = conn.execute(sa.text(f"SELECT * FROM {relation}")).mappings().all()
    return {r[key]: {c: (v.hex() if isinstance(v, memoryview) else v) for c, v in r.items()}
            for r in rows}


def _snapshot(url: str) -> dict[str, dict[Any, dict[str, Any]]]:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            return {rel: _rows(conn, rel, key) for rel, key in {**KEPT, **BALANCES}.items()}
    finally:
        eng.dispose()


def _same_rows(relation: str, before: dict, after: dict, keep_all_columns: bool) -> None:
    """Every row of before is in after with the same values in the columns both have."""
    missing = sorted(set(before) - set(after), key=str)
    assert not missing, f"{relation}: rows of the dump gone after the upgrade: {missing[:5]}"
    some = next(iter(before.values()))
    common = set(some) & set(next(iter(after.values())))
    if keep_all_columns:
        assert common == set(some), f"{relation}: columns gone: {set(some) - common}"
    changed = [k for k, row in before.items()
               if any(row[c] != after[k][c] for c in common)]
    assert not changed, (f"{relation}: rows changed by the upgrade, e.g. {changed[0]}: "
                         f"{before[changed[0]]} -> {after[changed[0]]}")


def test_a_v010_database_is_migrated_with_its_ledger_and_findings_intact(
        restored: str, capsys: pytest.CaptureFixture) -> None:
    eng = sa.create_engine(restored)
    try:
        with eng.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT version_num FROM ops.alembic_version")).scalar() == DUMP_REVISION
    finally:
        eng.dispose()
    before = _snapshot(restored)
    assert (len(before["ledger.entry"]), len(before["checks.finding"]),
            len(before["checks.finding_review"])) == (DUMP_ENTRIES, DUMP_FINDINGS, DUMP_REVIEWS)
    states = sorted(r["review_state"] for r in before["checks.finding_case"].values()
                    if r["review_state"] != "open")
    assert states == ["acknowledged", "waived"]

    assert cli.main(["--db", restored, "db", "migrate"]) == 0
    assert "schema up to date" in capsys.readouterr().out
    after = _snapshot(restored)
    eng = sa.create_engine(restored)
    try:
        with eng.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT version_num FROM ops.alembic_version")).scalar() == _head_revision()
    finally:
        eng.dispose()
    for relation in KEPT:
        _same_rows(relation, before[relation], after[relation],
                   keep_all_columns=relation == "ledger.entry")
    for relation in BALANCES:   # published columns are a contract: none may go
        _same_rows(relation, before[relation], after[relation], keep_all_columns=True)

    # the new release's recompute: posts what its measures change, keeps the dump's entries
    assert cli.main(["--db", restored, "recompute", "--all"]) == 0
    capsys.readouterr()
    entries = _snapshot(restored)["ledger.entry"]
    _same_rows("ledger.entry", before["ledger.entry"], entries, keep_all_columns=True)
    posted = {k: r for k, r in entries.items() if k not in before["ledger.entry"]}
    for entry in posted.values():
        reversed_id = entry["reverses_entry_id"]
        if reversed_id is None:
            continue
        old = entries[reversed_id]
        assert entry["acres"] == -old["acres"]
        again = [r for r in posted.values() if r["reverses_entry_id"] is None
                 and all(r[c] == old[c] for c in ENTRY_LINE)]
        assert not any(all(r[c] == old[c] for c in ("acres", "acres_published", "effective_on"))
                       for r in again), f"line reversed and posted again unchanged: {old}"
    # posting is complete: a second recompute finds nothing left to post
    assert cli.main(["--db", restored, "recompute", "--all"]) == 0
    capsys.readouterr()
    assert _snapshot(restored)["ledger.entry"].keys() == entries.keys()
    assert all(isinstance(r["acres"], Decimal) for r in entries.values())
