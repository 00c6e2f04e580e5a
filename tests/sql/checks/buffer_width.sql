-- The 6(c) buffer width checks (sql/250, checks.check_buffer_width; transects of sql/206;
-- docs/checks.md, "Buffers in detail"): buffer_min_width (smallest transect width against
-- buffer_min_width_ft, 25 ft), buffer_avg_width (mean transect width against
-- buffer_avg_width_ft, 50 ft) and buffer_equivalence (the District's finding that a buffer
-- narrower than 50 ft somewhere is equivalent to a uniform 50 ft one, on record as a
-- buffer_equivalence permit record), each with its deficit polygons.
--
-- Feet on a local grid: every geometry is drawn in feet and scaled by 0.3048 into metres of
-- EPSG:26915 (ST_Scale). The site: central wetland (and its seed) x -50..350, y 0..100;
-- parcel P1 x 0..300, y -200..50; delineation over x -100..400, y -300..200, approved
-- 2020-01-01; permit 24-001 approved 2024-06-01 on P1. The protected edge is y = 0 from x = 0
-- to 300 (300 ft), upland to the south. The buffer is 60 ft deep for x 0..150 and 20 ft deep
-- for x 150..300. Worked by hand:
--   transects every 5 ft (transect_spacing_ft): n = ceil(300 / 5) = 60 stations at the
--   middles of the steps, x = 2.5 .. 297.5: 30 of 60 ft, 30 of 20 ft.
--   buffer_min_width: 20.00 ft < 25 -> fails; deficit = the 25 ft band not buffered:
--     x 150..300, y -25..-20 = 150 x 5 = 750 ft2
--   buffer_avg_width: (30 x 60 + 30 x 20) / 60 = 40.00 ft < 50 -> fails; deficit = the 50 ft
--     band not buffered: x 150..300, y -50..-20 = 150 x 30 = 4,500 ft2
--   buffer_equivalence: narrower than 50 ft at 30 transects, no finding on record -> fails;
--     then passes once the finding (approved 2024-06-01 by the board) is recorded.

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_Scale(ST_MakeEnvelope(-2000, -2000, 2000, 2000, 26915),
                                          0.3048, 0.3048)));
INSERT INTO core.central_wetland_seed (plan_area_id, name, geom)
VALUES (1, 'central complex', ST_Multi(ST_Scale(ST_MakeEnvelope(-50, 0, 350, 100, 26915),
                                                0.3048, 0.3048)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'P1', 'P1', ST_Multi(ST_Scale(ST_MakeEnvelope(0, -200, 300, 50, 26915),
                                         0.3048, 0.3048)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on,
                              tep_reviewed_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', '2019-12-01',
        ST_Multi(ST_Scale(ST_MakeEnvelope(-100, -300, 400, 200, 26915), 0.3048, 0.3048)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1',
       ST_Multi(ST_Scale(ST_MakeEnvelope(-50, 0, 350, 100, 26915), 0.3048, 0.3048))
FROM core.delineation;
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '24-001', 'approved', '2024-06-01', '{P1}');
INSERT INTO core.buffer (plan_area_id, permit_id, declaration_no, source_fid, geom)
SELECT 1, permit_id, 'DOC-1', 'B1',
       ST_Multi(ST_Union(ST_Scale(ST_MakeEnvelope(0, -60, 150, 0, 26915), 0.3048, 0.3048),
                         ST_Scale(ST_MakeEnvelope(150, -20, 300, 0, 26915), 0.3048, 0.3048)))
FROM core.permit;

-- the three evaluations, each deficit's area in ft2
SELECT e.paragraph, e.check_code, e.severity, e.passed, e.measured_value, e.limit_value,
       e.unit, e.message, round(ST_Area(e.geom) / 0.09290304) AS deficit_ft2
FROM checks.check_buffer_width(1) e
ORDER BY e.check_code;

-- the District's finding of equivalence on record: buffer_equivalence passes, the widths do not
INSERT INTO core.permit_record (plan_area_id, permit_id, kind, approved_on, approved_by,
                                source_fid)
SELECT 1, permit_id, 'buffer_equivalence', '2024-06-01', 'board', 'R1' FROM core.permit;
SELECT e.check_code, e.passed, e.message
FROM checks.check_buffer_width(1) e
ORDER BY e.check_code;
