-- The 7(b) credit_overlap check (sql/270, checks.check_credit_overlap; the claims of sql/120,
-- ledger.replacement_claim; docs/checks.md): no acre of replacement is credited to two
-- owners. Ground a stronger claim holds earns the later owner nothing: counted ground belongs
-- to the owner it was counted for first (an error for the other), a pending claim never
-- displaces counted ground, and between pending claims the one recorded first holds (a
-- warning). The owner who keeps the ground gets a passing evaluation.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. Parcel A-1 (0,0)-(600,600); delineation
-- D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100). Permits on A-1,
-- each a wetland replacement (F1 to F4, recorded in that order):
--   F1 23-001 (decided 2023-04-03) certified 2023-09-15, (0,200)-(100,300)
--   F2 23-002 (decided 2023-05-01) certified 2024-01-01, (50,200)-(150,300)
--   F3 23-002 proposed 2023-05-01, (350,200)-(450,250)   -- recorded after F4
--   F4 23-003 (decided 2023-06-01) proposed 2023-06-01, (300,200)-(400,250)
-- Worked by hand:
--   F1 counted first: keeps (50,200)-(100,300) -> passes
--   F2 overlaps F1 on (50,200)-(100,300) = 50 x 100 = 5,000 m2 = 1.2355 acres of counted
--      ground, counted since 2023-09-15 -> error
--   F3 overlaps F4 on (350,200)-(400,250) = 50 x 50 = 2,500 m2 = 0.6178 acres; both pending,
--      F4 recorded first -> warning
--   F4 keeps its ground -> passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation WHERE delineation_no = 'D-1';
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}'),
       (1, '23-002', 'approved', '2023-05-01', '{A1}'),
       (1, '23-003', 'approved', '2023-06-01', '{A1}');
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, p.permit_id, 'wetland', r.status, r.status_on, r.fid, ST_Multi(r.geom)
FROM (VALUES (1, 'F1', '23-001', 'certified', DATE '2023-09-15',
              ST_MakeEnvelope(0, 200, 100, 300, 26915)),
             (2, 'F2', '23-002', 'certified', DATE '2024-01-01',
              ST_MakeEnvelope(50, 200, 150, 300, 26915)),
             (3, 'F4', '23-003', 'proposed', DATE '2023-06-01',
              ST_MakeEnvelope(300, 200, 400, 250, 26915))) AS r (n, fid, no, status, status_on, geom)
JOIN core.permit p ON p.permit_no = r.no
ORDER BY r.n;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, permit_id, 'wetland', 'proposed', DATE '2023-05-01', 'F3',
       ST_Multi(ST_MakeEnvelope(350, 200, 450, 250, 26915))
FROM core.permit WHERE permit_no = '23-002';

-- every evaluation, by feature, with the area of the ground lost
SELECT f.feature_key AS feature, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message, round(ST_Area(e.geom)) AS geom_m2
FROM checks.check_credit_overlap(1) e
JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key;
