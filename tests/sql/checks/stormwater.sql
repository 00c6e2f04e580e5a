-- The 5(c) stormwater checks (sql/231 volumes, sql/232 checks.check_stormwater and
-- checks.check_infiltration_soils; docs/checks.md, "Stormwater in detail"), per subwatershed:
-- V = sum over land cover x soil pieces of TR-55 runoff of the 2.8 in storm
-- (Q = (P - 0.2S)^2 / (P + 0.8S), S = 1000/CN - 10, in inches) / 12 x area in ft2, split into
-- V_AB (A/B soil) and V_CD (C/D, dual, unmapped, high groundwater or contaminated); volumes
-- compare in whole ft3; the 20 % shares are of V (stormwater_share_base whole_5ci_volume).
--
-- Metres in EPSG:26915; 1 ft2 = 0.09290304 m2, so a 100 m x 100 m square is 107,639.10 ft2.
-- CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600); permit 23-001 approved
-- 2023-04-03 on A-1 with proposed impervious (0,0)-(100,100). Soils: A (0,0)-(200,100),
-- D (200,0)-(400,100). Subwatersheds and what the permit records in them:
--   SW-1 (0,0)-(100,100) on A, land cover impervious (CN 98) over all of it:
--        S = 0.204082, Q = 2.759184^2 / 2.963265 = 2.569157 in,
--        V = V_AB = 2.569157 / 12 x 107,639.10 = 23,045.1 -> 23045 ft3, V_CD = 0;
--        infiltration 20,000 ft3 (10,10)-(20,20) on A, not roof runoff only; pretreatment
--        5,000 ft3, counted up to 20 % of V = 4,609.0 -> 20,000 + 4,609 = 24,609 >= 23,045:
--        infiltration_volume passes; pretreatment 5,000 >= 1 passes; the infiltration BMP
--        lies on A: infiltration_soils 0 acres, passes; biofiltration_share and cd_volume do
--        not apply (V_CD = 0)
--   SW-2 (200,0)-(300,100) on D, land cover open_space_good only over (200,0)-(300,80):
--        uncovered (200,80)-(300,100) = 2,000 m2 = 0.4942 acres -> land_cover_coverage fails
--        and the subwatershed's volumes are not evaluated (the covered 8,000 m2 =
--        86,111.28 ft2 give V = V_CD = 1.102083 / 12 x 86,111.28 = 7,908.5 -> 7908 ft3, a
--        lower bound only); an infiltration BMP of 100 ft3 at
--        (250,50)-(260,60) lies on D: 100 m2 = 0.0247 acres -> infiltration_soils fails
--   SW-3 (300,0)-(400,100) on D, land cover open_space_good (CN 80 on D) over all of it:
--        S = 2.5, Q = 2.3^2 / 4.8 = 1.102083 in, V = V_CD = 1.102083 / 12 x 107,639.10 =
--        9,885.6 -> 9886 ft3; biofiltration 1,500 ft3 < 20 % of V = 1,977.1 ->
--        biofiltration_share fails; biofiltration + wet pond 1,500 + 9,000 = 10,500 >= 9,886
--        -> cd_volume passes
--   the permit creates impervious surface and has three subwatersheds ->
--   stormwater_subwatersheds passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.soil (plan_area_id, hydrologic_soil_group, high_groundwater, contaminated,
                       source_fid, geom)
VALUES (1, 'A', false, false, 'S-A', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))),
       (1, 'D', false, false, 'S-D', ST_Multi(ST_MakeEnvelope(200, 0, 400, 100, 26915)));
INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom)
SELECT 1, permit_id, 'proposed', 'V1', ST_Multi(ST_MakeEnvelope(0, 0, 100, 100, 26915))
FROM core.permit;
INSERT INTO core.subwatershed (plan_area_id, permit_id, name, source_fid, geom)
SELECT 1, p.permit_id, s.name, s.name, ST_Multi(s.geom)
FROM core.permit p
CROSS JOIN (VALUES ('SW-1', ST_MakeEnvelope(0, 0, 100, 100, 26915)),
                   ('SW-2', ST_MakeEnvelope(200, 0, 300, 100, 26915)),
                   ('SW-3', ST_MakeEnvelope(300, 0, 400, 100, 26915))) AS s (name, geom);
INSERT INTO core.land_cover (plan_area_id, permit_id, cover_class, source_fid, geom)
SELECT 1, p.permit_id, c.class, c.fid, ST_Multi(c.geom)
FROM core.permit p
CROSS JOIN (VALUES ('C1', 'impervious', ST_MakeEnvelope(0, 0, 100, 100, 26915)),
                   ('C2', 'open_space_good', ST_MakeEnvelope(200, 0, 300, 80, 26915)),
                   ('C3', 'open_space_good', ST_MakeEnvelope(300, 0, 400, 100, 26915)))
  AS c (fid, class, geom);
INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft,
                      roof_runoff_only, source_fid, geom)
SELECT 1, p.permit_id, s.subwatershed_id, b.kind, b.volume, false, b.fid, ST_Multi(b.geom)
FROM core.permit p
CROSS JOIN (VALUES ('B1', 'SW-1', 'infiltration', 20000, ST_MakeEnvelope(10, 10, 20, 20, 26915)),
                   ('B2', 'SW-1', 'pretreatment', 5000, ST_MakeEnvelope(30, 10, 40, 20, 26915)),
                   ('B3', 'SW-2', 'infiltration', 100, ST_MakeEnvelope(250, 50, 260, 60, 26915)),
                   ('B4', 'SW-3', 'biofiltration', 1500, ST_MakeEnvelope(310, 10, 320, 20, 26915)),
                   ('B5', 'SW-3', 'wet_pond', 9000, ST_MakeEnvelope(330, 10, 350, 30, 26915)))
  AS b (fid, sw, kind, volume, geom)
JOIN core.subwatershed s ON s.name = b.sw AND s.valid_to IS NULL;

-- the subwatersheds' volumes as the checks read them
SELECT v.name, v.uncovered_acres, v.v_cuft, v.v_ab_cuft, v.v_cd_cuft
FROM checks.stormwater_volumes(1) v
ORDER BY v.name;

-- every evaluation of the 5(c) checks, by check and subwatershed or BMP
SELECT e.check_code, f.feature_key AS feature, e.paragraph, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message
FROM (SELECT * FROM checks.check_stormwater(1)
      UNION ALL
      SELECT * FROM checks.check_infiltration_soils(1)) e
LEFT JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY e.check_code, f.feature_key;
