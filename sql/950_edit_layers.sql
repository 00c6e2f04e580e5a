-- 950_edit_layers: schema edit, where staff change by hand the layers they draw (the layers
-- the catalogue marks editable: ops.layer.editable, from rulem_db/catalogue/layers.py), through
-- the edit QGIS project (qgis/rulem-db-edit.qgs) or any SQL client, as members of rulem_editor.
-- One view per editable layer, holding its current versions:
--   <layer>_id (the stable feature id, the key), plan_area_id, the layer's attributes, each
--   permit reference followed by the permit's number (permit_id -> permit_no: a form shows
--   the number, and an edit may give either), the version (version_id, version_from,
--   created_by: read-only), and geom (typmod geometry in the working CRS).
-- INSTEAD OF triggers write core, so every edit goes through core's versioning and reference
-- triggers like any other write: INSERT registers a feature and opens its first version,
-- UPDATE opens a new version (an UPDATE that changes nothing writes nothing), DELETE retires
-- the feature (closes its current version; nothing is removed). Core's triggers also queue
-- the change for the ledger (sql/170), which `rulem-db watch` or `rulem-db recompute` posts.
-- Before writing, the triggers refuse with one clear message, naming the layer and the
-- feature: an unknown permit (permit_no or permit_id that is no current permit), a missing
-- required value, an invalid or empty geometry (ST_IsValidReason), and, for the layers whose
-- catalogue entry says outside_plan_area = 'error' (impact, replacement), a geometry that lies
-- wholly outside the plan area (cwmp_area): what ingest refuses (sql/061). A geometry partly
-- outside is kept, as ingest keeps it (with a warning), and rule check 7(c) reports it.
--
-- Who: the triggers run with the editor's own rights (not SECURITY DEFINER), because core's
-- versioning trigger records current_user as created_by / closed_by: an edit is versioned with
-- the editor's login, as a core write is. So rulem_editor is granted, below, what those
-- triggers and core's read and write for the editable layers, and nothing else in core: no
-- other layer is writable by it, it reads no restricted layer. A member of rulem_editor could
-- write the editable core tables directly too (as rulem_etl can): that write is versioned,
-- reference-checked and queued the same way, only the plan-area refusal above is the view's.
-- rulem_staff and rulem_gis have nothing in schema edit.
-- The review state of findings (edit.finding) is another file's (sql/955); the edit project
-- opens every view of this schema.

CREATE SCHEMA IF NOT EXISTS edit;
COMMENT ON SCHEMA edit IS
  'Editable views of the layers staff draw by hand (rulem_editor only): every edit is a new '
  'version in core, recorded with the editor''s login; DELETE retires a feature.';
REVOKE ALL ON SCHEMA edit FROM PUBLIC;

-- The one current plan area geometry a feature must meet, NULL when none is loaded.
CREATE OR REPLACE FUNCTION edit.plan_boundary(p_plan_area_id integer) RETURNS geometry
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT ST_Union(c.geom) FROM core.cwmp_area c
  WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id
$$;
COMMENT ON FUNCTION edit.plan_boundary(integer) IS
  'The current plan area boundary (cwmp_area) of a plan area, for the edit views'' refusal of '
  'features outside it.';

-- The current permit with this number (and its plan area), or a clear refusal.
CREATE OR REPLACE FUNCTION edit.permit_of(p_layer text, p_permit_no text, p_permit_id bigint)
RETURNS TABLE (permit_id bigint, plan_area_id integer)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF p_permit_id IS NOT NULL THEN
    RETURN QUERY SELECT p.permit_id, p.plan_area_id FROM core.permit p
                 WHERE p.permit_id = p_permit_id AND p.valid_to IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'edit.%: unknown permit: permit_id % is no current permit', p_layer,
        p_permit_id USING ERRCODE = 'foreign_key_violation';
    END IF;
  ELSE
    RETURN QUERY SELECT p.permit_id, p.plan_area_id FROM core.permit p
                 WHERE p.permit_no = btrim(p_permit_no) AND p.valid_to IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'edit.%: unknown permit: no current permit has number %', p_layer,
        coalesce(quote_literal(p_permit_no), '(none)')
        USING ERRCODE = 'foreign_key_violation',
              HINT = 'Give the number of a permit in edit.permit (e.g. 24-017).';
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION edit.permit_of(text, text, bigint) IS
  'The current permit a hand edit names (by id, else by number), or a clear refusal.';

-- Geometry rules of a hand edit: present, valid, not empty, and (layers whose outside_plan_area
-- is 'error') not wholly outside the plan area.
CREATE OR REPLACE FUNCTION edit.check_geometry(p_layer text, p_feature text, p_geom geometry,
                                               p_plan_area_id integer, p_outside text)
RETURNS void LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  plan geometry;
  validity valid_detail;
BEGIN
  IF p_geom IS NULL OR ST_IsEmpty(p_geom) THEN
    RAISE EXCEPTION 'edit.%: feature %: the geometry is missing or empty', p_layer, p_feature
      USING ERRCODE = 'not_null_violation';
  END IF;
  validity := ST_IsValidDetail(p_geom);  -- (ST_IsValid would add a NOTICE to the message)
  IF NOT validity.valid THEN
    RAISE EXCEPTION 'edit.%: feature %: invalid geometry: %', p_layer, p_feature,
      validity.reason || coalesce(' at ' || ST_AsText(validity.location), '')
      USING ERRCODE = 'check_violation',
            HINT = 'Fix it in QGIS (Vector > Geometry Tools > Check Validity) and save again.';
  END IF;
  IF p_outside = 'error' THEN
    plan := edit.plan_boundary(p_plan_area_id);
    IF plan IS NOT NULL AND NOT ST_Intersects(p_geom, plan) THEN
      RAISE EXCEPTION 'edit.%: feature % lies outside the plan area (cwmp_area); draw it '
        'inside the plan area', p_layer, p_feature
        USING ERRCODE = 'check_violation';
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION edit.check_geometry(text, text, geometry, integer, text) IS
  'Refuses a hand-edited geometry that is missing, empty, invalid, or (outside_plan_area = '
  'error) wholly outside the plan area.';

-- The plan area of a new feature with no permit: the one given, else the database's only one.
CREATE OR REPLACE FUNCTION edit.plan_area_of(p_layer text, p_plan_area_id integer)
RETURNS integer LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ids integer[];
BEGIN
  IF p_plan_area_id IS NOT NULL THEN
    RETURN p_plan_area_id;
  END IF;
  SELECT array_agg(f.plan_area_id ORDER BY f.plan_area_id) INTO ids
  FROM (SELECT DISTINCT plan_area_id FROM core.feature WHERE layer = 'cwmp_area'
        UNION SELECT DISTINCT plan_area_id FROM core.permit) f;
  IF coalesce(array_length(ids, 1), 0) = 1 THEN
    RETURN ids[1];
  END IF;
  RAISE EXCEPTION 'edit.%: plan_area_id is required: this database holds % plan areas',
    p_layer, coalesce(array_length(ids, 1), 0) USING ERRCODE = 'not_null_violation';
END $$;
COMMENT ON FUNCTION edit.plan_area_of(text, integer) IS
  'The plan area of a new hand-edited feature: the one given, else the only one there is.';

DO $$
DECLARE
  t record;
  c record;
  sel text[];
  joins text[];
  attrs text[];        -- the editable attribute columns of core.<layer>, geom excluded
  required text[];     -- those that are NOT NULL in core
  perm text[];         -- permit reference columns (permit_id, from_permit_id, ...)
  setup text;          -- trigger body: resolve permits, plan area, check values
  id_col text;
  a text;
  p text;
  label text;
BEGIN
  -- views of layers no longer editable (or gone) go first
  FOR t IN
    SELECT c2.relname FROM pg_class c2 JOIN pg_namespace n ON n.oid = c2.relnamespace
    WHERE n.nspname = 'edit' AND c2.relkind = 'v'
      AND c2.relname IN (SELECT layer FROM ops.layer)
      AND c2.relname NOT IN (SELECT layer FROM ops.layer WHERE editable)
  LOOP
    EXECUTE format('DROP VIEW edit.%I CASCADE', t.relname);
  END LOOP;

  FOR t IN
    SELECT lc.layer, lc.outside_plan_area, lc.restricted,
           (SELECT type FROM geometry_columns g
             WHERE g.f_table_schema = 'core' AND g.f_table_name = lc.layer) AS gtype,
           obj_description(format('core.%I', lc.layer)::regclass) AS doc
    FROM ops.layer lc
    WHERE lc.editable AND NOT lc.restricted
      AND to_regclass(format('core.%I', lc.layer)) IS NOT NULL
    ORDER BY lc.position
  LOOP
    id_col := t.layer || '_id';
    sel := ARRAY[format('t.%I', id_col), 't.plan_area_id'];
    joins := ARRAY[]::text[];
    attrs := ARRAY[]::text[];
    required := ARRAY[]::text[];
    perm := ARRAY[]::text[];
    FOR c IN
      SELECT a2.attname::text AS name, a2.attnotnull AS notnull
      FROM pg_attribute a2
      WHERE a2.attrelid = format('core.%I', t.layer)::regclass AND a2.attnum > 0
        AND NOT a2.attisdropped
        AND a2.attname NOT IN ('version_id', 'plan_area_id', 'geom', 'source_fid',
                               'source_attributes', 'batch_id', 'created_by', 'valid_from',
                               'valid_to', 'closed_by', 'closed_batch_id')
        AND a2.attname <> id_col
      ORDER BY a2.attnum
    LOOP
      sel := sel || format('t.%I', c.name);
      attrs := attrs || c.name;
      IF c.notnull THEN
        required := required || c.name;
      END IF;
      IF EXISTS (SELECT 1 FROM core.reference_columns(t.layer) r
                 WHERE r.column_name = c.name AND r.ref_layer = 'permit') THEN
        perm := perm || c.name;
        label := left(c.name, length(c.name) - length('permit_id')) || 'permit_no';
        joins := joins || format(
          'LEFT JOIN core.permit j_%1$s ON j_%1$s.permit_id = t.%1$I AND j_%1$s.valid_to IS NULL',
          c.name);
        sel := sel || format('j_%s.permit_no AS %I', c.name, label);
      END IF;
    END LOOP;
    sel := sel || ARRAY['t.version_id', 't.valid_from AS version_from', 't.created_by'];
    IF t.gtype IS NOT NULL THEN
      sel := sel || 't.geom'::text;
    END IF;
    EXECUTE format('DROP VIEW IF EXISTS edit.%I CASCADE', t.layer);
    EXECUTE format('CREATE VIEW edit.%I AS SELECT %s FROM core.%I t %s WHERE t.valid_to IS NULL',
                   t.layer, array_to_string(sel, ', '), t.layer, array_to_string(joins, ' '));

    -- What the INSERT and UPDATE triggers share: each permit reference resolved from its id
    -- (when the edit gave or changed it) or its number, the plan area, required values, the
    -- geometry's rules. In the UPDATE trigger OLD is the row before; in the INSERT trigger
    -- the dummy row "o" of NULLs stands in for it.
    setup := '';
    FOREACH p IN ARRAY perm LOOP
      label := left(p, length(p) - length('permit_id')) || 'permit_no';
      setup := setup || format($s$
        IF NEW.%1$I IS DISTINCT FROM o.%1$I OR NEW.%2$I IS DISTINCT FROM o.%2$I THEN
          IF NEW.%1$I IS NOT DISTINCT FROM o.%1$I AND NEW.%1$I IS NOT NULL
             AND NULLIF(btrim(NEW.%2$I), '') IS NULL THEN
            NEW.%1$I := NULL;                    -- the number was cleared: so is the permit
          ELSIF NEW.%1$I IS DISTINCT FROM o.%1$I AND NEW.%1$I IS NOT NULL THEN
            SELECT x.permit_id, x.plan_area_id INTO ref FROM edit.permit_of(%3$L, NULL, NEW.%1$I) x;
            NEW.%2$I := (SELECT pm.permit_no FROM core.permit pm
                         WHERE pm.permit_id = ref.permit_id AND pm.valid_to IS NULL);
            pa := coalesce(pa, ref.plan_area_id);
          ELSIF NULLIF(btrim(NEW.%2$I), '') IS NOT NULL THEN
            SELECT x.permit_id, x.plan_area_id INTO ref FROM edit.permit_of(%3$L, NEW.%2$I, NULL) x;
            NEW.%1$I := ref.permit_id;
            pa := coalesce(pa, ref.plan_area_id);
          ELSE
            NEW.%1$I := NULL;
          END IF;
        END IF;
      $s$, p, label, t.layer);
    END LOOP;
    FOREACH a IN ARRAY required LOOP
      -- (a missing permit is named by its number, the field a form shows)
      setup := setup || format($s$
        IF NEW.%1$I IS NULL THEN
          RAISE EXCEPTION 'edit.%2$s: feature %%: %3$s is required', feature
            USING ERRCODE = 'not_null_violation';
        END IF;
      $s$, a, t.layer,
         CASE WHEN a = ANY (perm) THEN left(a, length(a) - length('permit_id')) || 'permit_no'
              ELSE a END);
    END LOOP;

    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION edit.%1$s_write() RETURNS trigger
      LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $body$
      DECLARE
        o edit.%1$I;                             -- the row before (NULLs for an INSERT)
        ref record;
        pa integer;
        feature text;
        got record;
      BEGIN
        IF TG_OP = 'DELETE' THEN                 -- retire: close the current version
          UPDATE core.%1$I SET valid_to = now()
          WHERE %2$I = OLD.%2$I AND valid_to IS NULL;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'edit.%1$s: feature %% is not current (retired or changed since it '
              'was read)', OLD.%2$I USING ERRCODE = 'serialization_failure';
          END IF;
          RETURN OLD;
        END IF;
        IF TG_OP = 'UPDATE' THEN
          o := OLD;
          IF NEW.%2$I IS DISTINCT FROM OLD.%2$I OR NEW.plan_area_id IS DISTINCT FROM OLD.plan_area_id
             OR NEW.version_id IS DISTINCT FROM OLD.version_id THEN
            RAISE EXCEPTION 'edit.%1$s: feature %%: %2$s, plan_area_id and version_id identify '
              'a feature and cannot change', OLD.%2$I USING ERRCODE = 'check_violation';
          END IF;
          feature := OLD.%2$I::text;
          pa := OLD.plan_area_id;
        ELSE
          feature := '(new)';
          pa := NEW.plan_area_id;
        END IF;
        %3$s
        IF TG_OP = 'INSERT' THEN
          pa := edit.plan_area_of(%1$L, pa);
        END IF;
        %4$s
        IF TG_OP = 'INSERT' THEN
          INSERT INTO core.%1$I (plan_area_id%5$s%6$s)
          VALUES (pa%7$s%8$s)
          RETURNING %2$I, version_id, valid_from, created_by INTO got;
          NEW.%2$I := got.%2$I;
          NEW.plan_area_id := pa;
        ELSE
          UPDATE core.%1$I SET %9$s
          WHERE %2$I = OLD.%2$I AND valid_to IS NULL;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'edit.%1$s: feature %% is not current (retired or changed since it '
              'was read)', OLD.%2$I USING ERRCODE = 'serialization_failure';
          END IF;
          SELECT version_id, valid_from, created_by INTO got FROM core.%1$I
          WHERE %2$I = OLD.%2$I AND valid_to IS NULL;
        END IF;
        NEW.version_id := got.version_id;
        NEW.version_from := got.valid_from;
        NEW.created_by := got.created_by;
        RETURN NEW;
      END $body$
    $f$,
      t.layer, id_col, setup,
      CASE WHEN t.gtype IS NOT NULL THEN format(
        'IF TG_OP = ''INSERT'' OR NEW.geom IS DISTINCT FROM OLD.geom THEN '
        '  PERFORM edit.check_geometry(%L, feature, NEW.geom, pa, %L); END IF;',
        t.layer, t.outside_plan_area) ELSE '' END,
      (SELECT string_agg(', ' || quote_ident(x), '') FROM unnest(attrs) x),
      CASE WHEN t.gtype IS NOT NULL THEN ', geom' ELSE '' END,
      (SELECT string_agg(', NEW.' || quote_ident(x), '') FROM unnest(attrs) x),
      CASE WHEN t.gtype IS NOT NULL THEN ', NEW.geom' ELSE '' END,
      array_to_string(
        (SELECT array_agg(format('%1$I = NEW.%1$I', x)) FROM unnest(attrs) x)
        || CASE WHEN t.gtype IS NOT NULL THEN ARRAY['geom = NEW.geom'] ELSE ARRAY[]::text[] END,
        ', '));
    EXECUTE format('REVOKE ALL ON FUNCTION edit.%I() FROM PUBLIC', t.layer || '_write');
    EXECUTE format('COMMENT ON FUNCTION edit.%I() IS %L', t.layer || '_write',
                   'Trigger: writes an edit of edit.' || t.layer || ' to core.' || t.layer
                   || ' (a new version; DELETE retires the feature), with the editor''s rights.');
    EXECUTE format('CREATE TRIGGER write INSTEAD OF INSERT OR UPDATE OR DELETE ON edit.%I '
                   'FOR EACH ROW EXECUTE FUNCTION edit.%I()', t.layer, t.layer || '_write');

    -- Documentation: the layer's, the columns' from core, and what the view adds.
    EXECUTE format('COMMENT ON VIEW edit.%I IS %L', t.layer,
                   t.doc || ' Current versions, keyed by ' || id_col || '; an edit opens a new '
                   || 'version recorded with the editor''s login, DELETE retires the feature '
                   || '(history in pub.' || t.layer || '_history).');
    FOR c IN
      SELECT a2.attname, col_description(a2.attrelid, a2.attnum) AS doc
      FROM pg_attribute a2
      WHERE a2.attrelid = format('edit.%I', t.layer)::regclass AND a2.attnum > 0
        AND NOT a2.attisdropped
    LOOP
      EXECUTE format('COMMENT ON COLUMN edit.%I.%I IS %L', t.layer, c.attname,
        CASE
          WHEN c.attname = 'version_from' THEN 'When this version became current (read-only).'
          WHEN c.attname IN ('version_id', 'created_by') THEN
            col_description(format('core.%I', t.layer)::regclass,
                            (SELECT attnum FROM pg_attribute
                             WHERE attrelid = format('core.%I', t.layer)::regclass
                               AND attname = c.attname)) || ' Read-only: set by the database.'
          WHEN c.attname = id_col THEN 'Stable feature id, the same in every version; set by '
                                       'the database for a new feature.'
          WHEN c.attname = 'plan_area_id' THEN 'Plan area; a new feature takes its permit''s '
                                               '(or the only plan area).'
          WHEN c.attname LIKE '%permit\_no' THEN
            'Permit number of ' || left(c.attname::text, length(c.attname::text) - 2)
            || 'id; give either the number or the id (a number that is no current permit is '
            || 'refused).'
          ELSE coalesce(col_description(format('core.%I', t.layer)::regclass,
                                        (SELECT attnum FROM pg_attribute
                                         WHERE attrelid = format('core.%I', t.layer)::regclass
                                           AND attname = c.attname)), c.doc)
        END);
    END LOOP;

    -- Grants: the view to rulem_editor; core's table and sequence for the triggers.
    EXECUTE format('REVOKE ALL ON edit.%I FROM PUBLIC', t.layer);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON edit.%I TO rulem_editor', t.layer);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON core.%I TO rulem_editor', t.layer);
    EXECUTE format('GRANT USAGE ON SEQUENCE %s TO rulem_editor',
                   pg_get_serial_sequence(format('core.%I', t.layer), 'version_id'));
  END LOOP;
END $$;

-- What core's triggers (sql/010 versioning and references, 170 ledger queue, 172 its notice,
-- 285 the layer write log) read and write when the editor's statement fires them, and no
-- more: the feature registry (a new feature's key), the layers the ledger queue looks at to
-- find the owners a change meets (read), the batch table (the reference check of batch_id,
-- read), the queue and the write log (append).
GRANT USAGE ON SCHEMA edit TO rulem_editor;
GRANT USAGE ON SCHEMA core, ops, ledger TO rulem_editor;
GRANT SELECT, INSERT, UPDATE ON core.feature TO rulem_editor;
GRANT USAGE ON SEQUENCE core.feature_feature_id_seq TO rulem_editor;
GRANT SELECT ON core.cwmp_area, core.impact, core.structure, core.replacement, core.wetland,
  core.delineation, core.permit TO rulem_editor;
GRANT SELECT ON ops.batch TO rulem_editor;
GRANT SELECT ON ledger.entry TO rulem_editor;
GRANT INSERT ON ledger.change_queue, ops.layer_write TO rulem_editor;
GRANT EXECUTE ON FUNCTION core.register_feature(text, integer, text), ops.current_batch(),
  ledger.change_words(text, bigint, bigint), ledger.owners_meeting(integer, geometry)
  TO rulem_editor;
-- The ledger queue's claim trigger on core.permit (sql/170) looks up the claims a decision
-- change meets: an editor's permit edit fires it (where the function exists).
DO $$
BEGIN
  IF to_regprocedure('ledger.claimants_meeting(integer, geometry)') IS NOT NULL THEN
    GRANT EXECUTE ON FUNCTION ledger.claimants_meeting(integer, geometry) TO rulem_editor;
  END IF;
END $$;
GRANT EXECUTE ON FUNCTION edit.plan_boundary(integer), edit.permit_of(text, text, bigint),
  edit.check_geometry(text, text, geometry, integer, text), edit.plan_area_of(text, integer)
  TO rulem_editor;
REVOKE ALL ON FUNCTION edit.plan_boundary(integer), edit.permit_of(text, text, bigint),
  edit.check_geometry(text, text, geometry, integer, text), edit.plan_area_of(text, integer)
  FROM PUBLIC;
