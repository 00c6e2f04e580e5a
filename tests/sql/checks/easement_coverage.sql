-- The 8 easement_coverage check (sql/245, checks.check_easement; docs/checks.md): on each
-- permitted parcel, a recorded easement covers the CWMP wetland the permit leaves behind, the
-- upland that wetland encloses and the buffer. An easement counts once recorded (a recording
-- number or date). Missing coverage is an error on a decided permit, a warning before the
-- decision. One evaluation per permitted parcel holding any of these.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcels P1 (0,0)-(300,300) and P2 (300,0)-(600,300); delineation D-1 over
-- (-100,-100)-(1000,1000) approved 2020-01-01 with wetland W1, the square (0,0)-(100,100)
-- less the upland hole (40,40)-(60,60). Permit 23-001 approved 2023-04-03 on P1 and P2: fill
-- (0,0)-(20,100), buffer (100,0)-(130,100), easement E1 recorded over (0,0)-(100,100),
-- easement E2 over the buffer not recorded. Permit 23-002 under review on P2: buffer
-- (400,0)-(430,100), no easement. Worked by hand:
--   23-001 P1: wetland left after the fill, x 20..100 less the hole = 8,000 - 400 = 7,600 m2,
--     the enclosed hole 400 m2 and the buffer 3,000 m2: 11,000 m2 = 2.7182 acres; the first
--     two lie in E1, the buffer, 30 x 100 = 3,000 m2 = 0.7413 acres, only in the unrecorded
--     E2 -> error
--   23-001 P2: no wetland and no buffer of its own, but every current buffer counts: 23-002's
--     buffer (400,0)-(430,100) on P2, 3,000 m2 = 0.7413 acres -> error
--   23-002 P2: the same 0.7413 acres, undecided -> warning
--   once E2 is recorded (recorded_on 2023-05-01), 23-001 P1 passes; P2 still fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, source_fid, geom)
VALUES (1, 'P-1', 'P1', 'P1', ST_Multi(ST_MakeEnvelope(0, 0, 300, 300, 26915))),
       (1, 'P-2', 'P2', 'P2', ST_Multi(ST_MakeEnvelope(300, 0, 600, 300, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01',
        ST_Multi(ST_MakeEnvelope(-100, -100, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1',
       ST_Multi(ST_Difference(ST_MakeEnvelope(0, 0, 100, 100, 26915),
                              ST_MakeEnvelope(40, 40, 60, 60, 26915)))
FROM core.delineation;
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{P1,P2}'),
       (1, '23-002', 'under_review', NULL, '{P2}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'I1', ST_Multi(ST_MakeEnvelope(0, 0, 20, 100, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, p.permit_id, b.fid, ST_Multi(b.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'B1', ST_MakeEnvelope(100, 0, 130, 100, 26915)),
             ('23-002', 'B2', ST_MakeEnvelope(400, 0, 430, 100, 26915))) AS b (no, fid, geom)
  ON b.no = p.permit_no;
INSERT INTO core.easement (plan_area_id, permit_id, recording_no, recorded_on, source_fid,
                           geom)
SELECT 1, permit_id, e.no, e.on_date, e.fid, ST_Multi(e.geom)
FROM core.permit
CROSS JOIN (VALUES ('E1', 'R-100', DATE '2023-05-01', ST_MakeEnvelope(0, 0, 100, 100, 26915)),
                   ('E2', NULL, NULL, ST_MakeEnvelope(100, 0, 130, 100, 26915)))
  AS e (fid, no, on_date, geom)
WHERE permit_no = '23-001';

-- one evaluation per permit and parcel, with the uncovered area
SELECT p.permit_no, pc.pin, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_easement(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
LEFT JOIN core.parcel pc ON pc.parcel_id = e.parcel_id AND pc.valid_to IS NULL
ORDER BY p.permit_no, pc.pin;

-- E2 recorded: the buffer on P1 is covered
UPDATE core.easement SET recorded_on = '2023-05-01' WHERE source_fid = 'E2';
SELECT p.permit_no, pc.pin, e.passed, e.measured_value, e.message
FROM checks.check_easement(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
LEFT JOIN core.parcel pc ON pc.parcel_id = e.parcel_id AND pc.valid_to IS NULL
ORDER BY p.permit_no, pc.pin;
