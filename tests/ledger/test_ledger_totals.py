"""The ledger totals kept at posting (sql/165, revision 0027; docs/ledger.md).

pub.plan_balance, pub.permit_balance and pub.parcel_balance read ledger.plan_total,
permit_total and parcel_total, which a statement trigger on ledger.entry keeps in the posting
transaction. What must hold, whatever wrote the entries: the totals equal the sums of the
entries (ledger.totals_drift() is empty), and the current views show exactly what the history
functions summed from the entries show for "everything recorded" (pub.*_balance_at('infinity')).
Hand-worked figures: a 100 m square is 10,000 m^2 = 2.4711 acres, 50 x 100 m = 1.2355 acres.
"""

from __future__ import annotations

import io
import threading
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL

from rulem_db import db, ledger
from rulem_db.local import backup

A, B = (0, 0, 300, 600), (300, 0, 600, 600)
W1 = (0, 0, 200, 200)           # 40,000 m^2 of wetland on A-1
FILL = (0, 0, 100, 100)         # 10,000 m^2 = 2.4711 ac, inside W1
HALF = (0, 0, 50, 100)          # 5,000 m^2 = 1.2355 ac
BASIN = (400, 100, 500, 200)    # 10,000 m^2 replacement on B-1


def drift(conn: sa.Connection) -> list[tuple]:
    return [tuple(r) for r in conn.execute(sa.text("SELECT * FROM ledger.totals_drift()"))]


def views_match_entries(conn: sa.Connection) -> None:
    """Each current view row for row equals the same view summed from the entries."""
    for view in ("plan_balance", "permit_balance", "parcel_balance"):
        now = conn.execute(sa.text(f"SELECT * FROM pub.{view} EXCEPT ALL "
                                   f"SELECT * FROM pub.{view}_at('infinity')")).all()
        then = conn.execute(sa.text(f"SELECT * FROM pub.{view}_at('infinity') EXCEPT ALL "
                                    f"SELECT * FROM pub.{view}")).all()
        assert (now, then) == ([], []), view


def plan_total(conn: sa.Connection) -> dict:
    return dict(conn.execute(sa.text(
        f"SELECT * FROM ledger.plan_total WHERE plan_area_id = {s.PLAN}")).mappings().one())


@pytest.fixture(scope="module")
def site(admin_url: URL, template_db: str):
    """One database for the module: parcels A-1 and B-1, a wetland on A-1, permit 24-001
    filling a 100 m square of it and certifying a 100 m basin on B-1, recomputed once."""
    with cloned_database(admin_url, template_db) as engine:
        url = engine.url.render_as_string(hide_password=False)
        with engine.begin() as conn:
            ids = s.base_site(conn, {"W1": W1})
            ids["A-1"] = s.parcel(conn, "A-1", A)
            ids["B-1"] = s.parcel(conn, "B-1", B)
            ids["24-001"] = s.permit(conn, "24-001")
            ids["fill"] = s.impact(conn, ids["24-001"], "fill", FILL, "i1")
            s.replacement(conn, ids["24-001"], BASIN, "r1", status_on="2024-09-01")
        ledger.recompute(url)
        yield engine, url, ids


def test_a_posting_keeps_the_totals_with_hand_worked_figures(site) -> None:
    engine, _, ids = site
    with engine.connect() as conn:
        t = plan_total(conn)
        permit = conn.execute(sa.text(
            "SELECT required, credit FROM ledger.permit_total WHERE permit_id = :p"),
            {"p": ids["24-001"]}).one()
        parcels = {r[0]: tuple(r[1:]) for r in conn.execute(sa.text(
            "SELECT parcel_id, required, credit, credit_hosted FROM ledger.parcel_total"))}
        assert (t["impact"], t["required"], t["credit"]) == (
            Decimal("2.4711"), Decimal("2.4711"), Decimal("2.4711"))
        assert tuple(permit) == (Decimal("2.4711"), Decimal("2.4711"))
        # the credit is allocated to the parcel of the impact it answers for; B-1 hosts it
        acre, zero = Decimal("2.4711"), Decimal(0)
        assert parcels == {ids["A-1"]: (acre, acre, zero), ids["B-1"]: (zero, zero, acre)}
        row = s.plan_row(conn)
        assert (row["required_acres"], row["balance_acres"], row["status"],
                row["parcels_in_deficit"], row["permits_in_deficit"]) == (
            Decimal("2.4711"), Decimal("0.0000"), "balanced", 0, 0)
        assert t["entries"] == conn.execute(sa.text(
            "SELECT count(*) FROM ledger.entry")).scalar_one()
        assert drift(conn) == []
        views_match_entries(conn)


def test_a_reversal_moves_the_totals_to_the_new_figure(site) -> None:
    engine, url, ids = site
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect(HALF)} "
                             "WHERE impact_id = :i AND valid_to IS NULL"), {"i": ids["fill"]})
    # one change on a kept connection in one transaction, as `rulem-db watch` posts it
    with engine.connect() as conn, conn.begin():
        run = ledger.recompute(conn)
    assert run.reversals > 0
    with engine.connect() as conn:
        t = plan_total(conn)
        assert (t["impact"], t["required"], t["credit"]) == (
            Decimal("1.2355"), Decimal("1.2355"), Decimal("2.4711"))
        assert s.permit_rows(conn)["24-001"]["balance_acres"] == Decimal("1.2356")
        assert drift(conn) == []
        views_match_entries(conn)


def test_any_insert_counts_hand_rows_copy_district_project_and_no_parcel(site) -> None:
    engine, _, ids = site
    with engine.begin() as conn:
        before = plan_total(conn)
        conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, district_project, "
            "parcel_id, measure, entry_kind, acres, acres_published, reason, inputs) VALUES "
            f"(0, {s.PLAN}, NULL, 'DP-1', :b, 'credit', 'credit', 2.47105, 2.4711, 'hand', '{{}}'),"
            f"(0, {s.PLAN}, :p, NULL, NULL, 'required', 'debit', 0.61776, NULL, 'hand', '{{}}'),"
            f"(0, {s.PLAN}, :p, NULL, :a, 'required', 'debit', 5, 5, 'hand', '{{}}')"),
            {"a": ids["A-1"], "b": ids["B-1"], "p": ids["24-001"]})
    raw = engine.raw_connection()   # COPY, as a bulk load or a data-only restore would write
    try:
        with raw.cursor() as cur:
            cur.copy_expert(
                "COPY ledger.entry (run_id, plan_area_id, district_project, parcel_id, measure, "
                "entry_kind, acres, acres_published, reason, inputs) FROM STDIN",
                _lines(f"0\t{s.PLAN}\tDP-1\t\\N\tcredit\tcredit\t1.2355\t1.2355\tcopy\t{{}}\n"))
        raw.commit()
    finally:
        raw.close()
    with engine.connect() as conn:
        after = plan_total(conn)
        # 0.61776 has no published figure: round(0.61776, 4) = 0.6178 stands for it
        assert after["required"] - before["required"] == Decimal("5.6178")
        assert after["credit"] - before["credit"] == Decimal("3.7066")
        assert after["district_project_credit"] - before["district_project_credit"] == \
            Decimal("3.7066")
        assert after["unallocated_balance"] - before["unallocated_balance"] == \
            Decimal("0.6177")     # 1.2355 credit - 0.6178 required, both on no parcel
        assert after["entries"] - before["entries"] == 4
        row = s.plan_row(conn)   # 5 acres required on A-1 put it and the permit in deficit
        assert (row["parcels_in_deficit"], row["permits_in_deficit"]) == (1, 1)
        assert drift(conn) == []
        views_match_entries(conn)


def _lines(text: str) -> io.StringIO:
    return io.StringIO(text)


def test_two_connections_posting_at_once_lose_nothing(site) -> None:
    """Two connections post 30 and 20 transactions of two statements (required on one
    parcel, credit on the other, in opposite orders), moving parcels in and out of deficit;
    the plan's totals row makes each wait for the other's commit: no lost update, no
    deadlock, totals and deficit counts equal to the entries'."""
    engine, _, ids = site
    with engine.connect() as conn:
        before = plan_total(conn)
    parcels = [900001, 900002]   # parcel ids with no entries yet: their balance starts at 0
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def post(order: list[int], rounds: int) -> None:
        try:
            with engine.connect() as conn:
                start.wait()
                for _ in range(rounds):
                    with conn.begin():   # required on one parcel, then credit on the other
                        for parcel, measure, kind in ((order[0], "required", "debit"),
                                                      (order[1], "credit", "credit")):
                            conn.execute(sa.text(
                                "INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, "
                                "parcel_id, measure, entry_kind, acres, acres_published, "
                                "reason, inputs) VALUES (0, :pa, :p, :x, :m, :k, "
                                "0.0001, 0.0001, 'race', '{}')"),
                                {"pa": s.PLAN, "p": ids["24-001"], "x": parcel, "m": measure,
                                 "k": kind})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=post, args=(parcels, 30)),
               threading.Thread(target=post, args=(parcels[::-1], 20))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:
        after = plan_total(conn)
        assert after["credit"] - before["credit"] == Decimal("0.0050")   # 50 x 0.0001
        assert after["required"] - before["required"] == Decimal("0.0050")
        assert after["entries"] - before["entries"] == 100
        # the first parcel ends 30 required against 20 credit: one more parcel in deficit
        assert after["parcels_in_deficit"] - before["parcels_in_deficit"] == 1
        assert drift(conn) == []   # sums and the deficit counts the parcels moved through
        views_match_entries(conn)


def test_drift_is_reported_and_a_full_recompute_rebuilds_the_totals(site) -> None:
    engine, url, _ = site
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ledger.plan_total SET required = required + 1"))
        assert drift(conn) == [("plan", s.PLAN, None, "required",
                                plan_total(conn)["required"],
                                plan_total(conn)["required"] - 1)]
    ledger.recompute(url, all=True)
    with engine.connect() as conn:
        assert drift(conn) == []
        views_match_entries(conn)


def test_the_nightly_guard_counts_every_figure_totals_drift_lists(site) -> None:
    """ops.totals_drift_count (sql/288) compares the parcel and permit levels a key at a
    time; its count is the number of rows ledger.totals_drift() lists, at every level and
    for every way a total can be wrong: a figure changed, several figures of one key, a
    total row gone, a total row the entries have none for (a zero one is no difference)."""
    engine, _, _ = site
    with engine.connect() as conn:
        trans = conn.begin()  # undone: the module's ledger stays as posted
        parcel, permit = conn.execute(sa.text(
            "SELECT (SELECT min(parcel_id) FROM ledger.parcel_total), "
            "(SELECT min(permit_id) FROM ledger.permit_total)")).one()
        conn.execute(sa.text(
            "UPDATE ledger.parcel_total SET impact = impact + 1, entries = entries + 1, "
            "credit_hosted = credit_hosted + 0.5 WHERE parcel_id = :p"), {"p": parcel})
        conn.execute(sa.text("DELETE FROM ledger.permit_total WHERE permit_id = :p"),
                     {"p": permit})
        conn.execute(sa.text(
            "INSERT INTO ledger.parcel_total (parcel_id, plan_area_id, impact) "
            "VALUES (999998, :a, 0.25), (999999, :a, 0)"), {"a": s.PLAN})
        conn.execute(sa.text("UPDATE ledger.plan_total SET required = required + 2"))
        rows = drift(conn)
        counted, plan_only = conn.execute(sa.text(
            "SELECT ops.totals_drift_count(), ops.totals_drift_count(true)")).one()
        trans.rollback()
    levels = {r[0] for r in rows}
    assert levels == {"plan", "permit", "parcel"} and len(rows) >= 6
    assert counted == len(rows)
    assert plan_only == sum(1 for r in rows if r[0] == "plan")


@pytest.mark.slow
def test_demo_totals_with_workers_change_and_restore(admin_url: URL,
                                                     demo_template: DemoTemplate,
                                                     empty_db_url: str, tmp_path) -> None:
    """The demo recomputed by two workers gives its plan figures (required 10.2153, credit
    20.8803, surplus 10.6650) from the totals; a watch-style change keeps them exact; a backup
    restored elsewhere holds the same totals, not counted twice."""
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url, all=True, workers=2, chunk=5)
        with engine.connect() as conn:
            plan = s.plan_row(conn)
            assert (plan["required_acres"], plan["credit_acres"], plan["balance_acres"],
                    plan["status"]) == (Decimal("10.2153"), Decimal("20.8803"),
                                        Decimal("10.6650"), "surplus")
            assert drift(conn) == []
            views_match_entries(conn)
        with engine.begin() as conn:   # a replacement set back to proposed: credit moves
            changed = conn.execute(sa.text(
                "UPDATE core.replacement SET status = 'proposed' WHERE replacement_id = ("
                "SELECT min(replacement_id) FROM core.replacement WHERE valid_to IS NULL "
                "AND status = 'certified' AND permit_id IS NOT NULL)")).rowcount
            assert changed == 1
        with engine.connect() as conn, conn.begin():
            assert ledger.recompute(conn).reversals > 0
        with engine.connect() as conn:
            assert drift(conn) == []
            views_match_entries(conn)
            before = [tuple(r) for r in conn.execute(sa.text(
                "SELECT * FROM ledger.plan_total"))]
        path = backup.backup(url, tmp_path / "totals.dump")
    backup.restore(empty_db_url, path)
    restored = db.engine(empty_db_url)
    try:
        with restored.connect() as conn:
            assert [tuple(r) for r in conn.execute(sa.text(
                "SELECT * FROM ledger.plan_total"))] == before
            assert drift(conn) == []
    finally:
        restored.dispose()
