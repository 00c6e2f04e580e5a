-- 920_pub_history: every version of every layer, for "what did we know on date D" and "who
-- changed this": pub.<layer>_history (restricted.<layer>_history for a restricted layer: 3(d)
-- species records), for every layer of the catalogue (ops.layer).
-- Why views over core and not functions: QGIS, GDAL and BI tools read views; a time slider
-- or a filter `valid_from <= D AND (valid_to IS NULL OR valid_to > D)` gives the layer as of D.
-- The key is version_id (one row per version); <layer>_id repeats across a feature's versions.

DO $$
DECLARE
  t record;
  c record;
  cols text;
  target text;
  view_name text;
BEGIN
  FOR t IN
    SELECT tb.table_name, lc.restricted,
           (SELECT type FROM geometry_columns g
             WHERE g.f_table_schema = 'core' AND g.f_table_name = tb.table_name) AS gtype,
           obj_description(format('core.%I', tb.table_name)::regclass) AS doc
    FROM ops.layer lc  -- the layer catalogue (rulem_db/catalogue/layers.py)
    JOIN information_schema.tables tb
      ON tb.table_schema = 'core' AND tb.table_name = lc.layer AND tb.table_type = 'BASE TABLE'
    ORDER BY tb.table_name
  LOOP
    target := CASE WHEN t.restricted THEN 'restricted' ELSE 'pub' END;
    view_name := t.table_name || '_history';
    SELECT string_agg(CASE WHEN column_name LIKE '%acres' AND data_type = 'numeric'
                           THEN format('%1$I::numeric(12,4) AS %1$I', column_name)
                           ELSE format('%I', column_name) END, ', ' ORDER BY ordinal_position)
      INTO cols
    FROM information_schema.columns
    WHERE table_schema = 'core' AND table_name = t.table_name
      AND column_name NOT IN ('version_id', 'geom', 'valid_from', 'valid_to', 'created_by',
                              'closed_by', 'batch_id', 'closed_batch_id', 'source_fid',
                              'source_attributes');
    IF EXISTS (SELECT 1 FROM information_schema.columns
               WHERE table_schema = 'core' AND table_name = t.table_name
                 AND column_name = 'pin') THEN  -- as in pub.<layer> (sql/900)
      cols := regexp_replace(cols, '(^|, )pin(, |$)',
                             '\1pin, core.pin_display(pin) AS pin_display\2');
    END IF;
    EXECUTE format('DROP VIEW IF EXISTS %I.%I', target, view_name);
    EXECUTE format(
      'CREATE VIEW %I.%I AS SELECT version_id, %s, valid_from, valid_to, valid_to IS NULL AS '
      'is_current, created_by, batch_id, closed_by, closed_batch_id, source_fid, '
      'source_attributes%s%s FROM core.%I',
      target, view_name, cols,
      CASE WHEN t.gtype IN ('MULTIPOLYGON', 'POLYGON')
           THEN ', round((ST_Area(geom) / 4046.8564224)::numeric, 4)::numeric(12,4) AS area_acres'
           WHEN t.gtype IN ('MULTILINESTRING', 'LINESTRING')
           THEN ', round((ST_Length(geom) / 0.3048)::numeric, 0) AS length_ft'
           ELSE '' END,
      CASE WHEN t.gtype IS NOT NULL THEN ', geom' ELSE '' END,
      t.table_name);
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', target, view_name,
                   t.doc || ' Every version, current and superseded, keyed by version_id; '
                   || 'the layer as of a moment T is the rows with valid_from <= T and '
                   || '(valid_to IS NULL OR valid_to > T).');
    FOR c IN
      SELECT a.attname, col_description(a.attrelid, a.attnum) AS doc
      FROM pg_attribute a
      WHERE a.attrelid = format('core.%I', t.table_name)::regclass AND a.attnum > 0
        AND NOT a.attisdropped
    LOOP
      EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', target, view_name, c.attname, c.doc);
    END LOOP;
    IF cols LIKE '%pin_display%' THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.pin_display IS %L', target, view_name,
                     'PIN of this version in display form (core.pin_display): '
                     'NN-NN-NN-NN-NNNN for a 12-digit PIN, else as delivered.');
    END IF;
    EXECUTE format('COMMENT ON COLUMN %I.%I.is_current IS %L', target, view_name,
                   'True for the current version (valid_to IS NULL).');
    IF t.gtype IN ('MULTIPOLYGON', 'POLYGON') THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.area_acres IS %L', target, view_name,
                     'Planar area of this version in the working CRS, acres (4 decimals).');
    ELSIF t.gtype IN ('MULTILINESTRING', 'LINESTRING') THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.length_ft IS %L', target, view_name,
                     'Planar length of this version in the working CRS, feet (whole feet).');
    END IF;
  END LOOP;
END $$;
