-- 930_tiles: Mapbox vector tiles, one function per map layer:
--   pub.<layer>_tile(z integer, x integer, y integer) RETURNS bytea
-- for every view in pub (and restricted) with a geometry column, except the history views
-- (pub.<layer>_history beside a pub.<layer>: the map shows current versions).
-- pg_tileserv and Martin publish such functions as function sources as they are; the MVT layer
-- inside the tile is named after the view, and its feature id is the view's <layer>_id.
--
-- Why this shape:
-- - The tile envelope is transformed into the working CRS and compared with the stored
--   geometry by &&, so the GiST index of the core table under the view does the filtering;
--   only the features found are transformed to Web Mercator. (Transforming every geometry to
--   3857 before filtering would read the whole layer for every tile.)
-- - The envelope is first clipped to the working CRS's domain (ops.setting
--   'tile_domain_lonlat', written by revision 0006): a world tile at zoom 0 cannot be
--   transformed into UTM, and a tile outside the domain holds nothing of ours anyway.
-- - The envelope is densified before the transform (its edges become curves in the working
--   CRS) and widened by the 64-pixel buffer, so features just across a tile edge still draw.
-- - Generated from the catalogue at apply time, so a view added by the ledger or the checks
--   gets its tile function the next time the migration step runs this file; jsonb columns stay
--   out of the tile (clients get provenance from the database or the GeoPackage).

DO $$
DECLARE
  v record;
  f record;
  domain float8[];
  xw float8; ys float8; xe float8; yn float8;
  cols text;
  fid text;
  srid integer;
BEGIN
  -- Tile functions whose view is gone.
  FOR f IN
    SELECT p.oid::regprocedure AS sig FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname IN ('pub', 'restricted') AND p.proname LIKE '%\_tile'
      AND pg_get_function_identity_arguments(p.oid) = 'z integer, x integer, y integer'
      AND to_regclass(format('%I.%I', n.nspname, left(p.proname, -5))) IS NULL
  LOOP
    EXECUTE format('DROP FUNCTION %s', f.sig);
  END LOOP;

  SELECT string_to_array(value, ' ')::float8[] INTO domain
  FROM ops.setting WHERE key = 'tile_domain_lonlat';
  domain := coalesce(domain, ARRAY[-180, -85.06, 180, 85.06]::float8[]);
  SELECT ST_X(a), ST_Y(a), ST_X(b), ST_Y(b) INTO xw, ys, xe, yn
  FROM (SELECT ST_Transform(ST_SetSRID(ST_MakePoint(domain[1], domain[2]), 4326), 3857) AS a,
               ST_Transform(ST_SetSRID(ST_MakePoint(domain[3], domain[4]), 4326), 3857) AS b) d;

  FOR v IN
    SELECT g.f_table_schema::text AS schema_name, g.f_table_name::text AS view_name,
           g.f_geometry_column::text AS geom_col, g.srid
    FROM geometry_columns g
    JOIN pg_class c ON c.relname = g.f_table_name
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = g.f_table_schema
    WHERE g.f_table_schema IN ('pub', 'restricted') AND c.relkind IN ('v', 'm')
      AND NOT (g.f_table_name LIKE '%\_history' AND to_regclass(format('%I.%I',
               g.f_table_schema, left(g.f_table_name, -8))) IS NOT NULL)
    ORDER BY 1, 2
  LOOP
    srid := CASE WHEN v.srid > 0 THEN v.srid ELSE ops.working_srid() END;
    -- Numbers as float8, so that clients style and filter on them as numbers (MVT has no
    -- decimal type; PostGIS would write numeric as text).
    SELECT string_agg(CASE WHEN a.atttypid = 'numeric'::regtype
                           THEN format('v.%1$I::float8 AS %1$I', a.attname)
                           ELSE format('v.%I', a.attname) END, ', ' ORDER BY a.attnum) INTO cols
    FROM pg_attribute a
    WHERE a.attrelid = format('%I.%I', v.schema_name, v.view_name)::regclass AND a.attnum > 0
      AND NOT a.attisdropped AND a.attname <> v.geom_col
      AND a.atttypid NOT IN ('jsonb'::regtype, 'json'::regtype, 'geometry'::regtype);
    -- The feature id: <view>_id, else the first column, when it is an integer.
    SELECT a.attname INTO fid
    FROM pg_attribute a
    WHERE a.attrelid = format('%I.%I', v.schema_name, v.view_name)::regclass AND a.attnum > 0
      AND NOT a.attisdropped
      AND a.atttypid IN ('bigint'::regtype, 'integer'::regtype, 'smallint'::regtype)
      AND (a.attname = v.view_name || '_id' OR a.attnum = 1)
    ORDER BY a.attname = v.view_name || '_id' DESC
    LIMIT 1;
    EXECUTE format($fn$
      CREATE OR REPLACE FUNCTION %1$I.%2$I(z integer, x integer, y integer)
      RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $body$
        WITH tile AS (
          SELECT ST_TileEnvelope(z, x, y) AS bounds,
                 ST_TileEnvelope(z, x, y, margin => 64.0 / 4096) AS area
        ), clipped AS (
          SELECT bounds,
                 ST_MakeEnvelope(greatest(ST_XMin(area), %4$s), greatest(ST_YMin(area), %5$s),
                                 least(ST_XMax(area), %6$s), least(ST_YMax(area), %7$s),
                                 3857) AS area
          FROM tile
          WHERE ST_XMax(area) > %4$s AND ST_XMin(area) < %6$s
            AND ST_YMax(area) > %5$s AND ST_YMin(area) < %7$s
        ), query AS (
          SELECT bounds,
                 ST_Transform(ST_Segmentize(area, (ST_XMax(area) - ST_XMin(area)) / 32),
                              %8$s) AS area
          FROM clipped
        ), features AS (
          SELECT ST_AsMVTGeom(ST_Transform(v.%9$I, 3857), q.bounds, 4096, 64, true) AS mvt_geom,
                 %10$s
          FROM %1$I.%3$I v, query q
          WHERE v.%9$I && q.area
        )
        SELECT coalesce((SELECT ST_AsMVT(features.*, %11$L, 4096, 'mvt_geom'%12$s)
                         FROM features WHERE mvt_geom IS NOT NULL), ''::bytea)
      $body$
    $fn$, v.schema_name, v.view_name || '_tile', v.view_name, xw, ys, xe, yn, srid, v.geom_col,
       cols, v.view_name, CASE WHEN fid IS NULL THEN '' ELSE format(', %L', fid) END);
    EXECUTE format('COMMENT ON FUNCTION %I.%I(integer, integer, integer) IS %L',
                   v.schema_name, v.view_name || '_tile',
                   format('Vector tile (MVT) of %I.%I at zoom z, column x, row y (XYZ scheme, '
                          'Web Mercator), for pg_tileserv or Martin; MVT layer %L%s.',
                          v.schema_name, v.view_name, v.view_name,
                          CASE WHEN fid IS NULL THEN ''
                               ELSE format(', feature id %s', fid) END));
  END LOOP;
END $$;
