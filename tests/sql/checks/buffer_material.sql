-- The 6(g) buffer_material check (sql/248, checks.check_buffer_material; docs/checks.md): no
-- material excavated from or placed in a buffer. The features that excavate or place
-- material are fill and excavation impacts, grading, stormwater BMPs other than infiltration
-- features, and wetland replacement; the buffer is every current buffer outside the wetland
-- the permit leaves behind. Grading is excused by a buffer disturbance record (6(e)) or an
-- approved temporary placement record. Measured: acres of buffer a feature excavates or fills
-- that nothing excuses; parts under area_tolerance_m2 (1 m2) pass.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- delineation D-1 over (-100,-100)-(1000,1000) approved 2020-01-01, wetland W1
-- (0,-50)-(300,0), also the central wetland seed; parcels P1 (0,-50)-(150,100) and P2
-- (150,-50)-(300,100); permits approved 2023-04-03. Worked by hand:
--   23-001 on P1, buffer (0,0)-(100,30):
--     I1 fill (10,-10)-(20,10): the part in W1 is wetland, not buffer; (10,0)-(20,10) =
--        100 m2 = 0.0247 acres of buffer -> fails
--     G1 grading (40,10)-(50,20): 100 m2 = 0.0247 acres, no record excuses it -> fails
--     P1 wet pond (60,10)-(70,20): 0.0247 acres -> fails
--     P2 infiltration BMP (80,10)-(90,20): not looked at (6(f)(iii) lets it in)
--     G2 grading (120,50)-(130,60): outside every buffer -> passes, 0
--   23-002 on P2, buffer (200,0)-(300,30), an approved temporary placement record:
--     G3 grading (210,10)-(220,20): excused -> passes, 0

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.central_wetland_seed (plan_area_id, name, geom)
VALUES (1, 'central complex', ST_Multi(ST_MakeEnvelope(0, -50, 300, 0, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01',
        ST_Multi(ST_MakeEnvelope(-100, -100, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, -50, 300, 0, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'P-1', 'P1', ST_Multi(ST_MakeEnvelope(0, -50, 150, 100, 26915))),
       (1, 'P-2', 'P2', ST_Multi(ST_MakeEnvelope(150, -50, 300, 100, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{P1}'),
       (1, '23-002', 'approved', '2023-04-03', '{P2}');
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, p.permit_id, 'B-' || p.permit_no, ST_Multi(b.geom)
FROM core.permit p
JOIN (VALUES ('23-001', ST_MakeEnvelope(0, 0, 100, 30, 26915)),
             ('23-002', ST_MakeEnvelope(200, 0, 300, 30, 26915))) AS b (no, geom)
  ON b.no = p.permit_no;
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'I1', ST_Multi(ST_MakeEnvelope(10, -10, 20, 10, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, p.permit_id, false, g.fid, ST_Multi(g.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'G1', ST_MakeEnvelope(40, 10, 50, 20, 26915)),
             ('23-001', 'G2', ST_MakeEnvelope(120, 50, 130, 60, 26915)),
             ('23-002', 'G3', ST_MakeEnvelope(210, 10, 220, 20, 26915))) AS g (no, fid, geom)
  ON g.no = p.permit_no;
INSERT INTO core.subwatershed (plan_area_id, permit_id, name, source_fid, geom)
SELECT 1, permit_id, 'SW-1', 'SW-1', ST_Multi(ST_MakeEnvelope(0, 0, 150, 100, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft,
                      roof_runoff_only, source_fid, geom)
SELECT 1, s.permit_id, s.subwatershed_id, b.kind, 100, false, b.fid, ST_Multi(b.geom)
FROM core.subwatershed s
CROSS JOIN (VALUES ('P1', 'wet_pond', ST_MakeEnvelope(60, 10, 70, 20, 26915)),
                   ('P2', 'infiltration', ST_MakeEnvelope(80, 10, 90, 20, 26915))) AS b (fid, kind, geom);
INSERT INTO core.permit_record (plan_area_id, permit_id, kind, approved_on, approved_by,
                                source_fid)
SELECT 1, permit_id, 'temporary_placement', '2023-04-01', 'staff', 'R1'
FROM core.permit WHERE permit_no = '23-002';

-- every evaluation, by feature
SELECT f.feature_key AS feature, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_buffer_material(1) e
LEFT JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key;
