-- 010_versioning: every layer table in core is versioned in transaction time.
--   INSERT       opens a first version (valid_from = now(), valid_to NULL), registering the
--                feature's natural key in core.feature when no id is given.
--   UPDATE       of content closes the current version and opens a new one (the old row is
--                kept, readable "as of" any earlier time); an UPDATE that only sets valid_to
--                retires the feature; an UPDATE that changes nothing writes nothing.
--   DELETE, TRUNCATE, and any change to a closed version are refused.
-- Who and which batch made or closed a version is recorded from current_user and
-- ops.current_batch(). Attribution to a batch cannot be forged: a version may name (as its
-- batch_id or closed_batch_id) only a batch its own transaction opened (ops.batch.opened_xact,
-- sql/012), whether the batch came from the setting rulem.batch_id or from the column; an
-- edit is attributed to its login alone (the statement checks below).

-- The insert and update triggers are generated per table (below) with the table's own row
-- type and column names, so a bulk merge pays for a few assignments per row, not for dynamic
-- SQL. This helper is the slow path for inserts that give no feature id.
CREATE OR REPLACE FUNCTION core.register_feature(p_layer text, p_plan_area_id integer,
                                                 p_key text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  fid   bigint;
  taken boolean;
  fkey  text := coalesce(p_key, 'auto:' || gen_random_uuid()::text);
BEGIN
  INSERT INTO core.feature (layer, plan_area_id, feature_key)
  VALUES (p_layer, p_plan_area_id, fkey)
  ON CONFLICT (layer, plan_area_id, feature_key) DO UPDATE SET feature_key = EXCLUDED.feature_key
  RETURNING feature_id INTO fid;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM core.%I WHERE %I = $1 AND valid_to IS NULL)',
                 p_layer, p_layer || '_id') USING fid INTO STRICT taken;
  IF taken THEN
    RAISE EXCEPTION 'core.%: a current feature with key % already exists (id %)', p_layer, fkey, fid
      USING ERRCODE = 'unique_violation', HINT = 'UPDATE the current version instead.';
  END IF;
  RETURN fid;
END $$;
COMMENT ON FUNCTION core.register_feature(text, integer, text) IS
  'The stable id for a natural key (created when new); refuses a key whose feature is current.';

DROP FUNCTION IF EXISTS core.version_insert() CASCADE;
DROP FUNCTION IF EXISTS core.version_update() CASCADE;

CREATE OR REPLACE FUNCTION core.version_refuse_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'core.% keeps every version: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'To retire a feature, close its current version: UPDATE core.' || TG_TABLE_NAME
                 || ' SET valid_to = now() WHERE ... AND valid_to IS NULL';
END $$;

COMMENT ON FUNCTION core.version_refuse_delete() IS
  'Trigger: refuses DELETE and TRUNCATE on versioned layers.';

-- Attach the triggers and the as-of function to every layer of the catalogue (ops.layer,
-- written from rulem_db/catalogue/layers.py), with the layer's natural key column.
DO $$
DECLARE
  t record;
  key_col text;
BEGIN
  FOR t IN
    SELECT tb.table_name, lc.natural_key
    FROM ops.layer lc
    JOIN information_schema.tables tb
      ON tb.table_schema = 'core' AND tb.table_name = lc.layer AND tb.table_type = 'BASE TABLE'
    ORDER BY tb.table_name
  LOOP
    key_col := t.natural_key;
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION core.%1$s_version_insert() RETURNS trigger
      LANGUAGE plpgsql AS $body$
      BEGIN
        IF NEW.valid_to IS NOT NULL THEN
          RAISE EXCEPTION 'core.%1$s: a new version cannot be inserted closed (valid_to must be NULL)'
            USING ERRCODE = 'check_violation';
        END IF;
        NEW.valid_from := now();
        NEW.created_by := current_user;
        NEW.batch_id := coalesce(NEW.batch_id, ops.current_batch());
        NEW.closed_by := NULL;
        NEW.closed_batch_id := NULL;
        IF NEW.%1$s_id IS NULL THEN
          NEW.%1$s_id := core.register_feature('%1$s', NEW.plan_area_id, NEW.%2$I::text);
        END IF;
        RETURN NEW;
      END $body$
    $f$, t.table_name, key_col);
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION core.%1$s_version_update() RETURNS trigger
      LANGUAGE plpgsql AS $body$
      DECLARE
        probe core.%1$s%%ROWTYPE;
      BEGIN
        IF OLD.valid_to IS NOT NULL THEN
          RAISE EXCEPTION 'core.%1$s: version %% is history (closed at %%) and cannot change',
            OLD.version_id, OLD.valid_to
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Change the current version (valid_to IS NULL) instead.';
        END IF;
        IF NEW.%1$s_id IS DISTINCT FROM OLD.%1$s_id OR NEW.version_id IS DISTINCT FROM OLD.version_id
           OR NEW.plan_area_id IS DISTINCT FROM OLD.plan_area_id THEN
          RAISE EXCEPTION 'core.%1$s: version_id, %1$s_id and plan_area_id identify a feature and cannot change'
            USING ERRCODE = 'check_violation';
        END IF;
        -- Compare content only: bookkeeping columns are set here, never by the caller.
        probe := NEW;
        probe.valid_from := OLD.valid_from;
        probe.valid_to := OLD.valid_to;
        probe.created_by := OLD.created_by;
        probe.batch_id := OLD.batch_id;
        probe.closed_by := OLD.closed_by;
        probe.closed_batch_id := OLD.closed_batch_id;
        IF NEW.valid_to IS NOT NULL THEN            -- retire the feature
          IF probe IS DISTINCT FROM OLD THEN
            RAISE EXCEPTION 'core.%1$s: closing a version and changing it at once is not allowed'
              USING ERRCODE = 'check_violation';
          END IF;
          probe.valid_to := greatest(now(), OLD.valid_from);
          probe.closed_by := current_user;
          probe.closed_batch_id := ops.current_batch();
          RETURN probe;
        END IF;
        IF probe IS NOT DISTINCT FROM OLD THEN      -- nothing changed: no new version
          RETURN NULL;
        END IF;
        probe.version_id := nextval(%3$L);          -- the new version, with the caller's content
        probe.valid_from := now();
        probe.batch_id := CASE WHEN NEW.batch_id IS DISTINCT FROM OLD.batch_id THEN NEW.batch_id
                               ELSE ops.current_batch() END;
        probe.created_by := current_user;
        -- the new version's references are checked by this UPDATE's statement trigger (with
        -- the feature's current version), not again by the nested INSERT's: this flag names
        -- the one version the nested check may skip
        PERFORM set_config('rulem.versioning', probe.version_id::text, true);
        INSERT INTO core.%1$s SELECT (probe).*;
        PERFORM set_config('rulem.versioning', '', true);
        probe := OLD;                               -- the old version stays, closed
        probe.valid_to := now();
        probe.closed_by := current_user;
        probe.closed_batch_id := ops.current_batch();
        RETURN probe;
      END $body$
    $f$, t.table_name, key_col, pg_get_serial_sequence(format('core.%I', t.table_name), 'version_id'));
    EXECUTE format('COMMENT ON FUNCTION core.%1$s_version_insert() IS %2$L', t.table_name,
                   'Trigger: opens a first version of a core.' || t.table_name || ' feature.');
    EXECUTE format('COMMENT ON FUNCTION core.%1$s_version_update() IS %2$L', t.table_name,
                   'Trigger: an UPDATE of core.' || t.table_name
                   || ' closes the current version and opens a new one; history cannot change.');
    EXECUTE format('DROP TRIGGER IF EXISTS version_insert ON core.%I', t.table_name);
    -- The trigger runs only for a row it would change: a bulk INSERT that already carries
    -- what it would set (a feature id, a batch, valid_from and created_by from their defaults,
    -- nothing closed) costs a condition per row instead of a PL/pgSQL call (0.3-0.5 s per
    -- 100,000 features); the rows stored are the same either way.
    EXECUTE format('CREATE TRIGGER version_insert BEFORE INSERT ON core.%1$I FOR EACH ROW '
                   'WHEN (NEW.valid_to IS NOT NULL OR NEW.%2$I IS NULL OR NEW.batch_id IS NULL '
                   'OR NEW.closed_by IS NOT NULL OR NEW.closed_batch_id IS NOT NULL '
                   'OR NEW.valid_from IS DISTINCT FROM now() '
                   'OR NEW.created_by IS DISTINCT FROM current_user) '
                   'EXECUTE FUNCTION core.%1$s_version_insert()', t.table_name,
                   t.table_name || '_id');
    EXECUTE format('DROP TRIGGER IF EXISTS version_update ON core.%I', t.table_name);
    EXECUTE format('CREATE TRIGGER version_update BEFORE UPDATE ON core.%1$I FOR EACH ROW '
                   'EXECUTE FUNCTION core.%1$s_version_update()', t.table_name);
    EXECUTE format('DROP TRIGGER IF EXISTS version_no_delete ON core.%I', t.table_name);
    EXECUTE format('CREATE TRIGGER version_no_delete BEFORE DELETE ON core.%I FOR EACH ROW '
                   'EXECUTE FUNCTION core.version_refuse_delete()', t.table_name);
    EXECUTE format('DROP TRIGGER IF EXISTS version_no_truncate ON core.%I', t.table_name);
    EXECUTE format('CREATE TRIGGER version_no_truncate BEFORE TRUNCATE ON core.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION core.version_refuse_delete()',
                   t.table_name);
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION core.%1$I_as_of(p_at timestamptz)
      RETURNS SETOF core.%1$I LANGUAGE sql STABLE AS
      'SELECT * FROM core.%1$I WHERE valid_from <= p_at AND (valid_to IS NULL OR valid_to > p_at)'
    $f$, t.table_name);
    EXECUTE format('COMMENT ON FUNCTION core.%I_as_of(timestamptz) IS %L', t.table_name,
                   'The versions of core.' || t.table_name || ' that were current at p_at.');
  END LOOP;
END $$;

-- References, checked once per statement instead of by foreign keys (revision 0010).
-- A foreign key costs one query per row: a third of a 100,000-feature ingest. These checks
-- give the same guarantees set-based, and more: a layer row's own <layer>_id must be a
-- feature of that layer and plan area in core.feature, each reference to another feature
-- (permit_id, delineation_id, from_permit_id, receiving_wetland_id, ...) a feature of the
-- layer it names, batch_id and closed_batch_id a batch in ops.batch, and a feature's
-- plan_area_id a plan area. What they reference can neither be deleted nor renumbered
-- (triggers on core.feature, core.plan_area and ops.batch below). They run with the writer's
-- own rights (the writing roles read what they reference) and cannot be turned off by the
-- roles that write: only the owner can disable a trigger. After a
-- restore (pg_restore loads the data before the triggers exist), core.reference_problems()
-- re-checks every stored row, as VALIDATE CONSTRAINT would.

-- The versioned tables: the base tables of core with a version_id, by name. The one list the
-- statements below generate triggers and checks for (and sql/063's row-hash trigger).
CREATE OR REPLACE FUNCTION core.versioned_tables() RETURNS SETOF text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT c.table_name::text FROM information_schema.columns c
  JOIN information_schema.tables t USING (table_schema, table_name)
  WHERE c.table_schema = 'core' AND c.column_name = 'version_id' AND t.table_type = 'BASE TABLE'
  ORDER BY 1
$$;
COMMENT ON FUNCTION core.versioned_tables() IS
  'The versioned tables of core (those with a version_id), by name.';

-- The reference columns of a versioned table: its own id and every other bigint column named
-- *_id but the batch columns, with the layer each names (the longest layer name the column
-- ends with: from_permit_id names a permit, receiving_wetland_id a wetland).
CREATE OR REPLACE FUNCTION core.reference_columns(p_table text)
RETURNS TABLE (column_name text, ref_layer text) LANGUAGE sql STABLE AS $$
  WITH layers AS (SELECT v AS layer FROM core.versioned_tables() v)
  SELECT c.column_name::text,
         (SELECT l.layer FROM layers l
          WHERE c.column_name = l.layer || '_id' OR c.column_name LIKE '%\_' || l.layer || '\_id'
          ORDER BY length(l.layer) DESC LIMIT 1)
  FROM information_schema.columns c
  WHERE c.table_schema = 'core' AND c.table_name = p_table AND c.data_type = 'bigint'
    AND c.column_name LIKE '%\_id' AND c.column_name NOT IN ('version_id', 'batch_id',
                                                              'closed_batch_id')
  ORDER BY c.ordinal_position
$$;
COMMENT ON FUNCTION core.reference_columns(text) IS
  'The columns of core.<p_table> that name a feature (its own id first), with the layer each '
  'names; what the reference checks check.';

-- "Not found" for one reference, as SQL: NOT EXISTS (a join, planned over the whole table),
-- or, when p_probe, a scalar subquery, which PostgreSQL never turns into a join: one index
-- probe per row. The probe's WHERE is p_key alone (the referenced table's primary key) and
-- p_cond is evaluated on the row it finds: with the layer and plan area in its WHERE too, a
-- planner that sees core.feature as nearly empty (a first load, in the transaction that
-- registered its keys) may probe uq_feature_key by layer and plan area and filter on the id,
-- reading every key of the layer once per row (10.4 s for a first load of 10,000 parcels).
CREATE OR REPLACE FUNCTION core.reference_missing(p_from text, p_key text, p_cond text,
                                                  p_probe boolean)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_probe
    THEN format('NOT coalesce((SELECT %s FROM %s WHERE %s), false)',
                coalesce(p_cond, 'true'), p_from, p_key)
    ELSE format('NOT EXISTS (SELECT 1 FROM %s WHERE %s%s)',
                p_from, p_key, coalesce(' AND ' || p_cond, ''))
  END
$$;
COMMENT ON FUNCTION core.reference_missing(text, text, text, boolean) IS
  'The SQL condition "this reference does not resolve" of core.reference_check_sql: a join, or '
  'one probe by primary key per row.';

-- The SQL of one table's check: rows of p_rows (a table or transition table, alias n) whose
-- references do not resolve, as (version_id, column_name, value, problem). p_per_value: a
-- statement's check probes each distinct value of a reference to another feature or a batch
-- once (reporting one of its versions), the audit every stored row. p_probe: each row (or
-- value) looks its reference up by index, one probe each, instead of a join the planner may
-- make a hash of the whole registry: a statement that writes a few rows (a re-delivery's
-- 1,400 of 100,000 parcels) then costs what it writes, not what the layer holds (docs/ingest.md,
-- "Against the DBA's route, and a re-delivery"; right after a bulk load the planner still
-- sees the layer as it was, so it cannot be left to choose).
DROP FUNCTION IF EXISTS core.reference_check_sql(text, text);
DROP FUNCTION IF EXISTS core.reference_check_sql(text, text, boolean);
CREATE OR REPLACE FUNCTION core.reference_check_sql(p_table text, p_rows text,
                                                    p_per_value boolean DEFAULT false,
                                                    p_probe boolean DEFAULT false)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
  b text;
  parts text[] := ARRAY[]::text[];
  -- the rows (version, value) of one reference column, %1$I: per row, or per distinct value
  src text := CASE WHEN p_per_value
    THEN '(SELECT min(n.version_id) AS version_id, n.%1$I AS value FROM ' || p_rows
         || ' n WHERE n.%1$I IS NOT NULL GROUP BY n.%1$I)'
    ELSE '(SELECT n.version_id, n.%1$I AS value FROM ' || p_rows
         || ' n WHERE n.%1$I IS NOT NULL)' END;
  cond text;
BEGIN
  FOR r IN SELECT * FROM core.reference_columns(p_table) LOOP
    IF r.column_name = p_table || '_id' THEN
      parts := parts || format(
        'SELECT n.version_id, %1$L::text AS column_name, n.%1$I AS value, %2$L::text AS problem '
        'FROM %3$s n WHERE %4$s',
        r.column_name, 'is not a ' || p_table || ' of this plan area in core.feature', p_rows,
        core.reference_missing('core.feature f', format('f.feature_id = n.%I', r.column_name),
                               format('f.layer = %L AND f.plan_area_id = n.plan_area_id',
                                      p_table), p_probe));
    ELSE
      -- references to other features and batches take few distinct values (a file's permits,
      -- its batch): each value is probed once, not once per row (0.1 s per 100,000 rows)
      cond := CASE WHEN r.ref_layer IS NOT NULL THEN format('f.layer = %L', r.ref_layer) END;
      parts := parts || format(
        'SELECT n.version_id, %1$L::text AS column_name, n.value, %2$L::text AS problem '
        'FROM %3$s n WHERE %4$s',
        r.column_name, 'is not a ' || coalesce(r.ref_layer, 'feature') || ' in core.feature',
        format(src, r.column_name),
        core.reference_missing('core.feature f', 'f.feature_id = n.value', cond, p_probe));
    END IF;
  END LOOP;
  FOREACH b IN ARRAY ARRAY['batch_id', 'closed_batch_id'] LOOP
    parts := parts || format(
      'SELECT n.version_id, %1$L::text AS column_name, n.value, '
      '''is not a batch in ops.batch''::text AS problem FROM %2$s n WHERE %3$s',
      b, format(src, b),
      core.reference_missing('ops.batch b', 'b.batch_id = n.value', NULL, p_probe));
  END LOOP;
  RETURN array_to_string(parts, ' UNION ALL ');
END $$;
COMMENT ON FUNCTION core.reference_check_sql(text, text, boolean, boolean) IS
  'The SQL that lists the rows of a versioned table (or its transition table) whose references '
  'do not resolve.';

-- Every stored row whose references do not resolve (empty when the data are sound). What an
-- auditor runs after a restore, or at any time, to see that the checks held.
CREATE OR REPLACE FUNCTION core.reference_problems()
RETURNS TABLE (layer text, version_id bigint, column_name text, value bigint, problem text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT v AS name FROM core.versioned_tables() v LOOP
    RETURN QUERY EXECUTE format('SELECT %L::text, x.* FROM (%s) x', t.name,
                                core.reference_check_sql(t.name, format('core.%I', t.name)));
  END LOOP;
  RETURN QUERY
    SELECT 'feature', NULL::bigint, 'plan_area_id', f.feature_id,
           'feature ' || f.feature_id || ' names no plan area in core.plan_area'
    FROM core.feature f
    WHERE NOT EXISTS (SELECT 1 FROM core.plan_area p WHERE p.plan_area_id = f.plan_area_id);
END $$;
COMMENT ON FUNCTION core.reference_problems() IS
  'Audit: every stored version (and registry row) whose references do not resolve; empty when '
  'the data are sound. Run it after a restore, as VALIDATE CONSTRAINT would.';

-- Refusals of what would leave a reference dangling.
CREATE OR REPLACE FUNCTION core.refuse_referenced_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%.%: % would break the references to it (versions keep their feature, '
    'plan area and batch for good)', TG_TABLE_SCHEMA, TG_TABLE_NAME,
    CASE WHEN TG_OP = 'UPDATE' THEN 'changing its identity' ELSE TG_OP END
    USING ERRCODE = 'foreign_key_violation',
          HINT = 'Registry, plan area and batch rows are permanent; add new ones instead.';
END $$;
COMMENT ON FUNCTION core.refuse_referenced_change() IS
  'Trigger: refuses deleting, truncating or renumbering the rows versions refer to '
  '(core.feature, core.plan_area, ops.batch).';

DROP TRIGGER IF EXISTS feature_no_delete ON core.feature;
CREATE TRIGGER feature_no_delete BEFORE DELETE ON core.feature
  FOR EACH ROW EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS feature_no_truncate ON core.feature;
CREATE TRIGGER feature_no_truncate BEFORE TRUNCATE ON core.feature
  FOR EACH STATEMENT EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS feature_identity ON core.feature;
CREATE TRIGGER feature_identity BEFORE UPDATE ON core.feature FOR EACH ROW
  WHEN (OLD.feature_id IS DISTINCT FROM NEW.feature_id OR OLD.layer IS DISTINCT FROM NEW.layer
        OR OLD.plan_area_id IS DISTINCT FROM NEW.plan_area_id
        OR OLD.feature_key IS DISTINCT FROM NEW.feature_key)
  EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS plan_area_no_delete ON core.plan_area;
CREATE TRIGGER plan_area_no_delete BEFORE DELETE ON core.plan_area
  FOR EACH ROW EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS plan_area_no_truncate ON core.plan_area;
CREATE TRIGGER plan_area_no_truncate BEFORE TRUNCATE ON core.plan_area
  FOR EACH STATEMENT EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS plan_area_identity ON core.plan_area;
CREATE TRIGGER plan_area_identity BEFORE UPDATE ON core.plan_area FOR EACH ROW
  WHEN (OLD.plan_area_id IS DISTINCT FROM NEW.plan_area_id)
  EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS batch_no_delete ON ops.batch;
CREATE TRIGGER batch_no_delete BEFORE DELETE ON ops.batch
  FOR EACH ROW EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS batch_no_truncate ON ops.batch;
CREATE TRIGGER batch_no_truncate BEFORE TRUNCATE ON ops.batch
  FOR EACH STATEMENT EXECUTE FUNCTION core.refuse_referenced_change();
DROP TRIGGER IF EXISTS batch_identity ON ops.batch;
CREATE TRIGGER batch_identity BEFORE UPDATE ON ops.batch FOR EACH ROW
  WHEN (OLD.batch_id IS DISTINCT FROM NEW.batch_id)
  EXECUTE FUNCTION core.refuse_referenced_change();

-- The registry's plan area, once per statement.
CREATE OR REPLACE FUNCTION core.feature_check_plan_area() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  -- each distinct plan area once (a bulk registration names one: 100,000 probes cost 0.2 s)
  SELECT n.plan_area_id INTO bad FROM (SELECT DISTINCT plan_area_id FROM new_rows) n
  WHERE NOT EXISTS (SELECT 1 FROM core.plan_area p WHERE p.plan_area_id = n.plan_area_id)
  LIMIT 1;
  IF FOUND THEN
    SELECT n.feature_key, n.plan_area_id INTO bad FROM new_rows n
    WHERE n.plan_area_id IS NOT DISTINCT FROM bad.plan_area_id LIMIT 1;
    RAISE EXCEPTION 'core.feature: plan_area_id % of feature key % is not a plan area in '
      'core.plan_area', bad.plan_area_id, bad.feature_key
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.feature_check_plan_area() IS
  'Trigger: every registry row a statement adds names a plan area (once per statement).';
DROP TRIGGER IF EXISTS feature_check_plan_area ON core.feature;
CREATE TRIGGER feature_check_plan_area AFTER INSERT ON core.feature
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION core.feature_check_plan_area();

-- Whether a statement's inserted rows are the one version the versioning trigger of an UPDATE
-- opened (and flagged in rulem.versioning): the statement triggers of an INSERT leave such a
-- version to the UPDATE's own (which sees both the closed and the new version). The flag is
-- a setting any session can set, so it is never taken on its word: the version must also be
-- the second current version of its feature, which only the versioning trigger makes and
-- which cannot outlive the statement that made it (the deferred unique (<layer>_id,
-- valid_to) refuses to commit two current versions, and the only way to close one is an
-- UPDATE, whose statement triggers then check and queue both). A forged flag on any other
-- INSERT skips nothing. p_versions: the statement's version ids (one, or it is no such
-- version).
DO $do$
DECLARE
  t record;
  branches text := '';
BEGIN
  FOR t IN SELECT v AS name FROM core.versioned_tables() v LOOP
    branches := branches || format($b$
    WHEN %1$L THEN
      RETURN EXISTS (SELECT 1 FROM core.%1$I n
                     JOIN core.%1$I c ON c.%2$I = n.%2$I AND c.valid_to IS NULL
                                     AND c.version_id <> n.version_id
                     WHERE n.version_id = p_versions[1]);$b$, t.name, t.name || '_id');
  END LOOP;
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION core.versioning_nested(p_table text, p_versions bigint[])
    RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $body$
    BEGIN
      IF pg_trigger_depth() < 2 OR cardinality(p_versions) IS DISTINCT FROM 1
         OR p_versions[1]::text IS DISTINCT FROM current_setting('rulem.versioning', true) THEN
        RETURN false;
      END IF;
      CASE p_table %s
      ELSE RETURN false;
      END CASE;
    END $body$$f$, branches);
END $do$;
COMMENT ON FUNCTION core.versioning_nested(text, bigint[]) IS
  'Whether the versions an INSERT statement wrote are the one version the versioning trigger '
  'of an UPDATE opened (flagged, and the second current version of its feature): the '
  'statement triggers of that INSERT leave it to the UPDATE''s.';

-- A batch a statement attributes versions to must be one this transaction opened
-- (ops.batch.opened_xact, stamped by sql/012, and started within it): a session setting or a
-- column given by any login can name any batch, the transaction that opened one cannot be
-- forged.
CREATE OR REPLACE FUNCTION core.batch_of_this_transaction(p_batch_id bigint) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM ops.batch b
                 WHERE b.batch_id = p_batch_id AND b.started_at >= now()
                   AND b.opened_xact = pg_current_xact_id_if_assigned()::text::bigint)
$$;
COMMENT ON FUNCTION core.batch_of_this_transaction(bigint) IS
  'Whether a batch was opened by the current transaction: the only batch a version written '
  'now may be attributed to.';

-- Per versioned table: one check per INSERT statement (its rows) and per UPDATE statement
-- (the versions it closed, and the current versions of their features, which the versioning
-- trigger opened with the caller's content). A statement of up to 10,000 rows probes each
-- reference by index (p_probe above); a larger one joins, which is cheaper per row, unless it
-- is an UPDATE of up to a tenth of the layer (below). The
-- INSERT nested in the versioning trigger is left to the UPDATE's check (core.versioning_nested:
-- the flag, verified). The check runs with the writer's own rights (not SECURITY DEFINER):
-- it reads the session flag rulem.versioning, which any session can set.
-- Attribution: the batches an INSERT's versions name (batch_id), and those an UPDATE closed
-- versions with (closed_batch_id) or opened the new ones with (batch_id), are batches this
-- transaction opened (core.batch_of_this_transaction), once per distinct batch: OFFSET 0
-- keeps the planner from pushing that test below the grouping into the scan of the rows,
-- where it ran once per row (0.43 s of a first load of 100,000 parcels, 4 s of 1,000,000).
-- The current version of each feature an UPDATE changed is found by one index probe each
-- (OFFSET 0): joined, a planner that sees the layer as it was before a bulk load sorted all
-- its current versions (0.55 s per statement of a state's re-delivery). They are found once
-- (cur_ids) and read by id for the attribution and, up to 10,000 rows, for each reference:
-- found again for each, they were four probes per closed version (the check took 0.5 s of
-- closing a state's 10,000 changed parcels, 0.12-0.18 s now: a closing leaves no current
-- version to read). An UPDATE of up to a tenth of the layer (its planner estimate) probes
-- too: the joined check hashes the whole registry, and closing 20,000 of a state's 1,000,000
-- parcels took 3.5 s with it, 2.5 s probing (40,000: 5.5 s and 4.5 s; 100,000 about even;
-- 20,000 of a county's 100,000: 1.7 s and 1.5 s).
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT v AS name FROM core.versioned_tables() v LOOP
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION core.%1$s_check_references() RETURNS trigger
      LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $body$
      DECLARE
        bad record;
        n bigint := (SELECT count(*) FROM new_rows);
        cur_ids bigint[];  -- an UPDATE's current versions of the features it changed
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF n = 1 AND pg_trigger_depth() > 1
             AND core.versioning_nested(%1$L, ARRAY(SELECT version_id FROM new_rows)) THEN
            RETURN NULL;
          END IF;
          IF n <= 10000 THEN
            SELECT * INTO bad FROM (%4$s) x LIMIT 1;
          ELSE
            SELECT * INTO bad FROM (%2$s) x LIMIT 1;
          END IF;
        ELSE
          cur_ids := ARRAY(SELECT c.version_id FROM new_rows o CROSS JOIN LATERAL (
                             SELECT c.version_id FROM core.%1$I c
                             WHERE c.%6$I = o.%6$I AND c.valid_to IS NULL OFFSET 0) c);
          IF n <= 10000 OR n <= (SELECT c.reltuples / 10 FROM pg_class c
                                 WHERE c.oid = 'core.%1$s'::regclass) THEN
            SELECT * INTO bad FROM (%5$s) x LIMIT 1;
          ELSE
            SELECT * INTO bad FROM (%3$s) x LIMIT 1;
          END IF;
        END IF;
        IF FOUND THEN
          RAISE EXCEPTION 'core.%1$s: version %% has %% = %%, which %%', bad.version_id,
            bad.column_name, bad.value, bad.problem
            USING ERRCODE = 'foreign_key_violation';
        END IF;
        IF TG_OP = 'INSERT' THEN
          SELECT a.version_id, 'batch_id' AS column_name, a.value INTO bad
          FROM (SELECT min(version_id) AS version_id, batch_id AS value FROM new_rows
                WHERE batch_id IS NOT NULL GROUP BY batch_id OFFSET 0) a
          WHERE NOT core.batch_of_this_transaction(a.value) LIMIT 1;
        ELSE
          SELECT a.version_id, a.column_name, a.value INTO bad
          FROM (SELECT min(o.version_id) AS version_id, 'closed_batch_id' AS column_name,
                       o.closed_batch_id AS value
                FROM new_rows o WHERE o.closed_batch_id IS NOT NULL GROUP BY o.closed_batch_id
                UNION ALL
                SELECT min(cur.version_id), 'batch_id', cur.batch_id
                FROM core.%1$I cur WHERE cur.version_id = ANY (cur_ids)
                  AND cur.batch_id IS NOT NULL GROUP BY cur.batch_id OFFSET 0) a
          WHERE NOT core.batch_of_this_transaction(a.value) LIMIT 1;
        END IF;
        IF FOUND THEN
          RAISE EXCEPTION 'core.%1$s: version %% has %% = %%, a batch this transaction did not '
            'open; only the ingest that opened a batch attributes versions to it (an edit is '
            'recorded with its login)', bad.version_id, bad.column_name, bad.value
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
      END $body$
    $f$, t.name,
      core.reference_check_sql(t.name, 'new_rows', true),
      core.reference_check_sql(t.name, format(
        '(SELECT cur.* FROM new_rows o JOIN core.%1$I cur ON cur.%2$I = o.%2$I '
        'AND cur.valid_to IS NULL UNION ALL SELECT o.* FROM new_rows o)', t.name, t.name || '_id'),
        true),
      core.reference_check_sql(t.name, 'new_rows', true, true),
      -- the current versions found once (cur_ids: one index probe per closed version, the
      -- lateral subquery kept a subquery by OFFSET 0), read by id for each reference
      core.reference_check_sql(t.name, format(
        '(SELECT c.* FROM core.%1$I c WHERE c.version_id = ANY (cur_ids) '
        'UNION ALL SELECT o.* FROM new_rows o)', t.name),
        true, true),
      t.name || '_id');
    EXECUTE format('COMMENT ON FUNCTION core.%1$s_check_references() IS %2$L', t.name,
                   'Trigger: the references of the core.' || t.name || ' versions a statement '
                   || 'writes resolve (once per statement, in place of foreign keys).');
    EXECUTE format('DROP TRIGGER IF EXISTS references_insert ON core.%I', t.name);
    EXECUTE format('CREATE TRIGGER references_insert AFTER INSERT ON core.%1$I '
                   'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION core.%1$s_check_references()', t.name);
    EXECUTE format('DROP TRIGGER IF EXISTS references_update ON core.%I', t.name);
    EXECUTE format('CREATE TRIGGER references_update AFTER UPDATE ON core.%1$I '
                   'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION core.%1$s_check_references()', t.name);
  END LOOP;
END $$;

REVOKE ALL ON FUNCTION core.versioned_tables(), core.reference_columns(text),
  core.reference_missing(text, text, text, boolean),
  core.reference_check_sql(text, text, boolean, boolean),
  core.reference_problems(), core.versioning_nested(text, bigint[]),
  core.batch_of_this_transaction(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION core.reference_problems() TO rulem_etl;
GRANT EXECUTE ON FUNCTION core.versioning_nested(text, bigint[]),
  core.batch_of_this_transaction(bigint) TO rulem_etl, rulem_editor;
