-- 247_check_buffer_records: the section 6 paragraphs a permit meets with a written approval or
-- a record of figures, not a map: 6(b)'s marker design and the lots a subdivision creates,
-- 6(e)'s criteria for disturbing an established buffer. Idempotent. Each reads permit records
-- (core.permit_record; kinds and facts: docs/rule-m.md).
--   6(b)      marker_design       "permanent, free-standing markers ... with a design and text
--                                 approved by the District staff in writing": a permit with a
--                                 buffer of its own has the written approval (kind
--                                 marker_design with approved_on), unless on public land an
--                                 approved vegetation plan stands in for markers (as sql/254
--                                 reads 6(b)) and it has no markers. An error once decided, a
--                                 warning before;
--   6(b)      lot_monumentation   "If a District permit is sought for a subdivision, the
--                                 monumentation requirement will apply to each lot of record to
--                                 be created": a subdividing permit with a buffer records the
--                                 lots of record it creates along the buffer and how many are
--                                 monumented (kind lot_monumentation, facts lots_created,
--                                 lots_monumented); measured: lots without; not evaluated
--                                 without the record;
--   6(e)(i)   disturbance_erosion_plan, 6(e)(ii) canopy_intact, 6(e)(iii) restored_buffer,
--   6(e)(iv)  revegetation_plan, 6(e)(vi) disturbance_stability
--                                 "Established buffer may be disturbed ... if the following
--                                 criteria are met": a permit whose grading disturbs a buffer
--                                 (at least area_tolerance_m2 of grading inside one, as 6(e)(v)
--                                 in sql/240) has a buffer disturbance record (kind
--                                 buffer_disturbance) whose facts meet each criterion:
--                                 (i) erosion_control_plan true; (ii) canopy_trees_removed 0;
--                                 (iii) slope_proposed_hv no steeper than the steeper of
--                                 slope_existing_hv and buffer_slope_max_hv (5:1),
--                                 uncompacted_depth_in at least buffer_soil_depth_in (18),
--                                 permeability_ratio at least buffer_permeability_min_ratio,
--                                 organic_matter_pct between buffer_organic_min_pct and
--                                 buffer_organic_max_pct (5-15), sheet_flow_improved and
--                                 habitat_maintained true (one case each); (iv)
--                                 revegetation_plan true; (vi) stability_finding true. Without
--                                 the record each is not evaluated; a fact missing leaves its
--                                 case not evaluated.

DROP FUNCTION IF EXISTS checks.check_marker_records(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_marker_records(p_plan_area_id integer,
                                                       p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH scope AS MATERIALIZED (
    SELECT a.permit_id, a.decided, a.public_land, a.involves_subdivision, p.vegetation_plan_on,
           EXISTS (SELECT 1 FROM core.buffer_marker m
                   WHERE m.valid_to IS NULL AND m.permit_id = a.permit_id) AS has_markers
    FROM checks.permit_activity a
    JOIN core.permit p ON p.permit_id = a.permit_id AND p.valid_to IS NULL
    WHERE a.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
      AND EXISTS (SELECT 1 FROM core.buffer b
                  WHERE b.valid_to IS NULL AND b.permit_id = a.permit_id)
  ), design AS (
    SELECT s.*, r.permit_record_id, r.approved_on, r.approved_by, r.document_ref,
           r.submitted_on
    FROM scope s
    LEFT JOIN LATERAL (
      SELECT x.* FROM core.permit_record x
      WHERE x.valid_to IS NULL AND x.permit_id = s.permit_id AND x.kind = 'marker_design'
      ORDER BY x.approved_on IS NULL, x.approved_on DESC, x.submitted_on DESC NULLS LAST
      LIMIT 1) r ON true
    WHERE s.has_markers OR NOT (s.public_land AND s.vegetation_plan_on IS NOT NULL)
  ), lots AS (
    SELECT s.permit_id, r.permit_record_id,
           checks.fact_num(r.facts, 'lots_created') AS created,
           checks.fact_num(r.facts, 'lots_monumented') AS monumented
    FROM scope s
    LEFT JOIN LATERAL (
      SELECT x.* FROM core.permit_record x
      WHERE x.valid_to IS NULL AND x.permit_id = s.permit_id AND x.kind = 'lot_monumentation'
      ORDER BY x.submitted_on DESC NULLS LAST, x.permit_record_id DESC LIMIT 1) r ON true
    WHERE s.involves_subdivision
  )
  SELECT '6(b)', 'marker_design', CASE WHEN d.decided THEN 'error' ELSE 'warning' END,
         d.permit_id, NULL::bigint, d.permit_record_id,
         d.approved_on IS NOT NULL, (d.approved_on IS NULL)::int::numeric, 0::numeric,
         'missing',
         CASE WHEN d.approved_on IS NOT NULL
              THEN format('marker design and text approved in writing by the District%s on %s%s',
                          CASE d.approved_by WHEN 'staff' THEN '''s staff'
                                             WHEN 'board' THEN '''s board' ELSE '' END,
                          d.approved_on, coalesce(' (' || d.document_ref || ')', ''))
              WHEN d.submitted_on IS NOT NULL
              THEN format('the marker design and text submitted on %s have no written approval '
                          'of the District on record (6(b))', d.submitted_on)
              ELSE 'the permit has a buffer, and no written approval of its markers'' design and '
                   'text by the District is on record (6(b))' END,
         NULL::geometry
  FROM design d
  UNION ALL
  SELECT '6(b)', 'lot_monumentation', 'error', l.permit_id, NULL, l.permit_record_id,
         CASE WHEN l.created IS NOT NULL AND l.monumented IS NOT NULL
              THEN l.monumented >= l.created END,
         greatest(l.created - l.monumented, 0), 0::numeric, 'lots',
         CASE WHEN l.permit_record_id IS NULL
              THEN 'not evaluated: the permit subdivides land with a buffer, but no record of '
                   'the lots of record it creates along the buffer and their monumentation '
                   '(permit record lot_monumentation) is on record'
              WHEN l.created IS NULL OR l.monumented IS NULL
              THEN 'not evaluated: the lot monumentation record does not give lots_created and '
                   'lots_monumented'
              WHEN l.monumented >= l.created
              THEN format('all %s lots of record the subdivision creates along the buffer are '
                          'monumented', l.created)
              ELSE format('%s of the %s lots of record the subdivision creates along the buffer '
                          '%s not monumented (6(b): each lot of record to be created)',
                          l.created - l.monumented, l.created,
                          CASE WHEN l.created - l.monumented = 1 THEN 'is' ELSE 'are' END) END,
         NULL::geometry
  FROM lots l
$$;
COMMENT ON FUNCTION checks.check_marker_records(integer, bigint[]) IS
  '6(b): the written approval of a permit''s marker design and text, and the monumentation of '
  'each lot of record a subdivision creates along the buffer.';

DROP FUNCTION IF EXISTS checks.check_buffer_disturbance(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_buffer_disturbance(p_plan_area_id integer,
                                                           p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH disturbed AS MATERIALIZED (  -- grading inside a buffer, as sql/240 measures it
    SELECT s.permit_id, s.baseline_on, g.m2
    FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s
    CROSS JOIN LATERAL (
      SELECT ST_Area(ST_Intersection(ST_Union(x.geom), s.buffer)) AS m2 FROM core.grading x
      WHERE x.valid_to IS NULL AND x.permit_id = s.permit_id AND x.geom && s.buffer) g
    WHERE s.buffer IS NOT NULL
      AND g.m2 >= core.param_num(p_plan_area_id, 'area_tolerance_m2', s.baseline_on)
  ), rec AS MATERIALIZED (
    SELECT d.permit_id, d.baseline_on, r.permit_record_id, r.facts,
           coalesce(' (' || r.document_ref || ')', '') AS doc
    FROM disturbed d
    JOIN core.permit_record r ON r.permit_id = d.permit_id AND r.valid_to IS NULL
     AND r.kind = 'buffer_disturbance'
  ), statement (paragraph, code, key, says) AS (
    VALUES ('6(e)(i)', 'disturbance_erosion_plan', 'erosion_control_plan',
            'an erosion control plan under which the alterations expose the least disturbed '
            'ground for the shortest time, no fill makes an unstable slope, mulches cover the '
            'soil and permanent natural vegetation is established as soon as possible'),
           ('6(e)(iii)', 'restored_buffer', 'sheet_flow_improved',
            'sheet flow characteristics within the buffer are improved'),
           ('6(e)(iii)', 'restored_buffer', 'habitat_maintained',
            'habitat diversity and riparian shading are maintained or improved'),
           ('6(e)(iv)', 'revegetation_plan', 'revegetation_plan',
            'a revegetation plan removes invasive species and establishes native vegetation '
            'suited to the location'),
           ('6(e)(vi)', 'disturbance_stability', 'stability_finding',
            'the disturbance is not likely to result in erosion, slope failure or a failure '
            'to establish vegetation')
  ), figure AS (  -- the 6(e)(ii) and (iii) figures with their limits
    SELECT r.permit_id, r.permit_record_id, r.doc, f.*,
           CASE WHEN f.value IS NULL OR f.lower IS NULL THEN NULL
                ELSE f.value >= f.lower AND (f.upper IS NULL OR f.value <= f.upper) END AS ok
    FROM rec r
    CROSS JOIN LATERAL (
      SELECT checks.fact_num(r.facts, 'slope_existing_hv') AS slope0,
             core.param_num(p_plan_area_id, 'buffer_slope_max_hv', r.baseline_on) AS slope_max,
             core.param_num(p_plan_area_id, 'buffer_soil_depth_in', r.baseline_on) AS depth_min,
             core.param_num(p_plan_area_id, 'buffer_permeability_min_ratio', r.baseline_on)
               AS perm_min,
             core.param_num(p_plan_area_id, 'buffer_organic_min_pct', r.baseline_on) AS om_min,
             core.param_num(p_plan_area_id, 'buffer_organic_max_pct', r.baseline_on) AS om_max
    ) p
    -- value, the least and the most allowed (NULL: no bound), what it is, the facts it needs
    CROSS JOIN LATERAL (VALUES
      ('6(e)(ii)', 'canopy_intact', 'trees', checks.fact_num(r.facts, 'canopy_trees_removed'),
       0::numeric, 0::numeric, 'wooded buffer and riparian canopy trees removed:',
       'canopy_trees_removed'),
      ('6(e)(iii)', 'restored_buffer', 'H:V', checks.fact_num(r.facts, 'slope_proposed_hv'),
       CASE WHEN p.slope0 IS NOT NULL THEN least(p.slope0, p.slope_max) END, NULL,
       format('restored average slope (horizontal:vertical; no steeper than the steeper of the '
              'preexisting %s:1 and %s:1):', coalesce(p.slope0::text, '?'), p.slope_max),
       'slope_proposed_hv, slope_existing_hv'),
      ('6(e)(iii)', 'restored_buffer', 'in', checks.fact_num(r.facts, 'uncompacted_depth_in'),
       p.depth_min, NULL, 'uncompacted depth of the top soil profile:',
       'uncompacted_depth_in'),
      ('6(e)(iii)', 'restored_buffer', 'ratio', checks.fact_num(r.facts, 'permeability_ratio'),
       p.perm_min, NULL, 'permeability as a share of the preexisting soil''s, uncompacted:',
       'permeability_ratio'),
      ('6(e)(iii)', 'restored_buffer', '%', checks.fact_num(r.facts, 'organic_matter_pct'),
       p.om_min, p.om_max, 'organic matter content of the top soil:', 'organic_matter_pct')
    ) f (paragraph, code, unit, value, lower, upper, what, keys)
  )
  SELECT s.paragraph, s.code, 'error', r.permit_id, NULL::bigint, r.permit_record_id, v.ok,
         (NOT v.ok)::int::numeric, 0::numeric, 'missing',
         CASE WHEN v.ok IS NULL
              THEN format('not evaluated: the buffer disturbance record%s does not say whether '
                          '%s (facts.%s)', r.doc, s.says, s.key)
              WHEN v.ok THEN format('buffer disturbance record%s: %s', r.doc, s.says)
              ELSE format('buffer disturbance record%s: it is not the case that %s (%s)', r.doc,
                          s.says, s.paragraph) END,
         NULL::geometry
  FROM rec r CROSS JOIN statement s
  CROSS JOIN LATERAL (SELECT checks.fact_bool(r.facts, s.key) AS ok) v
  UNION ALL
  SELECT f.paragraph, f.code, 'error', f.permit_id, NULL, f.permit_record_id, f.ok, f.value,
         CASE WHEN f.upper IS NOT NULL AND f.value > f.upper THEN f.upper ELSE f.lower END,
         f.unit,
         CASE WHEN f.ok IS NULL
              THEN format('not evaluated: the buffer disturbance record%s does not give the %s '
                          '(facts.%s)', f.doc, rtrim(f.what, ':'), f.keys)
              WHEN f.ok THEN format('buffer disturbance record%s: %s %s %s (%s %s)', f.doc,
                                    f.what, f.value, f.unit, f.paragraph, b.bound)
              ELSE format('buffer disturbance record%s: %s %s %s, where %s %s', f.doc,
                          f.what, f.value, f.unit, f.paragraph, b.bound) END,
         NULL::geometry
  FROM figure f
  CROSS JOIN LATERAL (
    SELECT CASE WHEN f.upper IS NULL THEN format('asks at least %s %s', f.lower, f.unit)
                WHEN f.upper = f.lower AND f.lower = 0 THEN 'allows none'
                WHEN f.upper = f.lower THEN format('asks %s %s', f.lower, f.unit)
                ELSE format('asks %s-%s %s', f.lower, f.upper, f.unit) END AS bound) b
  UNION ALL  -- no record: every criterion not evaluated
  SELECT k.paragraph, k.code, 'error', d.permit_id, NULL, NULL, NULL::boolean, NULL::numeric,
         NULL::numeric, k.unit,
         format('not evaluated: record missing: the permit grades %s ft2 of buffer (6(e)), but no '
                'buffer disturbance record (permit record buffer_disturbance) says whether %s',
                round((d.m2 / 0.09290304)::numeric), k.says),
         NULL::geometry
  FROM disturbed d
  CROSS JOIN (VALUES
    ('6(e)(i)', 'disturbance_erosion_plan', 'missing',
     'an erosion control plan meets 6(e)(i)'),
    ('6(e)(ii)', 'canopy_intact', 'trees', 'wooded buffer and canopy trees are left intact'),
    ('6(e)(iii)', 'restored_buffer', NULL,
     'the restored slope, soil, sheet flow and habitat meet 6(e)(iii)'),
    ('6(e)(iv)', 'revegetation_plan', 'missing', 'a revegetation plan meets 6(e)(iv)'),
    ('6(e)(vi)', 'disturbance_stability', 'missing',
     'the disturbance is not likely to cause erosion, slope failure or a failure to establish '
     'vegetation')) k (paragraph, code, unit, says)
  WHERE NOT EXISTS (SELECT 1 FROM rec r WHERE r.permit_id = d.permit_id)
$$;
COMMENT ON FUNCTION checks.check_buffer_disturbance(integer, bigint[]) IS
  '6(e)(i)-(iv), (vi): a permit whose grading disturbs a buffer has a buffer disturbance record '
  'meeting each criterion (erosion control plan, canopy intact, restored slope, soil, sheet '
  'flow and habitat, revegetation plan, stability); not evaluated without it.';

GRANT EXECUTE ON FUNCTION checks.check_marker_records(integer, bigint[]),
  checks.check_buffer_disturbance(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6(b)', 'marker_design', 'checks.check_marker_records',
   '247_check_buffer_records.sql', 'error', 'higher', 'missing', 52,
   'The buffer markers'' design and text are approved by the District in writing.',
   'Missing written approval (permit_record marker_design with approved_on) of a permit with a '
   'buffer of its own, unless on public land an approved vegetation plan stands in for markers '
   'and it has none; fails above zero (a warning while the permit is undecided).',
   'No buffer of its own, or public land with an approved vegetation plan and no markers.'),
  ('6(b)', 'lot_monumentation', 'checks.check_marker_records',
   '247_check_buffer_records.sql', 'error', 'higher', 'lots', 52,
   'Each lot of record a subdivision creates is monumented as 6(b) requires.',
   'Lots of record the subdivision creates along the buffer (permit_record lot_monumentation, '
   'facts lots_created) less those monumented (lots_monumented); fails above zero, not '
   'evaluated without the record.',
   'The permit does not subdivide, or has no buffer of its own.'),
  ('6(e)(i)', 'disturbance_erosion_plan', 'checks.check_buffer_disturbance',
   '247_check_buffer_records.sql', 'error', 'higher', 'missing', 56,
   'Disturbed buffer: an erosion control plan limits disturbed ground and its duration, keeps '
   'slopes stable, covers the soil and re-establishes natural vegetation soon.',
   'Per buffer disturbance record (permit_record buffer_disturbance): 1 unless '
   'facts.erosion_control_plan is true; fails above zero, not evaluated without the record.',
   'No grading in a buffer.'),
  ('6(e)(ii)', 'canopy_intact', 'checks.check_buffer_disturbance',
   '247_check_buffer_records.sql', 'error', 'higher', 'trees', 56,
   'Disturbed buffer: wooded buffer and riparian canopy trees are left intact.',
   'Canopy trees removed (facts.canopy_trees_removed of the buffer disturbance record); fails '
   'above zero, not evaluated without the record.',
   'No grading in a buffer.'),
  ('6(e)(iii)', 'restored_buffer', 'checks.check_buffer_disturbance',
   '247_check_buffer_records.sql', 'error', 'flag', NULL, 56,
   'Disturbed buffer, once restored: sheet flow improved, slope no steeper than before or '
   'buffer_slope_max_hv:1, top buffer_soil_depth_in in uncompacted, permeability at least '
   'preexisting, organic matter buffer_organic_min_pct-buffer_organic_max_pct %, habitat and '
   'shading kept.',
   'One case per criterion of the buffer disturbance record: slope_proposed_hv (H:V) at least '
   'the lesser of slope_existing_hv and buffer_slope_max_hv; uncompacted_depth_in (in) at least '
   'buffer_soil_depth_in; permeability_ratio at least buffer_permeability_min_ratio; '
   'organic_matter_pct (%) within the two limits; sheet_flow_improved and habitat_maintained '
   'true; fails where a criterion is not met, not evaluated without the record or the figure.',
   'No grading in a buffer.'),
  ('6(e)(iv)', 'revegetation_plan', 'checks.check_buffer_disturbance',
   '247_check_buffer_records.sql', 'error', 'higher', 'missing', 56,
   'Disturbed buffer: a revegetation plan removes invasive species and establishes native '
   'vegetation.',
   'Per buffer disturbance record: 1 unless facts.revegetation_plan is true; fails above zero, '
   'not evaluated without the record.',
   'No grading in a buffer.'),
  ('6(e)(vi)', 'disturbance_stability', 'checks.check_buffer_disturbance',
   '247_check_buffer_records.sql', 'error', 'higher', 'missing', 56,
   'Disturbed buffer: the disturbance is not likely to result in erosion, slope failure or a '
   'failure to establish vegetation.',
   'Per buffer disturbance record: 1 unless facts.stability_finding is true; fails above zero, '
   'not evaluated without the record.',
   'No grading in a buffer.');
SELECT checks.finish_registration('247_check_buffer_records.sql');
