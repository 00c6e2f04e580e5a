-- The recorded declarations a permit needs (sql/240, checks.check_declarations;
-- docs/checks.md): 5(e) fertilizer_snow for a permit that subdivides, grades or creates
-- impervious surface; 6 buffer for a permit with a buffer or a protected edge (on public land
-- a written agreement stands in, unless District staff executed it: 10); 6(e)(v)
-- buffer_restoration_3yr for a permit whose grading disturbs a buffer (at least
-- area_tolerance_m2, 1 m2). A declaration counts once recorded (a recording number or date).
-- Missing ones are errors on approved permits and warnings while undecided; measured: the
-- recorded declarations of the kind, failing at zero.
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); one parcel per permit, P1 to P5,
-- each 100 m x 100 m from x = 0, 100, 200, 300, 400. Worked by hand:
--   23-001 approved: grading (0,0)-(10,10), 50 m2 of it in its buffer (5,0)-(30,10);
--          fertilizer_snow and buffer declarations recorded, the 3-year restoration
--          declaration on file but not recorded -> 5(e) 1 passes, 6 1 passes, 6(e)(v) 0 fails
--   23-002 under review: proposed impervious (100,0)-(110,10), nothing recorded -> 5(e) 0
--          fails as a warning; no buffer, no buffer declaration needed
--   (the written agreements below are not recorded: a recorded document counts whatever it is)
--   23-003 approved, public land: buffer (200,0)-(230,10) documented by a written agreement
--          the board executed -> 6 counts it: 1, passes
--   23-004 approved, private land: buffer (300,0)-(330,10), only a written agreement -> an
--          agreement is no declaration on private land: 0, fails
--   23-005 approved, public land: buffer (400,0)-(430,10), an agreement executed by staff ->
--          stands in for nothing (10): 0, fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
SELECT 1, 'P-' || n, 'P' || n, ST_Multi(ST_MakeEnvelope(100 * (n - 1), 0, 100 * n, 100, 26915))
FROM generate_series(1, 5) AS n;
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, public_land, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', false, '{P1}'),
       (1, '23-002', 'under_review', NULL, false, '{P2}'),
       (1, '23-003', 'approved', '2023-04-03', true, '{P3}'),
       (1, '23-004', 'approved', '2023-04-03', false, '{P4}'),
       (1, '23-005', 'approved', '2023-04-03', true, '{P5}');
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, permit_id, false, 'G1', ST_Multi(ST_MakeEnvelope(0, 0, 10, 10, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom)
SELECT 1, permit_id, 'proposed', 'V2', ST_Multi(ST_MakeEnvelope(100, 0, 110, 10, 26915))
FROM core.permit WHERE permit_no = '23-002';
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, p.permit_id, 'B-' || p.permit_no, ST_Multi(b.geom)
FROM core.permit p
JOIN (VALUES ('23-001', ST_MakeEnvelope(5, 0, 30, 10, 26915)),
             ('23-003', ST_MakeEnvelope(200, 0, 230, 10, 26915)),
             ('23-004', ST_MakeEnvelope(300, 0, 330, 10, 26915)),
             ('23-005', ST_MakeEnvelope(400, 0, 430, 10, 26915))) AS b (no, geom)
  ON b.no = p.permit_no;
INSERT INTO core.declaration (plan_area_id, permit_id, kind, recording_no, recorded_on,
                              public_land_agreement, executed_by, source_fid)
SELECT 1, p.permit_id, d.kind, d.rec_no, d.rec_on, d.agreement, d.executed_by, d.fid
FROM core.permit p
JOIN (VALUES ('23-001', 'D1', 'fertilizer_snow', 'R-1', DATE '2023-05-01', false, NULL),
             ('23-001', 'D2', 'buffer', 'R-2', DATE '2023-05-01', false, NULL),
             ('23-001', 'D3', 'buffer_restoration_3yr', NULL, NULL, false, NULL),
             ('23-003', 'D4', 'buffer', NULL, NULL, true, 'board'),
             ('23-004', 'D5', 'buffer', NULL, NULL, true, 'board'),
             ('23-005', 'D6', 'buffer', NULL, NULL, true, 'staff'))
  AS d (no, fid, kind, rec_no, rec_on, agreement, executed_by)
  ON d.no = p.permit_no;

-- every evaluation, by permit and paragraph
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_declarations(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph;
