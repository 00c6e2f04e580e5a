-- 260_check_replacement: location and type of wetland replacement and heritage communities
-- (7(c)). Idempotent. Ranks compare through core.heritage_rank (1 = A, best); "heritage_threshold
-- or higher" (the rule: "B/C or higher") is ordinal <= the threshold's ordinal; messages write
-- the rank as the rule does (checks.heritage_rank_label: B/C). Each impact or replacement feature is one
-- evaluation; parts under area_tolerance_m2 pass.
--   7(c)(i)   heritage_wetland_impact      any disturbance of a heritage wetland community:
--                                          each impact, structure, grading, stormwater BMP
--                                          and wetland replacement (excavation) inside one;
--   7(c)(ii)  heritage_upland_excavation   wetland replacement inside heritage upland;
--   7(c)      replacement_outside_plan_area  any replacement feature outside the CWMP area;
--   7(c)      replacement_outside_figure5    wetland replacement outside every Figure 5 area
--                                            (a warning: Figure 5 is what replacement "best
--                                            conforms" to, not a hard limit);
--   7(c)      replacement_type_figure5       wetland replacement with a planned type inside a
--                                            Figure 5 area planned for another type (warning).
-- District projects (replacement without a permit) are checked in plan-wide runs, with no
-- permit, their parameters as of their status date.

-- A rank as the rule writes it: 'B/C or higher' (7(c)(i)), so BC is shown B/C (A/B, C/D
-- likewise); the code stays the key (core.heritage_rank, heritage_threshold).
CREATE OR REPLACE FUNCTION checks.heritage_rank_label(p_rank text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_rank ~ '^[A-D]{2}$' THEN left(p_rank, 1) || '/' || right(p_rank, 1)
              ELSE p_rank END
$$;
COMMENT ON FUNCTION checks.heritage_rank_label(text) IS
  'A Natural Heritage rank as the rule writes it (BC -> B/C).';

CREATE OR REPLACE FUNCTION checks.heritage_ranked(p_plan_area_id integer, p_on date,
                                                  p_kind text, p_near geometry)
RETURNS geometry LANGUAGE sql STABLE SET jit = off AS $$
  SELECT ST_Union(h.geom) FROM core.heritage_area h
  JOIN core.heritage_rank r ON r.rank = h.rank
  WHERE h.valid_to IS NULL AND h.plan_area_id = p_plan_area_id AND h.community_kind = p_kind
    AND h.geom && p_near
    AND r.ordinal <= (SELECT t.ordinal FROM core.heritage_rank t
                      WHERE t.rank = core.param_text(p_plan_area_id, 'heritage_threshold', p_on))
$$;
COMMENT ON FUNCTION checks.heritage_ranked(integer, date, text, geometry) IS
  'Union of the heritage communities of a kind (wetland, upland) ranked heritage_threshold or '
  'better near a geometry.';

DROP FUNCTION IF EXISTS checks.check_replacement(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_replacement(p_plan_area_id integer,
                                                    p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  -- 7(c)(i) "No wetland plant community of Natural Heritage Rank B/C or higher ... may be
  -- disturbed": every feature of the permit that disturbs ground counts, not impacts only
  disturbing AS (
    SELECT i.permit_id, i.impact_id AS feature_id, i.kind || ' impact' AS kind, i.geom
    FROM core.impact i WHERE i.valid_to IS NULL AND i.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT s.permit_id, s.structure_id, coalesce(s.kind, 'other') || ' structure', s.geom
    FROM core.structure s WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT g.permit_id, g.grading_id, 'grading', g.geom
    FROM core.grading g WHERE g.valid_to IS NULL AND g.plan_area_id = p_plan_area_id
    UNION ALL                 -- stormwater BMPs: ponds and basins dug, the others placed
    SELECT b.permit_id, b.bmp_id, b.kind || ' stormwater BMP', b.geom
    FROM core.bmp b WHERE b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id
  ), impact AS (
    SELECT ps.permit_id, d.feature_id AS impact_id, d.kind, d.geom,
           core.param_text(p_plan_area_id, 'heritage_threshold', ps.baseline_on) AS threshold,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           checks.heritage_ranked(p_plan_area_id, ps.baseline_on, 'wetland', d.geom) AS heritage
    FROM checks.permit_site ps
    JOIN disturbing d ON d.permit_id = ps.permit_id
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), repl AS (
    SELECT r.permit_id, r.replacement_id, r.component, r.planned_type, r.geom, x.on_date,
           core.param_text(p_plan_area_id, 'heritage_threshold', x.on_date) AS threshold,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', x.on_date) AS tol_m2
    FROM core.replacement r
    LEFT JOIN checks.permit_site ps ON ps.permit_id = r.permit_id
    CROSS JOIN LATERAL (SELECT coalesce(ps.baseline_on, r.status_on, current_date) AS on_date) x
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
      AND (ps.permit_id IS NOT NULL
           OR (r.permit_id IS NULL AND checks.with_district(p_permit_ids)))
      AND (p_permit_ids IS NULL OR r.permit_id IS NULL
           OR r.permit_id IN (SELECT unnest(p_permit_ids)))
  ), heritage_impact AS (
    SELECT i.permit_id, i.impact_id, i.kind, i.threshold, i.tol_m2,
           ledger.meet(i.geom, i.heritage) AS part  -- NULL: none (sql/100)
    FROM impact i
    UNION ALL  -- wetland replacement is excavation: a disturbance too (District projects too)
    SELECT r.permit_id, r.replacement_id, 'wetland replacement (excavation)', r.threshold,
           r.tol_m2,
           ledger.meet(r.geom, checks.heritage_ranked(p_plan_area_id, r.on_date, 'wetland',
                                                      r.geom))
    FROM repl r WHERE r.component = 'wetland'
  ), heritage_upland AS (
    SELECT r.*, ledger.meet(r.geom, checks.heritage_ranked(
             p_plan_area_id, r.on_date, 'upland', r.geom)) AS part
    FROM repl r WHERE r.component = 'wetland'
  ), outside_plan AS (
    SELECT r.*, CASE WHEN ST_Covers(plan.geom, r.geom) THEN NULL  -- the usual case, no overlay
                     ELSE ledger.minus(r.geom, plan.geom) END AS part
    FROM repl r, plan
  ), outside_figure5 AS (
    SELECT r.*, CASE WHEN f.geom IS NULL THEN r.geom
                     ELSE ST_CollectionExtract(ST_Difference(r.geom, f.geom), 3) END AS part
    FROM repl r
    CROSS JOIN LATERAL (
      SELECT ST_Union(f.geom) AS geom FROM core.figure5_area f
      WHERE f.valid_to IS NULL AND f.plan_area_id = p_plan_area_id AND f.geom && r.geom) f
    WHERE r.component = 'wetland'
  ), other_type AS (
    SELECT r.*, ST_CollectionExtract(ST_Intersection(r.geom, f.geom), 3) AS part, f.types
    FROM repl r
    CROSS JOIN LATERAL (
      SELECT ST_Union(f.geom) AS geom, string_agg(DISTINCT f.planned_type, ', ') AS types
      FROM core.figure5_area f
      WHERE f.valid_to IS NULL AND f.plan_area_id = p_plan_area_id AND f.geom && r.geom
        AND f.planned_type IS NOT NULL AND f.planned_type <> r.planned_type) f
    WHERE r.component = 'wetland' AND r.planned_type IS NOT NULL
  )
  SELECT '7(c)(i)', 'heritage_wetland_impact', 'error', h.permit_id, NULL::bigint, h.impact_id,
         ok, a.acres, 0::numeric, 'acres',
         CASE WHEN ok THEN format('%s outside wetland communities ranked %s or higher', h.kind,
                                  checks.heritage_rank_label(h.threshold))
              ELSE format('%s of %s acres in a wetland community ranked %s or higher', h.kind,
                          a.acres, checks.heritage_rank_label(h.threshold)) END,
         CASE WHEN NOT ok THEN h.part END
  FROM heritage_impact h
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(h.part), 0), 4) AS acres,
                             coalesce(ST_Area(h.part), 0) < h.tol_m2 AS ok) a
  UNION ALL
  SELECT '7(c)(ii)', 'heritage_upland_excavation', 'error', h.permit_id, NULL, h.replacement_id,
         ok, a.acres, 0::numeric, 'acres',
         CASE WHEN ok THEN format('replacement outside upland ranked %s or higher',
                                  checks.heritage_rank_label(h.threshold))
              ELSE format('replacement excavates %s acres of upland ranked %s or higher',
                          a.acres, checks.heritage_rank_label(h.threshold)) END,
         CASE WHEN NOT ok THEN h.part END
  FROM heritage_upland h
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(h.part), 0), 4) AS acres,
                             coalesce(ST_Area(h.part), 0) < h.tol_m2 AS ok) a
  UNION ALL
  SELECT '7(c)', 'replacement_outside_plan_area', 'error', o.permit_id, NULL, o.replacement_id,
         ok, a.acres, 0::numeric, 'acres',
         CASE WHEN ok THEN format('%s replacement inside the CWMP area', o.component)
              ELSE format('%s acres of %s replacement outside the CWMP area', a.acres,
                          o.component) END,
         CASE WHEN NOT ok THEN o.part END
  FROM outside_plan o
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(o.part), 0), 4) AS acres,
                             coalesce(ST_Area(o.part), 0) < o.tol_m2 AS ok) a
  UNION ALL
  SELECT '7(c)', 'replacement_outside_figure5', 'warning', o.permit_id, NULL, o.replacement_id,
         ok, a.acres, 0::numeric, 'acres',
         CASE WHEN ok THEN 'replacement inside Figure 5 areas'
              ELSE format('%s acres of replacement outside the CWMP Figure 5 areas', a.acres)
              END,
         CASE WHEN NOT ok THEN o.part END
  FROM outside_figure5 o
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(o.part), 0), 4) AS acres,
                             coalesce(ST_Area(o.part), 0) < o.tol_m2 AS ok) a
  UNION ALL
  SELECT '7(c)', 'replacement_type_figure5', 'warning', t.permit_id, NULL, t.replacement_id,
         ok, a.acres, 0::numeric, 'acres',
         CASE WHEN ok THEN format('type %s conforms to Figure 5', t.planned_type)
              ELSE format('%s acres of type %s replacement in Figure 5 areas planned for type %s',
                          a.acres, t.planned_type, t.types) END,
         CASE WHEN NOT ok THEN t.part END
  FROM other_type t
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(t.part), 0), 4) AS acres,
                             coalesce(ST_Area(t.part), 0) < t.tol_m2 AS ok) a
$$;
COMMENT ON FUNCTION checks.check_replacement(integer, bigint[]) IS
  '7(c): impacts, structures, grading, stormwater BMPs and replacement excavation in ranked '
  'heritage wetland, '
  'replacement in ranked heritage upland, outside '
  'the CWMP area, outside Figure 5 areas or of another type than Figure 5 plans there.';

GRANT EXECUTE ON FUNCTION checks.heritage_ranked(integer, date, text, geometry),
  checks.heritage_rank_label(text),
  checks.check_replacement(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, district_cases, title, measure,
                               not_applicable_when)
VALUES
  ('7(c)(i)', 'heritage_wetland_impact', 'checks.check_replacement',
   '260_check_replacement.sql', 'error', 'higher', 'acres', 70, true,
   'No wetland community of Natural Heritage rank heritage_threshold (B/C) or higher is '
   'disturbed.',
   'Acres of each disturbing feature (impact, structure, grading, stormwater BMP, wetland '
   'replacement; District projects'' replacement too) inside a heritage wetland community '
   'ranked heritage_threshold or higher, with the disturbed polygon; fails above zero.',
   'None of those features.'),
  ('7(c)(ii)', 'heritage_upland_excavation', 'checks.check_replacement',
   '260_check_replacement.sql', 'error', 'higher', 'acres', 71, true,
   'Upland of Natural Heritage rank heritage_threshold (B/C) or higher is not excavated for '
   'replacement.',
   'Acres of each wetland replacement (District projects'' too) inside a heritage upland '
   'community ranked heritage_threshold or higher; fails above zero.',
   'No wetland replacement.'),
  ('7(c)', 'replacement_outside_plan_area', 'checks.check_replacement',
   '260_check_replacement.sql', 'error', 'higher', 'acres', 72, true,
   'Replacement lies within the CWMP area.',
   'Acres of each replacement feature (any component; District projects'' too) outside the CWMP '
   'area; fails above zero.',
   'No replacement.'),
  ('7(c)', 'replacement_outside_figure5', 'checks.check_replacement',
   '260_check_replacement.sql', 'warning', 'higher', 'acres', 73, true,
   'Replacement location conforms to CWMP Map Figure 5.',
   'Acres of each wetland replacement (District projects'' too) outside every Figure 5 area; '
   'fails above zero.',
   'No wetland replacement.'),
  ('7(c)', 'replacement_type_figure5', 'checks.check_replacement',
   '260_check_replacement.sql', 'warning', 'higher', 'acres', 74, true,
   'Replacement type conforms to CWMP Map Figure 5.',
   'Acres of each wetland replacement (District projects'' too) with a planned type inside a '
   'Figure 5 area planned for another type; fails above zero.',
   'No wetland replacement with a planned type.');
SELECT checks.finish_registration('260_check_replacement.sql');
