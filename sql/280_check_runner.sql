-- 280_check_runner: run every check of a plan area (or one permit) and record the run: the
-- failures as findings, and one outcome per permit in scope and catalogue check (pass, fail,
-- not_evaluated, not_applicable) with the worst measured value. Idempotent.
--
-- An evaluation with passed NULL is a case the check could not evaluate: an input it needs
-- is missing (its message says which). It is a finding of severity error whatever the check's
-- severity, and never counts as a pass: the outcome is fail when some case failed, else
-- not_evaluated when some case could not be evaluated, else pass.

-- The checks a run evaluates: the catalogue's rows that a check file registers (sql/200:
-- not retired) and whose function exists as the runner calls it. A check is its file alone:
-- nothing here names one.
CREATE OR REPLACE FUNCTION checks.current_checks()
RETURNS SETOF checks.rule_check LANGUAGE sql STABLE AS $$
  SELECT c.* FROM checks.rule_check c
  WHERE c.retired_at IS NULL AND checks.evaluator(c.evaluated_by) IS NOT NULL
$$;
COMMENT ON FUNCTION checks.current_checks() IS
  'The checks a run evaluates: catalogue rows not retired whose function (evaluated_by) '
  'exists.';

-- A row whose function is gone (its file was removed: re-applying sql/200 drops every check
-- function) or that no file ever registered (a row from before revision 0021) is retired
-- here, once every check file has registered its checks: kept for the findings of the past,
-- never run again. (Removing a check from a file that stays retires it at once, sql/200.)
UPDATE checks.rule_check c SET retired_at = now()
WHERE c.retired_at IS NULL AND checks.evaluator(c.evaluated_by) IS NULL;

-- The query that evaluates every current check: one SELECT per check function (in the rule's
-- order of its first check), each called with the plan area ($1) and the permits ($2, a
-- bigint[]; NULL: every permit). A function of the set form, f(integer, bigint[]), is called
-- once with them all; one of the one-permit form, f(integer, bigint), once per permit (or
-- once with NULL), so a check written in either form runs (docs/checks.md, "Performance").
-- $2 may hold a NULL element: the set form then evaluates the cases without a permit too
-- (checks.with_district). With p_district: the query that evaluates those cases for the
-- functions of the one-permit form registered with them, called plan-wide and kept to those
-- cases. NULL when no check is registered.
CREATE OR REPLACE FUNCTION checks.evaluation_query(p_district boolean DEFAULT false)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT string_agg(format(CASE WHEN p_district
                                THEN 'SELECT e.* FROM %s($1, NULL::bigint) e '
                                     'WHERE e.permit_id IS NULL'
                                WHEN f.set_form
                                THEN 'SELECT * FROM %s($1, $2)'
                                ELSE 'SELECT e.* FROM (SELECT NULL::bigint AS id '
                                     'WHERE $2 IS NULL UNION ALL SELECT x.id '
                                     'FROM unnest($2) x(id) WHERE x.id IS NOT NULL) p '
                                     'CROSS JOIN LATERAL %s($1, p.id) e' END, f.fn),
                    E'\nUNION ALL ' ORDER BY f.first_sort, f.fn)
  FROM (SELECT format('%I.%I', n.nspname, p.proname) AS fn, min(c.sort_order) AS first_sort,
               bool_and(checks.evaluates_set(p.oid)) AS set_form,
               bool_or(c.district_cases) AS district_cases
        FROM checks.current_checks() c
        JOIN pg_catalog.pg_proc p ON p.oid = checks.evaluator(c.evaluated_by)
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        GROUP BY 1) f
  -- the cases without a permit alone: only the one-permit form needs a call of its own (a
  -- set-form function gets them with its permits: checks.with_district)
  WHERE NOT p_district OR (f.district_cases AND NOT f.set_form)
$$;
COMMENT ON FUNCTION checks.evaluation_query(boolean) IS
  'SQL that evaluates every current check for a plan area ($1) and permits ($2, bigint[]; '
  'NULL: all), built from the catalogue; p_district: only the cases without a permit.';

-- Every evaluation of every check, for a plan area (or some permits).
DROP FUNCTION IF EXISTS checks.all_evaluations(integer, bigint);
CREATE OR REPLACE FUNCTION checks.all_evaluations(p_plan_area_id integer,
                                                  p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
  q text := checks.evaluation_query();
BEGIN
  IF q IS NOT NULL THEN
    RETURN QUERY EXECUTE q USING p_plan_area_id, p_permit_ids;
  END IF;
END $$;
COMMENT ON FUNCTION checks.all_evaluations(integer, bigint[]) IS
  'Every evaluation of every Rule M check for a plan area (or some permits).';

-- A run in three steps, shared by the full run (below) and the incremental run (sql/285):
-- evaluate some permits into a temporary table, record their findings and outcomes, close.

-- Evaluate every current check (checks.evaluation_query) for some permits (NULL: every
-- permit, and the District projects) into pg_temp.check_evaluation; p_district adds the
-- evaluations without a permit (District projects, the plan area) when permits are named.
-- Each check function is called once for all of them (one statement per function, not one per
-- permit). The five buffer checks start from the same sites: computed once here into
-- checks.buffer_site_cache under this transaction's id (checks.buffer_site_of reads them from
-- there) and deleted again before the function returns.
CREATE OR REPLACE FUNCTION checks.evaluate(p_plan_area_id integer, p_permit_ids bigint[],
                                           p_district boolean DEFAULT false)
RETURNS integer LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  n integer;
  v_xact bigint := pg_current_xact_id()::text::bigint;
  -- the check functions, from the catalogue (NULL: none registered)
  q_all text := 'INSERT INTO pg_temp.check_evaluation ' || checks.evaluation_query();
  q_district text := 'INSERT INTO pg_temp.check_evaluation ' || checks.evaluation_query(true);
BEGIN
  DROP TABLE IF EXISTS pg_temp.check_evaluation;
  CREATE TEMP TABLE check_evaluation (LIKE checks.evaluation) ON COMMIT DROP;
  DELETE FROM checks.buffer_site_cache c WHERE c.xact = v_xact;
  -- every site is computed before any is cached: once the cache holds a row of this
  -- transaction, checks.buffer_site_of reads the cache instead of computing
  INSERT INTO checks.buffer_site_cache (xact, plan_area_id, permit_id, baseline_on, parcels,
                                        edge, wetland, central, buffer, own_buffer, effective)
  SELECT v_xact, p_plan_area_id, s.* FROM checks.buffer_site_of(p_plan_area_id, p_permit_ids) s;
  IF q_all IS NOT NULL AND (p_permit_ids IS NULL OR cardinality(p_permit_ids) > 0
                            OR p_district) THEN
    -- with p_district, a NULL element asks the set-form functions for the District projects
    -- (the 7(c) checks) and the plan area (7(b)) too
    EXECUTE q_all USING p_plan_area_id, CASE WHEN p_permit_ids IS NOT NULL AND p_district
                                             THEN p_permit_ids || NULL::bigint
                                             ELSE p_permit_ids END;
  END IF;
  IF p_permit_ids IS NOT NULL AND p_district AND q_district IS NOT NULL THEN
    -- the same of the functions of the one-permit form
    EXECUTE q_district USING p_plan_area_id;
  END IF;
  DELETE FROM checks.buffer_site_cache c WHERE c.xact = v_xact;
  SELECT count(*) INTO n FROM check_evaluation;
  RETURN n;
END $$;
COMMENT ON FUNCTION checks.evaluate(integer, bigint[], boolean) IS
  'Evaluates every check for some permits of a plan area (NULL: all, with the District '
  'projects) into the temporary table check_evaluation; returns the evaluations.';

-- A run's worker sessions (rulem_db.checks, --workers; docs/checks.md, "Performance"): each
-- evaluates its share of the permits on the snapshot the run exported and leaves the
-- evaluations in checks.evaluation_stage under the run's stage id; the run's own session
-- takes them back into pg_temp.check_evaluation (checks.take_staged) and records them.
CREATE OR REPLACE FUNCTION checks.stage_evaluations(p_stage_id uuid, p_plan_area_id integer,
                                                    p_permit_ids bigint[],
                                                    p_district boolean DEFAULT false)
RETURNS integer LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  n integer;
BEGIN
  PERFORM checks.evaluate(p_plan_area_id, p_permit_ids, p_district);
  INSERT INTO checks.evaluation_stage (stage_id, paragraph, check_code, severity, permit_id,
                                       parcel_id, feature_id, passed, measured_value,
                                       limit_value, unit, message, geom)
  SELECT p_stage_id, e.* FROM pg_temp.check_evaluation e;
  GET DIAGNOSTICS n = ROW_COUNT;
  DROP TABLE pg_temp.check_evaluation;
  RETURN n;
END $$;
COMMENT ON FUNCTION checks.stage_evaluations(uuid, integer, bigint[], boolean) IS
  'A worker of a check run: evaluates some permits (checks.evaluate) into '
  'checks.evaluation_stage under the run''s stage id; returns the evaluations.';

CREATE OR REPLACE FUNCTION checks.take_staged(p_stage_id uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  n integer;
BEGIN
  DROP TABLE IF EXISTS pg_temp.check_evaluation;
  CREATE TEMP TABLE check_evaluation (LIKE checks.evaluation) ON COMMIT DROP;
  WITH taken AS (
    DELETE FROM checks.evaluation_stage s WHERE s.stage_id = p_stage_id RETURNING s.*
  )
  INSERT INTO pg_temp.check_evaluation
  SELECT t.paragraph, t.check_code, t.severity, t.permit_id, t.parcel_id, t.feature_id,
         t.passed, t.measured_value, t.limit_value, t.unit, t.message, t.geom
  FROM taken t;
  GET DIAGNOSTICS n = ROW_COUNT;
  -- rows a failed run left behind (its session ended before taking them) are of no use
  DELETE FROM checks.evaluation_stage s WHERE s.staged_at < now() - interval '1 day';
  RETURN n;
END $$;
COMMENT ON FUNCTION checks.take_staged(uuid) IS
  'The run''s own session: moves its workers'' evaluations from checks.evaluation_stage into '
  'pg_temp.check_evaluation (and drops what failed runs left a day ago or more).';

-- Record pg_temp.check_evaluation in run p_run_id: failures as findings, one outcome per
-- permit in scope (p_permit_ids, NULL: every permit the checks look at) and current check
-- (a retired one gets none), with the worst evaluation; with p_district the District
-- projects' findings too.
CREATE OR REPLACE FUNCTION checks.record_evaluations(p_run_id bigint, p_plan_area_id integer,
                                                     p_permit_ids bigint[],
                                                     p_district boolean)
RETURNS void LANGUAGE plpgsql VOLATILE SET jit = off AS $$
BEGIN  -- plpgsql: the temporary table exists only when it runs
  WITH ev AS MATERIALIZED (
    SELECT * FROM pg_temp.check_evaluation e
    WHERE (e.permit_id IS NULL AND p_district)
       OR (e.permit_id IS NOT NULL
           AND (p_permit_ids IS NULL OR e.permit_id IN (SELECT unnest(p_permit_ids))))
  ), f AS (
    INSERT INTO checks.finding (run_id, plan_area_id, paragraph, check_code, severity,
                                permit_id, parcel_id, feature_id, measured_value, limit_value,
                                unit, message, geom)
    SELECT p_run_id, p_plan_area_id, ev.paragraph, ev.check_code,
           CASE WHEN ev.passed IS NULL THEN 'error' ELSE ev.severity END, ev.permit_id,
           ev.parcel_id, ev.feature_id, ev.measured_value, ev.limit_value, ev.unit, ev.message,
           ev.geom
    FROM ev WHERE ev.passed IS NOT TRUE  -- failed, or not evaluated
  ), scope AS (
    SELECT ps.permit_id FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), covered AS (  -- the run holds these permits' outcomes itself (revision 0046)
    INSERT INTO checks.run_permit (run_id, permit_id, plan_area_id, outcome_run_id)
    SELECT p_run_id, s.permit_id, p_plan_area_id, p_run_id FROM scope s
  ), ranked AS (
    -- the worst evaluation of each permit and check: a failure first, then a case not
    -- evaluated, then by the measure; among equals the first feature, parcel and message,
    -- so that the outcome does not hang on the order the rows were stored or joined in (a
    -- permit evaluated alone says what a plan-wide run says)
    SELECT DISTINCT ON (ev.permit_id, ev.paragraph, ev.check_code) ev.*,
           count(*) OVER w AS n, count(*) FILTER (WHERE NOT ev.passed) OVER w AS n_fail,
           count(*) FILTER (WHERE ev.passed IS NULL) OVER w AS n_unknown
    FROM ev JOIN checks.rule_check c USING (paragraph, check_code)
    WHERE ev.permit_id IS NOT NULL
    WINDOW w AS (PARTITION BY ev.permit_id, ev.paragraph, ev.check_code)
    ORDER BY ev.permit_id, ev.paragraph, ev.check_code,
             CASE WHEN NOT ev.passed THEN 0 WHEN ev.passed IS NULL THEN 1 ELSE 2 END,
             CASE c.worse WHEN 'higher' THEN -ev.measured_value
                          WHEN 'lower' THEN ev.measured_value END NULLS FIRST,
             ev.feature_id NULLS FIRST, ev.parcel_id NULLS FIRST, ev.message
  )
  INSERT INTO checks.outcome (run_id, plan_area_id, permit_id, paragraph, check_code,
                              outcome, measured_value, limit_value, unit, evaluated_count,
                              finding_count, message)
  SELECT p_run_id, p_plan_area_id, s.permit_id, c.paragraph, c.check_code,
         CASE WHEN r.n IS NULL THEN 'not_applicable' WHEN r.n_fail > 0 THEN 'fail'
              WHEN r.n_unknown > 0 THEN 'not_evaluated' ELSE 'pass' END,
         r.measured_value, r.limit_value, coalesce(r.unit, c.unit), coalesce(r.n, 0),
         coalesce(r.n_fail + r.n_unknown, 0), r.message
  FROM scope s CROSS JOIN checks.current_checks() c
  LEFT JOIN ranked r ON r.permit_id = s.permit_id AND r.paragraph = c.paragraph
                    AND r.check_code = c.check_code;
END $$;
COMMENT ON FUNCTION checks.record_evaluations(bigint, integer, bigint[], boolean) IS
  'Records the evaluations of pg_temp.check_evaluation in a run: findings for the failures, '
  'an outcome per permit in scope and catalogue check, and the permits as covered by the run '
  'itself (checks.run_permit).';

-- A run's outcomes: those it wrote for the permits it evaluated, and for the permits an
-- incremental run carried over, those of the run that last evaluated them (checks.run_permit,
-- revision 0046: referred to, not copied). run_id is the run asked about, outcome_run_id the
-- run whose checks.outcome row it is.
CREATE OR REPLACE FUNCTION checks.run_outcome(p_run_id bigint)
RETURNS TABLE (run_id bigint, outcome_run_id bigint, outcome_id bigint, plan_area_id integer,
               permit_id bigint, paragraph text, check_code text, outcome text,
               measured_value numeric, limit_value numeric, unit text,
               evaluated_count integer, finding_count integer, message text)
LANGUAGE sql STABLE AS $$
  SELECT rp.run_id, rp.outcome_run_id, o.outcome_id, o.plan_area_id, o.permit_id,
         o.paragraph, o.check_code, o.outcome, o.measured_value, o.limit_value, o.unit,
         o.evaluated_count, o.finding_count, o.message
  FROM checks.run_permit rp
  JOIN checks.outcome o ON o.run_id = rp.outcome_run_id AND o.permit_id = rp.permit_id
  WHERE rp.run_id = p_run_id
$$;
COMMENT ON FUNCTION checks.run_outcome(bigint) IS
  'The outcomes of a check run, one per permit it covers and check: its own for the permits '
  'it evaluated, the run that last evaluated them for the permits it carried over '
  '(outcome_run_id).';

-- Close a run with its counts (from what it recorded, carried-over rows included), after
-- the review step (sql/287: the findings' identities, new, re-opened and resolved ones).
-- plpgsql: that step is defined in a later file and resolved when called.
CREATE OR REPLACE FUNCTION checks.finish_run(p_run_id bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM checks.review_after_run(p_run_id);
  UPDATE checks.run r SET finished_at = clock_timestamp(),
         permit_count = (SELECT count(*) FROM checks.run_permit rp
                         WHERE rp.run_id = r.run_id),
         finding_count = f.n, error_count = f.errors, warning_count = f.warnings
  FROM (SELECT count(*) AS n, count(*) FILTER (WHERE severity = 'error') AS errors,
               count(*) FILTER (WHERE severity = 'warning') AS warnings
        FROM checks.finding WHERE run_id = p_run_id) f
  WHERE r.run_id = p_run_id;
END $$;
COMMENT ON FUNCTION checks.finish_run(bigint) IS
  'Closes a check run with its permit, finding, error and warning counts, after recording '
  'its findings'' review changes (checks.review_after_run).';

-- The start of the oldest transaction open in this database now (ours included): a row it
-- writes carries a valid_from no earlier than this, and it may commit after a run that starts
-- now has taken its snapshot. An incremental run looks for changes from this time on.
-- SECURITY DEFINER: other sessions' transaction starts are visible to the statistics roles.
CREATE OR REPLACE FUNCTION checks.oldest_open_transaction() RETURNS timestamptz
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT least(min(a.xact_start), now()) FROM pg_stat_activity a
  WHERE a.datname = current_database() AND a.xact_start IS NOT NULL
    AND a.backend_type = 'client backend'  -- autovacuum and other workers write no layer
$$;
COMMENT ON FUNCTION checks.oldest_open_transaction() IS
  'Start of the oldest open transaction of this database (now() when none is older).';

-- p_started_at: when the run began deciding what to evaluate (the nightly's check run first
-- works out which permits its changes reach, sql/285, 0.7-1.0 s at state size, in the same
-- transaction): the run's record covers its whole work. It must lie within the calling
-- transaction (no run is dated before its own work began, or in the future).
DROP FUNCTION IF EXISTS checks.start_run(integer, bigint, bigint, jsonb);
CREATE OR REPLACE FUNCTION checks.start_run(p_plan_area_id integer, p_permit_id bigint,
                                            p_base_run_id bigint DEFAULT NULL,
                                            p_why jsonb DEFAULT NULL,
                                            p_started_at timestamptz DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  rid bigint;
BEGIN
  PERFORM checks.plan_boundary(p_plan_area_id);  -- refuses a plan area without a boundary
  IF p_permit_id IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM core.permit p WHERE p.permit_id = p_permit_id AND p.valid_to IS NULL
         AND p.plan_area_id = p_plan_area_id) THEN
    RAISE EXCEPTION 'permit % is not a current permit of plan area %', p_permit_id,
      p_plan_area_id USING ERRCODE = 'no_data_found';
  END IF;
  IF p_started_at IS NOT NULL
     AND (p_started_at < transaction_timestamp() OR p_started_at > clock_timestamp()) THEN
    RAISE EXCEPTION 'a check run''s start (%) must lie within the transaction that opens it '
      '(% to now)', p_started_at, transaction_timestamp()
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  INSERT INTO checks.run (plan_area_id, permit_id, base_run_id, changes_since, rechecked_why,
                          started_at)
  VALUES (p_plan_area_id, p_permit_id, p_base_run_id, checks.oldest_open_transaction(), p_why,
          coalesce(p_started_at, clock_timestamp()))
  RETURNING run_id INTO rid;
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.start_run(integer, bigint, bigint, jsonb, timestamptz) IS
  'Opens a check run (checks the plan area has a boundary and the permit is current); '
  'p_started_at, within the calling transaction, dates it from when it began deciding what '
  'to evaluate.';

DROP FUNCTION IF EXISTS checks.run_checks(integer, bigint);  -- before p_why was added
CREATE OR REPLACE FUNCTION checks.run_checks(p_plan_area_id integer,
                                             p_permit_id bigint DEFAULT NULL,
                                             p_why jsonb DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  rid bigint;
  ids bigint[] := CASE WHEN p_permit_id IS NULL THEN NULL ELSE ARRAY[p_permit_id] END;
BEGIN
  -- 7(b) on a fresh ledger (sql/282), posted before the run starts: a later incremental run
  -- takes what the recompute posted as seen by this one
  PERFORM checks.bring_ledger_up_to_date(p_plan_area_id);
  rid := checks.start_run(p_plan_area_id, p_permit_id, NULL, p_why);
  PERFORM checks.evaluate(p_plan_area_id, ids);
  PERFORM checks.record_evaluations(rid, p_plan_area_id, ids, p_permit_id IS NULL);
  DROP TABLE pg_temp.check_evaluation;
  UPDATE checks.run SET rechecked_count = (SELECT count(DISTINCT o.permit_id)
                                           FROM checks.outcome o WHERE o.run_id = rid)
  WHERE run_id = rid;
  PERFORM checks.finish_run(rid);
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.run_checks(integer, bigint, jsonb) IS
  'Runs every Rule M check for a plan area (or one permit), records the run, its findings and '
  'an outcome per permit and check; returns the run id. p_why says why a full run was made.';

REVOKE ALL ON FUNCTION checks.current_checks(), checks.evaluation_query(boolean),
  checks.all_evaluations(integer, bigint[]), checks.evaluate(integer, bigint[], boolean),
  checks.record_evaluations(bigint, integer, bigint[], boolean), checks.finish_run(bigint),
  checks.oldest_open_transaction(),
  checks.start_run(integer, bigint, bigint, jsonb, timestamptz),
  checks.run_checks(integer, bigint, jsonb),
  checks.stage_evaluations(uuid, integer, bigint[], boolean), checks.take_staged(uuid),
  checks.run_outcome(bigint)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.current_checks(), checks.evaluation_query(boolean),
  checks.all_evaluations(integer, bigint[]),
  checks.evaluate(integer, bigint[], boolean),
  checks.record_evaluations(bigint, integer, bigint[], boolean), checks.finish_run(bigint),
  checks.oldest_open_transaction(),
  checks.start_run(integer, bigint, bigint, jsonb, timestamptz),
  checks.run_checks(integer, bigint, jsonb),
  checks.stage_evaluations(uuid, integer, bigint[], boolean), checks.take_staged(uuid),
  checks.run_outcome(bigint)
  TO rulem_etl;
GRANT SELECT, INSERT ON checks.run, checks.finding, checks.outcome, checks.run_permit
  TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON checks.buffer_site_cache TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON checks.evaluation_stage TO rulem_etl;
GRANT UPDATE ON checks.run TO rulem_etl;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA checks TO rulem_etl;
