-- The 7(b) impact_not_drawn check (sql/270, checks.check_impact_drawn; docs/checks.md): a
-- structure, stormwater BMP or grading of a permit in CWMP wetland is impact whether drawn or
-- not (the ledger counts it: sql/110, ledger.disturbance); the check asks for the impact
-- polygon where none of the permit's covers it. One evaluation per such feature that meets at
-- least area_tolerance_m2 (1 m2) of wetland; features outside wetland are not evaluated.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. Parcel A-1 (0,0)-(300,600); delineation
-- D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100); permit 23-001
-- approved 2023-04-03 on A-1, with fill impacts (0,0)-(30,20) and (150,0)-(160,10). Worked by
-- hand:
--   utility structure (0,0)-(50,20): 1,000 m2 in W1, (0,0)-(30,20) drawn; the rest,
--     (30,0)-(50,20) = 400 m2 = 0.0988 acres, is not -> fails, counted as fill
--   grading (100,0)-(120,50): 1,000 m2 in W1, none drawn = 0.2471 acres -> fails
--   road structure (150,0)-(160,10): 100 m2 in W1, all drawn -> passes
--   other structure (250,200)-(260,210): outside W1 -> not evaluated

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
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', i.fid, ST_Multi(i.geom)
FROM core.permit p
CROSS JOIN (VALUES ('I1', ST_MakeEnvelope(0, 0, 30, 20, 26915)),
                   ('I2', ST_MakeEnvelope(150, 0, 160, 10, 26915))) AS i (fid, geom);
INSERT INTO core.structure (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, s.kind, s.fid, ST_Multi(s.geom)
FROM core.permit p
CROSS JOIN (VALUES ('S1', 'utility', ST_MakeEnvelope(0, 0, 50, 20, 26915)),
                   ('S2', 'road', ST_MakeEnvelope(150, 0, 160, 10, 26915)),
                   ('S3', 'other', ST_MakeEnvelope(250, 200, 260, 210, 26915))) AS s (fid, kind, geom);
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, permit_id, false, 'G1', ST_Multi(ST_MakeEnvelope(100, 0, 120, 50, 26915))
FROM core.permit;

-- every evaluation, by feature, with the area of the undrawn part a failure points at
SELECT f.feature_key AS feature, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_impact_drawn(1) e
JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key;
