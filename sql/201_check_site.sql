-- 201_check_site: what every check needs to know about a permit's site: the permit in scope,
-- its baseline date, its parcels, the plan area boundary, and the wetland the permit leaves
-- behind. Idempotent.

-- Permits the checks look at: current versions, not denied or withdrawn. The baseline date is
-- the ledger's (docs/ledger.md section 1): baseline_on, else the decision date, else today; parameters and the
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

-- Central contiguous wetland (6(a); docs/checks.md, "Buffers in detail"): post-project wetland connected to the
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

-- The visible study areas of some delineations as core.wetland_layer(p_plan_area_id, p_on)
-- computes them (sql/050): each approved delineation's study area less those approved after it
-- by that date (whole: none overlaps it). Only the delineations named: the connectivity below
-- clips the wetlands it meets, never the whole layer.
CREATE OR REPLACE FUNCTION checks.visible_study_areas(p_plan_area_id integer, p_on date,
                                                      p_delineation_ids bigint[])
RETURNS TABLE (delineation_id bigint, area geometry, whole boolean)
LANGUAGE sql STABLE AS $$
  WITH d AS MATERIALIZED (
    SELECT dl.delineation_id, dl.approved_on, dl.geom
    FROM core.delineation dl
    WHERE dl.valid_to IS NULL AND dl.plan_area_id = p_plan_area_id
      AND dl.status = 'approved' AND dl.approved_on <= p_on
  )
  SELECT d.delineation_id, coalesce(ST_Difference(d.geom, later.geom), d.geom),
         later.geom IS NULL
  FROM d
  LEFT JOIN LATERAL (
    SELECT ST_Union(l.geom) AS geom FROM d l
    WHERE (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id)
      AND l.geom && d.geom
  ) later ON true
  WHERE d.delineation_id IN (SELECT unnest(p_delineation_ids))
$$;
COMMENT ON FUNCTION checks.visible_study_areas(integer, date, bigint[]) IS
  'Visible study areas of some approved delineations as of a date, as core.wetland_layer '
  'computes them.';

-- Some current wetlands (by id) as core.wetland_layer(p_plan_area_id, p_on) has them: the same
-- geometry (clipped to the visible study area), none that the layer leaves out.
CREATE OR REPLACE FUNCTION checks.layer_wetlands(p_plan_area_id integer, p_on date,
                                                 p_wetland_ids bigint[])
RETURNS TABLE (wetland_id bigint, version_id bigint, geom geometry)
LANGUAGE sql STABLE AS $$
  WITH w AS MATERIALIZED (
    SELECT w.wetland_id, w.version_id, w.delineation_id, w.geom FROM core.wetland w
    WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
      AND w.wetland_id IN (SELECT unnest(p_wetland_ids))
  ), v AS MATERIALIZED (
    SELECT * FROM checks.visible_study_areas(p_plan_area_id, p_on,
                                             ARRAY(SELECT DISTINCT w.delineation_id FROM w))
  )
  SELECT w.wetland_id, w.version_id,
         CASE WHEN v.whole OR ST_Covers(v.area, w.geom) THEN w.geom
              ELSE ST_Multi(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3)) END
  FROM w JOIN v ON v.delineation_id = w.delineation_id
  WHERE v.whole OR (w.geom && v.area AND ST_Intersects(w.geom, v.area)
                    AND NOT ST_IsEmpty(ST_CollectionExtract(ST_Intersection(w.geom, v.area), 3)))
$$;
COMMENT ON FUNCTION checks.layer_wetlands(integer, date, bigint[]) IS
  'Some current wetlands as core.wetland_layer has them as of a date (same geometry; none it '
  'leaves out).';

-- The central network (6(a)) as of a date: the wetlands, ditches and wetland replacement of a
-- permit connected by touching to a central wetland seed, found by a breadth-first search from
-- the seeds over the wetland layer as of p_on (core.wetland_layer's geometry, clipped only
-- for the wetlands the search meets), every current ditch and seed, and the replacement
-- features p_replacement_ids, with p_gone (a permit's fill and full drainage) taken out of
-- the wetland. The same answer as checks.central_wetland's clustering of the whole plan area
-- (a wetland is central when its cluster holds a seed: the clusters at distance 0 are the
-- connected parts of the touching graph), at the cost of the network it finds instead of the
-- whole layer's clustering (about a minute for a county's 30,000 wetlands, per permit).
-- p_known_wetland_ids and p_known_ditch_ids: a network already found for the same date with
-- nothing of it in p_gone (checks.buffer_site_of); the search then starts from the
-- replacement features touching it or a seed and returns the known network with what they
-- connect. Returned as arrays of ids (NULL elements never).
CREATE OR REPLACE FUNCTION checks.seed_network(p_plan_area_id integer, p_on date,
                                               p_gone geometry DEFAULT NULL,
                                               p_replacement_ids bigint[] DEFAULT NULL,
                                               p_known_wetland_ids bigint[] DEFAULT NULL,
                                               p_known_ditch_ids bigint[] DEFAULT NULL,
                                               OUT wetland_ids bigint[],
                                               OUT ditch_ids bigint[],
                                               OUT replacement_ids bigint[])
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
  seeds bigint[];
  fg geometry[];            -- the frontier: what the last step reached
  vis_ids bigint[] := '{}'; -- visible study areas met so far (checks.visible_study_areas)
  vis_area geometry[] := '{}';
  vis_whole boolean[] := '{}';
  not_layer bigint[] := '{}';  -- wetlands met that are not in the layer as of p_on
  missing bigint[];
  nw bigint[];
  nw_geom geometry[];
  nd bigint[];
  nd_geom geometry[];
  nr bigint[];
  nr_geom geometry[];
  ns bigint[];
  ns_geom geometry[];
BEGIN
  wetland_ids := coalesce(p_known_wetland_ids, '{}');
  ditch_ids := coalesce(p_known_ditch_ids, '{}');
  replacement_ids := '{}';
  IF p_known_wetland_ids IS NULL AND p_known_ditch_ids IS NULL THEN
    SELECT coalesce(array_agg(s.central_wetland_seed_id), '{}'), coalesce(array_agg(s.geom), '{}')
      INTO seeds, fg
    FROM core.central_wetland_seed s
    WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id;
  ELSE
    -- the replacement features touching the known network or a seed; the known wetlands
    -- are not in p_gone, so their geometry is the layer's
    seeds := '{}';
    SELECT coalesce(array_agg(r.replacement_id), '{}'), coalesce(array_agg(r.geom), '{}')
      INTO replacement_ids, fg
    FROM core.replacement r
    WHERE r.valid_to IS NULL AND r.replacement_id IN (SELECT unnest(p_replacement_ids))
      AND (EXISTS (SELECT 1 FROM core.central_wetland_seed s
                   WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
                     AND s.geom && r.geom AND ST_Intersects(r.geom, s.geom))
           OR EXISTS (SELECT 1 FROM core.ditch d
                      WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
                        AND d.ditch_id IN (SELECT unnest(p_known_ditch_ids))
                        AND d.geom && r.geom AND ST_Intersects(r.geom, d.geom))
           OR EXISTS (SELECT 1
                      FROM checks.layer_wetlands(p_plan_area_id, p_on, ARRAY(
                             SELECT w.wetland_id FROM core.wetland w
                             WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
                               AND w.geom && r.geom
                               AND w.wetland_id IN (SELECT unnest(p_known_wetland_ids)))) l
                      WHERE l.geom && r.geom AND ST_Intersects(r.geom, l.geom)));
    -- (seeds are reached already: they hold the known network together)
    SELECT coalesce(array_agg(s.central_wetland_seed_id), '{}') INTO seeds
    FROM core.central_wetland_seed s
    WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id;
  END IF;

  WHILE cardinality(fg) > 0 LOOP
    -- wetlands whose box meets the frontier: clip them (their study areas first)
    SELECT ARRAY(SELECT DISTINCT w.delineation_id
                 FROM unnest(fg) f(g)
                 JOIN core.wetland w ON w.geom && f.g
                 WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
                   AND w.wetland_id NOT IN (SELECT unnest(wetland_ids))
                   AND w.wetland_id NOT IN (SELECT unnest(not_layer))
                   AND w.delineation_id NOT IN (SELECT unnest(vis_ids)))
      INTO missing;
    IF cardinality(missing) > 0 THEN
      -- (a delineation not approved by p_on gets no area: its wetlands are not in the layer)
      SELECT vis_ids || array_agg(m.id), vis_area || array_agg(v.area),
             vis_whole || array_agg(v.whole)
        INTO vis_ids, vis_area, vis_whole
      FROM unnest(missing) m(id)
      LEFT JOIN checks.visible_study_areas(p_plan_area_id, p_on, missing) v
        ON v.delineation_id = m.id;
    END IF;
    WITH met AS MATERIALIZED (
      SELECT DISTINCT ON (w.wetland_id, f.i) w.wetland_id, w.version_id, w.geom, f.i,
             v.area, v.whole
      FROM unnest(fg) WITH ORDINALITY f(g, i)
      JOIN core.wetland w ON w.geom && f.g
      LEFT JOIN unnest(vis_ids, vis_area, vis_whole) v(delineation_id, area, whole)
        ON v.delineation_id = w.delineation_id
      WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
        AND w.wetland_id NOT IN (SELECT unnest(wetland_ids))
        AND w.wetland_id NOT IN (SELECT unnest(not_layer))
    ), shaped AS MATERIALIZED (  -- core.wetland_layer's geometry, less p_gone (as
      SELECT m.wetland_id, m.version_id,  -- checks.post_project_wetland)
             CASE WHEN m.area IS NULL THEN NULL  -- not approved by p_on
                  WHEN m.whole OR ST_Covers(m.area, m.geom) THEN m.geom
                  WHEN NOT (m.geom && m.area AND ST_Intersects(m.geom, m.area)) THEN NULL
                  ELSE ST_Multi(ST_CollectionExtract(ST_Intersection(m.geom, m.area), 3))
                  END AS geom
      FROM (SELECT DISTINCT ON (met.wetland_id) met.* FROM met ORDER BY met.wetland_id) m
    ), post AS MATERIALIZED (
      SELECT s.wetland_id,
             CASE WHEN s.geom IS NULL OR ST_IsEmpty(s.geom) THEN NULL
                  WHEN p_gone IS NOT NULL AND ST_Intersects(s.geom, p_gone)
                  THEN ST_CollectionExtract(ST_Difference(s.geom, p_gone), 3)
                  ELSE s.geom END AS geom
      FROM shaped s
    )
    SELECT coalesce(array_agg(p.wetland_id) FILTER (WHERE p.geom IS NOT NULL
                                                    AND NOT ST_IsEmpty(p.geom)
                                                    AND EXISTS (
               SELECT 1 FROM met m WHERE m.wetland_id = p.wetland_id
                 AND ST_Intersects(fg[m.i::int], p.geom))), '{}'),
           coalesce(array_agg(p.geom) FILTER (WHERE p.geom IS NOT NULL
                                              AND NOT ST_IsEmpty(p.geom)
                                              AND EXISTS (
               SELECT 1 FROM met m WHERE m.wetland_id = p.wetland_id
                 AND ST_Intersects(fg[m.i::int], p.geom))), '{}'),
           not_layer || coalesce(array_agg(p.wetland_id) FILTER (
             WHERE p.geom IS NULL OR ST_IsEmpty(p.geom)), '{}')
      INTO nw, nw_geom, not_layer
    FROM post p;
    -- ditches (any status: an abandoned ditch still connects), seeds, the permit's replacement
    SELECT coalesce(array_agg(x.ditch_id), '{}'), coalesce(array_agg(x.geom), '{}')
      INTO nd, nd_geom
    FROM (SELECT DISTINCT ON (d.ditch_id) d.ditch_id, d.geom
          FROM unnest(fg) f(g) JOIN core.ditch d ON d.geom && f.g
          WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
            AND d.ditch_id NOT IN (SELECT unnest(ditch_ids)) AND ST_Intersects(f.g, d.geom)
          ORDER BY d.ditch_id) x;
    SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.geom), '{}')
      INTO ns, ns_geom
    FROM (SELECT DISTINCT ON (s.central_wetland_seed_id) s.central_wetland_seed_id AS id,
                 s.geom
          FROM unnest(fg) f(g) JOIN core.central_wetland_seed s ON s.geom && f.g
          WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
            AND s.central_wetland_seed_id NOT IN (SELECT unnest(seeds))
            AND ST_Intersects(f.g, s.geom)
          ORDER BY s.central_wetland_seed_id) x;
    SELECT coalesce(array_agg(x.replacement_id), '{}'), coalesce(array_agg(x.geom), '{}')
      INTO nr, nr_geom
    FROM (SELECT DISTINCT ON (r.replacement_id) r.replacement_id, r.geom
          FROM unnest(fg) f(g) JOIN core.replacement r ON r.geom && f.g
          WHERE r.valid_to IS NULL AND r.replacement_id IN (SELECT unnest(p_replacement_ids))
            AND r.replacement_id NOT IN (SELECT unnest(replacement_ids))
            AND ST_Intersects(f.g, r.geom)
          ORDER BY r.replacement_id) x;
    wetland_ids := wetland_ids || nw;
    ditch_ids := ditch_ids || nd;
    seeds := seeds || ns;
    replacement_ids := replacement_ids || nr;
    fg := nw_geom || nd_geom || ns_geom || nr_geom;
  END LOOP;
END $$;
COMMENT ON FUNCTION checks.seed_network(integer, date, geometry, bigint[], bigint[], bigint[]) IS
  'The wetlands, ditches and replacement features connected by touching to a central wetland '
  'seed as of a date (6(a)), with a permit''s fill and full drainage taken out: a search from '
  'the seeds (or out from a known network) over what it meets.';

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
  checks.visible_study_areas(integer, date, bigint[]),
  checks.layer_wetlands(integer, date, bigint[]),
  checks.seed_network(integer, date, geometry, bigint[], bigint[], bigint[]),
  checks.post_project_wetland(integer, bigint, date, geometry),
  checks.central_wetland(integer, bigint, date),
  checks.protected_edge(geometry, geometry, double precision) TO rulem_etl;
