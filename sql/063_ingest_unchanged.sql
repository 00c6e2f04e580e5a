-- 063_ingest_unchanged: a re-delivered layer prepares and merges only what changed (issue 21).
--   A weekly refresh of 100,000 parcels of which 1 % changed was validated (every geometry
--   checked, repaired, tested against the plan boundary) and compared with its current
--   version in full to write 1,400 rows. Each feature a layer-wide ingest makes current now
--   keeps the MD5 of the row it was loaded from (ops.ingest_row_hash, revision 0030): every
--   staged field and the geometry as read, after a context that holds the ingest's settings
--   (the spec without its batch), the plan boundary's current versions and the area
--   tolerance, so a row counts as delivered before only under the same rules.
--   * ops.ingest_set_aside, after staging and before ops.ingest_prepare (061): rows whose hash
--     is a current version's (and appears once in the file) leave staging.b<batch> for
--     staging.b<batch>_same; prepare and apply see only the rest. When it sets rows aside the
--     caller runs apply without a scope (it closes nothing), since apply would close every
--     feature it did not see.
--   * ops.ingest_keep_hashes, after ops.ingest_apply: refuses a file whose changed rows carry
--     the key of a row set aside (a duplicated key, which prepare could not see); closes the
--     features of the layer that the file no longer holds (neither set aside nor prepared, as
--     apply does); records the hashes of the rows it made current; counts the set-aside rows
--     as unchanged in ops.batch.
-- ops.ingest_set_aside joins whole layers (every staged row with every current version):
-- right after a bulk load the planner still sees the layer as it was before it (the etl role
-- may not ANALYZE core tables) and picks index lookups per row, 100,000 of them;
-- enable_nestloop = off keeps it to hash and merge joins, the plan for any size.
-- ops.ingest_keep_hashes touches only the file's changed rows and the features it no longer
-- holds: index probes written so no plan can make them joins over the layer (scalar
-- subqueries, = ANY (ARRAY(...)), lateral subqueries kept by OFFSET 0); the one list it reads
-- in full is the layer's registry (which features the file no longer holds), hash-joined.
-- Only for layer-wide files keyed by a field or a natural key, with no column referencing
-- another layer (etl.ingest decides): there the outcome of a row depends on the row and the
-- context alone.

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

CREATE OR REPLACE FUNCTION ops.ingest_set_aside(p_spec jsonb) RETURNS bigint
LANGUAGE plpgsql SET jit = off SET work_mem = '128MB' SET enable_nestloop = off AS $$
DECLARE
  b      bigint := (p_spec ->> 'batch_id')::bigint;
  lyr    text := p_spec ->> 'layer';
  pa     integer := (p_spec ->> 'plan_area_id')::integer;
  stg    text := ops.ingest_table(b);
  hashes text := ops.ingest_table(b, 'hash');
  same   text := ops.ingest_table(b, 'same');
  cols   text;
  n      bigint;
BEGIN
  SELECT string_agg(format('s.%I', f ->> 'col'), ', ' ORDER BY ord) INTO cols
  FROM jsonb_array_elements(coalesce(p_spec -> 'fields', '[]')) WITH ORDINALITY x(f, ord);
  EXECUTE format(
    'CREATE UNLOGGED TABLE %1$s AS SELECT s._row, '
    '  decode(md5(coalesce(s._geom::bytea, ''\x''::bytea) || convert_to(%2$L || ROW(%3$s)::text, '
    '  ''UTF8'')), ''hex'') AS h FROM %4$s s',
    hashes, ops.ingest_row_context(p_spec), coalesce(cols, ''), stg);
  EXECUTE format(
    'CREATE UNLOGGED TABLE %1$s AS '
    'SELECT x._row, r.feature_id, r.version_id FROM ('
    '  SELECT _row, h, count(*) OVER (PARTITION BY h) AS n FROM %2$s) x '
    'JOIN ops.ingest_row_hash r ON r.layer = %3$L AND r.plan_area_id = %4$s AND r.row_hash = x.h '
    'JOIN core.%5$I t ON t.version_id = r.version_id AND t.valid_to IS NULL '
    'WHERE x.n = 1',
    same, hashes, lyr, pa, lyr);
  EXECUTE format('SELECT count(*) FROM %s', same) INTO n;
  IF n > 0 THEN
    EXECUTE format('DELETE FROM %1$s s USING %2$s a WHERE a._row = s._row', stg, same);
    EXECUTE format('CREATE INDEX ON %s (feature_id)', same);
    EXECUTE format('ANALYZE %s', same);
  END IF;
  RETURN n;
END $$;
COMMENT ON FUNCTION ops.ingest_set_aside(jsonb) IS
  'Ingest: hashes every staged row and moves the rows delivered exactly as their feature''s '
  'current version out of staging (into b<batch>_same); returns how many.';

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
  same     text := ops.ingest_table(b, 'same');
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
BEGIN
  IF p_set_aside > 0 THEN
    -- a changed row with the key of a row set aside: the key is in the file twice
    EXECUTE format(
      'SELECT p._key, p._fid FROM %1$s p '
      'WHERE EXISTS (SELECT 1 FROM %2$s s WHERE s.feature_id = %3$s) ORDER BY p._row LIMIT 1',
      prep, same, fid_of) INTO clash;
    IF clash IS NOT NULL THEN
      RAISE EXCEPTION 'feature %: feature key % appears more than once in the file; keys must be '
        'unique: correct or remove the copies', clash._fid, quote_literal(clash._key)
        USING ERRCODE = 'P0001';
    END IF;
    -- what apply (run without a scope) did not close: the features the file no longer holds.
    -- The file's features are the rows set aside and the prepared ones (bad ones included: a
    -- feature skipped as bad did not disappear). The candidates are the layer's registered
    -- features that are not among them (the narrow registry, not the layer's versions, is
    -- read); each candidate's current version, if any, is found by index and closed.
    EXECUTE format(
      'CREATE UNLOGGED TABLE %1$s AS SELECT feature_id AS id FROM %2$s '
      'UNION ALL SELECT %3$s FROM %4$s p',
      keep, same, fid_of, prep);
    EXECUTE format('CREATE INDEX ON %s (id)', keep);
    EXECUTE format('ANALYZE %s', keep);
    -- a hash anti-join of the two lists, whatever the planner thinks the registry holds; only
    -- for this statement (a function-wide setting reached the layer's statement triggers
    -- below too: the ledger queue's lookups of 200 closed parcels became a hash of 100,000)
    PERFORM set_config('enable_nestloop', 'off', true);
    EXECUTE format(
      'CREATE UNLOGGED TABLE %1$s AS SELECT f.feature_id AS id FROM core.feature f '
      'WHERE f.layer = %2$L AND f.plan_area_id = %3$s '
      '  AND NOT EXISTS (SELECT 1 FROM %4$s k WHERE k.id = f.feature_id)',
      gone, lyr, pa, keep);
    PERFORM set_config('enable_nestloop', nestloop, true);
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
  EXECUTE format(
    'INSERT INTO ops.ingest_row_hash (layer, plan_area_id, feature_id, version_id, row_hash) '
    'SELECT %1$L, %2$s, m._id, v.version_id, h.h FROM %3$s m '
    'JOIN %4$s h USING (_row) '
    'JOIN LATERAL (SELECT t.version_id FROM core.%5$I t WHERE t.%6$I = m._id '
    '  AND t.valid_to IS NULL OFFSET 0) v ON true',
    lyr, pa, good, hashes, lyr, id_col);
  IF p_set_aside > 0 THEN
    UPDATE ops.batch SET unchanged_count = coalesce(unchanged_count, 0) + p_set_aside,
                         closed_count = n_closed
    WHERE batch_id = b;
  END IF;
  RETURN jsonb_build_object('closed', n_closed, 'set_aside', p_set_aside);
END $$;
COMMENT ON FUNCTION ops.ingest_keep_hashes(jsonb, bigint) IS
  'Ingest: after the merge of a layer-wide file, closes what the file no longer holds when rows '
  'were set aside, and records the hash of the row behind each current version.';

REVOKE ALL ON FUNCTION ops.ingest_row_context(jsonb), ops.ingest_set_aside(jsonb),
  ops.ingest_keep_hashes(jsonb, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_row_context(jsonb), ops.ingest_set_aside(jsonb),
  ops.ingest_keep_hashes(jsonb, bigint) TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON ops.ingest_row_hash TO rulem_etl;
