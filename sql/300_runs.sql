-- 300_runs: the nightly reconciliation's bookkeeping in the database: one run at a time per
-- plan area (an advisory lock), the run record, what each run saw, and what changed since the
-- run before. Python (flows/) only calls these and renders the result.
--
-- Functions that read the ledger's and the checks' objects are plpgsql, so this file applies
-- whatever order those files land in; they are resolved when called.
--
-- The run record is append-only for the writers (docs/operations.md, "Safety"): rulem_etl
-- reads ops.run, ops.run_file, ops.run_parcel_balance and ops.run_finding but writes none of
-- them; it moves a run through its protocol with the functions below, which run as the owner
-- (SECURITY DEFINER, fixed search_path, no session setting read): start_run opens a record in
-- the session that holds the plan area's lock, record_run_file, snapshot_run and
-- summarize_run add to a running record, finish_run closes it once as done, partial or
-- failed. Triggers hold the same for every role, the owner included: a run that ended is
-- final, what a record says about its start never changes, nothing is deleted or truncated,
-- and a snapshot changes only while its run is running (a retried step takes it again).

-- ---------------------------------------------------------------------------------------------
-- One reconciliation at a time per plan area: a session-level advisory lock on a fixed key.
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.reconcile_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT hashtext('rulem-db reconciliation') $$;
COMMENT ON FUNCTION ops.reconcile_lock_class() IS
  'First key of the reconciliation advisory lock (the second is the plan area id).';

CREATE OR REPLACE FUNCTION ops.try_reconcile_lock(p_plan_area_id integer) RETURNS boolean
LANGUAGE sql VOLATILE AS
$$ SELECT pg_try_advisory_lock(ops.reconcile_lock_class(), p_plan_area_id) $$;
COMMENT ON FUNCTION ops.try_reconcile_lock(integer) IS
  'Takes the session-level lock that lets one reconciliation (or inbox ingest) of the plan area '
  'run at a time; false at once when another session holds it. Released by '
  'ops.release_reconcile_lock or when the session ends.';

CREATE OR REPLACE FUNCTION ops.release_reconcile_lock(p_plan_area_id integer) RETURNS boolean
LANGUAGE sql VOLATILE AS
$$ SELECT pg_advisory_unlock(ops.reconcile_lock_class(), p_plan_area_id) $$;
COMMENT ON FUNCTION ops.release_reconcile_lock(integer) IS
  'Releases the reconciliation lock of the plan area held by this session.';

CREATE OR REPLACE FUNCTION ops.reconcile_lock_holder(p_plan_area_id integer)
RETURNS TABLE (backend_pid integer, application_name text, client_addr text,
               backend_start timestamptz, usename text, run_id bigint, flow text,
               run_started_at timestamptz, started_via text, host text, pid integer)
LANGUAGE sql STABLE AS $$
  WITH holder AS (
    SELECT l.pid
    FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.database = (
            SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::bigint = (ops.reconcile_lock_class()::bigint & 4294967295)
      AND l.objid::bigint = p_plan_area_id AND l.objsubid = 2
    LIMIT 1
  )
  SELECT h.pid, a.application_name, a.client_addr::text, a.backend_start, a.usename::text,
         r.run_id, r.flow, r.started_at, r.started_via, r.host, r.pid
  FROM holder h
  LEFT JOIN pg_stat_activity a ON a.pid = h.pid
  LEFT JOIN LATERAL (  -- the holder's own record (a record left by a dead run never matches)
    SELECT r.* FROM ops.run r
    WHERE r.plan_area_id = p_plan_area_id AND r.status = 'running' AND r.backend_pid = h.pid
    ORDER BY r.run_id DESC
    LIMIT 1) r ON true
$$;
COMMENT ON FUNCTION ops.reconcile_lock_holder(integer) IS
  'Who holds the reconciliation lock of the plan area: database backend (pid, application, '
  'client, start) and the running ops.run row (run id, start, host and pid of the process).';

-- ---------------------------------------------------------------------------------------------
-- The run record.
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.start_run(p_plan_area_id integer, p_flow text,
                                         p_started_via text, p_host text, p_pid integer,
                                         p_inbox text DEFAULT NULL,
                                         p_prefect_flow_run_id text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_run_id bigint;
BEGIN
  IF NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.pid = pg_backend_pid()
        AND l.classid::bigint = (ops.reconcile_lock_class()::bigint & 4294967295)
        AND l.objid::bigint = p_plan_area_id AND l.objsubid = 2) THEN
    RAISE EXCEPTION 'this session does not hold the reconciliation lock of plan area %',
      p_plan_area_id
      USING HINT = 'Take it with ops.try_reconcile_lock in this session first.';
  END IF;
  INSERT INTO ops.run (plan_area_id, flow, started_via, host, pid, backend_pid, inbox,
                       prefect_flow_run_id, created_by, previous_run_id)
  VALUES (p_plan_area_id, p_flow, p_started_via, p_host, p_pid, pg_backend_pid(), p_inbox,
          p_prefect_flow_run_id, session_user,
          (SELECT max(p.run_id) FROM ops.run p
            WHERE p.plan_area_id = p_plan_area_id AND p.flow = 'nightly_reconciliation'
              AND p.status IN ('done', 'partial')))
  RETURNING run_id INTO v_run_id;
  UPDATE ops.run r
     SET status = 'abandoned', finished_at = clock_timestamp(),
         message = 'found still running by run ' || v_run_id || ': its process had gone'
   WHERE r.plan_area_id = p_plan_area_id AND r.status = 'running' AND r.run_id <> v_run_id;
  RETURN v_run_id;
END $$;
COMMENT ON FUNCTION ops.start_run(integer, text, text, text, integer, text, text) IS
  'Opens a run record (call it in the session that holds the reconciliation lock); marks runs '
  'of the plan area left running by a killed process as abandoned; remembers the last '
  'completed nightly run as the one to compare with. Returns the run id. Runs as the owner: '
  'the writers cannot write ops.run themselves.';

-- A run that is still running, or a one-line refusal: what the protocol's later steps need.
CREATE OR REPLACE FUNCTION ops.running_run(p_run_id bigint) RETURNS ops.run
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v ops.run;
BEGIN
  SELECT * INTO v FROM ops.run r WHERE r.run_id = p_run_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ops.run %: no such run', p_run_id USING ERRCODE = 'no_data_found';
  ELSIF v.status <> 'running' THEN
    RAISE EXCEPTION 'ops.run %: the run ended as %; its record is final', p_run_id, v.status
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION ops.running_run(bigint) IS
  'The run record of a run that is still running, or a refusal naming how it ended.';

CREATE OR REPLACE FUNCTION ops.record_run_file(p_run_id bigint, p_file_name text, p_layer text,
                                               p_sha256 text, p_outcome text,
                                               p_batch_id bigint, p_moved_to text,
                                               p_message text)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_id bigint;
BEGIN
  PERFORM ops.running_run(p_run_id);
  INSERT INTO ops.run_file (run_id, file_name, layer, file_sha256, outcome, batch_id, moved_to,
                            message)
  VALUES (p_run_id, p_file_name, p_layer, p_sha256, p_outcome,
          (SELECT b.batch_id FROM ops.batch b WHERE b.batch_id = p_batch_id), p_moved_to,
          p_message)
  RETURNING run_file_id INTO v_id;
  RETURN v_id;
END $$;
COMMENT ON FUNCTION ops.record_run_file(bigint, text, text, text, text, bigint, text, text) IS
  'Records what became of one inbox file in a running run (loaded, duplicate, quarantined, '
  'left).';

CREATE OR REPLACE FUNCTION ops.finish_run(p_run_id bigint, p_status text, p_message text,
                                          p_report_path text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF p_status IS NULL OR p_status NOT IN ('done', 'partial', 'failed') THEN
    RAISE EXCEPTION 'ops.run %: a run ends as done, partial or failed, not %', p_run_id,
      coalesce(p_status, 'NULL') USING ERRCODE = 'check_violation';
  END IF;
  PERFORM ops.running_run(p_run_id);
  UPDATE ops.run r
     SET status = p_status, message = p_message, finished_at = clock_timestamp(),
         report_path = coalesce(p_report_path, r.report_path),
         files_loaded = f.loaded, files_duplicate = f.duplicate,
         files_quarantined = f.quarantined
    FROM (SELECT count(*) FILTER (WHERE outcome = 'loaded')::integer AS loaded,
                 count(*) FILTER (WHERE outcome = 'duplicate')::integer AS duplicate,
                 count(*) FILTER (WHERE outcome = 'quarantined')::integer AS quarantined
            FROM ops.run_file WHERE run_id = p_run_id) f
   WHERE r.run_id = p_run_id;
END $$;
COMMENT ON FUNCTION ops.finish_run(bigint, text, text, text) IS
  'Closes a run record with its status (done, partial, failed), message and report folder; '
  'counts its inbox files.';

-- ---------------------------------------------------------------------------------------------
-- What a run saw, and what changed since the run before.
-- ---------------------------------------------------------------------------------------------
-- What the parcel balances of a plan area are read from, as a fingerprint: how many statements
-- have written core.parcel (ops.layer_write, sql/285: any new, changed, retired or reinstated
-- parcel adds one) and how many ledger entries the plan area has (the ledger is append-only).
-- Counts, not the newest ids: a transaction that commits after a later one would leave the
-- newest id unchanged, never the count. Equal fingerprints, equal pub.parcel_balance rows.
CREATE OR REPLACE FUNCTION ops.balance_state(p_plan_area_id integer) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'parcel_writes', (SELECT count(*) FROM ops.layer_write w
                      WHERE w.table_name = 'core.parcel'),
    'entries', (SELECT count(*) FROM ledger.entry e WHERE e.plan_area_id = p_plan_area_id))
$$;
COMMENT ON FUNCTION ops.balance_state(integer) IS
  'Fingerprint of what a plan area''s parcel balances are computed from: statements that '
  'wrote core.parcel, ledger entries of the plan area.';

-- The runs whose snapshot rows hold what a run saw (itself, or the run it saw the same as).
CREATE OR REPLACE FUNCTION ops.parcels_seen_in(p_run_id bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT coalesce(r.parcels_seen_in_run_id, r.run_id) FROM ops.run r WHERE r.run_id = p_run_id
$$;
CREATE OR REPLACE FUNCTION ops.findings_seen_in(p_run_id bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT coalesce(r.findings_seen_in_run_id, r.run_id) FROM ops.run r WHERE r.run_id = p_run_id
$$;
COMMENT ON FUNCTION ops.parcels_seen_in(bigint) IS
  'Run whose ops.run_parcel_balance rows hold the balances a run saw.';
COMMENT ON FUNCTION ops.findings_seen_in(bigint) IS
  'Run whose ops.run_finding rows hold the findings a run saw.';

-- A finding's parcel by its PIN as shown (core.pin_display) as the parcel is now: its current
-- version's PIN, else the parcel's key. Asked only of findings that name a parcel (a state's
-- findings name none: joined for every finding, the planner hashed every feature and parcel
-- of the plan area, 0.6-0.8 s).
CREATE OR REPLACE FUNCTION ops.finding_pin(p_parcel_id bigint) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT core.pin_display(coalesce(
    (SELECT pc.pin FROM core.parcel pc WHERE pc.parcel_id = p_parcel_id AND pc.valid_to IS NULL),
    (SELECT cf.feature_key FROM core.feature cf WHERE cf.feature_id = p_parcel_id)))
$$;
COMMENT ON FUNCTION ops.finding_pin(bigint) IS
  'The PIN, as shown, of the parcel a finding names, as the parcel is now.';

-- Whether a run's snapshot takes the rows of the findings its check run carried over from
-- the previous snapshot (ops.copy_carried_findings): when the check run's base is the check
-- run whose findings that snapshot holds. ops.snapshot_run copies then, and
-- ops.run_finding_change leaves those permits out then: one condition for both.
CREATE OR REPLACE FUNCTION ops.snapshot_copies_carried(p_check_run_id bigint,
                                                       p_prev_seen bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT c.base_run_id = s.check_run_id
                   FROM checks.run c, ops.run s
                   WHERE c.run_id = p_check_run_id AND s.run_id = p_prev_seen), false)
$$;
COMMENT ON FUNCTION ops.snapshot_copies_carried(bigint, bigint) IS
  'Whether a run''s snapshot copies its carried-over findings from the previous snapshot '
  '(the snapshot''s run p_prev_seen): its check run''s base is that snapshot''s check run.';

-- The snapshot rows of a check run's findings, each with the key that identifies it across
-- runs (paragraph, check, permit, parcel, feature, and its rank among like ones of the permit);
-- with p_fresh_only, of the findings the run evaluated (not carried over) only.
CREATE OR REPLACE FUNCTION ops.run_finding_rows(p_check_run_id bigint, p_plan_area_id integer,
                                                p_fresh_only boolean)
RETURNS TABLE (finding_key text, finding_id bigint, paragraph text, check_code text,
               severity text, permit_no text, pin text, measured_value numeric,
               limit_value numeric, unit text, message text)
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT concat_ws('|', k.paragraph, k.check_code, coalesce(k.permit_no, '-'),
                   coalesce(k.pin_key, '-'), coalesce(k.feature_id::text, '-'),
                   row_number() OVER (PARTITION BY k.paragraph, k.check_code, k.permit_no,
                                                   k.pin_key, k.feature_id
                                      ORDER BY k.x, k.y, k.measured_value, k.message,
                                               k.finding_id)),
         k.finding_id, k.paragraph, k.check_code, k.severity, k.permit_no, k.pin,
         k.measured_value, k.limit_value, k.unit, k.message
  FROM (SELECT fi.finding_id, fi.paragraph, fi.check_code, fi.severity,
               pf.feature_key AS permit_no, fi.feature_id, fi.measured_value,
               fi.limit_value, fi.unit, fi.message,
               round(ST_XMin(fi.geom)::numeric, 1) AS x,
               round(ST_YMin(fi.geom)::numeric, 1) AS y,
               -- a finding's parcel looked up only when it has one (ops.finding_pin)
               CASE WHEN fi.parcel_id IS NOT NULL THEN
                 (SELECT cf.feature_key FROM core.feature cf
                  WHERE cf.feature_id = fi.parcel_id) END AS pin_key,
               CASE WHEN fi.parcel_id IS NOT NULL THEN ops.finding_pin(fi.parcel_id) END
                 AS pin
        FROM checks.finding fi
        LEFT JOIN core.feature pf ON pf.feature_id = fi.permit_id
        WHERE fi.run_id = p_check_run_id AND fi.plan_area_id = p_plan_area_id
          AND NOT (p_fresh_only AND fi.carried_from_id IS NOT NULL)) k
$$;
COMMENT ON FUNCTION ops.run_finding_rows(bigint, integer, boolean) IS
  'The rows ops.run_finding keeps of a check run''s findings, each with its key across runs; '
  'with p_fresh_only, of the findings not carried over only.';

-- The snapshot rows of the findings a check run carried over: their sources' rows in the
-- previous run's snapshot, with the run's own finding ids (ops.snapshot_run's only caller; runs
-- as its owner). Hashed, never a nested loop: right after a check run the planner has no
-- statistics for its findings, estimated one, and probed the previous snapshot once per
-- finding, by its run alone (240,000 rows for each of 216,000 findings at state size, for
-- minutes) or by (run_id, finding_id), revision 0048 (2.3 s of random reads against 0.9 s).
CREATE OR REPLACE FUNCTION ops.copy_carried_findings(p_run_id bigint, p_check_run_id bigint,
                                                     p_prev_seen bigint)
RETURNS bigint LANGUAGE sql VOLATILE SET enable_nestloop = off
SET search_path = pg_catalog, public, pg_temp AS $$
  WITH copied AS (
    INSERT INTO ops.run_finding (run_id, finding_key, finding_id, paragraph, check_code,
                                 severity, permit_no, pin, measured_value, limit_value, unit,
                                 message)
    SELECT p_run_id, p.finding_key, f.finding_id, p.paragraph, p.check_code, p.severity,
           p.permit_no,
           -- the parcel's PIN as it is now (a parcel may have a new version since)
           CASE WHEN f.parcel_id IS NULL THEN p.pin ELSE ops.finding_pin(f.parcel_id) END,
           p.measured_value, p.limit_value, p.unit, p.message
    FROM checks.finding f
    JOIN ops.run_finding p ON p.run_id = p_prev_seen AND p.finding_id = f.carried_from_id
    WHERE f.run_id = p_check_run_id AND f.carried_from_id IS NOT NULL
    RETURNING 1)
  SELECT count(*) FROM copied
$$;
COMMENT ON FUNCTION ops.copy_carried_findings(bigint, bigint, bigint) IS
  'Adds to a run''s snapshot the rows of the findings its check run carried over, taken from '
  'the previous run''s snapshot; returns how many (ops.snapshot_run).';

CREATE OR REPLACE FUNCTION ops.snapshot_run(p_run_id bigint, p_ledger_run_id bigint,
                                            p_check_run_id bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
  v_plan integer;
  v_prev ops.run;
  v_state jsonb;
  v_copy boolean;
  v_copied bigint;
  v_keyed bigint;
  v_prev_seen bigint;
BEGIN
  v_plan := (ops.running_run(p_run_id)).plan_area_id;
  IF p_ledger_run_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM ledger.run l WHERE l.run_id = p_ledger_run_id) THEN
    RAISE EXCEPTION 'ops.run %: ledger run % does not exist', p_run_id, p_ledger_run_id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF p_check_run_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM checks.run c
                     WHERE c.run_id = p_check_run_id AND c.plan_area_id = v_plan) THEN
    RAISE EXCEPTION 'ops.run %: check run % is no check run of its plan area', p_run_id,
      p_check_run_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT p.* INTO v_prev FROM ops.run r JOIN ops.run p ON p.run_id = r.previous_run_id
  WHERE r.run_id = p_run_id;
  v_state := ops.balance_state(v_plan);
  UPDATE ops.run SET ledger_run_id = p_ledger_run_id, check_run_id = p_check_run_id,
         balance_state = v_state, parcels_seen_in_run_id = NULL,
         findings_seen_in_run_id = NULL, finding_count = NULL
   WHERE run_id = p_run_id;
  DELETE FROM ops.run_parcel_balance WHERE run_id = p_run_id;
  DELETE FROM ops.run_finding WHERE run_id = p_run_id;

  -- The same as the run before (a quiet night): refer to its rows instead of copying them.
  IF v_prev.balance_state = v_state THEN
    UPDATE ops.run SET parcels_seen_in_run_id = ops.parcels_seen_in(v_prev.run_id)
     WHERE run_id = p_run_id;
  ELSE
  -- A parcel without a total (ledger.parcel_total, kept at posting) has nothing required or
  -- counted: its status is 'none' (sql/180). So only the parcels with a total are read, each
  -- by its key (OFFSET 0 keeps the lookup per parcel): a state's 54,000 of 1,000,000 parcels,
  -- 0.29 s (0.41 s with empty shared buffers), where filtering every parcel of
  -- pub.parcel_balance on its status took 0.58 s (0.47-0.54 s).
  INSERT INTO ops.run_parcel_balance (run_id, parcel_id, pin, impact_acres, required_acres,
                                      credit_acres, credit_proposed_acres, credit_hosted_acres,
                                      balance_acres, status)
  SELECT p_run_id, b.parcel_id, b.pin, b.impact_acres, b.required_acres, b.credit_acres,
         b.credit_proposed_acres, b.credit_hosted_acres, b.balance_acres, b.status
  FROM ledger.parcel_total t
  CROSS JOIN LATERAL (SELECT x.* FROM pub.parcel_balance x
                      WHERE x.parcel_id = t.parcel_id AND x.plan_area_id = t.plan_area_id
                      OFFSET 0) b
  WHERE t.plan_area_id = v_plan AND b.status IS DISTINCT FROM 'none';
  END IF;

  IF v_prev.check_run_id = p_check_run_id THEN  -- the checks found nothing to look at again
    UPDATE ops.run SET findings_seen_in_run_id = ops.findings_seen_in(v_prev.run_id),
                       finding_count = v_prev.finding_count
     WHERE run_id = p_run_id;
    RETURN;
  END IF;
  -- An incremental check run copied the findings of the permits it did not evaluate again
  -- (carried_from_id, sql/285). When the previous run's snapshot holds their sources (its check
  -- run is this one's base), their rows are the sources' rows, keys included: a permit's
  -- findings are carried all or none, and the key numbers like findings within a permit. Only
  -- the findings evaluated again are keyed here (a state's 1 % night: 10 % of 240,000).
  v_prev_seen := ops.findings_seen_in(v_prev.run_id);
  v_copy := ops.snapshot_copies_carried(p_check_run_id, v_prev_seen);
  IF v_copy THEN
    v_copied := ops.copy_carried_findings(p_run_id, p_check_run_id, v_prev_seen);
    IF v_copied <> (SELECT count(*) FROM checks.finding f
                    WHERE f.run_id = p_check_run_id AND f.carried_from_id IS NOT NULL) THEN
      RAISE EXCEPTION 'ops.run %: only % of the findings check run % carried over have a row '
        'in the snapshot of run %', p_run_id, v_copied, p_check_run_id, v_prev_seen;
    END IF;
  END IF;
  INSERT INTO ops.run_finding (run_id, finding_key, finding_id, paragraph, check_code, severity,
                               permit_no, pin, measured_value, limit_value, unit, message)
  SELECT p_run_id, k.finding_key, k.finding_id, k.paragraph, k.check_code, k.severity,
         k.permit_no, k.pin, k.measured_value, k.limit_value, k.unit, k.message
  FROM ops.run_finding_rows(p_check_run_id, v_plan, v_copy) k;
  -- how many rows the snapshot holds, counted as they were written: the run's summary and
  -- its report's review sections read it instead of counting a state's 240,000 rows again
  -- (0.3-0.4 s each)
  GET DIAGNOSTICS v_keyed = ROW_COUNT;
  UPDATE ops.run SET finding_count = coalesce(v_copied, 0) + v_keyed WHERE run_id = p_run_id;
END $$;
COMMENT ON FUNCTION ops.snapshot_run(bigint, bigint, bigint) IS
  'Keeps what a run saw: the parcel balances (pub.parcel_balance, parcels with impact or '
  'credit) and the findings of its check run, each with a key that identifies it across runs; '
  'when either is what the run before saw, a reference to that run''s rows instead. Only '
  'while the run is running.';

CREATE OR REPLACE FUNCTION ops.run_finding_change(p_run_id bigint)
RETURNS TABLE (change text, finding_key text, paragraph text, check_code text, severity text,
               permit_no text, pin text, measured_value numeric, limit_value numeric,
               unit text, message text)
-- Hash joins only, planned with the runs known: right after a run its snapshot's rows and its
-- check run's permits have no planner statistics yet, and an estimate of one row would make
-- the left-out permits (below) a nested loop over 240,000 findings x 18,000 permits at state
-- size; a merge join sorted 240,000 findings by permit twice (0.9 s against 0.3 s).
LANGUAGE plpgsql STABLE SET enable_nestloop = off SET enable_mergejoin = off AS $$
#variable_conflict use_column
DECLARE
  v_cur bigint;
  v_prev bigint;
  v_plan integer;
  v_check bigint;
  v_carried text[];
BEGIN
  SELECT ops.findings_seen_in(r.run_id), ops.findings_seen_in(r.previous_run_id), r.plan_area_id
    INTO v_cur, v_prev, v_plan
  FROM ops.run r WHERE r.run_id = p_run_id;
  IF v_cur IS NULL OR v_cur IS NOT DISTINCT FROM v_prev THEN
    RETURN;  -- the same rows as the previous run: nothing changed
  END IF;
  -- The permits whose rows in the run's snapshot are copies of the previous snapshot's
  -- (ops.copy_carried_findings): those its check run carried over (checks.run_permit, the
  -- outcomes of an earlier run), when that check run's base is the previous snapshot's
  -- (ops.snapshot_copies_carried: ops.snapshot_run copies then, and only then). A carried
  -- permit's findings are all of its findings in the base run, so its rows are the same on
  -- both sides: left out of the comparison, which then joins the findings of the permits
  -- evaluated again (a state's 1 % night: 2,000 of 20,000 permits, 0.2-0.3 s, where joining
  -- every finding took 0.33-0.44 s alone and up to 1.2 s beside the report's other reads).
  SELECT rc.check_run_id INTO v_check FROM ops.run rc WHERE rc.run_id = v_cur;
  IF NOT ops.snapshot_copies_carried(v_check, v_prev) THEN
    v_check := NULL;  -- every row keyed anew: none left out
  END IF;
  v_carried := ARRAY(
    SELECT pf.feature_key
    FROM checks.run_permit cp
    JOIN core.feature pf ON pf.feature_id = cp.permit_id AND pf.layer = 'permit'
                        AND pf.plan_area_id = v_plan
    WHERE cp.run_id = v_check AND cp.outcome_run_id <> v_check);
  RETURN QUERY
  WITH carried AS (SELECT unnest(v_carried) AS feature_key),
  cur AS (SELECT f.* FROM ops.run_finding f
          WHERE f.run_id = v_cur
            AND NOT EXISTS (SELECT 1 FROM carried k WHERE k.feature_key = f.permit_no)),
  prev AS (SELECT f.* FROM ops.run_finding f
           WHERE f.run_id = v_prev
             AND NOT EXISTS (SELECT 1 FROM carried k WHERE k.feature_key = f.permit_no))
  -- one pass over both runs' rows (a key is one row of a run): a state's 240,000 findings
  -- twice, where three passes (new, resolved, changed) were 1.8 s
  SELECT x.* FROM (
    SELECT CASE WHEN p.finding_key IS NULL THEN 'new' WHEN c.finding_key IS NULL THEN 'resolved'
                ELSE 'changed' END AS change,
           coalesce(c.finding_key, p.finding_key) AS finding_key,
           CASE WHEN c.finding_key IS NULL THEN p.paragraph ELSE c.paragraph END AS paragraph,
           CASE WHEN c.finding_key IS NULL THEN p.check_code ELSE c.check_code END
             AS check_code,
           CASE WHEN c.finding_key IS NULL THEN p.severity ELSE c.severity END AS severity,
           CASE WHEN c.finding_key IS NULL THEN p.permit_no ELSE c.permit_no END AS permit_no,
           CASE WHEN c.finding_key IS NULL THEN p.pin ELSE c.pin END AS pin,
           CASE WHEN c.finding_key IS NULL THEN p.measured_value ELSE c.measured_value END
             AS measured_value,
           CASE WHEN c.finding_key IS NULL THEN p.limit_value ELSE c.limit_value END
             AS limit_value,
           CASE WHEN c.finding_key IS NULL THEN p.unit ELSE c.unit END AS unit,
           CASE WHEN c.finding_key IS NULL THEN p.message
                WHEN p.finding_key IS NULL THEN c.message
                ELSE c.message || ' (was: ' || coalesce(p.measured_value::text, '-') || ' '
                     || coalesce(p.unit, '') || ', limit '
                     || coalesce(p.limit_value::text, '-') || ')' END AS message
    FROM cur c FULL JOIN prev p ON p.finding_key = c.finding_key
    WHERE c.finding_key IS NULL OR p.finding_key IS NULL
       OR c.measured_value IS DISTINCT FROM p.measured_value
       OR c.limit_value IS DISTINCT FROM p.limit_value OR c.severity IS DISTINCT FROM p.severity
  ) x
  ORDER BY 1, 6, 3, 4, 2;
END $$;
COMMENT ON FUNCTION ops.run_finding_change(bigint) IS
  'Findings of a run that the previous completed run did not have (new), findings of the '
  'previous run that are gone (resolved), and findings of both whose measured value, limit or '
  'severity changed (changed; the message says what it was). With no previous run every '
  'finding is new.';

-- The findings of a run by review (sql/287), for the report: new (first found since the
-- run before), reopened (found again after they were resolved), resolved (no longer found
-- by a check run that covered them), and those still there, by their state now: still_open
-- (open or acknowledged) and waived. The window is the check runs after the previous
-- completed run's, up to this run's (permit runs in between included).
-- Each finding's latest run event (found, reopened, resolved) in the window of check runs
-- (p_prev, p_cur] of a plan area: what puts a finding in the new, reopened or resolved section.
CREATE OR REPLACE FUNCTION ops.run_review_event(p_plan_area_id integer, p_prev bigint,
                                                p_cur bigint)
RETURNS TABLE (finding_case_id bigint, event text)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT ON (v.finding_case_id) v.finding_case_id, v.event
  FROM checks.finding_review v
  JOIN checks.finding_case c ON c.finding_case_id = v.finding_case_id
  WHERE c.plan_area_id = p_plan_area_id AND v.run_id > coalesce(p_prev, 0)
    AND v.run_id <= p_cur AND v.event IN ('found', 'reopened', 'resolved')
  ORDER BY v.finding_case_id, v.review_id DESC
$$;
COMMENT ON FUNCTION ops.run_review_event(integer, bigint, bigint) IS
  'Each finding''s latest run event (found, reopened, resolved) in the check runs after '
  'p_prev up to p_cur of a plan area.';

-- The findings resolved in that window (their case resolved now), each as last found.
CREATE OR REPLACE FUNCTION ops.run_review_resolved(p_plan_area_id integer, p_prev bigint,
                                                   p_cur bigint)
RETURNS TABLE (finding_case_id bigint, review_state text, waiver_reference text,
               review_note text, reviewed_by text, paragraph text, check_code text,
               severity text, permit_no text, pin text, measured_value numeric,
               limit_value numeric, unit text, message text)
LANGUAGE sql STABLE AS $$
  SELECT c.finding_case_id, c.review_state, c.waiver_reference, c.review_note, c.reviewed_by,
         l.paragraph, l.check_code, l.severity, pf.feature_key, cf.feature_key,
         l.measured_value, l.limit_value, l.unit, l.message
  FROM ops.run_review_event(p_plan_area_id, p_prev, p_cur) ev
  JOIN checks.finding_case c ON c.finding_case_id = ev.finding_case_id
  CROSS JOIN LATERAL (  -- the finding as last found
    SELECT fi.* FROM checks.finding_occurrence o
    JOIN checks.finding fi ON fi.finding_id = o.finding_id
    WHERE o.finding_case_id = c.finding_case_id
    ORDER BY o.finding_id DESC LIMIT 1) l
  LEFT JOIN core.feature pf ON pf.feature_id = l.permit_id
  LEFT JOIN core.feature cf ON cf.feature_id = l.parcel_id
  WHERE ev.event = 'resolved' AND c.review_state = 'resolved'
$$;
COMMENT ON FUNCTION ops.run_review_resolved(integer, bigint, bigint) IS
  'The findings resolved by the check runs after p_prev up to p_cur of a plan area (their '
  'case resolved now), each as last found.';

CREATE OR REPLACE FUNCTION ops.run_finding_review(p_run_id bigint)
RETURNS TABLE (section text, finding_case_id bigint, review_state text,
               waiver_reference text, review_note text, reviewed_by text, paragraph text,
               check_code text, severity text, permit_no text, pin text,
               measured_value numeric, limit_value numeric, unit text, message text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_plan integer;
  v_cur bigint;
  v_prev bigint;
BEGIN
  SELECT r.plan_area_id, r.check_run_id, p.check_run_id INTO v_plan, v_cur, v_prev
  FROM ops.run r LEFT JOIN ops.run p ON p.run_id = r.previous_run_id
  WHERE r.run_id = p_run_id;
  RETURN QUERY
  WITH ev AS (  -- each finding's latest run event in the window
    SELECT * FROM ops.run_review_event(v_plan, v_prev, v_cur)
  ), cur AS (
    SELECT f.*, o.finding_case_id FROM ops.run_finding f
    JOIN checks.finding_occurrence o ON o.finding_id = f.finding_id
    WHERE f.run_id = ops.findings_seen_in(p_run_id)
  )
  SELECT CASE ev.event WHEN 'found' THEN 'new' WHEN 'reopened' THEN 'reopened'
              ELSE CASE WHEN c.review_state = 'waived' THEN 'waived' ELSE 'still_open' END
         END,
         c.finding_case_id, c.review_state, c.waiver_reference, c.review_note, c.reviewed_by,
         f.paragraph, f.check_code, f.severity, f.permit_no, f.pin, f.measured_value,
         f.limit_value, f.unit, f.message
  FROM cur f
  JOIN checks.finding_case c ON c.finding_case_id = f.finding_case_id
  LEFT JOIN ev ON ev.finding_case_id = f.finding_case_id AND ev.event <> 'resolved'
  UNION ALL
  SELECT 'resolved', r.* FROM ops.run_review_resolved(v_plan, v_prev, v_cur) r
  ORDER BY 1, 10, 7, 8, 2;
END $$;
COMMENT ON FUNCTION ops.run_finding_review(bigint) IS
  'The findings of a run by review section: new, reopened, resolved (by the check runs after '
  'the previous completed run''s), still_open (open or acknowledged) and waived, each with '
  'its identity (finding_case_id) and review state now.';

-- The report's page of them: how many each section has and its first p_rows, in the page's
-- order (permit, paragraph, check, then the finding's key in the run; resolved findings, which
-- have none, by their ID). ops.run_finding_review joins every finding of the run to its case
-- (a state's 240,000, and the occurrences of every run before: 1.7 s, and 0.5 s to sort them
-- for a page of 400). Here only the findings outside "still open" are joined, the few found,
-- reopened or waived, and "still open" is counted as the rest and its first rows taken from
-- the run's findings in order (a top-N sort), the marked ones skipped. The sections are
-- ops.run_finding_review's, row for row (tests/checks/test_finding_review.py).
CREATE OR REPLACE FUNCTION ops.run_finding_review_first(p_run_id bigint, p_rows integer)
RETURNS TABLE (section text, section_rows bigint, finding_case_id bigint, review_state text,
               waiver_reference text, review_note text, reviewed_by text, paragraph text,
               check_code text, severity text, permit_no text, pin text,
               measured_value numeric, limit_value numeric, unit text, message text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_plan integer;
  v_cur bigint;
  v_prev bigint;
  v_seen bigint;
  v_total bigint;
  v_marked bigint[];  -- the run's findings (checks.finding ids) that are not still open
BEGIN
  SELECT r.plan_area_id, r.check_run_id, p.check_run_id INTO v_plan, v_cur, v_prev
  FROM ops.run r LEFT JOIN ops.run p ON p.run_id = r.previous_run_id
  WHERE r.run_id = p_run_id;
  v_seen := ops.findings_seen_in(p_run_id);
  SELECT coalesce(r.finding_count, (SELECT count(*) FROM ops.run_finding f
                                    WHERE f.run_id = v_seen))
    INTO v_total FROM ops.run r WHERE r.run_id = p_run_id;
  WITH ev AS (SELECT * FROM ops.run_review_event(v_plan, v_prev, v_cur))
  SELECT coalesce(array_agg(o.finding_id), '{}') INTO v_marked
  FROM (SELECT ev.finding_case_id FROM ev WHERE ev.event <> 'resolved'
        UNION
        SELECT c.finding_case_id FROM checks.finding_case c
        WHERE c.plan_area_id = v_plan AND c.review_state = 'waived') m
  JOIN checks.finding_occurrence o ON o.finding_case_id = m.finding_case_id
                                  AND o.run_id = (SELECT r.check_run_id FROM ops.run r
                                                  WHERE r.run_id = v_seen);
  RETURN QUERY
  WITH ev AS MATERIALIZED (SELECT * FROM ops.run_review_event(v_plan, v_prev, v_cur)),
  open_first AS MATERIALIZED (  -- enough of the run's first findings to hold the page's
    SELECT f.* FROM ops.run_finding f  -- still open ones after the marked are skipped
    WHERE f.run_id = v_seen
    ORDER BY f.permit_no, f.paragraph, f.check_code, f.finding_key
    LIMIT p_rows + cardinality(v_marked)
  ), rows AS (
    SELECT CASE ev.event WHEN 'found' THEN 'new' WHEN 'reopened' THEN 'reopened'
                ELSE CASE WHEN c.review_state = 'waived' THEN 'waived' ELSE 'still_open' END
           END AS section,
           f.finding_key, c.finding_case_id, c.review_state, c.waiver_reference,
           c.review_note, c.reviewed_by, f.paragraph, f.check_code, f.severity, f.permit_no,
           f.pin, f.measured_value, f.limit_value, f.unit, f.message
    FROM ops.run_finding f
    JOIN checks.finding_occurrence o ON o.finding_id = f.finding_id
    JOIN checks.finding_case c ON c.finding_case_id = o.finding_case_id
    LEFT JOIN ev ON ev.finding_case_id = c.finding_case_id AND ev.event <> 'resolved'
    WHERE f.run_id = v_seen AND f.finding_id = ANY (v_marked)
    UNION ALL
    SELECT 'still_open', f.finding_key, c.finding_case_id, c.review_state, c.waiver_reference,
           c.review_note, c.reviewed_by, f.paragraph, f.check_code, f.severity, f.permit_no,
           f.pin, f.measured_value, f.limit_value, f.unit, f.message
    FROM open_first f
    CROSS JOIN LATERAL (SELECT o.finding_case_id FROM checks.finding_occurrence o
                        WHERE o.finding_id = f.finding_id) o
    JOIN checks.finding_case c ON c.finding_case_id = o.finding_case_id
    WHERE f.finding_id <> ALL (v_marked)
    UNION ALL
    SELECT 'resolved', NULL, r.* FROM ops.run_review_resolved(v_plan, v_prev, v_cur) r
  ), numbered AS (
    SELECT r.*, row_number() OVER (PARTITION BY r.section
                                   ORDER BY r.permit_no, r.paragraph, r.check_code,
                                            r.finding_key, r.finding_case_id) AS n,
           count(*) OVER (PARTITION BY r.section) AS in_rows
    FROM rows r
  )
  SELECT x.section,
         CASE WHEN x.section = 'still_open' THEN v_total - cardinality(v_marked)
              ELSE x.in_rows END,
         x.finding_case_id, x.review_state, x.waiver_reference, x.review_note, x.reviewed_by,
         x.paragraph, x.check_code, x.severity, x.permit_no, x.pin, x.measured_value,
         x.limit_value, x.unit, x.message
  FROM numbered x WHERE x.n <= p_rows
  ORDER BY x.section, x.n;
END $$;
COMMENT ON FUNCTION ops.run_finding_review_first(bigint, integer) IS
  'The first p_rows findings of each review section of a run (ops.run_finding_review), by '
  'permit, paragraph, check and finding, with how many the section has (section_rows).';

CREATE OR REPLACE FUNCTION ops.run_parcel_change(p_run_id bigint)
RETURNS TABLE (parcel_id bigint, pin text, status_before text, status_after text,
               required_before numeric, required_after numeric, credit_before numeric,
               credit_after numeric, balance_before numeric, balance_after numeric,
               balance_change numeric)
LANGUAGE sql STABLE AS $$
  WITH src AS (  -- the rows each run saw; the same rows: nothing changed
    SELECT ops.parcels_seen_in(r.run_id) AS cur, ops.parcels_seen_in(r.previous_run_id) AS prev
    FROM ops.run r WHERE r.run_id = p_run_id),
  cur AS (SELECT b.* FROM ops.run_parcel_balance b, src
          WHERE b.run_id = src.cur AND src.cur IS DISTINCT FROM src.prev),
  prev AS (SELECT b.* FROM ops.run_parcel_balance b, src
           WHERE b.run_id = src.prev AND src.cur IS DISTINCT FROM src.prev)
  SELECT coalesce(c.parcel_id, p.parcel_id), coalesce(c.pin, p.pin),
         coalesce(p.status, 'none'), coalesce(c.status, 'none'),
         coalesce(p.required_acres, 0), coalesce(c.required_acres, 0),
         coalesce(p.credit_acres, 0), coalesce(c.credit_acres, 0),
         coalesce(p.balance_acres, 0), coalesce(c.balance_acres, 0),
         coalesce(c.balance_acres, 0) - coalesce(p.balance_acres, 0)
  FROM cur c FULL JOIN prev p ON p.parcel_id = c.parcel_id
  WHERE coalesce(p.status, 'none') IS DISTINCT FROM coalesce(c.status, 'none')
     OR round(coalesce(p.balance_acres, 0), 4) <> round(coalesce(c.balance_acres, 0), 4)
     OR round(coalesce(p.required_acres, 0), 4) <> round(coalesce(c.required_acres, 0), 4)
     OR round(coalesce(p.credit_acres, 0), 4) <> round(coalesce(c.credit_acres, 0), 4)
  ORDER BY 2
$$;
COMMENT ON FUNCTION ops.run_parcel_change(bigint) IS
  'Parcels whose status, balance, required or counted credit (to 4 decimals of an acre, the '
  'reported precision) differ between a run and the previous completed run.';

CREATE OR REPLACE FUNCTION ops.plan_figures(p_plan jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'number'
                                      THEN to_jsonb(round((e.value #>> '{}')::numeric, 4))
                                      ELSE e.value END)
  FROM jsonb_each(p_plan) e
  WHERE e.key LIKE '%acres' OR e.key = 'status'
$$;
COMMENT ON FUNCTION ops.plan_figures(jsonb) IS
  'The figures of a plan balance row that a change is judged by: acres (to 4 decimals) and '
  'status.';

CREATE OR REPLACE FUNCTION ops.summarize_run(p_run_id bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_run ops.run;
  v_plan jsonb;
  v_prev_plan jsonb;
  v_prev_state jsonb;
  v_entries integer;
  v_between integer;
  v_new integer;
  v_resolved integer;
  v_moved integer;
  v_parcels integer;
  v_findings integer;
  v_files integer;
BEGIN
  v_run := ops.running_run(p_run_id);
  SELECT plan_totals, balance_state INTO v_prev_plan, v_prev_state
  FROM ops.run WHERE run_id = v_run.previous_run_id;
  IF v_run.parcels_seen_in_run_id IS NOT NULL AND v_prev_plan IS NOT NULL THEN
    v_plan := v_prev_plan;  -- the same ledger entries (ops.balance_state): the same totals
  ELSE
    SELECT to_jsonb(b) - 'geom' INTO v_plan
    FROM pub.plan_balance b
    WHERE b.plan_area_id = v_run.plan_area_id;
  END IF;
  -- This run's entries, and those other recomputes posted between the two runs (rulem-db
  -- watch, rulem-db recompute): the plan area's entries at this run's snapshot minus those
  -- at the previous one's (ops.balance_state), minus this run's own in the plan area.
  SELECT count(*),
         greatest(coalesce((v_run.balance_state ->> 'entries')::integer
                           - (v_prev_state ->> 'entries')::integer
                           - count(*) FILTER (WHERE plan_area_id = v_run.plan_area_id), 0), 0)
    INTO v_entries, v_between
    FROM ledger.entry WHERE run_id = v_run.ledger_run_id;
  SELECT count(*) FILTER (WHERE change = 'new'), count(*) FILTER (WHERE change = 'resolved'),
         count(*) FILTER (WHERE change = 'changed')
    INTO v_new, v_resolved, v_moved FROM ops.run_finding_change(p_run_id);
  SELECT count(*) INTO v_parcels FROM ops.run_parcel_change(p_run_id);
  v_findings := coalesce(v_run.finding_count, (SELECT count(*) FROM ops.run_finding
                                               WHERE run_id = ops.findings_seen_in(p_run_id)));
  SELECT count(*) INTO v_files FROM ops.run_file WHERE run_id = p_run_id AND outcome = 'loaded';
  UPDATE ops.run r
     SET files_loaded = f.loaded, files_duplicate = f.duplicate,
         files_quarantined = f.quarantined
    FROM (SELECT count(*) FILTER (WHERE outcome = 'loaded')::integer AS loaded,
                 count(*) FILTER (WHERE outcome = 'duplicate')::integer AS duplicate,
                 count(*) FILTER (WHERE outcome = 'quarantined')::integer AS quarantined
            FROM ops.run_file WHERE run_id = p_run_id) f
   WHERE r.run_id = p_run_id;
  UPDATE ops.run
     SET plan_totals = v_plan, entries_posted = v_entries, finding_count = v_findings,
         findings_new = v_new, findings_resolved = v_resolved, parcels_changed = v_parcels,
         changed = (v_files + v_entries + v_between + v_new + v_resolved + v_moved
                    + v_parcels) > 0
                   OR ops.plan_figures(v_plan) IS DISTINCT FROM ops.plan_figures(v_prev_plan),
         changes = jsonb_build_object(
           'files_loaded', v_files, 'entries_posted', v_entries,
           'entries_posted_between', v_between, 'findings_new', v_new,
           'findings_resolved', v_resolved, 'findings_changed', v_moved,
           'parcels_changed', v_parcels,
           'plan_before', v_prev_plan, 'plan_after', v_plan,
           'previous_run_id', v_run.previous_run_id)
   WHERE run_id = p_run_id;
END $$;
COMMENT ON FUNCTION ops.summarize_run(bigint) IS
  'Counts what changed between a run and the previous completed run (files loaded, ledger '
  'entries posted by the run and by other recomputes between the two, new, resolved and '
  'changed findings, parcels whose balance changed, plan totals) and stores it on the run '
  'record.';

-- ---------------------------------------------------------------------------------------------
-- Published: the run log for staff.
-- ---------------------------------------------------------------------------------------------
DROP VIEW IF EXISTS pub.reconciliation_run;
CREATE VIEW pub.reconciliation_run AS
SELECT r.run_id, pa.code AS plan_area, r.flow, r.status, r.started_at, r.finished_at,
       r.finished_at - r.started_at AS duration, r.started_via, r.host, r.pid,
       r.previous_run_id, r.ledger_run_id, r.check_run_id,
       r.files_loaded, r.files_duplicate, r.files_quarantined, r.entries_posted,
       r.finding_count, r.findings_new, r.findings_resolved, r.parcels_changed, r.changed,
       (r.plan_totals ->> 'required_acres')::numeric(12,4) AS plan_required_acres,
       (r.plan_totals ->> 'credit_acres')::numeric(12,4) AS plan_credit_acres,
       (r.plan_totals ->> 'balance_acres')::numeric(12,4) AS plan_balance_acres,
       r.report_path, r.message
FROM ops.run r
JOIN core.plan_area pa ON pa.plan_area_id = r.plan_area_id;
COMMENT ON VIEW pub.reconciliation_run IS
  'Log of the nightly reconciliation runs and inbox ingests: when, status, what was loaded, '
  'posted and found, what changed since the run before, and where the report is.';
COMMENT ON COLUMN pub.reconciliation_run.run_id IS 'Run id (ops.run).';
COMMENT ON COLUMN pub.reconciliation_run.plan_area IS 'Plan area code.';
COMMENT ON COLUMN pub.reconciliation_run.flow IS 'nightly_reconciliation or ingest_inbox.';
COMMENT ON COLUMN pub.reconciliation_run.status IS
  'running, done, partial (some inbox files quarantined), failed or abandoned.';
COMMENT ON COLUMN pub.reconciliation_run.started_at IS 'Start time.';
COMMENT ON COLUMN pub.reconciliation_run.finished_at IS 'End time.';
COMMENT ON COLUMN pub.reconciliation_run.duration IS 'End time minus start time.';
COMMENT ON COLUMN pub.reconciliation_run.started_via IS 'schedule, command, demo or api.';
COMMENT ON COLUMN pub.reconciliation_run.host IS 'Host of the process that ran it.';
COMMENT ON COLUMN pub.reconciliation_run.pid IS 'Process id on that host.';
COMMENT ON COLUMN pub.reconciliation_run.previous_run_id IS 'Run it was compared with.';
COMMENT ON COLUMN pub.reconciliation_run.ledger_run_id IS 'Ledger recompute run (ledger.run).';
COMMENT ON COLUMN pub.reconciliation_run.check_run_id IS 'Rule check run (checks.run).';
COMMENT ON COLUMN pub.reconciliation_run.files_loaded IS 'Inbox files loaded.';
COMMENT ON COLUMN pub.reconciliation_run.files_duplicate IS
  'Inbox files loaded before (same SHA-256), archived without loading.';
COMMENT ON COLUMN pub.reconciliation_run.files_quarantined IS
  'Inbox files refused, moved to quarantine with an error report.';
COMMENT ON COLUMN pub.reconciliation_run.entries_posted IS
  'Ledger entries posted (new entries and reversals); 0 when nothing changed.';
COMMENT ON COLUMN pub.reconciliation_run.finding_count IS 'Findings after the checks.';
COMMENT ON COLUMN pub.reconciliation_run.findings_new IS 'Findings not in the previous run.';
COMMENT ON COLUMN pub.reconciliation_run.findings_resolved IS
  'Findings of the previous run that are gone.';
COMMENT ON COLUMN pub.reconciliation_run.parcels_changed IS
  'Parcels whose balance or status changed (to 4 decimals of an acre).';
COMMENT ON COLUMN pub.reconciliation_run.changed IS 'Whether anything changed since the run before.';
COMMENT ON COLUMN pub.reconciliation_run.plan_required_acres IS
  'Plan-wide required replacement after the run, acres.';
COMMENT ON COLUMN pub.reconciliation_run.plan_credit_acres IS
  'Plan-wide counted credit after the run, acres.';
COMMENT ON COLUMN pub.reconciliation_run.plan_balance_acres IS
  'Plan-wide balance after the run, acres (credit minus required).';
COMMENT ON COLUMN pub.reconciliation_run.report_path IS 'Folder of the run''s report.';
COMMENT ON COLUMN pub.reconciliation_run.message IS 'Outcome in one line.';

DROP VIEW IF EXISTS pub.reconciliation_file;
-- The files of restricted layers (3(d) species records) are left out: their names tell which
-- permits have protected species (sql/013_restricted_rows.sql). The restricted layers are
-- read when the view is read (ops.restricted_layers: a function's body is not a dependency,
-- so the view does not hold on to ops.layer, which a downgrade drops, and names no layer).
CREATE OR REPLACE FUNCTION ops.restricted_layers() RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS
$$ SELECT coalesce(array_agg(l.layer ORDER BY l.layer), '{}') FROM ops.layer l
   WHERE l.restricted $$;
COMMENT ON FUNCTION ops.restricted_layers() IS
  'The names of the restricted layers (ops.layer.restricted), for the published views that '
  'leave their rows out.';
CREATE VIEW pub.reconciliation_file AS
SELECT f.run_file_id, f.run_id, f.file_name, f.layer, f.file_sha256, f.outcome, f.batch_id,
       f.moved_to, f.message, f.handled_at
FROM ops.run_file f
WHERE f.layer IS NULL OR f.layer <> ALL (ops.restricted_layers());
COMMENT ON VIEW pub.reconciliation_file IS
  'Files the runs took from the inbox: loaded, duplicate (archived), quarantined (with the '
  'reason) or left in the inbox after a database error (files of restricted layers are not '
  'listed).';
COMMENT ON COLUMN pub.reconciliation_file.run_file_id IS 'Row id.';
COMMENT ON COLUMN pub.reconciliation_file.run_id IS 'Run (pub.reconciliation_run).';
COMMENT ON COLUMN pub.reconciliation_file.file_name IS 'Path relative to the inbox.';
COMMENT ON COLUMN pub.reconciliation_file.layer IS 'Layer it was loaded as.';
COMMENT ON COLUMN pub.reconciliation_file.file_sha256 IS 'SHA-256 of the file.';
COMMENT ON COLUMN pub.reconciliation_file.outcome IS 'loaded, duplicate, quarantined or left.';
COMMENT ON COLUMN pub.reconciliation_file.batch_id IS 'Ingest batch (ops.batch).';
COMMENT ON COLUMN pub.reconciliation_file.moved_to IS 'Where the file is now.';
COMMENT ON COLUMN pub.reconciliation_file.message IS 'Outcome in one line.';
COMMENT ON COLUMN pub.reconciliation_file.handled_at IS 'When.';

-- ---------------------------------------------------------------------------------------------
-- Grants: the etl role runs the flows; staff and gis read the two views (998 grants pub).
-- ---------------------------------------------------------------------------------------------
REVOKE ALL ON FUNCTION ops.reconcile_lock_class(), ops.try_reconcile_lock(integer),
  ops.release_reconcile_lock(integer), ops.reconcile_lock_holder(integer),
  ops.start_run(integer, text, text, text, integer, text, text),
  ops.record_run_file(bigint, text, text, text, text, bigint, text, text),
  ops.finish_run(bigint, text, text, text), ops.snapshot_run(bigint, bigint, bigint),
  ops.run_finding_change(bigint), ops.run_parcel_change(bigint), ops.summarize_run(bigint),
  ops.plan_figures(jsonb), ops.balance_state(integer), ops.parcels_seen_in(bigint),
  ops.findings_seen_in(bigint), ops.run_finding_review(bigint),
  ops.run_finding_review_first(bigint, integer),
  ops.run_review_event(integer, bigint, bigint),
  ops.run_review_resolved(integer, bigint, bigint),
  ops.run_finding_rows(bigint, integer, boolean), ops.finding_pin(bigint),
  ops.snapshot_copies_carried(bigint, bigint)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.reconcile_lock_class(), ops.try_reconcile_lock(integer),
  ops.release_reconcile_lock(integer), ops.reconcile_lock_holder(integer),
  ops.start_run(integer, text, text, text, integer, text, text),
  ops.record_run_file(bigint, text, text, text, text, bigint, text, text),
  ops.finish_run(bigint, text, text, text), ops.snapshot_run(bigint, bigint, bigint),
  ops.run_finding_change(bigint), ops.run_parcel_change(bigint), ops.summarize_run(bigint),
  ops.plan_figures(jsonb), ops.balance_state(integer), ops.parcels_seen_in(bigint),
  ops.findings_seen_in(bigint), ops.run_finding_review(bigint),
  ops.run_finding_review_first(bigint, integer),
  ops.run_review_event(integer, bigint, bigint),
  ops.run_review_resolved(integer, bigint, bigint),
  ops.run_finding_rows(bigint, integer, boolean), ops.finding_pin(bigint),
  ops.snapshot_copies_carried(bigint, bigint)
  TO rulem_etl;
-- The run record is written through the protocol's functions only (they run as the owner).
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ops.run, ops.run_file, ops.run_parcel_balance,
  ops.run_finding FROM rulem_etl;
GRANT SELECT ON ops.run, ops.run_file, ops.run_parcel_balance, ops.run_finding TO rulem_etl;
REVOKE ALL ON FUNCTION ops.running_run(bigint),
  ops.copy_carried_findings(bigint, bigint, bigint) FROM PUBLIC;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ops TO rulem_etl;
REVOKE ALL ON pub.reconciliation_run, pub.reconciliation_file FROM PUBLIC;
GRANT SELECT ON pub.reconciliation_run, pub.reconciliation_file
  TO rulem_staff, rulem_gis, rulem_etl;

-- ---------------------------------------------------------------------------------------------
-- The record moves forward only, for every role (the owner's functions above included).
-- ---------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ops.run_moves_forward() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF (NEW.run_id, NEW.plan_area_id, NEW.flow, NEW.started_at, NEW.started_via, NEW.host,
      NEW.pid, NEW.backend_pid, NEW.prefect_flow_run_id, NEW.created_by, NEW.previous_run_id,
      NEW.inbox)
     IS DISTINCT FROM
     (OLD.run_id, OLD.plan_area_id, OLD.flow, OLD.started_at, OLD.started_via, OLD.host,
      OLD.pid, OLD.backend_pid, OLD.prefect_flow_run_id, OLD.created_by, OLD.previous_run_id,
      OLD.inbox) THEN
    RAISE EXCEPTION 'ops.run %: what a run records about its start never changes', OLD.run_id
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.status <> 'running' THEN
    RAISE EXCEPTION 'ops.run %: the run ended as %; its record is final', OLD.run_id,
      OLD.status USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION ops.run_moves_forward() IS
  'Trigger: an ops.run row changes only while running, and never in what it records about '
  'the run''s start.';

-- Rows of a run's file list and snapshots are added (and a snapshot taken again) only while
-- the run is running: once per statement, for the runs its rows name.
CREATE OR REPLACE FUNCTION ops.run_rows_while_running() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- the snapshots' references, checked here once per statement (revision 0049): their
    -- foreign keys checked each row with its own query (a state's findings: 1.95 s to
    -- insert against 0.98 s); runs and features are never deleted (their own triggers)
    SELECT x.run_id INTO bad
    FROM (SELECT DISTINCT n.run_id FROM new_rows n) x
    WHERE NOT EXISTS (SELECT 1 FROM ops.run r WHERE r.run_id = x.run_id) LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION '%.%: run % does not exist', TG_TABLE_SCHEMA, TG_TABLE_NAME, bad.run_id
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF TG_TABLE_NAME = 'run_parcel_balance' THEN
      EXECUTE 'SELECT x.parcel_id FROM (SELECT DISTINCT n.parcel_id FROM new_rows n) x '
              'WHERE NOT EXISTS (SELECT 1 FROM core.feature f WHERE f.feature_id = x.parcel_id '
              '                  AND f.layer = ''parcel'') LIMIT 1' INTO bad;
      IF bad.parcel_id IS NOT NULL THEN  -- EXECUTE leaves FOUND as it was
        RAISE EXCEPTION 'ops.run_parcel_balance: parcel_id % is not a parcel of core.feature',
          bad.parcel_id USING ERRCODE = 'foreign_key_violation';
      END IF;
    END IF;
    SELECT r.run_id, r.status INTO bad
    FROM (SELECT DISTINCT n.run_id FROM new_rows n) x JOIN ops.run r ON r.run_id = x.run_id
    WHERE r.status <> 'running' LIMIT 1;
  ELSE
    SELECT r.run_id, r.status INTO bad
    FROM (SELECT DISTINCT o.run_id FROM old_rows o) x JOIN ops.run r ON r.run_id = x.run_id
    WHERE r.status <> 'running' LIMIT 1;
  END IF;
  IF FOUND THEN
    RAISE EXCEPTION '%.%: run % ended as %; its record is final', TG_TABLE_SCHEMA,
      TG_TABLE_NAME, bad.run_id, bad.status USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.run_rows_while_running() IS
  'Trigger: rows of a run''s file list or snapshots are added or removed only while the run '
  'is running.';

DROP TRIGGER IF EXISTS run_moves_forward ON ops.run;
CREATE TRIGGER run_moves_forward BEFORE UPDATE ON ops.run
  FOR EACH ROW EXECUTE FUNCTION ops.run_moves_forward();
DROP TRIGGER IF EXISTS run_no_delete ON ops.run;
CREATE TRIGGER run_no_delete BEFORE DELETE ON ops.run
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS run_no_truncate ON ops.run;
CREATE TRIGGER run_no_truncate BEFORE TRUNCATE ON ops.run
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS run_file_append_only ON ops.run_file;
CREATE TRIGGER run_file_append_only BEFORE UPDATE OR DELETE ON ops.run_file
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS run_file_no_truncate ON ops.run_file;
CREATE TRIGGER run_file_no_truncate BEFORE TRUNCATE ON ops.run_file
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS run_file_while_running ON ops.run_file;
CREATE TRIGGER run_file_while_running AFTER INSERT ON ops.run_file
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION ops.run_rows_while_running();
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['run_parcel_balance', 'run_finding'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS snapshot_no_update ON ops.%I', t);
    EXECUTE format('CREATE TRIGGER snapshot_no_update BEFORE UPDATE ON ops.%I '
                   'FOR EACH ROW EXECUTE FUNCTION ops.refuse_change()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS snapshot_no_truncate ON ops.%I', t);
    EXECUTE format('CREATE TRIGGER snapshot_no_truncate BEFORE TRUNCATE ON ops.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS snapshot_insert_while_running ON ops.%I', t);
    EXECUTE format('CREATE TRIGGER snapshot_insert_while_running AFTER INSERT ON ops.%I '
                   'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.run_rows_while_running()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS snapshot_delete_while_running ON ops.%I', t);
    EXECUTE format('CREATE TRIGGER snapshot_delete_while_running AFTER DELETE ON ops.%I '
                   'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.run_rows_while_running()', t);
  END LOOP;
END $$;
