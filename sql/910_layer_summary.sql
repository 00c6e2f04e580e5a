-- 910_layer_summary: what the database holds, layer by layer: the first thing a new user and
-- the nightly report show. Generated over every layer of the catalogue (ops.layer) but the
-- restricted ones.

DO $$
DECLARE
  t record;
  parts text[] := '{}';
BEGIN
  FOR t IN
    SELECT tb.table_name, lc.restricted,
           (SELECT type FROM geometry_columns g
             WHERE g.f_table_schema = 'core' AND g.f_table_name = tb.table_name) AS gtype
    FROM ops.layer lc  -- the layer catalogue (rulem_db/catalogue/layers.py)
    JOIN information_schema.tables tb
      ON tb.table_schema = 'core' AND tb.table_name = lc.layer AND tb.table_type = 'BASE TABLE'
    WHERE NOT lc.restricted  -- restricted (3(d)): not even its counts in pub
    ORDER BY tb.table_name
  LOOP
    parts := parts || format(
      'SELECT p.plan_area_id, p.code AS plan_area, %L::text AS layer, %L::text AS geometry_type, '
      'count(l.version_id) FILTER (WHERE l.valid_to IS NULL) AS features, '
      'count(l.version_id) AS versions, %s AS area_acres, %s AS length_ft, '
      'max(l.valid_from) AS last_change, '
      'p.plan_area_id || ''|'' || %L AS row_key '
      'FROM core.plan_area p LEFT JOIN core.%I l ON l.plan_area_id = p.plan_area_id '
      'GROUP BY p.plan_area_id, p.code',
      t.table_name, coalesce(t.gtype, 'none'),
      CASE WHEN t.gtype IN ('MULTIPOLYGON', 'POLYGON')
           THEN 'round(coalesce(sum(ST_Area(l.geom) / 4046.8564224) FILTER (WHERE l.valid_to IS NULL), 0)::numeric, 4)::numeric(12,4)'
           ELSE 'NULL::numeric(12,4)' END,
      CASE WHEN t.gtype IN ('MULTILINESTRING', 'LINESTRING')
           THEN 'round((coalesce(sum(ST_Length(l.geom)) FILTER (WHERE l.valid_to IS NULL), 0) '
                '/ 0.3048)::numeric, 0)'
           ELSE 'NULL::numeric' END,
      t.table_name, t.table_name);
  END LOOP;
  EXECUTE 'DROP VIEW IF EXISTS pub.layer_summary';
  EXECUTE 'CREATE VIEW pub.layer_summary AS ' || array_to_string(parts, ' UNION ALL ');
END $$;

COMMENT ON VIEW pub.layer_summary IS
  'Per plan area and layer: current features, all versions, total area or length, last change.';
COMMENT ON COLUMN pub.layer_summary.plan_area_id IS 'Plan area id.';
COMMENT ON COLUMN pub.layer_summary.plan_area IS 'Plan area code.';
COMMENT ON COLUMN pub.layer_summary.layer IS 'Layer (core table and pub view name).';
COMMENT ON COLUMN pub.layer_summary.row_key IS
  'The row''s key, plan_area_id|layer: what QGIS and the OGC API take as its feature id.';
COMMENT ON COLUMN pub.layer_summary.geometry_type IS 'Geometry type, or none for attribute-only layers.';
COMMENT ON COLUMN pub.layer_summary.features IS 'Current features.';
COMMENT ON COLUMN pub.layer_summary.versions IS 'All versions ever stored, current and history.';
COMMENT ON COLUMN pub.layer_summary.area_acres IS 'Total area of current polygons, acres (overlaps count twice).';
COMMENT ON COLUMN pub.layer_summary.length_ft IS 'Total length of current lines, feet.';
COMMENT ON COLUMN pub.layer_summary.last_change IS 'When the newest version was made.';
