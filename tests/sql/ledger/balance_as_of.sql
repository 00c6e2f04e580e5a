-- pub.parcel_balance_as_of, pub.permit_balance_as_of and pub.plan_balance_as_of, called as
-- rulem_staff calls them (docs/ledger.md sections 4 and 4a): "as of" a date goes by the date
-- each fact took effect, "as recorded at" by when the book posted it.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2.
--   delineation D-1 over (0,0)-(1000,1000), approved 2020-01-01; wetland W1 (0,0)-(200,100)
--   parcels A-1 (0,0)-(300,600) and B-1 (300,0)-(600,600)
--   permit 23-001, decided 2023-04-03:
--     fill (50,0)-(150,100): 10,000 m2, all in W1, all on A-1   -> impact = required 2.4711
--     certified replacement (400,200)-(500,250) on B-1, no wetland there, certified
--     2023-09-15: 5,000 m2                                       -> credit 1.2355
-- The permit has an impact, so its credit is allocated where the impact is (A-1); B-1 hosts
-- it (credit_hosted, a memo). Published figures are 4 decimals and a row's balance is its
-- published credit minus its published required: 1.2355 - 2.4711 = -1.2356 (the exact
-- balance, -1.23552690..., would round to -1.2355).
-- Expected by date: 2023-04-02 (before the decision) nothing; 2023-06-30 required only,
-- -2.4711; 2023-12-31 credit too, -1.2356. Recorded at 2000-01-01 (before any posting): nothing.

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation WHERE delineation_no = 'D-1';
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 300, 600, 26915))),
       (1, 'B-1', 'B1', ST_Multi(ST_MakeEnvelope(300, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on)
VALUES (1, '23-001', 'approved', '2023-04-03');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'fill-1', ST_Multi(ST_MakeEnvelope(50, 0, 150, 100, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, permit_id, 'wetland', 'certified', '2023-09-15', 'basin-1',
       ST_Multi(ST_MakeEnvelope(400, 200, 500, 250, 26915))
FROM core.permit WHERE permit_no = '23-001';

-- recompute on this session, as `rulem-db recompute` does on one connection: one owner,
-- four lines (impact and required on A-1, credit on A-1, credit_hosted on B-1)
SELECT ledger.start_run('queue') AS run \gset
SELECT ledger.enqueue_dated(:run) >= 0 AS dated_queued;
SELECT ledger.drain_all(:run) > 0 AS drained;
SELECT status, owners, entries, reversals FROM ledger.finish_run(:run);

SET ROLE rulem_staff;

SELECT d AS as_of, b.pin, b.impact_acres, b.required_acres, b.credit_acres,
       b.credit_hosted_acres, b.balance_acres, b.status
FROM unnest('{2023-04-02,2023-06-30,2023-12-31}'::date[]) AS d,
     pub.parcel_balance_as_of(d) AS b
ORDER BY d, b.pin;

SELECT permit_no, permit_status, baseline_on, impact_acres, required_acres, credit_acres,
       transfer_in_acres, transfer_out_acres, balance_acres, status
FROM pub.permit_balance_as_of('2023-12-31');

SELECT d AS as_of, b.code, b.required_acres, b.credit_acres, b.credit_hosted_acres,
       b.unallocated_balance_acres, b.balance_acres, b.status, b.parcels_in_deficit,
       b.permits_in_deficit
FROM unnest('{2023-04-02,2023-06-30,2023-12-31}'::date[]) AS d,
     pub.plan_balance_as_of(d) AS b
ORDER BY d;

-- as recorded at a moment before anything was posted: the book was empty
SELECT required_acres, credit_acres, balance_acres, status
FROM pub.plan_balance_as_of('2023-12-31', '2000-01-01 00:00-06');

-- today, as recorded now: the same as the end of 2023 (nothing has happened since)
SELECT (SELECT balance_acres FROM pub.plan_balance_as_of(current_date))
       = (SELECT balance_acres FROM pub.plan_balance) AS today_is_the_plain_view;

RESET ROLE;
