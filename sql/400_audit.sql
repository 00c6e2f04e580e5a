-- 400_audit: who changed what, when, in which batch, from which version to which.
-- Nothing needs to be logged separately: every layer keeps all its versions with who and which
-- batch opened and closed each one (010_versioning), so the audit trail is a view over them.
-- One row per event: 'insert' (first version), 'update' (a version replaced by the next),
-- 'retire' (a version closed with no successor), 'reinstate' (a feature back after retirement).

DO $$
DECLARE
  t record;
  parts text[] := '{}';
BEGIN
  FOR t IN
    SELECT tb.table_name, lc.restricted
    FROM ops.layer lc  -- the layer catalogue (rulem_db/catalogue/layers.py)
    JOIN information_schema.tables tb
      ON tb.table_schema = 'core' AND tb.table_name = lc.layer AND tb.table_type = 'BASE TABLE'
    WHERE NOT lc.restricted  -- restricted (3(d)): not even its counts in pub
    ORDER BY tb.table_name
  LOOP
    parts := parts || format($q$
      SELECT %1$L::text AS layer, plan_area_id, feature_id,
             CASE WHEN prev_version_id IS NULL THEN 'insert'
                  WHEN prev_valid_to < valid_from THEN 'reinstate'
                  ELSE 'update' END AS action,
             valid_from AS changed_at, created_by AS changed_by, batch_id,
             prev_version_id AS old_version_id, version_id AS new_version_id,
             %1$L || '|+' || version_id AS row_key
      FROM (SELECT v.plan_area_id, v.%1$I_id AS feature_id, v.version_id, v.valid_from,
                   v.created_by, v.batch_id,
                   lag(v.version_id) OVER w AS prev_version_id,
                   lag(v.valid_to) OVER w AS prev_valid_to
            FROM core.%1$I v WINDOW w AS (PARTITION BY v.%1$I_id ORDER BY v.valid_from, v.version_id)) e
      UNION ALL
      SELECT %1$L, plan_area_id, feature_id, 'retire', valid_to, closed_by, closed_batch_id,
             version_id, NULL, %1$L || '|-' || version_id
      FROM (SELECT v.plan_area_id, v.%1$I_id AS feature_id, v.version_id, v.valid_to,
                   v.closed_by, v.closed_batch_id,
                   lead(v.valid_from) OVER w AS next_valid_from
            FROM core.%1$I v WINDOW w AS (PARTITION BY v.%1$I_id ORDER BY v.valid_from, v.version_id)) r
      WHERE valid_to IS NOT NULL AND (next_valid_from IS NULL OR next_valid_from > valid_to)
    $q$, t.table_name);
  END LOOP;
  EXECUTE 'DROP VIEW IF EXISTS pub.change_history';
  EXECUTE 'CREATE VIEW pub.change_history AS ' || array_to_string(parts, ' UNION ALL ');
END $$;

COMMENT ON VIEW pub.change_history IS
  'Audit trail of every versioned layer: each insert, update, retirement and reinstatement, '
  'with who, when, which ingest batch, and the old and new version ids (core.<layer>.version_id).';
COMMENT ON COLUMN pub.change_history.layer IS 'Layer (core table).';
COMMENT ON COLUMN pub.change_history.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.change_history.feature_id IS 'Stable feature id (<layer>_id).';
COMMENT ON COLUMN pub.change_history.action IS 'insert, update, retire or reinstate.';
COMMENT ON COLUMN pub.change_history.changed_at IS 'When the change was committed (transaction time).';
COMMENT ON COLUMN pub.change_history.changed_by IS 'Database user that made the change.';
COMMENT ON COLUMN pub.change_history.batch_id IS 'Ingest batch that made it (NULL: a direct edit).';
COMMENT ON COLUMN pub.change_history.old_version_id IS 'Version before the change (NULL for insert).';
COMMENT ON COLUMN pub.change_history.new_version_id IS 'Version after the change (NULL for retire).';
COMMENT ON COLUMN pub.change_history.row_key IS
  'The row''s key, layer|+version opened or layer|-version retired: what QGIS and the OGC API '
  'take as its feature id.';
