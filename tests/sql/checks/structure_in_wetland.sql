-- The 7(g) structure_in_wetland check (sql/265, checks.check_structures; docs/checks.md): a
-- road, utility or other structure placed in CWMP wetland needs a variance; structures for
-- passive recreation or education are not looked at. One evaluation per road, utility or other
-- structure of a permit, measured in acres of baseline CWMP wetland under it.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. Parcel A-1 (0,0)-(300,600); delineation
-- D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100); permit 23-001
-- approved 2023-04-03 on A-1. Worked by hand:
--   road    (0,0)-(50,20), no variance:     1,000 m2 in W1 = 0.2471 acres -> fails, limit 0
--   utility (50,0)-(60,100), variance V-12: 1,000 m2 in W1 = 0.2471 acres -> passes
--   other   (250,200)-(260,210):            outside W1, 0 acres -> passes
--   passive_recreation (100,0)-(150,50):    in W1 but exempt: no evaluation
--   road    (195,95)-(205,105), no variance: 5 m x 5 m = 25 m2 in W1 = 0.0062 acres -> fails
--           (above area_tolerance_m2, 1 m2)
--   road    (199.5,99.5)-(200.5,100.5):     0.5 m x 0.5 m = 0.25 m2 in W1, below the 1 m2
--           tolerance -> passes as outside (0.0001 acres measured)

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
INSERT INTO core.structure (plan_area_id, permit_id, kind, variance_ref, source_fid, geom)
SELECT 1, p.permit_id, s.kind, s.variance, s.fid, ST_Multi(s.geom)
FROM core.permit p
CROSS JOIN (VALUES ('S1', 'road', NULL, ST_MakeEnvelope(0, 0, 50, 20, 26915)),
                   ('S2', 'utility', 'V-12', ST_MakeEnvelope(50, 0, 60, 100, 26915)),
                   ('S3', 'other', NULL, ST_MakeEnvelope(250, 200, 260, 210, 26915)),
                   ('S4', 'passive_recreation', NULL, ST_MakeEnvelope(100, 0, 150, 50, 26915)),
                   ('S5', 'road', NULL, ST_MakeEnvelope(195, 95, 205, 105, 26915)),
                   ('S6', 'road', NULL, ST_MakeEnvelope(199.5, 99.5, 200.5, 100.5, 26915)))
  AS s (fid, kind, variance, geom);

-- every evaluation, by structure, with the area of the polygon a failure points at
SELECT f.feature_key AS structure, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_structures(1) e
JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key;

-- one permit at a time gives the same, and another permit's call gives nothing
SELECT count(*) FROM checks.check_structures(1, ARRAY[(SELECT permit_id FROM core.permit)]);
SELECT count(*) FROM checks.check_structures(1, ARRAY[-1]::bigint[]);
