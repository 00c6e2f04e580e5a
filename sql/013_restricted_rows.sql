-- 013_restricted_rows: the rows of the feature registry and the batch record that belong to a
-- restricted layer (3(d) species records; ops.layer.restricted, from the layer catalogue) are
-- visible to the roles that write or read that layer, and to nobody else.
--
-- Why: rulem_editor reads core.feature (to register the keys of what it draws) and ops.batch
-- (the versioning triggers check that a version's batch exists), and both name every layer's
-- features and files: a species record's key ('24-003/SR-001') and the file it came in
-- ('24-003 species.gpkg') tell which permits have protected species on them. Row security
-- lets the editor see the rows of the layers it may know of only; rulem_etl, which loads the
-- restricted layer (ingest registers its keys and records its batches), sees every row. The
-- owner (migrations, the SECURITY DEFINER functions, the views of pub and restricted) is not
-- subject to row security; a role with no policy here sees no row at all (the readers have
-- no right on these tables anyway). The published run log (pub.reconciliation_file, sql/300)
-- leaves out the files of restricted layers for the same reason.
--
-- The restricted layers are written into the policies as a list when this file is applied;
-- every SQL file is applied again when the layer catalogue changes (docs/design.md), so a new
-- restricted layer is covered. Idempotent.

DO $$
DECLARE
  restricted text := (SELECT coalesce(array_agg(l.layer ORDER BY l.layer), '{}')::text
                      FROM ops.layer l WHERE l.restricted);
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['core.feature', 'ops.batch'] LOOP
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('DROP POLICY IF EXISTS writers_every_layer ON %s', t);
    EXECUTE format('CREATE POLICY writers_every_layer ON %s TO rulem_etl '
                   'USING (true) WITH CHECK (true)', t);
    EXECUTE format('DROP POLICY IF EXISTS editors_open_layers ON %s', t);
    EXECUTE format('CREATE POLICY editors_open_layers ON %1$s TO rulem_editor '
                   'USING (layer <> ALL (%2$L::text[])) '
                   'WITH CHECK (layer <> ALL (%2$L::text[]))',
                   t, restricted);
  END LOOP;
END $$;

COMMENT ON POLICY writers_every_layer ON core.feature IS
  'rulem_etl registers and reads the keys of every layer, restricted ones included (it loads '
  'them).';
COMMENT ON POLICY editors_open_layers ON core.feature IS
  'rulem_editor sees and registers keys of layers that are not restricted only '
  '(sql/013_restricted_rows.sql).';
COMMENT ON POLICY writers_every_layer ON ops.batch IS
  'rulem_etl records and reads the batches of every layer, restricted ones included.';
COMMENT ON POLICY editors_open_layers ON ops.batch IS
  'rulem_editor sees the batches of layers that are not restricted only '
  '(sql/013_restricted_rows.sql).';
