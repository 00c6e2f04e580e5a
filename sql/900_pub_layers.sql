-- 900_pub_layers: one read-only view per layer in schema pub (spec section 8), holding the
-- current versions: first column <layer>_id, then the attributes, area_acres for polygon
-- layers, provenance (batch_id, source_fid, source_attributes), and geom. Column comments are
-- copied from core so that the data dictionary stays in one place.
-- Restricted layers (3(d) species records) go to schema restricted instead.

CREATE SCHEMA IF NOT EXISTS restricted;
COMMENT ON SCHEMA restricted IS 'Layers readable only by rulem_restricted (3(d) species records).';
COMMENT ON SCHEMA pub IS 'Published views: what staff, BI tools and GIS clients read.';

DO $$
DECLARE
  t record;
  c record;
  cols text;
  target text;
  is_poly boolean;
BEGIN
  FOR t IN
    SELECT tb.table_name,
           (SELECT type FROM geometry_columns g
             WHERE g.f_table_schema = 'core' AND g.f_table_name = tb.table_name) AS gtype,
           obj_description(format('core.%I', tb.table_name)::regclass) AS doc
    FROM information_schema.tables tb
    WHERE tb.table_schema = 'core' AND tb.table_type = 'BASE TABLE'
      AND EXISTS (SELECT 1 FROM information_schema.columns ic
                  WHERE ic.table_schema = 'core' AND ic.table_name = tb.table_name
                    AND ic.column_name = 'version_id')
    ORDER BY tb.table_name
  LOOP
    target := CASE WHEN t.table_name = 'species_record' THEN 'restricted' ELSE 'pub' END;
    is_poly := t.gtype IN ('MULTIPOLYGON', 'POLYGON');
    SELECT string_agg(format('%I', column_name), ', ' ORDER BY ordinal_position) INTO cols
    FROM information_schema.columns
    WHERE table_schema = 'core' AND table_name = t.table_name
      AND column_name NOT IN ('version_id', 'geom', 'source_fid', 'source_attributes', 'batch_id',
                              'created_by', 'valid_from', 'valid_to', 'closed_by',
                              'closed_batch_id');
    EXECUTE format('DROP VIEW IF EXISTS %I.%I CASCADE', target, t.table_name);
    EXECUTE format(
      'CREATE VIEW %I.%I AS SELECT %s, version_id, valid_from AS version_from, created_by, '
      'batch_id, source_fid, source_attributes%s%s FROM core.%I WHERE valid_to IS NULL',
      target, t.table_name, cols,
      CASE WHEN is_poly THEN ', round(core.acres(geom), 4) AS area_acres' ELSE '' END,
      CASE WHEN t.gtype IS NOT NULL THEN ', geom' ELSE '' END,
      t.table_name);
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', target, t.table_name,
                   t.doc || ' Current versions; history in core.' || t.table_name || '.');
    FOR c IN
      SELECT a.attname, col_description(a.attrelid, a.attnum) AS doc
      FROM pg_attribute a
      WHERE a.attrelid = format('core.%I', t.table_name)::regclass AND a.attnum > 0
        AND NOT a.attisdropped
    LOOP
      CONTINUE WHEN c.attname IN ('valid_from', 'valid_to', 'closed_by', 'closed_batch_id');
      EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', target, t.table_name, c.attname, c.doc);
    END LOOP;
    EXECUTE format('COMMENT ON COLUMN %I.%I.version_from IS %L', target, t.table_name,
                   'When this version became current.');
    IF is_poly THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.area_acres IS %L', target, t.table_name,
                     'Planar area in the working CRS, acres (4 decimals).');
    END IF;
  END LOOP;
END $$;
