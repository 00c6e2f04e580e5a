-- 312_ledger_explain: why a balance is what it is (docs/ledger.md section 5).
-- pub.balance_explain lists, for a parcel or a permit, the ledger entries behind each of its
-- published figures, and the permit-level findings that shape them. Every published figure is
-- a sum of entries' published acres (sql/180), and an entry that was reversed cancels with
-- its reversal to the last digit (a reversal negates the published acres), so the entries
-- standing at a reading (not reversed by then) sum exactly to the figure:
--   impact_acres, required_acres, credit_proposed_acres, credit_constructed_acres,
--   credit_hosted_acres, transfer_in_acres, transfer_out_acres = sum(acres) of that measure;
--   credit_acres  = sum(acres) of credit and transfer_in - sum(acres) of transfer_out;
--   balance_acres = sum(balance_effect_acres).
-- Each entry row names what produced it: the run, the reason, the effective date, the
-- features in its inputs (version ids by layer, sql/150) with the ingest batch each version
-- came from (file and login), so a clerk, the web panel, the permit decision document and BI
-- read the same rows. Layers the catalogue marks restricted (3(d) species records) are never
-- looked up: their keys and batches do not appear. Finding rows carry no acres; they are the
-- current findings of the permits behind the entries that bear on the ledger's figures: every
-- 7(b) check, and the 7(c) / 7(g) checks whose ground the ledger also leaves out of credit or
-- counts as fill (replacement outside the plan area, heritage upland excavated, a structure
-- in wetland). A parcel in deficit because its permit's basin lies on ground another owner
-- counted first shows its permit's 7(b) credit_overlap and replacement_deficit here.
--
-- Readings: the view is the current explanation (everything recorded); the function takes
-- a date and an instant and reads them as the pub.*_balance_as_of functions do (a closed
-- year as recorded at its issue unless restated, sql/176), so its rows sum to those figures.

-- Every version of every layer not restricted, by layer and version id: the inputs' lookup.
-- Generated from the layer catalogue (ops.layer) at apply time, one branch per layer; a
-- lookup by (layer, version_id) reads one branch by its primary key.
DO $do$
DECLARE
  branches text;
BEGIN
  SELECT string_agg(format(
           'SELECT %L::text AS layer, v.%I AS feature_id, v.version_id, v.batch_id '
           'FROM core.%I v', l.layer, l.layer || '_id', l.layer), ' UNION ALL '
           ORDER BY l.layer)
    INTO branches
  FROM ops.layer l
  WHERE NOT l.restricted
    AND (SELECT count(*) FROM information_schema.columns c
         WHERE c.table_schema = 'core' AND c.table_name = l.layer
           AND c.column_name IN ('version_id', 'batch_id', l.layer || '_id')) = 3;
  EXECUTE 'CREATE OR REPLACE VIEW ledger.feature_version AS ' || branches;
END $do$;
COMMENT ON VIEW ledger.feature_version IS
  'Every version of every layer the catalogue does not restrict: layer, feature id, version '
  'id and the ingest batch it came from (pub.balance_explain looks the ledger''s inputs up '
  'here). Generated from ops.layer by sql/312.';

-- The rows, for one level (parcel, permit, or both when NULL) and some keys (NULL: all),
-- read as of a date (effective dates) and as recorded at an instant (capped by the moment a
-- closed year was closed unless p_restated). SECURITY DEFINER: the view's readers read pub
-- only, and a function a view calls runs with the reader's rights.
CREATE OR REPLACE FUNCTION ledger.explain_rows(p_level text, p_ids bigint[], p_on date,
                                               p_recorded_at timestamptz,
                                               p_restated boolean)
RETURNS TABLE (level text, parcel_id bigint, pin text, permit_id bigint, permit_no text,
               district_project text, plan_area_id integer, row_kind text, measure text,
               entry_kind text, acres numeric(12,4), acres_exact numeric,
               balance_effect_acres numeric(12,4), effective_on date, entry_id bigint,
               posted_at timestamptz, posted_by text, run_id bigint, reason text,
               feature_keys text[], wetland_keys text[], source_batch_ids bigint[],
               source_files text[], loaded_by text[], sources jsonb, finding_id bigint,
               check_code text, paragraph text, severity text, finding_message text,
               measured_value numeric, unit text, review_state text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
AS $$
  WITH cut AS (
    SELECT pa.plan_area_id,
           CASE WHEN p_restated THEN p_recorded_at
                ELSE least(p_recorded_at, ledger.closed_at(pa.plan_area_id, p_on)) END AS at
    FROM core.plan_area pa
  ), standing AS MATERIALIZED (   -- entries read, not reversed by then, reversals left out
    SELECT e.*, coalesce(e.acres_published, round(e.acres, 4)) AS published
    FROM ledger.entry e
    JOIN cut ON cut.plan_area_id = e.plan_area_id
    WHERE e.reverses_entry_id IS NULL AND e.effective_on <= p_on AND e.posted_at <= cut.at
      AND (p_level IS DISTINCT FROM 'parcel' OR p_ids IS NULL OR e.parcel_id = ANY(p_ids))
      AND (p_level IS DISTINCT FROM 'permit' OR p_ids IS NULL OR e.permit_id = ANY(p_ids))
      AND NOT EXISTS (SELECT 1 FROM ledger.entry r
                      WHERE r.reverses_entry_id = e.entry_id AND r.posted_at <= cut.at)
  ), src AS MATERIALIZED (        -- each entry's input versions of layers not restricted
    SELECT s.entry_id, k.key AS input, lay.layer, v.version_id, v.feature_id, v.batch_id,
           -- behind the entry's figure: its side's features and wetland, and the permit
           (k.key IN ('impact', 'structure', 'bmp', 'grading', 'wetland')
              AND s.measure IN ('impact', 'required'))
           OR (k.key IN ('replacement', 'replacement_wetland')
               AND s.measure IN ('credit', 'credit_proposed', 'credit_constructed',
                                 'credit_hosted'))
           OR (k.key = 'credit_transfer' AND s.measure IN ('transfer_in', 'transfer_out'))
           OR k.key = 'permit' AS behind
    FROM standing s
    CROSS JOIN LATERAL jsonb_each(s.inputs) k
    CROSS JOIN LATERAL (        -- the input's layer: its name, or its name's longest suffix
      SELECT l.layer, l.restricted FROM ops.layer l
      WHERE l.layer = k.key OR k.key LIKE '%\_' || l.layer
      ORDER BY length(l.layer) DESC LIMIT 1) lay
    CROSS JOIN LATERAL jsonb_array_elements_text(
      CASE jsonb_typeof(k.value) WHEN 'array' THEN k.value
                                 WHEN 'number' THEN jsonb_build_array(k.value)
                                 ELSE '[]'::jsonb END) AS x(version_text)
    JOIN ledger.feature_version v
      ON v.layer = lay.layer AND v.version_id = x.version_text::bigint
    WHERE NOT lay.restricted AND x.version_text ~ '^[0-9]+$'
  ), keyed AS (
    SELECT src.entry_id,
           array_agg(DISTINCT f.feature_key ORDER BY f.feature_key) FILTER (
             WHERE src.behind AND src.layer NOT IN ('wetland', 'permit')) AS feature_keys,
           array_agg(DISTINCT f.feature_key ORDER BY f.feature_key) FILTER (
             WHERE src.behind AND src.layer = 'wetland') AS wetland_keys,
           jsonb_agg(jsonb_build_object(
             'input', src.input, 'layer', src.layer, 'feature_key', f.feature_key,
             'version_id', src.version_id, 'batch_id', src.batch_id,
             'source_file', b.file_name, 'loaded_by', b.created_by,
             'loaded_at', b.started_at) ORDER BY src.input, f.feature_key, src.version_id)
             AS sources
    FROM src
    LEFT JOIN core.feature f ON f.feature_id = src.feature_id
    LEFT JOIN ops.batch b ON b.batch_id = src.batch_id
    GROUP BY src.entry_id
  ), batches AS (  -- the batches of the features behind the figure, its wetland, its permit
    SELECT x.entry_id, array_agg(x.batch_id ORDER BY x.batch_id) AS ids,
           array_agg(b.file_name ORDER BY x.batch_id) AS files,
           array_agg(b.created_by ORDER BY x.batch_id) AS logins
    FROM (SELECT DISTINCT src.entry_id, src.batch_id FROM src
          WHERE src.batch_id IS NOT NULL AND src.behind) x
    JOIN ops.batch b ON b.batch_id = x.batch_id
    GROUP BY x.entry_id
  ), entry_rows AS (
    SELECT s.*, pf.feature_key AS permit_no_, kd.feature_keys, kd.wetland_keys, kd.sources,
           bt.ids AS batch_ids, bt.files, bt.logins,
           (SELECT core.pin_display(p.pin) FROM core.parcel p
            WHERE p.parcel_id = s.parcel_id ORDER BY p.valid_from DESC LIMIT 1) AS pin_
    FROM standing s
    LEFT JOIN core.feature pf ON pf.feature_id = s.permit_id
    LEFT JOIN keyed kd ON kd.entry_id = s.entry_id
    LEFT JOIN batches bt ON bt.entry_id = s.entry_id
  ), findings AS (
    SELECT f.* FROM pub.finding f
    WHERE f.permit_id IS NOT NULL
      AND (f.paragraph LIKE '7(b)%'
           OR f.check_code IN ('replacement_outside_plan_area', 'heritage_upland_excavation',
                               'structure_in_wetland'))
  ), subjects AS (   -- (level, subject, permit) whose findings are listed
    SELECT DISTINCT 'parcel'::text AS level, e.parcel_id AS subject, e.permit_id
    FROM entry_rows e
    WHERE e.parcel_id IS NOT NULL AND e.permit_id IS NOT NULL
      AND p_level IS DISTINCT FROM 'permit'
    UNION
    SELECT 'permit', pm.feature_id, pm.feature_id
    FROM core.feature pm
    WHERE pm.layer = 'permit' AND p_level IS DISTINCT FROM 'parcel'
      AND (p_ids IS NULL OR pm.feature_id = ANY(p_ids))
  )
  SELECT 'parcel'::text, e.parcel_id, e.pin_, e.permit_id, e.permit_no_, e.district_project,
         e.plan_area_id, 'entry'::text, e.measure, e.entry_kind, e.published::numeric(12,4),
         e.acres,
         (CASE e.entry_kind WHEN 'credit' THEN e.published WHEN 'debit' THEN -e.published
                            ELSE 0 END)::numeric(12,4),
         e.effective_on, e.entry_id, e.posted_at, e.posted_by, e.run_id, e.reason,
         e.feature_keys, e.wetland_keys, e.batch_ids, e.files, e.logins, e.sources,
         NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::numeric,
         NULL::text, NULL::text
  FROM entry_rows e
  WHERE e.parcel_id IS NOT NULL AND p_level IS DISTINCT FROM 'permit'
  UNION ALL
  SELECT 'permit', e.parcel_id, e.pin_, e.permit_id, e.permit_no_, e.district_project,
         e.plan_area_id, 'entry', e.measure, e.entry_kind, e.published::numeric(12,4),
         e.acres,
         (CASE e.entry_kind WHEN 'credit' THEN e.published WHEN 'debit' THEN -e.published
                            ELSE 0 END)::numeric(12,4),
         e.effective_on, e.entry_id, e.posted_at, e.posted_by, e.run_id, e.reason,
         e.feature_keys, e.wetland_keys, e.batch_ids, e.files, e.logins, e.sources,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM entry_rows e
  WHERE e.permit_id IS NOT NULL AND p_level IS DISTINCT FROM 'parcel'
  UNION ALL
  SELECT sj.level,
         CASE sj.level WHEN 'parcel' THEN sj.subject ELSE f.parcel_id END,
         CASE sj.level WHEN 'parcel'
              THEN (SELECT core.pin_display(p.pin) FROM core.parcel p
                    WHERE p.parcel_id = sj.subject ORDER BY p.valid_from DESC LIMIT 1)
              ELSE f.parcel_pin END,
         f.permit_id, f.permit_no, NULL, f.plan_area_id, 'finding', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         f.finding_id, f.check_code, f.paragraph, f.severity, f.message, f.measured_value,
         f.unit, f.review_state
  FROM subjects sj
  JOIN findings f ON f.permit_id = sj.permit_id
$$;
COMMENT ON FUNCTION ledger.explain_rows(text, bigint[], date, timestamptz, boolean) IS
  'The rows of pub.balance_explain for one level (parcel, permit; NULL both) and some keys '
  '(NULL all), as of a date and as recorded at an instant (docs/ledger.md section 5).';

DROP VIEW IF EXISTS pub.balance_explain CASCADE;
CREATE VIEW pub.balance_explain AS   -- acre columns typed numeric(12,4) as BI tools expect
  SELECT x.level, x.parcel_id, x.pin, x.permit_id, x.permit_no, x.district_project,
         x.plan_area_id, x.row_kind, x.measure, x.entry_kind, x.acres::numeric(12,4) AS acres,
         x.acres_exact, x.balance_effect_acres::numeric(12,4) AS balance_effect_acres,
         x.effective_on, x.entry_id, x.posted_at, x.posted_by, x.run_id, x.reason,
         x.feature_keys, x.wetland_keys, x.source_batch_ids, x.source_files, x.loaded_by,
         x.sources, x.finding_id, x.check_code, x.paragraph, x.severity, x.finding_message,
         x.measured_value, x.unit, x.review_state,
         concat_ws('|', x.level,
                   CASE x.level WHEN 'parcel' THEN x.parcel_id::text
                        ELSE coalesce(x.permit_id::text, x.district_project) END,
                   x.row_kind, coalesce(x.entry_id, x.finding_id)) AS row_key
  FROM ledger.explain_rows(NULL, NULL, 'infinity', 'infinity', false) x;
COMMENT ON VIEW pub.balance_explain IS
  'Why each parcel''s and each permit''s balance is what it is (docs/ledger.md section 5): '
  'for every parcel and every permit (level), the ledger entries standing now behind its '
  'figures (row_kind entry: their acres sum exactly to pub.parcel_balance / '
  'pub.permit_balance by measure, balance_effect_acres to balance_acres) and the findings of '
  'its permits that bear on them (row_kind finding, no acres). An entry shows under its '
  'parcel and under its permit: sum within one level and one parcel or permit. For one '
  'parcel or permit, or as of a date, call pub.balance_explain(p_parcel, p_permit, p_as_of, '
  'p_recorded_at, p_restated).';

DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT * FROM (VALUES
    ('level', 'Whose figures the row explains: parcel (the row is behind pub.parcel_balance of '
              'parcel_id) or permit (behind pub.permit_balance of permit_id).'),
    ('parcel_id', 'Parcel (stable id): on a parcel row the parcel explained; on a permit row '
                  'the parcel the entry fell on (NULL: no parcel).'),
    ('pin', 'PIN of parcel_id in display form (its latest version, core.pin_display).'),
    ('permit_id', 'Permit (stable id) the entry or finding belongs to (NULL: a District '
                  'project''s entry).'),
    ('permit_no', 'Permit number.'),
    ('district_project', 'District replacement project the entry belongs to (no permit).'),
    ('plan_area_id', 'Plan area.'),
    ('row_kind', 'entry (a ledger entry standing at the reading: its acres add up to the '
                 'figures) or finding (a finding that bears on the figures: no acres).'),
    ('measure', 'What the entry measures: impact, required, credit, transfer_in, transfer_out, '
                'credit_proposed, credit_constructed or credit_hosted; the figure it adds to '
                'is <measure>_acres, and credit, transfer_in and transfer_out make credit_acres '
                '(transfer_out subtracted).'),
    ('entry_kind', 'debit (required, transfer_out), credit (credit, transfer_in) or memo '
                   '(never in a balance).'),
    ('acres', 'The entry''s published acres, 4 decimals: the figures are their sums.'),
    ('acres_exact', 'The entry''s acres at full precision.'),
    ('balance_effect_acres', 'Effect on balance_acres: acres on the credit side, minus acres '
                             'on the debit side, 0 for memo; their sum is balance_acres.'),
    ('effective_on', 'Date the entry''s fact took effect (decision, counted status, transfer; '
                     'docs/ledger.md 4a).'),
    ('entry_id', 'Ledger entry (pub.ledger_entry).'),
    ('posted_at', 'When the entry was posted.'),
    ('posted_by', 'Database user that posted it.'),
    ('run_id', 'Recompute run that posted it (ledger.run).'),
    ('reason', 'Why it was posted: the changes that queued the recompute, in words.'),
    ('feature_keys', 'Keys of the features the figure is made of, from the entry''s inputs: '
                     'impacts, structures, BMPs and grading for impact and required; '
                     'replacements for credit; credit transfers for transfers.'),
    ('wetland_keys', 'Keys of the wetland features it was measured against (the baseline '
                     'wetland an impact lies in, or wetland left out of a credit).'),
    ('source_batch_ids', 'Ingest batches (ops.batch) the versions of those features, their '
                         'wetland and the permit record came from, ascending.'),
    ('source_files', 'File name of each batch of source_batch_ids, in the same order.'),
    ('loaded_by', 'Login that loaded each batch of source_batch_ids, in the same order.'),
    ('sources', 'Every input version of the entry from a layer not restricted, as jsonb: '
                'input, layer, feature_key, version_id, batch_id, source_file, loaded_by, '
                'loaded_at.'),
    ('finding_id', 'The finding (pub.finding.finding_id), on finding rows.'),
    ('check_code', 'Check that raised the finding.'),
    ('paragraph', 'Rule M paragraph of the check.'),
    ('severity', 'error or warning.'),
    ('finding_message', 'The finding in words (e.g. the replacement ground another owner '
                        'counted first, the shortfall).'),
    ('measured_value', 'The finding''s measured value.'),
    ('unit', 'Unit of measured_value.'),
    ('review_state', 'The finding''s review state (open, acknowledged, waived ...).'),
    ('row_key', 'The row''s key, level|parcel or permit (or District project)|row_kind|entry '
                'or finding: what QGIS and the OGC API take as its feature id.')
  ) AS v(col, doc)
  LOOP
    EXECUTE format('COMMENT ON COLUMN pub.balance_explain.%I IS %L', c.col, c.doc);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION pub.balance_explain(p_parcel text DEFAULT NULL,
                                               p_permit text DEFAULT NULL,
                                               p_as_of date DEFAULT NULL,
                                               p_recorded_at timestamptz DEFAULT 'infinity',
                                               p_restated boolean DEFAULT false)
RETURNS SETOF pub.balance_explain
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
  v_ids bigint[];
BEGIN
  IF (p_parcel IS NULL) = (p_permit IS NULL) THEN
    RAISE EXCEPTION 'name one parcel (PIN) or one permit (number) to explain'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF p_parcel IS NOT NULL THEN
    SELECT array_agg(f.feature_id) INTO v_ids FROM core.feature f
    WHERE f.layer = 'parcel'
      AND f.feature_key = upper(regexp_replace(p_parcel, '[^[:alnum:]]', '', 'g'));
    IF v_ids IS NULL THEN
      RAISE EXCEPTION 'no parcel with PIN %', p_parcel USING ERRCODE = 'no_data_found';
    END IF;
  ELSE
    SELECT array_agg(f.feature_id) INTO v_ids FROM core.feature f
    WHERE f.layer = 'permit' AND f.feature_key = p_permit;
    IF v_ids IS NULL THEN
      RAISE EXCEPTION 'no permit %', p_permit USING ERRCODE = 'no_data_found';
    END IF;
  END IF;
  RETURN QUERY   -- the view's columns and types
  SELECT x.level, x.parcel_id, x.pin, x.permit_id, x.permit_no, x.district_project,
         x.plan_area_id, x.row_kind, x.measure, x.entry_kind, x.acres::numeric(12,4),
         x.acres_exact, x.balance_effect_acres::numeric(12,4), x.effective_on, x.entry_id,
         x.posted_at, x.posted_by, x.run_id, x.reason, x.feature_keys, x.wetland_keys,
         x.source_batch_ids, x.source_files, x.loaded_by, x.sources, x.finding_id,
         x.check_code, x.paragraph, x.severity, x.finding_message, x.measured_value, x.unit,
         x.review_state,
         concat_ws('|', x.level,     -- row_key, written as the view writes it
                   CASE x.level WHEN 'parcel' THEN x.parcel_id::text
                        ELSE coalesce(x.permit_id::text, x.district_project) END,
                   x.row_kind, coalesce(x.entry_id, x.finding_id))
  FROM ledger.explain_rows(CASE WHEN p_parcel IS NOT NULL THEN 'parcel' ELSE 'permit' END,
                           v_ids, coalesce(p_as_of, 'infinity'),
                           coalesce(p_recorded_at, 'infinity'),
                           coalesce(p_restated, false)) x
  ORDER BY x.row_kind, x.permit_no NULLS LAST, x.district_project, x.measure,
           x.pin NULLS LAST, x.entry_id, x.paragraph, x.check_code, x.finding_id;
END $$;
COMMENT ON FUNCTION pub.balance_explain(text, text, date, timestamptz, boolean) IS
  'Why one parcel''s (p_parcel: its PIN, any punctuation) or one permit''s (p_permit: its '
  'number) balance is what it is: the rows of pub.balance_explain for it, read as '
  'pub.parcel_balance_as_of / pub.permit_balance_as_of(p_as_of, p_recorded_at, p_restated) '
  'read (p_as_of NULL: now), so the entry rows sum exactly to those figures; the finding '
  'rows are the current findings of its permits that bear on the ledger (docs/ledger.md '
  'section 5).';

REVOKE ALL ON FUNCTION ledger.explain_rows(text, bigint[], date, timestamptz, boolean),
  pub.balance_explain(text, text, date, timestamptz, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.explain_rows(text, bigint[], date, timestamptz, boolean)
  TO rulem_etl;
GRANT EXECUTE ON FUNCTION pub.balance_explain(text, text, date, timestamptz, boolean)
  TO rulem_staff, rulem_gis, rulem_etl;
GRANT SELECT ON pub.balance_explain TO rulem_staff, rulem_gis, rulem_etl;
