-- The 7(c) checks of replacement location and heritage communities (sql/260,
-- checks.check_replacement; docs/checks.md): heritage_wetland_impact (7(c)(i): no disturbance
-- of a wetland community ranked heritage_threshold, B/C, or better), heritage_upland_excavation
-- (7(c)(ii): no wetland replacement in such an upland community), replacement_outside_figure5
-- and replacement_type_figure5 (7(c), warnings: replacement conforms to CWMP Figure 5), and
-- replacement_outside_plan_area (7(c)). One evaluation per feature and check that applies.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcel A-1 (0,0)-(600,600); permit 23-001 approved 2023-04-03 on A-1. Heritage communities:
-- wetland rank B (0,0)-(100,100), upland rank A (200,200)-(300,300), upland rank C (below
-- B/C) (400,400)-(500,500). Figure 5 zone Z1 (0,200)-(600,600), planned type 3.
-- Worked by hand:
--   I1 fill (0,0)-(50,50): 2,500 m2 in the B wetland community = 0.6178 acres -> 7(c)(i) fails
--   R1 wetland replacement (200,200)-(250,300), type 3: 5,000 m2 in the A upland = 1.2355
--      acres -> 7(c)(ii) fails; not in a heritage wetland, inside Z1 and of its type -> pass
--   R2 wetland replacement (400,100)-(500,150), type 5: outside Z1, 5,000 m2 = 1.2355 acres
--      -> outside_figure5 fails (warning); inside no zone, so no type to conform to -> pass
--   R3 wetland replacement (450,420)-(550,470), type 5: inside Z1 (type 3), 5,000 m2 =
--      1.2355 acres -> type_figure5 fails (warning); in the C upland only partly
--      (50 x 50 = 2,500 m2) but C is below B/C -> 7(c)(ii) passes
--   every replacement lies in the CWMP area -> outside_plan_area passes for each

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.heritage_area (plan_area_id, rank, community_kind, source_fid, geom)
VALUES (1, 'B', 'wetland', 'H1', ST_Multi(ST_MakeEnvelope(0, 0, 100, 100, 26915))),
       (1, 'A', 'upland', 'H2', ST_Multi(ST_MakeEnvelope(200, 200, 300, 300, 26915))),
       (1, 'C', 'upland', 'H3', ST_Multi(ST_MakeEnvelope(400, 400, 500, 500, 26915)));
INSERT INTO core.figure5_area (plan_area_id, zone_name, planned_type, source_fid, geom)
VALUES (1, 'Z1', '3', 'Z1', ST_Multi(ST_MakeEnvelope(0, 200, 600, 600, 26915)));
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'I1', ST_Multi(ST_MakeEnvelope(0, 0, 50, 50, 26915))
FROM core.permit;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              planned_type, source_fid, geom)
SELECT 1, p.permit_id, 'wetland', 'proposed', DATE '2023-04-03', r.type, r.fid,
       ST_Multi(r.geom)
FROM core.permit p
CROSS JOIN (VALUES ('R1', '3', ST_MakeEnvelope(200, 200, 250, 300, 26915)),
                   ('R2', '5', ST_MakeEnvelope(400, 100, 500, 150, 26915)),
                   ('R3', '5', ST_MakeEnvelope(450, 420, 550, 470, 26915))) AS r (fid, type, geom);

-- every evaluation, by check and feature, with the area a failure points at
SELECT e.check_code, f.feature_key AS feature, e.paragraph, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_replacement(1) e
LEFT JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY e.check_code, f.feature_key;
