-- 063_ingest_unchanged: a re-delivered layer prepares and merges only what changed
-- (docs/ingest.md).
--   A weekly refresh of 100,000 parcels of which 1 % changed was read into staging, validated
--   (every geometry checked, repaired, tested against the plan boundary) and compared with its
--   current version in full to write 1,400 rows. Each feature a layer-wide ingest makes current
--   now keeps the hash of the row it was loaded from (ops.ingest_row_hash, revision 0030):
--   row_hash = the MD5 of the ingest's context (ops.ingest_row_context: the spec without its
--   batch, the plan boundary's current versions, the area tolerance; 16 bytes) followed by the
--   row's digest (16 bytes), which the reader makes as it reads (etl.row_digest: the WKB and
--   every field as staged; the one definition, never recomputed here). So a row counts as
--   delivered before only under the same rules.
--   * ops.ingest_current_hashes, before reading: the layer's current versions' hashes, packed,
--     for the reader (etl.redelivery), which sets aside the rows whose digest is one of them,
--     and the current features without a hash. What reaches the database of the rows set
--     aside is their number (ops.batch.unchanged_count, written before the merge) and the
--     features whose rows were not set aside (staging.b<batch>_unseen: about what changed,
--     not the layer's size); the rest of the file is staged with its digests
--     (staging.b<batch>_hash). When rows were set aside the caller runs apply without a scope
--     (it closes nothing), since apply would close every feature it did not see.
--   * ops.ingest_keep_hashes, after ops.ingest_apply: refuses a file whose changed rows carry
--     the key of a row set aside (a duplicated key, which prepare could not see); closes the
--     features of the layer that the file no longer holds (unseen and not prepared); records
--     the hashes of the rows it made current.
-- Only for layer-wide files keyed by a field or a natural key, with no column referencing
-- another layer (etl.merge decides): there the outcome of a row depends on the row and the
-- context alone.
-- ops.ingest_keep_hashes touches only the file's changed rows and the features it no longer
-- holds: index probes written so no plan can make them joins over the layer (scalar
-- subqueries, = ANY (ARRAY(...)), lateral subqueries kept by OFFSET 0). Sending the rows set
-- aside instead (988,000 of a state's 1,000,000 parcels) took 0.8 s, and hashing them against
-- the prepared rows and the layer's registry 0.55 s more.

CREATE OR REPLACE FUNCTION ops.ingest_row_context(p_spec jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT md5((p_spec - 'batch_id' - 'skip_bad')::text
             || '|' || coalesce((SELECT string_agg(c.version_id::text, ',' ORDER BY c.version_id)
                                 FROM core.cwmp_area c
                                 WHERE c.valid_to IS NULL
                                   AND c.plan_area_id = (p_spec ->> 'plan_area_id')::integer), '')
             || '|' || coalesce(core.param_num((p_spec ->> 'plan_area_id')::integer,
                                               'area_tolerance_m2')::text, ''))
$$;
COMMENT ON FUNCTION ops.ingest_row_context(jsonb) IS
  'Ingest: what a delivered row''s outcome depends on besides the row (settings, plan boundary, '
  'area tolerance), hashed; part of every row hash of ops.ingest_row_hash.';

DROP FUNCTION IF EXISTS ops.ingest_set_aside(jsonb);
-- packed (bytea values: the hashes, then the feature ids as 8-byte integers, in the same
-- order, then the current features without a hash: aggregates of one input stream, unsorted),
-- so that the driver makes three Python objects, not 300,000;
-- hash joined whatever the planner thinks the layer holds right after a bulk load.
-- OUT columns cannot change in place: an earlier version (with the versions' ids, without the
-- unhashed features) is dropped once.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'ops' AND p.proname = 'ingest_current_hashes'
               AND (NOT 'unhashed' = ANY (coalesce(p.proargnames, '{}'))
                    OR 'version_ids' = ANY (coalesce(p.proargnames, '{}')))) THEN
    DROP FUNCTION ops.ingest_current_hashes(text, integer);
  END IF;
END $$;
CREATE OR REPLACE FUNCTION ops.ingest_current_hashes(p_layer text, p_plan_area_id integer,
  OUT hashes bytea, OUT feature_ids bytea, OUT unhashed bytea)
LANGUAGE plpgsql STABLE SET jit = off SET work_mem = '128MB' SET enable_nestloop = off AS $$
DECLARE
  hashed  bigint;
  current bigint;
BEGIN
  -- Every hash names its feature's current version (the hashes of closed versions go with
  -- the UPDATE that closes them: ops.ingest_forget_closed_hashes below), so when the layer
  -- has as many current features as hashes, each has one: the hashes alone, with the count,
  -- in one statement (one snapshot). 0.26 s of a state's parcels where joining them with the
  -- current versions took 1.5-1.9 s.
  EXECUTE format(
    'SELECT string_agg(r.row_hash, ''''::bytea), string_agg(int8send(r.feature_id), ''''::bytea), '
    '       count(*), (SELECT count(*) FROM core.%1$I t '
    '                  WHERE t.valid_to IS NULL AND t.plan_area_id = $2) '
    'FROM ops.ingest_row_hash r '
    'WHERE r.layer = $1 AND r.plan_area_id = $2 AND length(r.row_hash) = 32',
    p_layer) INTO hashes, feature_ids, hashed, current USING p_layer, p_plan_area_id;
  IF hashed = current THEN
    RETURN;
  END IF;
  -- some current features have no hash (written by an edit, a file of another kind, or
  -- before hashes were kept): those, with the hashes of the others, by the join
  EXECUTE format(
    'SELECT string_agg(r.row_hash, ''''::bytea), '
    '       string_agg(int8send(r.feature_id), ''''::bytea), '
    '       string_agg(int8send(t.%2$I), ''''::bytea) FILTER (WHERE r.row_hash IS NULL) '
    'FROM core.%1$I t LEFT JOIN ops.ingest_row_hash r ON r.version_id = t.version_id '
    '  AND r.layer = $1 AND r.plan_area_id = $2 AND length(r.row_hash) = 32 '
    'WHERE t.valid_to IS NULL AND t.plan_area_id = $2',
    p_layer, p_layer || '_id') INTO hashes, feature_ids, unhashed
    USING p_layer, p_plan_area_id;
END $$;
COMMENT ON FUNCTION ops.ingest_current_hashes(text, integer) IS
  'Ingest: the row hashes of a layer''s current versions, with their features, and the '
  'current features without one, packed for the reader that sets aside the rows delivered as '
  'before (etl.redelivery).';

CREATE OR REPLACE FUNCTION ops.ingest_keep_hashes(p_spec jsonb, p_set_aside bigint)
RETURNS jsonb LANGUAGE plpgsql SET jit = off SET work_mem = '128MB'
AS $$
DECLARE
  b        bigint := (p_spec ->> 'batch_id')::bigint;
  lyr      text := p_spec ->> 'layer';
  id_col   text := (p_spec ->> 'layer') || '_id';
  pa       integer := (p_spec ->> 'plan_area_id')::integer;
  prep     text := ops.ingest_table(b, 'prep');
  prob     text := ops.ingest_table(b, 'problem');
  hashes   text := ops.ingest_table(b, 'hash');
  unseen   text := ops.ingest_table(b, 'unseen');
  keep     text := ops.ingest_table(b, 'kept');
  gone     text := ops.ingest_table(b, 'gone');
  good     text := ops.ingest_table(b, 'match');
  -- the feature registered for a prepared row's key: one index probe per row (a scalar
  -- subquery is never made a join over the whole registry)
  fid_of   text := format('(SELECT f.feature_id FROM core.feature f WHERE f.layer = %L '
                          'AND f.plan_area_id = %s AND f.feature_key = p._key)', lyr, pa);
  clash    record;
  n_closed bigint := 0;
  nestloop text := current_setting('enable_nestloop');
  many     boolean;
BEGIN
  IF p_set_aside > 0 THEN
    -- The prepared rows' features (bad ones included: a feature skipped as bad did not
    -- disappear): a good row's is in the match table (apply registered a new key's), a bad
    -- row's is looked up by its key, one index probe (two lookups per row were 0.2 s of a
    -- state's 12,000 changed rows).
    EXECUTE format(
      'CREATE UNLOGGED TABLE %1$s AS SELECT p._row, p._key, p._fid, coalesce(m._id, %2$s) AS id '
      'FROM %3$s p LEFT JOIN %4$s m ON m._row = p._row', keep, fid_of, prep, good);
    -- a changed row keyed to a feature whose row was set aside: the key is in the file twice.
    -- The features set aside are those current before this batch that the reader did not
    -- list as unseen; current before this batch: current and not opened by it, or closed by
    -- it (at now(), the transaction's time). Index probes for each prepared row.
    EXECUTE format(
      'SELECT k._key, k._fid FROM %1$s k '
      'WHERE NOT EXISTS (SELECT 1 FROM %2$s u WHERE u.feature_id = k.id) '
      '  AND EXISTS (SELECT 1 FROM core.%3$I v WHERE v.%4$I = k.id AND (v.valid_to = now() '
      '              OR (v.valid_to IS NULL AND v.valid_from < now()))) '
      'ORDER BY k._row LIMIT 1',
      keep, unseen, lyr, id_col) INTO clash;
    IF clash IS NOT NULL THEN
      RAISE EXCEPTION 'feature %: feature key % appears more than once in the file; keys must be '
        'unique: correct or remove the copies', clash._fid, quote_literal(clash._key)
        USING ERRCODE = 'P0001';
    END IF;
    -- what apply (run without a scope) did not close: the features the file no longer holds,
    -- unseen and not prepared; each one's current version is found by index and closed.
    EXECUTE format(
      'CREATE UNLOGGED TABLE %1$s AS SELECT u.feature_id AS id FROM %2$s u '
      'WHERE NOT EXISTS (SELECT 1 FROM %3$s k WHERE k.id = u.feature_id)',
      gone, unseen, keep);
    EXECUTE format('ANALYZE %s', gone);
    -- = ANY (ARRAY(...)): index scans of the listed versions, whatever joins are allowed
    EXECUTE format(
      'UPDATE core.%1$I t SET valid_to = now() WHERE t.version_id = ANY (ARRAY('
      '  SELECT (SELECT v.version_id FROM core.%1$I v WHERE v.%2$I = g.id '
      '          AND v.valid_to IS NULL) FROM %3$s g))',
      lyr, id_col, gone);
    GET DIAGNOSTICS n_closed = ROW_COUNT;
    -- the hashes: those of the rows set aside stand; the file's other features' and those of
    -- the features it no longer holds go (replaced below for the rows made current)
    EXECUTE format(
      'DELETE FROM ops.ingest_row_hash r WHERE r.layer = %1$L AND r.plan_area_id = %2$s '
      '  AND r.feature_id = ANY (ARRAY(SELECT id FROM %3$s UNION ALL SELECT _id FROM %4$s))',
      lyr, pa, gone, good);
  ELSE
    -- every hash of the layer is replaced by the hash of the row that made the feature's
    -- current version (errors skipped: not loaded)
    EXECUTE format('DELETE FROM ops.ingest_row_hash r WHERE r.layer = %1$L '
                   'AND r.plan_area_id = %2$s', lyr, pa);
  END IF;
  -- Each row's current version: a few rows (a re-delivery's changes) by one index probe each;
  -- many (a first load) in one hash join with the layer's current versions, for this
  -- statement only (docs/ingest.md, "Where each guarantee lives, and what it costs")
  EXECUTE format('SELECT NOT ops.ingest_few(%s, count(*)) FROM %s', b, good) INTO many;
  IF many THEN
    PERFORM set_config('enable_nestloop', 'off', true);
  END IF;
  EXECUTE format(
    'INSERT INTO ops.ingest_row_hash (layer, plan_area_id, feature_id, version_id, row_hash) '
    'SELECT %1$L, %2$s, m._id, v.version_id, %7$L::bytea || h.h FROM %3$s m '
    'JOIN %4$s h USING (_row) ' || CASE WHEN many THEN
    'JOIN core.%5$I v ON v.%6$I = m._id AND v.valid_to IS NULL'
    ELSE
    'JOIN LATERAL (SELECT t.version_id FROM core.%5$I t WHERE t.%6$I = m._id '
    '  AND t.valid_to IS NULL OFFSET 0) v ON true' END,
    lyr, pa, good, hashes, lyr, id_col, decode(ops.ingest_row_context(p_spec), 'hex'));
  PERFORM set_config('enable_nestloop', nestloop, true);
  IF p_set_aside > 0 THEN  -- the rows set aside are in unchanged_count already
    UPDATE ops.batch SET closed_count = n_closed WHERE batch_id = b;
  END IF;
  RETURN jsonb_build_object('closed', n_closed, 'set_aside', p_set_aside);
END $$;
COMMENT ON FUNCTION ops.ingest_keep_hashes(jsonb, bigint) IS
  'Ingest: after the merge of a layer-wide file, closes what the file no longer holds when rows '
  'were set aside, and records the hash of the row behind each current version.';

-- A version closed, by any statement (an ingest, an edit, the versioning of a change), takes
-- its feature's hash with it: a hash counts only while the version it names is current, and
-- ops.ingest_current_hashes relies on every stored hash naming one. SECURITY DEFINER: the
-- editors who close versions may not write ops.ingest_row_hash. One index probe per closed
-- version (= ANY (ARRAY(...))); a feature has at most one hash, of its current version.
CREATE OR REPLACE FUNCTION ops.ingest_forget_closed_hashes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('DELETE FROM ops.ingest_row_hash h WHERE h.feature_id = ANY (ARRAY('
                 'SELECT c.%I FROM closed_rows c WHERE c.valid_to IS NOT NULL))',
                 TG_TABLE_NAME || '_id');
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.ingest_forget_closed_hashes() IS
  'Trigger: the row hashes of the versions an UPDATE closed are deleted (a hash counts while '
  'its version is current).';
REVOKE ALL ON FUNCTION ops.ingest_forget_closed_hashes() FROM PUBLIC;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT v AS name FROM core.versioned_tables() v LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS row_hash_forget ON core.%I', t.name);
    EXECUTE format('CREATE TRIGGER row_hash_forget AFTER UPDATE ON core.%I '
                   'REFERENCING NEW TABLE AS closed_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.ingest_forget_closed_hashes()', t.name);
  END LOOP;
END $$;

REVOKE ALL ON FUNCTION ops.ingest_row_context(jsonb), ops.ingest_current_hashes(text, integer),
  ops.ingest_keep_hashes(jsonb, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_row_context(jsonb), ops.ingest_current_hashes(text, integer),
  ops.ingest_keep_hashes(jsonb, bigint) TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON ops.ingest_row_hash TO rulem_etl;
