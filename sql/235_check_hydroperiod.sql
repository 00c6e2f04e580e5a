-- 235_check_hydroperiod: 5(d), the 10-year bounce and inundation period of each receiving
-- wetland against its susceptibility class. Idempotent.
-- The class is the receiving wetland's susceptibility_class (current version: the class
-- follows the wetland type resulting from the CWMP). Limits come from core.susceptibility_limit
-- in force on the permit's baseline date; a NULL bounce limit means no limit. A receiving
-- wetland without a class cannot be checked: a warning on bounce, and inundation is not
-- evaluated. The modelled figures are the permit's own (the rule's equal-share assumption for
-- several parcels draining to one wetland belongs to the model that produced them).
--
-- Analysis missing: 5(d) applies to "subdivision, grading or the creation of impervious
-- surface subject to this Rule" (section 5's opening). So a permit needs the analysis when
-- (a) 2(a) says it needs a Rule M permit (at least one trigger, checks.applicability in
-- sql/210: the work is subject to the Rule) and (b) it subdivides, grades (any grading of the
-- permit) or proposes impervious surface (the activities of section 5, as for 5(c)). A permit
-- that meets both and has no current hydroperiod record cannot be checked: bounce and
-- inundation are not evaluated (passed NULL: an error finding each, sql/280), never "not
-- applicable". Fill, excavation or drainage alone is section 7's, not section 5's; a permit
-- with no 2(a) trigger is not subject to the Rule (2(a) warns about it).

DROP FUNCTION IF EXISTS checks.check_hydroperiod(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_hydroperiod(p_plan_area_id integer,
                                                    p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH h AS (
    SELECT ps.permit_id, h.hydroperiod_id, w.geom, w.susceptibility_class AS class,
           h.proposed_bounce_ft - h.existing_bounce_ft AS bounce,
           h.proposed_inundation_days - h.existing_inundation_days AS inundation,
           l.max_bounce_increase_ft AS bounce_max, l.max_inundation_increase_days AS days_max
    FROM checks.permit_site ps
    JOIN core.hydroperiod h ON h.permit_id = ps.permit_id AND h.valid_to IS NULL
    LEFT JOIN core.wetland w ON w.wetland_id = h.wetland_id AND w.valid_to IS NULL
    LEFT JOIN LATERAL (
      SELECT sl.* FROM core.susceptibility_limit sl
      WHERE sl.plan_area_id = p_plan_area_id AND sl.susceptibility_class = w.susceptibility_class
        AND sl.effective_on <= ps.baseline_on
      ORDER BY sl.effective_on DESC LIMIT 1
    ) l ON true
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), unrecorded AS MATERIALIZED (  -- the permits with no hydroperiod record, and their work
    SELECT ps.permit_id,
           array_to_string(ARRAY[
             CASE WHEN ps.involves_subdivision THEN 'subdivides' END,
             CASE WHEN EXISTS (SELECT 1 FROM core.grading g
                               WHERE g.valid_to IS NULL AND g.permit_id = ps.permit_id)
                  THEN 'grades' END,
             CASE WHEN EXISTS (SELECT 1 FROM core.impervious i
                               WHERE i.valid_to IS NULL AND i.permit_id = ps.permit_id
                                 AND i.condition = 'proposed')
                  THEN 'creates impervious surface' END], ', ') AS activity
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND NOT EXISTS (SELECT 1 FROM core.hydroperiod h
                      WHERE h.valid_to IS NULL AND h.permit_id = ps.permit_id)
  ), triggered AS MATERIALIZED (  -- 2(a), only for those permits, in one call
    SELECT a.permit_id,
           concat_ws(', ', CASE WHEN a.i = 1 THEN '(i)' END, CASE WHEN a.ii = 1 THEN '(ii)' END,
                     CASE WHEN a.iii = 1 THEN '(iii)' END) AS triggers
    FROM checks.applicability(p_plan_area_id, ARRAY(SELECT u.permit_id FROM unrecorded u
                                                     WHERE u.activity <> '')) a
    WHERE a.required
  )
  SELECT '5(d)', 'bounce',
         CASE WHEN h.class IS NULL THEN 'warning' ELSE 'error' END,
         h.permit_id, NULL::bigint, h.hydroperiod_id,
         h.class IS NOT NULL AND (h.bounce_max IS NULL OR h.bounce <= h.bounce_max),
         h.bounce, h.bounce_max, 'ft',
         CASE WHEN h.class IS NULL
              THEN 'the receiving wetland has no susceptibility class: 5(d) cannot be checked'
              ELSE format('10-year bounce +%s ft into a %s-susceptibility wetland (limit %s)',
                          h.bounce, h.class, coalesce('+' || h.bounce_max || ' ft', 'none'))
              END,
         CASE WHEN h.class IS NULL OR h.bounce > h.bounce_max THEN h.geom END
  FROM h
  UNION ALL
  SELECT '5(d)', 'inundation', 'error', h.permit_id, NULL, h.hydroperiod_id,
         h.inundation <= h.days_max, h.inundation, h.days_max, 'days',
         format('10-year inundation period +%s days into a %s-susceptibility wetland '
                '(limit +%s days)', h.inundation, h.class, h.days_max),
         CASE WHEN h.inundation > h.days_max THEN h.geom END
  FROM h WHERE h.class IS NOT NULL
  UNION ALL  -- the analysis the permit needs and does not have
  SELECT '5(d)', k.code, 'error', m.permit_id, NULL, NULL, NULL::boolean, NULL::numeric,
         NULL::numeric, k.unit,
         format('not evaluated: analysis missing: the permit %s and needs a Rule M permit '
                '(2(a)%s), but no 5(d) hydroperiod record (10-year %s of the receiving '
                'wetland, existing and proposed) is on record', m.activity, m.triggers, k.what),
         NULL::geometry
  FROM unrecorded c
  JOIN triggered t ON t.permit_id = c.permit_id
  CROSS JOIN LATERAL (SELECT c.permit_id, c.activity, t.triggers) m
  CROSS JOIN (VALUES ('bounce', 'ft', 'bounce'), ('inundation', 'days', 'inundation period'))
    k (code, unit, what)
  WHERE c.activity <> ''
$$;
COMMENT ON FUNCTION checks.check_hydroperiod(integer, bigint[]) IS
  '5(d): increase of the 10-year bounce and inundation period against the receiving '
  'wetland''s susceptibility class; not evaluated when a permit subject to the Rule that '
  'subdivides, grades or creates impervious surface has no hydroperiod record.';

GRANT EXECUTE ON FUNCTION checks.check_hydroperiod(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('5(d)', 'bounce', 'checks.check_hydroperiod',
   '235_check_hydroperiod.sql', 'error', 'higher', 'ft', 40,
   'The 10-year bounce of the receiving wetland increases no more than its susceptibility class '
   'allows.',
   'Proposed minus existing 10-year bounce against the class limit of core.susceptibility_limit '
   '(no limit for least susceptible); fails above it. A warning when the receiving wetland has no '
   'susceptibility class; not evaluated when the permit needs the hydroperiod analysis and has '
   'none.',
   'No hydroperiod record, and the permit needs none (no 2(a) trigger, or it neither subdivides, '
   'grades nor creates impervious surface).'),
  ('5(d)', 'inundation', 'checks.check_hydroperiod',
   '235_check_hydroperiod.sql', 'error', 'higher', 'days', 41,
   'The 10-year inundation period of the receiving wetland increases no more than its '
   'susceptibility class allows.',
   'Proposed minus existing inundation period against the class limit of '
   'core.susceptibility_limit; fails above it, and is not evaluated when the permit needs the '
   'hydroperiod analysis and has none.',
   'No hydroperiod record and the permit needs none, or the receiving wetland has no '
   'susceptibility class.');
SELECT checks.finish_registration('235_check_hydroperiod.sql');
