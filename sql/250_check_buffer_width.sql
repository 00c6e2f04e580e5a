-- 250_check_buffer_width: 6(c) minimum and mean buffer width along the protected edge, from
-- the transects of 206, and the District's finding of equivalence where the width varies.
-- One evaluation of each per permit with a protected edge (no edge: not applicable). The
-- deficit is drawn as polygons: the band of the required width along the edge, on the upland
-- side and inside the permit's parcels, that the effective buffer does not cover (for the
-- minimum: the band of buffer_min_width_ft; for the mean: the band of buffer_avg_width_ft,
-- i.e. what a uniform buffer of the average width would add). Idempotent.
--
-- Figures (docs/checks.md, "Buffers in detail"): widths in ft to 2 decimals. The minimum is
-- the smallest transect width (the rounded minimum is the minimum of the rounded widths); the
-- mean is the mean of the unrounded widths, rounded once. Each is compared with its limit as
-- published, so a message never shows a passing figure failing or the reverse.
--
-- 6(c) also asks that "the buffer provides wetland and habitat protection at least equivalent
-- to a buffer of uniform 50-foot width": a District judgment, recorded as a permit_record of
-- kind buffer_equivalence with its approval date (docs/rule-m.md, 6(c)). buffer_equivalence
-- needs it wherever the buffer is narrower than buffer_avg_width_ft at some transect; a buffer
-- at least that wide everywhere is the uniform buffer itself.

CREATE OR REPLACE FUNCTION checks.buffer_deficit(p_edge geometry, p_wetland geometry,
                                                 p_parcels geometry, p_effective geometry,
                                                 p_width_ft numeric,
                                                 p_tolerance_m2 numeric)
RETURNS geometry LANGUAGE sql IMMUTABLE SET jit = off AS $$
  WITH band AS (
    SELECT ST_Intersection(ST_Buffer(p_edge, p_width_ft::float8 * 0.3048, 'endcap=flat'),
                           p_parcels) AS g
  ), upland AS (
    SELECT CASE WHEN p_wetland IS NULL THEN band.g ELSE ST_Difference(band.g, p_wetland) END
             AS g FROM band
  ), short AS (
    SELECT CASE WHEN p_effective IS NULL THEN upland.g
                ELSE ST_Difference(upland.g, p_effective) END AS g FROM upland
  )
  SELECT ST_Multi(ST_Collect(d.geom))
  FROM short, ST_Dump(ST_CollectionExtract(short.g, 3)) d
  WHERE ST_Area(d.geom) >= p_tolerance_m2
$$;
COMMENT ON FUNCTION checks.buffer_deficit(geometry, geometry, geometry, geometry, numeric,
                                          numeric) IS
  'Polygons of the band of a given width along the protected edge (upland side, inside the '
  'parcels) not covered by the effective buffer, slivers dropped.';

DROP FUNCTION IF EXISTS checks.check_buffer_width(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_buffer_width(p_plan_area_id integer,
                                                     p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT s.*,
           core.param_num(p_plan_area_id, 'transect_spacing_ft', s.baseline_on) AS spacing_ft,
           core.param_num(p_plan_area_id, 'buffer_min_width_ft', s.baseline_on) AS min_ft,
           core.param_num(p_plan_area_id, 'buffer_avg_width_ft', s.baseline_on) AS avg_ft,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', s.baseline_on) AS tol_m2
    FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s
    WHERE s.edge IS NOT NULL
  ), width AS (
    SELECT site.permit_id, min(t.width_ft) AS min_w,
           round((avg(t.width_m) / 0.3048)::numeric, 2) AS mean_w,
           count(*) AS n, count(*) FILTER (WHERE t.width_ft < site.min_ft) AS n_short,
           round((ST_Length(site.edge) / 0.3048)::numeric) AS edge_ft
    FROM site
    CROSS JOIN LATERAL checks.site_transects(
      site.edge, site.wetland, site.effective,
      checks.buffer_extent(p_plan_area_id, site.buffer, site.wetland,
                           ST_Expand(site.parcels, checks.reach_m())),
      site.spacing_ft, site.min_ft) t
    GROUP BY site.permit_id, site.edge
  ), equivalence AS (  -- the District's 6(c) finding of equivalence, latest approval first
    SELECT DISTINCT ON (r.permit_id) r.permit_id, r.approved_on, r.document_ref
    FROM core.permit_record r
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
      AND r.kind = 'buffer_equivalence' AND r.approved_on IS NOT NULL
      AND r.permit_id IN (SELECT site.permit_id FROM site)
    ORDER BY r.permit_id, r.approved_on DESC
  )
  SELECT '6(c)', 'buffer_min_width', 'error', s.permit_id, NULL::bigint, NULL::bigint,
         w.min_w >= s.min_ft, w.min_w, s.min_ft, 'ft',
         CASE WHEN w.min_w >= s.min_ft
              THEN format('minimum buffer width %s ft (at least %s ft) along %s ft of '
                          'protected edge', w.min_w, s.min_ft, w.edge_ft)
              ELSE format('minimum buffer width %s ft < %s ft: %s of %s transects are '
                          'narrower, along %s ft of protected edge', w.min_w,
                          s.min_ft, w.n_short, w.n, w.edge_ft) END,
         CASE WHEN w.min_w < s.min_ft
              THEN checks.buffer_deficit(s.edge, s.wetland, s.parcels, s.effective, s.min_ft,
                                         s.tol_m2) END
  FROM site s JOIN width w USING (permit_id)
  UNION ALL
  SELECT '6(c)', 'buffer_avg_width', 'error', s.permit_id, NULL, NULL,
         w.mean_w >= s.avg_ft, w.mean_w, s.avg_ft, 'ft',
         CASE WHEN w.mean_w >= s.avg_ft
              THEN format('mean buffer width %s ft (at least %s ft) over %s transects',
                          w.mean_w, s.avg_ft, w.n)
              ELSE format('mean buffer width %s ft < %s ft over %s transects along %s ft of '
                          'protected edge', w.mean_w, s.avg_ft, w.n, w.edge_ft) END,
         CASE WHEN w.mean_w < s.avg_ft
              THEN checks.buffer_deficit(s.edge, s.wetland, s.parcels, s.effective, s.avg_ft,
                                         s.tol_m2) END
  FROM site s JOIN width w USING (permit_id)
  UNION ALL
  SELECT '6(c)', 'buffer_equivalence', 'error', s.permit_id, NULL, NULL,
         ok, (NOT ok)::int::numeric, 0::numeric, 'missing',
         CASE WHEN w.min_w >= s.avg_ft
              THEN format('the buffer is at least %s ft wide everywhere (narrowest %s ft): '
                          'a uniform %s ft buffer', s.avg_ft, w.min_w, s.avg_ft)
              WHEN e.permit_id IS NOT NULL
              THEN format('the buffer varies (narrowest %s ft); the District found it at least '
                          'equivalent to a uniform %s ft buffer on %s%s', w.min_w, s.avg_ft,
                          e.approved_on, coalesce(' (' || e.document_ref || ')', ''))
              ELSE format('the buffer varies (narrowest %s ft < %s ft), and no District finding '
                          'that it protects at least as well as a uniform %s ft buffer is on '
                          'record (permit record buffer_equivalence)', w.min_w, s.avg_ft,
                          s.avg_ft) END,
         NULL::geometry
  FROM site s JOIN width w USING (permit_id)
  LEFT JOIN equivalence e USING (permit_id)
  CROSS JOIN LATERAL (SELECT w.min_w >= s.avg_ft OR e.permit_id IS NOT NULL AS ok) o
$$;
COMMENT ON FUNCTION checks.check_buffer_width(integer, bigint[]) IS
  '6(c): minimum and mean transect width of the effective buffer along each permit''s '
  'protected edge, with the deficit as polygons, and the District''s finding of equivalence '
  'where the width varies.';

GRANT EXECUTE ON FUNCTION
  checks.buffer_deficit(geometry, geometry, geometry, geometry, numeric, numeric),
  checks.check_buffer_width(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6(c)', 'buffer_min_width', 'checks.check_buffer_width',
   '250_check_buffer_width.sql', 'error', 'lower', 'ft', 53,
   'The buffer is at least buffer_min_width_ft wide at all points.',
   'Smallest transect width along the protected edge (inside the effective buffer = buffer - '
   'trails - wetland, out to the buffer''s outer edge), against buffer_min_width_ft; fails below '
   'it, with the deficit polygons.',
   'No protected edge.'),
  ('6(c)', 'buffer_avg_width', 'checks.check_buffer_width',
   '250_check_buffer_width.sql', 'error', 'lower', 'ft', 54,
   'The buffer averages at least buffer_avg_width_ft in width.',
   'Mean transect width along the protected edge (transects equally spaced, so the mean is '
   'length-weighted; the unrounded widths averaged and rounded once), against '
   'buffer_avg_width_ft; fails below it, with the deficit polygons.',
   'No protected edge.'),
  ('6(c)', 'buffer_equivalence', 'checks.check_buffer_width',
   '250_check_buffer_width.sql', 'error', 'higher', 'missing', 54,
   'A buffer of varying width provides wetland and habitat protection at least equivalent to a '
   'uniform buffer of buffer_avg_width_ft.',
   'Missing District finding of equivalence (a permit_record of kind buffer_equivalence with an '
   'approval date) of a permit whose narrowest transect is below buffer_avg_width_ft; fails '
   'above zero.',
   'No protected edge.');
SELECT checks.finish_registration('250_check_buffer_width.sql');
