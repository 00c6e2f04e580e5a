-- 245_check_easement: 8, the recorded easement covers, on each permitted parcel, the CWMP
-- wetland, the upland that wetland encloses, and the buffer. Idempotent.
-- CWMP wetland is the wetland the permit leaves behind (checks.post_project_wetland: the
-- baseline layer less the permit's fill and full drainage, plus its wetland replacement),
-- inside the CWMP area; enclosed upland is the holes of its union (wetland and enclosing ring
-- may reach beyond the parcel); buffer is every current buffer. An easement counts once
-- recorded (a recording number or date). One evaluation per permitted parcel that holds any
-- of these; the uncovered part is the finding's polygon, slivers under area_tolerance_m2
-- dropped. Missing coverage is an error on a decided permit, a warning before.

DROP FUNCTION IF EXISTS checks.check_easement(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_easement(p_plan_area_id integer,
                                                 p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  site AS MATERIALIZED (
    SELECT ps.permit_id, ps.baseline_on, ps.decided, ps.parcels, ps.parcel_ids,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           ST_Expand(ps.parcels, checks.reach_m()) AS near
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id AND ps.parcels IS NOT NULL
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), wet AS MATERIALIZED (
    SELECT site.permit_id,
           ST_Intersection((SELECT ST_Union(w.geom) FROM checks.post_project_wetland(
                              p_plan_area_id, site.permit_id, site.baseline_on, site.near) w),
                           plan.geom) AS geom
    FROM site, plan  -- the boundary once: per site it was a union and an overlay each
  ), enclosed AS MATERIALIZED (
    -- wetland with its holes filled: wetland plus the upland it encloses
    SELECT wet.permit_id,
           (SELECT ST_Union(ST_MakePolygon(ST_ExteriorRing(d.geom)))
            FROM ST_Dump(ST_CollectionExtract(wet.geom, 3)) d) AS geom
    FROM wet
  ), need AS (
    SELECT site.permit_id, site.decided, site.tol_m2, pc.parcel_id,
           ST_CollectionExtract(ST_Intersection(
             CASE WHEN e.geom IS NULL THEN b.geom WHEN b.geom IS NULL THEN e.geom
                  ELSE ST_Union(e.geom, b.geom) END, pc.geom), 3) AS required,
           (SELECT ST_Union(es.geom) FROM core.easement es
            WHERE es.valid_to IS NULL AND es.plan_area_id = p_plan_area_id
              AND (es.recording_no IS NOT NULL OR es.recorded_on IS NOT NULL)
              AND es.geom && pc.geom) AS covered
    FROM site
    JOIN core.parcel pc ON pc.valid_to IS NULL AND pc.plan_area_id = p_plan_area_id
     AND pc.parcel_id = ANY (site.parcel_ids)
    LEFT JOIN enclosed e ON e.permit_id = site.permit_id
    CROSS JOIN LATERAL (SELECT checks.buffers_near(p_plan_area_id, pc.geom) AS geom) b
  ), gap AS (
    SELECT n.*,
           (SELECT ST_Multi(ST_Collect(d.geom))
            FROM ST_Dump(ST_CollectionExtract(
                   CASE WHEN n.covered IS NULL THEN n.required
                        ELSE ST_Difference(n.required, n.covered) END, 3)) d
            WHERE ST_Area(d.geom) >= n.tol_m2) AS uncovered
    FROM need n
    WHERE n.required IS NOT NULL AND ST_Area(n.required) >= n.tol_m2
  )
  SELECT '8', 'easement_coverage', CASE WHEN g.decided THEN 'error' ELSE 'warning' END,
         g.permit_id, g.parcel_id, NULL::bigint,
         g.uncovered IS NULL, round(coalesce(core.acres(g.uncovered), 0), 4), 0::numeric,
         'acres',
         CASE WHEN g.uncovered IS NULL
              THEN format('recorded easement covers the %s acres of wetland, enclosed upland '
                          'and buffer on the parcel', round(core.acres(g.required), 4))
              ELSE format('%s of %s acres of wetland, enclosed upland and buffer on the '
                          'parcel lie outside a recorded easement',
                          round(core.acres(g.uncovered), 4), round(core.acres(g.required), 4))
              END,
         g.uncovered
  FROM gap g
$$;
COMMENT ON FUNCTION checks.check_easement(integer, bigint[]) IS
  '8: acres of wetland, enclosed upland and buffer on each permitted parcel outside a '
  'recorded easement.';

GRANT EXECUTE ON FUNCTION checks.check_easement(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('8', 'easement_coverage', 'checks.check_easement',
   '245_check_easement.sql', 'error', 'higher', 'acres', 80,
   'A recorded easement covers the CWMP wetland, the upland it encloses and the buffer on each '
   'permitted parcel.',
   'Acres of each permitted parcel that are wetland (after the permit''s fill and full drainage), '
   'upland enclosed by wetland, buffer or the permit''s wetland replacement, and not inside a '
   'recorded easement, with the polygon; fails above zero (a warning while the permit is '
   'undecided).',
   'Nothing of the kind on the permit''s parcels.');
SELECT checks.finish_registration('245_check_easement.sql');
