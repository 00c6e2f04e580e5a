-- 201_check_site: what every check needs to know about a permit's site: the permit in scope,
-- its baseline date, its parcels, the plan area boundary, and the wetland the permit leaves
-- behind. Idempotent.

-- Permits the checks look at: current versions, not denied or withdrawn. The baseline date is
-- the spec's (section 3): baseline_on, else the decision date, else today; parameters and the
-- wetland layer are read as of that date. Parcels are the current parcels whose normalized PIN
-- the permit lists.
CREATE OR REPLACE VIEW checks.permit_site AS
SELECT p.plan_area_id, p.permit_id, p.permit_no, p.status,
       p.status IN ('approved', 'expired') AS decided,
       coalesce(p.baseline_on, p.decided_on, current_date) AS baseline_on,
       coalesce(p.involves_subdivision, false) AS involves_subdivision,
       p.vegetation_plan_on, p.ditch_determined_on,
       coalesce(p.public_land, false) AS public_land,
       pc.parcel_ids, pc.parcels
FROM core.permit p
LEFT JOIN LATERAL (
  SELECT array_agg(x.parcel_id ORDER BY x.parcel_id) AS parcel_ids,
         ST_Multi(ST_Union(x.geom)) AS parcels
  FROM core.parcel x
  WHERE x.valid_to IS NULL AND x.plan_area_id = p.plan_area_id
    AND x.pin_normalized = ANY (p.parcel_pins)
) pc ON true
WHERE p.valid_to IS NULL AND p.status NOT IN ('denied', 'withdrawn');
COMMENT ON VIEW checks.permit_site IS
  'Permits the checks look at (current, not denied or withdrawn) with baseline date and parcels.';

-- The CWMP area (union of the current cwmp_area features). Every area check needs it, so a
-- plan area without one is refused with the fix in the message.
CREATE OR REPLACE FUNCTION checks.plan_boundary(p_plan_area_id integer)
RETURNS geometry LANGUAGE plpgsql STABLE AS $$
DECLARE
  g geometry;
BEGIN
  SELECT ST_Union(geom) INTO g FROM core.cwmp_area
  WHERE valid_to IS NULL AND plan_area_id = p_plan_area_id;
  IF g IS NULL THEN
    RAISE EXCEPTION 'plan area % has no CWMP area boundary: ingest the cwmp_area layer first',
      p_plan_area_id USING ERRCODE = 'no_data_found';
  END IF;
  RETURN g;
END $$;

-- The wetland a permit leaves behind, near an area of interest: the baseline wetland layer
-- minus the permit's fill and full drainage (the filled or drained part is no longer wetland;
-- excavated and partially drained wetland still is), plus the permit's wetland replacement
-- (it becomes CWMP wetland). Buffers are measured from this edge, and the easement must cover
-- it. p_near NULL means the whole plan area.
CREATE OR REPLACE FUNCTION checks.post_project_wetland(p_plan_area_id integer,
                                                       p_permit_id bigint, p_on date,
                                                       p_near geometry DEFAULT NULL)
RETURNS TABLE (wetland_id bigint, replacement_id bigint, geom geometry)
LANGUAGE sql STABLE AS $$
  WITH gone AS (
    SELECT ST_Union(i.geom) AS geom FROM core.impact i
    WHERE i.valid_to IS NULL AND i.permit_id = p_permit_id AND i.kind IN ('fill', 'drain_full')
  ), base AS (
    SELECT w.wetland_id,
           CASE WHEN gone.geom IS NOT NULL AND ST_Intersects(w.geom, gone.geom)
                THEN ST_CollectionExtract(ST_Difference(w.geom, gone.geom), 3)
                ELSE w.geom END AS geom
    FROM (SELECT l.wetland_id, l.geom FROM core.wetland_layer(p_plan_area_id, p_on) l
          WHERE p_near IS NULL
          UNION ALL  -- near a place: only the wetlands around it are clipped (sql/050)
          SELECT l.wetland_id, l.geom
          FROM core.wetland_layer_near(p_plan_area_id, p_on, p_near) l
          WHERE p_near IS NOT NULL AND l.geom && p_near) w, gone
  )
  SELECT b.wetland_id, NULL::bigint, b.geom FROM base b WHERE NOT ST_IsEmpty(b.geom)
  UNION ALL
  SELECT NULL, r.replacement_id, r.geom FROM core.replacement r
  WHERE r.valid_to IS NULL AND r.permit_id = p_permit_id AND r.component = 'wetland'
    AND (p_near IS NULL OR r.geom && p_near)
$$;

-- Central contiguous wetland (6(a), spec section 3): post-project wetland connected to the
-- central wetland seed by touching, or through ditch lines touching both (ditch networks
-- included). One density clustering at distance 0 over wetland, ditches and seed: a wetland
-- is central when its cluster holds the seed. Ditches of any status count: an abandoned ditch
-- is a legal status, its channel still connects.
CREATE OR REPLACE FUNCTION checks.central_wetland(p_plan_area_id integer, p_permit_id bigint,
                                                  p_on date)
RETURNS TABLE (wetland_id bigint, replacement_id bigint, geom geometry)
LANGUAGE sql STABLE AS $$
  WITH piece AS (
    SELECT 'wetland' AS kind, w.wetland_id, w.replacement_id, w.geom
    FROM checks.post_project_wetland(p_plan_area_id, p_permit_id, p_on) w
    UNION ALL
    SELECT 'ditch', NULL, NULL, d.geom FROM core.ditch d
    WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT 'seed', NULL, NULL, s.geom FROM core.central_wetland_seed s
    WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
  ), clustered AS (
    SELECT kind, piece.wetland_id, piece.replacement_id, piece.geom,
           ST_ClusterDBSCAN(piece.geom, 0, 1) OVER () AS cluster
    FROM piece
  )
  SELECT c.wetland_id, c.replacement_id, c.geom FROM clustered c
  WHERE c.kind = 'wetland'
    AND c.cluster IN (SELECT s.cluster FROM clustered s WHERE s.kind = 'seed')
$$;

-- The protected edge of a permit (6, 6(c)): the boundary of the central wetland inside the
-- permit's parcels, where it borders upland, merged into lines; pieces shorter than
-- p_min_length_m are dropped (the side of the sliver tolerance). Holes count: upland enclosed
-- by wetland has an edge too.
CREATE OR REPLACE FUNCTION checks.protected_edge(p_central geometry, p_parcels geometry,
                                                 p_min_length_m double precision)
RETURNS geometry LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ST_Multi(ST_Collect(e.geom))
  FROM ST_Dump(ST_LineMerge(ST_CollectionExtract(
         ST_Intersection(ST_Boundary(p_central), p_parcels), 2))) e
  WHERE ST_Length(e.geom) >= p_min_length_m
$$;

COMMENT ON FUNCTION checks.plan_boundary(integer) IS
  'The CWMP area of a plan area (union of current cwmp_area features); refuses a plan area '
  'without one.';
COMMENT ON FUNCTION checks.post_project_wetland(integer, bigint, date, geometry) IS
  'Baseline wetland minus the permit''s fill and full drainage, plus its wetland replacement.';
COMMENT ON FUNCTION checks.central_wetland(integer, bigint, date) IS
  'Post-project wetland connected to the central wetland seed by touching or through ditches '
  '(6(a)).';
COMMENT ON FUNCTION checks.protected_edge(geometry, geometry, double precision) IS
  'Central wetland boundary inside the permit''s parcels: the edge a buffer must follow (6(c)).';

GRANT SELECT ON checks.permit_site TO rulem_etl;
GRANT EXECUTE ON FUNCTION checks.plan_boundary(integer),
  checks.post_project_wetland(integer, bigint, date, geometry),
  checks.central_wetland(integer, bigint, date),
  checks.protected_edge(geometry, geometry, double precision) TO rulem_etl;
