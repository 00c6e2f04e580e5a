-- The 2(a) applicability check (sql/210, checks.check_applicability; docs/checks.md): a
-- permit on record counts the three 2(a) triggers it meets, (i) wetland impact the ledger
-- counts (at least area_tolerance_m2, 1 m2; measured as the ledger will post it while the
-- change waits in the queue, as here), (ii) more than impervious_trigger_sqft (10,000 ft2) of
-- proposed impervious surface, (iii) grading that alters runoff into a CWMP wetland; with none
-- the permit is not a Rule M permit (a warning).
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2, 1 ft2 = 0.09290304 m2. CWMP area
-- (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600); delineation D-1 over
-- (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100). Permits approved on A-1.
-- Worked by hand:
--   23-001 fill (0,0)-(50,20) in W1: 1,000 m2 = 0.2471 acres -> (i): 1 trigger, passes
--   23-002 proposed impervious (300,300)-(331,331): 961 m2 = 10,344 ft2 > 10,000 -> (ii): 1;
--          its existing impervious (350,300)-(450,400) is not new and counts for nothing
--   23-003 grading altering runoff (300,400)-(310,410) -> (iii): 1
--   23-004 proposed impervious (400,450)-(430.48,480.48): exactly 10,000 ft2, not more; grading
--          (450,450)-(460,460) that does not alter runoff -> 0 triggers: fails (warning)
--   23-005 fill (100,0)-(110,10) = 100 m2 = 0.0247 acres, proposed impervious
--          (500,300)-(540,340) = 1,600 m2 = 17,222 ft2, grading altering runoff
--          (500,400)-(510,410) -> 3 triggers

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation WHERE delineation_no = 'D-1';
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
SELECT 1, no, 'approved', DATE '2023-04-03', '{A1}'
FROM unnest('{23-001,23-002,23-003,23-004,23-005}'::text[]) AS no;
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', i.fid, ST_Multi(i.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'I1', ST_MakeEnvelope(0, 0, 50, 20, 26915)),
             ('23-005', 'I5', ST_MakeEnvelope(100, 0, 110, 10, 26915))) AS i (no, fid, geom)
  ON i.no = p.permit_no;
INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom)
SELECT 1, p.permit_id, i.condition, i.fid, ST_Multi(i.geom)
FROM core.permit p
JOIN (VALUES ('23-002', 'proposed', 'V2', ST_MakeEnvelope(300, 300, 331, 331, 26915)),
             ('23-002', 'existing', 'V2x', ST_MakeEnvelope(350, 300, 450, 400, 26915)),
             ('23-004', 'proposed', 'V4', ST_MakeEnvelope(400, 450, 430.48, 480.48, 26915)),
             ('23-005', 'proposed', 'V5', ST_MakeEnvelope(500, 300, 540, 340, 26915)))
  AS i (no, condition, fid, geom)
  ON i.no = p.permit_no;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, p.permit_id, g.alters, g.fid, ST_Multi(g.geom)
FROM core.permit p
JOIN (VALUES ('23-003', true, 'G3', ST_MakeEnvelope(300, 400, 310, 410, 26915)),
             ('23-004', false, 'G4', ST_MakeEnvelope(450, 450, 460, 460, 26915)),
             ('23-005', true, 'G5', ST_MakeEnvelope(500, 400, 510, 410, 26915)))
  AS g (no, alters, fid, geom)
  ON g.no = p.permit_no;

-- one evaluation per permit
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_applicability(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no;
