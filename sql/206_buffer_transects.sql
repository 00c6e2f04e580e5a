-- 206_buffer_transects: buffer width on transects (6(c); docs/checks.md, "Buffers in detail").
-- Idempotent.
--
-- Along each protected edge line of length L, n = ceil(L / transect_spacing_ft) stations sit
-- at the middles of n equal steps (so the steps are at most the spacing, no station falls on
-- an end where the normal is undefined, and the plain mean of the widths is the
-- length-weighted mean). At each station the transect runs along the outward normal (the side
-- away from the wetland). Its width is the length of its intersection with the effective
-- buffer (buffer - trails - wetland) out to the buffer's outer edge (6(c); docs/checks.md):
--   * the outer edge is where the transect leaves the buffer extent (buffer + trails -
--     wetland, checks.buffer_extent) for the first time, counting from the protected edge:
--     pieces of the extent along the transect chain on as long as each starts within
--     checks.snap_m() of where the ones before it end;
--   * a trail's surface inside that stretch is left out, the buffer beyond it counts
--     (6(f)(iv): "The surface shall not count toward buffer width");
--   * other wetland ends the stretch (a ray that crosses a strip of upland into other wetland
--     stops there), and so does the end of all buffer: a buffer further out, beyond a gap,
--     is not this transect's;
--   * a transect whose first piece does not start at the edge (no buffer there) has width 0;
--     one that starts on a trail measures the buffer beyond it.
-- The transect is drawn out to the outer edge (its minimum-width length when there is none).

-- Every function here runs with jit = off: PostGIS functions carry large planner costs, so a
-- query of a few hundred transects "costs" enough to be JIT-compiled, which takes seconds and
-- saves nothing (docs/checks.md, "Performance").

-- The transects of one site, from its geometry alone. width_m is the width unrounded, so a
-- mean of widths is rounded once (6(c) buffer_avg_width, sql/250), not averaged from
-- rounded widths.
DROP FUNCTION IF EXISTS checks.site_transects(geometry, geometry, geometry, numeric, numeric);
DROP FUNCTION IF EXISTS checks.site_transects(geometry, geometry, geometry, geometry, numeric,
                                              numeric);
CREATE OR REPLACE FUNCTION checks.site_transects(p_edge geometry, p_wetland geometry,
                                                 p_effective geometry, p_extent geometry,
                                                 p_spacing_ft numeric, p_min_width_ft numeric)
RETURNS TABLE (edge_no integer, transect_no integer, position_ft numeric, width_ft numeric,
               geom geometry, width_m double precision)
LANGUAGE sql IMMUTABLE SET jit = off AS $$
  WITH edge AS (
    SELECT d.path[1] AS edge_no, d.geom AS line, ST_Length(d.geom) AS len
    FROM ST_Dump(p_edge) d
  ), station AS (
    SELECT e.edge_no, k AS transect_no, e.len * (k + 0.5) / c.n AS pos_m,
           ST_LineInterpolatePoint(e.line, (k + 0.5) / c.n) AS p,
           ST_LineInterpolatePoint(e.line, greatest((k + 0.5) / c.n - 0.01 / e.len, 0)) AS a,
           ST_LineInterpolatePoint(e.line, least((k + 0.5) / c.n + 0.01 / e.len, 1)) AS b
    FROM edge e
    CROSS JOIN LATERAL (SELECT greatest(1, ceil(e.len / (p_spacing_ft::float8 * 0.3048)
                                                - 1e-9))::int AS n) c
    CROSS JOIN LATERAL generate_series(0, c.n - 1) k
  ), normal AS (
    SELECT s.*, -(ST_Y(s.b) - ST_Y(s.a)) / h AS nx, (ST_X(s.b) - ST_X(s.a)) / h AS ny
    FROM station s
    CROSS JOIN LATERAL (SELECT greatest(ST_Distance(s.a, s.b), 1e-12) AS h) l
  ), ray AS (
    -- The normal that does not step into the wetland, and the ray along it.
    SELECT n.*, n.nx * o.side AS ox, n.ny * o.side AS oy,
           ST_MakeLine(n.p, ST_Translate(n.p, n.nx * o.side * checks.reach_m(),
                                         n.ny * o.side * checks.reach_m())) AS ray
    FROM normal n
    CROSS JOIN LATERAL (
      SELECT CASE WHEN p_wetland IS NOT NULL
                   AND ST_Intersects(p_wetland, ST_Translate(n.p, n.nx * checks.snap_m(),
                                                              n.ny * checks.snap_m()))
                  THEN -1 ELSE 1 END AS side) o
  ), reach AS MATERIALIZED (
    -- The outer edge: the end of the chain of extent pieces that starts at the edge.
    SELECT r.*, coalesce((
      WITH piece AS (
        SELECT least(ST_Distance(r.p, ST_StartPoint(d.geom)),
                     ST_Distance(r.p, ST_EndPoint(d.geom))) AS d0,
               greatest(ST_Distance(r.p, ST_StartPoint(d.geom)),
                        ST_Distance(r.p, ST_EndPoint(d.geom))) AS d1
        FROM ST_Dump(ST_CollectionExtract(ST_Intersection(r.ray, p_extent), 2)) d
      ), chained AS (
        SELECT pc.d0, pc.d1,
               coalesce(max(pc.d1) OVER (ORDER BY pc.d0, pc.d1 ROWS BETWEEN UNBOUNDED
                                         PRECEDING AND 1 PRECEDING), 0) AS reached
        FROM piece pc
      )
      SELECT max(ch.d1) FROM chained ch
      WHERE ch.d0 < coalesce((SELECT min(x.d0) FROM chained x
                              WHERE x.d0 > x.reached + checks.snap_m()), 'Infinity')
    ), 0) AS outer_m
    FROM ray r
  ), measured AS MATERIALIZED (  -- the width once, not once per use
    SELECT r.*, CASE WHEN r.outer_m = 0 THEN 0 ELSE coalesce((
      SELECT sum(greatest(0, least(greatest(ST_Distance(r.p, ST_StartPoint(d.geom)),
                                            ST_Distance(r.p, ST_EndPoint(d.geom))),
                                   r.outer_m)
                             - least(ST_Distance(r.p, ST_StartPoint(d.geom)),
                                     ST_Distance(r.p, ST_EndPoint(d.geom)))))
      FROM ST_Dump(ST_CollectionExtract(ST_Intersection(r.ray, p_effective), 2)) d
    ), 0) END AS width_m
    FROM reach r
  )
  SELECT m.edge_no, m.transect_no + 1,
         round((m.pos_m / 0.3048)::numeric, 2),
         round((m.width_m / 0.3048)::numeric, 2),
         ST_MakeLine(m.p, ST_Translate(m.p, m.ox * d.len, m.oy * d.len)),
         m.width_m
  FROM measured m
  CROSS JOIN LATERAL (
    SELECT CASE WHEN m.outer_m > 0 THEN m.outer_m
                ELSE p_min_width_ft::float8 * 0.3048 END AS len) d
  ORDER BY m.edge_no, m.transect_no
$$;
COMMENT ON FUNCTION checks.site_transects(geometry, geometry, geometry, geometry, numeric,
                                          numeric) IS
  'Transects along a protected edge: station spacing, outward normal, width = length inside '
  'the effective buffer out to the buffer''s outer edge (trails left out, 6(c), 6(f)(iv)).';

-- The transects of a plan area's permits (or one permit).
CREATE OR REPLACE FUNCTION checks.buffer_transects(p_plan_area_id integer,
                                                   p_permit_id bigint DEFAULT NULL)
RETURNS TABLE (
  permit_id bigint,
  edge_no integer,
  transect_no integer,
  position_ft numeric,
  width_ft numeric,
  min_width_ft numeric,
  geom geometry
)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT s.permit_id, t.edge_no, t.transect_no, t.position_ft, t.width_ft, p.min_width_ft,
         t.geom
  FROM checks.buffer_site(p_plan_area_id, p_permit_id) s
  CROSS JOIN LATERAL (
    SELECT core.param_num(p_plan_area_id, 'transect_spacing_ft', s.baseline_on) AS spacing_ft,
           core.param_num(p_plan_area_id, 'buffer_min_width_ft', s.baseline_on) AS min_width_ft
  ) p
  CROSS JOIN LATERAL checks.site_transects(
    s.edge, s.wetland, s.effective,
    checks.buffer_extent(p_plan_area_id, s.buffer, s.wetland,
                         ST_Expand(s.parcels, checks.reach_m())),
    p.spacing_ft, p.min_width_ft) t
  WHERE s.edge IS NOT NULL
  ORDER BY s.permit_id, t.edge_no, t.transect_no
$$;
COMMENT ON FUNCTION checks.buffer_transects(integer, bigint) IS
  'Buffer width transects of a plan area''s permits (or one permit): stations every '
  'transect_spacing_ft along the protected edge, width inside the effective buffer out to the '
  'buffer''s outer edge (6(c)).';

GRANT EXECUTE ON FUNCTION
  checks.site_transects(geometry, geometry, geometry, geometry, numeric, numeric),
  checks.buffer_transects(integer, bigint) TO rulem_etl;
