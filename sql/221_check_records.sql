-- 221_check_records: the paragraphs a permit meets with a document, not a map: what the
-- District asked for (3(d), 3(g), 9) and the approvals of other bodies and plans (3(h), 4).
-- Idempotent. The documents are permit records (core.permit_record, one kind each; the kinds,
-- their paragraphs and facts: docs/rule-m.md), so a permit missing one is a finding, never
-- silence.
--   3(d) species_assessment    "On District request, the applicant shall conduct an
--                              assessment of protected plant or animal species": each request
--                              on record (kind species_assessment with requested_on) has an
--                              assessment (its submitted_on, or the permit's
--                              species_assessment_on);
--   3(g) requested_submittal   "such other submittals as are reasonably requested by the
--                              District": each request (kind requested_submittal with
--                              requested_on) was submitted;
--   9    abandonment_petition  "the District may require a property owner to petition ... for
--                              partial abandonment of a public drainage system": each such
--                              requirement (kind abandonment_petition with requested_on) has
--                              its petition (submitted_on);
--   3(h) corps_approval        "This Rule does not eliminate the need for the applicant to
--                              obtain approval ... from the U.S. Army Corps of Engineers": a
--                              permit that fills, excavates or drains wetland (any impact) has
--                              the Corps' approval on record (kind corps_approval with
--                              approved_on: the Corps' decision, a permit or a letter that none
--                              is needed). A warning: the approval is another body's, the
--                              District records it;
--   4    erosion_control       "The requirements of District Rule D apply ... The exceptions of
--                              Rule D, section 5, do not apply": a permit that disturbs land
--                              (an impact, grading, new impervious surface, a structure, a BMP
--                              or a replacement) has a Rule D erosion control plan, approved
--                              once the permit is decided (submitted is enough before), that
--                              claims no Rule D section 5 exception (facts.rule_d_exception).
-- A request without a record of the District asking is not judged: the District asked for
-- nothing (not applicable).

-- What each permit the checks look at does, from its features (no geometry computed): the
-- activity sections 4, 5 and 7 and the record checks turn on. Same permits as
-- checks.permit_site (current, not denied or withdrawn).
CREATE OR REPLACE VIEW checks.permit_activity AS
SELECT p.plan_area_id, p.permit_id, p.permit_no, p.status,
       p.status IN ('approved', 'expired') AS decided, p.decided_on, p.tep_on,
       coalesce(p.baseline_on, p.decided_on, current_date) AS baseline_on,
       p.species_assessment_on, p.impact_started_on,
       coalesce(p.public_land, false) AS public_land,
       coalesce(p.involves_subdivision, false) AS involves_subdivision,
       f.grades, f.impervious, f.impacts, f.fills_or_excavates, f.replaces, f.structures,
       f.bmps,
       coalesce(p.involves_subdivision, false) OR f.grades OR f.impervious AS section5,
       f.impacts OR f.grades OR f.impervious OR f.replaces OR f.structures OR f.bmps
         AS disturbs_land
FROM core.permit p
CROSS JOIN LATERAL (
  SELECT EXISTS (SELECT 1 FROM core.grading x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id) AS grades,
         EXISTS (SELECT 1 FROM core.impervious x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id
                   AND x.condition = 'proposed') AS impervious,
         EXISTS (SELECT 1 FROM core.impact x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id) AS impacts,
         EXISTS (SELECT 1 FROM core.impact x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id
                   AND x.kind IN ('fill', 'excavate')) AS fills_or_excavates,
         EXISTS (SELECT 1 FROM core.replacement x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id) AS replaces,
         EXISTS (SELECT 1 FROM core.structure x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id) AS structures,
         EXISTS (SELECT 1 FROM core.bmp x
                 WHERE x.valid_to IS NULL AND x.permit_id = p.permit_id) AS bmps
) f
WHERE p.valid_to IS NULL AND p.status NOT IN ('denied', 'withdrawn');
COMMENT ON VIEW checks.permit_activity IS
  'Permits the checks look at (as checks.permit_site, without geometry) with what they do: '
  'grade, create impervious surface, impact wetland, fill or excavate, replace, build, place '
  'BMPs; section5: subdivides, grades or creates impervious surface; disturbs_land.';

DROP FUNCTION IF EXISTS checks.check_requests(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_requests(p_plan_area_id integer,
                                                 p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  SELECT k.paragraph, k.code, 'error', a.permit_id, NULL::bigint, r.permit_record_id,
         d.done_on IS NOT NULL, (d.done_on IS NULL)::int::numeric, 0::numeric, 'missing',
         CASE WHEN d.done_on IS NOT NULL
              THEN format('%s, requested by the District on %s, submitted on %s%s', w.what,
                          r.requested_on, d.done_on,
                          coalesce(' (' || r.document_ref || ')', ''))
              ELSE format('the District requested %s on %s; none is on record (%s)', w.what,
                          r.requested_on, k.rule) END,
         NULL::geometry
  FROM checks.permit_activity a
  JOIN core.permit_record r ON r.permit_id = a.permit_id AND r.valid_to IS NULL
   AND r.requested_on IS NOT NULL
  JOIN (VALUES
    ('species_assessment', '3(d)', 'species_assessment',
     'an assessment of protected plant or animal species', '3(d)'),
    ('requested_submittal', '3(g)', 'requested_submittal', NULL,
     '3(g): "such other submittals as are reasonably requested"'),
    ('abandonment_petition', '9', 'abandonment_petition',
     'a petition for partial abandonment of the public drainage system (Minn. Stat. 103E.805)',
     '9: a condition of issuance')
  ) k (kind, paragraph, code, what, rule) ON k.kind = r.kind
  CROSS JOIN LATERAL (
    SELECT coalesce(k.what, coalesce('"' || r.title || '"', 'a submittal')) AS what) w
  CROSS JOIN LATERAL (
    SELECT coalesce(r.submitted_on,
                    CASE WHEN r.kind = 'species_assessment' THEN a.species_assessment_on END)
             AS done_on) d
  WHERE a.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
$$;
COMMENT ON FUNCTION checks.check_requests(integer, bigint[]) IS
  '3(d), 3(g), 9: each District request on record (species assessment, other submittal, '
  'partial abandonment petition) has its submittal.';

DROP FUNCTION IF EXISTS checks.check_documents(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_documents(p_plan_area_id integer,
                                                  p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH scope AS MATERIALIZED (
    SELECT a.* FROM checks.permit_activity a
    WHERE a.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
      AND (a.impacts OR a.disturbs_land)
  ), corps AS (  -- the Corps' approval on record, else the latest application
    SELECT s.permit_id, c.permit_record_id, c.approved_on, c.submitted_on, c.document_ref
    FROM scope s
    LEFT JOIN LATERAL (
      SELECT r.* FROM core.permit_record r
      WHERE r.valid_to IS NULL AND r.permit_id = s.permit_id AND r.kind = 'corps_approval'
      ORDER BY r.approved_on IS NULL, r.approved_on DESC, r.submitted_on DESC NULLS LAST
      LIMIT 1) c ON true
    WHERE s.impacts
  ), plan AS (  -- the erosion control plan: approved first, then submitted, then the latest
    SELECT s.permit_id, s.decided, e.permit_record_id, e.approved_on, e.submitted_on,
           e.document_ref, nullif(btrim(e.facts ->> 'rule_d_exception'), '') AS exception
    FROM scope s
    LEFT JOIN LATERAL (
      SELECT r.* FROM core.permit_record r
      WHERE r.valid_to IS NULL AND r.permit_id = s.permit_id
        AND r.kind = 'erosion_control_plan'
      ORDER BY r.approved_on IS NULL, r.submitted_on IS NULL, r.approved_on DESC,
               r.submitted_on DESC
      LIMIT 1) e ON true
    WHERE s.disturbs_land
  )
  SELECT '3(h)', 'corps_approval', 'warning', c.permit_id, NULL::bigint, c.permit_record_id,
         c.approved_on IS NOT NULL, (c.approved_on IS NULL)::int::numeric, 0::numeric,
         'missing',
         CASE WHEN c.approved_on IS NOT NULL
              THEN format('U.S. Army Corps of Engineers approval of %s on record%s',
                          c.approved_on, coalesce(' (' || c.document_ref || ')', ''))
              WHEN c.submitted_on IS NOT NULL
              THEN format('the permit impacts wetland; the application to the U.S. Army Corps '
                          'of Engineers of %s has no approval on record yet (3(h))',
                          c.submitted_on)
              ELSE 'the permit impacts wetland and no U.S. Army Corps of Engineers approval is '
                   'on record (3(h): this Rule does not eliminate the need for it)' END,
         NULL::geometry
  FROM corps c
  UNION ALL
  SELECT '4', 'erosion_control', 'error', p.permit_id, NULL, p.permit_record_id,
         ok, ((NOT d.has_plan)::int + (p.exception IS NOT NULL)::int)::numeric, 0::numeric,
         'problems',
         concat_ws('; ',
           CASE WHEN p.approved_on IS NOT NULL
                THEN format('Rule D erosion control plan approved on %s%s', p.approved_on,
                            coalesce(' (' || p.document_ref || ')', ''))
                WHEN p.submitted_on IS NOT NULL AND NOT p.decided
                THEN format('Rule D erosion control plan submitted on %s, to be approved with '
                            'the decision', p.submitted_on)
                WHEN p.submitted_on IS NOT NULL
                THEN format('the Rule D erosion control plan submitted on %s was never approved',
                            p.submitted_on)
                ELSE 'the permit disturbs land and no Rule D erosion control plan is on record '
                     '(4: "The requirements of District Rule D apply")' END,
           CASE WHEN p.exception IS NOT NULL
                THEN format('it claims a Rule D section 5 exception (%s), which 4 says does not '
                            'apply', p.exception) END),
         NULL::geometry
  FROM plan p
  CROSS JOIN LATERAL (
    SELECT p.approved_on IS NOT NULL OR (NOT p.decided AND p.submitted_on IS NOT NULL)
             AS has_plan) d
  CROSS JOIN LATERAL (SELECT d.has_plan AND p.exception IS NULL AS ok) o
$$;
COMMENT ON FUNCTION checks.check_documents(integer, bigint[]) IS
  '3(h): the Corps approval of a permit that impacts wetland is on record; 4: a permit that '
  'disturbs land has an approved Rule D erosion control plan claiming no section 5 exception.';

GRANT SELECT ON checks.permit_activity TO rulem_etl;
GRANT EXECUTE ON FUNCTION checks.check_requests(integer, bigint[]),
  checks.check_documents(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('3(d)', 'species_assessment', 'checks.check_requests',
   '221_check_records.sql', 'error', 'higher', 'missing', 19,
   'On District request, the applicant conducts an assessment of protected plant or animal '
   'species.',
   'For each District request on record (permit_record species_assessment with requested_on): 1 '
   'when no assessment is on record (its submitted_on, or permit.species_assessment_on); fails '
   'above zero.',
   'The District requested no species assessment.'),
  ('3(g)', 'requested_submittal', 'checks.check_requests',
   '221_check_records.sql', 'error', 'higher', 'missing', 24,
   'The applicant provides the other submittals the District reasonably requests.',
   'For each District request on record (permit_record requested_submittal with requested_on): 1 '
   'when it was not submitted (submitted_on); fails above zero.',
   'The District requested nothing more.'),
  ('3(h)', 'corps_approval', 'checks.check_documents',
   '221_check_records.sql', 'warning', 'higher', 'missing', 25,
   'The applicant has the U.S. Army Corps of Engineers'' approval for the activity (this Rule '
   'does not replace it).',
   'Missing Corps approval (a permit_record corps_approval with approved_on) of a permit with a '
   'wetland impact; fails above zero.',
   'No wetland impact.'),
  ('4', 'erosion_control', 'checks.check_documents',
   '221_check_records.sql', 'error', 'higher', 'problems', 26,
   'The requirements of District Rule D (erosion control) apply, without the exceptions of Rule '
   'D, section 5.',
   'Problems of a permit that disturbs land (impact, grading, new impervious surface, structure, '
   'BMP or replacement): 1 when no Rule D erosion control plan is approved (submitted is enough '
   'before the decision), plus 1 when the plan claims a Rule D section 5 exception '
   '(facts.rule_d_exception); fails above zero.',
   'The permit disturbs no land.'),
  ('9', 'abandonment_petition', 'checks.check_requests',
   '221_check_records.sql', 'error', 'higher', 'missing', 82,
   'Where the District requires it as a condition of issuance, the owner petitions for partial '
   'abandonment of the public drainage system.',
   'For each requirement on record (permit_record abandonment_petition with requested_on): 1 '
   'when no petition was filed (submitted_on); fails above zero.',
   'The District required no petition.');
SELECT checks.finish_registration('221_check_records.sql');
