-- 140_ledger_allocation: how an owner's acres fall on parcels (docs/ledger.md section 2, the
-- 1:1 replacement balance per parcel).
--   * A permit's required acres fall on each current parcel in proportion to the impact acres
--     inside it; its credit (own, and transfers in and out) is shared in the same proportion.
--   * An owner with no impact leaves each credit measure on the parcels that host that credit,
--     in proportion to what each hosts.
--   * Fallbacks, in order, when the basis lies on no parcel (e.g. a road right of way with no
--     parcel, or transfers only): credit of any status hosted, then the permit's parcel_pins in
--     equal shares, then no parcel (parcel_id NULL, shown as unallocated in pub.plan_balance).
-- Each parcel whose box meets the ground costs one overlay, and none when the parcel covers
-- it (ST_Covers answers from the boxes alone when the parcel is a rectangle, and sees a
-- parcel's box that does not cover the ground's without GEOS): nearly every parcel whose box
-- meets a fill or a replacement site shares area with it, so testing ST_Intersects first
-- cost more than the few empty overlays it spared.
-- Shares are normalised over the parcels found, so overlapping parcels or ground outside every
-- parcel never lose or double an acre, and each measure's allocations add up exactly to the
-- owner's total (the largest share takes the rounding remainder).

-- Acres of a geometry inside one parcel: no overlay when the parcel covers it.
CREATE OR REPLACE FUNCTION ledger.parcel_acres(p_parcel geometry, p_geom geometry)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT core.acres(CASE WHEN ST_Covers(p_parcel, p_geom) THEN p_geom
                         ELSE ST_Intersection(p_geom, p_parcel) END)
$$;
COMMENT ON FUNCTION ledger.parcel_acres(geometry, geometry) IS
  'Acres of p_geom inside the parcel p_parcel (no overlay when the parcel covers it).';

DROP FUNCTION IF EXISTS ledger.parcel_areas(integer, geometry);  -- a join in sql/150

DROP FUNCTION IF EXISTS ledger.split(numeric, bigint[], numeric[]);  -- now set-based in sql/150

REVOKE ALL ON FUNCTION ledger.parcel_acres(geometry, geometry) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.parcel_acres(geometry, geometry) TO rulem_etl;
