-- The paragraphs a permit meets with a document (sql/221; docs/rule-m.md, "Permit records";
-- docs/checks.md): checks.check_requests judges each District request on record (3(d)
-- species_assessment, 3(g) requested_submittal, 9 abandonment_petition: a permit record with
-- requested_on) by its submittal; checks.check_documents judges 3(h) corps_approval (a permit
-- with an impact has the Corps' approval on record; a warning) and 4 erosion_control (a permit
-- that disturbs land has a Rule D erosion control plan, approved once the permit is decided,
-- submitted being enough before, claiming no Rule D section 5 exception). Measured: 1 when
-- missing (requests, Corps), the problems of the plan (erosion control).
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600).
-- Worked by hand:
--   23-001 approved, a fill (0,0)-(10,10): species assessment requested 2023-01-05,
--          submitted 2023-02-01 -> passes; "Geotechnical report" requested 2023-01-05, not
--          submitted -> fails; abandonment petition required 2023-01-05, submitted 2023-03-01
--          -> passes; the Corps' approval 2023-03-15 -> passes; erosion control plan
--          approved 2023-04-01 -> passes
--   23-002 approved, a fill (20,0)-(30,10), no Corps approval -> a warning; erosion control
--          plan submitted 2023-02-01 but never approved, and the permit is decided -> fails
--   23-003 under review, grading (40,0)-(50,10): no impact, no Corps approval needed; plan
--          submitted 2023-02-01 -> passes before the decision
--   23-004 approved, grading (60,0)-(70,10): plan approved 2023-04-01 claiming the Rule D
--          section 5 exception "5(a)", which 4 says does not apply -> fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', '{A1}'),
       (1, '23-002', 'approved', '2023-04-03', '{A1}'),
       (1, '23-003', 'under_review', NULL, '{A1}'),
       (1, '23-004', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', i.fid, ST_Multi(i.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'I1', ST_MakeEnvelope(0, 0, 10, 10, 26915)),
             ('23-002', 'I2', ST_MakeEnvelope(20, 0, 30, 10, 26915))) AS i (no, fid, geom)
  ON i.no = p.permit_no;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, p.permit_id, false, g.fid, ST_Multi(g.geom)
FROM core.permit p
JOIN (VALUES ('23-003', 'G3', ST_MakeEnvelope(40, 0, 50, 10, 26915)),
             ('23-004', 'G4', ST_MakeEnvelope(60, 0, 70, 10, 26915))) AS g (no, fid, geom)
  ON g.no = p.permit_no;
INSERT INTO core.permit_record (plan_area_id, permit_id, kind, title, requested_on,
                                submitted_on, approved_on, approved_by, document_ref, facts,
                                source_fid)
SELECT 1, p.permit_id, r.kind, r.title, r.requested, r.submitted, r.approved, r.approved_by,
       r.doc, r.facts::jsonb, r.fid
FROM core.permit p
JOIN (VALUES
  ('23-001', 'R1', 'species_assessment', NULL, DATE '2023-01-05', DATE '2023-02-01', NULL::date,
   NULL, NULL, NULL),
  ('23-001', 'R2', 'requested_submittal', 'Geotechnical report', '2023-01-05', NULL, NULL,
   NULL, NULL, NULL),
  ('23-001', 'R3', 'abandonment_petition', NULL, '2023-01-05', '2023-03-01', NULL, NULL,
   NULL, NULL),
  ('23-001', 'R4', 'corps_approval', NULL, NULL, NULL, '2023-03-15', NULL, 'MVP-2023-1', NULL),
  ('23-001', 'R5', 'erosion_control_plan', NULL, NULL, '2023-02-01', '2023-04-01', 'board',
   NULL, NULL),
  ('23-002', 'R6', 'erosion_control_plan', NULL, NULL, '2023-02-01', NULL, NULL, NULL, NULL),
  ('23-003', 'R7', 'erosion_control_plan', NULL, NULL, '2023-02-01', NULL, NULL, NULL, NULL),
  ('23-004', 'R8', 'erosion_control_plan', NULL, NULL, '2023-02-01', '2023-04-01', 'staff',
   NULL, '{"rule_d_exception": "5(a)"}'))
  AS r (no, fid, kind, title, requested, submitted, approved, approved_by, doc, facts)
  ON r.no = p.permit_no;

-- every evaluation of the two functions, by permit and check
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM (SELECT * FROM checks.check_requests(1)
      UNION ALL
      SELECT * FROM checks.check_documents(1)) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph, e.check_code;
