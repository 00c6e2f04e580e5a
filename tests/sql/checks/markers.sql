-- The 6(b) marker checks (sql/254, checks.check_marker_lot_line and checks.check_marker_gap;
-- docs/checks.md, "Buffers in detail"). The upland edge is the boundary of the permit's own
-- buffers less what lies within 5 cm of wetland, merged into lines. marker_lot_line: from each
-- lot-line crossing of the upland edge (where it runs along a parcel boundary: the end of
-- that stretch farthest from the wetland) to the nearest counted marker, at most
-- marker_tolerance_ft (10 ft). marker_gap: along the upland edge, between consecutive
-- markers and from each end of the line to its first marker, at most marker_max_spacing_ft
-- (200 ft). Counted markers: current free-standing markers within 10 ft of the upland edge.
--
-- Metres in EPSG:26915; 1 ft = 0.3048 m. CWMP area (-1000,-1000)-(5000,5000); delineation
-- D-1 over (-100,-100)-(1000,1000) approved 2020-01-01, wetland W1 (0,-50)-(100,0), also the
-- central wetland seed; parcels P1 (0,-50)-(50,100) and P2 (50,-50)-(100,100); permit 23-001
-- approved 2023-04-03 on both, its buffer (0,0)-(100,20); free-standing markers M1 at (0,20)
-- and M2 at (52,20). Worked by hand:
--   upland edge: x = 0 from y = 0.05 up to (0,20), y = 20 across to (100,20), x = 100 down to
--     y = 0.05: one line of 19.95 + 100 + 19.95 = 139.9 m
--   lot-line crossings: (50,20) where P1 meets P2; (0,20) and (100,20), the far ends of the
--     stretches along the parcels' outer boundaries x = 0 and x = 100
--     (0,20): M1 on it, 0 ft -> passes
--     (50,20): M2 2 m = 6.56 ft away <= 10 -> passes
--     (100,20): nearest M2, 48 m = 157.48 ft > 10 -> fails
--   gaps: end (0,0.05) to M1 19.95 m = 65.45 ft; M1 to M2 52 m = 170.60 ft; M2 to the end
--     (100,0.05) 48 + 19.95 = 67.95 m = 222.93 ft > 200 -> fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.central_wetland_seed (plan_area_id, name, geom)
VALUES (1, 'central complex', ST_Multi(ST_MakeEnvelope(0, -50, 100, 0, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01',
        ST_Multi(ST_MakeEnvelope(-100, -100, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, -50, 100, 0, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'P-1', 'P1', ST_Multi(ST_MakeEnvelope(0, -50, 50, 100, 26915))),
       (1, 'P-2', 'P2', ST_Multi(ST_MakeEnvelope(50, -50, 100, 100, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{P1,P2}');
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, permit_id, 'B1', ST_Multi(ST_MakeEnvelope(0, 0, 100, 20, 26915)) FROM core.permit;
INSERT INTO core.buffer_marker (plan_area_id, permit_id, marker_type, source_fid, geom)
SELECT 1, p.permit_id, 'free_standing', m.fid, ST_SetSRID(ST_MakePoint(m.x, m.y), 26915)
FROM core.permit p
CROSS JOIN (VALUES ('M1', 0, 20), ('M2', 52, 20)) AS m (fid, x, y);

-- every evaluation of the two checks, with where each is measured
SELECT e.check_code, e.paragraph, e.severity, e.passed, e.measured_value, e.limit_value,
       e.unit, e.message, ST_AsText(ST_SnapToGrid(e.geom, 0.01)) AS place
FROM (SELECT * FROM checks.check_marker_lot_line(1)
      UNION ALL
      SELECT * FROM checks.check_marker_gap(1)) e
ORDER BY e.check_code, e.measured_value;
