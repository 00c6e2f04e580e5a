-- 248_check_buffer_material: 6(g), no material excavated from or placed in a buffer.
-- Idempotent.
--
-- 6(g): "Material shall not be excavated from or placed in a buffer, except for temporary
-- placement of fill or excavated material pursuant to duly-permitted work in the associated
-- wetland; or pursuant to paragraph 6(e) of this Rule." The features of a permit that excavate
-- or place material are its fill and excavation impacts, its grading, its stormwater BMPs
-- other than infiltration features (ponds, biofiltration and pretreatment basins are dug;
-- 6(f)(iii) lets infiltration features into the buffer and 6(f) judges them) and its wetland
-- replacement (excavation). Buffer is every current buffer, whoever declared it, outside the
-- wetland the permit leaves behind (the buffer sites of sql/205: a buffer drawn over the
-- wetland edge starts at the edge). Grading is excused (docs/rule-m.md, 6(g)):
--   - pursuant to 6(e): the permit has a buffer disturbance record (kind buffer_disturbance;
--     sql/247 judges it against 6(e)'s criteria);
--   - temporary placement: the permit has an approved record of it (kind temporary_placement
--     with approved_on: the District's approval of the stockpile for the wetland work).
-- One evaluation per such feature; measured: the acres of buffer it excavates or fills that
-- nothing excuses (an excused feature passes with 0 and says why). Parts under
-- area_tolerance_m2 pass.

DROP FUNCTION IF EXISTS checks.check_buffer_material(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_buffer_material(p_plan_area_id integer,
                                                        p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT s.permit_id, s.buffer, s.wetland,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', s.baseline_on) AS tol_m2,
           (SELECT string_agg(DISTINCT CASE r.kind WHEN 'buffer_disturbance'
                                           THEN 'pursuant to 6(e) (buffer disturbance record)'
                                           ELSE 'temporary placement approved '
                                                || r.approved_on END, '; ')
            FROM core.permit_record r
            WHERE r.valid_to IS NULL AND r.permit_id = s.permit_id
              AND (r.kind = 'buffer_disturbance'
                   OR (r.kind = 'temporary_placement' AND r.approved_on IS NOT NULL)))
             AS grading_excuse
    FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s
  ), feature AS (
    SELECT i.permit_id, i.impact_id AS feature_id, i.kind || ' impact' AS what, false AS grading,
           i.geom
    FROM core.impact i
    WHERE i.valid_to IS NULL AND i.plan_area_id = p_plan_area_id
      AND i.kind IN ('fill', 'excavate')
    UNION ALL
    SELECT g.permit_id, g.grading_id, 'grading', true, g.geom FROM core.grading g
    WHERE g.valid_to IS NULL AND g.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT b.permit_id, b.bmp_id, b.kind || ' BMP (excavated)', false, b.geom FROM core.bmp b
    WHERE b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id AND b.kind <> 'infiltration'
    UNION ALL
    SELECT r.permit_id, r.replacement_id, 'wetland replacement (excavation)', false, r.geom
    FROM core.replacement r
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id AND r.component = 'wetland'
      AND r.permit_id IS NOT NULL
  ), inside AS (
    SELECT f.*, s.tol_m2, s.grading_excuse,
           CASE WHEN s.buffer IS NULL OR NOT (f.geom && s.buffer) THEN NULL
                WHEN s.wetland IS NULL OR NOT (f.geom && s.wetland)
                THEN ST_CollectionExtract(ST_Intersection(f.geom, s.buffer), 3)
                ELSE ST_CollectionExtract(ST_Difference(ST_Intersection(f.geom, s.buffer),
                                                        s.wetland), 3) END AS part,
           coalesce(k.feature_key, '#' || f.feature_id) AS key
    FROM feature f
    JOIN site s USING (permit_id)
    LEFT JOIN core.feature k ON k.feature_id = f.feature_id
  )
  SELECT '6(g)', 'buffer_material', 'error', i.permit_id, NULL::bigint, i.feature_id,
         NOT a.in_buffer OR a.excused, CASE WHEN a.in_buffer AND NOT a.excused THEN a.acres
                                            ELSE 0 END,
         0::numeric, 'acres',
         CASE WHEN NOT a.in_buffer THEN format('%s %s is outside every buffer', i.what, i.key)
              WHEN a.excused
              THEN format('%s %s works %s acres of buffer %s', i.what, i.key, a.acres,
                          i.grading_excuse)
              ELSE format('%s %s excavates or places material on %s ft2 (%s acres) of buffer: '
                          '6(g) allows only temporary placement for the wetland work or work '
                          'under 6(e)', i.what, i.key, round((ST_Area(i.part) / 0.09290304)::numeric),
                          a.acres) END,
         CASE WHEN a.in_buffer AND NOT a.excused THEN i.part END
  FROM inside i
  CROSS JOIN LATERAL (
    SELECT coalesce(ST_Area(i.part), 0) >= i.tol_m2 AS in_buffer,
           i.grading AND i.grading_excuse IS NOT NULL AS excused,
           round(coalesce(core.acres(i.part), 0), 4) AS acres) a
$$;
COMMENT ON FUNCTION checks.check_buffer_material(integer, bigint[]) IS
  '6(g): acres of buffer each fill or excavation impact, grading, excavated BMP and wetland '
  'replacement of a permit works, unless grading is under 6(e) or approved temporary '
  'placement.';

GRANT EXECUTE ON FUNCTION checks.check_buffer_material(integer, bigint[]) TO rulem_etl;

-- The check this file's function evaluates, registered in the catalogue (sql/200): the runner
-- (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6(g)', 'buffer_material', 'checks.check_buffer_material',
   '248_check_buffer_material.sql', 'error', 'higher', 'acres', 60,
   'No material is excavated from or placed in a buffer, except temporary placement for the '
   'wetland work or work under 6(e).',
   'Acres of buffer (any declared buffer, outside the wetland the permit leaves) that each fill '
   'or excavation impact, grading, stormwater BMP other than an infiltration feature, and '
   'wetland replacement of the permit covers, with the polygon; grading excused when the permit '
   'has a buffer disturbance record (6(e)) or an approved temporary_placement record; fails '
   'above zero.',
   'No impact, grading, BMP or wetland replacement.');
SELECT checks.finish_registration('248_check_buffer_material.sql');
