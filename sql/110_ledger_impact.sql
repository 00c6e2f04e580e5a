-- 110_ledger_impact: the impact permits record (spec section 4, Rule M 7(b)).
-- Impact acres = area(impact ∩ baseline wetland) x factor: 1 for fill, excavate and drain_full,
-- partial_drain_factor for drain_partial. A permit's impact features are measured on their
-- union, so overlapping features never count twice; where a partial drain overlaps a fill (or
-- another full-factor kind) of the same permit, that ground counts once, at factor 1.
-- A permit's structures (roads, utilities, boardwalks, buildings: core.structure) are fill
-- wherever they lie in baseline wetland, whether or not an impact polygon was drawn for them
-- and whatever variance allows them: 7(g) lets a structure into wetland "pursuant to the
-- District's variance procedures", it does not excuse the replacement 7(b) asks "for each
-- acre of wetland impact", and 7(d) makes the WCA exemptions of Minn. R. 8420.0122
-- inapplicable. The one exception is a structure on record as suspended above the ground
-- (buffer_exception 'suspended_6fi', 6(f)(i): its supports' impact "negligible"): it places
-- no fill. A structure without an impact polygon is a finding (sql/270).
-- Set-based: one call measures many permits (the owners of a recompute chunk), each against
-- the wetland layer as of its own baseline date; the arrays are parallel, one element per
-- permit, and owner_no is the element's position.

DROP FUNCTION IF EXISTS ledger.impact_measure(integer, bigint, date, numeric);

DROP FUNCTION IF EXISTS ledger.impact_measures(integer, bigint[], date[], numeric[]);
CREATE OR REPLACE FUNCTION ledger.impact_measures(p_plan_area_id integer, p_permit_ids bigint[],
                                                  p_on date[], p_partial_drain_factor numeric[])
RETURNS TABLE (
  owner_no integer,
  full_geom geometry,
  partial_geom geometry,
  impact_acres numeric,
  impact_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  structure_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH o AS (
    SELECT u.n::integer AS owner_no, u.permit_id, u.on_date, u.factor
    FROM unnest(p_permit_ids, p_on, p_partial_drain_factor)
         WITH ORDINALITY AS u(permit_id, on_date, factor, n)
    WHERE u.permit_id IS NOT NULL
  ), imp0 AS (
    SELECT o.owner_no, min(o.on_date) AS on_date, min(o.factor) AS factor,
           ledger.union_all(array_agg(i.geom ORDER BY i.structure, i.version_id)
             FILTER (WHERE i.kind <> 'drain_partial')) AS full_g,
           ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind = 'drain_partial')) AS partial_g,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE NOT i.structure)
             AS versions,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE i.structure)
             AS structure_versions,
           ST_Envelope(ST_Collect(i.geom)) AS box
    FROM o
    JOIN (SELECT x.permit_id, x.version_id, x.kind, x.geom, false AS structure
          FROM core.impact x
          WHERE x.valid_to IS NULL AND x.plan_area_id = p_plan_area_id
          UNION ALL
          SELECT x.permit_id, x.version_id, 'fill', x.geom, true      -- structures are fill
          FROM core.structure x
          WHERE x.valid_to IS NULL AND x.plan_area_id = p_plan_area_id
            AND x.buffer_exception IS DISTINCT FROM 'suspended_6fi') i
      ON i.permit_id = o.permit_id
    GROUP BY o.owner_no
  ), imp AS (                 -- partial drains outside the full-factor kinds
    SELECT imp0.*, ledger.minus(imp0.partial_g, imp0.full_g) AS partial_only FROM imp0
  ), cut AS (                 -- impact ∩ each baseline wetland piece it meets
    SELECT imp.owner_no, b.version_id, b.delineation_version_id, b.wetland_piece_id,
           ledger.meet(imp.full_g, b.geom) AS full_p,
           ledger.meet(imp.partial_only, b.geom) AS partial_p
    FROM (SELECT array_agg(imp.owner_no ORDER BY imp.owner_no) AS nos,
                 array_agg(imp.on_date ORDER BY imp.owner_no) AS dates,
                 array_agg(imp.box ORDER BY imp.owner_no) AS boxes FROM imp) a
    CROSS JOIN LATERAL ledger.baseline_pieces(p_plan_area_id, a.nos, a.dates, a.boxes) b
    JOIN imp ON imp.owner_no = b.owner_no
    OFFSET 0                   -- once per piece: the filter and the aggregates both use it
  ), wet AS (                  -- the pieces' parts: overlapping wetlands count once
    SELECT cut.owner_no,
           array_agg(cut.full_p ORDER BY cut.wetland_piece_id) AS full_parts,
           array_agg(cut.partial_p ORDER BY cut.wetland_piece_id) AS partial_parts,
           array_agg(DISTINCT cut.version_id) AS versions,
           array_agg(DISTINCT cut.delineation_version_id) AS dversions
    FROM cut
    WHERE NOT ST_IsEmpty(coalesce(cut.full_p, cut.partial_p))   -- pieces that share area
       OR NOT ST_IsEmpty(coalesce(cut.partial_p, cut.full_p))   -- with it, not just a box
    GROUP BY cut.owner_no
  ), u AS (                    -- unioned, unless one piece covers the whole impact
    SELECT imp.owner_no, imp.factor, imp.versions, imp.structure_versions,
           wet.versions AS wversions, wet.dversions,
           ledger.union_within(imp.full_g, wet.full_parts) AS full_p,
           ledger.union_within(imp.partial_only, wet.partial_parts) AS partial_p
    FROM imp LEFT JOIN wet ON wet.owner_no = imp.owner_no
    OFFSET 0                   -- once per owner, not once per use
  )
  SELECT u.owner_no, u.full_p, u.partial_p,
         ledger.acres(u.full_p) + u.factor * ledger.acres(u.partial_p),
         u.versions, u.wversions, u.dversions, u.structure_versions
  FROM u
$$;
COMMENT ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]) IS
  'Impact of permits (parallel arrays: permit, baseline date, partial_drain_factor; owner_no = '
  'position): the full-factor and partial-drain parts of impact ∩ baseline wetland (the '
  'permit''s structures count as fill), impact acres, and the impact, wetland, delineation and '
  'structure versions used. Permits with no impact and no structure: no row.';

REVOKE ALL ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[])
  TO rulem_etl;
