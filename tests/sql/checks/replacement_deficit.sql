-- The 7(b) replacement_deficit check (sql/270) as staff read it after a check run:
-- pub.finding and pub.permit_compliance (docs/checks.md). It judges the posted ledger's
-- published figures: an approved permit short of counted credit is an error, a warning when
-- pending (proposed or constructed) credit would cover the shortfall; the plan area as a
-- whole is judged too (a finding with no permit).
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. Parcel A-1 (0,0)-(300,600); delineation
-- D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100).
--   23-001 fill (0,0)-(100,100): 10,000 m2 = 2.4711 required; certified (0,200)-(100,250):
--          5,000 m2 = 1.2355 counted -> short 1.2356, nothing pending: error
--   23-002 fill (100,0)-(150,50): 2,500 m2 = 0.6178 required; proposed (100,300)-(150,350):
--          2,500 m2 = 0.6178 pending -> short 0.6178, covered by pending: warning
--   23-003 fill (150,0)-(200,50): 0.6178 required; certified (200,300)-(250,350): 0.6178
--          counted -> short 0: passes, no finding
--   plan:  required 2.4711 + 0.6178 + 0.6178 = 3.7067, counted 1.2355 + 0.6178 = 1.8533,
--          short 1.8534, pending 0.6178 -> error

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation WHERE delineation_no = 'D-1';
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 300, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}'),
       (1, '23-002', 'approved', '2023-05-01', '{A1}'),
       (1, '23-003', 'approved', '2023-06-01', '{A1}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', 'fill-' || p.permit_no, ST_Multi(f.geom)
FROM core.permit p
JOIN (VALUES ('23-001', ST_MakeEnvelope(0, 0, 100, 100, 26915)),
             ('23-002', ST_MakeEnvelope(100, 0, 150, 50, 26915)),
             ('23-003', ST_MakeEnvelope(150, 0, 200, 50, 26915))) AS f (no, geom)
  ON f.no = p.permit_no;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, p.permit_id, 'wetland', r.status, r.status_on, 'basin-' || p.permit_no,
       ST_Multi(r.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'certified', DATE '2023-09-15', ST_MakeEnvelope(0, 200, 100, 250, 26915)),
             ('23-002', 'proposed', DATE '2023-06-01', ST_MakeEnvelope(100, 300, 150, 350, 26915)),
             ('23-003', 'certified', DATE '2023-10-01', ST_MakeEnvelope(200, 300, 250, 350, 26915)))
  AS r (no, status, status_on, geom)
  ON r.no = p.permit_no;

-- recompute, then the checks, as the nightly does (the checks read the posted ledger)
SELECT ledger.start_run('queue') AS run \gset
SELECT ledger.enqueue_dated(:run) >= 0 AS dated_queued;
SELECT ledger.drain_all(:run) > 0 AS drained;
SELECT status, owners, entries, reversals FROM ledger.finish_run(:run);
SET ROLE rulem_etl;
SELECT checks.run_checks(1) IS NOT NULL AS checked;

SET ROLE rulem_staff;

SELECT permit_no, severity, measured_value, limit_value, unit, message
FROM pub.finding
WHERE check_code = 'replacement_deficit'
ORDER BY permit_no NULLS LAST;

SELECT permit_no, paragraph, outcome, measured_value, limit_value, evaluated_count,
       finding_count
FROM pub.permit_compliance
WHERE check_code = 'replacement_deficit'
ORDER BY permit_no;

RESET ROLE;
