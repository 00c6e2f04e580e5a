-- The section 5 paragraphs met with an analysis (sql/236, checks.check_stormwater_records;
-- docs/rule-m.md, "Permit records"): 5(a) site_design (a permit doing section 5's work has a
-- site design statement addressing the four aims; measured: aims not addressed), 5(b)(ii)
-- peak_flow (per storm event of rate_control_events, 2, 10 and 100 years: proposed minus
-- existing peak rate, cfs, not above 0) and 5(f) groundwater_flow (proposed / existing
-- groundwater flow through the site, at least groundwater_flow_min_ratio, 1.0). A permit
-- subject to the rule without the analysis it needs: not evaluated (never a pass).
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600);
-- delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100);
-- permits approved 2023-04-03. Worked by hand:
--   23-001 grading that alters runoff (300,300)-(310,310) (2(a)(iii), section 5's work):
--          site design addresses all four aims -> 0, passes;
--          peak flow existing 2-yr 1.2, 10-yr 2.9, 100-yr 6.1 cfs, proposed 1.0, 3.1, 6.1:
--          2-yr -0.2 passes, 10-yr +0.2 fails, 100-yr 0 passes;
--          groundwater 100 -> 90 gpd: 0.90 < 1.0 fails
--   23-002 grading that alters runoff (320,300)-(330,310): site design with two aims
--          (minimize_impervious, reduce_peak_flow) -> 2 fails; no rate control or
--          groundwater analysis -> both not evaluated
--   23-003 a fill (0,0)-(10,10) in W1 only (2(a)(i), not section 5's work): no site design
--          or peak flow needed; it fills wetland, so groundwater is needed and missing -> not
--          evaluated

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
SELECT 1, no, 'approved', DATE '2023-04-03', '{A1}'
FROM unnest('{23-001,23-002,23-003}'::text[]) AS no;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, p.permit_id, true, g.fid, ST_Multi(g.geom)
FROM core.permit p
JOIN (VALUES ('23-001', 'G1', ST_MakeEnvelope(300, 300, 310, 310, 26915)),
             ('23-002', 'G2', ST_MakeEnvelope(320, 300, 330, 310, 26915))) AS g (no, fid, geom)
  ON g.no = p.permit_no;
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'I3', ST_Multi(ST_MakeEnvelope(0, 0, 10, 10, 26915))
FROM core.permit WHERE permit_no = '23-003';
INSERT INTO core.permit_record (plan_area_id, permit_id, kind, submitted_on, facts, source_fid)
SELECT 1, p.permit_id, r.kind, DATE '2023-02-01', r.facts::jsonb, r.fid
FROM core.permit p
JOIN (VALUES
  ('23-001', 'R1', 'site_design', '{"minimize_impervious": "pervious pavers", '
     '"maximize_infiltration": "rain gardens", "reduce_peak_flow": "detention", '
     '"reduce_pollutant_transport": "sump manholes"}'),
  ('23-001', 'R2', 'rate_control', '{"existing_cfs": {"2": 1.2, "10": 2.9, "100": 6.1}, '
     '"proposed_cfs": {"2": 1.0, "10": 3.1, "100": 6.1}}'),
  ('23-001', 'R3', 'groundwater', '{"existing_flow": 100, "proposed_flow": 90, "unit": "gpd"}'),
  ('23-002', 'R4', 'site_design', '{"minimize_impervious": "narrow streets", '
     '"reduce_peak_flow": "detention"}'))
  AS r (no, fid, kind, facts)
  ON r.no = p.permit_no;

-- every evaluation, by permit and check
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_stormwater_records(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph, e.check_code, e.message;
