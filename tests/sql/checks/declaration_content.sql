-- What section 6's documents state and who executed them (sql/246,
-- checks.check_declaration_content; docs/checks.md): 6 declaration_content (each buffer
-- declaration states the subdivision clause; each public-land agreement in its place the
-- conveyance clause; a clause not recorded as stated is missing; an error once decided, a
-- warning before) and 10 agreement_executor (each public-land agreement was executed for the
-- District by its board, not staff; not recorded is a finding too). Measured: 1 per missing
-- clause or executor problem.
--
-- CWMP area (-1000,-1000)-(5000,5000) in EPSG:26915; parcels P1, P2. Worked by hand:
--   23-001 approved on P1: declaration D1 with the subdivision clause -> content passes;
--          declaration D2 without it (not recorded as stated) -> content fails (error)
--   23-002 under review, public land, on P2: agreement A1 with the conveyance clause,
--          executed by the board -> both pass; agreement A2 without the clause, executed by
--          staff -> content fails (a warning: undecided) and executor fails (an error
--          whatever the permit's status); agreement A3
--          with the clause, executor not recorded -> content passes, executor fails

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'P-1', 'P1', ST_Multi(ST_MakeEnvelope(0, 0, 100, 100, 26915))),
       (1, 'P-2', 'P2', ST_Multi(ST_MakeEnvelope(100, 0, 200, 100, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, public_land, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-04-03', false, '{P1}'),
       (1, '23-002', 'under_review', NULL, true, '{P2}');
INSERT INTO core.declaration (plan_area_id, permit_id, kind, recording_no,
                              public_land_agreement, subdivision_clause, conveyance_clause,
                              executed_by, source_fid)
SELECT 1, p.permit_id, 'buffer', d.fid, d.agreement, d.subdivision, d.conveyance,
       d.executed_by, d.fid
FROM core.permit p
JOIN (VALUES ('23-001', 'D1', false, true, NULL, NULL),
             ('23-001', 'D2', false, NULL, NULL, NULL),
             ('23-002', 'A1', true, NULL, true, 'board'),
             ('23-002', 'A2', true, NULL, NULL, 'staff'),
             ('23-002', 'A3', true, NULL, true, NULL))
  AS d (no, fid, agreement, subdivision, conveyance, executed_by)
  ON d.no = p.permit_no;

-- every evaluation, by document and check
SELECT f.feature_key AS document, e.paragraph, e.check_code, e.severity, e.passed,
       e.measured_value, e.limit_value, e.unit, e.message
FROM checks.check_declaration_content(1) e
LEFT JOIN core.feature f ON f.feature_id = e.feature_id
ORDER BY f.feature_key, e.check_code;
