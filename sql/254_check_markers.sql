-- 254_check_markers: 6(b) buffer markers on the buffer's upland edge. Idempotent.
--
-- Upland edge: the boundary of the permit's own buffers, less what lies within snap distance
-- of wetland (the side along the wetland edge), merged into lines. It runs on through lot
-- lines: the rule spaces markers along the edge, and a lot line only adds a required marker.
-- Lot-line crossings: where the upland edge meets a parcel boundary (where the edge runs along
-- a lot line, e.g. a buffer ending on it, the end of that stretch farthest from the wetland).
-- Counted markers: current markers of any permit within marker_tolerance_ft of the upland
-- edge; free-standing markers always, flush and breakaway markers on public land (the permit's
-- public_land flag: the site is public land or right-of-way; a buffer's public-land agreement
-- flag says how the buffer is documented, not whose land it is on, see sql/240).
-- On public land "the monumentation requirement may be satisfied by ... a vegetation
-- maintenance plan approved by the District staff in writing" (6(b)): a permit on public land
-- whose buffer vegetation plan is approved (permit.vegetation_plan_on, the one plan approval
-- the model records) needs no markers; each check gives it one passing evaluation saying so.
--   marker_lot_line: per crossing, the distance to the nearest counted marker (no marker at
--                    all: NULL), against marker_tolerance_ft;
--   marker_gap:      per stretch between consecutive markers along each upland edge line,
--                    and from each end of an open line to its first marker, the length,
--                    against marker_max_spacing_ft (a closed line wraps around; a line with
--                    no marker is one gap as long as the line).

-- Permits with a buffer of their own on public land whose vegetation plan is approved: the
-- plan stands in for markers (6(b)).
DROP FUNCTION IF EXISTS checks.marker_plan(integer, bigint);
CREATE OR REPLACE FUNCTION checks.marker_plan(p_plan_area_id integer,
                                              p_permit_ids bigint[] DEFAULT NULL)
RETURNS TABLE (permit_id bigint, plan_on date)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT ps.permit_id, ps.vegetation_plan_on
  FROM checks.permit_site ps
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
    AND ps.public_land AND ps.vegetation_plan_on IS NOT NULL
    AND EXISTS (SELECT 1 FROM core.buffer b
                WHERE b.valid_to IS NULL AND b.permit_id = ps.permit_id)
$$;
COMMENT ON FUNCTION checks.marker_plan(integer, bigint[]) IS
  'Permits on public land with a buffer and an approved vegetation plan, which stands in for '
  'buffer markers (6(b)).';

DROP FUNCTION IF EXISTS checks.marker_site(integer, bigint);
CREATE OR REPLACE FUNCTION checks.marker_site(p_plan_area_id integer,
                                              p_permit_ids bigint[] DEFAULT NULL)
RETURNS TABLE (permit_id bigint, baseline_on date, upland_edge geometry, lot_lines geometry,
               wetland geometry, markers geometry)
LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT s.permit_id, s.baseline_on, s.own_buffer, s.wetland, ps.public_land
    FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s
    JOIN checks.permit_site ps USING (permit_id)
    WHERE s.own_buffer IS NOT NULL
      AND NOT (ps.public_land AND ps.vegetation_plan_on IS NOT NULL)  -- checks.marker_plan
  ), edge AS (
    SELECT site.*, ST_LineMerge(ST_CollectionExtract(
             CASE WHEN site.wetland IS NULL THEN ST_Boundary(site.own_buffer)
                  ELSE ST_Difference(ST_Boundary(site.own_buffer),
                                     ST_Buffer(site.wetland, checks.snap_m())) END, 2))
             AS upland_edge
    FROM site
  )
  SELECT e.permit_id, e.baseline_on, e.upland_edge,
         (SELECT ST_Union(ST_Boundary(pc.geom)) FROM core.parcel pc
          WHERE pc.valid_to IS NULL AND pc.plan_area_id = p_plan_area_id
            AND pc.geom && e.own_buffer AND ST_Intersects(pc.geom, e.own_buffer)),
         e.wetland,
         (SELECT ST_Collect(m.geom) FROM core.buffer_marker m
          WHERE m.valid_to IS NULL AND m.plan_area_id = p_plan_area_id
            AND (m.marker_type = 'free_standing' OR e.public_land)
            AND ST_DWithin(m.geom, e.upland_edge, core.param_num(
                  p_plan_area_id, 'marker_tolerance_ft', e.baseline_on)::float8 * 0.3048))
  FROM edge e
  WHERE NOT ST_IsEmpty(e.upland_edge)
$$;
COMMENT ON FUNCTION checks.marker_site(integer, bigint[]) IS
  'Per permit with a buffer (but those of checks.marker_plan): its upland edge, the lot lines '
  'it meets, the wetland and the markers that count (6(b)).';

DROP FUNCTION IF EXISTS checks.check_marker_lot_line(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_marker_lot_line(p_plan_area_id integer,
                                                        p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT m.*, core.param_num(p_plan_area_id, 'marker_tolerance_ft', m.baseline_on)
             AS tolerance_ft
    FROM checks.marker_site(p_plan_area_id, p_permit_ids) m
    WHERE m.lot_lines IS NOT NULL
  ), touch AS (
    SELECT site.permit_id, d.geom
    FROM site, ST_Dump(ST_Intersection(site.upland_edge, site.lot_lines)) d
  ), candidate AS (
    -- A point as is; a stretch along a lot line by its end farthest from the wetland.
    SELECT t.permit_id, CASE WHEN ST_Dimension(t.geom) = 0 THEN t.geom
                             WHEN site.wetland IS NULL THEN ST_StartPoint(t.geom)
                             WHEN ST_Distance(ST_StartPoint(t.geom), site.wetland)
                                  >= ST_Distance(ST_EndPoint(t.geom), site.wetland)
                             THEN ST_StartPoint(t.geom) ELSE ST_EndPoint(t.geom) END AS geom
    FROM touch t JOIN site USING (permit_id)
  ), crossing AS (
    SELECT DISTINCT ON (c.permit_id, c.cluster) c.permit_id, c.geom
    FROM (SELECT candidate.*, ST_ClusterDBSCAN(candidate.geom, 4 * checks.snap_m(), 1)
                   OVER (PARTITION BY candidate.permit_id) AS cluster
          FROM candidate) c
    ORDER BY c.permit_id, c.cluster, ST_X(c.geom), ST_Y(c.geom)
  )
  SELECT '6(b)', 'marker_lot_line', 'error', c.permit_id, NULL::bigint, NULL::bigint,
         coalesce(d.distance_ft <= s.tolerance_ft, false), d.distance_ft, s.tolerance_ft,
         'ft',
         CASE WHEN d.distance_ft IS NULL
              THEN 'no buffer marker on the upland edge at this lot line'
              WHEN d.distance_ft <= s.tolerance_ft
              THEN format('marker %s ft from the lot line crossing', d.distance_ft)
              ELSE format('nearest marker %s ft from the lot line crossing (tolerance %s ft)',
                          d.distance_ft, s.tolerance_ft) END,
         c.geom
  FROM crossing c JOIN site s USING (permit_id)
  CROSS JOIN LATERAL (
    SELECT round((ST_Distance(c.geom, s.markers) / 0.3048)::numeric, 2) AS distance_ft) d
  UNION ALL
  SELECT '6(b)', 'marker_lot_line', 'error', mp.permit_id, NULL, NULL, true, NULL, NULL, 'ft',
         format('public land: the vegetation plan approved %s stands in for markers',
                mp.plan_on),
         NULL
  FROM checks.marker_plan(p_plan_area_id, p_permit_ids) mp
$$;
COMMENT ON FUNCTION checks.check_marker_lot_line(integer, bigint[]) IS
  '6(b): distance from each lot-line crossing of a permit''s buffer upland edge to the nearest '
  'counted marker.';

DROP FUNCTION IF EXISTS checks.check_marker_gap(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_marker_gap(p_plan_area_id integer,
                                                   p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT m.*,
           core.param_num(p_plan_area_id, 'marker_tolerance_ft', m.baseline_on) AS tolerance_ft,
           core.param_num(p_plan_area_id, 'marker_max_spacing_ft', m.baseline_on) AS max_ft
    FROM checks.marker_site(p_plan_area_id, p_permit_ids) m
  ), line AS (
    SELECT site.permit_id, site.max_ft, site.tolerance_ft, site.markers,
           coalesce(d.path[1], 1) AS line_no,
           d.geom, ST_Length(d.geom) AS len, ST_IsClosed(d.geom) AS closed
    FROM site, ST_Dump(site.upland_edge) d
  ), stop AS (
    -- Marker positions along each line, as fractions.
    SELECT l.permit_id, l.line_no, ST_LineLocatePoint(l.geom, m.geom) AS f
    FROM line l, ST_Dump(l.markers) m
    WHERE ST_DWithin(m.geom, l.geom, l.tolerance_ft::float8 * 0.3048)
  ), bounds AS (
    SELECT l.permit_id, l.line_no, s.f FROM line l JOIN stop s USING (permit_id, line_no)
    UNION ALL  -- the ends of an open line bound its first and last stretch
    SELECT l.permit_id, l.line_no, e.f FROM line l, (VALUES (0::float8), (1::float8)) e(f)
    WHERE NOT l.closed
  ), ordered AS (
    SELECT b.permit_id, b.line_no, b.f,
           lead(b.f) OVER (PARTITION BY b.permit_id, b.line_no ORDER BY b.f) AS f_next,
           first_value(b.f) OVER (PARTITION BY b.permit_id, b.line_no ORDER BY b.f) AS f_first
    FROM bounds b
  ), gap AS (
    SELECT o.permit_id, o.line_no, o.f AS f0, o.f_next AS f1, false AS wraps
    FROM ordered o WHERE o.f_next IS NOT NULL
    UNION ALL  -- a closed line: from its last marker round to its first
    SELECT o.permit_id, o.line_no, o.f, o.f_first, true
    FROM ordered o JOIN line l USING (permit_id, line_no)
    WHERE l.closed AND o.f_next IS NULL
    UNION ALL  -- a closed line with no marker at all
    SELECT l.permit_id, l.line_no, 0, 1, false FROM line l
    WHERE l.closed AND NOT EXISTS (SELECT 1 FROM stop s
                                   WHERE s.permit_id = l.permit_id AND s.line_no = l.line_no)
  ), measured AS (
    SELECT g.*, l.max_ft, l.geom AS line_geom,
           round((CASE WHEN g.wraps THEN 1 - g.f0 + g.f1 ELSE g.f1 - g.f0 END * l.len
                  / 0.3048)::numeric, 2) AS gap_ft
    FROM gap g JOIN line l USING (permit_id, line_no)
  )
  SELECT '6(b)', 'marker_gap', 'error', m.permit_id, NULL::bigint, NULL::bigint,
         m.gap_ft <= m.max_ft, m.gap_ft, m.max_ft, 'ft',
         CASE WHEN m.gap_ft <= m.max_ft
              THEN format('%s ft between markers along the buffer''s upland edge', m.gap_ft)
              ELSE format('%s ft of the buffer''s upland edge without a marker (limit %s ft)',
                          m.gap_ft, m.max_ft) END,
         CASE WHEN m.gap_ft > m.max_ft THEN
           CASE WHEN m.wraps
                THEN ST_LineMerge(ST_Collect(ST_LineSubstring(m.line_geom, m.f0, 1),
                                             ST_LineSubstring(m.line_geom, 0, m.f1)))
                ELSE ST_LineSubstring(m.line_geom, m.f0, m.f1) END END
  FROM measured m
  WHERE m.gap_ft > 0 OR m.f1 > m.f0
  UNION ALL
  SELECT '6(b)', 'marker_gap', 'error', mp.permit_id, NULL, NULL, true, NULL, NULL, 'ft',
         format('public land: the vegetation plan approved %s stands in for markers',
                mp.plan_on),
         NULL
  FROM checks.marker_plan(p_plan_area_id, p_permit_ids) mp
$$;
COMMENT ON FUNCTION checks.check_marker_gap(integer, bigint[]) IS
  '6(b): length of each stretch of a permit''s buffer upland edge between consecutive markers '
  '(and from an open edge''s ends), against marker_max_spacing_ft.';

GRANT EXECUTE ON FUNCTION checks.marker_plan(integer, bigint[]),
  checks.marker_site(integer, bigint[]),
  checks.check_marker_lot_line(integer, bigint[]),
  checks.check_marker_gap(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6(b)', 'marker_lot_line', 'checks.check_marker_lot_line',
   '254_check_markers.sql', 'error', 'higher', 'ft', 51,
   'A buffer marker stands at each lot line crossing the buffer''s upland edge.',
   'Distance from each lot-line crossing of the upland edge to the nearest counted marker, '
   'against marker_tolerance_ft; fails above it or with no marker. On public land with an '
   'approved vegetation plan, one passing evaluation instead.',
   'The permit has no buffer.'),
  ('6(b)', 'marker_gap', 'checks.check_marker_gap',
   '254_check_markers.sql', 'error', 'higher', 'ft', 52,
   'Buffer markers stand along the upland edge at intervals of no more than marker_max_spacing_ft.',
   'Length along the upland edge between consecutive markers (and from an edge''s end to its '
   'first marker), against marker_max_spacing_ft; fails above it. On public land with an approved '
   'vegetation plan, one passing evaluation instead.',
   'The permit has no buffer.');
SELECT checks.finish_registration('254_check_markers.sql');
