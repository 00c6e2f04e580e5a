-- 220_check_submittals: the submittal checklist (3(e), 3(f), 6(d)). Idempotent.
--   3(e) delineation_approved   the permit's parcels lie inside the study areas of approved
--                               delineations that the TEP reviewed (approved on or before the
--                               baseline date); measured: the parcel acres outside them;
--   3(e) type_determination     every wetland of the baseline layer on the parcels has a
--                               Circular 39 type; measured: wetlands without one;
--   3(e) functional_assessment  every such wetland has a current functional assessment;
--   3(f) ditch_determination    an on-site ditch determination is on record (the permit's
--                               ditch_determined_on, or a ditch determined for the permit), and
--                               every ditch crossing the parcels has a determination date;
--   6(d) vegetation_plan        a permit with a buffer has an approved vegetation plan.
-- A wetland counts as on the parcels when at least area_tolerance_m2 of it is.

DROP FUNCTION IF EXISTS checks.check_delineation(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_delineation(p_plan_area_id integer,
                                                    p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS (
    SELECT ps.*, core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           (SELECT ST_Union(d.geom) FROM core.delineation d
            WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
              AND d.status = 'approved' AND d.approved_on <= ps.baseline_on
              AND d.tep_reviewed_on IS NOT NULL
              AND ps.parcels IS NOT NULL AND d.geom && ps.parcels) AS reviewed
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), gap AS (
    SELECT site.*,
           CASE WHEN site.reviewed IS NULL THEN site.parcels
                ELSE ST_CollectionExtract(ST_Difference(site.parcels, site.reviewed), 3)
                END AS uncovered
    FROM site
  )
  SELECT '3(e)', 'delineation_approved', 'error', g.permit_id, NULL::bigint, NULL::bigint,
         ok, round(core.acres(g.uncovered), 4), 0::numeric, 'acres',
         CASE WHEN g.parcels IS NULL
              THEN 'none of the permit''s parcels (parcel_pins) is in the parcel layer'
              WHEN ok THEN 'the parcels lie inside approved, TEP-reviewed delineations'
              ELSE format('%s acres of the parcels lie outside every delineation approved by '
                          '%s after TEP review', round(core.acres(g.uncovered), 4),
                          g.baseline_on) END,
         CASE WHEN NOT ok THEN g.uncovered END
  FROM gap g
  CROSS JOIN LATERAL (SELECT g.parcels IS NOT NULL
                             AND coalesce(ST_Area(g.uncovered), 0) < g.tol_m2 AS ok) o
$$;
COMMENT ON FUNCTION checks.check_delineation(integer, bigint[]) IS
  '3(e): acres of a permit''s parcels outside every approved, TEP-reviewed delineation.';

-- Wetlands of the baseline layer on a permit's parcels (the delineated wetland of the site).
DROP FUNCTION IF EXISTS checks.site_wetland(integer, bigint);
CREATE OR REPLACE FUNCTION checks.site_wetland(p_plan_area_id integer,
                                               p_permit_ids bigint[] DEFAULT NULL)
RETURNS TABLE (permit_id bigint, wetland_id bigint, circular39_type text, geom geometry)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT ps.permit_id, w.wetland_id, w.circular39_type, w.geom
  FROM checks.permit_site ps
  CROSS JOIN LATERAL core.wetland_layer_near(p_plan_area_id, ps.baseline_on, ps.parcels) w
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
    AND ps.parcels IS NOT NULL AND w.geom && ps.parcels
    AND ST_Area(ST_Intersection(w.geom, ps.parcels))
        >= core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on)
$$;
COMMENT ON FUNCTION checks.site_wetland(integer, bigint[]) IS
  'Wetlands of the baseline wetland layer on each permit''s parcels.';

DROP FUNCTION IF EXISTS checks.check_wetland_records(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_wetland_records(p_plan_area_id integer,
                                                        p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH w AS MATERIALIZED (
    SELECT sw.*, NOT EXISTS (
             SELECT 1 FROM core.functional_assessment fa
             WHERE fa.valid_to IS NULL AND fa.wetland_id = sw.wetland_id) AS unassessed
    FROM checks.site_wetland(p_plan_area_id, p_permit_ids) sw
  ), per_permit AS (
    SELECT w.permit_id, count(*) AS n,
           count(*) FILTER (WHERE w.circular39_type IS NULL) AS untyped,
           count(*) FILTER (WHERE w.unassessed) AS unassessed,
           ST_Union(w.geom) FILTER (WHERE w.circular39_type IS NULL) AS untyped_geom,
           ST_Union(w.geom) FILTER (WHERE w.unassessed) AS unassessed_geom
    FROM w GROUP BY w.permit_id
  )
  SELECT '3(e)', 'type_determination', 'error', p.permit_id, NULL::bigint, NULL::bigint,
         p.untyped = 0, p.untyped::numeric, 0::numeric, 'wetlands',
         CASE WHEN p.untyped = 0
              THEN CASE WHEN p.n = 1
                        THEN 'the one wetland on the site has a type determination (Circular 39)'
                        ELSE format('all %s wetlands on the site have a type determination '
                                    '(Circular 39)', p.n) END
              ELSE format('%s of the %s wetland%s on the site %s no type determination '
                          '(Circular 39)', p.untyped, p.n, CASE WHEN p.n = 1 THEN '' ELSE 's' END,
                          CASE WHEN p.untyped = 1 THEN 'has' ELSE 'have' END) END,
         p.untyped_geom
  FROM per_permit p
  UNION ALL
  SELECT '3(e)', 'functional_assessment', 'error', p.permit_id, NULL, NULL,
         p.unassessed = 0, p.unassessed::numeric, 0::numeric, 'wetlands',
         CASE WHEN p.unassessed = 0
              THEN CASE WHEN p.n = 1
                        THEN 'the one wetland on the site has a functional assessment'
                        ELSE format('all %s wetlands on the site have a functional assessment',
                                    p.n) END
              ELSE format('%s of the %s wetland%s on the site %s no functional assessment',
                          p.unassessed, p.n, CASE WHEN p.n = 1 THEN '' ELSE 's' END,
                          CASE WHEN p.unassessed = 1 THEN 'has' ELSE 'have' END) END,
         p.unassessed_geom
  FROM per_permit p
$$;
COMMENT ON FUNCTION checks.check_wetland_records(integer, bigint[]) IS
  '3(e): wetlands on a permit''s site without a type determination or a functional '
  'assessment.';

DROP FUNCTION IF EXISTS checks.check_ditch_determination(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_ditch_determination(p_plan_area_id integer,
                                                            p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS (
    SELECT ps.*,
           ps.ditch_determined_on IS NOT NULL OR EXISTS (
             SELECT 1 FROM core.ditch d WHERE d.valid_to IS NULL
               AND d.permit_id = ps.permit_id AND d.determined_on IS NOT NULL) AS determined,
           (SELECT count(*) FROM core.ditch d
            WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
              AND d.determined_on IS NULL AND d.geom && ps.parcels
              AND ST_Intersects(d.geom, ps.parcels)) AS undetermined,
           (SELECT ST_Union(ST_Intersection(d.geom, ps.parcels)) FROM core.ditch d
            WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
              AND d.determined_on IS NULL AND d.geom && ps.parcels
              AND ST_Intersects(d.geom, ps.parcels)) AS undetermined_geom
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  )
  SELECT '3(f)', 'ditch_determination', 'error', s.permit_id, NULL::bigint, NULL::bigint,
         s.determined AND s.undetermined = 0,
         ((NOT s.determined)::int + s.undetermined)::numeric, 0::numeric, 'missing',
         concat_ws('; ',
           CASE WHEN s.determined THEN 'on-site ditch determination on record'
                ELSE 'no on-site ditch determination on record' END,
           CASE WHEN s.undetermined > 0
                THEN format('%s ditches on the parcels have no determination date',
                            s.undetermined) END),
         s.undetermined_geom
  FROM site s
$$;
COMMENT ON FUNCTION checks.check_ditch_determination(integer, bigint[]) IS
  '3(f): missing on-site ditch determination of a permit, and ditches on its parcels without '
  'a determination date.';

DROP FUNCTION IF EXISTS checks.check_vegetation_plan(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_vegetation_plan(p_plan_area_id integer,
                                                        p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  SELECT '6(d)', 'vegetation_plan', 'error', ps.permit_id, NULL::bigint, NULL::bigint,
         ps.vegetation_plan_on IS NOT NULL, (ps.vegetation_plan_on IS NULL)::int::numeric,
         0::numeric, 'missing',
         CASE WHEN ps.vegetation_plan_on IS NULL
              THEN 'the permit has a buffer but no approved vegetation management plan'
              ELSE format('vegetation management plan approved %s', ps.vegetation_plan_on)
              END,
         NULL::geometry
  FROM checks.permit_site ps
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
    AND EXISTS (SELECT 1 FROM core.buffer b
                WHERE b.valid_to IS NULL AND b.permit_id = ps.permit_id)
$$;
COMMENT ON FUNCTION checks.check_vegetation_plan(integer, bigint[]) IS
  '6(d): a permit with a buffer has an approved vegetation management plan.';

GRANT EXECUTE ON FUNCTION checks.check_delineation(integer, bigint[]),
  checks.site_wetland(integer, bigint[]), checks.check_wetland_records(integer, bigint[]),
  checks.check_ditch_determination(integer, bigint[]),
  checks.check_vegetation_plan(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('3(e)', 'delineation_approved', 'checks.check_delineation',
   '220_check_submittals.sql', 'error', 'higher', 'acres', 20,
   'The application includes a wetland delineation, reviewed by the TEP and approved.',
   'Acres of the permit''s parcels outside the study areas of delineations approved on or before '
   'the baseline date with a TEP review date (tep_reviewed_on); fails above zero, and when no '
   'parcel of the permit is in the parcel layer.',
   'Never.'),
  ('3(e)', 'type_determination', 'checks.check_wetland_records',
   '220_check_submittals.sql', 'error', 'higher', 'wetlands', 21,
   'Every delineated wetland on the site has a wetland type determination.',
   'Wetlands of the baseline layer on the permit''s parcels without a Circular 39 type '
   '(circular39_type); fails above zero.',
   'No wetland on the parcels.'),
  ('3(e)', 'functional_assessment', 'checks.check_wetland_records',
   '220_check_submittals.sql', 'error', 'higher', 'wetlands', 22,
   'Every delineated wetland on the site has a functional assessment (MnRAM or approved).',
   'Wetlands of the baseline layer on the permit''s parcels with no current functional '
   'assessment; fails above zero.',
   'No wetland on the parcels.'),
  ('3(f)', 'ditch_determination', 'checks.check_ditch_determination',
   '220_check_submittals.sql', 'error', 'higher', 'missing', 23,
   'The application includes an on-site determination of the existence and location of all '
   'ditches.',
   'Missing determinations: 1 when neither the permit''s ditch_determined_on nor a ditch '
   'determined for the permit is on record, plus each ditch crossing the permit''s parcels with '
   'no determination date (determined_on); fails above zero.',
   'Never.'),
  ('6(d)', 'vegetation_plan', 'checks.check_vegetation_plan',
   '220_check_submittals.sql', 'error', 'higher', 'missing', 55,
   'The application includes a buffer vegetation management plan approved by the District.',
   'Missing approval date (permit.vegetation_plan_on) of a permit with a buffer; fails above zero.',
   'No buffer.');
SELECT checks.finish_registration('220_check_submittals.sql');
