-- The submittal checklist (sql/220; docs/checks.md): 3(e) delineation_approved
-- (checks.check_delineation: parcel acres outside the study areas of delineations approved on
-- or before the baseline date and reviewed by the TEP; fails too when no parcel of the permit
-- is in the parcel layer), 3(e) type_determination and functional_assessment
-- (checks.check_wetland_records: wetlands of the baseline layer on the parcels without a
-- Circular 39 type, without a functional assessment), 3(f) ditch_determination
-- (checks.check_ditch_determination: 1 when no on-site determination is on record, plus each
-- ditch crossing the parcels without a determination date) and 6(d) vegetation_plan
-- (checks.check_vegetation_plan: a permit with a buffer has an approved vegetation plan).
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcels P1 (0,0)-(100,100), P2 (100,0)-(200,100), P3 (200,0)-(300,100). Delineations: D-1
-- over (0,0)-(150,100) approved 2020-01-01, TEP-reviewed 2019-12-01; D-2 over
-- (150,0)-(300,100) approved 2024-01-01, TEP-reviewed; D-3 over (200,0)-(300,100) approved
-- 2020-01-01 with no TEP review. Wetlands of D-1: W1 (10,10)-(30,30) type 3, assessed;
-- W2 (50,50)-(70,70) no type, not assessed; W3 (110,10)-(120,20) type 3, assessed. Permits
-- approved 2023-04-03 (their baseline date). Worked by hand:
--   23-001 on P1, ditch determination 2023-01-01, a ditch (10,50)-(90,50) with no
--          determination date, buffer (0,90)-(100,100), no vegetation plan:
--          delineation 0 acres outside -> passes; types: W2 -> 1 fails; assessments: W2 -> 1
--          fails; ditches: the undetermined one -> 1 fails; vegetation plan missing -> 1 fails
--   23-002 on P2, no ditch determination, buffer (100,90)-(200,100), plan approved
--          2023-03-01: (150,0)-(200,100) only in D-2, approved after the baseline: 5,000 m2 =
--          1.2355 acres fails; W3 typed and assessed -> 0, 0 pass; no determination -> 1
--          fails; plan -> 0 passes
--   23-003 on P3, ditch determination 2023-01-01: D-3 never reviewed by the TEP, D-2 too
--          late: 10,000 m2 = 2.4711 acres fails; no wetland on P3: no record checks; no ditch
--          and a determination -> 0 passes; no buffer: no plan needed
--   23-004 naming P9, a PIN the parcel layer does not hold: delineation fails (no parcel),
--          no determination -> 1 fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
SELECT 1, 'P-' || n, 'P' || n, ST_Multi(ST_MakeEnvelope(100 * (n - 1), 0, 100 * n, 100, 26915))
FROM generate_series(1, 3) AS n;
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on,
                              tep_reviewed_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', '2019-12-01',
        ST_Multi(ST_MakeEnvelope(0, 0, 150, 100, 26915))),
       (1, 'D-2', 'approved', '2024-01-01', '2023-12-01',
        ST_Multi(ST_MakeEnvelope(150, 0, 300, 100, 26915))),
       (1, 'D-3', 'approved', '2020-01-01', NULL,
        ST_Multi(ST_MakeEnvelope(200, 0, 300, 100, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, circular39_type, source_fid, geom)
SELECT 1, d.delineation_id, w.type, w.fid, ST_Multi(w.geom)
FROM core.delineation d
CROSS JOIN (VALUES ('W1', '3', ST_MakeEnvelope(10, 10, 30, 30, 26915)),
                   ('W2', NULL, ST_MakeEnvelope(50, 50, 70, 70, 26915)),
                   ('W3', '3', ST_MakeEnvelope(110, 10, 120, 20, 26915))) AS w (fid, type, geom)
WHERE d.delineation_no = 'D-1';
INSERT INTO core.functional_assessment (plan_area_id, wetland_id, method, assessed_on,
                                        source_fid)
SELECT 1, w.wetland_id, 'MnRAM 3.4', DATE '2019-10-01', 'FA-' || w.source_fid
FROM core.wetland w WHERE w.source_fid IN ('W1', 'W3');
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins,
                         ditch_determined_on, vegetation_plan_on)
VALUES (1, '23-001', 'approved', '2023-04-03', '{P1}', '2023-01-01', NULL),
       (1, '23-002', 'approved', '2023-04-03', '{P2}', NULL, '2023-03-01'),
       (1, '23-003', 'approved', '2023-04-03', '{P3}', '2023-01-01', NULL),
       (1, '23-004', 'approved', '2023-04-03', '{P9}', NULL, NULL);
INSERT INTO core.ditch (plan_area_id, status, source_fid, geom)
VALUES (1, 'active', 'DT1',
        ST_Multi(ST_SetSRID(ST_MakeLine(ST_MakePoint(10, 50), ST_MakePoint(90, 50)), 26915)));
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, p.permit_id, 'B-' || p.permit_no, ST_Multi(b.geom)
FROM core.permit p
JOIN (VALUES ('23-001', ST_MakeEnvelope(0, 90, 100, 100, 26915)),
             ('23-002', ST_MakeEnvelope(100, 90, 200, 100, 26915))) AS b (no, geom)
  ON b.no = p.permit_no;

-- every evaluation of the four checks, by permit and check
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM (SELECT * FROM checks.check_delineation(1)
      UNION ALL
      SELECT * FROM checks.check_wetland_records(1)
      UNION ALL
      SELECT * FROM checks.check_ditch_determination(1)
      UNION ALL
      SELECT * FROM checks.check_vegetation_plan(1)) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph, e.check_code;
