-- The 7(b) impact_charged_earlier check (sql/270, checks.check_impact_charged_earlier; the
-- charge of sql/110, docs/ledger.md section 1): every acre of wetland lost is charged once,
-- to the permit decided first; a permit whose disturbance meets wetland a permit decided
-- earlier was charged already is not charged again, and says so (a warning with the acres).
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcel A-1 (0,0)-(600,600); delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01,
-- wetland W1 (0,0)-(200,100). Worked by hand:
--   23-001 decided 2023-01-10, fill (0,0)-(50,100): charged 5,000 m2, nothing before it ->
--          passes
--   23-002 decided 2023-04-03, fill (25,0)-(75,100): (25,0)-(50,100) = 2,500 m2 = 0.6178
--          acres were charged to 23-001 -> a warning; the rest is its own
--   23-003 decided 2023-05-01, a road (150,0)-(160,10) that meets no other permit's ground ->
--          passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-01-10', '{A1}'),
       (1, '23-002', 'approved', '2023-04-03', '{A1}'),
       (1, '23-003', 'approved', '2023-05-01', '{A1}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', i.fid, ST_Multi(i.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'I1', ST_MakeEnvelope(0, 0, 50, 100, 26915)),
             ('23-002', 'I2', ST_MakeEnvelope(25, 0, 75, 100, 26915))) AS i (no, fid, geom)
  ON i.no = p.permit_no;
INSERT INTO core.structure (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'road', 'S3', ST_Multi(ST_MakeEnvelope(150, 0, 160, 10, 26915))
FROM core.permit WHERE permit_no = '23-003';

-- every evaluation, by permit, with the area charged before
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_impact_charged_earlier(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no;
