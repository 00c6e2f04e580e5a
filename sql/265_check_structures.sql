-- 265_check_structures: 7(g), a road, utility or other structure in CWMP wetland needs a
-- variance; structures for passive recreation or education are exempt. Idempotent.
-- Wetland is the baseline wetland layer inside the CWMP area (the structure is placed in the
-- wetland as it was, even where the same permit fills it). One evaluation per road, utility
-- or other structure of the permit; inside wetland with no variance_ref fails. The message
-- says what the structure's record holds (no variance_ref), which stays true when staff
-- waive the finding under a variance (pub.finding.waiver_reference shows it beside).

DROP FUNCTION IF EXISTS checks.check_structures(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_structures(p_plan_area_id integer,
                                                   p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  st AS (
    SELECT ps.permit_id, s.structure_id, s.kind, s.variance_ref, s.geom,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           (SELECT ST_Union(ledger.meet(w.geom, s.geom))  -- the wetland under the structure,
            FROM ledger.baseline_wetland(p_plan_area_id, ps.baseline_on, s.geom) w  -- in pieces
            WHERE w.geom && s.geom) AS wetland
    FROM checks.permit_site ps
    JOIN core.structure s ON s.permit_id = ps.permit_id AND s.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND s.kind IN ('road', 'utility', 'other')
  ), inside AS (
    SELECT st.*, ST_CollectionExtract(ST_Intersection(ST_Intersection(st.geom, st.wetland),
                                                      plan.geom), 3)
             AS part
    FROM st, plan  -- the boundary once, not once per structure
  )
  SELECT '7(g)', 'structure_in_wetland', 'error', i.permit_id, NULL::bigint, i.structure_id,
         NOT in_wetland OR i.variance_ref IS NOT NULL, a.acres, 0::numeric, 'acres',
         CASE WHEN NOT in_wetland THEN format('%s outside CWMP wetland', i.kind)
              WHEN i.variance_ref IS NOT NULL
              THEN format('%s in %s acres of CWMP wetland under variance %s', i.kind, a.acres,
                          i.variance_ref)
              ELSE format('%s in %s acres of CWMP wetland, and no variance is recorded on the '
                          'structure (variance_ref): 7(g) allows it only under a variance',
                          i.kind, a.acres)
              END,
         CASE WHEN in_wetland AND i.variance_ref IS NULL THEN i.part END
  FROM inside i
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(i.part), 0), 4) AS acres,
                             coalesce(ST_Area(i.part), 0) >= i.tol_m2 AS in_wetland) a
$$;
COMMENT ON FUNCTION checks.check_structures(integer, bigint[]) IS
  '7(g): acres of each road, utility or other structure of a permit in CWMP wetland without '
  'a variance.';

GRANT EXECUTE ON FUNCTION checks.check_structures(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('7(g)', 'structure_in_wetland', 'checks.check_structures',
   '265_check_structures.sql', 'error', 'higher', 'acres', 75,
   'A road, utility or other structure (not passive recreation or education) is placed in CWMP '
   'wetland only with a variance.',
   'Acres of each road, utility or other structure (not passive recreation or education) inside '
   'the baseline CWMP wetland, when it has no variance_ref; fails above zero.',
   'No such structure.');
SELECT checks.finish_registration('265_check_structures.sql');
