-- 010_versioning: every layer table in core is versioned in transaction time.
--   INSERT       opens a first version (valid_from = now(), valid_to NULL), registering the
--                feature's natural key in core.feature when no id is given.
--   UPDATE       of content closes the current version and opens a new one (the old row is
--                kept, readable "as of" any earlier time); an UPDATE that only sets valid_to
--                retires the feature; an UPDATE that changes nothing writes nothing.
--   DELETE, TRUNCATE, and any change to a closed version are refused.
-- Who and which batch made or closed a version is recorded from current_user and
-- ops.current_batch().

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

-- Attach the triggers and the as-of function to every versioned table (a core table with a
-- version_id column). The natural key column per layer comes from rulem_db.layers.
DO $$
DECLARE
  t record;
  key_col text;
  keys jsonb := '{"cwmp_area": "name", "parcel": "pin_normalized", "delineation": "delineation_no",
                  "permit": "permit_no"}';
BEGIN
  FOR t IN
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables tb USING (table_schema, table_name)
    WHERE c.table_schema = 'core' AND c.column_name = 'version_id' AND tb.table_type = 'BASE TABLE'
  LOOP
    key_col := coalesce(keys ->> t.table_name, 'source_fid');
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
        INSERT INTO core.%1$s SELECT (probe).*;
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
    EXECUTE format('CREATE TRIGGER version_insert BEFORE INSERT ON core.%1$I FOR EACH ROW '
                   'EXECUTE FUNCTION core.%1$s_version_insert()', t.table_name);
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
