-- 050_wetland_layer: which wetland counts on a date (docs/ledger.md section 1, "Baseline
-- wetland").
-- For every approved delineation with approved_on <= p_on, its wetland polygons clipped to the
-- part of its study area not covered by a later-approved (still <= p_on) study area. Later
-- means a later approved_on; on the same day, the later-registered delineation wins.
-- Current knowledge of each delineation and wetland is used (their latest versions), so a
-- corrected attribute applies everywhere, while the date decides which delineations count.

CREATE OR REPLACE FUNCTION core.wetland_layer(p_plan_area_id integer, p_on date)
RETURNS TABLE (
  wetland_id bigint,
  version_id bigint,
  delineation_id bigint,
  circular39_type text,
  post_cwmp_type text,
  susceptibility_class text,
  geom geometry
)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH d AS (
    SELECT dl.delineation_id, dl.approved_on, dl.geom
    FROM core.delineation dl
    WHERE dl.valid_to IS NULL AND dl.plan_area_id = p_plan_area_id
      AND dl.status = 'approved' AND dl.approved_on <= p_on
  ), visible AS MATERIALIZED (  -- once per delineation, not per wetland
    SELECT d.delineation_id,
           coalesce(ST_Difference(d.geom, later.geom), d.geom) AS area,
           later.geom IS NULL AS whole
    FROM d
    LEFT JOIN LATERAL (
      SELECT ST_Union(l.geom) AS geom FROM d l
      WHERE (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id)
        AND l.geom && d.geom
    ) later ON true
  )
  SELECT w.wetland_id, w.version_id, w.delineation_id, w.circular39_type, w.post_cwmp_type,
         w.susceptibility_class,
         CASE WHEN v.whole OR ST_Covers(v.area, w.geom) THEN w.geom
              ELSE ST_Multi(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3)) END
  FROM core.wetland w
  JOIN visible v ON v.delineation_id = w.delineation_id
  WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
    AND (v.whole OR (w.geom && v.area AND ST_Intersects(w.geom, v.area)
                     AND NOT ST_IsEmpty(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3))))
$$;
COMMENT ON FUNCTION core.wetland_layer(integer, date) IS
  'The wetland layer of a plan area as of a date: approved delineations, each clipped to the '
  'part of its study area that no later-approved study area covers (spec section 3).';

-- The same rule near a window, for the rule checks, which look at one permit's surroundings:
-- only the current wetlands whose own box meets p_window (through the GiST index) are clipped,
-- and only their delineations' visible areas computed. Clipping only shrinks a wetland, so a
-- wetland whose box misses the window cannot meet it after clipping; callers test the clipped
-- geometry themselves. The full layer (above) evaluated per permit grew with the plan area
-- (docs/scaling.md, "What limits it"); this reads the few wetlands around the permit.
CREATE OR REPLACE FUNCTION core.wetland_layer_near(p_plan_area_id integer, p_on date,
                                                   p_window geometry)
RETURNS TABLE (
  wetland_id bigint,
  version_id bigint,
  delineation_id bigint,
  circular39_type text,
  post_cwmp_type text,
  susceptibility_class text,
  geom geometry
)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH d AS MATERIALIZED (
    SELECT dl.delineation_id, dl.approved_on, dl.geom
    FROM core.delineation dl
    WHERE dl.valid_to IS NULL AND dl.plan_area_id = p_plan_area_id
      AND dl.status = 'approved' AND dl.approved_on <= p_on
  ), near AS MATERIALIZED (
    SELECT w.wetland_id, w.version_id, w.delineation_id, w.circular39_type, w.post_cwmp_type,
           w.susceptibility_class, w.geom
    FROM core.wetland w
    WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id AND w.geom && p_window
      AND w.delineation_id IN (SELECT d.delineation_id FROM d)
  ), visible AS MATERIALIZED (  -- once per delineation of a wetland near the window
    SELECT d.delineation_id,
           coalesce(ST_Difference(d.geom, later.geom), d.geom) AS area,
           later.geom IS NULL AS whole
    FROM d
    LEFT JOIN LATERAL (
      SELECT ST_Union(l.geom) AS geom FROM d l
      WHERE (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id)
        AND l.geom && d.geom
    ) later ON true
    WHERE d.delineation_id IN (SELECT n.delineation_id FROM near n)
  )
  SELECT w.wetland_id, w.version_id, w.delineation_id, w.circular39_type, w.post_cwmp_type,
         w.susceptibility_class,
         CASE WHEN v.whole OR ST_Covers(v.area, w.geom) THEN w.geom
              ELSE ST_Multi(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3)) END
  FROM near w
  JOIN visible v ON v.delineation_id = w.delineation_id
  WHERE v.whole OR (w.geom && v.area AND ST_Intersects(w.geom, v.area)
                    AND NOT ST_IsEmpty(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3)))
$$;
COMMENT ON FUNCTION core.wetland_layer_near(integer, date, geometry) IS
  'core.wetland_layer(plan area, date) restricted to the wetlands whose own box meets a window '
  '(the same geometries, computed only for those wetlands and their delineations).';
