-- What may stand in a buffer, 6(f) (sql/253; docs/checks.md): buffer_encroachment (impervious
-- surface, structures without a 6(f)(i)-(ii) exception and stormwater BMPs other than
-- infiltration features inside any buffer, checks.check_buffer_encroachment),
-- infiltration_in_buffer (6(f)(iii): infiltration BMPs at least infiltration_min_offset_ft,
-- 25 ft, from the central wetland, checks.check_infiltration_in_buffer) and trail_width
-- (6(f)(iv): a trail in a buffer at most trail_max_width_ft, 10 ft, wide, estimated as
-- 2 x area / perimeter when not recorded, checks.check_trail_width). One evaluation per
-- feature of the permit.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2, 1 ft = 0.3048 m. CWMP area
-- (-1000,-1000)-(5000,5000); parcel A-1 (0,-100)-(300,300); delineation D-1 over
-- (-100,-200)-(1000,1000) approved 2020-01-01, wetland W1 (0,-100)-(100,0), also the central
-- wetland seed; permit 23-001 approved 2023-04-03 on A-1, its buffer (0,0)-(100,30), a
-- subwatershed SW-1 (0,0)-(300,300). Worked by hand:
--   buffer_encroachment (each 10 m x 10 m = 100 m2 = 1,076 ft2 = 0.0247 acres):
--     V1 proposed impervious (10,10)-(20,20) in the buffer -> fails 0.0247
--     V2 proposed impervious (200,200)-(210,210) outside it -> passes 0
--     S1 road (30,0)-(40,10) in the buffer -> fails 0.0247
--     S2 utility (50,0)-(60,10) with a public_utility_6fii exception -> not looked at
--     P1 wet pond (70,0)-(80,10) in the buffer -> fails 0.0247
--     P2, P3 infiltration BMPs -> allowed by 6(f)(iii), not looked at here
--   infiltration_in_buffer: P2 (90,20)-(95,25) is 20 m = 65.62 ft from W1 -> passes;
--     P3 (20,3)-(25,6) is 3 m = 9.84 ft from W1, < 25 ft -> fails
--   trail_width: T1 (0,25)-(50,28) recorded 12 ft > 10 -> fails; T2 (60,25)-(90,28), no width
--     recorded: 2 x 90 m2 / 66 m = 2.7273 m = 8.95 ft <= 10 -> passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.central_wetland_seed (plan_area_id, name, geom)
VALUES (1, 'central complex', ST_Multi(ST_MakeEnvelope(0, -100, 100, 0, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01',
        ST_Multi(ST_MakeEnvelope(-100, -200, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, -100, 100, 0, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, -100, 300, 300, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, permit_id, 'B1', ST_Multi(ST_MakeEnvelope(0, 0, 100, 30, 26915)) FROM core.permit;
INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom)
SELECT 1, p.permit_id, 'proposed', i.fid, ST_Multi(i.geom)
FROM core.permit p
CROSS JOIN (VALUES ('V1', ST_MakeEnvelope(10, 10, 20, 20, 26915)),
                   ('V2', ST_MakeEnvelope(200, 200, 210, 210, 26915))) AS i (fid, geom);
INSERT INTO core.structure (plan_area_id, permit_id, kind, buffer_exception, source_fid, geom)
SELECT 1, p.permit_id, s.kind, s.exception, s.fid, ST_Multi(s.geom)
FROM core.permit p
CROSS JOIN (VALUES ('S1', 'road', NULL, ST_MakeEnvelope(30, 0, 40, 10, 26915)),
                   ('S2', 'utility', 'public_utility_6fii', ST_MakeEnvelope(50, 0, 60, 10, 26915)))
  AS s (fid, kind, exception, geom);
INSERT INTO core.subwatershed (plan_area_id, permit_id, name, source_fid, geom)
SELECT 1, permit_id, 'SW-1', 'SW-1', ST_Multi(ST_MakeEnvelope(0, 0, 300, 300, 26915))
FROM core.permit;
INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft,
                      roof_runoff_only, source_fid, geom)
SELECT 1, s.permit_id, s.subwatershed_id, b.kind, 100, false, b.fid, ST_Multi(b.geom)
FROM core.subwatershed s
CROSS JOIN (VALUES ('P1', 'wet_pond', ST_MakeEnvelope(70, 0, 80, 10, 26915)),
                   ('P2', 'infiltration', ST_MakeEnvelope(90, 20, 95, 25, 26915)),
                   ('P3', 'infiltration', ST_MakeEnvelope(20, 3, 25, 6, 26915))) AS b (fid, kind, geom);
INSERT INTO core.trail (plan_area_id, permit_id, width_ft, source_fid, geom)
SELECT 1, p.permit_id, t.width, t.fid, ST_Multi(t.geom)
FROM core.permit p
CROSS JOIN (VALUES ('T1', 12, ST_MakeEnvelope(0, 25, 50, 28, 26915)),
                   ('T2', NULL, ST_MakeEnvelope(60, 25, 90, 28, 26915))) AS t (fid, width, geom);

-- every evaluation of the three checks, by check and feature
SELECT e.check_code, f.feature_key AS feature, e.paragraph, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM (SELECT * FROM checks.check_buffer_encroachment(1)
      UNION ALL
      SELECT * FROM checks.check_infiltration_in_buffer(1)
      UNION ALL
      SELECT * FROM checks.check_trail_width(1)) e
LEFT JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY e.check_code, f.feature_key;
