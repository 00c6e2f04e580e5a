-- 061_ingest_merge: one set-based merge of a staged file into its versioned layer (spec
-- sections 2 and 8; docs/ingest.md).
--
-- Python (etl/) reads the file and COPYs it, untouched, into staging.b<batch> (UNLOGGED):
-- _row (0-based order in the file), _fid (the file's feature id), _geom (as delivered, any
-- CRS, curves, Z/M) and one column c0..cN per field of the file. It also describes the merge
-- in a jsonb "spec" built from the layer catalogue (rulem_db/catalogue/layers.py) and the field
-- mapping: etl/spec.py's MergeSpec, every key described in docs/ingest-spec.schema.json
-- (tests/unit/test_ingest_spec.py holds the keys read here to that schema).
-- ops.ingest_prepare validates everything into staging.b<batch>_prep and records every
-- problem in ops.batch_note; the caller reads the errors and refuses the file (rolling back)
-- or, skipping bad features, calls ops.ingest_apply, which registers keys, opens versions
-- only for new and changed features, and closes the features of its scope that the file no
-- longer holds. Both run in the caller's transaction: a refusal leaves nothing behind.

CREATE OR REPLACE FUNCTION ops.ingest_table(p_batch bigint, p_part text DEFAULT NULL)
RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT format('staging.%I', 'b' || p_batch || coalesce('_' || p_part, '')) $$;
COMMENT ON FUNCTION ops.ingest_table(bigint, text) IS
  'Ingest: the qualified name of a batch''s staging table (b<batch>, b<batch>_prep, ...).';

-- Whether a batch's p_rows rows look the layer up by index, one probe each, rather than join
-- it whole: up to 10,000 rows, or a tenth of the rows a re-delivery set aside as unchanged
-- (ops.batch.unchanged_count, written when they were set aside, sql/063), which are about the
-- layer's size. A join reads the whole layer (2.95 s for a state's 1,000,000 parcels); 12,000
-- changed rows of them are 12,000 probes (0.1 s). A first load, into an empty or small layer,
-- joins.
CREATE OR REPLACE FUNCTION ops.ingest_few(p_batch bigint, p_rows bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT p_rows <= 10000
      OR p_rows * 10 <= coalesce((SELECT b.unchanged_count FROM ops.batch b
                                  WHERE b.batch_id = p_batch), 0)
$$;
COMMENT ON FUNCTION ops.ingest_few(bigint, bigint) IS
  'Ingest: whether a batch''s rows are few enough to look the layer up by index one row at a '
  'time (up to 10,000, or a tenth of the rows a re-delivery set aside).';

CREATE OR REPLACE FUNCTION ops.ingest_noun(p_geometry text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_geometry WHEN 'MULTIPOLYGON' THEN 'polygons' WHEN 'MULTILINESTRING' THEN 'lines'
                         WHEN 'POINT' THEN 'points' ELSE 'no geometry' END
$$;
COMMENT ON FUNCTION ops.ingest_noun(text) IS 'Ingest: a layer''s geometry type in words.';

-- The SQL expression (over staging row s) for a column's delivered text, NULL when the column
-- is not delivered by a field or a constant.
CREATE OR REPLACE FUNCTION ops.ingest_value_sql(c jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  e text;
BEGIN
  IF c ->> 'const_id' IS NOT NULL THEN
    RETURN quote_literal(c ->> 'const_id');
  ELSIF c ->> 'const' IS NOT NULL THEN
    e := quote_literal(c ->> 'const');
  ELSIF c ->> 'src' IS NOT NULL THEN
    e := format('nullif(btrim(s.%I::text), %L)', c ->> 'src', '');
  ELSE
    RETURN NULL;
  END IF;
  IF jsonb_typeof(c -> 'values') = 'object' THEN
    e := format('ops.ingest_map(%s, %L::jsonb)', e, c -> 'values');
  END IF;
  IF jsonb_typeof(c -> 'code_map') = 'object' THEN
    e := format('ops.ingest_code(%s, %L::jsonb)', e, c -> 'code_map');
  END IF;
  RETURN e;
END $$;
COMMENT ON FUNCTION ops.ingest_value_sql(jsonb) IS
  'Ingest: SQL for a column''s delivered text (field or constant, mapped and code-recognised).';

-- The SQL expression (over q1 and the reference look-ups) for a column's typed value.
CREATE OR REPLACE FUNCTION ops.ingest_typed_sql(c jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v text := format('q1.%I', '_v_' || (c ->> 'name'));
BEGIN
  IF c ->> 'const_id' IS NOT NULL THEN
    RETURN format('%s::bigint', quote_literal(c ->> 'const_id'));
  END IF;
  IF c ->> 'derive_from' IS NOT NULL THEN  -- pin_normalized from pin
    -- Every character but letters and digits dropped, upper case. A PIN of ASCII letters and
    -- digits with dashes and spaces (nearly all of them) is normalised by two replace() calls
    -- and one anchored match, which give the same text as the general regexp_replace at less
    -- than half its cost (0.4 s per 100,000 parcels); any other PIN takes the general path.
    RETURN format('CASE WHEN %1$s ~ %2$L THEN upper(%1$s) '
                  'ELSE upper(regexp_replace(q1.%3$I, %4$L, %5$L, %6$L)) END',
                  format('replace(replace(q1.%I, %L, %L), %L, %L)',
                         '_v_' || (c ->> 'derive_from'), '-', '', ' ', ''),
                  '^[0-9A-Za-z]*$', '_v_' || (c ->> 'derive_from'), '[^[:alnum:]]', '', 'g');
  END IF;
  RETURN CASE
    WHEN c ->> 'ref_layer' IS NOT NULL THEN format('%I.id', 'r_' || (c ->> 'name'))
    WHEN c ->> 'kind' = 'text' THEN v
    WHEN c ->> 'kind' = 'int' THEN format('ops.ingest_int(%s)', v)
    WHEN c ->> 'kind' = 'numeric' THEN format('ops.ingest_numeric(%s)', v)
    WHEN c ->> 'kind' = 'bool' THEN format('ops.ingest_bool(%s)', v)
    WHEN c ->> 'kind' = 'date' THEN format('ops.ingest_date(%s)', v)
    WHEN c ->> 'kind' = 'text[]' THEN format('ops.ingest_text_array(%s)', v)
    WHEN c ->> 'kind' = 'jsonb' THEN format('ops.ingest_jsonb(%s)', v)
  END;
END $$;
COMMENT ON FUNCTION ops.ingest_typed_sql(jsonb) IS
  'Ingest: SQL for a column''s typed value from its delivered text (NULL when it does not parse).';

-- Whether a column is delivered at all (by a field, a constant, an id or a derivation).
CREATE OR REPLACE FUNCTION ops.ingest_delivered(c jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT c ->> 'src' IS NOT NULL OR c ->> 'const' IS NOT NULL OR c ->> 'const_id' IS NOT NULL
         OR c ->> 'derive_from' IS NOT NULL
$$;
COMMENT ON FUNCTION ops.ingest_delivered(jsonb) IS
  'Ingest: whether a file delivers a column; columns it does not deliver keep their values.';

-- The problem checks of one column: a condition over prep row p (true = a problem) and the
-- row of a VALUES list, (kind, field, message, detail), that reports it.
DROP FUNCTION IF EXISTS ops.ingest_column_checks(jsonb, text, integer);
CREATE FUNCTION ops.ingest_column_checks(c jsonb, p_layer text, p_plan_area_id integer)
RETURNS TABLE (cond text, entry text) LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  nm    text := c ->> 'name';
  kind  text := c ->> 'kind';
  v     text := format('p.%I', '_v_' || nm);
  t     text := format('p.%I', nm);
  src   text := CASE WHEN c ->> 'field' IS NOT NULL
                     THEN format(' (field %s)', c ->> 'field') ELSE '' END;
  fsrc  text := replace(src, '%', '%%');  -- the same, inside a format() pattern
  what  text;
  pre   text;
BEGIN
  IF NOT ops.ingest_delivered(c) OR c ->> 'const_id' IS NOT NULL THEN
    RETURN;
  END IF;
  -- a value that does not parse, or a reference that names no single current feature
  IF c ->> 'ref_layer' IS NOT NULL THEN
    pre := CASE WHEN c ->> 'ref_prefix' IS NOT NULL
                THEN format('p.%I', '_v_' || (c ->> 'ref_prefix')) ELSE 'NULL' END;
    cond := format('%s IS NOT NULL AND %s IS NULL', v, t);
    entry := format(
      '(CASE WHEN %1$s THEN ''error'' END, %2$L, CASE WHEN %1$s THEN '
      'ops.ingest_ref_problem(%3$L, %4$s, %5$s, %6$s) || %7$L END, NULL::jsonb)',
      cond, nm, c ->> 'ref_layer', p_plan_area_id, v, pre, src);
    RETURN NEXT;
  ELSIF kind <> 'text' AND c ->> 'derive_from' IS NULL THEN
    what := CASE kind
      WHEN 'int' THEN 'is not a whole number'
      WHEN 'numeric' THEN 'is not a finite number'
      WHEN 'bool' THEN 'is not true or false (yes/no, y/n, 1/0 are also understood)'
      WHEN 'date' THEN 'is not a date as YYYY-MM-DD'
      WHEN 'jsonb' THEN 'is not valid JSON'
      ELSE 'cannot be read' END;
    cond := format('%s IS NOT NULL AND %s IS NULL', v, t);
    entry := format(
      '(CASE WHEN %1$s THEN ''error'' END, %2$L, CASE WHEN %1$s THEN format(%3$L, %4$s) END, '
      'NULL::jsonb)',
      cond, nm, '%L' || fsrc || ' ' || what || '; correct the value or leave it empty', v);
    RETURN NEXT;
  END IF;
  -- a required value that is missing
  IF coalesce((c ->> 'required')::boolean, false) AND c ->> 'derive_from' IS NULL THEN
    cond := format('%s IS NULL AND %s IS NULL', v, t);
    entry := format(
      '(CASE WHEN %1$s THEN ''error'' END, %2$L, CASE WHEN %1$s THEN %3$L END, NULL::jsonb)',
      cond, nm, 'no value' || src || '; every ' || p_layer || ' needs a ' || nm
                || ': fill it in, or set it in a mapping file');
    RETURN NEXT;
  END IF;
  -- a coded value outside its domain
  IF jsonb_typeof(c -> 'codes') = 'array' THEN
    cond := format('%1$s IS NOT NULL AND NOT (%1$s = ANY (%2$L::text[]))', t,
                   ARRAY(SELECT jsonb_array_elements_text(c -> 'codes')));
    entry := format(
      '(CASE WHEN %1$s THEN ''error'' END, %2$L, CASE WHEN %1$s THEN format(%3$L, %4$s) END, '
      'NULL::jsonb)',
      cond, nm, '%L' || fsrc || ' is not a ' || nm || '; expected one of '
      || (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(c -> 'codes') x)
      || ': correct it, or translate it in a mapping file ([fields.' || nm || '] values)', t);
    RETURN NEXT;
  END IF;
  -- a value that must exist in a reference table (e.g. core.tr55_cover)
  IF c ->> 'references' IS NOT NULL THEN
    cond := format('%s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %I.%I r WHERE r.%I = %s)', t,
                   split_part(c ->> 'references', '.', 1), split_part(c ->> 'references', '.', 2),
                   split_part(c ->> 'references', '.', 3), t);
    entry := format(
      '(CASE WHEN %1$s THEN ''error'' END, %2$L, CASE WHEN %1$s THEN format(%3$L, %4$s) END, '
      'NULL::jsonb)',
      cond, nm, '%L' || fsrc || ' is not in ' || split_part(c ->> 'references', '.', 1) || '.'
                || split_part(c ->> 'references', '.', 2) || '; use one of its '
                || split_part(c ->> 'references', '.', 3) || ' values', t);
    RETURN NEXT;
  END IF;
END $$;
COMMENT ON FUNCTION ops.ingest_column_checks(jsonb, text, integer) IS
  'Ingest: SQL of the value checks of one column (parse, reference, required, code, lookup).';

-- Both steps run without JIT (their cost estimates over staging tables ANALYZEd mid-function
-- made PostgreSQL compile and optimise 100 functions per statement, about a second per
-- ingest, for queries that run once), with room to sort and hash 100,000 features in
-- memory instead of on disk, and with statistics of the staging tables from a sample of
-- 3,000 rows instead of 30,000 (default_statistics_target 10): the plans need their row
-- counts and that keys are nearly unique, which the small sample gives as well (ANALYZE of
-- the prep and match tables cost 0.1 s each per 100,000 features, now 0.02 s).
CREATE OR REPLACE FUNCTION ops.ingest_prepare(p_spec jsonb) RETURNS jsonb
LANGUAGE plpgsql SET jit = off SET work_mem = '128MB' SET default_statistics_target = 10 AS $$
DECLARE
  b          bigint := (p_spec ->> 'batch_id')::bigint;
  lyr        text := p_spec ->> 'layer';
  pa         integer := (p_spec ->> 'plan_area_id')::integer;
  gtype      text := p_spec ->> 'geometry';
  with_geom  boolean := coalesce((p_spec ->> 'with_geometry')::boolean, false);
  skip       boolean := coalesce((p_spec ->> 'skip_bad')::boolean, false);
  owner_col  text := p_spec ->> 'owner';
  natural_col text := p_spec -> 'key' ->> 'natural';
  stg        text := ops.ingest_table(b);
  prep       text := ops.ingest_table(b, 'prep');
  prob       text := ops.ingest_table(b, 'problem');
  noun       text := ops.ingest_noun(gtype);
  measure    text := CASE gtype WHEN 'MULTILINESTRING' THEN 'length' ELSE 'area' END;
  unit       text := CASE gtype WHEN 'MULTILINESTRING' THEN 'm' ELSE 'm2' END;
  max_change double precision := coalesce((p_spec ->> 'max_area_change')::float8, 0.001);
  c          jsonb;
  e          text;
  l1         text[] := ARRAY['s._row', 's._fid'];
  l2         text[] := ARRAY['q1.*'];
  joins      text := '';
  fast       text;
  slow       text;
  pre        text;
  ref        text;
  bulk       boolean := false;
  checks     text[] := ARRAY[]::text[];
  conds      text[] := ARRAY[]::text[];
  pairs      text[] := ARRAY[]::text[];
  attrs      text[] := ARRAY[]::text[];
  f          jsonb;
  i          integer := 0;
  key_sql    text;
  plan_geom  geometry;
  tol        double precision;
  result     jsonb;
BEGIN
  -- Level 1: per staged row, the delivered text of every column, the raw key, the original
  -- attributes and the geometry (fast path inline, the rest by the slow path below).
  FOR f IN SELECT * FROM jsonb_array_elements(coalesce(p_spec -> 'fields', '[]')) LOOP
    pairs := pairs || format('%L, s.%I', f ->> 'name', f ->> 'col');
    i := i + 1;
    IF i % 50 = 0 THEN  -- jsonb_build_object takes at most 100 arguments
      attrs := attrs || format('jsonb_build_object(%s)', array_to_string(pairs, ', '));
      pairs := ARRAY[]::text[];
    END IF;
  END LOOP;
  IF cardinality(pairs) > 0 THEN
    attrs := attrs || format('jsonb_build_object(%s)', array_to_string(pairs, ', '));
  END IF;
  l1 := l1 || (coalesce(nullif(array_to_string(attrs, ' || '), ''), '''{}''::jsonb')
               || ' AS _attrs');
  key_sql := CASE
    WHEN p_spec -> 'key' ->> 'col' IS NOT NULL
      THEN format('nullif(btrim(s.%I::text), %L)', p_spec -> 'key' ->> 'col', '')
    WHEN natural_col IS NOT NULL THEN 'NULL::text'
    ELSE 's._fid' END;
  l1 := l1 || (key_sql || ' AS _k');
  IF with_geom THEN
    -- A CRS given by its definition (no EPSG code): PostGIS builds a new PROJ transformation
    -- for every ST_Transform call from text (50 ms each: 835 features took 90 s), so the
    -- straight 2D geometries are transformed together, one call per 1,000 features (or 1
    -- million vertices), into staging column _moved.
    bulk := p_spec ->> 'source_srid' IS NULL AND p_spec ->> 'source_proj' IS NOT NULL;
    IF bulk THEN
      EXECUTE format('ALTER TABLE %s ADD COLUMN _moved geometry', stg);
      EXECUTE format(
        'UPDATE %1$s s SET _moved = m.geom FROM ('
        '  SELECT c.rows[n] AS _row, ST_GeometryN(c.gc, n) AS geom FROM ('
        '    SELECT array_agg(_row ORDER BY _row) AS rows, '
        '           ST_Transform(ST_Collect(ST_SetSRID(_geom, 0) ORDER BY _row), $1, $2) AS gc '
        '    FROM (SELECT _row, _geom, (row_number() OVER w - 1) / 1000 AS k1, '
        '                 sum(ST_NPoints(_geom)) OVER w / 1000000 AS k2 FROM %1$s '
        '          WHERE _geom IS NOT NULL AND ST_Zmflag(_geom) = 0 AND NOT ST_HasArc(_geom) '
        '            AND NOT ST_IsEmpty(_geom) WINDOW w AS (ORDER BY _row)) x '
        '    GROUP BY k1, k2) c '
        '  CROSS JOIN LATERAL generate_series(1, cardinality(c.rows)) n) m '
        'WHERE s._row = m._row', stg)
      USING p_spec ->> 'source_proj', (p_spec ->> 'work_srid')::integer;
    END IF;
    -- The common case (valid, of the layer's type, 2D, straight) costs one ST_IsValid (two
    -- when reprojected: the geometry as delivered must be valid too), written inline; the
    -- others (fast IS NULL) go through ops.ingest_geometry afterwards, one UPDATE of just them.
    e := format(CASE WHEN gtype = 'POINT' THEN '%s' ELSE 'ST_Multi(%s)' END,
                CASE WHEN bulk THEN 's._moved'
                     ELSE format('ops.ingest_transform(s._geom, %s, %L, %s)',
                                 coalesce(p_spec ->> 'source_srid', 'NULL'),
                                 p_spec ->> 'source_proj', (p_spec ->> 'work_srid')::integer)
                END);
    -- (validity does not depend on the SRID or on a polygon being wrapped as a multipolygon,
    -- so without a transform the delivered geometry is checked as it is; ST_IsClosed sends
    -- a polygon with a ring of no points to the slow path: ST_IsEmpty calls POLYGON (EMPTY,
    -- EMPTY) not empty, and ST_Multi makes it MULTIPOLYGON EMPTY, which the CHECK refuses.
    -- A transformed geometry is checked as it will be stored, by the table's own rule.)
    fast := format('CASE WHEN GeometryType(s._geom) IN (%s) AND ST_Zmflag(s._geom) = 0 '
                   'AND NOT ST_IsEmpty(s._geom)%s AND ST_IsValid(s._geom)%s THEN %s END',
                   CASE gtype WHEN 'MULTIPOLYGON' THEN '''POLYGON'', ''MULTIPOLYGON'''
                              WHEN 'MULTILINESTRING' THEN '''LINESTRING'', ''MULTILINESTRING'''
                              ELSE '''POINT''' END,
                   CASE WHEN gtype = 'MULTIPOLYGON' THEN ' AND ST_IsClosed(s._geom)' ELSE '' END,
                   CASE WHEN (p_spec ->> 'source_srid')::integer IS DISTINCT FROM
                             (p_spec ->> 'work_srid')::integer
                        THEN format(' AND ST_IsValid(%1$s) AND NOT ST_IsEmpty(%1$s)', e)
                        ELSE '' END, e);
    l1 := l1 || ARRAY[fast || ' AS geom', 'NULL::text AS _g_problem', 'NULL::text AS _g_reason',
                      'false AS _g_curved', 'false AS _g_zm', 'false AS _g_repaired',
                      'NULL::float8 AS _g_before', 'NULL::float8 AS _g_after',
                      'NULL::text AS _g_type', 'false AS _g_emptied'];
    -- The slow path. What it makes gets the last word before the table's CHECK (ST_IsValid
    -- AND NOT ST_IsEmpty), in the same UPDATE: a geometry the CHECK would refuse becomes a
    -- problem naming its feature (skipped with --skip-bad-features), never a constraint
    -- error that fails the whole file. (The fast path's geometries passed the same tests:
    -- the delivered one when stored untransformed, else the transformed one.)
    slow := format(
      'UPDATE %1$s p SET geom = CASE WHEN g.unstorable THEN NULL ELSE g.geom END, '
      '  _g_problem = CASE WHEN g.unstorable THEN ''unstorable'' ELSE g.problem END, '
      '  _g_reason = CASE WHEN NOT g.unstorable THEN g.reason WHEN ST_IsEmpty(g.geom) '
      '    THEN ''empty'' ELSE ST_IsValidReason(g.geom) END, '
      '  _g_curved = g.curved, _g_zm = g.zm, _g_repaired = g.repaired AND NOT g.unstorable, '
      '  _g_before = g.measure_before, _g_after = g.measure_after, _g_type = g.source_type, '
      '  _g_emptied = g.emptied '
      'FROM (SELECT s._row, x.*, x.geom IS NOT NULL AND (ST_IsValid(x.geom) '
      '        AND NOT ST_IsEmpty(x.geom)) IS NOT TRUE AS unstorable FROM %2$s s '
      '      CROSS JOIN LATERAL ops.ingest_geometry(s._geom, %3$L, %4$s, %5$L, %6$s, %7$s, '
      '                                             %8$s) x '
      '      WHERE s._row IN (SELECT _row FROM %1$s WHERE geom IS NULL)) g '
      'WHERE p._row = g._row',
      prep, stg, gtype, coalesce(p_spec ->> 'source_srid', 'NULL'), p_spec ->> 'source_proj',
      (p_spec ->> 'work_srid')::integer, max_change,
      CASE WHEN bulk THEN 's._moved' ELSE 'NULL' END);
  END IF;
  FOR c IN SELECT * FROM jsonb_array_elements(p_spec -> 'columns') LOOP
    e := ops.ingest_value_sql(c);
    IF e IS NOT NULL THEN
      l1 := l1 || format('%s AS %I', e, '_v_' || (c ->> 'name'));
    END IF;
  END LOOP;

  -- Level 2: typed values; references resolved once per distinct key, into a small table.
  FOR c IN SELECT * FROM jsonb_array_elements(p_spec -> 'columns') LOOP
    CONTINUE WHEN NOT ops.ingest_delivered(c);
    IF c ->> 'ref_layer' IS NOT NULL AND c ->> 'const_id' IS NULL THEN
      pre := NULL;
      IF c ->> 'ref_prefix' IS NOT NULL THEN
        SELECT ops.ingest_value_sql(x) INTO pre FROM jsonb_array_elements(p_spec -> 'columns') x
        WHERE x ->> 'name' = c ->> 'ref_prefix';
      END IF;
      ref := ops.ingest_table(b, 'r_' || (c ->> 'name'));
      EXECUTE format('DROP TABLE IF EXISTS %s', ref);
      EXECUTE format(
        'CREATE UNLOGGED TABLE %1$s AS SELECT d.v, d.p, ops.ingest_ref(%2$L, %3$s, d.v, d.p) AS id '
        'FROM (SELECT DISTINCT %4$s AS v, %5$s AS p FROM %6$s s) d WHERE d.v IS NOT NULL',
        ref, c ->> 'ref_layer', pa, ops.ingest_value_sql(c), coalesce(pre, 'NULL::text'), stg);
      EXECUTE format('ANALYZE %s', ref);
      joins := joins || format(
        ' LEFT JOIN %1$s %2$I ON %2$I.v = q1.%3$I AND %2$I.p IS NOT DISTINCT FROM %4$s',
        ref, 'r_' || (c ->> 'name'), '_v_' || (c ->> 'name'),
        CASE WHEN pre IS NULL THEN 'NULL::text'
             ELSE format('q1.%I', '_v_' || (c ->> 'ref_prefix')) END);
    END IF;
    l2 := l2 || format('%s AS %I', ops.ingest_typed_sql(c), c ->> 'name');
  END LOOP;

  -- An owner the file does not deliver (a ditch without a permit) is NULL for every feature.
  IF owner_col IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(p_spec -> 'columns') x
      WHERE x ->> 'name' = owner_col AND ops.ingest_delivered(x)) THEN
    l2 := l2 || format('NULL::bigint AS %I', owner_col) || format('NULL::text AS %I',
                                                                   '_v_' || owner_col);
  END IF;

  -- Level 3: the feature key, unique per layer and plan area: the natural key of the layer,
  -- or the file's key prefixed with its owner's key ('24-017/I-001', 'D-2019-01/W-001').
  key_sql := CASE
    WHEN natural_col IS NOT NULL THEN format('q2.%I::text', natural_col)
    WHEN owner_col IS NOT NULL THEN 'coalesce(o.feature_key || ''/'', '''') || q2._k'
    ELSE 'q2._k' END;

  EXECUTE format('DROP TABLE IF EXISTS %s', prep);
  EXECUTE format(
    'CREATE UNLOGGED TABLE %1$s AS '
    'SELECT q2.*, %2$s AS _key FROM ('
    '  SELECT %3$s FROM (SELECT %4$s FROM %5$s) q1 %6$s) q2 %7$s',
    prep, key_sql, array_to_string(l2, ', '), array_to_string(l1, ', '), stg || ' s', joins,
    CASE WHEN owner_col IS NOT NULL AND natural_col IS NULL
         THEN format('LEFT JOIN core.feature o ON o.feature_id = q2.%I', owner_col) ELSE '' END);
  -- Statistics of the columns later statements join and filter on only: the row count comes
  -- with them (the slow path's join needs it: without, it sorted both tables), and the
  -- geometry's statistics (0.2 s per 100,000 features) serve no plan here.
  EXECUTE format('ANALYZE %s (%s)', prep, concat_ws(', ', '_row', '_key', quote_ident(owner_col),
                 quote_ident('_v_' || owner_col)));
  IF slow IS NOT NULL THEN
    EXECUTE slow;
  END IF;

  -- Problems, one row each: (_row, kind, field, message, detail).
  EXECUTE format('DROP TABLE IF EXISTS %s', prob);
  EXECUTE format('CREATE UNLOGGED TABLE %s (_row bigint, kind text, field text, message text, '
                 'detail jsonb)', prob);
  IF with_geom THEN
    -- the change in area (or length) a repair makes, in percent, as text
    e := 'CASE WHEN p._g_before = 0 THEN ''any'' ELSE round((abs(p._g_after - p._g_before) '
         '/ abs(p._g_before) * 100)::numeric, 4)::text END';
    conds := conds || 'p._g_problem IS NOT NULL'::text || 'p._g_repaired'::text;
    checks := checks || format(
      '(CASE WHEN p._g_problem IS NOT NULL THEN ''error'' END, ''geometry'', CASE p._g_problem '
      'WHEN ''missing'' THEN %1$L '
      'WHEN ''type'' THEN format(%2$L, lower(p._g_type)) '
      'WHEN ''unrepairable'' THEN format(%3$L, p._g_reason) '
      'WHEN ''change'' THEN format(%4$L, p._g_reason, %5$s, round(p._g_before::numeric, 2), '
      '  round(p._g_after::numeric, 2)) '
      'WHEN ''unstorable'' THEN format(%8$L, p._g_reason) END, '
      'CASE WHEN p._g_problem IN (''unrepairable'', ''change'') THEN jsonb_build_object('
      '  ''reason'', p._g_reason, %6$L, p._g_before, %7$L, p._g_after) END)',
      'null or empty geometry; give the feature its geometry, or remove it from the file',
      'a %s, but ' || lyr || ' takes ' || noun || '; deliver ' || noun
        || ', or load the file as another layer',
      'invalid (%s) and ST_MakeValid leaves none of its ' || noun
        || '; fix it in a GIS and deliver it again',
      'invalid (%s); ST_MakeValid would change its ' || measure || ' by %s percent (%s to %s '
        || unit || '), more than ' || (max_change * 100) || ' percent; fix it in a GIS and '
        || 'deliver it again',
      e, 'before_' || unit, 'after_' || unit,
      'prepared for storing, it is still invalid or empty (%s), so the table would refuse it; '
        || 'fix it in a GIS and deliver it again');
    checks := checks || format(
      '(CASE WHEN p._g_repaired THEN ''repaired'' END, ''geometry'', '
      'CASE WHEN p._g_repaired THEN format(%1$L, p._g_reason, %2$s, '
      '  round(p._g_before::numeric, 2), round(p._g_after::numeric, 2)) END, '
      'CASE WHEN p._g_repaired THEN jsonb_build_object(''reason'', p._g_reason, '
      '  ''method'', ''ST_MakeValid'', %3$L, p._g_before, %4$L, p._g_after) END)',
      'invalid (%s); repaired with ST_MakeValid, ' || measure || ' changed by %s percent '
        || '(%s to %s ' || unit || ')',
      e, 'before_' || unit, 'after_' || unit);
  END IF;
  FOR c IN SELECT * FROM jsonb_array_elements(p_spec -> 'columns') LOOP
    SELECT conds || coalesce(array_agg(x.cond), '{}'), checks || coalesce(array_agg(x.entry), '{}')
    INTO conds, checks FROM ops.ingest_column_checks(c, lyr, pa) x;
  END LOOP;
  FOR c IN SELECT * FROM jsonb_array_elements(coalesce(p_spec -> 'checks', '[]')) LOOP
    conds := conds || format('(%s) IS FALSE', c ->> 'expr');
    checks := checks || format(
      '(CASE WHEN (%1$s) IS FALSE THEN ''error'' END, %2$L, CASE WHEN (%1$s) IS FALSE THEN '
      '%3$L END, NULL::jsonb)',
      c ->> 'expr', coalesce(c ->> 'field', c ->> 'name'),
      coalesce(c ->> 'message', format('fails the rule %s (%s); correct the values',
                                       c ->> 'name', c ->> 'expr')));
  END LOOP;
  IF natural_col IS NULL THEN
    conds := conds || 'p._key IS NULL'::text;
    checks := checks || format(
      '(CASE WHEN p._key IS NULL THEN ''error'' END, ''feature_key'', CASE WHEN p._key IS NULL '
      'THEN %L END, NULL::jsonb)',
      'no feature key' || coalesce(' (field ' || (p_spec -> 'key' ->> 'field') || ' is empty)',
                                   '') || '; every feature needs a key that is unique in the file');
  END IF;
  IF with_geom IS FALSE AND gtype IS NOT NULL THEN
    -- a file without geometry for a layer with geometry changes attributes of features that
    -- exist (delineation status changes); it cannot create one
    e := format('p._key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM core.feature f '
                'JOIN core.%1$I t ON t.%2$I = f.feature_id AND t.valid_to IS NULL '
                'WHERE f.layer = %3$L AND f.plan_area_id = %4$s AND f.feature_key = p._key)',
                lyr, lyr || '_id', lyr, pa);
    conds := conds || e;
    checks := checks || format(
      '(CASE WHEN %1$s THEN ''error'' END, ''feature_key'', CASE WHEN %1$s THEN format(%2$L, '
      'p._key) END, NULL::jsonb)',
      e, 'no current ' || lyr || ' %L; a file without geometry only changes features that '
         || 'exist (a new ' || lyr || ' comes with its geometry)');
  END IF;
  IF cardinality(checks) > 0 THEN
    -- rows with no problem at all are filtered first, so only they pay for the messages
    EXECUTE format(
      'INSERT INTO %1$s (_row, kind, field, message, detail) '
      'SELECT p._row, x._kind, x._field, x._message, x._detail FROM %2$s p '
      'CROSS JOIN LATERAL (VALUES %3$s) x(_kind, _field, _message, _detail) '
      'WHERE (%4$s) AND x._kind IS NOT NULL',
      prob, prep, array_to_string(checks, ', '),
      (SELECT string_agg('(' || x || ')', ' OR ') FROM unnest(conds) x));
  END IF;

  -- Duplicate keys: every copy is an error (which one is right is not ours to guess). The
  -- duplicated keys are found first (one hashed count), so only their copies are sorted and
  -- listed (listing every key's features cost 0.3 s per 100,000 features).
  EXECUTE format(
    'INSERT INTO %1$s (_row, kind, field, message, detail) '
    'SELECT p._row, ''error'', ''feature_key'', format(''feature key %%L appears %%s times in '
    'the file (features %%s); keys must be unique: correct or remove the copies'', p._key, '
    'd.n, d.fids), NULL FROM %2$s p JOIN ('
    '  SELECT _key, count(*) AS n, string_agg(_fid, '', '' ORDER BY _row) AS fids FROM %2$s '
    '  WHERE _key IN (SELECT _key FROM %2$s WHERE _key IS NOT NULL GROUP BY _key '
    '                 HAVING count(*) > 1) '
    '  GROUP BY _key) d USING (_key)',
    prob, prep);

  -- Outside the plan area: an error for impacts and replacements, a warning elsewhere.
  IF with_geom AND p_spec ->> 'outside' IS NOT NULL THEN
    SELECT ST_Union(geom) INTO plan_geom FROM core.cwmp_area
    WHERE valid_to IS NULL AND plan_area_id = pa;
    IF plan_geom IS NULL THEN
      INSERT INTO ops.batch_note (batch_id, kind, field, message)
      VALUES (b, 'warning', 'geometry', 'no plan area boundary (cwmp_area) is loaded, so no '
              'feature was checked against it; load cwmp_area first');
    ELSE
      tol := core.param_num(pa, 'area_tolerance_m2');
      -- ST_Covers(boundary, feature), not ST_CoveredBy(feature, boundary): GEOS prepares the
      -- first argument when it repeats (docs/ingest.md, "The plan boundary check", has the
      -- measurement on Anoka County's boundary). The features it covers
      -- (nearly all) are set aside first (OFFSET 0 keeps the planner from testing
      -- ST_Intersects on every row before it).
      EXECUTE format(
        'INSERT INTO %1$s (_row, kind, field, message, detail) '
        'SELECT p._row, CASE WHEN x.inside THEN ''warning'' ELSE %3$L END, ''geometry'', '
        '  CASE WHEN x.inside THEN format(''%%s m2 of it lie outside the plan area '
        '(cwmp_area); only the part inside counts'', round(x.outside::numeric, 1)) '
        '  ELSE ''lies outside the plan area (cwmp_area); correct its location or leave it '
        'out of the file'' END, jsonb_build_object(''outside_m2'', x.outside) '
        'FROM (SELECT p._row, p.geom FROM %2$s p '
        '      WHERE p.geom IS NOT NULL AND NOT ST_Covers($1, p.geom) OFFSET 0) p '
        'CROSS JOIN LATERAL (SELECT ST_Intersects(p.geom, $1) AS inside, '
        '  CASE WHEN ST_Dimension(p.geom) = 2 THEN ST_Area(ST_Difference(p.geom, $1)) END '
        '  AS outside) x '
        'WHERE NOT x.inside OR (%4$L AND x.outside > $2)',
        prob, prep, p_spec ->> 'outside', p_spec ->> 'outside' = 'error')
      USING plan_geom, tol;
    END IF;
  END IF;

  EXECUTE format('ANALYZE %s', prob);

  -- Record: per-feature notes, then what was done to the whole file.
  EXECUTE format(
    'INSERT INTO ops.batch_note (batch_id, source_fid, kind, field, message, detail) '
    'SELECT %1$s, p._fid, CASE WHEN pr.kind = ''error'' AND %4$L THEN ''skipped'' ELSE pr.kind END, '
    '  pr.field, CASE WHEN pr.kind = ''error'' AND %4$L THEN ''skipped: '' ELSE '''' END '
    '  || pr.message, coalesce(pr.detail, ''{}''::jsonb) '
    '  || jsonb_build_object(''row'', p._row, ''key'', coalesce(p._key, p._k)) '
    'FROM %2$s pr JOIN %3$s p USING (_row) ORDER BY pr._row, pr.field',
    b, prob, prep, skip);
  IF with_geom THEN
    -- What was done to whole geometries, one note per kind with the count and the first
    -- feature ids (one pass: only slow-path features carry a flag).
    EXECUTE format(
      'INSERT INTO ops.batch_note (batch_id, kind, field, message, detail) '
      'SELECT %1$s, ''info'', ''geometry'', format(v.message, v.n), '
      '  jsonb_build_object(''features'', v.n, ''first_fids'', v.fids) '
      'FROM (SELECT count(*) FILTER (WHERE _g_curved) AS curved, '
      '             count(*) FILTER (WHERE _g_zm) AS zm, '
      '             count(*) FILTER (WHERE _g_emptied) AS emptied, '
      '             (array_agg(_fid ORDER BY _row) FILTER (WHERE _g_curved))[1:10] AS curved_fids, '
      '             (array_agg(_fid ORDER BY _row) FILTER (WHERE _g_zm))[1:10] AS zm_fids, '
      '             (array_agg(_fid ORDER BY _row) FILTER (WHERE _g_emptied))[1:10] AS emptied_fids '
      '      FROM %2$s WHERE _g_type IS NOT NULL) c '
      'CROSS JOIN LATERAL (VALUES (1, c.curved, c.curved_fids, %3$L), (2, c.zm, c.zm_fids, %4$L), '
      '                           (3, c.emptied, c.emptied_fids, %5$L)) v(k, n, fids, message) '
      'WHERE v.n > 0 ORDER BY v.k',
      b, prep, '%s features had curves; they were linearised (ST_CurveToLine)',
      '%s features had Z or M values; they were dropped (2D is stored)',
      '%s features had rings or parts of no points; they were dropped (nothing else '
      'changed)');
  END IF;

  EXECUTE format(
    'SELECT jsonb_build_object('
    '  ''rows'', (SELECT count(*) FROM %2$s), '
    '  ''errors'', count(*) FILTER (WHERE kind = ''error''), '
    '  ''bad_rows'', count(DISTINCT _row) FILTER (WHERE kind = ''error''), '
    '  ''warnings'', count(*) FILTER (WHERE kind = ''warning''), '
    '  ''repaired'', count(*) FILTER (WHERE kind = ''repaired'')) FROM %1$s',
    prob, prep) INTO result;
  -- The delivered copy is read no more: emptied now (a table created in this transaction is
  -- truncated in place), its pages leave shared buffers unwritten instead of crowding out
  -- the layer's indexes during the merge.
  EXECUTE format('TRUNCATE %s', stg);
  RETURN result;
END $$;
COMMENT ON FUNCTION ops.ingest_prepare(jsonb) IS
  'Ingest: validates a staged file in one pass (geometry to the working CRS and layer type, '
  'repairs within the allowed area change, values, codes, references, keys, plan area) into '
  'staging.b<batch>_prep and records every problem in ops.batch_note; returns counts.';

CREATE OR REPLACE FUNCTION ops.ingest_apply(p_spec jsonb) RETURNS jsonb
LANGUAGE plpgsql SET jit = off SET work_mem = '128MB' SET default_statistics_target = 10 AS $$
DECLARE
  b          bigint := (p_spec ->> 'batch_id')::bigint;
  lyr        text := p_spec ->> 'layer';
  id_col     text := (p_spec ->> 'layer') || '_id';
  pa         integer := (p_spec ->> 'plan_area_id')::integer;
  with_geom  boolean := coalesce((p_spec ->> 'with_geometry')::boolean, false);
  scope      text := coalesce(p_spec ->> 'scope', 'none');
  owner_col  text := p_spec ->> 'owner';
  prep       text := ops.ingest_table(b, 'prep');
  prob       text := ops.ingest_table(b, 'problem');
  good       text := ops.ingest_table(b, 'match');
  keep       text := ops.ingest_table(b, 'keep');
  cols       text[];
  n_new      bigint := 0;
  n_changed  bigint := 0;
  n_closed   bigint := 0;
  n_same     bigint := 0;
  n_keys     bigint := 0;
  n_to_change bigint := 0;
  n_to_insert bigint := 0;
  n_skipped  bigint := 0;
  n_repaired bigint := 0;
  n_bulk     integer := 0;
  carried    text[];
  scope_sql  text;
  had_current boolean := false;
  few        boolean;
  result     jsonb;
BEGIN
  SELECT array_agg(c ->> 'name') INTO cols
  FROM jsonb_array_elements(p_spec -> 'columns') c WHERE ops.ingest_delivered(c);
  IF with_geom THEN
    cols := cols || 'geom'::text;
  END IF;

  -- The file's scope, and whether it holds any current feature before the merge: a first load
  -- (none) has nothing to close, so it skips the anti-join over every feature
  -- (docs/ingest.md, "Where each guarantee lives, and what it costs").
  scope_sql := CASE scope
    WHEN 'layer' THEN 'true'
    WHEN 'owner' THEN format(
      '(t.%1$I IN (SELECT DISTINCT p.%1$I FROM %2$s p WHERE p.%1$I IS NOT NULL) '
      ' OR (t.%1$I IS NULL AND EXISTS (SELECT 1 FROM %2$s p WHERE p.%3$I IS NULL)))',
      owner_col, prep, '_v_' || owner_col)
    ELSE NULL END;
  IF scope_sql IS NOT NULL THEN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM core.%1$I t WHERE t.valid_to IS NULL '
                   'AND t.plan_area_id = %2$s AND %3$s)', lyr, pa, scope_sql)
      INTO had_current;
  END IF;

  -- Match each good feature with its registered id and its current version, if any, and
  -- compare their content. A key not registered yet gets a new id from the registry's own
  -- sequence here, in key order (byte-wise, COLLATE "C": the order of the C.UTF-8 databases
  -- rulem-db creates, with abbreviated keys instead of a strcoll() per comparison), so the
  -- registry insert below is a plain copy of these rows, and the btree indexes on the ids
  -- and keys take them in order. (Registering first and matching after joined every key
  -- with core.feature twice: 0.3-0.5 s per 100,000 new features.) Only the ids, the key and
  -- the outcome are kept: the content stays in the prep table, read once more by the INSERT
  -- and the UPDATE (copying it here cost a write and a sort on disk). Good features have
  -- distinct keys (every copy of a repeated key is an error).
  -- A few rows (a re-delivery's changed rows, once the unchanged ones were set aside, sql/063;
  -- ops.ingest_few) look their key and current version up by index, one probe each (OFFSET 0
  -- keeps the lateral subqueries from being turned into joins); planned as a join, the
  -- planner, which right after a bulk load still sees the layer as it was, read every feature
  -- of the layer and its current version (0.36 s for 1,200 rows of 100,000 parcels, 2.95 s
  -- for 12,000 of 1,000,000). Many rows join.
  EXECUTE format('SELECT ops.ingest_few(%s, count(*)) FROM %s', b, prep) INTO few;
  EXECUTE format('DROP TABLE IF EXISTS %s', good);
  EXECUTE format(
    'CREATE UNLOGGED TABLE %1$s AS '
    'SELECT m._row, coalesce(m._id, nextval(%10$L)) AS _id, m._id IS NULL AS _new_key, '
    '       m._key, m._cur, m._changed FROM ('
    '  SELECT p._row, p._key, f.feature_id AS _id, t.version_id AS _cur, '
    '         t.version_id IS NOT NULL AND ROW(%2$s) IS DISTINCT FROM ROW(%3$s) AS _changed '
    '  FROM %4$s p ' || CASE WHEN few THEN
    '  LEFT JOIN LATERAL (SELECT f.feature_id FROM core.feature f WHERE f.layer = %5$L '
    '    AND f.plan_area_id = %6$s AND f.feature_key = p._key OFFSET 0) f ON true '
    '  LEFT JOIN LATERAL (SELECT t.* FROM core.%7$I t WHERE t.%8$I = f.feature_id '
    '    AND t.valid_to IS NULL OFFSET 0) t ON true '
    ELSE
    '  LEFT JOIN core.feature f ON f.layer = %5$L AND f.plan_area_id = %6$s '
    '    AND f.feature_key = p._key '
    '  LEFT JOIN core.%7$I t ON t.%8$I = f.feature_id AND t.valid_to IS NULL ' END ||
    '  WHERE NOT EXISTS (SELECT 1 FROM %9$s e WHERE e._row = p._row AND e.kind = ''error'')) m '
    'ORDER BY m._key COLLATE "C"',
    good,
    (SELECT string_agg(format('t.%I', x), ', ') FROM unnest(cols) x),
    (SELECT string_agg(format('p.%I', x), ', ') FROM unnest(cols) x),
    prep, lyr, pa, lyr, id_col, prob, pg_get_serial_sequence('core.feature', 'feature_id'));

  EXECUTE format('ANALYZE %s', good);
  -- What the file holds, counted in one pass; a statement with nothing to write is not run
  -- (a first load updates nothing, a re-delivery registers few keys or none), so the layer's
  -- statement triggers do not fire for it.
  EXECUTE format('SELECT count(*) FILTER (WHERE _new_key), count(*) FILTER (WHERE _changed), '
                 'count(*) FILTER (WHERE _cur IS NULL), '
                 'count(*) FILTER (WHERE _cur IS NOT NULL AND NOT _changed) FROM %s', good)
    INTO n_keys, n_to_change, n_to_insert, n_same;

  -- Register the new keys. No ON CONFLICT (its speculative insertion is costly: docs/ingest.md,
  -- "Where each guarantee lives, and what it costs"): the keys are known to be new, and the
  -- layer's ingests are serialised by their advisory lock; a user registering the same key at
  -- the same moment makes this ingest fail whole (unique violation), to be run again.
  IF n_keys > 0 THEN
    EXECUTE format(
      'INSERT INTO core.feature (feature_id, layer, plan_area_id, feature_key) '
      'SELECT _id, %1$L, %2$s, _key FROM %3$s WHERE _new_key ORDER BY _id',
      lyr, pa, good);
  END IF;

  -- Changed features: their current versions closed in one UPDATE, their new versions opened
  -- in one INSERT, with the file's content and, for the columns the file does not deliver,
  -- the closed version's. The rows stored are those an UPDATE of the content makes through
  -- the versioning trigger (sql/010), which opens each new version with an INSERT of its own:
  -- one statement, and one run of the layer's statement triggers, per changed feature
  -- (docs/ingest.md, "Where each guarantee lives, and what it costs").
  IF n_to_change > 0 THEN
    SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), '{}') INTO carried
    FROM pg_attribute a
    WHERE a.attrelid = format('core.%I', lyr)::regclass AND a.attnum > 0
      AND NOT a.attisdropped AND a.attgenerated = '' AND a.attidentity = ''
      AND a.attname <> ALL (cols || ARRAY[id_col, 'plan_area_id', 'source_fid',
                                          'source_attributes', 'batch_id', 'created_by',
                                          'valid_from', 'valid_to', 'closed_by',
                                          'closed_batch_id']);
    EXECUTE format(
      'UPDATE core.%1$I t SET valid_to = now() WHERE t.version_id = ANY (ARRAY('
      '  SELECT m._cur FROM %2$s m WHERE m._changed))', lyr, good);
    EXECUTE format(
      'INSERT INTO core.%1$I (%2$I, plan_area_id, %3$s, source_fid, source_attributes, '
      '  batch_id) '
      'SELECT m._id, t.plan_area_id, %4$s, p._fid, p._attrs, %5$s FROM %6$s m '
      'JOIN %7$s p USING (_row) ' || CASE WHEN few THEN
      'JOIN LATERAL (SELECT t.* FROM core.%1$I t WHERE t.version_id = m._cur OFFSET 0) t ON true '
      ELSE 'JOIN core.%1$I t ON t.version_id = m._cur ' END ||
      'WHERE m._changed ORDER BY m._id',
      lyr, id_col,
      (SELECT string_agg(format('%I', x), ', ') FROM unnest(cols || carried) x),
      (SELECT string_agg(format('p.%I', x), ', ') FROM unnest(cols) x)
        || coalesce((SELECT ', ' || string_agg(format('t.%I', x), ', ')
                     FROM unnest(carried) x), ''),
      b, good, prep);
    GET DIAGNOSTICS n_changed = ROW_COUNT;
  END IF;

  -- New features (or features that come back after being retired), in feature id order (the
  -- order the keys were registered in), so the btree indexes on the id take them at their end.
  -- A load that at least doubles the layer builds its secondary indexes once, after the
  -- INSERT, instead of row by row (sql/064: 1.3-1.6 s instead of 2.7-4.0 s for 100,000
  -- parcels); the layer keeps them when someone is reading it.
  IF n_to_insert > 0 THEN
    n_bulk := ops.ingest_indexes_set_aside(lyr, n_to_insert);
    EXECUTE format(
      'INSERT INTO core.%1$I (%2$I, plan_area_id, %3$s, source_fid, source_attributes, '
      '  batch_id) '
      'SELECT m._id, %4$s, %5$s, p._fid, p._attrs, %6$s FROM %7$s m JOIN %8$s p USING (_row) '
      'WHERE m._cur IS NULL ORDER BY m._id',
      lyr, id_col, (SELECT string_agg(format('%I', x), ', ') FROM unnest(cols) x), pa,
      (SELECT string_agg(format('p.%I', x), ', ') FROM unnest(cols) x), b, good, prep);
    GET DIAGNOSTICS n_new = ROW_COUNT;
    IF n_bulk > 0 THEN
      PERFORM ops.ingest_indexes_rebuild(lyr);
    END IF;
  END IF;

  -- Features of the file's scope that the file no longer holds are closed (below). A feature
  -- that is in the file but skipped as bad is not closed: it did not disappear.
  IF scope_sql IS NOT NULL AND had_current THEN
    EXECUTE format('DROP TABLE IF EXISTS %s', keep);
    EXECUTE format(
      'CREATE UNLOGGED TABLE %1$s AS SELECT DISTINCT f.feature_id AS id FROM %2$s p '
      'JOIN core.feature f ON f.layer = %3$L AND f.plan_area_id = %4$s AND f.feature_key = p._key',
      keep, prep, lyr, pa);
    -- indexed: after a bulk load in this same transaction the planner still sees core.<layer>
    -- as it was (and the etl role may not ANALYZE it), so the anti-join must be cheap in any
    -- plan it picks
    EXECUTE format('CREATE INDEX ON %s (id)', keep);
    EXECUTE format('ANALYZE %s', keep);
    EXECUTE format(
      'UPDATE core.%1$I t SET valid_to = now() '
      'WHERE t.valid_to IS NULL AND t.plan_area_id = %2$s AND %3$s '
      '  AND NOT EXISTS (SELECT 1 FROM %4$s k WHERE k.id = t.%5$I)',
      lyr, pa, scope_sql, keep, id_col);
    GET DIAGNOSTICS n_closed = ROW_COUNT;
  END IF;

  EXECUTE format('SELECT count(DISTINCT _row) FILTER (WHERE kind = ''error''), '
                 'count(*) FILTER (WHERE kind = ''repaired'') FROM %s', prob)
    INTO n_skipped, n_repaired;

  UPDATE ops.batch SET
    inserted_count = n_new, changed_count = n_changed, closed_count = n_closed,
    -- (rows a re-delivery set aside are counted already, sql/063)
    unchanged_count = coalesce(unchanged_count, 0) + n_same,
    skipped_count = n_skipped, repaired_count = n_repaired
  WHERE batch_id = b;

  result := jsonb_build_object('inserted', n_new, 'changed', n_changed, 'closed', n_closed,
                               'unchanged', n_same, 'skipped', n_skipped,
                               'repaired', n_repaired);
  RETURN result;
END $$;
COMMENT ON FUNCTION ops.ingest_apply(jsonb) IS
  'Ingest: merges the good features of a prepared file into core.<layer>: new versions only for '
  'new and changed features, the file''s scope closed where the file no longer holds a feature.';

CREATE OR REPLACE FUNCTION ops.ingest_cleanup(p_batch bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  t record;
  n integer := 0;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
           WHERE s.nspname = 'staging' AND c.relkind = 'r'
             AND (c.relname = 'b' || p_batch OR c.relname LIKE 'b' || p_batch || '\_%')
  LOOP
    EXECUTE format('DROP TABLE staging.%I', t.relname);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ops.ingest_cleanup(bigint) IS
  'Ingest: drops a batch''s staging tables once merged (staging is emptied after each merge).';

REVOKE ALL ON FUNCTION ops.ingest_table(bigint, text), ops.ingest_noun(text),
  ops.ingest_value_sql(jsonb), ops.ingest_typed_sql(jsonb), ops.ingest_delivered(jsonb),
  ops.ingest_column_checks(jsonb, text, integer), ops.ingest_prepare(jsonb),
  ops.ingest_apply(jsonb), ops.ingest_cleanup(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_table(bigint, text), ops.ingest_noun(text),
  ops.ingest_value_sql(jsonb), ops.ingest_typed_sql(jsonb), ops.ingest_delivered(jsonb),
  ops.ingest_column_checks(jsonb, text, integer), ops.ingest_prepare(jsonb),
  ops.ingest_apply(jsonb), ops.ingest_cleanup(bigint) TO rulem_etl;
