-- The section 6 paragraphs met with a written approval or a record of figures (sql/247;
-- docs/rule-m.md, "Permit records"): checks.check_marker_records judges 6(b) marker_design (a
-- permit with a buffer has the District's written approval of the marker design, unless on
-- public land an approved vegetation plan stands in and it has no markers; an error once
-- decided, a warning before) and 6(b) lot_monumentation (a subdividing permit with a buffer
-- records the lots of record it creates and how many are monumented; measured: lots without;
-- not evaluated without the record); checks.check_buffer_disturbance judges 6(e)'s criteria
-- for a permit whose grading disturbs a buffer (at least 1 m2), from its buffer_disturbance
-- record: (i) erosion_control_plan, (ii) canopy_trees_removed 0, (iii) the restored buffer
-- (slope no steeper than the steeper of the existing slope and 5:1, uncompacted depth at
-- least 18 in, permeability at least 1.0 of before, organic matter 5-15 %, sheet flow
-- improved, habitat maintained: one case each), (iv) revegetation_plan, (vi)
-- stability_finding. A missing fact leaves its case not evaluated; no record, every case.
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); one parcel per permit, P1 to P5,
-- each 100 m x 100 m from x = 0, 100, ..., 400; each permit's buffer 30 m x 10 m at the
-- parcel's lower left corner. Worked by hand:
--   23-001 approved, subdivides: marker design approved 2023-03-01 -> passes; lots created 4,
--          monumented 3 -> 1, fails
--   23-002 under review, subdivides: no marker design -> a warning; no lot record -> not
--          evaluated
--   23-003 approved, public land, vegetation plan approved 2023-02-01, no markers, no marker
--          design -> the plan stands in: no evaluation (not applicable)
--   23-004 approved: marker design approved; grading (300,0)-(310,10), 100 m2 in its buffer;
--          record: erosion control plan (passes), 2 canopy trees removed (fails), slope 3:1
--          proposed where 4:1 existed (the steeper of 4:1 and 5:1 is 4:1; 3:1 is steeper:
--          fails), 18 in uncompacted (passes, at the limit), permeability 1.0 (passes), 16 %
--          organic matter (> 15: fails), sheet flow improved (passes), habitat not stated
--          (not evaluated), revegetation plan (passes), no stability finding (fails)
--   23-005 approved: marker design approved; grading (400,0)-(410,10) in its buffer and no
--          disturbance record -> every 6(e) case not evaluated

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
SELECT 1, 'P-' || n, 'P' || n, ST_Multi(ST_MakeEnvelope(100 * (n - 1), 0, 100 * n, 100, 26915))
FROM generate_series(1, 5) AS n;
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, public_land,
                         involves_subdivision, vegetation_plan_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', false, true, NULL, '{P1}'),
       (1, '23-002', 'under_review', NULL, false, true, NULL, '{P2}'),
       (1, '23-003', 'approved', '2023-04-03', true, false, '2023-02-01', '{P3}'),
       (1, '23-004', 'approved', '2023-04-03', false, false, NULL, '{P4}'),
       (1, '23-005', 'approved', '2023-04-03', false, false, NULL, '{P5}');
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, p.permit_id, 'B-' || p.permit_no,
       ST_Multi(ST_MakeEnvelope(x, 0, x + 30, 10, 26915))
FROM core.permit p
CROSS JOIN LATERAL (SELECT 100 * (right(p.permit_no, 1)::int - 1) AS x) o;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, p.permit_id, false, g.fid, ST_Multi(g.geom)
FROM core.permit p
JOIN (VALUES ('23-004', 'G4', ST_MakeEnvelope(300, 0, 310, 10, 26915)),
             ('23-005', 'G5', ST_MakeEnvelope(400, 0, 410, 10, 26915))) AS g (no, fid, geom)
  ON g.no = p.permit_no;
INSERT INTO core.permit_record (plan_area_id, permit_id, kind, approved_on, approved_by, facts,
                                source_fid)
SELECT 1, p.permit_id, r.kind, r.approved, r.approved_by, r.facts::jsonb, r.fid
FROM core.permit p
JOIN (VALUES
  ('23-001', 'R1', 'marker_design', DATE '2023-03-01', 'staff', NULL),
  ('23-001', 'R2', 'lot_monumentation', NULL, NULL,
   '{"lots_created": 4, "lots_monumented": 3}'),
  ('23-004', 'R3', 'marker_design', '2023-03-01', 'staff', NULL),
  ('23-004', 'R4', 'buffer_disturbance', NULL, NULL,
   '{"erosion_control_plan": true, "canopy_trees_removed": 2, "slope_existing_hv": 4, '
   '"slope_proposed_hv": 3, "uncompacted_depth_in": 18, "permeability_ratio": 1.0, '
   '"organic_matter_pct": 16, "sheet_flow_improved": true, "revegetation_plan": true, '
   '"stability_finding": false}'),
  ('23-005', 'R5', 'marker_design', '2023-03-01', 'staff', NULL))
  AS r (no, fid, kind, approved, approved_by, facts)
  ON r.no = p.permit_no;

-- every evaluation of the two functions, by permit and check
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM (SELECT * FROM checks.check_marker_records(1)
      UNION ALL
      SELECT * FROM checks.check_buffer_disturbance(1)) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph, e.check_code, e.message;
