"""The ETL login cannot falsify a published balance or rewrite what a run recorded.

As found: `UPDATE ledger.parcel_total SET credit = credit + 5` by the writer login showed in
pub.parcel_balance, survived two quiet nightlies (which checked the plan-wide figures only) and
a recompute. Now the totals are written by the posting trigger and the rebuild alone (owner's
functions; no role holds INSERT, UPDATE, DELETE or TRUNCATE on them), every night compares
every level with the entries, and the run record (ops.run, its file list and its snapshots) is
written through the run protocol's functions only: append-only for the writer, as the ledger is.

Site (tests/support/ledger_scenarios.py): one wetland, one parcel P-1, permit 25-001 filling a 100 m
square = 2.4711 acres required.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from clones import cloned
from role_logins import as_login, as_login_url, role_logins
from sqlalchemy.engine import URL, make_url

from flows import nightly
from rulem_db import ledger

at = fx.at
LINE = ("ledger totals differ from the entries in 1 figures (ledger.totals_drift()); "
        "run rulem-db recompute --all")
TOTALS = ("ledger.plan_total", "ledger.permit_total", "ledger.parcel_total")


@pytest.fixture(scope="module")
def etl(admin_url: URL) -> Iterator[URL]:
    with role_logins(admin_url, ("rulem_etl",), "lw") as made:
        yield made["rulem_etl"]


def _site(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        d = s.delineation(conn, "D-1", at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", at(0, 0, 300, 300))
        s.parcel(conn, "P-1", at(0, 0, 500, 500))
        permit = s.permit(conn, "25-001", pins=["P-1"])
        s.impact(conn, permit, "fill", at(0, 0, 100, 100), "i1")


def _night(url: str, tmp_path, name: str) -> nightly.RunSummary:
    with nightly.database(url):
        return nightly.nightly_reconciliation.fn(reports=str(tmp_path / name),
                                                 started_via="command")


def _parcel(conn: sa.Connection) -> tuple:
    return tuple(conn.execute(sa.text(
        "SELECT required_acres, credit_acres, balance_acres FROM pub.parcel_balance "
        "WHERE pin = 'P-1'")).one())


def _drift(conn: sa.Connection) -> list[tuple]:
    return [tuple(r) for r in conn.execute(sa.text(
        "SELECT level, measure, stored - from_entries FROM ledger.totals_drift()"))]


# --------------------------------------------------------------------------------------------
# The totals


@pytest.mark.parametrize("sql", [
    "UPDATE {t} SET credit = credit + 5",
    "UPDATE {t} SET entries = entries",
    "DELETE FROM {t}",
    "TRUNCATE {t}",
    "INSERT INTO {t} (plan_area_id) VALUES (99)",
])
def test_the_writer_login_writes_no_total(db_url: str, engine: sa.Engine, etl: URL,
                                          sql: str) -> None:
    """The attack as found, and every other way of writing a total directly."""
    _site(engine)
    ledger.recompute(as_login_url(db_url, etl), workers=1)  # the writer posts: totals kept
    with engine.connect() as conn:
        before = _parcel(conn)
    assert before == (Decimal("2.4711"), Decimal("0.0000"), Decimal("-2.4711"))
    writer = as_login(db_url, etl)
    for table in TOTALS:
        with pytest.raises(sa.exc.DBAPIError, match="permission denied for table"), \
                writer.begin() as conn:
            conn.execute(sa.text(sql.format(t=table)))
    writer.dispose()
    with engine.connect() as conn:
        assert _parcel(conn) == before and _drift(conn) == []


def test_the_posting_trigger_cannot_be_borrowed_for_another_table(db_url: str, etl: URL) -> None:
    """The trigger function runs as the owner: a writer that attached it to a table of its
    own could feed it entries that are not in the ledger. Only the owner may execute it."""
    writer = as_login(db_url, etl)
    refused = "permission denied for function ledger.entry_totals"
    with pytest.raises(sa.exc.DBAPIError, match=refused), writer.begin() as conn:
        conn.execute(sa.text("CREATE TEMP TABLE fake (LIKE ledger.entry)"))
        conn.execute(sa.text(
            "CREATE TRIGGER fake_totals AFTER INSERT ON fake REFERENCING NEW TABLE AS "
            "new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger.entry_totals()"))
    writer.dispose()


def test_a_rebuild_reads_no_table_of_the_callers(db_url: str, engine: sa.Engine,
                                                 etl: URL) -> None:
    """ledger.rebuild_totals (run by `recompute --all`) summed through a temporary table of a
    fixed name: a writer that made it first, holding 5 acres of credit, had them counted."""
    _site(engine)
    ledger.recompute(db_url, workers=1)
    with engine.connect() as conn:
        parcel = conn.execute(sa.text(
            "SELECT parcel_id FROM core.parcel WHERE pin = 'P-1'")).scalar_one()
    writer = as_login(db_url, etl)
    with writer.connect() as conn:
        conn.execute(sa.text(
            "CREATE TEMP TABLE ledger_totals_rebuild (level text, plan_area_id integer, "
            "key_id bigint, measure text, acres numeric)"))
        conn.execute(sa.text("INSERT INTO ledger_totals_rebuild VALUES "
                             "('parcel', 1, :p, 'credit', 5)"), {"p": parcel})
        conn.commit()
        conn.execute(sa.text("SELECT ledger.rebuild_totals()"))
        conn.commit()
    writer.dispose()
    with engine.connect() as conn:
        assert _drift(conn) == []
        assert _parcel(conn) == (Decimal("2.4711"), Decimal("0.0000"), Decimal("-2.4711"))


def test_a_quiet_night_catches_a_parcel_total_changed_behind_the_trigger(
        db_url: str, engine: sa.Engine, tmp_path) -> None:
    """No role may write a total now, but the owner can (a hand, a restore, a bug): the
    night after, which posts nothing, compares every level and refuses before the checks;
    `recompute --all` rebuilds the totals and the next night is clean."""
    _site(engine)
    first = _night(db_url, tmp_path, "first")
    assert first.status == "done" and first.entries_posted > 0
    with engine.begin() as conn:  # the owner, straight at a parcel's total
        conn.execute(sa.text("UPDATE ledger.parcel_total SET credit = credit + 5"))
        assert _drift(conn) == [("parcel", "credit", Decimal("5"))]
    with pytest.raises(Exception) as failed:
        _night(db_url, tmp_path, "quiet")
    assert str(failed.value) == LINE
    assert not (tmp_path / "quiet").exists()
    with engine.connect() as conn:
        status, message = conn.execute(sa.text(
            "SELECT status, message FROM ops.run ORDER BY run_id DESC LIMIT 1")).one()
    assert (status, message) == ("failed", LINE)
    ledger.recompute(db_url, all=True, workers=1)  # rulem-db recompute --all
    with engine.connect() as conn:
        assert _drift(conn) == []
        assert _parcel(conn) == (Decimal("2.4711"), Decimal("0.0000"), Decimal("-2.4711"))
    assert _night(db_url, tmp_path, "after").status == "done"


# --------------------------------------------------------------------------------------------
# The run record


def test_the_nightly_runs_as_the_writer_login_through_the_run_protocol(
        db_url: str, engine: sa.Engine, etl: URL, tmp_path) -> None:
    """The writer writes no run table itself; the protocol's functions (owner's) open, fill
    and close its run, recorded with its login."""
    _site(engine)
    first = _night(as_login_url(db_url, etl), tmp_path, "first")
    second = _night(as_login_url(db_url, etl), tmp_path, "second")
    assert (first.status, second.status, second.changed) == ("done", "done", False)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT status, created_by, check_run_id IS NOT NULL FROM ops.run "
            "ORDER BY run_id")).all()
        snapshot = conn.execute(sa.text(
            "SELECT count(*) FROM ops.run_parcel_balance WHERE run_id = :r"),
            {"r": first.run_id}).scalar_one()
    assert [tuple(r) for r in rows] == [("done", etl.username, True)] * 2
    assert snapshot == 1  # P-1, as the first run saw it


@pytest.fixture(scope="module")
def _night_ended(admin_url: URL, template_db: str,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A database whose one nightly run (over the site) has ended, made once for the module:
    its name and the run's id. Each test takes a copy (finished_run), so none sees another's
    writes."""
    with cloned(admin_url, template_db, "rulem_lwrun") as url:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        try:
            _site(engine)
            run = _night(url, tmp_path_factory.mktemp("lw"), "night")
            with engine.connect() as conn:
                assert conn.execute(sa.text(
                    "SELECT count(*) FROM ops.run_finding WHERE run_id = :r"),
                    {"r": run.run_id}).scalar_one() > 0
        finally:
            engine.dispose()
        yield make_url(url).database, run.run_id


@pytest.fixture
def finished_run(admin_url: URL, _night_ended: tuple[str, int]
                 ) -> Iterator[tuple[str, sa.Engine, int]]:
    """This test's copy of the database whose nightly run has ended: URL, engine, run id."""
    name, run_id = _night_ended
    with cloned(admin_url, name, "rulem_lwc") as url:
        engine = sa.create_engine(url)
        try:
            yield url, engine, run_id
        finally:
            engine.dispose()


@pytest.mark.parametrize(("sql", "match"), [
    ("UPDATE ops.run SET status = 'done', message = 'all fine' WHERE run_id = {r}",
     "permission denied for table run"),
    ("UPDATE ops.run SET plan_totals = '{{}}' WHERE run_id = {r}",
     "permission denied for table run"),
    ("DELETE FROM ops.run WHERE run_id = {r}", "permission denied for table run"),
    ("TRUNCATE ops.run CASCADE", "permission denied for table run"),
    ("INSERT INTO ops.run (plan_area_id, flow, status) VALUES (1, 'nightly_reconciliation', "
     "'done')", "permission denied for table run"),
    ("UPDATE ops.run_parcel_balance SET balance_acres = 0 WHERE run_id = {r}",
     "permission denied for table run_parcel_balance"),
    ("DELETE FROM ops.run_parcel_balance WHERE run_id = {r}",
     "permission denied for table run_parcel_balance"),
    ("TRUNCATE ops.run_finding", "permission denied for table run_finding"),
    ("DELETE FROM ops.run_finding WHERE run_id = {r}", "permission denied for table run_finding"),
    ("INSERT INTO ops.run_finding (run_id, finding_key, paragraph, check_code, message) "
     "VALUES ({r}, 'x', '6(c)', 'buffer_min_width', 'x')",
     "permission denied for table run_finding"),
    ("UPDATE ops.run_file SET message = 'x' WHERE run_id = {r}",
     "permission denied for table run_file"),
    ("SELECT ops.finish_run({r}, 'done', 'rewritten')", "ended as done; its record is final"),
    ("SELECT ops.snapshot_run({r}, NULL, NULL)", "ended as done; its record is final"),
    ("SELECT ops.summarize_run({r})", "ended as done; its record is final"),
    ("SELECT ops.record_run_file({r}, 'x.gpkg', 'parcel', NULL, 'loaded', NULL, NULL, NULL)",
     "ended as done; its record is final"),
])
def test_the_writer_login_cannot_rewrite_a_run(finished_run: tuple[str, sa.Engine, int],
                                                etl: URL, sql: str, match: str) -> None:
    db_url, engine, run = finished_run
    with engine.connect() as conn:
        before = conn.execute(sa.text(
            "SELECT md5(r::text) FROM ops.run r WHERE run_id = :r"), {"r": run}).scalar_one()
    writer = as_login(db_url, etl)
    with pytest.raises(sa.exc.DBAPIError, match=match), writer.begin() as conn:
        conn.execute(sa.text(sql.format(r=run)))
    writer.dispose()
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT md5(r::text) FROM ops.run r WHERE run_id = :r"), {"r": run}).scalar_one() \
            == before


def test_a_finished_run_is_final_for_the_owner_too(
        finished_run: tuple[str, sa.Engine, int]) -> None:
    """The protocol's functions run as the owner; the triggers hold for it as well."""
    _, engine, run = finished_run
    for sql, match in [
        (f"UPDATE ops.run SET message = 'x' WHERE run_id = {run}", "its record is final"),
        (f"DELETE FROM ops.run WHERE run_id = {run}", "append-only"),
        ("TRUNCATE ops.run CASCADE", "append-only"),
        (f"DELETE FROM ops.run_finding WHERE run_id = {run}", "its record is final"),
        (f"UPDATE ops.run_finding SET message = 'x' WHERE run_id = {run}", "append-only"),
        (f"INSERT INTO ops.run_finding (run_id, finding_key, paragraph, check_code, message) "
         f"VALUES ({run}, 'y', '6(c)', 'buffer_min_width', 'y')", "its record is final"),
        (f"SELECT ops.record_run_file({run}, 'x.gpkg', 'parcel', NULL, 'loaded', NULL, NULL, "
         "NULL)", "its record is final"),
    ]:
        with pytest.raises(sa.exc.DBAPIError, match=match), engine.begin() as conn:
            conn.execute(sa.text(sql))


def test_a_snapshot_row_names_a_run_and_a_parcel_that_exist(db_url: str,
                                                            engine: sa.Engine) -> None:
    """The snapshots' references are checked once per statement (revision 0049, sql/300), as
    their foreign keys checked them: a row of a run that does not exist, or a parcel balance
    of a feature that is not a parcel, is refused; a row of the running run is taken. (In
    one transaction, each insert in a savepoint, all rolled back.)"""
    from flows import runs

    plan = runs.plan_area(db_url, None)
    with runs.ReconcileLock(db_url, plan) as lock:
        run_id = lock.start_run("nightly_reconciliation", "command")
        with engine.connect() as conn:
            missing = conn.execute(sa.text("SELECT max(run_id) + 1000 FROM ops.run")).scalar()
            parcel, permit = (conn.execute(sa.text(
                "INSERT INTO core.feature (layer, plan_area_id, feature_key) "
                "VALUES (:l, :p, 'snapshot-test') RETURNING feature_id"),
                {"l": layer, "p": plan.plan_area_id}).scalar_one()
                for layer in ("parcel", "permit"))
            finding = ("INSERT INTO ops.run_finding (run_id, finding_key, paragraph, "
                       "check_code, message) VALUES (:r, 'x', '6(c)', 'buffer_min_width', 'x')")
            balance = ("INSERT INTO ops.run_parcel_balance (run_id, parcel_id, status) "
                       "VALUES (:r, :p, 'deficit')")
            for sql, params, match in [
                (finding, {"r": missing}, f"run {missing} does not exist"),
                (balance, {"r": missing, "p": parcel}, f"run {missing} does not exist"),
                (balance, {"r": run_id, "p": permit}, f"parcel_id {permit} is not a parcel"),
                (balance, {"r": run_id, "p": -1}, "parcel_id -1 is not a parcel"),
            ]:
                with pytest.raises(sa.exc.IntegrityError, match=match), conn.begin_nested():
                    conn.execute(sa.text(sql), params)
            conn.execute(sa.text(finding), {"r": run_id})
            conn.execute(sa.text(balance), {"r": run_id, "p": parcel})
            assert conn.execute(sa.text(
                "SELECT (SELECT count(*) FROM ops.run_finding WHERE run_id = :r), "
                "(SELECT count(*) FROM ops.run_parcel_balance WHERE run_id = :r)"),
                {"r": run_id}).one() == (1, 1)
            conn.rollback()
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT ops.finish_run(:r, 'failed', 'test')"), {"r": run_id})


def test_a_run_ends_only_as_done_partial_or_failed(db_url: str, engine: sa.Engine,
                                                   etl: URL) -> None:
    from flows import runs

    plan = runs.plan_area(db_url, None)
    with runs.ReconcileLock(as_login_url(db_url, etl), plan) as lock:
        run_id = lock.start_run("nightly_reconciliation", "command")
        writer = as_login(db_url, etl)
        for status in ("running", "abandoned", "whatever"):
            with pytest.raises(sa.exc.DBAPIError, match="a run ends as done, partial or failed"), \
                    writer.begin() as conn:
                conn.execute(sa.text("SELECT ops.finish_run(:r, :s, 'x')"),
                             {"r": run_id, "s": status})
        with writer.begin() as conn:
            conn.execute(sa.text("SELECT ops.finish_run(:r, 'failed', 'stopped')"),
                         {"r": run_id})
        writer.dispose()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT status, created_by FROM ops.run WHERE run_id = :r"),
                            {"r": run_id}).one() == ("failed", etl.username)
