-- 060_ingest_values: the per-value building blocks of ingest (docs/ingest.md).
-- Parsers turn a delivered text into a typed value or NULL, never an exception, so that one
-- set-based pass over a staged file can find every bad value at once and name each one.
-- The geometry pipeline takes a delivered geometry to the working CRS and the layer's type,
-- repairs it when the repair keeps its area (or length) within the allowed change, and says
-- what it did or why it could not. Nothing here writes; 061 uses these in its merge.

-- ---------------------------------------------------------------------------------------------
-- Values
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.ingest_map(v text, m jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN m IS NULL OR v IS NULL THEN v ELSE coalesce(m ->> v, v) END $$;
COMMENT ON FUNCTION ops.ingest_map(text, jsonb) IS
  'Ingest: a delivered value translated by a mapping file''s value table (unchanged when absent).';

CREATE OR REPLACE FUNCTION ops.ingest_code(v text, m jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN m IS NULL OR v IS NULL THEN v
              ELSE coalesce(m ->> upper(regexp_replace(v, '[^[:alnum:]]', '', 'g')), v) END
$$;
COMMENT ON FUNCTION ops.ingest_code(text, jsonb) IS
  'Ingest: a delivered value recognised as a coded value by its letters and digits alone '
  '(''Drain partial'' -> drain_partial, ''B/C'' -> BC, ''Type 3'' -> 3); unchanged when unknown.';

CREATE OR REPLACE FUNCTION ops.ingest_int(v text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^\s*[-+]?[0-9]{1,10}(\.0*)?\s*$' THEN
           CASE WHEN split_part(btrim(v), '.', 1)::bigint BETWEEN -2147483648 AND 2147483647
                THEN split_part(btrim(v), '.', 1)::integer END END
$$;
COMMENT ON FUNCTION ops.ingest_int(text) IS
  'Ingest: a whole number (''42'', ''42.0''), or NULL when the text is not one.';

CREATE OR REPLACE FUNCTION ops.ingest_numeric(v text) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]{1,3})?\s*$'
              THEN v::numeric END
$$;
COMMENT ON FUNCTION ops.ingest_numeric(text) IS
  'Ingest: a finite decimal number, or NULL (also for inf and NaN, which no Rule M quantity is).';

CREATE OR REPLACE FUNCTION ops.ingest_bool(v text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN lower(btrim(v)) IN ('true', 't', 'yes', 'y', '1', 'on') THEN true
              WHEN lower(btrim(v)) IN ('false', 'f', 'no', 'n', '0', 'off') THEN false END
$$;
COMMENT ON FUNCTION ops.ingest_bool(text) IS
  'Ingest: true/false (also t/f, yes/no, y/n, 1/0, on/off), or NULL when the text is neither.';

CREATE OR REPLACE FUNCTION ops.ingest_date(v text) RETURNS date
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  -- ISO dates only (a datetime keeps its date): 03/04/2024 means different days to different
  -- people, so it is refused rather than guessed.
  IF v IS NULL OR v !~ '^\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9:.+-]*)?\s*$' THEN
    RETURN NULL;
  END IF;
  RETURN to_date(substr(btrim(v), 1, 10), 'YYYY-MM-DD');
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.ingest_date(text) IS
  'Ingest: an ISO date (YYYY-MM-DD, a datetime keeps its date), or NULL.';

CREATE OR REPLACE FUNCTION ops.ingest_jsonb(v text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN v::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.ingest_jsonb(text) IS 'Ingest: JSON text as jsonb, or NULL when invalid.';

CREATE OR REPLACE FUNCTION ops.ingest_text_array(v text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN v IS NULL THEN NULL
    WHEN v ~ '^\s*\[' AND jsonb_typeof(ops.ingest_jsonb(v)) = 'array' THEN
      ARRAY(SELECT btrim(x) FROM jsonb_array_elements_text(ops.ingest_jsonb(v)) x
            WHERE btrim(x) <> '')
    ELSE ARRAY(SELECT btrim(x) FROM unnest(string_to_array(v, ';')) x WHERE btrim(x) <> '')
  END
$$;
COMMENT ON FUNCTION ops.ingest_text_array(text) IS
  'Ingest: a list delivered as '';''-separated text (or a JSON array) as text[].';

-- ---------------------------------------------------------------------------------------------
-- References: the stable id of the feature a delivered key names.
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.ingest_ref_candidates(p_layer text, p_plan_area_id integer,
                                                     p_value text, p_prefix text)
RETURNS TABLE (feature_id bigint, feature_key text, current boolean, rank integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- In order of preference: the key within the same owner ('24-017/SW-1' for 'SW-1' in a
  -- permit's file), the key as given, and a bare key that names an owned feature
  -- ('W-001' for 'D-2019-01/W-001').
  RETURN QUERY EXECUTE format(
    'SELECT f.feature_id, f.feature_key, '
    '       EXISTS (SELECT 1 FROM core.%1$I t WHERE t.%2$I = f.feature_id AND t.valid_to IS NULL), '
    '       CASE WHEN f.feature_key = $4 || ''/'' || $3 THEN 1 WHEN f.feature_key = $3 THEN 2 '
    '            ELSE 3 END '
    'FROM core.feature f '
    'WHERE f.layer = $1 AND f.plan_area_id = $2 '
    '  AND (f.feature_key = $3 OR f.feature_key = $4 || ''/'' || $3 '
    '       OR (right(f.feature_key, length($3) + 1) = ''/'' || $3 '
    '           AND NOT EXISTS (SELECT 1 FROM core.feature e WHERE e.layer = $1 '
    '                           AND e.plan_area_id = $2 AND e.feature_key = $3)))',
    p_layer, p_layer || '_id')
  USING p_layer, p_plan_area_id, p_value, p_prefix;
END $$;
COMMENT ON FUNCTION ops.ingest_ref_candidates(text, integer, text, text) IS
  'Ingest: the features a delivered reference key could name, ranked (same owner, exact, bare).';

CREATE OR REPLACE FUNCTION ops.ingest_ref(p_layer text, p_plan_area_id integer, p_value text,
                                          p_prefix text DEFAULT NULL)
RETURNS bigint LANGUAGE sql STABLE AS $$
  -- The best-ranked current feature, when exactly one has that rank.
  SELECT CASE WHEN count(*) = 1 THEN min(c.feature_id) END
  FROM ops.ingest_ref_candidates(p_layer, p_plan_area_id, p_value, p_prefix) c
  WHERE c.current AND c.rank = (
    SELECT min(x.rank) FROM ops.ingest_ref_candidates(p_layer, p_plan_area_id, p_value, p_prefix) x
    WHERE x.current)
$$;
COMMENT ON FUNCTION ops.ingest_ref(text, integer, text, text) IS
  'Ingest: the stable id of the current feature of a layer that a delivered key names, or NULL '
  'when none or several do.';

CREATE OR REPLACE FUNCTION ops.ingest_ref_problem(p_layer text, p_plan_area_id integer,
                                                  p_value text, p_prefix text DEFAULT NULL)
RETURNS text LANGUAGE sql STABLE AS $$
  -- Why a key did not resolve, in words a person can act on.
  SELECT CASE
    WHEN count(*) FILTER (WHERE c.current) > 1 THEN
      format('%L names %s current %s features (%s); give the full key', p_value,
             count(*) FILTER (WHERE c.current), p_layer,
             string_agg(c.feature_key, ', ' ORDER BY c.feature_key) FILTER (WHERE c.current))
    WHEN count(*) > 0 THEN
      format('%s %L is no longer current (it was retired); correct the key or deliver that '
             '%s again first', p_layer, p_value, p_layer)
    ELSE format('no %s %L in this plan area; load that %s first, or correct the key',
                p_layer, p_value, p_layer)
  END
  FROM ops.ingest_ref_candidates(p_layer, p_plan_area_id, p_value, p_prefix) c
$$;
COMMENT ON FUNCTION ops.ingest_ref_problem(text, integer, text, text) IS
  'Ingest: why a delivered reference key names no single current feature.';

-- ---------------------------------------------------------------------------------------------
-- Geometry
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.ingest_transform(g geometry, p_src_srid integer, p_src_proj text,
                                                p_work_srid integer)
RETURNS geometry LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN g IS NULL THEN NULL
    WHEN p_src_srid = p_work_srid THEN ST_SetSRID(g, p_work_srid)
    WHEN p_src_srid IS NOT NULL THEN ST_Transform(ST_SetSRID(g, p_src_srid), p_work_srid)
    ELSE ST_Transform(ST_SetSRID(g, 0), p_src_proj, p_work_srid)
  END
$$;
COMMENT ON FUNCTION ops.ingest_transform(geometry, integer, text, integer) IS
  'Ingest: a delivered geometry in the working CRS, from an EPSG code known to PostGIS or else '
  'from the file''s own CRS definition (so no SRID is ever made up).';

CREATE OR REPLACE FUNCTION ops.ingest_fit_type(g geometry, p_target text) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
-- The geometry in the layer's type, or NULL when it has parts of another dimension.
DECLARE
  t text := GeometryType(g);
  dim integer := CASE p_target WHEN 'MULTIPOLYGON' THEN 2 WHEN 'MULTILINESTRING' THEN 1
                               ELSE 0 END;
BEGIN
  IF g IS NULL THEN
    RETURN NULL;
  ELSIF p_target = 'MULTIPOLYGON' AND t IN ('POLYGON', 'MULTIPOLYGON') THEN
    RETURN ST_Multi(g);
  ELSIF p_target = 'MULTILINESTRING' AND t IN ('LINESTRING', 'MULTILINESTRING') THEN
    RETURN ST_Multi(g);
  ELSIF p_target = 'POINT' AND t = 'POINT' THEN
    RETURN g;
  ELSIF p_target = 'POINT' AND t = 'MULTIPOINT' AND ST_NumGeometries(g) = 1 THEN
    RETURN ST_GeometryN(g, 1);
  ELSIF t = 'GEOMETRYCOLLECTION' AND p_target <> 'POINT'
        AND NOT EXISTS (SELECT 1 FROM ST_Dump(g) d WHERE ST_Dimension(d.geom) <> dim) THEN
    RETURN ST_Multi(ST_CollectionExtract(g, dim + 1));
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.ingest_fit_type(geometry, text) IS
  'Ingest: a geometry as the layer''s type (polygon -> multipolygon, a one-point multipoint -> '
  'point), or NULL when it holds parts of another dimension.';

CREATE OR REPLACE FUNCTION ops.ingest_make_valid(g geometry, p_target text) RETURNS geometry
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN ST_IsEmpty(x.r) THEN NULL ELSE x.r END
  FROM (SELECT CASE p_target
                 WHEN 'MULTIPOLYGON' THEN ST_Multi(ST_CollectionExtract(ST_MakeValid(g), 3))
                 WHEN 'MULTILINESTRING' THEN ST_Multi(ST_CollectionExtract(ST_MakeValid(g), 2))
                 ELSE ST_CollectionExtract(ST_MakeValid(g), 1) END AS r) x
$$;
COMMENT ON FUNCTION ops.ingest_make_valid(geometry, text) IS
  'Ingest: ST_MakeValid keeping only parts of the layer''s dimension, NULL when none are left.';

CREATE OR REPLACE FUNCTION ops.ingest_measure(g geometry) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE ST_Dimension(g) WHEN 2 THEN ST_Area(g) WHEN 1 THEN ST_Length(g) ELSE 0 END
$$;
COMMENT ON FUNCTION ops.ingest_measure(geometry) IS
  'Ingest: area (polygons, m^2) or length (lines, m) in the working CRS; what a repair must keep.';

-- A polygon can arrive with rings of no points (GDAL reads 'POLYGON ((...), EMPTY)' and
-- 'POLYGON (EMPTY, EMPTY)' so): ST_IsValid calls it valid, but ST_IsEmpty judges a polygon by
-- its ring count (POLYGON (EMPTY, EMPTY) is "not empty" until ST_Multi makes it MULTIPOLYGON
-- EMPTY, which the table's CHECK refuses), and ST_MakeValid of such a polygon returns a
-- point made of uninitialised memory. So such rings (and parts whose shell is empty) are
-- dropped before anything else looks at the geometry; nothing of its area or shape changes.
CREATE OR REPLACE FUNCTION ops.ingest_drop_empty_rings(g geometry) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  part_no integer[];
  ring_no integer[];
  lines geometry[];
  parts geometry[];
BEGIN
  IF g IS NULL OR GeometryType(g) NOT IN ('POLYGON', 'MULTIPOLYGON') THEN
    RETURN g;
  END IF;
  SELECT array_agg(coalesce(d.path[1], 1)), array_agg(r.path[1]), array_agg(ST_ExteriorRing(r.geom))
  INTO part_no, ring_no, lines
  FROM ST_Dump(g) d CROSS JOIN LATERAL ST_DumpRings(d.geom) r
  WHERE ST_NPoints(r.geom) > 0;
  -- ST_MakePolygon refuses an open ring or one of fewer than 4 points (an exception would
  -- fail the whole file): such a polygon is invalid anyway, and is left to ST_MakeValid.
  IF EXISTS (SELECT 1 FROM unnest(lines) l WHERE NOT ST_IsClosed(l) OR ST_NPoints(l) < 4) THEN
    RETURN g;
  END IF;
  SELECT array_agg(ST_MakePolygon(x.shell, x.holes) ORDER BY x.part) INTO parts
  FROM (SELECT u.part, (array_agg(u.line) FILTER (WHERE u.ring = 0))[1] AS shell,
               coalesce(array_agg(u.line ORDER BY u.ring) FILTER (WHERE u.ring > 0), '{}')
                 AS holes
        FROM unnest(part_no, ring_no, lines) u(part, ring, line) GROUP BY u.part
        HAVING count(*) FILTER (WHERE u.ring = 0) = 1) x;
  IF parts IS NULL THEN
    RETURN ST_SetSRID(CASE GeometryType(g) WHEN 'POLYGON' THEN 'POLYGON EMPTY'::geometry
                                           ELSE 'MULTIPOLYGON EMPTY'::geometry END,
                      ST_SRID(g));
  ELSIF GeometryType(g) = 'POLYGON' THEN
    RETURN ST_SetSRID(parts[1], ST_SRID(g));
  END IF;
  RETURN ST_SetSRID(ST_Multi(ST_Collect(parts)), ST_SRID(g));
END $$;
COMMENT ON FUNCTION ops.ingest_drop_empty_rings(geometry) IS
  'Ingest: a polygon without its rings of no points and its parts with an empty shell (an '
  'empty polygon when nothing is left); other geometries unchanged.';

DROP FUNCTION IF EXISTS ops.ingest_geometry(geometry, text, integer, text, integer,
                                         double precision);
DROP FUNCTION IF EXISTS ops.ingest_geometry(geometry, text, integer, text, integer,
                                         double precision, geometry);
CREATE FUNCTION ops.ingest_geometry(g geometry, p_target text, p_src_srid integer,
                                    p_src_proj text, p_work_srid integer,
                                    p_max_change double precision,
                                    p_moved geometry DEFAULT NULL,
                                    OUT geom geometry, OUT problem text, OUT reason text,
                                    OUT curved boolean, OUT zm boolean, OUT repaired boolean,
                                    OUT measure_before double precision,
                                    OUT measure_after double precision, OUT source_type text,
                                    OUT emptied boolean)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
-- problem: missing (null or empty), type (another dimension), unrepairable (ST_MakeValid
-- leaves nothing of the layer's dimension) or change (the repair would change the area or
-- length by more than p_max_change, a fraction); NULL when geom is good to store.
-- p_moved: g already in the working CRS, when the caller transformed a whole file at once
-- (a CRS given by its definition costs PostGIS a new PROJ transformation per call, 50 ms);
-- used only for a straight 2D g, the geometry the transform here would be given.
-- PL/pgSQL, not SQL: every step is a simple expression, which costs microseconds per feature
-- where a non-inlined SQL function re-runs a small plan per call.
DECLARE
  moved geometry;
  fixed geometry;
  flat geometry;
  valid_as_delivered boolean := true;
BEGIN
  curved := false;
  zm := false;
  repaired := false;
  emptied := false;
  IF g IS NULL OR ST_IsEmpty(g) THEN
    problem := 'missing';
    RETURN;
  END IF;
  source_type := GeometryType(g);
  curved := ST_HasArc(g) OR source_type IN ('CIRCULARSTRING', 'COMPOUNDCURVE', 'CURVEPOLYGON',
                                            'MULTICURVE', 'MULTISURFACE');
  zm := ST_Zmflag(g) > 0;
  flat := g;
  IF curved THEN
    flat := ST_CurveToLine(flat);
  END IF;
  IF zm THEN
    flat := ST_Force2D(flat);
  END IF;
  IF curved OR zm THEN
    p_moved := NULL;
  END IF;
  -- (a valid polygon's rings are closed: ST_IsClosed costs a look at each ring's ends)
  IF GeometryType(flat) IN ('POLYGON', 'MULTIPOLYGON') AND NOT ST_IsClosed(flat) THEN
    fixed := ops.ingest_drop_empty_rings(flat);
    IF ST_NRings(fixed) < ST_NRings(flat) OR ST_NumGeometries(fixed) < ST_NumGeometries(flat)
    THEN
      emptied := true;
      flat := fixed;
      p_moved := ops.ingest_drop_empty_rings(p_moved);
    END IF;
    fixed := NULL;
  END IF;
  IF ST_IsEmpty(flat) THEN
    problem := 'missing';
    RETURN;
  END IF;
  -- A geometry invalid as delivered stays a defect of the delivery even when the transform
  -- happens to move its vertices apart: it is repaired (and recorded) all the same.
  IF p_src_srid IS DISTINCT FROM p_work_srid THEN
    valid_as_delivered := ST_IsValid(flat);
  END IF;
  moved := ops.ingest_fit_type(coalesce(p_moved, ops.ingest_transform(flat, p_src_srid,
                                                                      p_src_proj, p_work_srid)),
                               p_target);
  IF moved IS NULL THEN
    problem := 'type';
    RETURN;
  END IF;
  IF ST_IsEmpty(moved) THEN  -- judged on what would be stored, not on what was delivered
    problem := 'missing';
    RETURN;
  END IF;
  IF valid_as_delivered AND ST_IsValid(moved) THEN
    geom := moved;
    RETURN;
  END IF;
  reason := CASE WHEN valid_as_delivered THEN ST_IsValidReason(moved)
                 ELSE ST_IsValidReason(flat) || ' (as delivered)' END;
  fixed := ops.ingest_make_valid(moved, p_target);
  measure_before := ops.ingest_measure(moved);
  measure_after := ops.ingest_measure(fixed);
  IF fixed IS NULL THEN
    problem := 'unrepairable';
  ELSIF measure_before = 0 THEN
    problem := CASE WHEN measure_after = 0 THEN NULL ELSE 'change' END;
  ELSIF abs(measure_after - measure_before) / abs(measure_before) > p_max_change THEN
    problem := 'change';
  END IF;
  IF problem IS NULL THEN
    geom := fixed;
    repaired := true;
  END IF;
END $$;
COMMENT ON FUNCTION ops.ingest_geometry(geometry, text, integer, text, integer,
                                        double precision, geometry) IS
  'Ingest: a delivered geometry linearised, 2D, in the working CRS and the layer''s type, '
  'repaired when ST_MakeValid keeps its area within p_max_change; or the problem that stops it.';

REVOKE ALL ON FUNCTION ops.ingest_map(text, jsonb), ops.ingest_code(text, jsonb),
  ops.ingest_int(text), ops.ingest_numeric(text), ops.ingest_bool(text), ops.ingest_date(text),
  ops.ingest_jsonb(text), ops.ingest_text_array(text),
  ops.ingest_ref_candidates(text, integer, text, text), ops.ingest_ref(text, integer, text, text),
  ops.ingest_ref_problem(text, integer, text, text),
  ops.ingest_transform(geometry, integer, text, integer), ops.ingest_fit_type(geometry, text),
  ops.ingest_make_valid(geometry, text), ops.ingest_measure(geometry),
  ops.ingest_drop_empty_rings(geometry),
  ops.ingest_geometry(geometry, text, integer, text, integer, double precision, geometry)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_map(text, jsonb), ops.ingest_code(text, jsonb),
  ops.ingest_int(text), ops.ingest_numeric(text), ops.ingest_bool(text), ops.ingest_date(text),
  ops.ingest_jsonb(text), ops.ingest_text_array(text),
  ops.ingest_ref_candidates(text, integer, text, text), ops.ingest_ref(text, integer, text, text),
  ops.ingest_ref_problem(text, integer, text, text),
  ops.ingest_transform(geometry, integer, text, integer), ops.ingest_fit_type(geometry, text),
  ops.ingest_make_valid(geometry, text), ops.ingest_measure(geometry),
  ops.ingest_drop_empty_rings(geometry),
  ops.ingest_geometry(geometry, text, integer, text, integer, double precision, geometry)
  TO rulem_etl;
-- The write rules of sql/014 say why a reference does not resolve in ingest's words, for
-- every writer of the layers they cover (the editors' edits included).
GRANT EXECUTE ON FUNCTION ops.ingest_ref_candidates(text, integer, text, text),
  ops.ingest_ref_problem(text, integer, text, text) TO rulem_editor;
