-- 205_buffer_site: the geometry every buffer check (6, 6(b), 6(c), 6(f)) starts from, per
-- permit: the protected edge, the wetland, the buffers, the effective buffer. Idempotent.
--
-- Decisions (docs/checks.md):
-- * Buffers and trails count whoever recorded them: a buffer declared under an earlier permit
--   protects the edge just as well. Markers (6(b)) are the permit's own buffers' concern.
-- * Effective buffer = buffer - trails (6(f)(iv)) - wetland: a buffer drawn over the wetland
--   edge starts at the edge, and a ray that crosses a strip of upland into other wetland stops
--   there.
-- * Buffer extent = (buffer + trails) - wetland: how far out the buffer reaches. A trail the
--   buffer encloses does not end it (6(f)(iv): the trail's surface "shall not count toward
--   buffer width", the buffer beyond it does), whether the buffer was drawn over the trail or
--   around it; wetland and the end of all buffer do.
-- * Geometry more than checks.reach_m() (1,000 ft) from the permit's parcels is not looked at;
--   a transect is at most that long.

CREATE OR REPLACE FUNCTION checks.reach_m() RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 * 0.3048 $$;
COMMENT ON FUNCTION checks.reach_m() IS
  'How far from a permit''s parcels the buffer checks look (1,000 ft): the longest transect.';

CREATE OR REPLACE FUNCTION checks.snap_m() RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 0.05 $$;
COMMENT ON FUNCTION checks.snap_m() IS
  'Distance (5 cm) within which digitized lines count as touching: a buffer this close to the '
  'wetland edge starts at the edge; a marker this close to a line is on it.';

-- Current buffers of a plan area near a geometry, as one geometry (NULL when none).
CREATE OR REPLACE FUNCTION checks.buffers_near(p_plan_area_id integer, p_near geometry)
RETURNS geometry LANGUAGE sql STABLE SET jit = off AS $$
  SELECT ST_Union(b.geom) FROM core.buffer b
  WHERE b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id AND b.geom && p_near
    AND ST_Intersects(b.geom, p_near)
$$;
COMMENT ON FUNCTION checks.buffers_near(integer, geometry) IS
  'Union of the current buffers of a plan area that intersect a geometry.';

-- How far the buffer reaches near a site: (buffer + current trails of the plan area whose box
-- meets p_near) - wetland, polygons only (NULL when there is neither buffer nor trail).
CREATE OR REPLACE FUNCTION checks.buffer_extent(p_plan_area_id integer, p_buffer geometry,
                                                p_wetland geometry, p_near geometry)
RETURNS geometry LANGUAGE sql STABLE SET jit = off AS $$
  WITH t AS (
    SELECT ST_Union(t.geom) AS trails FROM core.trail t
    WHERE t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id AND t.geom && p_near
  ), u AS (
    SELECT CASE WHEN t.trails IS NULL THEN p_buffer
                WHEN p_buffer IS NULL THEN t.trails
                ELSE ST_Union(p_buffer, t.trails) END AS g
    FROM t
  )
  SELECT ST_CollectionExtract(CASE WHEN u.g IS NULL OR p_wetland IS NULL THEN u.g
                                   ELSE ST_Difference(u.g, p_wetland) END, 3)
  FROM u
$$;
COMMENT ON FUNCTION checks.buffer_extent(integer, geometry, geometry, geometry) IS
  'How far a buffer reaches: (buffer + trails near a window) - wetland. A trail inside the '
  'buffer does not end it (6(f)(iv)); wetland and the end of all buffer do.';

-- The buffer sites of a set of permits (NULL: every permit with parcels), one statement per
-- step and permit (plpgsql on purpose: small, separately planned statements, where the same
-- steps inlined into one SQL statement made the planner evaluate them far more slowly).
-- The central wetland (6(a)) of each permit comes from the seed network of its baseline
-- layer (checks.seed_network), searched once per approval epoch of the permits' baseline
-- dates and reused by every permit whose fill and drainage leave that network alone; a
-- permit whose fill or drainage cuts into it is searched again with its own post-project
-- wetland, and one with wetland replacement adds what its replacement connects. The same
-- central wetland as checks.central_wetland's clustering of the whole plan area, which cost
-- about a minute per permit on a county (docs/checks.md, "Performance").
CREATE OR REPLACE FUNCTION checks.buffer_site_of(p_plan_area_id integer, p_permit_ids bigint[])
RETURNS TABLE (
  permit_id bigint,
  baseline_on date,
  parcels geometry,
  edge geometry,
  wetland geometry,
  central geometry,
  buffer geometry,
  own_buffer geometry,
  effective geometry
)
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
  s record;
  near geometry;
  trails geometry;
  gone geometry;
  repl bigint[];
  v_xact bigint;
  has_seed boolean;
  epoch_on date;             -- the approval epoch whose network is held below
  net record;                -- checks.seed_network of that epoch
  own record;                -- the permit's own: net, or searched for its work
BEGIN
  -- During a check run (checks.evaluate) the sites are computed once into
  -- checks.buffer_site_cache under the run's transaction id, and every buffer check reads them
  -- from there. Only the run's own transaction can see those rows (they are deleted before it
  -- ends), and no reader may write that table: nothing a caller creates or sets is read here.
  v_xact := pg_current_xact_id_if_assigned()::text::bigint;
  IF v_xact IS NOT NULL AND EXISTS (
       SELECT 1 FROM checks.buffer_site_cache c
       WHERE c.xact = v_xact AND c.plan_area_id = p_plan_area_id) THEN
    RETURN QUERY
      SELECT c.permit_id, c.baseline_on, c.parcels, c.edge, c.wetland, c.central, c.buffer,
             c.own_buffer, c.effective
      FROM checks.buffer_site_cache c
      WHERE c.xact = v_xact AND c.plan_area_id = p_plan_area_id
        AND (p_permit_ids IS NULL OR c.permit_id IN (SELECT unnest(p_permit_ids)))
      ORDER BY c.permit_id;
    RETURN;
  END IF;
  has_seed := EXISTS (SELECT 1 FROM core.central_wetland_seed cs
                      WHERE cs.valid_to IS NULL AND cs.plan_area_id = p_plan_area_id);
  FOR s IN
    SELECT ps.permit_id, ps.baseline_on, ps.parcels,
           -- the layer as of the baseline date is that of the latest approval by then
           coalesce((SELECT max(d.approved_on) FROM core.delineation d
                     WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
                       AND d.status = 'approved' AND d.approved_on <= ps.baseline_on),
                    ps.baseline_on) AS epoch
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id AND ps.parcels IS NOT NULL
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
    ORDER BY 4, ps.permit_id
  LOOP
    permit_id := s.permit_id;
    baseline_on := s.baseline_on;
    parcels := s.parcels;
    near := ST_Expand(s.parcels, checks.reach_m());
    SELECT ST_Union(w.geom) INTO wetland
    FROM checks.post_project_wetland(p_plan_area_id, s.permit_id, s.baseline_on, near) w;
    central := NULL;
    IF has_seed THEN
      IF epoch_on IS DISTINCT FROM s.epoch THEN
        SELECT * INTO net FROM checks.seed_network(p_plan_area_id, s.epoch);
        epoch_on := s.epoch;
      END IF;
      -- what the permit's work changes (as checks.post_project_wetland)
      SELECT ST_Union(i.geom) INTO gone FROM core.impact i
      WHERE i.valid_to IS NULL AND i.permit_id = s.permit_id AND i.kind IN ('fill', 'drain_full');
      repl := ARRAY(SELECT r.replacement_id FROM core.replacement r
                    WHERE r.valid_to IS NULL AND r.permit_id = s.permit_id
                      AND r.component = 'wetland');
      IF gone IS NOT NULL AND EXISTS (
           SELECT 1 FROM checks.layer_wetlands(p_plan_area_id, s.epoch, ARRAY(
                    SELECT w.wetland_id FROM core.wetland w
                    WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
                      AND w.geom && gone
                      AND w.wetland_id IN (SELECT unnest(net.wetland_ids)))) l
           WHERE l.geom && gone AND ST_Intersects(l.geom, gone)) THEN
        SELECT * INTO own FROM checks.seed_network(p_plan_area_id, s.epoch, gone, repl);
      ELSIF cardinality(repl) > 0 THEN
        SELECT * INTO own FROM checks.seed_network(p_plan_area_id, s.epoch, gone, repl,
                                                   net.wetland_ids, net.ditch_ids);
      ELSE
        own := net;
      END IF;
      -- the central rows near the site, in the order of checks.central_wetland's: the
      -- wetlands, then the replacement
      SELECT ST_Union(c.geom ORDER BY c.k, c.version_id) INTO central
      FROM (SELECT 1 AS k, l.version_id,
                   CASE WHEN gone IS NOT NULL AND ST_Intersects(l.geom, gone)
                        THEN ST_CollectionExtract(ST_Difference(l.geom, gone), 3)
                        ELSE l.geom END AS geom
            FROM checks.layer_wetlands(p_plan_area_id, s.epoch, ARRAY(
                   SELECT w.wetland_id FROM core.wetland w
                   WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
                     AND w.geom && near
                     AND w.wetland_id IN (SELECT unnest(own.wetland_ids)))) l
            UNION ALL
            SELECT 2, r.version_id, r.geom FROM core.replacement r
            WHERE r.valid_to IS NULL AND r.replacement_id IN (SELECT unnest(own.replacement_ids))
           ) c
      WHERE c.geom && near AND NOT ST_IsEmpty(c.geom);
    END IF;
    edge := checks.protected_edge(central, s.parcels, sqrt(core.param_num(
      p_plan_area_id, 'area_tolerance_m2', s.baseline_on)));
    SELECT ST_Union(b.geom) INTO buffer FROM core.buffer b
    WHERE b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id AND b.geom && near;
    SELECT ST_Union(b.geom) INTO own_buffer FROM core.buffer b
    WHERE b.valid_to IS NULL AND b.permit_id = s.permit_id;
    SELECT ST_Union(t.geom) INTO trails FROM core.trail t
    WHERE t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id AND t.geom && near;
    effective := buffer;
    IF effective IS NOT NULL AND trails IS NOT NULL THEN
      effective := ST_Difference(effective, trails);
    END IF;
    IF effective IS NOT NULL AND wetland IS NOT NULL THEN
      effective := ST_Difference(effective, wetland);
    END IF;
    effective := ST_CollectionExtract(effective, 3);
    RETURN NEXT;
  END LOOP;
END $$;
COMMENT ON FUNCTION checks.buffer_site_of(integer, bigint[]) IS
  'Per permit of a set (NULL: all): protected edge, wetland, central wetland, buffers, the '
  'permit''s own buffers and the effective buffer (buffer - trails - wetland) near its parcels.';

-- One permit's buffer site (NULL: every permit's), as checks.buffer_site_of; the published
-- transects (sql/206) read it.
CREATE OR REPLACE FUNCTION checks.buffer_site(p_plan_area_id integer,
                                              p_permit_id bigint DEFAULT NULL)
RETURNS TABLE (
  permit_id bigint,
  baseline_on date,
  parcels geometry,
  edge geometry,
  wetland geometry,
  central geometry,
  buffer geometry,
  own_buffer geometry,
  effective geometry
)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT * FROM checks.buffer_site_of(
    p_plan_area_id, CASE WHEN p_permit_id IS NOT NULL THEN ARRAY[p_permit_id] END)
$$;
COMMENT ON FUNCTION checks.buffer_site(integer, bigint) IS
  'Per permit: protected edge, wetland, central wetland, buffers, the permit''s own buffers and '
  'the effective buffer (buffer - trails - wetland) near its parcels.';

GRANT EXECUTE ON FUNCTION checks.reach_m(), checks.snap_m(),
  checks.buffers_near(integer, geometry),
  checks.buffer_extent(integer, geometry, geometry, geometry),
  checks.buffer_site_of(integer, bigint[]), checks.buffer_site(integer, bigint) TO rulem_etl;
