-- 253_check_buffer_use: what may stand in a buffer (6(f)). Idempotent.
--   6(f)       impervious surface, structures and stormwater BMPs other than infiltration
--              features (wet ponds, biofiltration, pretreatment) of a permit inside any
--              buffer, except structures with a 6(f)(i) or 6(f)(ii) exception on record.
--              6(f)(iii) lets only "stormwater infiltration features" into a buffer; the
--              rule itself tells infiltration from bio-filtration and wet ponds (5(c)(ii),
--              (iii)), and a pond or basin is a below-ground structure excavated from the
--              buffer (6(f), 6(g));
--   6(f)(iii)  infiltration BMPs of a permit closer to the central wetland than the minimum
--              buffer width (infiltration_min_offset_ft);
--   6(f)(iv)   trails of a permit inside a buffer wider than trail_max_width_ft.
-- Each feature of the permit is one evaluation; a permit without such features is not
-- applicable.

DROP FUNCTION IF EXISTS checks.check_buffer_encroachment(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_buffer_encroachment(p_plan_area_id integer,
                                                            p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH feature AS (
    SELECT ps.permit_id, ps.baseline_on, i.impervious_id AS feature_id,
           i.condition || ' impervious surface' AS what, false AS is_bmp, i.geom
    FROM checks.permit_site ps
    JOIN core.impervious i ON i.permit_id = ps.permit_id AND i.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
    UNION ALL
    SELECT ps.permit_id, ps.baseline_on, st.structure_id, st.kind || ' structure', false,
           st.geom
    FROM checks.permit_site ps
    JOIN core.structure st ON st.permit_id = ps.permit_id AND st.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND coalesce(st.buffer_exception, 'none') = 'none'
    UNION ALL  -- stormwater features 6(f)(iii) does not let into a buffer
    SELECT ps.permit_id, ps.baseline_on, b.bmp_id,
           format('%s BMP %s', CASE b.kind WHEN 'wet_pond' THEN 'stormwater pond (wet_pond)'
                                          ELSE b.kind END,
                  coalesce(b.source_fid::text, '#' || b.bmp_id)),
           true, b.geom
    FROM checks.permit_site ps
    JOIN core.bmp b ON b.permit_id = ps.permit_id AND b.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND b.kind <> 'infiltration'
  ), inside AS (
    SELECT f.*, ST_CollectionExtract(ST_Intersection(
             f.geom, checks.buffers_near(p_plan_area_id, f.geom)), 3) AS part,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', f.baseline_on) AS tol_m2
    FROM feature f
  )
  SELECT '6(f)', 'buffer_encroachment', 'error', i.permit_id, NULL::bigint, i.feature_id,
         ok, round(core.acres(coalesce(i.part, 'POLYGON EMPTY'::geometry)), 4), 0::numeric,
         'acres',
         CASE WHEN ok THEN format('%s is outside every buffer', i.what)
              ELSE format('%s covers %s ft2 (%s acres) of buffer%s', i.what,
                          round((ST_Area(i.part) / 0.09290304)::numeric),
                          round(core.acres(i.part), 4),
                          CASE WHEN i.is_bmp
                               THEN ': only infiltration features may lie in a buffer '
                                    '(6(f)(iii))' ELSE '' END) END,
         CASE WHEN NOT ok THEN i.part END
  FROM inside i
  CROSS JOIN LATERAL (SELECT i.part IS NULL OR ST_Area(i.part) < i.tol_m2 AS ok) o
$$;
COMMENT ON FUNCTION checks.check_buffer_encroachment(integer, bigint[]) IS
  '6(f): area of each impervious surface, structure (without a 6(f)(i)-(ii) exception) and '
  'stormwater BMP other than an infiltration feature of a permit inside a buffer.';

DROP FUNCTION IF EXISTS checks.check_infiltration_in_buffer(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_infiltration_in_buffer(p_plan_area_id integer,
                                                               p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT s.permit_id, s.central,
           core.param_num(p_plan_area_id, 'infiltration_min_offset_ft', s.baseline_on)
             AS offset_ft
    FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s
    WHERE s.central IS NOT NULL
  ), bmp AS (
    SELECT site.*, b.bmp_id, b.geom,
           round((ST_Distance(b.geom, site.central) / 0.3048)::numeric, 2) AS distance_ft
    FROM site JOIN core.bmp b ON b.permit_id = site.permit_id AND b.valid_to IS NULL
    WHERE b.kind = 'infiltration'
  )
  SELECT '6(f)(iii)', 'infiltration_in_buffer', 'error', b.permit_id, NULL::bigint, b.bmp_id,
         b.distance_ft >= b.offset_ft, b.distance_ft, b.offset_ft, 'ft',
         format('infiltration BMP %s ft from the central wetland edge %s', b.distance_ft,
                CASE WHEN b.distance_ft < b.offset_ft
                     THEN format('< %s ft: inside the minimum buffer width', b.offset_ft)
                     ELSE format('(at least %s ft)', b.offset_ft) END),
         CASE WHEN b.distance_ft < b.offset_ft
              THEN ST_CollectionExtract(ST_Intersection(b.geom, ST_Buffer(
                     b.central, b.offset_ft::float8 * 0.3048)), 3) END
  FROM bmp b
$$;
COMMENT ON FUNCTION checks.check_infiltration_in_buffer(integer, bigint[]) IS
  '6(f)(iii): distance of each infiltration BMP of a permit from the central wetland, against '
  'the minimum buffer width.';

DROP FUNCTION IF EXISTS checks.check_trail_width(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_trail_width(p_plan_area_id integer,
                                                    p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH trail AS (
    SELECT ps.permit_id, t.trail_id, t.geom, t.width_ft AS recorded_ft,
           coalesce(t.width_ft, round((2 * ST_Area(t.geom) / ST_Perimeter(t.geom)
                                       / 0.3048)::numeric, 2)) AS width_ft,
           core.param_num(p_plan_area_id, 'trail_max_width_ft', ps.baseline_on) AS max_ft
    FROM checks.permit_site ps
    JOIN core.trail t ON t.permit_id = ps.permit_id AND t.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND checks.buffers_near(p_plan_area_id, t.geom) IS NOT NULL
  )
  SELECT '6(f)(iv)', 'trail_width', 'error', t.permit_id, NULL::bigint, t.trail_id,
         t.width_ft <= t.max_ft, t.width_ft, t.max_ft, 'ft',
         format('trail %s ft wide%s%s', t.width_ft,
                CASE WHEN t.recorded_ft IS NULL THEN ' (estimated: 2 x area / perimeter)'
                     ELSE '' END,
                CASE WHEN t.width_ft > t.max_ft
                     THEN format(' > %s ft: it may not be enclosed by the buffer', t.max_ft)
                     ELSE '' END),
         CASE WHEN t.width_ft > t.max_ft THEN t.geom END
  FROM trail t
$$;
COMMENT ON FUNCTION checks.check_trail_width(integer, bigint[]) IS
  '6(f)(iv): width of each trail of a permit inside a buffer, against trail_max_width_ft.';

GRANT EXECUTE ON FUNCTION checks.check_buffer_encroachment(integer, bigint[]),
  checks.check_infiltration_in_buffer(integer, bigint[]),
  checks.check_trail_width(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6(f)', 'buffer_encroachment', 'checks.check_buffer_encroachment',
   '253_check_buffer_use.sql', 'error', 'higher', 'acres', 57,
   'No structure or impervious surface is placed within the buffer, except 6(f)(i)-(ii) '
   'exceptions on record.',
   'Acres of each impervious surface, structure or stormwater BMP other than an infiltration '
   'feature (wet pond, biofiltration, pretreatment) of the permit inside any buffer, with the '
   'part inside as polygon; fails above zero. Structures with a suspended_6fi or '
   'public_utility_6fii exception are not looked at.',
   'No impervious surface, no structure, no such BMP.'),
  ('6(f)(iii)', 'infiltration_in_buffer', 'checks.check_infiltration_in_buffer',
   '253_check_buffer_use.sql', 'error', 'lower', 'ft', 58,
   'Infiltration features are not within the minimum buffer width of the wetland.',
   'Distance from each infiltration BMP of the permit to the central wetland, against '
   'infiltration_min_offset_ft; fails below it.',
   'No infiltration BMP, or no central wetland near.'),
  ('6(f)(iv)', 'trail_width', 'checks.check_trail_width',
   '253_check_buffer_use.sql', 'error', 'higher', 'ft', 59,
   'A trail a buffer encloses is no more than trail_max_width_ft wide.',
   'Recorded width of each trail inside a buffer (estimated as 2 x area / perimeter when not '
   'recorded), against trail_max_width_ft; fails above it.',
   'No trail in a buffer.');
SELECT checks.finish_registration('253_check_buffer_use.sql');
