-- 282_check_ledger_fresh: a check run never judges 7(b) on a stale ledger (docs/checks.md,
-- "A fresh ledger"). replacement_deficit and the plan balance read the posted ledger
-- (sql/270); an edit that the change queue (sql/170) holds, or a dated fact that took effect
-- since the last recompute (sql/175), is not posted yet. Every entry point of a check run
-- brings the ledger up to date first: checks.run_checks and checks.run_checks_since call
-- checks.bring_ledger_up_to_date (sql/280, 285), which recomputes in the caller's
-- transaction what waits, or refuses in one line naming what waits when the caller may not
-- recompute. The Python API (rulem_db.checks.run_checks: the CLI's `check`, the nightly)
-- recomputes first in its own transactions (rulem_db.ledger.recompute, with its workers), so
-- the run's own transaction usually finds nothing waiting. Idempotent.

-- What keeps the ledger of a plan area (NULL: of every plan area) from being up to date, in
-- words; NULL when nothing does: change-queue rows waiting (the first three named), or dated
-- facts that took effect since the day of the last completed recompute. SECURITY DEFINER: it
-- names what waits to a caller that may not read the queue (and is then refused).
CREATE OR REPLACE FUNCTION checks.ledger_behind(p_plan_area_id integer DEFAULT NULL)
RETURNS text LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, ledger, core, pg_temp AS $$
DECLARE
  n bigint;
  v_what text;
  v_after date;
  v_dated text[] := '{}';
  v_pa integer;
BEGIN
  SELECT count(*) INTO n FROM ledger.change_queue q
  WHERE q.processed_at IS NULL AND (p_plan_area_id IS NULL OR q.plan_area_id = p_plan_area_id);
  IF n > 0 THEN
    SELECT string_agg(x.w, '; ' ORDER BY x.w) INTO v_what
    FROM (SELECT DISTINCT coalesce('permit ' || fe.feature_key,
                                   'District project ' || q.district_project, 'plan area')
                          || ': ' || q.reason AS w
          FROM ledger.change_queue q
          LEFT JOIN core.feature fe ON fe.feature_id = q.permit_id
          WHERE q.processed_at IS NULL
            AND (p_plan_area_id IS NULL OR q.plan_area_id = p_plan_area_id)
          ORDER BY 1 LIMIT 3) x;
    RETURN format('%s change(s) wait in the ledger''s change queue (%s%s)', n, v_what,
                  CASE WHEN n > 3 THEN '; ...' ELSE '' END);
  END IF;
  SELECT max(r.started_at)::date INTO v_after FROM ledger.run r WHERE r.status = 'done';
  IF v_after IS NOT NULL AND v_after < current_date THEN
    FOR v_pa IN SELECT pa.plan_area_id FROM core.plan_area pa
                WHERE p_plan_area_id IS NULL OR pa.plan_area_id = p_plan_area_id
                ORDER BY 1 LOOP
      v_dated := v_dated || ledger.dated_changes(v_pa, v_after, current_date);
    END LOOP;
    IF cardinality(v_dated) > 0 THEN
      RETURN format('dated facts took effect since the last recompute (%s): %s', v_after,
                    array_to_string(v_dated, '; '));
    END IF;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION checks.ledger_behind(integer) IS
  'What keeps a plan area''s ledger (NULL: every one''s) from being up to date, in words '
  '(change-queue rows waiting, dated facts since the last recompute); NULL when nothing.';

-- The first step of a check run: recompute what waits (the change queue of every plan area,
-- and the owners measured as of today, as `rulem-db recompute` does), in the caller's
-- transaction, one worker; returns the ledger run, or NULL when nothing waited. A caller that
-- may not recompute (no rights on the ledger's functions) is refused, naming what waits.
-- Rows another recompute is posting at the same moment are left to it: the run is refused,
-- to be made again when that one ends, rather than judged without them.
CREATE OR REPLACE FUNCTION checks.bring_ledger_up_to_date(p_plan_area_id integer)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_behind text := checks.ledger_behind(p_plan_area_id);
  rid bigint;
BEGIN
  IF v_behind IS NULL THEN
    RETURN NULL;
  END IF;
  IF NOT (has_schema_privilege('ledger', 'USAGE')
          AND has_function_privilege('ledger.start_run(text, integer)', 'EXECUTE')
          AND has_function_privilege('ledger.enqueue_dated(bigint, date)', 'EXECUTE')
          AND has_function_privilege('ledger.drain_all(bigint, integer)', 'EXECUTE')
          AND has_function_privilege('ledger.finish_run(bigint, text, text)', 'EXECUTE')) THEN
    RAISE EXCEPTION 'the ledger is not up to date: %; % may not recompute it: run rulem-db '
      'recompute as a writer login, then the checks', v_behind, current_user
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  rid := ledger.start_run('queue', 1);
  PERFORM ledger.enqueue_dated(rid);
  PERFORM ledger.drain_all(rid, 100);
  PERFORM 1 FROM ledger.finish_run(rid);
  v_behind := checks.ledger_behind(p_plan_area_id);
  IF v_behind IS NOT NULL THEN
    RAISE EXCEPTION 'the ledger is not up to date: % (another recompute is posting them): '
      'run the checks again when it ends', v_behind USING ERRCODE = 'lock_not_available';
  END IF;
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.bring_ledger_up_to_date(integer) IS
  'First step of a check run: recomputes the ledger''s change queue (and the owners measured '
  'as of today) in the caller''s transaction; returns the ledger run, NULL when nothing '
  'waited; refuses, naming what waits, a caller that may not recompute.';

REVOKE ALL ON FUNCTION checks.ledger_behind(integer), checks.bring_ledger_up_to_date(integer)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.ledger_behind(integer), checks.bring_ledger_up_to_date(integer)
  TO rulem_etl;
