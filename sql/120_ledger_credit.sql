-- 120_ledger_credit: the replacement credit an owner (a permit or a District project) earns
-- (spec section 4, Rule M 7(b), 7(c)(ii), (iv), (v)).
-- Credit = area(union of its wetland-component replacement features
--               − baseline wetland (the wetland layer as of the baseline date)
--               − declared buffers (any permit's; 7(c)(v))
--               − heritage upland ranked heritage_threshold or better (7(c)(ii))
--               − its upland-component features (7(c)(iv): upland inside the area earns nothing)
--               − anything outside the plan area (core.cwmp_area; no boundary loaded: no clip)).
-- By status: ground covered by features of several statuses counts once, at the most advanced
-- status covering it (certified, then constructed, then proposed), so the three parts are
-- disjoint and add up to the credit of all statuses.

CREATE OR REPLACE FUNCTION ledger.credit_measure(p_plan_area_id integer, p_permit_id bigint,
                                                 p_district_project text, p_on date,
                                                 p_heritage_threshold_ordinal integer)
RETURNS TABLE (
  certified_geom geometry,
  constructed_geom geometry,
  proposed_geom geometry,
  replacement_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  buffer_versions bigint[],
  heritage_area_versions bigint[],
  cwmp_area_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH rep AS (
    SELECT r.version_id, r.component, r.status, r.geom
    FROM core.replacement r
    WHERE p_permit_id IS NOT NULL AND r.permit_id = p_permit_id
      AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT r.version_id, r.component, r.status, r.geom
    FROM core.replacement r
    WHERE p_permit_id IS NULL AND r.permit_id IS NULL AND r.district_project = p_district_project
      AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
  ), u AS (
    SELECT
      ledger.union_all(array_agg(geom ORDER BY version_id)
        FILTER (WHERE component = 'wetland' AND status = 'certified')) AS cert,
      ledger.union_all(array_agg(geom ORDER BY version_id)
        FILTER (WHERE component = 'wetland' AND status = 'constructed')) AS cons,
      ledger.union_all(array_agg(geom ORDER BY version_id)
        FILTER (WHERE component = 'wetland' AND status = 'proposed')) AS prop,
      ledger.union_all(array_agg(geom ORDER BY version_id)
        FILTER (WHERE component = 'wetland')) AS wet_any,
      ledger.union_all(array_agg(geom ORDER BY version_id)
        FILTER (WHERE component = 'upland')) AS upland,
      array_agg(version_id ORDER BY version_id) AS versions,
      ST_Envelope(ST_Collect(geom) FILTER (WHERE component = 'wetland')) AS box
    FROM rep
  ), wet AS (
    SELECT ledger.union_all(array_agg(b.geom ORDER BY b.version_id)) AS geom,
           array_agg(b.version_id ORDER BY b.version_id) AS versions,
           array_agg(DISTINCT b.delineation_version_id) AS dversions
    FROM u CROSS JOIN LATERAL ledger.baseline_wetland(p_plan_area_id, p_on, u.box) b
    WHERE ST_Intersects(b.geom, u.wet_any)
  ), buf AS (
    SELECT ledger.union_all(array_agg(b.geom ORDER BY b.version_id)) AS geom,
           array_agg(b.version_id ORDER BY b.version_id) AS versions
    FROM u JOIN core.buffer b
      ON b.geom && u.box AND ST_Intersects(b.geom, u.wet_any)
    WHERE b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id
  ), her AS (
    SELECT ledger.union_all(array_agg(h.geom ORDER BY h.version_id)) AS geom,
           array_agg(h.version_id ORDER BY h.version_id) AS versions
    FROM u JOIN core.heritage_area h
      ON h.geom && u.box AND ST_Intersects(h.geom, u.wet_any)
    JOIN core.heritage_rank hr ON hr.rank = h.rank
    WHERE h.valid_to IS NULL AND h.plan_area_id = p_plan_area_id
      AND h.community_kind = 'upland' AND hr.ordinal <= p_heritage_threshold_ordinal
  ), cw AS (
    SELECT ledger.union_all(array_agg(c.geom ORDER BY c.version_id)) AS geom,
           array_agg(c.version_id ORDER BY c.version_id) AS versions
    FROM core.cwmp_area c
    WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id
  ), parts AS (
    SELECT u.cert AS cert,
           ledger.minus(u.cons, u.cert) AS cons,
           ledger.minus(u.prop, ledger.union_all(ARRAY[u.cert, u.cons])) AS prop,
           ledger.union_all(ARRAY[wet.geom, buf.geom, her.geom, u.upland]) AS excluded,
           cw.geom AS plan
    FROM u, wet, buf, her, cw
  )
  SELECT ledger.minus(CASE WHEN p.plan IS NULL THEN p.cert ELSE ledger.meet(p.cert, p.plan) END,
                      p.excluded),
         ledger.minus(CASE WHEN p.plan IS NULL THEN p.cons ELSE ledger.meet(p.cons, p.plan) END,
                      p.excluded),
         ledger.minus(CASE WHEN p.plan IS NULL THEN p.prop ELSE ledger.meet(p.prop, p.plan) END,
                      p.excluded),
         u.versions, wet.versions, wet.dversions, buf.versions, her.versions,
         CASE WHEN u.wet_any IS NULL THEN NULL ELSE cw.versions END
  FROM parts p, u, wet, buf, her, cw
$$;
COMMENT ON FUNCTION ledger.credit_measure(integer, bigint, text, date, integer) IS
  'Replacement credit of a permit (or, with p_permit_id NULL, a District project) measured as of '
  'p_on: the creditable ground by status (certified, constructed, proposed; disjoint), after '
  'every exclusion of spec section 4, with the input versions used.';

REVOKE ALL ON FUNCTION ledger.credit_measure(integer, bigint, text, date, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.credit_measure(integer, bigint, text, date, integer)
  TO rulem_etl;
