-- The 7(c)(vii) final_conditions check (sql/270, checks.check_final_conditions; the dated
-- credit of sql/120, docs/ledger.md section 4a): "Actual final site conditions within the CWMP
-- will depend on approved wetland delineations". A delineation approved after a replacement
-- was built whose study area maps no wetland where the basin is takes that ground out of the
-- counted credit from its approval date: a warning with the acres lost and the delineation.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcel A-1 (0,0)-(600,600); delineation D-1 over (0,0)-(1000,1000) approved 2010-01-01,
-- wetland W1 (0,0)-(200,100). Permits approved 2020-04-03 on A-1, each with a wetland
-- replacement built 2021-05-01 and certified 2021-06-01:
--   20-001 F1 (0,200)-(100,300); D-2 over (0,200)-(50,300), approved 2022-01-01, maps no
--          wetland: (0,200)-(50,300) = 5,000 m2 = 1.2355 acres of F1 fall from 2022-01-01
--          -> a warning, 1.2355 (the message names every delineation approved that day:
--          D-2 and D-3)
--   20-002 F2 (300,200)-(400,300); D-3 over (300,200)-(400,300), approved 2022-01-01, maps
--          wetland W3 over all of it: nothing falls -> passes
--   20-003 F3 (500,400)-(550,450): no later delineation -> no evaluation

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2010-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915))),
       (1, 'D-2', 'approved', '2022-01-01', ST_Multi(ST_MakeEnvelope(0, 200, 50, 300, 26915))),
       (1, 'D-3', 'approved', '2022-01-01',
        ST_Multi(ST_MakeEnvelope(300, 200, 400, 300, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, d.delineation_id, w.fid, ST_Multi(w.geom)
FROM core.delineation d
JOIN (VALUES ('D-1', 'W1', ST_MakeEnvelope(0, 0, 200, 100, 26915)),
             ('D-3', 'W3', ST_MakeEnvelope(300, 200, 400, 300, 26915))) AS w (no, fid, geom)
  ON w.no = d.delineation_no;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
SELECT 1, no, 'approved', DATE '2020-04-03', '{A1}'
FROM unnest('{20-001,20-002,20-003}'::text[]) AS no;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              constructed_on, certified_on, source_fid, geom)
SELECT 1, p.permit_id, 'wetland', 'certified', DATE '2021-06-01', DATE '2021-05-01',
       DATE '2021-06-01', r.fid, ST_Multi(r.geom)
FROM core.permit p
JOIN (VALUES ('20-001', 'F1', ST_MakeEnvelope(0, 200, 100, 300, 26915)),
             ('20-002', 'F2', ST_MakeEnvelope(300, 200, 400, 300, 26915)),
             ('20-003', 'F3', ST_MakeEnvelope(500, 400, 550, 450, 26915))) AS r (no, fid, geom)
  ON r.no = p.permit_no;

-- every evaluation, by permit
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_final_conditions(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no;
