-- 110_ledger_impact: the impact permits record (spec section 4, Rule M 7(b)).
-- Impact acres = area(impact ∩ baseline wetland) x factor: 1 for fill, excavate and drain_full,
-- partial_drain_factor for drain_partial. A permit's impact features are measured on their
-- union, so overlapping features never count twice; where a partial drain overlaps a fill (or
-- another full-factor kind) of the same permit, that ground counts once, at factor 1.
-- Set-based: one call measures many permits (the owners of a recompute chunk), each against
-- the wetland layer as of its own baseline date; the arrays are parallel, one element per
-- permit, and owner_no is the element's position.

DROP FUNCTION IF EXISTS ledger.impact_measure(integer, bigint, date, numeric);

CREATE OR REPLACE FUNCTION ledger.impact_measures(p_plan_area_id integer, p_permit_ids bigint[],
                                                  p_on date[], p_partial_drain_factor numeric[])
RETURNS TABLE (
  owner_no integer,
  full_geom geometry,
  partial_geom geometry,
  impact_acres numeric,
  impact_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH o AS (
    SELECT u.n::integer AS owner_no, u.permit_id, u.on_date, u.factor
    FROM unnest(p_permit_ids, p_on, p_partial_drain_factor)
         WITH ORDINALITY AS u(permit_id, on_date, factor, n)
    WHERE u.permit_id IS NOT NULL
  ), imp AS (
    SELECT o.owner_no, min(o.on_date) AS on_date, min(o.factor) AS factor,
           ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind <> 'drain_partial')) AS full_g,
           ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind = 'drain_partial')) AS partial_g,
           array_agg(i.version_id ORDER BY i.version_id) AS versions,
           ST_Envelope(ST_Collect(i.geom)) AS box
    FROM o
    JOIN core.impact i
      ON i.permit_id = o.permit_id AND i.valid_to IS NULL AND i.plan_area_id = p_plan_area_id
    GROUP BY o.owner_no
  ), wet AS (                  -- the baseline wetland the impacts meet, per permit
    SELECT imp.owner_no,
           ledger.union_all(array_agg(b.geom ORDER BY b.version_id)) AS geom,
           array_agg(b.version_id ORDER BY b.version_id) AS versions,
           array_agg(DISTINCT b.delineation_version_id) AS dversions
    FROM imp CROSS JOIN LATERAL ledger.baseline_wetland(p_plan_area_id, imp.on_date, imp.box) b
    WHERE ST_Intersects(b.geom, imp.full_g) OR ST_Intersects(b.geom, imp.partial_g)
    GROUP BY imp.owner_no
  ), piece AS (
    SELECT imp.owner_no, imp.factor, imp.versions, wet.versions AS wversions, wet.dversions,
           ledger.meet(imp.full_g, wet.geom) AS full_p,
           ledger.meet(ledger.minus(imp.partial_g, imp.full_g), wet.geom) AS partial_p
    FROM imp LEFT JOIN wet ON wet.owner_no = imp.owner_no
  )
  SELECT piece.owner_no, piece.full_p, piece.partial_p,
         ledger.acres(piece.full_p) + piece.factor * ledger.acres(piece.partial_p),
         piece.versions, piece.wversions, piece.dversions
  FROM piece
$$;
COMMENT ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]) IS
  'Impact of permits (parallel arrays: permit, baseline date, partial_drain_factor; owner_no = '
  'position): the full-factor and partial-drain parts of impact ∩ baseline wetland, impact '
  'acres, and the impact, wetland and delineation versions used. Permits with no impact: no row.';

REVOKE ALL ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[])
  TO rulem_etl;
