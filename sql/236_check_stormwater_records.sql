-- 236_check_stormwater_records: the section 5 paragraphs a permit meets with an analysis or a
-- statement, not a map: 5(a) site design, 5(b)(ii) peak flow rates, 5(f) groundwater flow.
-- Idempotent. Each reads a permit record (core.permit_record; kinds and facts:
-- docs/rule-m.md) and compares its figures with the rule's numbers, as 5(d) does with the
-- hydroperiod record (sql/235).
--   5(a)     site_design       "The applicant shall incorporate site design principles and Best
--                              Management Practices to minimize impervious surface, maximize
--                              on-site surface runoff infiltration, and reduce peak runoff flow
--                              rates and off-site pollutant transport": a permit doing section
--                              5's work (subdivision, grading, new impervious surface) has a
--                              site design statement (kind site_design) whose facts say how it
--                              meets each of the four aims (minimize_impervious,
--                              maximize_infiltration, reduce_peak_flow,
--                              reduce_pollutant_transport); measured: the aims not addressed;
--   5(b)(ii) peak_flow         "the applicant shall meet the peak flow control standards of
--                              paragraph 3(b)" of Rule C: for each storm event of
--                              rate_control_events (recurrence in years), the proposed peak rate
--                              (facts.proposed_cfs.<event>) does not exceed the existing one
--                              (facts.existing_cfs.<event>); measured: the increase, cfs;
--   5(f)     groundwater_flow  "Soil amendment, excavation or filling pursuant to development
--                              ... shall not impede groundwater flow": the analysis (kind
--                              groundwater) gives the groundwater flow through the site before
--                              and after (facts.existing_flow, facts.proposed_flow, in one unit,
--                              facts.unit); measured: proposed / existing, against
--                              groundwater_flow_min_ratio.
-- Analysis missing: as for 5(d), a permit subject to the Rule (a 2(a) trigger,
-- checks.applicability) that does section 5's work needs the rate control analysis, and one
-- that does section 5's work or fills or excavates wetland needs the groundwater analysis;
-- without the record both are not evaluated (an error finding, never a pass). A record that
-- lacks a figure leaves that case not evaluated, naming the figure.

-- A number, boolean or text fact of a record's facts (jsonb) at a path; NULL when absent or
-- of another type (a malformed record is "not evaluated", never an error of the whole run).
CREATE OR REPLACE FUNCTION checks.fact_num(p_facts jsonb, VARIADIC p_path text[])
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(p_facts #> p_path) = 'number'
              THEN (p_facts #> p_path)::numeric END
$$;
CREATE OR REPLACE FUNCTION checks.fact_bool(p_facts jsonb, VARIADIC p_path text[])
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(p_facts #> p_path) = 'boolean'
              THEN (p_facts #> p_path)::boolean END
$$;
CREATE OR REPLACE FUNCTION checks.fact_text(p_facts jsonb, VARIADIC p_path text[])
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(btrim(p_facts #>> p_path), '')
$$;
COMMENT ON FUNCTION checks.fact_num(jsonb, text[]) IS
  'A numeric fact of a permit record at a path, NULL when absent or not a number.';
COMMENT ON FUNCTION checks.fact_bool(jsonb, text[]) IS
  'A true/false fact of a permit record at a path, NULL when absent or not a boolean.';
COMMENT ON FUNCTION checks.fact_text(jsonb, text[]) IS
  'A text fact of a permit record at a path, NULL when absent or blank.';

-- What the section 5 work of a permit is, in words (for the "analysis missing" messages).
CREATE OR REPLACE FUNCTION checks.section5_words(a checks.permit_activity)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_string(ARRAY[
    CASE WHEN a.involves_subdivision THEN 'subdivides' END,
    CASE WHEN a.grades THEN 'grades' END,
    CASE WHEN a.impervious THEN 'creates impervious surface' END,
    CASE WHEN a.fills_or_excavates THEN 'fills or excavates wetland' END], ', ')
$$;
COMMENT ON FUNCTION checks.section5_words(checks.permit_activity) IS
  'What a permit does that sections 5 and 5(f) govern, in words.';

DROP FUNCTION IF EXISTS checks.check_stormwater_records(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_stormwater_records(p_plan_area_id integer,
                                                           p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH scope AS MATERIALIZED (
    SELECT a AS act, a.* FROM checks.permit_activity a
    WHERE a.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
      AND (a.section5 OR a.fills_or_excavates)
  ), rec AS MATERIALIZED (
    SELECT r.* FROM core.permit_record r
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
      AND r.kind IN ('site_design', 'rate_control', 'groundwater')
      AND r.permit_id IN (SELECT s.permit_id FROM scope s)
  ), aim (key, words) AS (
    VALUES ('minimize_impervious', 'minimize impervious surface'),
           ('maximize_infiltration', 'maximize on-site surface runoff infiltration'),
           ('reduce_peak_flow', 'reduce peak runoff flow rates'),
           ('reduce_pollutant_transport', 'reduce off-site pollutant transport')
  ), design AS (
    SELECT s.permit_id, d.permit_record_id, d.document_ref,
           (SELECT count(*) FROM aim
            WHERE d.permit_record_id IS NULL
               OR checks.fact_text(d.facts, aim.key) IS NULL) AS missing,
           (SELECT string_agg(aim.words, '; ') FROM aim
            WHERE d.permit_record_id IS NOT NULL
              AND checks.fact_text(d.facts, aim.key) IS NULL) AS missing_words
    FROM scope s
    LEFT JOIN LATERAL (
      SELECT r.* FROM rec r WHERE r.permit_id = s.permit_id AND r.kind = 'site_design'
      ORDER BY r.submitted_on DESC NULLS LAST, r.permit_record_id DESC LIMIT 1) d ON true
    WHERE s.section5
  ), peak AS (
    SELECT r.permit_id, r.permit_record_id, e.event,
           checks.fact_num(r.facts, 'existing_cfs', e.event) AS existing,
           checks.fact_num(r.facts, 'proposed_cfs', e.event) AS proposed
    FROM rec r JOIN scope s USING (permit_id)
    CROSS JOIN LATERAL unnest(string_to_array(core.param_text(
      p_plan_area_id, 'rate_control_events', s.baseline_on), ',')) x (raw)
    CROSS JOIN LATERAL (SELECT btrim(x.raw) AS event) e
    WHERE r.kind = 'rate_control' AND s.section5
  ), flow AS (
    SELECT r.permit_id, r.permit_record_id,
           checks.fact_num(r.facts, 'existing_flow') AS existing,
           checks.fact_num(r.facts, 'proposed_flow') AS proposed,
           coalesce(checks.fact_text(r.facts, 'unit'), '') AS unit,
           core.param_num(p_plan_area_id, 'groundwater_flow_min_ratio', s.baseline_on)
             AS min_ratio
    FROM rec r JOIN scope s USING (permit_id)
    WHERE r.kind = 'groundwater'
  ), missing AS (  -- the analyses a permit subject to the Rule needs and does not have
    SELECT s.permit_id, k.paragraph, k.code, k.unit, k.what, checks.section5_words(s.act) AS work
    FROM scope s
    CROSS JOIN (VALUES
      ('5(b)(ii)', 'peak_flow', 'cfs', 'rate_control',
       'Rule C 3(b) rate control analysis (existing and proposed peak flow rates)'),
      ('5(f)', 'groundwater_flow', 'ratio', 'groundwater',
       'groundwater analysis (existing and proposed groundwater flow through the site)')
    ) k (paragraph, code, unit, kind, what)
    WHERE (k.code = 'groundwater_flow' OR s.section5)
      AND NOT EXISTS (SELECT 1 FROM rec r WHERE r.permit_id = s.permit_id AND r.kind = k.kind)
  ), needed AS (  -- 2(a), only for the permits without a record
    SELECT m.*, concat_ws(', ', CASE WHEN a.i = 1 THEN '(i)' END,
                          CASE WHEN a.ii = 1 THEN '(ii)' END,
                          CASE WHEN a.iii = 1 THEN '(iii)' END) AS triggers
    FROM checks.applicability(p_plan_area_id, ARRAY(SELECT DISTINCT permit_id FROM missing)) a
    JOIN missing m ON m.permit_id = a.permit_id
    WHERE a.required
  )
  SELECT '5(a)', 'site_design', 'error', d.permit_id, NULL::bigint, d.permit_record_id,
         d.missing = 0, d.missing::numeric, 0::numeric, 'aims',
         CASE WHEN d.permit_record_id IS NULL
              THEN 'the permit subdivides, grades or creates impervious surface, and no site '
                   'design statement (5(a): site design principles and BMPs to minimize '
                   'impervious surface, maximize on-site infiltration, and reduce peak runoff '
                   'rates and off-site pollutant transport) is on record'
              WHEN d.missing = 0
              THEN format('the site design statement%s says how the site meets each of the '
                          'four aims of 5(a)', coalesce(' (' || d.document_ref || ')', ''))
              ELSE format('the site design statement%s does not say how the site would %s',
                          coalesce(' (' || d.document_ref || ')', ''), d.missing_words) END,
         NULL::geometry
  FROM design d
  UNION ALL
  SELECT '5(b)(ii)', 'peak_flow', 'error', p.permit_id, NULL, p.permit_record_id,
         p.proposed <= p.existing, round(p.proposed - p.existing, 2), 0::numeric, 'cfs',
         CASE WHEN p.existing IS NULL OR p.proposed IS NULL
              THEN format('not evaluated: the rate control analysis gives no %s-year %s peak '
                          'flow rate (facts.%s.%s)', p.event,
                          CASE WHEN p.existing IS NULL THEN 'existing' ELSE 'proposed' END,
                          CASE WHEN p.existing IS NULL THEN 'existing_cfs'
                               ELSE 'proposed_cfs' END, p.event)
              WHEN p.proposed <= p.existing
              THEN format('%s-year, 24-hour peak flow %s cfs proposed, %s cfs existing: no '
                          'increase', p.event, round(p.proposed, 2), round(p.existing, 2))
              ELSE format('%s-year, 24-hour peak flow %s cfs proposed > %s cfs existing (+%s '
                          'cfs): Rule C 3(b) allows no increase', p.event, round(p.proposed, 2),
                          round(p.existing, 2), round(p.proposed - p.existing, 2)) END,
         NULL::geometry
  FROM peak p
  UNION ALL
  SELECT '5(f)', 'groundwater_flow', 'error', f.permit_id, NULL, f.permit_record_id,
         r.ratio >= f.min_ratio, r.ratio, f.min_ratio, 'ratio',
         CASE WHEN r.ratio IS NULL
              THEN 'not evaluated: the groundwater analysis gives no positive existing flow '
                   'and proposed flow (facts.existing_flow, facts.proposed_flow)'
              WHEN r.ratio >= f.min_ratio
              THEN format('groundwater flow through the site %s %s proposed, %s %s existing: '
                          '%s of it (at least %s): not impeded', f.proposed, f.unit, f.existing,
                          f.unit, r.ratio, f.min_ratio)
              ELSE format('groundwater flow through the site %s %s proposed, %s %s existing: '
                          '%s of it < %s: the excavation or fill impedes it (5(f))', f.proposed,
                          f.unit, f.existing, f.unit, r.ratio, f.min_ratio) END,
         NULL::geometry
  FROM flow f
  CROSS JOIN LATERAL (
    SELECT CASE WHEN f.existing > 0 AND f.proposed >= 0
                THEN round(f.proposed / f.existing, 2) END AS ratio) r
  UNION ALL
  SELECT n.paragraph, n.code, 'error', n.permit_id, NULL, NULL, NULL::boolean, NULL::numeric,
         NULL::numeric, n.unit,
         format('not evaluated: analysis missing: the permit %s and needs a Rule M permit '
                '(2(a)%s), but no %s is on record', n.work, n.triggers, n.what),
         NULL::geometry
  FROM needed n
$$;
COMMENT ON FUNCTION checks.check_stormwater_records(integer, bigint[]) IS
  '5(a) the site design statement addresses the four aims; 5(b)(ii) proposed peak flow rates '
  'do not exceed existing ones; 5(f) groundwater flow is not impeded (not evaluated when a '
  'permit that needs the analysis has none).';

GRANT EXECUTE ON FUNCTION checks.fact_num(jsonb, text[]), checks.fact_bool(jsonb, text[]),
  checks.fact_text(jsonb, text[]), checks.section5_words(checks.permit_activity),
  checks.check_stormwater_records(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('5(a)', 'site_design', 'checks.check_stormwater_records',
   '236_check_stormwater_records.sql', 'error', 'higher', 'aims', 28,
   'Site design principles and BMPs minimize impervious surface, maximize on-site infiltration '
   'and reduce peak runoff rates and off-site pollutant transport.',
   'Aims of 5(a) the permit''s site design statement (permit_record site_design, facts '
   'minimize_impervious, maximize_infiltration, reduce_peak_flow, reduce_pollutant_transport) '
   'does not address, 4 without a statement; fails above zero.',
   'The permit neither subdivides, grades nor proposes impervious surface.'),
  ('5(b)(ii)', 'peak_flow', 'checks.check_stormwater_records',
   '236_check_stormwater_records.sql', 'error', 'higher', 'cfs', 29,
   'Peak flow rates meet Rule C paragraph 3(b): no increase over existing rates for the storm '
   'events of rate_control_events.',
   'Per storm event of rate_control_events, proposed minus existing peak flow rate of the rate '
   'control analysis (permit_record rate_control, facts existing_cfs and proposed_cfs by event); '
   'fails above zero, and is not evaluated when a permit subject to the Rule that subdivides, '
   'grades or creates impervious surface has no analysis, or the analysis lacks a figure.',
   'No rate control analysis, and the permit needs none (no 2(a) trigger, or no section 5 '
   'work).'),
  ('5(f)', 'groundwater_flow', 'checks.check_stormwater_records',
   '236_check_stormwater_records.sql', 'error', 'lower', 'ratio', 43,
   'Soil amendment, excavation or filling does not impede groundwater flow.',
   'Proposed over existing groundwater flow through the site of the groundwater analysis '
   '(permit_record groundwater, facts existing_flow and proposed_flow), against '
   'groundwater_flow_min_ratio; fails below it, and is not evaluated when a permit subject to '
   'the Rule that does section 5 work or fills or excavates wetland has no analysis.',
   'No groundwater analysis, and the permit needs none.');
SELECT checks.finish_registration('236_check_stormwater_records.sql');
