-- 285_check_incremental: the nightly's rule checks evaluate only the permits whose inputs
-- changed since the run before and carry the others' findings and outcomes over, so a quiet
-- night costs next to nothing (docs/checks.md, "Incremental runs"). The result is the same
-- as a full run: every permit in scope has its outcomes in the new run, and pub.finding reads
-- it like any plan-wide run.
--
-- What counts as a change, and whom it touches (conservative: when in doubt, more permits):
--   a permit, or any feature that belongs to one    that permit (old and new owner)
--   a credit transfer                                the giving and the receiving permit
--   a parcel                                         permits naming its PIN (before or after),
--                                                    and permits within reach of it
--   any other feature with a place (wetland,         permits within reach of its old or new
--   delineation, ditch, soil, heritage area, ...)    geometry
--   wetland, delineation or ditch, in addition       every permit that names parcels: the
--                                                    buffer checks follow connectivity to the
--                                                    central wetland, which is not local
--   a functional assessment or hydroperiod record    permits within reach of its wetland
--   a replacement without a permit                   the District projects
--   a replacement's monitoring record                its replacement's permit (or the
--                                                    District projects)
--   the plan boundary, central wetland seeds,        everything (a full run)
--   Figure 5, parameters, reference tables, the
--   check catalogue, or the checks' SQL itself
--   a dated fact taking effect since the last run    permits measured as of today (undecided)
--   (sql/175: approvals, parameter dates)            and the District projects
--   a date a check reads arriving since the last     the permits it concerns (sql/263:
--   run (checks.dated_check_changes)                 conditions, monitoring, sureties)
-- "Within reach" is within checks.recheck_reach_m() of the permit's parcels and features.
-- When more than half of the permits would be rechecked, a full run is cheaper and is made.

-- Which tables were written when: one row per statement that changed rows (not per row: a
-- bulk ingest adds one; a statement that changed nothing, such as the migration's
-- INSERT ... ON CONFLICT DO NOTHING of the parameters, adds none). The statement's rows come
-- from a transition table, which PostgreSQL shares with the change queue's triggers of the
-- same table and event.
CREATE OR REPLACE FUNCTION ops.log_layer_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN  -- (refused for every layer; logged should one ever pass)
    INSERT INTO ops.layer_write (table_name) VALUES (TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  ELSIF EXISTS (SELECT 1 FROM written_rows) THEN
    INSERT INTO ops.layer_write (table_name) VALUES (TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.log_layer_write() IS
  'Statement triggers of every core table and the check catalogue: log the table written '
  'when the statement changed rows.';

DO $$
DECLARE
  t regclass;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind = 'r'
      AND (n.nspname = 'core' OR (n.nspname = 'checks' AND c.relname = 'rule_check'))
    ORDER BY 1
  LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write ON %s', t);
    -- transition tables take one event per trigger
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_insert ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_insert AFTER INSERT ON %s '
                   'REFERENCING NEW TABLE AS written_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.log_layer_write()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_update ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_update AFTER UPDATE ON %s '
                   'REFERENCING NEW TABLE AS written_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.log_layer_write()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_delete ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_delete AFTER DELETE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION ops.log_layer_write()', t);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION checks.recheck_reach_m() RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 500.0::double precision $$;
COMMENT ON FUNCTION checks.recheck_reach_m() IS
  'How far (m) from a permit''s parcels and features a change makes an incremental check run '
  'evaluate the permit again: well beyond the widest buffer any check measures.';

-- The permits (and District projects) an incremental run must evaluate again, with why.
-- scope: 'all' (a full run is needed), 'permit' (permit_id), 'district' (the District
-- projects). p_since: changes committed at or after this time; p_after: the date the base run
-- measured "today" as.
CREATE OR REPLACE FUNCTION checks.changes_since(p_plan_area_id integer, p_since timestamptz,
                                                p_after date,
                                                p_today date DEFAULT current_date)
RETURNS TABLE (scope text, permit_id bigint, why text)
LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  v_tables text[];
  v_global text[];
  v_dated text[];
  t text;
  v_layer text;
  has_permit boolean;
  has_geom boolean;
  v_reach boolean := false;
BEGIN
  SELECT coalesce(array_agg(DISTINCT w.table_name ORDER BY w.table_name), '{}') INTO v_tables
  FROM ops.layer_write w WHERE w.written_at >= p_since;

  -- Changes that can move any permit's result.
  v_global := ARRAY(
    SELECT x FROM unnest(v_tables) x
    WHERE x IN ('core.cwmp_area', 'core.central_wetland_seed', 'core.figure5_area',
                'core.parameter', 'core.susceptibility_limit', 'core.heritage_rank',
                'core.tr55_cover', 'core.plan_area', 'checks.rule_check')
       OR (x LIKE 'core.%' AND x <> 'core.feature'
           AND to_regclass(x) IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM information_schema.columns c
                           WHERE c.table_schema = 'core'
                             AND c.table_name = split_part(x, '.', 2)
                             AND c.column_name = 'valid_from')));
  IF cardinality(v_global) > 0 THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint,
                        'written since the run before: ' || array_to_string(v_global, ', ');
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM ops.sql_applied a WHERE a.applied_at >= p_since) THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint,
                        'the database''s functions were updated (rulem-db db migrate)'::text;
    RETURN;
  END IF;
  -- A core table without the write log (added by a later revision without re-applying this
  -- file) could change unseen: then nothing is assumed.
  SELECT string_agg(c.oid::regclass::text, ', ') INTO t
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'core' AND c.relkind = 'r'
    AND NOT EXISTS (SELECT 1 FROM pg_trigger g
                    WHERE g.tgrelid = c.oid AND g.tgname = 'layer_write_insert');
  IF t IS NOT NULL THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint, 'tables without a write log: ' || t;
    RETURN;
  END IF;

  DROP TABLE IF EXISTS pg_temp.recheck;
  CREATE TEMP TABLE recheck (scope text, permit_id bigint, why text) ON COMMIT DROP;
  DROP TABLE IF EXISTS pg_temp.all_changed_place;
  CREATE TEMP TABLE all_changed_place (layer text, geom geometry) ON COMMIT DROP;

  -- Days passing: dated facts that took effect since the base run's day (sql/175).
  IF p_after < p_today THEN
    v_dated := ledger.dated_changes(p_plan_area_id, p_after, p_today);
    IF cardinality(v_dated) > 0 THEN
      INSERT INTO recheck
      SELECT 'permit', pm.permit_id,
             format('measured as of today (%s): %s', p_today, array_to_string(v_dated, '; '))
      FROM core.permit pm
      WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
        AND pm.baseline_on IS NULL AND pm.decided_on IS NULL;
      INSERT INTO recheck VALUES ('district', NULL, array_to_string(v_dated, '; '));
    END IF;
    -- Checks that read the date itself (sql/263: conditions and monitoring years falling due,
    -- observation and release dates arriving).
    INSERT INTO recheck
    SELECT CASE WHEN d.permit_id IS NULL THEN 'district' ELSE 'permit' END, d.permit_id,
           format('as of today (%s): %s', p_today, d.why)
    FROM checks.dated_check_changes(p_plan_area_id, p_after, p_today) d;
  END IF;

  FOREACH t IN ARRAY v_tables LOOP
    CONTINUE WHEN t NOT LIKE 'core.%' OR t = 'core.feature';
    v_layer := split_part(t, '.', 2);
    SELECT bool_or(c.column_name = 'permit_id'), bool_or(c.column_name = 'geom')
      INTO has_permit, has_geom
    FROM information_schema.columns c
    WHERE c.table_schema = 'core' AND c.table_name = v_layer;

    -- versions opened or closed since p_since
    EXECUTE format('CREATE TEMP TABLE changed_rows ON COMMIT DROP AS SELECT * FROM core.%I '
                   'WHERE plan_area_id = $1 AND (valid_from >= $2 OR valid_to >= $2)', v_layer)
      USING p_plan_area_id, p_since;

    IF v_layer = 'permit' THEN
      INSERT INTO recheck SELECT DISTINCT 'permit', c.permit_id, 'permit changed'
      FROM pg_temp.changed_rows c;
    ELSIF v_layer = 'credit_transfer' THEN
      INSERT INTO recheck
      SELECT DISTINCT 'permit', x.pid, 'credit transfer changed'
      FROM pg_temp.changed_rows c
      CROSS JOIN LATERAL (VALUES (c.from_permit_id), (c.to_permit_id)) x (pid)
      WHERE x.pid IS NOT NULL;
    END IF;
    IF has_permit THEN
      EXECUTE format('INSERT INTO pg_temp.recheck SELECT DISTINCT %L, c.permit_id, %L '
                     'FROM pg_temp.changed_rows c WHERE c.permit_id IS NOT NULL',
                     'permit', v_layer || ' of the permit changed');
    END IF;
    IF v_layer = 'replacement' THEN
      INSERT INTO recheck SELECT DISTINCT 'district', NULL::bigint,
                                 'replacement of a District project changed'
      FROM pg_temp.changed_rows c WHERE c.permit_id IS NULL;
    END IF;
    IF v_layer = 'replacement_monitoring' THEN  -- the monitored replacement's owner
      INSERT INTO recheck
      SELECT DISTINCT CASE WHEN r.permit_id IS NULL THEN 'district' ELSE 'permit' END,
             r.permit_id, 'monitoring of a replacement of the '
             || CASE WHEN r.permit_id IS NULL THEN 'District project' ELSE 'permit' END
             || ' changed'
      FROM pg_temp.changed_rows c
      JOIN core.replacement r ON r.replacement_id = c.replacement_id AND r.valid_to IS NULL;
    END IF;
    IF v_layer = 'parcel' THEN
      INSERT INTO recheck
      SELECT DISTINCT 'permit', pm.permit_id, 'a parcel the permit names changed'
      FROM pg_temp.changed_rows c
      JOIN core.permit pm ON pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
                         AND c.pin_normalized = ANY (pm.parcel_pins);
    END IF;
    IF v_layer IN ('wetland', 'delineation', 'ditch') THEN
      INSERT INTO recheck
      SELECT 'permit', pm.permit_id, v_layer || ' changed: connectivity to the central wetland'
      FROM core.permit pm
      WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
        AND cardinality(pm.parcel_pins) > 0;
    END IF;

    -- the places that changed (old and new versions), for the permits within reach
    IF has_geom THEN
      INSERT INTO pg_temp.all_changed_place
      SELECT v_layer, c.geom FROM pg_temp.changed_rows c WHERE c.geom IS NOT NULL;
      v_reach := true;
    ELSIF v_layer IN ('functional_assessment', 'hydroperiod') THEN
      INSERT INTO pg_temp.all_changed_place
      SELECT v_layer, w.geom FROM pg_temp.changed_rows c
      JOIN core.wetland w ON w.wetland_id = c.wetland_id AND w.valid_to IS NULL;
      v_reach := true;
    END IF;
    DROP TABLE pg_temp.changed_rows;
  END LOOP;

  IF v_reach THEN  -- each permit's reach: its parcels and features, expanded
    INSERT INTO recheck
    SELECT DISTINCT 'permit', r.permit_id, p.layer || ' changed within reach'
    FROM checks.permit_reach(p_plan_area_id) r
    JOIN pg_temp.all_changed_place p ON p.geom && r.reach;
  END IF;

  RETURN QUERY
  SELECT DISTINCT ON (r.scope, r.permit_id) r.scope, r.permit_id, r.why
  FROM pg_temp.recheck r  -- the permit's own change before a neighbour's
  ORDER BY r.scope, r.permit_id, r.why LIKE '%within reach', r.why;
  DROP TABLE pg_temp.recheck;
  DROP TABLE pg_temp.all_changed_place;
END $$;
COMMENT ON FUNCTION checks.changes_since(integer, timestamptz, date, date) IS
  'What an incremental check run must evaluate again since a time: every permit (scope all), '
  'permits (scope permit) or the District projects (scope district), each with why.';

-- Each permit's reach: the box of its parcels and of its own features, expanded.
CREATE OR REPLACE FUNCTION checks.permit_reach(p_plan_area_id integer)
RETURNS TABLE (permit_id bigint, reach geometry)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  q text := '';
  t text;
BEGIN
  FOR t IN
    SELECT c.table_name FROM information_schema.columns c
    WHERE c.table_schema = 'core' AND c.column_name = 'permit_id'
      AND EXISTS (SELECT 1 FROM information_schema.columns g
                  WHERE g.table_schema = 'core' AND g.table_name = c.table_name
                    AND g.column_name = 'geom')
    ORDER BY 1
  LOOP
    q := q || format('UNION ALL SELECT x.permit_id, x.geom FROM core.%I x '
                     'WHERE x.valid_to IS NULL AND x.plan_area_id = $1 '
                     'AND x.permit_id IS NOT NULL ', t);
  END LOOP;
  RETURN QUERY EXECUTE format(
    'SELECT s.permit_id, ST_Expand(ST_Extent(s.geom)::geometry, $2) FROM ('
    '  SELECT pm.permit_id, pc.geom FROM core.permit pm '
    '  JOIN core.parcel pc ON pc.valid_to IS NULL AND pc.plan_area_id = $1 '
    '   AND pc.pin_normalized = ANY (pm.parcel_pins) '
    '  WHERE pm.valid_to IS NULL AND pm.plan_area_id = $1 %s) s '
    'GROUP BY s.permit_id', q)
    USING p_plan_area_id, checks.recheck_reach_m();
END $$;
COMMENT ON FUNCTION checks.permit_reach(integer) IS
  'Box of each current permit''s parcels and features, expanded by checks.recheck_reach_m().';

-- The permits the checks look at: checks.permit_site's rows without computing their sites
-- (the same condition: current, not denied or withdrawn).
CREATE OR REPLACE FUNCTION checks.permits_in_scope(p_plan_area_id integer)
RETURNS TABLE (permit_id bigint) LANGUAGE sql STABLE AS $$
  SELECT p.permit_id FROM core.permit p
  WHERE p.valid_to IS NULL AND p.plan_area_id = p_plan_area_id
    AND p.status NOT IN ('denied', 'withdrawn')
$$;
COMMENT ON FUNCTION checks.permits_in_scope(integer) IS
  'Ids of the permits the checks look at (as checks.permit_site, without the sites).';

-- The nightly's check run: evaluate what changed since the base run, carry over the rest.
-- Returns the run that now holds the plan area's results: the base run itself when nothing
-- changed (no new run is recorded), else a new run.
CREATE OR REPLACE FUNCTION checks.run_checks_since(p_plan_area_id integer,
                                                   p_base_run_id bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  base checks.run;
  rid bigint;
  ids bigint[];
  in_scope_ids bigint[];  -- the permits the checks look at now, read once
  district boolean;
  why jsonb;
  in_scope integer;
  c_scope text[];         -- what changed since the base run, as parallel arrays
  c_permit bigint[];
  c_why text[];
BEGIN
  SELECT * INTO base FROM checks.run r
  WHERE r.run_id = p_base_run_id AND r.plan_area_id = p_plan_area_id
    AND r.permit_id IS NULL AND r.finished_at IS NOT NULL;
  IF NOT FOUND THEN
    RETURN checks.run_checks(p_plan_area_id, NULL,
                             jsonb_build_object('all', 'no earlier plan-wide check run'));
  END IF;
  -- A later plan-wide run would be the base to use: refuse rather than carry over stale rows.
  IF EXISTS (SELECT 1 FROM checks.run r WHERE r.plan_area_id = p_plan_area_id
               AND r.permit_id IS NULL AND r.run_id > base.run_id) THEN
    RAISE EXCEPTION 'check run % is not the latest plan-wide run of plan area %',
      base.run_id, p_plan_area_id USING HINT = 'Pass the latest plan-wide run as the base.';
  END IF;

  SELECT array_agg(x.scope), array_agg(x.permit_id), array_agg(x.why)
    INTO c_scope, c_permit, c_why
  FROM (SELECT * FROM checks.changes_since(p_plan_area_id,
                                           coalesce(base.changes_since, base.started_at),
                                           base.started_at::date)
        UNION ALL  -- permits checked on their own since: this run's results will replace those
        SELECT 'permit', r.permit_id, format('checked on its own in run %s', max(r.run_id))
        FROM checks.run r
        WHERE r.plan_area_id = p_plan_area_id AND r.permit_id IS NOT NULL
          AND r.run_id > base.run_id
        GROUP BY r.permit_id
        UNION ALL  -- 7(b) reads the posted ledger: the permits (and the plan area's total)
        SELECT DISTINCT   -- whose entries a recompute that ended after the base run began posted
               CASE WHEN l.owner = 0 THEN 'district' ELSE 'permit' END,
               CASE WHEN l.owner = 0 THEN NULL ELSE e.permit_id END,
               CASE WHEN l.owner = 0 THEN 'ledger entries posted: the plan balance'
                    ELSE 'ledger entries posted' END
        FROM ledger.run lr
        JOIN ledger.entry e ON e.run_id = lr.run_id AND e.plan_area_id = p_plan_area_id
        CROSS JOIN (VALUES (0), (1)) l(owner)
        WHERE (lr.finished_at IS NULL OR lr.finished_at >= base.started_at)
          AND (l.owner = 0 OR e.permit_id IS NOT NULL)) x;
  IF c_scope IS NULL THEN
    -- Nothing any check reads changed (the quiet night: no temporary table, no scope read;
    -- the same answer as the test below would give): the base run's results stand.
    RETURN base.run_id;
  END IF;
  DROP TABLE IF EXISTS pg_temp.check_change;
  CREATE TEMP TABLE check_change ON COMMIT DROP AS
  SELECT * FROM unnest(c_scope, c_permit, c_why) AS c(scope, permit_id, why);

  in_scope_ids := ARRAY(SELECT s.permit_id FROM checks.permits_in_scope(p_plan_area_id) s);
  in_scope := cardinality(in_scope_ids);
  SELECT array_agg(DISTINCT c.permit_id ORDER BY c.permit_id) FILTER (
           WHERE c.scope = 'permit' AND c.permit_id = ANY (in_scope_ids)),
         bool_or(c.scope = 'district'),
         jsonb_object_agg(coalesce(c.permit_id::text, c.scope), c.why)
    INTO ids, district, why
  FROM pg_temp.check_change c;
  IF EXISTS (SELECT 1 FROM pg_temp.check_change c WHERE c.scope = 'all')
     OR cardinality(ids) > in_scope / 2 THEN
    rid := checks.run_checks(p_plan_area_id, NULL, CASE
      WHEN EXISTS (SELECT 1 FROM pg_temp.check_change c WHERE c.scope = 'all')
      THEN jsonb_build_object('all', (SELECT c.why FROM pg_temp.check_change c
                                      WHERE c.scope = 'all'))
      ELSE jsonb_build_object('all', format('%s of %s permits changed', cardinality(ids),
                                            in_scope)) END);
    DROP TABLE pg_temp.check_change;
    RETURN rid;
  END IF;
  DROP TABLE pg_temp.check_change;
  IF ids IS NULL AND NOT coalesce(district, false) THEN
    -- Nothing any check reads changed, and the permits in scope are those of the base run
    -- (a permit entering or leaving scope is a change of the permit): its results stand.
    RETURN base.run_id;
  END IF;

  ids := coalesce(ids, '{}');
  district := coalesce(district, false);
  rid := checks.start_run(p_plan_area_id, NULL, base.run_id, why);
  PERFORM checks.evaluate(p_plan_area_id, ids, district);
  PERFORM checks.record_evaluations(rid, p_plan_area_id, ids, district);
  DROP TABLE pg_temp.check_evaluation;

  -- Carry over what the base run found for every other permit still in scope (and for the
  -- District projects when they were not evaluated again).
  INSERT INTO checks.finding (run_id, plan_area_id, paragraph, check_code, severity,
                              permit_id, parcel_id, feature_id, measured_value, limit_value,
                              unit, message, geom)
  SELECT rid, f.plan_area_id, f.paragraph, f.check_code, f.severity, f.permit_id,
         f.parcel_id, f.feature_id, f.measured_value, f.limit_value, f.unit, f.message, f.geom
  FROM checks.finding f
  WHERE f.run_id = base.run_id
    AND ((f.permit_id IS NULL AND NOT district)
         OR (f.permit_id <> ALL (ids) AND f.permit_id = ANY (in_scope_ids)));
  INSERT INTO checks.outcome (run_id, plan_area_id, permit_id, paragraph, check_code,
                              outcome, measured_value, limit_value, unit, evaluated_count,
                              finding_count, message)
  SELECT rid, o.plan_area_id, o.permit_id, o.paragraph, o.check_code, o.outcome,
         o.measured_value, o.limit_value, o.unit, o.evaluated_count, o.finding_count,
         o.message
  FROM checks.outcome o
  WHERE o.run_id = base.run_id AND o.permit_id <> ALL (ids)
    AND o.permit_id = ANY (in_scope_ids);
  UPDATE checks.run SET rechecked_count = cardinality(ids) WHERE run_id = rid;
  PERFORM checks.finish_run(rid);
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.run_checks_since(integer, bigint) IS
  'The nightly''s check run: evaluates the permits whose inputs changed since a plan-wide '
  'run and carries the other permits'' findings and outcomes over (a full run when the '
  'change is plan-wide or touches most permits; the base run itself when nothing changed).';

REVOKE ALL ON FUNCTION ops.log_layer_write(), checks.changes_since(integer, timestamptz, date,
  date), checks.permit_reach(integer), checks.run_checks_since(integer, bigint),
  checks.permits_in_scope(integer), checks.recheck_reach_m() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.log_layer_write(), checks.changes_since(integer, timestamptz,
  date, date), checks.permit_reach(integer), checks.run_checks_since(integer, bigint),
  checks.recheck_reach_m(), checks.permits_in_scope(integer) TO rulem_etl;
GRANT INSERT ON ops.layer_write TO rulem_etl;
GRANT SELECT ON ops.layer_write TO rulem_etl;
