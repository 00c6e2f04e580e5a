-- The 5(d) hydroperiod checks (sql/235, checks.check_hydroperiod; docs/checks.md, "Hydroperiod
-- in detail"): the 10-year bounce and inundation period increases of each receiving wetland
-- against its susceptibility class (core.susceptibility_limit: high 0 ft / 0 days, moderate
-- 0.5 ft / 2 days, slight 1.0 ft / 14 days, least no bounce limit / 21 days). A receiving
-- wetland without a class: a warning on bounce, inundation not looked at. A permit subject to
-- the rule that grades, subdivides or proposes impervious surface and has no hydroperiod
-- record: both not evaluated (passed NULL, "not evaluated" findings in a run).
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(900,600);
-- delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01 with wetlands WM moderate
-- (0,0)-(100,100), WS slight (200,0)-(300,100), WL least (400,0)-(500,100), WN no class
-- (600,0)-(700,100). Permits approved 2023-04-03 on A-1. Worked by hand:
--   23-001 on WM: bounce 2.0 -> 2.4, +0.4 <= 0.5 passes; inundation 5 -> 8, +3 > 2 fails
--   23-002 on WS: bounce 1.0 -> 2.5, +1.5 > 1.0 fails; inundation 10 -> 20, +10 <= 14 passes
--   23-003 on WL: bounce 1.0 -> 6.0, +5 with no limit passes; inundation 0 -> 21, +21 <= 21
--          passes (at the limit)
--   23-004 on WN: no class: bounce +0.1 a warning, inundation not looked at
--   23-005 grading that alters runoff (300,300)-(310,310) (a 2(a)(iii) trigger), no record:
--          bounce and inundation not evaluated
--   23-006 a fill (50,50)-(60,60) only, no record: section 7's work, nothing to evaluate

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, susceptibility_class, geom)
SELECT 1, d.delineation_id, w.fid, w.class, ST_Multi(w.geom)
FROM core.delineation d
CROSS JOIN (VALUES ('WM', 'moderate', ST_MakeEnvelope(0, 0, 100, 100, 26915)),
                   ('WS', 'slight', ST_MakeEnvelope(200, 0, 300, 100, 26915)),
                   ('WL', 'least', ST_MakeEnvelope(400, 0, 500, 100, 26915)),
                   ('WN', NULL, ST_MakeEnvelope(600, 0, 700, 100, 26915))) AS w (fid, class, geom);
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 900, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
SELECT 1, no, 'approved', DATE '2023-04-03', '{A1}'
FROM unnest('{23-001,23-002,23-003,23-004,23-005,23-006}'::text[]) AS no;
INSERT INTO core.hydroperiod (plan_area_id, permit_id, wetland_id, existing_bounce_ft,
                              proposed_bounce_ft, existing_inundation_days,
                              proposed_inundation_days, source_fid)
SELECT 1, p.permit_id, f.feature_id, h.b0, h.b1, h.d0, h.d1, 'H-' || p.permit_no
FROM (VALUES ('23-001', 'WM', 2.0, 2.4, 5, 8), ('23-002', 'WS', 1.0, 2.5, 10, 20),
             ('23-003', 'WL', 1.0, 6.0, 0, 21), ('23-004', 'WN', 1.0, 1.1, 3, 4))
  AS h (no, wetland, b0, b1, d0, d1)
JOIN core.permit p ON p.permit_no = h.no
JOIN core.feature f ON f.layer = 'wetland' AND f.feature_key = h.wetland;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, permit_id, true, 'G5', ST_Multi(ST_MakeEnvelope(300, 300, 310, 310, 26915))
FROM core.permit WHERE permit_no = '23-005';
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'I6', ST_Multi(ST_MakeEnvelope(50, 50, 60, 60, 26915))
FROM core.permit WHERE permit_no = '23-006';

-- every evaluation, by permit and check
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_hydroperiod(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.check_code;
