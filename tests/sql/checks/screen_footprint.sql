-- pub.screen_footprint, the 2(a) screening staff run before any application exists
-- (sql/210, docs/checks.md): is a Rule M permit required for a footprint, and why. One row
-- with the answer, then one per trigger: (i) CWMP wetland filled, excavated or drained, at
-- least area_tolerance_m2 (1 m2); (ii) more than impervious_trigger_sqft (10,000 ft2) of new
-- impervious surface; (iii) grading that alters runoff into a CWMP wetland.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2, 1 ft2 = 0.09290304 m2.
--   CWMP area (-1000,-1000)-(5000,5000)
--   D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100)
--   D-2 over (400,0)-(600,200) approved 2025-06-01, wetland W2 (400,0)-(500,100)
-- Worked by hand:
--   (50,0)-(150,100) lies in W1: 10,000 m2 = 2.4711 acres -> required by (i)
--   (150,50)-(250,150) meets W1 on (150,50)-(200,100): 2,500 m2 = 0.6178 acres -> (i)
--   a 100 ft square of impervious (30.48 m): exactly 10,000 ft2, not more -> not required
--   a 31 m square: 961 m2 / 0.09290304 = 10,344.1 -> 10344 ft2, more -> required by (ii)
--   (400,0)-(500,100) is W2: no wetland there as of 2025-05-31, 2.4711 acres from 2025-06-01
--   (6000,6000)-(6100,6100) is outside the CWMP area: Rule M does not apply

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915))),
       (1, 'D-2', 'approved', '2025-06-01', ST_Multi(ST_MakeEnvelope(400, 0, 600, 200, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, w.key, ST_Multi(w.geom)
FROM core.delineation d
JOIN (VALUES ('D-1', 'W1', ST_MakeEnvelope(0, 0, 200, 100, 26915)),
             ('D-2', 'W2', ST_MakeEnvelope(400, 0, 500, 100, 26915))) AS w (no, key, geom)
  ON w.no = d.delineation_no;

SET ROLE rulem_staff;

-- a fill wholly in W1; whether the grading alters runoff is not said
SELECT * FROM pub.screen_footprint('acd-53-62', ST_MakeEnvelope(50, 0, 150, 100, 26915));

-- a footprint partly in W1, grading that does not alter runoff
SELECT * FROM pub.screen_footprint('acd-53-62', ST_MakeEnvelope(150, 50, 250, 150, 26915),
                                   NULL, false);

-- new impervious surface only: 10,000 ft2 exactly, then 10,344 ft2
SELECT * FROM pub.screen_footprint('acd-53-62', NULL,
                                   ST_MakeEnvelope(700, 700, 730.48, 730.48, 26915));
SELECT * FROM pub.screen_footprint('acd-53-62', NULL,
                                   ST_MakeEnvelope(700, 700, 731, 731, 26915));

-- the wetland layer as of the date asked: W2 is delineated from 2025-06-01
SELECT on_date, s.paragraph, s.required, s.measured_value, s.reason
FROM unnest('{2025-05-31,2025-06-01}'::date[]) AS on_date,
     pub.screen_footprint('acd-53-62', ST_MakeEnvelope(400, 0, 500, 100, 26915), NULL,
                          false, on_date) AS s
WHERE s.paragraph IN ('2(a)', '2(a)(i)')
ORDER BY on_date, s.paragraph;

-- outside the CWMP area, even with grading that alters runoff
SELECT * FROM pub.screen_footprint('acd-53-62', ST_MakeEnvelope(6000, 6000, 6100, 6100, 26915),
                                   NULL, true);

-- refused in one line each
SELECT * FROM pub.screen_footprint('acd-53-62', ST_MakeEnvelope(50, 0, 150, 100));
SELECT * FROM pub.screen_footprint('nowhere', ST_MakeEnvelope(50, 0, 150, 100, 26915));
SELECT * FROM pub.screen_footprint('acd-53-62', NULL);

RESET ROLE;
