-- 900_pub_layers: one read-only view per layer in schema pub (docs/publishing.md), holding the
-- current versions. Column order, the same in every view:
--   <layer>_id (the stable feature id: the key QGIS and BI tools join on), plan_area_id,
--   the layer's attributes in the rule's words, each reference followed by the number people
--   know it by (permit_id -> permit_no, delineation_id -> delineation_no and the
--   delineation's status), the version (version_id, version_from, created_by), provenance
--   (batch_id, source_fid, source_attributes), area_acres for polygons or length_ft for lines,
--   and geom last (typmod geometry in the working CRS, straight from core, so every client
--   reads the right type and SRID from geometry_columns).
-- Column comments are copied from core, so the data dictionary has one source.
-- The views call no function of core or ops but core.pin_display (area_acres is core.acres()
-- written out): a view reads its tables with its owner's rights, but a function it calls needs
-- EXECUTE by the reader, which sql/998 grants for exactly the functions pub views call.
-- A layer with a column pin (parcel) also shows pin_display, the PIN as people read it
-- (sql/025); pin stays as delivered. Acre columns are numeric(12,4): BI tools read an
-- unbounded numeric as text or a float.
-- Restricted layers (3(d) species records) go to schema restricted instead.
-- History (every version) is in pub.<layer>_history (920_pub_history.sql).

CREATE SCHEMA IF NOT EXISTS restricted;
COMMENT ON SCHEMA restricted IS 'Layers readable only by rulem_restricted (3(d) species records).';
COMMENT ON SCHEMA pub IS 'Published views: what staff, BI tools and GIS clients read.';

-- The labels shown next to a reference column: which core table holds the referenced feature,
-- which of its columns to show, under what name (the reference's prefix + the column), and
-- the comment. A reference is recognised by its column name ending in '<layer>_id'.
CREATE OR REPLACE FUNCTION ops.pub_reference_labels()
RETURNS TABLE (ref_layer text, label_column text, label_suffix text, doc text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  VALUES
    ('permit', 'permit_no', 'permit_no', 'Permit number of %s (the permit''s current version).'),
    ('delineation', 'delineation_no', 'delineation_no',
     'Delineation number of %s (the delineation''s current version).'),
    ('delineation', 'status', 'delineation_status',
     'Review status of the delineation of %s: submitted, tep_reviewed, approved or rejected. '
     'Only approved delineations define wetland for the ledger and the checks (spec section 3).'),
    ('delineation', 'approved_on', 'delineation_approved_on',
     'Approval date of the delineation of %s (NULL until approved).'),
    ('subwatershed', 'name', 'subwatershed_name', 'Name of the subwatershed in %s.')
$$;
COMMENT ON FUNCTION ops.pub_reference_labels() IS
  'Labels the pub views show next to reference columns (permit_no next to permit_id, ...).';

DO $$
DECLARE
  t record;
  c record;
  l record;
  sel text[];
  joins text[];
  joined text[];
  docs text[][];
  target text;
  is_poly boolean;
  is_line boolean;
  prefix text;
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
    is_poly := t.gtype IN ('MULTIPOLYGON', 'POLYGON');
    is_line := t.gtype IN ('MULTILINESTRING', 'LINESTRING');
    sel := ARRAY[]::text[];
    joins := ARRAY[]::text[];
    joined := ARRAY[]::text[];
    docs := ARRAY[]::text[];
    FOR c IN
      SELECT column_name::text AS name, data_type::text AS kind FROM information_schema.columns
      WHERE table_schema = 'core' AND table_name = t.table_name
        AND column_name NOT IN ('version_id', 'geom', 'source_fid', 'source_attributes',
                                'batch_id', 'created_by', 'valid_from', 'valid_to', 'closed_by',
                                'closed_batch_id')
      ORDER BY ordinal_position
    LOOP
      sel := sel || CASE WHEN c.name LIKE '%acres' AND c.kind = 'numeric'
                         THEN format('t.%1$I::numeric(12,4) AS %1$I', c.name)
                         ELSE format('t.%I', c.name) END;
      IF c.name = 'pin' THEN  -- the PIN as people read it, next to it as delivered
        sel := sel || 'core.pin_display(t.pin) AS pin_display'::text;
        docs := docs || ARRAY[['pin_display',
          'PIN in display form (core.pin_display): NN-NN-NN-NN-NNNN for a 12-digit PIN, '
          'else as delivered; what tables, CSVs, reports and map labels show.']];
      END IF;
      CONTINUE WHEN c.name = t.table_name || '_id';
      FOR l IN
        SELECT r.* FROM ops.pub_reference_labels() r
        WHERE c.name LIKE '%' || r.ref_layer || '_id'
          AND to_regclass(format('core.%I', r.ref_layer)) IS NOT NULL
      LOOP
        prefix := left(c.name, length(c.name) - length(l.ref_layer || '_id'));
        IF NOT c.name = ANY (joined) THEN
          joined := joined || c.name;
          joins := joins || format(
            'LEFT JOIN core.%1$I j_%2$s ON j_%2$s.%1$I_id = t.%2$I AND j_%2$s.valid_to IS NULL',
            l.ref_layer, c.name);
        END IF;
        sel := sel || format('j_%s.%I AS %I', c.name, l.label_column, prefix || l.label_suffix);
        docs := docs || ARRAY[[prefix || l.label_suffix, format(l.doc, c.name)]];
      END LOOP;
    END LOOP;
    sel := sel || ARRAY['t.version_id', 't.valid_from AS version_from', 't.created_by',
                        't.batch_id', 't.source_fid', 't.source_attributes'];
    IF is_poly THEN
      sel := sel || 'round((ST_Area(t.geom) / 4046.8564224)::numeric, 4)::numeric(12,4) AS area_acres'::text;
    ELSIF is_line THEN
      sel := sel || 'round((ST_Length(t.geom) / 0.3048)::numeric, 0) AS length_ft'::text;
    END IF;
    IF t.gtype IS NOT NULL THEN
      sel := sel || 't.geom'::text;
    END IF;
    EXECUTE format('DROP VIEW IF EXISTS %I.%I CASCADE', target, t.table_name);
    EXECUTE format('CREATE VIEW %I.%I AS SELECT %s FROM core.%I t %s WHERE t.valid_to IS NULL',
                   target, t.table_name, array_to_string(sel, ', '), t.table_name,
                   array_to_string(joins, ' '));
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', target, t.table_name,
                   t.doc || ' Current versions, one row per feature, keyed by '
                   || t.table_name || '_id; every version in ' || target || '.'
                   || t.table_name || '_history.');
    FOR c IN
      SELECT a.attname, col_description(a.attrelid, a.attnum) AS doc
      FROM pg_attribute a
      WHERE a.attrelid = format('core.%I', t.table_name)::regclass AND a.attnum > 0
        AND NOT a.attisdropped
        AND a.attname NOT IN ('valid_from', 'valid_to', 'closed_by', 'closed_batch_id')
    LOOP
      EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', target, t.table_name, c.attname, c.doc);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(docs, 1), 0) LOOP
      EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', target, t.table_name, docs[i][1],
                     docs[i][2]);
    END LOOP;
    EXECUTE format('COMMENT ON COLUMN %I.%I.version_from IS %L', target, t.table_name,
                   'When this version became current (transaction time).');
    IF is_poly THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.area_acres IS %L', target, t.table_name,
                     'Planar area in the working CRS, acres (4 decimals; '
                     '1 acre = 4046.8564224 m^2).');
    ELSIF is_line THEN
      EXECUTE format('COMMENT ON COLUMN %I.%I.length_ft IS %L', target, t.table_name,
                     'Planar length in the working CRS, feet (whole feet; 1 ft = 0.3048 m).');
    END IF;
  END LOOP;
END $$;
