-- 140_ledger_allocation: how an owner's acres fall on parcels (spec section 4, "1:1 replacement
-- balance per parcel").
--   * A permit's required acres fall on each current parcel in proportion to the impact acres
--     inside it; its credit (own, and transfers in and out) is shared in the same proportion.
--   * An owner with no impact leaves each credit measure on the parcels that host that credit,
--     in proportion to what each hosts.
--   * Fallbacks, in order, when the basis lies on no parcel (e.g. a road right of way with no
--     parcel, or transfers only): credit of any status hosted, then the permit's parcel_pins in
--     equal shares, then no parcel (parcel_id NULL, shown as unallocated in pub.plan_balance).
-- Shares are normalised over the parcels found, so overlapping parcels or ground outside every
-- parcel never lose or double an acre, and each measure's allocations add up exactly to the
-- owner's total (the largest share takes the rounding remainder).

CREATE OR REPLACE FUNCTION ledger.parcel_areas(p_plan_area_id integer, p_geom geometry)
RETURNS TABLE (parcel_id bigint, parcel_version_id bigint, acres numeric)
LANGUAGE sql STABLE AS $$
  SELECT x.parcel_id, x.version_id, x.acres
  FROM (
    SELECT p.parcel_id, p.version_id,
           core.acres(CASE WHEN ST_CoveredBy(p_geom, p.geom) THEN p_geom
                           ELSE ST_Intersection(p_geom, p.geom) END) AS acres
    FROM core.parcel p
    WHERE p_geom IS NOT NULL AND p.valid_to IS NULL AND p.plan_area_id = p_plan_area_id
      AND p.geom && p_geom AND ST_Intersects(p.geom, p_geom)
  ) x
  WHERE x.acres > 0
$$;
COMMENT ON FUNCTION ledger.parcel_areas(integer, geometry) IS
  'Acres of a geometry inside each current parcel of a plan area (parcels it only touches are '
  'left out).';

CREATE OR REPLACE FUNCTION ledger.split(p_total numeric, p_parcel_ids bigint[],
                                        p_weights numeric[])
RETURNS TABLE (parcel_id bigint, acres numeric)
LANGUAGE sql IMMUTABLE AS $$
  WITH w AS (
    SELECT u.parcel_id, u.weight
    FROM unnest(p_parcel_ids, p_weights) AS u(parcel_id, weight)
    WHERE u.weight > 0 AND u.parcel_id IS NOT NULL
  ), s AS (
    SELECT sum(w.weight) AS total FROM w
  ), r AS (
    SELECT w.parcel_id,
           row_number() OVER (ORDER BY w.weight DESC, w.parcel_id) AS rk,
           round(p_total * w.weight / s.total, 12) AS part
    FROM w, s
  )
  SELECT r.parcel_id,
         CASE WHEN r.rk = 1 THEN p_total - coalesce((SELECT sum(o.part) FROM r o WHERE o.rk > 1), 0)
              ELSE r.part END
  FROM r
  WHERE p_total <> 0
  UNION ALL
  SELECT NULL::bigint, p_total
  WHERE p_total <> 0 AND NOT EXISTS (SELECT 1 FROM w)
$$;
COMMENT ON FUNCTION ledger.split(numeric, bigint[], numeric[]) IS
  'Splits a total over parcels in proportion to weights (12 decimals; the largest share takes '
  'the remainder, so the parts add up exactly); no parcel with a weight: one part, parcel NULL.';

REVOKE ALL ON FUNCTION ledger.parcel_areas(integer, geometry),
  ledger.split(numeric, bigint[], numeric[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.parcel_areas(integer, geometry),
  ledger.split(numeric, bigint[], numeric[]) TO rulem_etl;
