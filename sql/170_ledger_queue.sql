-- 170_ledger_queue: what changed, and the recompute that drains it.
-- Statement-level triggers on every input layer put the owners (permits, District projects)
-- whose figures a change can move into ledger.change_queue, with the reason in words (the
-- layers of each kind are the catalogue's: ops.layer.ledger_input, from
-- rulem_db/catalogue/layers.py; disturbance, replacement, place, permit, transfer, plan):
--   impact, replacement,         the feature's permit (or District project); an impact,
--   structure, bmp, grading      structure, BMP or grading also every other permit whose
--                                disturbance meets it (ground is charged once, to the
--                                permit decided first: sql/110), a replacement every owner
--                                whose replacement or disturbance meets it (claims on the
--                                same ground, sql/120; built basins are wetland, sql/110)
--   permit                       the permit itself (status, baseline and decision dates, PINs)
--                                and, when its decision changes, the owners whose replacements
--                                or disturbance meet its own
--   credit_transfer              the giving and the receiving permit
--   wetland, delineation,        owners whose current impacts or replacements meet the old or
--   buffer, heritage_area        the new geometry (a delineation: its study area and its wetlands)
--   parcel                       the same, plus owners with entries on the parcel and permits
--                                naming its PIN
--   cwmp_area, core.parameter    every owner of the plan area
-- An UPDATE of a versioned layer closes the old version (the UPDATE's rows) and opens the new
-- one through an INSERT inside the versioning trigger; the UPDATE trigger reads both, so the
-- nested INSERT (the version the versioning trigger flagged, verified by
-- core.versioning_nested, sql/010) is skipped; an INSERT nested in another trigger (an edit
-- view's, sql/950) is not, whatever the setting says.
-- Recompute drains the queue in chunks of whole owners, each claimed by its ledger lock taken
-- without waiting, so any number of workers can drain it at once and none waits for another;
-- rows are marked processed (with the run), never deleted.

-- The permits whose current disturbance (impacts, structures, BMPs, grading: sql/110) meets a
-- geometry.
CREATE OR REPLACE FUNCTION ledger.impacters_meeting(p_plan_area_id integer, p_geom geometry)
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT i.permit_id, NULL::text
  FROM ledger.disturbance i
  WHERE p_geom IS NOT NULL AND i.plan_area_id = p_plan_area_id
    AND i.geom && p_geom AND ST_Intersects(i.geom, p_geom)
$$;
COMMENT ON FUNCTION ledger.impacters_meeting(integer, geometry) IS
  'Permits whose current impacts, structures, BMPs or grading meet a geometry.';

-- The owners whose current disturbance or replacements meet a geometry.
DROP FUNCTION IF EXISTS ledger.owners_meeting(integer, geometry);
CREATE OR REPLACE FUNCTION ledger.owners_meeting(p_plan_area_id integer, p_geom geometry)
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  SELECT i.permit_id, i.district_project
  FROM ledger.impacters_meeting(p_plan_area_id, p_geom) i
  UNION
  SELECT r.permit_id, CASE WHEN r.permit_id IS NULL THEN r.district_project END
  FROM core.replacement r
  WHERE p_geom IS NOT NULL AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    AND r.geom && p_geom AND ST_Intersects(r.geom, p_geom)
$$;
COMMENT ON FUNCTION ledger.owners_meeting(integer, geometry) IS
  'Permits and District projects whose current impacts, structures, BMPs, grading or '
  'replacements meet a geometry.';

-- Every owner of a plan area: current permits, District projects, and owners with entries
-- (a retired permit's entries must be reversed).
DROP FUNCTION IF EXISTS ledger.all_owners(integer);
CREATE OR REPLACE FUNCTION ledger.all_owners(p_plan_area_id integer)
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  SELECT pm.permit_id, NULL::text FROM core.permit pm
  WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
  UNION
  SELECT NULL::bigint, r.district_project FROM core.replacement r
  WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id AND r.permit_id IS NULL
  UNION
  SELECT e.permit_id, e.district_project FROM ledger.entry e
  WHERE e.plan_area_id = p_plan_area_id
$$;
COMMENT ON FUNCTION ledger.all_owners(integer) IS
  'Every ledger owner of a plan area: current permits, District projects, owners with entries.';

-- What happened to each feature a statement touched, in words: "added (version 7)",
-- "changed (version 7 -> 9)" or "retired (version 7)". An UPDATE's rows are the closed old
-- versions; the new version (if any) is the feature's current one.
CREATE OR REPLACE FUNCTION ledger.change_words(p_op text, p_version_id bigint,
                                               p_new_version_id bigint)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_op = 'INSERT' THEN format('added (version %s)', p_version_id)
              WHEN p_new_version_id IS NULL THEN format('retired (version %s)', p_version_id)
              ELSE format('changed (version %s -> %s)', p_version_id, p_new_version_id) END
$$;
COMMENT ON FUNCTION ledger.change_words(text, bigint, bigint) IS
  'A feature''s change in words for the queue and the entries'' reason.';

-- Each trigger below finds the current version of every feature an UPDATE changed with one
-- index probe (a LATERAL subquery kept apart by OFFSET 0), never a join: a planner that still
-- sees a layer as it was before a bulk load merge-joined a re-delivery's 10,000 changed
-- parcels with all 1,000,000 current ones, sorted on disk (1.0-1.1 s a statement at state).

-- Layers whose features belong to an owner (impact, replacement).
CREATE OR REPLACE FUNCTION ledger.queue_owned_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME, ARRAY(SELECT version_id FROM changed_rows)) THEN
    RETURN NULL;
  END IF;
  EXECUTE format($q$
    WITH changed AS (
      SELECT c.plan_area_id, c.%2$I AS fid, c.version_id, c.permit_id, %4$s AS project,
             cur.version_id AS new_version_id, cur.permit_id AS new_permit_id,
             %5$s AS new_project
      FROM changed_rows c
      LEFT JOIN LATERAL (SELECT cur.* FROM core.%1$I cur
                         WHERE %3$L = 'UPDATE' AND cur.%2$I = c.%2$I AND cur.valid_to IS NULL
                         OFFSET 0) cur ON true
    )
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer,
                                     feature_id, version_id, reason)
    SELECT DISTINCT ch.plan_area_id, o.permit_id,
           CASE WHEN o.permit_id IS NULL THEN o.project END, %1$L, ch.fid, ch.version_id,
           format('%%s %%s %%s', %1$L, f.feature_key,
                  ledger.change_words(%3$L, ch.version_id, ch.new_version_id))
    FROM changed ch
    JOIN core.feature f ON f.feature_id = ch.fid
    CROSS JOIN LATERAL (VALUES (ch.permit_id, ch.project),
                               (ch.new_permit_id, ch.new_project)) AS o(permit_id, project)
    WHERE o.permit_id IS NOT NULL OR o.project IS NOT NULL
  $q$, TG_TABLE_NAME, TG_TABLE_NAME || '_id', TG_OP,
     CASE WHEN TG_TABLE_NAME = 'replacement' THEN 'c.district_project' ELSE 'NULL::text' END,
     CASE WHEN TG_TABLE_NAME = 'replacement' THEN 'cur.district_project' ELSE 'NULL::text' END);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_owned_change() IS
  'Trigger (impact, replacement, structure): queues the owner (old and new) of each added, '
  'changed or retired feature.';

-- Layers that matter where they lie (wetland, delineation, buffer, heritage_area, parcel).
-- The owners a change meets are found from whichever side is smaller: a few changed features
-- each look up the impacts and replacements they meet (their spatial indexes); a bulk change
-- (a parcel refresh, 100,000 features against a few thousand impacts) is met the other way
-- round, each current impact and replacement looking up the changed versions through the
-- layer's own spatial index (the old and the new versions are both rows of core.<layer>).
-- Both give the same owners.
CREATE OR REPLACE FUNCTION ledger.queue_spatial_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
  n_changed bigint;
  n_owned   bigint;
  meet      text;
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME, ARRAY(SELECT version_id FROM changed_rows)) THEN
    RETURN NULL;
  END IF;
  SELECT count(*) INTO n_changed FROM changed_rows;
  SELECT (SELECT count(*) FROM ledger.disturbance)
         + (SELECT count(*) FROM core.replacement WHERE valid_to IS NULL) INTO n_owned;
  IF n_changed <= n_owned THEN
    meet := $m$
      SELECT ch.*, o.permit_id, o.district_project
      FROM changed ch
      CROSS JOIN LATERAL (SELECT * FROM ledger.owners_meeting(ch.plan_area_id, ch.old_geom)
                          UNION
                          SELECT * FROM ledger.owners_meeting(ch.plan_area_id, ch.new_geom)) o
    $m$;
  ELSE
    meet := format($m$
      SELECT ch.*, o.permit_id, o.district_project
      FROM (SELECT i.plan_area_id, i.permit_id, NULL::text AS district_project, i.geom
            FROM ledger.disturbance i
            UNION ALL
            SELECT r.plan_area_id, r.permit_id,
                   CASE WHEN r.permit_id IS NULL THEN r.district_project END, r.geom
            FROM core.replacement r WHERE r.valid_to IS NULL) o
      JOIN core.%1$I x ON x.geom && o.geom AND x.plan_area_id = o.plan_area_id
                       AND ST_Intersects(x.geom, o.geom)
      JOIN (SELECT ch.*, v.vid FROM changed ch
            CROSS JOIN LATERAL (VALUES (ch.version_id), (ch.new_version_id)) AS v(vid)
            WHERE v.vid IS NOT NULL) ch ON ch.vid = x.version_id
    $m$, TG_TABLE_NAME);
    meet := format('SELECT plan_area_id, fid, version_id, new_version_id, old_geom, new_geom, '
                   'permit_id, district_project FROM (%s) m', meet);
  END IF;
  EXECUTE format($q$
    WITH changed AS (
      SELECT c.plan_area_id, c.%2$I AS fid, c.version_id, cur.version_id AS new_version_id,
             c.geom AS old_geom, cur.geom AS new_geom
      FROM changed_rows c
      LEFT JOIN LATERAL (SELECT cur.version_id, cur.geom FROM core.%1$I cur
                         WHERE %3$L = 'UPDATE' AND cur.%2$I = c.%2$I AND cur.valid_to IS NULL
                         OFFSET 0) cur ON true
    ), hit AS (
      %4$s
      UNION ALL                 -- a delineation also moves the wetlands it approves
      SELECT ch.*, o.permit_id, o.district_project
      FROM changed ch
      JOIN core.wetland w ON %1$L = 'delineation' AND w.delineation_id = ch.fid
       AND w.valid_to IS NULL
      CROSS JOIN LATERAL ledger.owners_meeting(ch.plan_area_id, w.geom) o
      UNION ALL                 -- a parcel also carries the entries allocated to it
      SELECT DISTINCT ch.*, e.permit_id, e.district_project
      FROM changed ch JOIN ledger.entry e ON %1$L = 'parcel' AND e.parcel_id = ch.fid
      UNION ALL                 -- and the permits that name its PIN
      SELECT ch.*, pp.permit_id, NULL
      FROM changed ch
      JOIN core.feature f ON %1$L = 'parcel' AND f.feature_id = ch.fid
      JOIN (SELECT pm.permit_id, pm.plan_area_id, unnest(pm.parcel_pins) AS pin
            FROM core.permit pm
            WHERE %1$L = 'parcel' AND pm.valid_to IS NULL) pp
        ON pp.pin = f.feature_key AND pp.plan_area_id = ch.plan_area_id
    )
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer,
                                     feature_id, version_id, parcel_id, reason)
    SELECT DISTINCT h.plan_area_id, h.permit_id, h.district_project, %1$L, h.fid,
           h.version_id, CASE WHEN %1$L = 'parcel' THEN h.fid END,
           format('%%s %%s %%s', %1$L, f.feature_key,
                  ledger.change_words(%3$L, h.version_id, h.new_version_id))
    FROM hit h JOIN core.feature f ON f.feature_id = h.fid
  $q$, TG_TABLE_NAME, TG_TABLE_NAME || '_id', TG_OP, meet);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_spatial_change() IS
  'Trigger (wetland, delineation, buffer, heritage_area, parcel): queues the owners whose '
  'impacts or replacements meet the old or the new geometry of a changed feature.';

CREATE OR REPLACE FUNCTION ledger.queue_permit_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME, ARRAY(SELECT version_id FROM changed_rows)) THEN
    RETURN NULL;
  END IF;
  INSERT INTO ledger.change_queue (plan_area_id, permit_id, layer, feature_id, version_id,
                                   reason)
  SELECT c.plan_area_id, c.permit_id, 'permit', c.permit_id, c.version_id,
         format('permit %s %s', c.permit_no,
                ledger.change_words(TG_OP, c.version_id, (
                  SELECT cur.version_id FROM core.permit cur
                  WHERE cur.permit_id = c.permit_id AND cur.valid_to IS NULL)))
  FROM changed_rows c;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_permit_change() IS
  'Trigger (permit): queues the permit whose record changed.';

-- Claims on the same ground (7(b), sql/120): a replacement that is added, moved or retired,
-- or a permit whose decision (the order of its claims) changes, can move the credit of every
-- other owner whose wetland replacement meets that ground.
CREATE OR REPLACE FUNCTION ledger.claimants_meeting(p_plan_area_id integer, p_geom geometry)
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  SELECT r.permit_id, CASE WHEN r.permit_id IS NULL THEN r.district_project END
  FROM core.replacement r
  WHERE p_geom IS NOT NULL AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    AND r.component = 'wetland' AND r.geom && p_geom AND ST_Intersects(r.geom, p_geom)
$$;
COMMENT ON FUNCTION ledger.claimants_meeting(integer, geometry) IS
  'Permits and District projects whose current wetland replacements meet a geometry.';

CREATE OR REPLACE FUNCTION ledger.queue_claim_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME, ARRAY(SELECT version_id FROM changed_rows)) THEN
    RETURN NULL;
  END IF;
  IF TG_TABLE_NAME = 'replacement' THEN
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer,
                                     feature_id, version_id, reason)
    SELECT DISTINCT c.plan_area_id, o.permit_id, o.district_project, 'replacement',
           c.replacement_id, c.version_id,
           format('replacement %s %s, a claim on the same ground', f.feature_key,
                  ledger.change_words(TG_OP, c.version_id, cur.version_id))
    FROM changed_rows c
    JOIN core.feature f ON f.feature_id = c.replacement_id
    LEFT JOIN core.replacement cur
      ON TG_OP = 'UPDATE' AND cur.replacement_id = c.replacement_id AND cur.valid_to IS NULL
    CROSS JOIN LATERAL (SELECT * FROM ledger.claimants_meeting(c.plan_area_id, c.geom)
                        UNION
                        SELECT * FROM ledger.claimants_meeting(c.plan_area_id, cur.geom)
                        UNION               -- a built basin is wetland to whoever fills it
                        SELECT * FROM ledger.impacters_meeting(c.plan_area_id, c.geom)
                        UNION
                        SELECT * FROM ledger.impacters_meeting(c.plan_area_id, cur.geom)) o
    WHERE c.component = 'wetland' OR cur.component = 'wetland';
  ELSE                                  -- permit: a decision changed the order of its claims
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer,
                                     feature_id, version_id, reason)
    SELECT DISTINCT c.plan_area_id, o.permit_id, o.district_project, 'permit', c.permit_id,
           c.version_id, format('permit %s decision changed, a claim on the same ground',
                                c.permit_no)
    FROM changed_rows c
    JOIN core.permit cur ON cur.permit_id = c.permit_id AND cur.valid_to IS NULL
    CROSS JOIN LATERAL (
      SELECT x.* FROM core.replacement r
      CROSS JOIN LATERAL ledger.claimants_meeting(c.plan_area_id, r.geom) x
      WHERE r.permit_id = c.permit_id AND r.valid_to IS NULL AND r.component = 'wetland'
      UNION                     -- and the order of charges on the same wetland (sql/110)
      SELECT x.* FROM ledger.disturbance i
      CROSS JOIN LATERAL ledger.impacters_meeting(c.plan_area_id, i.geom) x
      WHERE i.permit_id = c.permit_id) o
    WHERE (cur.decided_on, cur.baseline_on, cur.status)
          IS DISTINCT FROM (c.decided_on, c.baseline_on, c.status)
      AND o.permit_id IS DISTINCT FROM c.permit_id;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_claim_change() IS
  'Trigger (replacement, permit): queues the other owners whose wetland replacements or '
  'disturbance meet a changed replacement, or the replacements and disturbance of a permit '
  'whose decision changed (the order of claims and charges on the same ground, 7(b)).';

-- Ground is charged once, to the permit decided first (sql/110): a disturbance added, moved
-- or retired can move the impact of every other permit whose disturbance meets it.
CREATE OR REPLACE FUNCTION ledger.queue_charge_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND coalesce(current_setting('rulem.versioning', true), '') <> '' THEN
    RETURN NULL;
  END IF;
  EXECUTE format($q$
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, layer, feature_id, version_id,
                                     reason)
    SELECT DISTINCT c.plan_area_id, o.permit_id, %1$L, c.%2$I, c.version_id,
           format('%%s %%s %%s, on ground charged once', %1$L, f.feature_key,
                  ledger.change_words(%3$L, c.version_id, cur.version_id))
    FROM changed_rows c
    JOIN core.feature f ON f.feature_id = c.%2$I
    LEFT JOIN LATERAL (SELECT cur.* FROM core.%1$I cur
                       WHERE %3$L = 'UPDATE' AND cur.%2$I = c.%2$I AND cur.valid_to IS NULL
                       OFFSET 0) cur ON true
    CROSS JOIN LATERAL (SELECT * FROM ledger.impacters_meeting(c.plan_area_id, c.geom)
                        UNION
                        SELECT * FROM ledger.impacters_meeting(c.plan_area_id, cur.geom)) o
    WHERE o.permit_id IS DISTINCT FROM c.permit_id
      AND o.permit_id IS DISTINCT FROM cur.permit_id
  $q$, TG_TABLE_NAME, TG_TABLE_NAME || '_id', TG_OP);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_charge_change() IS
  'Trigger (impact, structure, bmp, grading): queues the other permits whose disturbance '
  'meets a changed feature (ground is charged once, to the permit decided first).';

CREATE OR REPLACE FUNCTION ledger.queue_transfer_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME, ARRAY(SELECT version_id FROM changed_rows)) THEN
    RETURN NULL;
  END IF;
  INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer,
                                   feature_id, version_id, reason)
  SELECT DISTINCT t.plan_area_id, x.permit_id, x.project, 'credit_transfer',
         t.credit_transfer_id, t.version_id,
         format('credit transfer %s of %s acres from %s to %s %s', f.feature_key, t.acres,
                coalesce((SELECT feature_key FROM core.feature
                          WHERE feature_id = t.from_permit_id),
                         'District project ' || t.from_district_project),
                (SELECT feature_key FROM core.feature WHERE feature_id = t.to_permit_id),
                ledger.change_words(TG_OP, t.version_id, cur.version_id))
  FROM changed_rows t
  JOIN core.feature f ON f.feature_id = t.credit_transfer_id
  LEFT JOIN core.credit_transfer cur
    ON TG_OP = 'UPDATE' AND cur.credit_transfer_id = t.credit_transfer_id
   AND cur.valid_to IS NULL
  CROSS JOIN LATERAL (VALUES (t.from_permit_id, NULL::text), (t.to_permit_id, NULL),
                             (cur.from_permit_id, NULL), (cur.to_permit_id, NULL),
                             (NULL, t.from_district_project),
                             (NULL, cur.from_district_project)) AS x(permit_id, project)
  WHERE x.permit_id IS NOT NULL OR x.project IS NOT NULL;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_transfer_change() IS
  'Trigger (credit_transfer): queues the giver (a permit or a District project) and the '
  'receiving permit.';

-- Changes that can move every figure of a plan area (its boundary, its parameters).
CREATE OR REPLACE FUNCTION ledger.queue_plan_change() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1
     AND core.versioning_nested(TG_TABLE_NAME,  -- (core.parameter has no versions)
           ARRAY(SELECT (to_jsonb(c) ->> 'version_id')::bigint FROM changed_rows c)) THEN
    RETURN NULL;
  END IF;
  INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, reason)
  SELECT pa.plan_area_id, o.permit_id, o.district_project, TG_TABLE_NAME,
         format('%s of the plan area changed', TG_TABLE_NAME)
  FROM (SELECT DISTINCT c.plan_area_id FROM changed_rows c) pa
  CROSS JOIN LATERAL ledger.all_owners(pa.plan_area_id) o;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.queue_plan_change() IS
  'Trigger (cwmp_area, parameter): queues every owner of the plan area.';

-- Which trigger each layer gets is the catalogue's ops.layer.ledger_input (Layer.ledger_input
-- in rulem_db/catalogue/layers.py); core.parameter, not a layer, moves every figure too.
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT l.layer, CASE l.ledger_input
                      WHEN 'disturbance' THEN 'queue_owned_change'
                      WHEN 'replacement' THEN 'queue_owned_change'
                      WHEN 'place' THEN 'queue_spatial_change'
                      WHEN 'permit' THEN 'queue_permit_change'
                      WHEN 'transfer' THEN 'queue_transfer_change'
                      WHEN 'plan' THEN 'queue_plan_change' END AS fn
    FROM ops.layer l WHERE l.ledger_input IS NOT NULL
    UNION ALL
    SELECT 'parameter', 'queue_plan_change'
    ORDER BY 1
  LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS ledger_queue_insert ON core.%I', t.layer);
    EXECUTE format('CREATE TRIGGER ledger_queue_insert AFTER INSERT ON core.%I '
                   'REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ledger.%I()', t.layer, t.fn);
    EXECUTE format('DROP TRIGGER IF EXISTS ledger_queue_update ON core.%I', t.layer);
    IF t.layer <> 'parameter' THEN            -- parameters are append-only
      EXECUTE format('CREATE TRIGGER ledger_queue_update AFTER UPDATE ON core.%I '
                     'REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT '
                     'EXECUTE FUNCTION ledger.%I()', t.layer, t.fn);
    END IF;
  END LOOP;
END $$;
DROP TRIGGER IF EXISTS ledger_queue_claim_insert ON core.replacement;
CREATE TRIGGER ledger_queue_claim_insert AFTER INSERT ON core.replacement
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
  EXECUTE FUNCTION ledger.queue_claim_change();
DROP TRIGGER IF EXISTS ledger_queue_claim_update ON core.replacement;
CREATE TRIGGER ledger_queue_claim_update AFTER UPDATE ON core.replacement
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
  EXECUTE FUNCTION ledger.queue_claim_change();
DO $$
DECLARE
  t text;
BEGIN
  FOR t IN SELECT l.layer FROM ops.layer l WHERE l.ledger_input = 'disturbance' ORDER BY 1
  LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS ledger_queue_charge_insert ON core.%I', t);
    EXECUTE format('CREATE TRIGGER ledger_queue_charge_insert AFTER INSERT ON core.%I '
                   'REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ledger.queue_charge_change()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS ledger_queue_charge_update ON core.%I', t);
    EXECUTE format('CREATE TRIGGER ledger_queue_charge_update AFTER UPDATE ON core.%I '
                   'REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ledger.queue_charge_change()', t);
  END LOOP;
END $$;
DROP TRIGGER IF EXISTS ledger_queue_claim_update ON core.permit;
CREATE TRIGGER ledger_queue_claim_update AFTER UPDATE ON core.permit
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
  EXECUTE FUNCTION ledger.queue_claim_change();

-- Runs and draining.
-- Whether the session that started a run is still there (the same pid started no later than
-- the run: a pid can be reused). SECURITY DEFINER: pg_stat_activity shows other roles'
-- sessions' start times only to the statistics roles.
CREATE OR REPLACE FUNCTION ledger.session_alive(p_pid integer, p_since timestamptz)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM pg_stat_activity a
                 WHERE a.pid = p_pid AND a.backend_start <= p_since)
$$;
COMMENT ON FUNCTION ledger.session_alive(integer, timestamptz) IS
  'Whether database backend p_pid, started no later than p_since, is still connected.';

-- A run is committed before its workers drain (they need to see it), so a process killed
-- mid-way leaves its run 'running'; what it posted is complete per owner (each chunk is one
-- transaction) and what it had not reached is still queued. The next run marks it abandoned.
CREATE OR REPLACE FUNCTION ledger.start_run(p_mode text, p_workers integer DEFAULT 1)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  rid bigint;
BEGIN
  INSERT INTO ledger.run (mode, workers, backend_pid)
  VALUES (p_mode, p_workers, pg_backend_pid()) RETURNING run_id INTO rid;
  UPDATE ledger.run r
     SET status = 'abandoned', finished_at = clock_timestamp(),
         message = format('found running by run %s: its session (backend %s) had gone; what '
                          'it had not posted stayed queued', rid, r.backend_pid)
   WHERE r.status = 'running' AND r.run_id <> rid AND r.backend_pid IS NOT NULL
     AND NOT ledger.session_alive(r.backend_pid, r.started_at);
  -- The stored visible study areas (sql/100), recomputed here once if a delineation changed,
  -- not by every chunk of the run.
  PERFORM ledger.refresh_visible(pa.plan_area_id) FROM core.plan_area pa;
  RETURN rid;
END $$;
COMMENT ON FUNCTION ledger.start_run(text, integer) IS
  'Opens a recompute run (mode all or queue; commit it before workers drain for it), marks '
  'runs left running by a session that has gone abandoned, and refreshes the stored visible '
  'study areas (ledger.refresh_visible) of plan areas whose delineations changed.';

CREATE OR REPLACE FUNCTION ledger.enqueue_all(p_run_id bigint) RETURNS integer
LANGUAGE sql AS $$
  WITH ins AS (
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, reason)
    SELECT pa.plan_area_id, o.permit_id, o.district_project, 'recompute',
           format('recompute of everything requested (run %s)', p_run_id)
    FROM core.plan_area pa CROSS JOIN LATERAL ledger.all_owners(pa.plan_area_id) o
    WHERE NOT EXISTS (                    -- an owner already waiting is recomputed anyway
      SELECT FROM ledger.change_queue c
      WHERE c.processed_at IS NULL AND c.plan_area_id = pa.plan_area_id
        AND ledger.owner_key(c.permit_id, c.district_project)
            = ledger.owner_key(o.permit_id, o.district_project))
    -- an anti-join, hashed in batches however long the queue: NOT IN (subquery) is hashed
    -- only while the waiting rows fit in work_mem, else it scans them once per owner (the
    -- state's 133,151 waiting rows x 20,077 owners: minutes; bench/results/2026-12-06-state.md)
    RETURNING 1
  )
  SELECT count(*)::integer FROM ins
$$;
COMMENT ON FUNCTION ledger.enqueue_all(bigint) IS
  'Queues every owner of every plan area not already waiting (rulem-db recompute --all).';

-- The owners credit transfers connect to some owners, directly or through others (givers
-- and receivers alike, the owners themselves included): a change to one of them can make a
-- transfer of the component stand or fall (sql/130), which moves both its sides.
CREATE OR REPLACE FUNCTION ledger.transfer_component(p_permit_ids bigint[],
                                                     p_district_projects text[])
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE c(permit_id, district_project) AS (
    SELECT x.p, NULL::text FROM unnest(p_permit_ids) AS x(p) WHERE x.p IS NOT NULL
    UNION
    SELECT NULL::bigint, x.d FROM unnest(p_district_projects) AS x(d) WHERE x.d IS NOT NULL
    UNION
    SELECT n.permit_id, n.district_project
    FROM c
    JOIN core.credit_transfer t
      ON t.valid_to IS NULL
     AND (t.from_permit_id = c.permit_id OR t.to_permit_id = c.permit_id
          OR t.from_district_project = c.district_project)
    CROSS JOIN LATERAL (VALUES (t.from_permit_id, t.from_district_project),
                               (t.to_permit_id, NULL::text)) AS n(permit_id, district_project)
  )
  SELECT c.permit_id, c.district_project FROM c
$$;
COMMENT ON FUNCTION ledger.transfer_component(bigint[], text[]) IS
  'Owners connected to some owners by credit transfers, directly or through others (the '
  'owners included).';

-- The waiting change-queue rows of these owners that no other transaction holds, locked for
-- this one (rows it locked already come back: SKIP LOCKED skips only other transactions'
-- locks). Each lookup is an index scan of the waiting rows (ix_change_queue_waiting_permit),
-- not a scan of the queue with its 30 days of processed rows.
CREATE OR REPLACE FUNCTION ledger.lock_waiting_rows(p_permits bigint[], p_projects text[])
RETURNS bigint[] LANGUAGE sql VOLATILE AS $$
  SELECT coalesce((SELECT array_agg(q.queue_id)
                   FROM (SELECT c.queue_id FROM ledger.change_queue c
                         WHERE c.processed_at IS NULL AND c.permit_id = ANY(p_permits)
                         FOR UPDATE SKIP LOCKED) q), '{}')
      || coalesce((SELECT array_agg(q.queue_id)
                   FROM (SELECT c.queue_id FROM ledger.change_queue c
                         WHERE cardinality(p_projects) > 0 AND c.processed_at IS NULL
                           AND c.district_project = ANY(p_projects)
                         FOR UPDATE SKIP LOCKED) q), '{}')
$$;
COMMENT ON FUNCTION ledger.lock_waiting_rows(bigint[], text[]) IS
  'The waiting change-queue rows of these owners that no other transaction holds, locked '
  'FOR UPDATE for this one (ledger.drain).';

CREATE OR REPLACE FUNCTION ledger.drain(p_run_id bigint, p_limit integer DEFAULT 100)
RETURNS integer LANGUAGE plpgsql SET jit = off AS $$
DECLARE
  ids bigint[];
  permits bigint[] := '{}';
  projects text[] := '{}';
  taken bigint;
  skip_permits bigint[] := '{}';
  skip_projects text[] := '{}';
  taken_permits bigint[];
  taken_projects text[];
  w record;
  g record;
  x record;
  held boolean;
BEGIN
  -- Whole owners, each claimed with its ledger lock (ledger.owner_lock's key) taken without
  -- waiting: the waiting owners in order, skipping those another session holds, until their
  -- rows reach p_limit. Why owners and not rows: two workers taking rows (FOR UPDATE SKIP
  -- LOCKED) split the owner at the edge of their chunks, and the second then waited in
  -- ledger.post for that owner's lock until the first committed its whole chunk: on three
  -- counties one worker sat idle for 10 s of a 26 s recompute, the "one backend busy" of the
  -- state run. An owner is taken whole, so posting never waits for another worker.
  LOOP
    taken := 0;
    permits := '{}';
    projects := '{}';
    FOR w IN
      SELECT c.permit_id, c.district_project, count(*) AS n
      FROM ledger.change_queue c
      WHERE c.processed_at IS NULL
      GROUP BY c.permit_id, c.district_project
      ORDER BY c.permit_id, c.district_project
    LOOP
      CONTINUE WHEN w.permit_id = ANY(skip_permits) OR w.district_project = ANY(skip_projects);
      IF pg_try_advisory_xact_lock(1279607879,
           CASE WHEN w.permit_id IS NOT NULL THEN (w.permit_id % 2147483647)::integer
                ELSE hashtext(w.district_project) END) THEN
        IF w.permit_id IS NOT NULL THEN
          permits := permits || w.permit_id;
        ELSE
          projects := projects || w.district_project;
        END IF;
        taken := taken + w.n;
        EXIT WHEN taken >= p_limit;
      END IF;
    END LOOP;
    IF taken = 0 THEN
      -- Every waiting owner's lock is held elsewhere. Rows another drain recomputes are locked
      -- by it (below): left to it. The others (their owner held by a session that is not
      -- draining: a transfer's surplus check, an editor's transaction) are taken as rows were
      -- before, and posting waits for their owners' locks, so a drain still ends with nothing
      -- waiting that it could take.
      SELECT array_agg(DISTINCT q.permit_id) FILTER (WHERE q.permit_id IS NOT NULL),
             array_agg(DISTINCT q.district_project) FILTER (WHERE q.permit_id IS NULL)
      INTO permits, projects
      FROM (SELECT c.permit_id, c.district_project FROM ledger.change_queue c
            WHERE c.processed_at IS NULL
            ORDER BY c.permit_id, c.district_project, c.queue_id LIMIT p_limit
            FOR UPDATE SKIP LOCKED) q;
      IF permits IS NULL AND projects IS NULL THEN
        RETURN 0;
      END IF;
      permits := coalesce(permits, '{}');
      projects := coalesce(projects, '{}');
    END IF;
    -- Their rows that no other transaction holds.
    ids := ledger.lock_waiting_rows(permits, projects);
    IF cardinality(ids) = 0 THEN
      -- None left: another session processed them since, or holds their rows while it waits
      -- for an owner this transaction holds; look again without those owners. (Before the
      -- credit-transfer step below: an owner connected by transfers, queued and posted here
      -- for an owner whose rows another session holds, made this drain return rows taken
      -- without the waiting rows ever moving, and drain_all loop for ever.)
      skip_permits := skip_permits || permits;
      skip_projects := skip_projects || projects;
      CONTINUE;
    END IF;
    -- Only the owners whose rows this transaction holds are recomputed now.
    SELECT coalesce(array_agg(DISTINCT c.permit_id) FILTER (WHERE c.permit_id IS NOT NULL), '{}'),
           coalesce(array_agg(DISTINCT c.district_project) FILTER (WHERE c.permit_id IS NULL),
                    '{}')
    INTO permits, projects
    FROM ledger.change_queue c WHERE c.queue_id = ANY(ids);
    taken_permits := permits;
    taken_projects := projects;
    -- Credit transfers (sql/130): the owners connected to these by transfers are recomputed
    -- with them, in this transaction: a transfer stands or falls for both its sides at once.
    -- Those not waiting in the queue are queued here, with the reason in words, and taken.
    -- One whose lock another session holds is not waited for (two drains would deadlock on
    -- each other's components) but queued again, whatever waits for it: that session may
    -- have read the inputs before the change this drain recomputes was committed, and marks
    -- only its own rows processed, so the new row has the owner recomputed after it.
    FOR x IN
      SELECT c.permit_id, c.district_project
      FROM ledger.transfer_component(permits, projects) c
      WHERE NOT coalesce(c.permit_id = ANY(permits), false)
        AND NOT coalesce(c.district_project = ANY(projects), false)
      ORDER BY 1, 2
    LOOP
      held := NOT pg_try_advisory_xact_lock(1279607879,
        CASE WHEN x.permit_id IS NOT NULL THEN (x.permit_id % 2147483647)::integer
             ELSE hashtext(x.district_project) END);
      IF held THEN
        NULL;
      ELSIF x.permit_id IS NOT NULL THEN
        permits := permits || x.permit_id;
      ELSE
        projects := projects || x.district_project;
      END IF;
      INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, reason)
      SELECT o.plan_area_id, x.permit_id, x.district_project, 'credit_transfer',
             'credit transfers connect it to owners recomputed now'
      FROM (SELECT pm.plan_area_id FROM core.permit pm
            WHERE pm.permit_id = x.permit_id AND pm.valid_to IS NULL
            UNION
            SELECT r.plan_area_id FROM core.replacement r
            WHERE x.permit_id IS NULL AND r.permit_id IS NULL
              AND r.district_project = x.district_project AND r.valid_to IS NULL
            UNION
            SELECT e.plan_area_id FROM ledger.entry e         -- a retired owner's entries
            WHERE (e.permit_id = x.permit_id
                   OR (x.permit_id IS NULL AND e.district_project = x.district_project))
            LIMIT 1) o
      WHERE held OR NOT EXISTS (SELECT 1 FROM ledger.change_queue q
                                WHERE q.processed_at IS NULL
                                  AND (q.permit_id = x.permit_id
                                       OR (x.permit_id IS NULL
                                           AND q.district_project = x.district_project)));
    END LOOP;
    -- The rows of the owners the transfers added (those queued just above among them).
    ids := ids || ledger.lock_waiting_rows(
      ARRAY(SELECT unnest(permits) EXCEPT SELECT unnest(taken_permits)),
      ARRAY(SELECT unnest(projects) EXCEPT SELECT unnest(taken_projects)));
    EXIT;
  END LOOP;
  FOR g IN
    SELECT o.plan_area_id,
           coalesce(array_agg(o.permit_id) FILTER (WHERE o.permit_id IS NOT NULL), '{}')
             AS permits,
           coalesce(array_agg(o.district_project) FILTER (WHERE o.permit_id IS NULL), '{}')
             AS projects,
           jsonb_object_agg(o.okey, o.reason) AS reasons
    FROM (
      SELECT c.plan_area_id, c.permit_id, c.district_project,
             ledger.owner_key(c.permit_id, c.district_project) AS okey,
             array_to_string((array_agg(DISTINCT c.reason))[1:5], '; ')
               || CASE WHEN count(DISTINCT c.reason) > 5
                       THEN format('; and %s more changes', count(DISTINCT c.reason) - 5)
                       ELSE '' END AS reason
      FROM ledger.change_queue c
      WHERE c.queue_id = ANY(ids)
      GROUP BY c.plan_area_id, c.permit_id, c.district_project
    ) o
    GROUP BY o.plan_area_id
    -- Plan areas in a fixed order: each posting locks its plan area's totals row
    -- (sql/165), so two chunks spanning the same plan areas take them in the same order.
    ORDER BY o.plan_area_id
  LOOP
    PERFORM ledger.post(p_run_id, g.plan_area_id, g.permits, g.projects, g.reasons);
  END LOOP;
  UPDATE ledger.change_queue SET processed_at = clock_timestamp(), processed_run_id = p_run_id
  WHERE queue_id = ANY(ids);
  RETURN cardinality(ids);
END $$;
COMMENT ON FUNCTION ledger.drain(bigint, integer) IS
  'Takes the waiting change-queue rows of whole owners, up to about p_limit rows, skipping '
  'owners whose ledger lock another session holds (when every waiting owner is held: the '
  'rows no other drain holds, waiting for their owners) and the owners credit transfers '
  'connect them to (ledger.transfer_component; one held elsewhere is queued again), '
  'recomputes and posts those owners, marks the rows processed; returns rows taken (0: '
  'nothing it could take)';

-- One worker in one transaction (rulem_db/ledger/__init__.py, a recompute on the caller's connection)
-- drains in one call, not one round trip per chunk and one more to find the queue empty.
CREATE OR REPLACE FUNCTION ledger.drain_all(p_run_id bigint, p_limit integer DEFAULT 100)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  total integer := 0;
BEGIN
  LOOP
    n := ledger.drain(p_run_id, p_limit);
    EXIT WHEN n = 0;
    total := total + n;
  END LOOP;
  RETURN total;
END $$;
COMMENT ON FUNCTION ledger.drain_all(bigint, integer) IS
  'ledger.drain until the queue has nothing this session can take; returns rows taken.';

-- Processed queue rows are kept for a retention period (ops.setting
-- 'change_queue_retention_days', default 30), then deleted: every full recompute queues every
-- owner again (730,000 rows a year at county size). The why of each figure stays in the
-- ledger entries' reasons; waiting rows are never purged.
CREATE OR REPLACE FUNCTION ledger.queue_retention() RETURNS interval
LANGUAGE sql STABLE AS $$
  SELECT make_interval(days => coalesce(
    (SELECT value::integer FROM ops.setting WHERE key = 'change_queue_retention_days'), 30))
$$;
COMMENT ON FUNCTION ledger.queue_retention() IS
  'How long processed change-queue rows are kept (ops.setting change_queue_retention_days, '
  'default 30 days).';

CREATE OR REPLACE FUNCTION ledger.purge_processed_queue() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  -- once: ledger.queue_retention() in the WHERE clause ran once per queue row, most of a
  -- one-change recompute (docs/ledger.md section 7)
  cutoff timestamptz := now() - ledger.queue_retention();
  n integer;
BEGIN
  -- Candidates through the processed_run_id index: only runs started before the cutoff can
  -- have processed a row before it, and their ids are below those of the runs started since;
  -- processed_at keeps it exact (a long run's later rows stay). A scan of the whole queue
  -- cost 2 ms of every recompute.
  DELETE FROM ledger.change_queue c
  WHERE c.processed_run_id < coalesce(
          (SELECT min(r.run_id) FROM ledger.run r WHERE r.started_at >= cutoff),
          9223372036854775807)
    AND c.processed_at < cutoff;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
COMMENT ON FUNCTION ledger.purge_processed_queue() IS
  'Deletes change-queue rows processed longer ago than ledger.queue_retention(); returns how '
  'many (run at the end of every ledger.finish_run).';

-- What a recompute that found little to do costs is mostly this bookkeeping, so it reads
-- only the run's own rows: the queue rows and entries through their run_id indexes (planned
-- for the run at hand: a generic plan expects every run to be as big as a full recompute and
-- scanned the whole queue, 2 ms), the reversals among the run's entries (not every reversal
-- ever posted).
DROP FUNCTION IF EXISTS ledger.finish_run(bigint, text, text);
CREATE OR REPLACE FUNCTION ledger.finish_run(p_run_id bigint, p_status text DEFAULT 'done',
                                             p_message text DEFAULT NULL)
RETURNS SETOF ledger.run LANGUAGE plpgsql
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  q record;
  e record;
BEGIN
  PERFORM ledger.purge_processed_queue();
  SELECT count(*) AS items,
         count(DISTINCT ledger.owner_key(c.permit_id, c.district_project)) AS owners
    INTO q FROM ledger.change_queue c WHERE c.processed_run_id = p_run_id;
  SELECT count(*) AS entries, count(*) FILTER (WHERE x.reverses_entry_id IS NOT NULL) AS rev
    INTO e FROM ledger.entry x WHERE x.run_id = p_run_id;
  RETURN QUERY
  WITH done AS (
    UPDATE ledger.run r SET
      status = p_status, message = p_message, finished_at = clock_timestamp(),
      queue_items = q.items, owners = q.owners, entries = e.entries, reversals = e.rev
    WHERE r.run_id = p_run_id
    RETURNING r.*
  )
  SELECT * FROM done;
  PERFORM ledger.refresh_statistics();  -- sql/168: what reads the ledger next plans from it
END $$;
COMMENT ON FUNCTION ledger.finish_run(bigint, text, text) IS
  'Closes a run with its status and counts (queue rows, owners, entries, reversals); purges '
  'processed queue rows older than the retention period; analyzes the ledger tables that '
  'grew by a tenth (ledger.refresh_statistics).';

REVOKE ALL ON FUNCTION ledger.session_alive(integer, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.session_alive(integer, timestamptz) TO rulem_etl;
REVOKE ALL ON FUNCTION ledger.owners_meeting(integer, geometry), ledger.all_owners(integer),
  ledger.change_words(text, bigint, bigint), ledger.queue_owned_change(), ledger.queue_spatial_change(), ledger.queue_permit_change(),
  ledger.queue_transfer_change(), ledger.queue_plan_change(), ledger.start_run(text, integer),
  ledger.enqueue_all(bigint), ledger.drain(bigint, integer), ledger.drain_all(bigint, integer),
  ledger.finish_run(bigint, text, text), ledger.queue_retention(),
  ledger.purge_processed_queue(), ledger.claimants_meeting(integer, geometry),
  ledger.queue_claim_change(), ledger.impacters_meeting(integer, geometry),
  ledger.queue_charge_change(), ledger.transfer_component(bigint[], text[]),
  ledger.lock_waiting_rows(bigint[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.owners_meeting(integer, geometry), ledger.all_owners(integer),
  ledger.change_words(text, bigint, bigint), ledger.queue_owned_change(), ledger.queue_spatial_change(), ledger.queue_permit_change(),
  ledger.queue_transfer_change(), ledger.queue_plan_change(), ledger.start_run(text, integer),
  ledger.enqueue_all(bigint), ledger.drain(bigint, integer), ledger.drain_all(bigint, integer),
  ledger.finish_run(bigint, text, text), ledger.queue_retention(),
  ledger.purge_processed_queue(), ledger.claimants_meeting(integer, geometry),
  ledger.queue_claim_change(), ledger.impacters_meeting(integer, geometry),
  ledger.queue_charge_change(), ledger.transfer_component(bigint[], text[]),
  ledger.lock_waiting_rows(bigint[], text[]) TO rulem_etl;
-- An edit through schema edit (sql/950) fires the queue triggers with the editor's rights:
-- what they call to find the owners a change meets.
GRANT EXECUTE ON FUNCTION ledger.claimants_meeting(integer, geometry),
  ledger.impacters_meeting(integer, geometry) TO rulem_editor;
GRANT SELECT ON ledger.disturbance TO rulem_editor;
GRANT SELECT, INSERT, UPDATE ON ledger.change_queue, ledger.run TO rulem_etl;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ledger TO rulem_etl;
