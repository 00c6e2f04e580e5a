-- 064_ingest_bulk_indexes: a load that at least doubles a layer builds the layer's secondary
-- indexes once, after its INSERT, instead of keeping them current row by row.
--   A first load of 100,000 parcels spent most of its INSERT into core.parcel inserting index
--   entries one row at a time (the GiST index on geom, the btree indexes on pin,
--   core.pin_display(pin), (plan_area_id, pin_normalized) and valid_from): 2.7-4.0 s, where
--   the same rows inserted without those indexes and the indexes built afterwards took
--   1.3-1.6 s (a sorted GiST build, bulk btree builds). docs/ingest.md, "Speed".
--   * ops.ingest_indexes_set_aside(layer, rows), called by ops.ingest_apply (sql/061) before
--     it inserts rows new versions: when rows >= 10,000 and the layer's table holds fewer rows
--     than that, and the table can be locked at once (ACCESS EXCLUSIVE, NOWAIT: a reader in
--     the middle of a query, or a transaction that read the layer, keeps the row-by-row path),
--     its secondary indexes (not those behind a constraint: the primary key and the
--     one-version constraint stay and are checked as always) are dropped and their
--     definitions and comments kept in ops.ingest_index_set_aside.
--   * ops.ingest_indexes_rebuild(layer), right after the INSERT: makes them again from those
--     definitions, with their comments, and forgets them.
--   Everything happens in the ingest's transaction: a refused file rolls back the drop with
--   the rest, so the database is exactly as it was. A transaction that set indexes aside and
--   did not rebuild them cannot commit (the deferred constraint trigger below).
--   The lock is held until the ingest commits: readers of the layer wait for a first load (a
--   few seconds) rather than see it half made, as they would wait for any ALTER.
--   SECURITY DEFINER (the owner's right to drop and create indexes; the writer role may not):
--   the layer must be one of ops.layer, only the indexes of core.<layer> are touched, and the
--   rebuild runs only definitions the catalogue gave (the table is the owner's alone).

CREATE OR REPLACE FUNCTION ops.ingest_indexes_set_aside(p_layer text, p_rows bigint)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  rel    regclass;
  held   bigint;
  ix     record;
  n      integer := 0;
BEGIN
  IF p_rows IS NULL OR p_rows < 10000
     OR NOT EXISTS (SELECT 1 FROM ops.layer l WHERE l.layer = p_layer) THEN
    RETURN 0;
  END IF;
  rel := to_regclass(format('core.%I', p_layer));
  IF rel IS NULL THEN
    RETURN 0;
  END IF;
  -- rows already in the table, counted up to p_rows (a layer at least as large keeps its
  -- indexes: rebuilding them would cost more than the row-by-row inserts)
  EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %s) x', rel, p_rows) INTO held;
  IF held >= p_rows THEN
    RETURN 0;
  END IF;
  BEGIN
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE NOWAIT', rel);
  EXCEPTION WHEN lock_not_available THEN
    RETURN 0;  -- someone reads the layer: keep its indexes, insert row by row
  END;
  FOR ix IN
    SELECT i.indexrelid, c.relname, pg_get_indexdef(i.indexrelid) AS def,
           obj_description(i.indexrelid, 'pg_class') AS description
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = rel
      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
    ORDER BY c.relname
  LOOP
    INSERT INTO ops.ingest_index_set_aside (xact, layer, index_name, definition, description)
    VALUES (pg_current_xact_id()::text::bigint, p_layer, ix.relname, ix.def, ix.description);
    EXECUTE format('DROP INDEX core.%I', ix.relname);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ops.ingest_indexes_set_aside(text, bigint) IS
  'Ingest: before a load that at least doubles a layer (10,000 rows or more), drops the layer''s '
  'secondary indexes for ops.ingest_indexes_rebuild to build once after the INSERT (sql/064); '
  'returns how many, 0 when the layer keeps them.';

CREATE OR REPLACE FUNCTION ops.ingest_indexes_rebuild(p_layer text)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ix record;
  n  integer := 0;
BEGIN
  FOR ix IN
    DELETE FROM ops.ingest_index_set_aside s
    WHERE s.xact = pg_current_xact_id()::text::bigint AND s.layer = p_layer
    RETURNING s.index_name, s.definition, s.description
  LOOP
    EXECUTE ix.definition;
    IF ix.description IS NOT NULL THEN
      EXECUTE format('COMMENT ON INDEX core.%I IS %L', ix.index_name, ix.description);
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ops.ingest_indexes_rebuild(text) IS
  'Ingest: builds again the indexes of a layer that ops.ingest_indexes_set_aside dropped in this '
  'transaction (sql/064); returns how many.';

-- At commit: an index set aside and not rebuilt refuses the commit (the transaction rolls
-- back, and the index with it).
CREATE OR REPLACE FUNCTION ops.ingest_index_set_aside_rebuilt() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM ops.ingest_index_set_aside s
             WHERE s.xact = NEW.xact AND s.index_name = NEW.index_name) THEN
    RAISE EXCEPTION 'index core.% of layer % was set aside for a bulk load and not rebuilt; '
      'the transaction cannot commit', NEW.index_name, NEW.layer USING ERRCODE = 'P0001';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.ingest_index_set_aside_rebuilt() IS
  'Ingest: deferred check that every index set aside for a bulk load was rebuilt (sql/064).';

DROP TRIGGER IF EXISTS rebuilt_before_commit ON ops.ingest_index_set_aside;
CREATE CONSTRAINT TRIGGER rebuilt_before_commit AFTER INSERT ON ops.ingest_index_set_aside
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  EXECUTE FUNCTION ops.ingest_index_set_aside_rebuilt();

REVOKE ALL ON FUNCTION ops.ingest_indexes_set_aside(text, bigint),
  ops.ingest_indexes_rebuild(text), ops.ingest_index_set_aside_rebuilt() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_indexes_set_aside(text, bigint),
  ops.ingest_indexes_rebuild(text) TO rulem_etl;
