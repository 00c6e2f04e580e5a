-- The 7(e) replacement_certification check (sql/262, checks.check_certification;
-- docs/checks.md, "Certification and monitoring"): each wetland replacement whose status the
-- ledger counts (certified, counted_credit_status, as of the permit's baseline date) stands on
-- a certification date (certified_on, else status_on) and on monitoring that met its
-- performance standards. Measured: problems, 1 for a missing date plus 1 per monitoring
-- record with outcome not_met observed by the check date (a later year that meets its
-- standard does not clear an earlier failure); fails above zero.
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600);
-- permit 23-001 approved 2023-04-03 on A-1 (its baseline date). Wetland replacements, each
-- 50 m x 50 m along y = 200. Worked by hand:
--   F1 certified 2023-03-01; monitoring 2023 met, 2024 not met (observed 2024-08-01) -> 1
--   F2 certified with neither certified_on nor status_on -> 1 (no certification date)
--   F3 certified 2023-02-01; 2023 not met, 2024 not met, 2025 met -> 2
--   F4 constructed 2023-03-01: not counted (below certified) -> not evaluated
--   F5 certified 2023-01-15, no monitoring recorded yet -> 0, passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              certified_on, source_fid, geom)
SELECT 1, p.permit_id, 'wetland', r.status, r.status_on, r.certified_on, r.fid,
       ST_Multi(ST_MakeEnvelope(r.x, 200, r.x + 50, 250, 26915))
FROM core.permit p
CROSS JOIN (VALUES ('F1', 'certified', DATE '2023-03-01', DATE '2023-03-01', 0),
                   ('F2', 'certified', NULL, NULL, 100),
                   ('F3', 'certified', DATE '2023-02-01', DATE '2023-02-01', 200),
                   ('F4', 'constructed', DATE '2023-03-01', NULL, 300),
                   ('F5', 'certified', DATE '2023-01-15', DATE '2023-01-15', 400))
  AS r (fid, status, status_on, certified_on, x);
INSERT INTO core.replacement_monitoring (plan_area_id, replacement_id, monitoring_year,
                                         performance_standard, outcome, observed_on, source_fid)
SELECT 1, r.replacement_id, m.year, 'vegetation: 80 % native cover', m.outcome, m.observed,
       m.fid
FROM core.replacement r
JOIN (VALUES ('F1', 'M1', 2023, 'met', DATE '2023-08-01'),
             ('F1', 'M2', 2024, 'not_met', DATE '2024-08-01'),
             ('F3', 'M3', 2023, 'not_met', DATE '2023-08-01'),
             ('F3', 'M4', 2024, 'not_met', DATE '2024-08-01'),
             ('F3', 'M5', 2025, 'met', DATE '2025-08-01')) AS m (rfid, fid, year, outcome, observed)
  ON m.rfid = r.source_fid AND r.valid_to IS NULL;

-- every evaluation, by replacement feature
SELECT f.feature_key AS feature, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message
FROM checks.check_certification(1) e
JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key;
