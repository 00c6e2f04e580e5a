-- 014_write_rules: the rules ingest applies to a delivered permit, impact, replacement or
-- credit transfer hold for every write of those layers, whoever makes it: an edit through the
-- views of schema edit (sql/950), a writer's own INSERT or UPDATE (rulem_etl), the owner's.
--
-- Why: ingest refuses, feature by feature, what would make the ledger measure the wrong thing
-- (an approved permit without its decision date is measured against today's wetland: its
-- impact and its certified credit both fall to nothing, docs/ledger.md, section 1), but a
-- person in QGIS or a script writes the tables without ingest. A rule that only ingest knows
-- is a rule any other writer breaks. The catalogue's CHECK constraints and NOT NULL columns
-- already bind every writer; here each row also meets the rules ingest adds (a decision date
-- when approved, a reference to a *current* permit of the same plan area, a geometry not
-- wholly outside the plan area) and every rule is refused in ingest's words: one line naming
-- the layer, the feature and the field, as ingest names the file, the feature and the field
-- (docs/ingest.md, "Rules that hold in the database"). The hints ingest adds about the file
-- (its field's name, a mapping file) are left out.
--
-- How: core.write_rules() lists the rules (the tests hold it to the layer catalogue,
-- rulem_db/catalogue/layers.py, and to etl/rules.py); a BEFORE INSERT row trigger per layer,
-- generated from the list, checks each new version. Every new version is an INSERT (an
-- UPDATE's new version is inserted by the versioning trigger, sql/010), so an UPDATE is
-- checked on what it makes and a retirement (valid_to) on nothing: a version that exists is
-- never judged again. The trigger is named to run after the versioning trigger's insert
-- (version_insert), which has registered the feature, so a refusal names its key; it runs
-- before the table's own constraints, so the rule's words, not PostgreSQL's, are what a
-- writer reads. It runs with the writer's rights (it reads core.feature, core.permit and
-- core.cwmp_area, which every writer of these layers reads).
-- Cost: a few comparisons per row, one index probe per permit reference, one spatial test per
-- geometry; only these four layers (a few thousand rows per delivery) carry it.

CREATE OR REPLACE FUNCTION core.write_rules()
RETURNS TABLE (layer text, rule text, kind text, field text, test text, message text)
LANGUAGE sql IMMUTABLE AS $$
  VALUES
  -- kind required: field must have a value; code: the value is one of test's list;
  -- check: test (the catalogue's expression, bare column names) is not false (field: the
  -- rule's name, which ingest names where it names a field);
  -- required_when: field must have a value when test holds; current_reference: field names
  -- a current feature of the layer in test, of the same plan area; geometry: present, not
  -- empty, valid; inside_plan_area: not wholly outside the current plan boundary (cwmp_area)
  -- when one is loaded. message: ingest's words (%s: the value, where one is shown).
    ('permit', 'permit_no_required', 'required', 'permit_no', NULL,
     'no value; every permit needs a permit_no: fill it in'),
    ('permit', 'status_required', 'required', 'status', NULL,
     'no value; every permit needs a status: fill it in'),
    ('permit', 'status_code', 'code', 'status',
     'applied,under_review,approved,denied,withdrawn,expired',
     '%s is not a status; expected one of applied, under_review, approved, denied, withdrawn, '
     'expired: correct it'),
    ('permit', 'permit_no_check', 'check', 'permit_no_check',
     'permit_no ~ ''^[0-9]{2}-[0-9]{3,4}$''',
     'fails the rule permit_no_check (permit_no ~ ''^[0-9]{2}-[0-9]{3,4}$''); correct the values'),
    ('permit', 'impact_completed_after_start', 'check', 'impact_completed_after_start',
     'impact_completed_on IS NULL OR impact_started_on IS NULL OR impact_completed_on >= '
     'impact_started_on',
     'fails the rule impact_completed_after_start (impact_completed_on IS NULL OR '
     'impact_started_on IS NULL OR impact_completed_on >= impact_started_on); correct the '
     'values'),
    ('permit', 'decided_when_approved', 'required_when', 'decided_on',
     'status IN (''approved'', ''expired'')',
     'the permit is approved or expired but has no decision date (decided_on is empty); '
     'without its decision date it is measured against today''s wetland, not the wetland as '
     'of its decision (a baseline_on does not replace it); give decided_on a value'),
    ('impact', 'permit_id_required', 'required', 'permit_id', NULL,
     'no value; every impact needs a permit_id: fill it in'),
    ('impact', 'kind_required', 'required', 'kind', NULL,
     'no value; every impact needs a kind: fill it in'),
    ('impact', 'kind_code', 'code', 'kind', 'fill,excavate,drain_full,drain_partial',
     '%s is not a kind; expected one of fill, excavate, drain_full, drain_partial: correct it'),
    ('impact', 'permit_id_current', 'current_reference', 'permit_id', 'permit', NULL),
    ('impact', 'geometry', 'geometry', 'geometry', NULL, NULL),
    ('impact', 'inside_plan_area', 'inside_plan_area', 'geometry', NULL,
     'lies outside the plan area (cwmp_area); correct its location'),
    ('replacement', 'component_required', 'required', 'component', NULL,
     'no value; every replacement needs a component: fill it in'),
    ('replacement', 'status_required', 'required', 'status', NULL,
     'no value; every replacement needs a status: fill it in'),
    ('replacement', 'component_code', 'code', 'component', 'wetland,upland',
     '%s is not a component; expected one of wetland, upland: correct it'),
    ('replacement', 'status_code', 'code', 'status', 'proposed,constructed,certified',
     '%s is not a status; expected one of proposed, constructed, certified: correct it'),
    ('replacement', 'planned_type_code', 'code', 'planned_type', '1,2,3,4,5,6,7,8',
     '%s is not a planned_type; expected one of 1, 2, 3, 4, 5, 6, 7, 8: correct it'),
    ('replacement', 'has_owner', 'check', 'has_owner',
     'permit_id IS NOT NULL OR district_project IS NOT NULL',
     'fails the rule has_owner (permit_id IS NOT NULL OR district_project IS NOT NULL); '
     'correct the values'),
    ('replacement', 'certified_after_constructed', 'check', 'certified_after_constructed',
     'certified_on IS NULL OR constructed_on IS NULL OR certified_on >= constructed_on',
     'fails the rule certified_after_constructed (certified_on IS NULL OR constructed_on IS '
     'NULL OR certified_on >= constructed_on); correct the values'),
    ('replacement', 'permit_id_current', 'current_reference', 'permit_id', 'permit', NULL),
    ('replacement', 'geometry', 'geometry', 'geometry', NULL, NULL),
    ('replacement', 'inside_plan_area', 'inside_plan_area', 'geometry', NULL,
     'lies outside the plan area (cwmp_area); correct its location'),
    ('credit_transfer', 'to_permit_id_required', 'required', 'to_permit_id', NULL,
     'no value; every credit_transfer needs a to_permit_id: fill it in'),
    ('credit_transfer', 'acres_required', 'required', 'acres', NULL,
     'no value; every credit_transfer needs a acres: fill it in'),
    ('credit_transfer', 'transferred_on_required', 'required', 'transferred_on', NULL,
     'no value; every credit_transfer needs a transferred_on: fill it in'),
    ('credit_transfer', 'acres_check', 'check', 'acres_check', 'acres > 0',
     'fails the rule acres_check (acres > 0); correct the values'),
    ('credit_transfer', 'distinct_permits', 'check', 'distinct_permits',
     'from_permit_id <> to_permit_id',
     'fails the rule distinct_permits (from_permit_id <> to_permit_id); correct the values'),
    ('credit_transfer', 'one_giver', 'check', 'one_giver',
     '(from_permit_id IS NULL) <> (from_district_project IS NULL)',
     'fails the rule one_giver ((from_permit_id IS NULL) <> (from_district_project IS NULL)); '
     'correct the values'),
    ('credit_transfer', 'from_permit_id_current', 'current_reference', 'from_permit_id',
     'permit', NULL),
    ('credit_transfer', 'to_permit_id_current', 'current_reference', 'to_permit_id', 'permit',
     NULL)
$$;
COMMENT ON FUNCTION core.write_rules() IS
  'The rules ingest applies to permits, impacts, replacements and credit transfers, which the '
  'triggers of sql/014 hold for every write: layer, rule, kind, field, test and ingest''s '
  'words for a refusal.';

-- Why a reference names no current feature of its layer in the plan area, in ingest's words
-- (ops.ingest_ref_problem, sql/060), from the id a writer gave; NULL when it does (or when
-- the id is no feature of that layer at all: the reference check of sql/010 refuses that).
CREATE OR REPLACE FUNCTION core.reference_problem(p_layer text, p_plan_area_id integer,
                                                  p_id bigint)
RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  f core.feature;
  current boolean;
BEGIN
  IF p_id IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT * INTO f FROM core.feature x WHERE x.feature_id = p_id AND x.layer = p_layer;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF f.plan_area_id IS DISTINCT FROM p_plan_area_id THEN
    RETURN format('no %s %L in this plan area; load that %s first, or correct the key',
                  p_layer, f.feature_key, p_layer);
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM core.%I t WHERE t.%I = $1 AND t.valid_to IS NULL)',
                 p_layer, p_layer || '_id') USING p_id INTO current;
  IF current THEN
    RETURN NULL;
  END IF;
  RETURN ops.ingest_ref_problem(p_layer, p_plan_area_id, f.feature_key);
END $$;
COMMENT ON FUNCTION core.reference_problem(text, integer, bigint) IS
  'Why a feature id given as a reference is no current feature of its layer in the plan area '
  '(ingest''s words), or NULL.';

-- The triggers, one function per layer, generated from the list above.
DO $do$
DECLARE
  lyr text;
  r record;
  c text;
  test text;
  body text;
  cols text[];
BEGIN
  FOR lyr IN SELECT DISTINCT w.layer FROM core.write_rules() w ORDER BY 1 LOOP
    CONTINUE WHEN to_regclass(format('core.%I', lyr)) IS NULL;
    SELECT array_agg(a.attname::text ORDER BY length(a.attname) DESC) INTO cols
    FROM pg_attribute a
    WHERE a.attrelid = format('core.%I', lyr)::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    body := '';
    FOR r IN SELECT w.* FROM core.write_rules() w WHERE w.layer = lyr LOOP
      test := r.test;
      IF r.kind IN ('check', 'required_when') THEN
        -- the catalogue's expression over NEW (longest names first: impact_started_on is not
        -- rewritten inside impact_completed_on)
        FOREACH c IN ARRAY cols LOOP
          test := regexp_replace(test, '(?<![A-Za-z0-9_.])' || c || '(?![A-Za-z0-9_])',
                                 'NEW.' || c, 'g');
        END LOOP;
      END IF;
      body := body || CASE r.kind
        WHEN 'required' THEN format($b$
        IF problem IS NULL AND NEW.%1$I IS NULL THEN
          problem := %2$L; fld := %3$L; code := 'not_null_violation';
        END IF;$b$, r.field, r.message, r.field)
        WHEN 'code' THEN format($b$
        IF problem IS NULL AND NEW.%1$I IS NOT NULL
           AND NOT (NEW.%1$I::text = ANY (string_to_array(%2$L, ','))) THEN
          problem := format(%3$L, quote_literal(NEW.%1$I)); fld := %4$L;
        END IF;$b$, r.field, r.test, r.message, r.field)
        WHEN 'check' THEN format($b$
        IF problem IS NULL AND (%1$s) IS FALSE THEN
          problem := %2$L; fld := %3$L;
        END IF;$b$, test, r.message, r.field)
        WHEN 'required_when' THEN format($b$
        IF problem IS NULL AND (%1$s) IS TRUE AND NEW.%2$I IS NULL THEN
          problem := %3$L; fld := %2$L;
        END IF;$b$, test, r.field, r.message)
        WHEN 'current_reference' THEN format($b$
        IF problem IS NULL AND NEW.%1$I IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM core.%2$I x WHERE x.%3$I = NEW.%1$I AND x.valid_to IS NULL
               AND x.plan_area_id = NEW.plan_area_id) THEN
          problem := core.reference_problem(%2$L, NEW.plan_area_id, NEW.%1$I); fld := %1$L;
          code := 'foreign_key_violation';
        END IF;$b$, r.field, r.test, r.test || '_id')
        WHEN 'geometry' THEN $b$
        IF problem IS NULL AND (NEW.geom IS NULL OR ST_IsEmpty(NEW.geom)) THEN
          problem := 'null or empty geometry; give the feature its geometry'; fld := 'geometry';
          code := 'not_null_violation';
        ELSIF problem IS NULL THEN
          validity := ST_IsValidDetail(NEW.geom);
          IF NOT validity.valid THEN
            problem := format('invalid (%s); fix it in a GIS and save it again',
                              validity.reason || coalesce(' at ' || ST_AsText(validity.location),
                                                          ''));
            fld := 'geometry';
          END IF;
        END IF;$b$
        WHEN 'inside_plan_area' THEN format($b$
        IF problem IS NULL AND NEW.geom IS NOT NULL
           AND EXISTS (SELECT 1 FROM core.cwmp_area c WHERE c.valid_to IS NULL
                       AND c.plan_area_id = NEW.plan_area_id)
           AND NOT EXISTS (SELECT 1 FROM core.cwmp_area c WHERE c.valid_to IS NULL
                           AND c.plan_area_id = NEW.plan_area_id AND c.geom && NEW.geom
                           AND ST_Intersects(c.geom, NEW.geom)) THEN
          problem := %1$L; fld := 'geometry';
        END IF;$b$, r.message)
      END;
    END LOOP;
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION core.%1$s_write_rules() RETURNS trigger
      LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $body$
      DECLARE
        problem text;
        fld text;
        code text := 'check_violation';
        validity valid_detail;
        feature text;
      BEGIN
        %2$s
        IF problem IS NOT NULL THEN
          feature := coalesce((SELECT f.feature_key FROM core.feature f
                               WHERE f.feature_id = NEW.%1$I_id), NEW.source_fid, '(new)');
          RAISE EXCEPTION 'core.%1$s: feature %%: %%: %%', feature, fld, problem
            USING ERRCODE = code;
        END IF;
        RETURN NEW;
      END $body$$f$, lyr, body);
    EXECUTE format('COMMENT ON FUNCTION core.%I() IS %L', lyr || '_write_rules',
                   'Trigger: every new version of core.' || lyr || ' meets the rules ingest '
                   || 'applies (core.write_rules()), refused in ingest''s words.');
    EXECUTE format('DROP TRIGGER IF EXISTS version_rules ON core.%I', lyr);
    EXECUTE format('CREATE TRIGGER version_rules BEFORE INSERT ON core.%I FOR EACH ROW '
                   'EXECUTE FUNCTION core.%I()', lyr, lyr || '_write_rules');
    EXECUTE format('REVOKE ALL ON FUNCTION core.%I() FROM PUBLIC', lyr || '_write_rules');
  END LOOP;
END $do$;

REVOKE ALL ON FUNCTION core.write_rules(), core.reference_problem(text, integer, bigint)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION core.write_rules(), core.reference_problem(text, integer, bigint)
  TO rulem_etl, rulem_editor;
