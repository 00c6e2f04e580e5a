-- 110_ledger_impact: the impact a permit records (spec section 4, Rule M 7(b)).
-- Impact acres = area(impact ∩ baseline wetland) x factor: 1 for fill, excavate and drain_full,
-- partial_drain_factor for drain_partial. The permit's impact features are measured on their
-- union, so overlapping features never count twice; where a partial drain overlaps a fill (or
-- another full-factor kind) of the same permit, that ground counts once, at factor 1.

CREATE OR REPLACE FUNCTION ledger.impact_measure(p_plan_area_id integer, p_permit_id bigint,
                                                 p_on date, p_partial_drain_factor numeric)
RETURNS TABLE (
  full_geom geometry,
  partial_geom geometry,
  impact_acres numeric,
  impact_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH imp AS (
    SELECT ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind <> 'drain_partial')) AS full_g,
           ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind = 'drain_partial')) AS partial_g,
           array_agg(i.version_id ORDER BY i.version_id) AS versions,
           ST_Envelope(ST_Collect(i.geom)) AS box
    FROM core.impact i
    WHERE i.permit_id = p_permit_id AND i.valid_to IS NULL AND i.plan_area_id = p_plan_area_id
  ), wet AS (
    SELECT ledger.union_all(array_agg(b.geom ORDER BY b.version_id)) AS geom,
           array_agg(b.version_id ORDER BY b.version_id) AS versions,
           array_agg(DISTINCT b.delineation_version_id) AS dversions
    FROM imp CROSS JOIN LATERAL ledger.baseline_wetland(p_plan_area_id, p_on, imp.box) b
    WHERE ST_Intersects(b.geom, imp.full_g) OR ST_Intersects(b.geom, imp.partial_g)
  ), piece AS (
    SELECT ledger.meet(imp.full_g, wet.geom) AS full_p,
           ledger.meet(ledger.minus(imp.partial_g, imp.full_g), wet.geom) AS partial_p,
           imp.versions, wet.versions AS wversions, wet.dversions
    FROM imp, wet
  )
  SELECT full_p, partial_p,
         ledger.acres(full_p) + p_partial_drain_factor * ledger.acres(partial_p),
         versions, wversions, dversions
  FROM piece
$$;
COMMENT ON FUNCTION ledger.impact_measure(integer, bigint, date, numeric) IS
  'A permit''s impact on the wetland layer as of p_on: the full-factor and partial-drain parts '
  '(impact ∩ baseline wetland, impact features unioned), impact acres, and the impact, wetland '
  'and delineation versions used.';

REVOKE ALL ON FUNCTION ledger.impact_measure(integer, bigint, date, numeric) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.impact_measure(integer, bigint, date, numeric) TO rulem_etl;
