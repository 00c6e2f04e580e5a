"""The ledger's machinery: change queue and incremental recompute, concurrent recomputes,
append-only entries, tracing a figure to its input versions, parameters by effective date,
District projects, parcel changes, ground on no parcel, and the local baseline wetland.

Layout as in test_ledger.py: parcels A-1 (0,0)-(300,600), B-1 (300,0)-(600,600), C-1
(600,0)-(900,600); delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01.
"""

from __future__ import annotations

import re
import threading
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_db import ledger

A, B, C = (0, 0, 300, 600), (300, 0, 600, 600), (600, 0, 900, 600)


def layout(conn: sa.Connection, wetlands: dict[str, s.Rect]) -> dict[str, int]:
    ids = s.base_site(conn, wetlands)
    for pin, r in (("A-1", A), ("B-1", B), ("C-1", C)):
        ids[pin] = s.parcel(conn, pin, r)
    return ids


def three_permits(conn: sa.Connection) -> dict[str, int]:
    """One permit per parcel, each filling 10,000 m^2 of its own wetland and replacing it on
    C-1's north half."""
    ids = layout(conn, {"W1": (50, 0, 150, 100), "W2": (350, 0, 450, 100),
                        "W3": (650, 0, 750, 100)})
    for i, (x, rx) in enumerate(((50, 300), (350, 500), (650, 700)), start=1):
        p = s.permit(conn, f"24-00{i}")
        ids[f"24-00{i}"] = p
        s.impact(conn, p, "fill", (x, 0, x + 100, 100), f"fill-{i}")
        s.replacement(conn, p, (rx + 300, 400, rx + 400, 500), f"basin-{i}")
    return ids


def test_inputs_queue_their_owners_with_a_reason(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        ids = three_permits(conn)
        waiting = conn.execute(sa.text(
            "SELECT DISTINCT permit_id FROM ledger.change_queue WHERE processed_at IS NULL"
        )).scalars().all()
        assert sorted(waiting) == sorted(ids[k] for k in ("24-001", "24-002", "24-003"))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ledger.change_queue SET processed_at = now()"))
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((350, 0, 400, 100))} "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": ids["W2"]})
        rows = conn.execute(sa.text(
            "SELECT permit_id, reason FROM ledger.change_queue WHERE processed_at IS NULL"
        )).all()
        old, new = conn.execute(sa.text(
            "SELECT min(version_id), max(version_id) FROM core.wetland WHERE wetland_id = :w"),
            {"w": ids["W2"]}).one()
    assert [(r.permit_id, r.reason) for r in rows] == [
        (ids["24-002"], f"wetland W2 changed (version {old} -> {new})")]


def test_one_changed_wetland_posts_only_for_the_parcels_it_touches(engine: sa.Engine,
                                                                   db_url: str) -> None:
    with engine.begin() as conn:
        ids = three_permits(conn)
    first = ledger.recompute(db_url)
    assert first.owners == 3
    with engine.begin() as conn:           # W2 (on B-1) loses its east half
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((350, 0, 400, 100))} "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": ids["W2"]})
    posted = ledger.recompute(db_url, with_posted=True)
    assert (posted.owners, posted.reversals) == (1, 2)           # impact and required
    assert {(r["owner"], r["pin"], r["measure"]) for r in posted.posted} == {
        ("24-002", "B-1", "impact"), ("24-002", "B-1", "required")}
    with engine.connect() as conn:
        pins = conn.execute(sa.text(
            "SELECT DISTINCT pin FROM pub.ledger_entry WHERE run_id = :r"),
            {"r": posted.run_id}).scalars().all()
        assert pins == ["B-1"]
        b1 = s.parcel_rows(conn)["B-1"]
        # 5,000 m^2 of W2 left under the fill; its 10,000 m^2 basin (2.4711 ac) stays
        # counted: 2.4711 - 1.2355 = 1.2356 as published
        assert (b1["required_acres"], b1["credit_acres"], b1["balance_acres"]) == (
            Decimal("1.2355"), Decimal("2.4711"), Decimal("1.2356"))


def test_two_concurrent_recomputes_do_not_double_post(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        three_permits(conn)
        for i in range(4, 13):             # nine more permits on C-1, 10 x 10 m fills of W3
            p = s.permit(conn, f"24-0{i:02d}")
            s.impact(conn, p, "fill", (650 + 10 * (i - 4), 0, 660 + 10 * (i - 4), 10), f"f{i}")
    start = threading.Barrier(2)
    results: list[ledger.RecomputeSummary] = []

    def run() -> None:
        start.wait()
        results.append(ledger.recompute(db_url, all=True, workers=1, chunk=1))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2
    assert sum(r.reversals for r in results) == 0
    with engine.connect() as conn:
        lines = conn.execute(sa.text(
            "SELECT count(*) FROM (SELECT DISTINCT permit_id, district_project, parcel_id, "
            "measure FROM ledger.entry) x")).scalar_one()
        entries = conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar_one()
        desired = conn.execute(sa.text(
            "SELECT count(*) FROM ledger.desired_state(1, ARRAY(SELECT permit_id "
            "FROM core.permit WHERE valid_to IS NULL))")).scalar_one()
        # both runs took part: the queue held every owner twice
        processed = conn.execute(sa.text(
            "SELECT count(DISTINCT processed_run_id) FROM ledger.change_queue")).scalar_one()
    assert entries == lines == desired == sum(r.entries for r in results)
    assert processed == 2


def test_entries_are_append_only(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        three_permits(conn)
    ledger.recompute(db_url)
    for sql in ("UPDATE ledger.entry SET acres = 0", "DELETE FROM ledger.entry",
                "TRUNCATE ledger.entry CASCADE"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), engine.begin() as conn:
            conn.execute(sa.text(sql))
    for sql in ("UPDATE ledger.entry SET acres = 0", "DELETE FROM ledger.entry"):
        with pytest.raises(sa.exc.DBAPIError, match="permission denied|append-only"), \
                engine.begin() as conn:
            conn.execute(sa.text("SET ROLE rulem_etl"))
            conn.execute(sa.text(sql))


def test_a_figure_traces_to_its_entries_and_input_versions(engine: sa.Engine,
                                                           db_url: str) -> None:
    with engine.begin() as conn:
        ids = layout(conn, {"W1": (50, 0, 150, 100)})
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 100, 100), "fill-1")         # 5,000 m^2 of W1
    ledger.recompute(db_url)
    with engine.begin() as conn:           # the fill grows over the rest of W1: 10,000 m^2
        conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect((50, 0, 150, 100))} "
                             "WHERE permit_id = :p AND valid_to IS NULL"), {"p": p})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT entry_id, run_id, pin, acres, reverses_entry_id, reversed_by_entry_id, "
            "reason, inputs FROM pub.ledger_entry "
            "WHERE permit_no = '24-001' AND measure = 'required' ORDER BY entry_id"
        )).mappings().all()
        impact_versions = conn.execute(sa.text(
            "SELECT version_id FROM core.impact WHERE permit_id = :p ORDER BY version_id"),
            {"p": p}).scalars().all()
        wetland_version, delineation_version, parcel_version = conn.execute(sa.text(
            "SELECT (SELECT version_id FROM core.wetland WHERE wetland_id = :w), "
            "(SELECT version_id FROM core.delineation WHERE delineation_no = 'D-1'), "
            "(SELECT version_id FROM core.parcel WHERE parcel_id = :a)"),
            {"w": ids["W1"], "a": ids["A-1"]}).one()
        parameter_ids = conn.execute(sa.text(
            "SELECT array_agg(parameter_id ORDER BY parameter_id) FROM core.parameter "
            "WHERE plan_area_id = 1 AND name IN ('partial_drain_factor', 'replacement_ratio', "
            "'counted_credit_status', 'heritage_threshold')")).scalar_one()
    first, reversal, second = rows
    assert (first["acres"], reversal["acres"], second["acres"]) == (
        Decimal("1.2355"), Decimal("-1.2355"), Decimal("2.4711"))
    assert reversal["reverses_entry_id"] == first["entry_id"]
    assert first["reversed_by_entry_id"] == reversal["entry_id"]
    assert second["reversed_by_entry_id"] is None
    assert reversal["run_id"] == second["run_id"] != first["run_id"]
    assert second["reason"] == reversal["reason"] == (
        f"impact fill-1 changed (version {impact_versions[0]} -> {impact_versions[1]})")
    assert first["reason"].startswith(f"impact fill-1 added (version {impact_versions[0]})")
    assert first["inputs"]["impact"] == [impact_versions[0]]
    assert second["inputs"]["impact"] == [impact_versions[1]]
    for entry in (first, second):
        assert entry["inputs"]["wetland"] == [wetland_version]
        assert entry["inputs"]["delineation"] == [delineation_version]
        assert entry["inputs"]["parcel"] == parcel_version
        assert entry["inputs"]["parameter"] == parameter_ids
        assert entry["inputs"]["baseline_on"] == "2024-04-01"
        assert entry["pin"] == "A-1"


def test_a_parameter_change_never_rewrites_a_decided_permit(engine: sa.Engine,
                                                            db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn, {"W1": (50, 0, 150, 100), "W2": (350, 0, 450, 100)})
        decided = s.permit(conn, "24-001", decided_on="2024-04-01")
        s.impact(conn, decided, "drain_partial", (50, 0, 150, 100), "drain-1")
        pending = s.permit(conn, "25-001", decided_on=None, status="applied")
        s.impact(conn, pending, "drain_partial", (350, 0, 450, 100), "drain-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        before = {k: r["impact_acres"] for k, r in s.permit_rows(conn).items()}
        t1 = s.clock(conn)
    assert before == {"24-001": Decimal("1.2355"), "25-001": Decimal("1.2355")}  # 10,000 x 0.5
    with engine.begin() as conn:           # the CWMP's scope-and-effect factor arrives
        conn.execute(sa.text(
            "INSERT INTO core.parameter (plan_area_id, name, value_num, unit, rule_ref, "
            "effective_on) VALUES (1, 'partial_drain_factor', 0.75, 'ratio', '7(c)(vi)', "
            "'2025-01-01')"))
    posted = ledger.recompute(db_url)
    assert posted.owners == 2
    with engine.connect() as conn:
        after = {k: r["impact_acres"] for k, r in s.permit_rows(conn).items()}
        # decided 2024-04-01: 0.5 stays; pending (today): 10,000 m^2 x 0.75 = 7,500 m^2
        assert after == {"24-001": Decimal("1.2355"), "25-001": Decimal("1.8533")}
        assert {k: r["impact_acres"] for k, r in s.permit_rows(conn, at=t1).items()} == before


def test_district_project_credit_counts_on_its_parcels_and_plan_wide(engine: sa.Engine,
                                                                    db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn, {"W1": (50, 0, 150, 100)})
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")           # 2.4711 ac owed
        s.replacement(conn, None, (650, 400, 850, 500), "R-1",           # 20,000 m^2 on C-1
                      district_project="RCWD restoration", status_on="2023-05-01")
    posted = ledger.recompute(db_url)
    assert posted.owners == 2
    with engine.connect() as conn:
        plan = s.plan_row(conn)
        assert (plan["required_acres"], plan["credit_acres"],
                plan["district_project_credit_acres"], plan["balance_acres"]) == (
            Decimal("2.4711"), Decimal("4.9421"), Decimal("4.9421"),
            Decimal("2.4710"))  # 4.9421 - 2.4711, as published
        parcels = s.parcel_rows(conn)
        assert (parcels["A-1"]["status"], parcels["C-1"]["balance_acres"]) == (
            "deficit", Decimal("4.9421"))
        assert "24-001" in s.permit_rows(conn)          # permits only in permit_balance
        owners = conn.execute(sa.text(
            "SELECT DISTINCT district_project FROM pub.ledger_entry "
            "WHERE permit_id IS NULL")).scalars().all()
        assert owners == ["RCWD restoration"]
        assert s.exact_identity(conn)[0] == s.exact_identity(conn)[1]
    assert ledger.recompute(db_url, all=True).entries == 0


def test_a_split_parcel_takes_over_the_entries(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        ids = layout(conn, {"W1": (50, 0, 150, 100)})
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        t1 = s.clock(conn)
    with engine.begin() as conn:           # A-1 split in two lots: the fill is on the west one
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() WHERE parcel_id = :a"),
                     {"a": ids["A-1"]})
        s.parcel(conn, "A-2", (0, 0, 100, 600))
        s.parcel(conn, "A-3", (100, 0, 300, 600))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        now = {k: (r["required_acres"], r["status"]) for k, r in s.parcel_rows(conn).items()}
        # 50 x 100 m on A-2, 50 x 100 m on A-3: 5,000 m^2 = 1.23553 ac each; the permit's
        # 2.4711 splits by largest remainder (equal: the higher parcel id takes the 0.0001)
        assert now == {"A-2": (Decimal("1.2355"), "deficit"),
                       "A-3": (Decimal("1.2356"), "deficit"),
                       "B-1": (Decimal("0.0000"), "none"), "C-1": (Decimal("0.0000"), "none")}
        then = s.parcel_rows(conn, at=t1)
        assert then["A-1"]["required_acres"] == Decimal("2.4711") and "A-2" not in then
        parcels_sum, plan = s.exact_identity(conn)
        assert parcels_sum == plan


def test_impact_on_no_parcel_is_unallocated_or_falls_on_the_permits_pins(
        engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:           # a right of way east of C-1 with no parcel
        layout(conn, {"W9": (920, 0, 980, 100)})
        road = s.permit(conn, "24-001")
        s.impact(conn, road, "fill", (920, 0, 950, 100), "road")        # 3,000 m^2
        named = s.permit(conn, "24-002", pins=["C-1"])
        s.impact(conn, named, "fill", (950, 0, 980, 100), "culvert")    # 3,000 m^2
    ledger.recompute(db_url)
    with engine.connect() as conn:
        plan = s.plan_row(conn)
        assert (plan["required_acres"], plan["unallocated_balance_acres"],
                plan["balance_acres"]) == (Decimal("1.4826"), Decimal("-0.7413"),
                                           Decimal("-1.4826"))
        assert s.parcel_rows(conn)["C-1"]["required_acres"] == Decimal("0.7413")
        parcels_sum, plan_exact = s.exact_identity(conn)
        assert parcels_sum == plan_exact


def test_baseline_wetland_returns_the_rows_of_core_wetland_layer(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        s.plan_boundary(conn)
        d1 = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        for key, r in {"W1": (0, 0, 200, 100), "W5": (500, 500, 700, 700),
                       "W8": (50, 50, 150, 400)}.items():
            s.wetland(conn, d1, key, r)
        d2 = s.delineation(conn, "D-2", (100, 0, 600, 600), "2022-01-01")
        s.wetland(conn, d2, "W6", (150, 50, 250, 150))
        s.wetland(conn, d2, "W7", (550, 550, 650, 650))       # reaches beyond its study area
        d3 = s.delineation(conn, "D-3", (0, 0, 1000, 1000), None, status="submitted")
        s.wetland(conn, d3, "W-submitted", (800, 800, 900, 900))
    with engine.connect() as conn:
        for on in ("2019-06-01", "2021-06-01", "2023-06-01"):
            for window in ((-10, -10, 2000, 2000), (0, 0, 120, 120)):
                # the pieces of each wetland union to its core.wetland_layer geometry
                rows = conn.execute(sa.text(
                    "SELECT r.wetland_id, r.version_id, r.delineation_id, "
                    "round(core.acres(ST_SymDifference(r.geom, l.geom)), 9) AS differ "
                    "FROM (SELECT wetland_id, version_id, delineation_id, ST_Union(geom) AS geom "
                    f"      FROM ledger.baseline_wetland(1, :on, {s.rect(window)}) "
                    "      GROUP BY 1, 2, 3) r "
                    "FULL JOIN (SELECT * FROM core.wetland_layer(1, :on) x "
                    f"           WHERE x.geom && {s.rect(window)}) l "
                    "  ON l.wetland_id = r.wetland_id ORDER BY 1"), {"on": on}).all()
                assert all(r.wetland_id is not None and r.differ == 0 for r in rows), (on, rows)
        counts = dict(conn.execute(sa.text(
            "SELECT d::text, (SELECT count(DISTINCT wetland_id) FROM ledger.baseline_wetland(1, "
            f"d::date, {s.rect((-10, -10, 2000, 2000))})) FROM unnest(ARRAY['2019-06-01', "
            "'2021-06-01', '2023-06-01']) d")).all())
    assert counts == {"2019-06-01": 0, "2021-06-01": 3, "2023-06-01": 5}


def test_stored_visible_areas_are_read_only_while_their_delineations_are_current(
        engine: sa.Engine, db_url: str) -> None:
    """ledger.visible_area holds each delineation's visible study area as of the latest
    approval (sql/100); the baseline reads it only while the approved delineations are the
    ones it was computed from. Tampering with a stored row shows when it is read."""
    with engine.begin() as conn:
        s.plan_boundary(conn)
        d1 = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d1, "W1", (0, 0, 200, 100))            # 20,000 m^2 = 4.9421 ac
        s.wetland(conn, d1, "W2", (500, 500, 700, 700))        # D-2 supersedes it
        d2 = s.delineation(conn, "D-2", (400, 400, 1000, 1000), "2022-01-01")
        s.wetland(conn, d2, "W3", (800, 800, 900, 900))        # 10,000 m^2 = 2.4711 ac

    def baseline(conn: sa.Connection, on: str) -> dict[str, float]:
        return {k: round(float(a), 4) for k, a in conn.execute(sa.text(
            "SELECT f.feature_key, sum(core.acres(b.geom)) FROM ledger.baseline_wetland(1, "
            f":on, {s.rect((-10, -10, 2000, 2000))}) b "
            "JOIN core.feature f ON f.feature_id = b.wetland_id GROUP BY 1"), {"on": on}).all()}

    now = {"W1": 4.9421, "W3": 2.4711}
    before = {"W1": 4.9421, "W2": 9.8842}
    with engine.begin() as conn:          # nothing stored yet: computed
        assert conn.execute(sa.text("SELECT count(*) FROM ledger.visible_epoch")).scalar() == 0
        assert baseline(conn, "2023-06-01") == now
        assert baseline(conn, "2021-06-01") == before
    ledger.recompute(db_url)              # a run stores them (ledger.start_run)
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT ledger.refresh_visible(1)")).scalar() is False
        epoch, n = conn.execute(sa.text(
            "SELECT epoch::text, cardinality(inputs) FROM ledger.visible_epoch")).one()
        assert (epoch, n) == ("2022-01-01", 2)
        assert baseline(conn, "2023-06-01") == now
        conn.execute(sa.text("UPDATE ledger.visible_area SET whole = false, area = NULL "
                             "WHERE delineation_id = :d"), {"d": d1})
        assert baseline(conn, "2023-06-01") == {"W3": 2.4711}     # read: W1 is gone
        assert baseline(conn, "2021-06-01") == before             # an earlier epoch: computed
        s.delineation(conn, "D-3", (0, 900, 100, 1000), None, status="submitted")
        assert baseline(conn, "2023-06-01") == {"W3": 2.4711}     # approved ones unchanged
        conn.execute(sa.text("UPDATE core.delineation SET status = 'approved', "
                             "approved_on = '2024-01-01' WHERE delineation_no = 'D-3' "
                             "AND valid_to IS NULL"))
        assert baseline(conn, "2023-06-01") == now                # stale: not read
        assert baseline(conn, "2025-01-01") == now
        assert conn.execute(sa.text("SELECT ledger.refresh_visible(1)")).scalar() is True
        assert conn.execute(sa.text(
            "SELECT epoch::text FROM ledger.visible_epoch")).scalar() == "2024-01-01"
        assert baseline(conn, "2025-01-01") == now
        assert baseline(conn, "2023-06-01") == now


def test_a_large_wetland_is_measured_in_pieces_with_the_same_acres(engine: sa.Engine,
                                                                  db_url: str) -> None:
    """A 1,024-vertex wetland (r = 200 m) is cut into pieces of at most 128 vertices; a fill
    across its edge measures what the whole polygon would give, and the pieces follow the
    wetland's versions."""
    with engine.begin() as conn:
        s.plan_boundary(conn)
        d = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        big = conn.execute(sa.text(
            "INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom) "
            "VALUES (1, :d, 'big', ST_Multi(ST_Buffer(ST_SetSRID(ST_MakePoint(500, 500), "
            "26915), 200, 256))) RETURNING wetland_id"), {"d": d}).scalar_one()
        s.parcel(conn, "A-1", (0, 0, 1000, 1000))
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (250, 450, 350, 550), "edge")       # across the west edge
        s.impact(conn, p, "fill", (450, 450, 550, 550), "inside")     # 10,000 m^2 inside
    ledger.recompute(db_url)
    with engine.connect() as conn:
        pieces, widest = conn.execute(sa.text(
            "SELECT count(*), max(ST_NPoints(geom)) FROM ledger.wetland_piece "
            "WHERE wetland_id = :w"), {"w": big}).one()
        whole = conn.execute(sa.text(
            "SELECT core.acres(ST_Intersection(w.geom, ST_Union(i.geom))) "
            "FROM core.wetland w, core.impact i WHERE w.wetland_id = :w GROUP BY w.geom"),
            {"w": big}).scalar_one()
        got = conn.execute(sa.text(
            "SELECT sum(acres) FROM ledger.entry WHERE measure = 'impact'")).scalar_one()
    assert pieces > 8 and widest <= 128
    assert abs(got - whole) < Decimal("1e-9") and got > Decimal("2.4711")
    with engine.begin() as conn:          # a new version: its own pieces, the old ones gone
        conn.execute(sa.text("UPDATE core.wetland SET geom = ST_Multi(ST_Buffer(geom, -10)) "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": big})
    with engine.connect() as conn:
        versions = conn.execute(sa.text(
            "SELECT array_agg(DISTINCT p.version_id) = array_agg(DISTINCT w.version_id) "
            "FROM ledger.wetland_piece p JOIN core.wetland w ON w.wetland_id = p.wetland_id "
            "AND w.valid_to IS NULL WHERE p.wetland_id = :w"), {"w": big}).scalar_one()
        assert versions
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.wetland SET valid_to = now() WHERE wetland_id = :w "
                             "AND valid_to IS NULL"), {"w": big})
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM ledger.wetland_piece WHERE wetland_id = :w"),
            {"w": big}).scalar_one() == 0
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert s.permit_rows(conn)["24-001"]["impact_acres"] == 0


def explained(engine: sa.Engine, sql: str, params: tuple = (), analyze: bool = False,
              work_mem: str | None = None) -> tuple[tuple, list[str]]:
    """The first row sql returns and the plan of every statement it ran, nested ones too
    (auto_explain, one plan each), in a transaction rolled back afterwards."""
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute("LOAD 'auto_explain'")
        if work_mem:
            cur.execute("SELECT set_config('work_mem', %s, false)", (work_mem,))
        cur.execute("SET auto_explain.log_min_duration = 0")
        cur.execute(f"SET auto_explain.log_analyze = {'on' if analyze else 'off'}")
        cur.execute("SET auto_explain.log_nested_statements = on")
        cur.execute("SET auto_explain.log_level = notice")
        cur.execute("SET client_min_messages = notice")
        del raw.notices[:]
        cur.execute(sql, params)
        row = cur.fetchone()
        notices = "".join(raw.notices)
        raw.rollback()
    finally:
        raw.close()
    return row, [p for p in notices.split("duration:") if p.strip()]


def test_queueing_everything_is_one_anti_join_however_long_the_queue(engine: sa.Engine,
                                                                      db_url: str) -> None:
    """`recompute --all` leaves out the owners already waiting. Written as NOT IN (subquery),
    PostgreSQL hashed the waiting rows only while they fitted in work_mem and otherwise
    scanned them once per owner: minutes on the state benchmark (133,151 waiting rows, 20,077
    owners). Here the queue outgrows a small work_mem and the plan must stay a hash anti-join,
    with no subplan rescanned per owner; the owners already waiting are not queued twice."""
    with engine.begin() as conn:
        three_permits(conn)
        conn.execute(sa.text(
            "INSERT INTO ledger.change_queue (plan_area_id, district_project, layer, reason) "
            "SELECT 1, 'waiting project ' || i, 'recompute', 'a long queue' "
            "FROM generate_series(1, 5000) i"))
    (queued,), plans = explained(engine, "SELECT ledger.enqueue_all(0)", work_mem="64kB")
    # the plan of the statement inside enqueue_all
    insert = next(p for p in plans if "Insert on change_queue" in p)
    assert "Anti Join" in insert, insert
    assert "SubPlan" not in insert, insert
    assert queued == 0   # the three permits wait already (their inputs queued them)


def test_posting_over_a_posted_ledger_scans_each_of_its_steps_once(engine: sa.Engine,
                                                                   db_url: str) -> None:
    """Posting pairs each desired line with its open entry. Joined back to both by id, the
    pairs were planned as nested loops over the steps' materialized rows (PostgreSQL expects
    a row or two from each), so every line was read once per pair: 2.6 s of a 3.3 s posting
    of 500 owners, and more than 10 minutes for a full recompute over the posted ledger at
    state size. The plan of the posting statement must read each step once."""
    with engine.begin() as conn:
        ids = three_permits(conn)
    ledger.recompute(db_url)
    permits = [ids[k] for k in ("24-001", "24-002", "24-003")]
    posted, plans = explained(engine, "SELECT * FROM ledger.post(0, 1, %s)", (permits,),
                              analyze=True)
    assert posted == (0, 0)   # nothing changed since the recompute
    post = next(p for p in plans if "Insert on entry" in p)
    assert re.search(r"CTE Scan on same .*actual time=\S+ rows=[1-9]", post), post  # paired
    rescanned = [line.strip() for line in post.splitlines()
                 if "CTE Scan" in line and re.search(r"loops=([2-9]|\d\d+)\)", line)]
    assert not rescanned, "\n".join(rescanned)
