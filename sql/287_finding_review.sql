-- 287_finding_review: findings have a life. A finding keeps its identity from run to run
-- (checks.finding_case: same permit, check and place) and carries a review state:
--   open          found, not yet reviewed (or found again after it was resolved);
--   acknowledged  staff have seen it and it stands (an error stays an error);
--   waived        staff hold it excused by a variance or decision, whose reference is
--                 required: Rule M 7(g), "A road, utility or other structure ... may be
--                 placed within wetland in the CWMP area only on a showing of compelling need
--                 and pursuant to the District's variance procedures.";
--   resolved      a later check run that covered it no longer finds it.
-- Every change, the runner's and the staff's, is a row of checks.finding_review with the
-- database login (session_user) and the time. Idempotent.
--
-- Identity: paragraph, check, permit, parcel and feature (stable feature ids), and where
-- no feature is named the place (the geometry's lower-left corner, to the metre); what is
-- still equal is told apart by rank (measured value, message). A finding whose place moves
-- (a buffer gap that grows) without a feature to name it is a new finding, and the old one
-- resolved.
--
-- A run covers a finding when it looked at the finding's permit and check: it has an outcome
-- for them (evaluated, or carried over by an incremental run, sql/285); for a finding without
-- a permit (District projects, the plan area) when the run is plan-wide and the check current.
-- A finding absent from a run that did not cover it is left as it is.
--
-- A waiver does not survive a resolve: when a resolved finding is found again it is open
-- again (event reopened), whatever it was before it was resolved. The waiver was granted for
-- the condition as it was; a condition that went away and came back is for staff to look at
-- again. The runner's resolve and re-open clear the waiver reference and the note of the
-- finding as it is now; the history keeps them.

-- The identity key of each finding row of a run.
CREATE OR REPLACE FUNCTION checks.finding_keys(p_run_id bigint)
RETURNS TABLE (finding_id bigint, finding_key text)
LANGUAGE sql STABLE SET search_path = pg_catalog, checks, public, pg_temp AS $$
  SELECT k.finding_id,
         concat_ws('|', k.paragraph, k.check_code, coalesce(k.permit_id::text, '-'),
                   coalesce(k.parcel_id::text, '-'), coalesce(k.feature_id::text, '-'),
                   k.place,
                   row_number() OVER (PARTITION BY k.paragraph, k.check_code, k.permit_id,
                                                   k.parcel_id, k.feature_id, k.place
                                      ORDER BY k.measured_value, k.message, k.finding_id))
  FROM (SELECT f.finding_id, f.paragraph, f.check_code, f.permit_id, f.parcel_id,
               f.feature_id, f.measured_value, f.message,
               CASE WHEN f.feature_id IS NULL AND f.geom IS NOT NULL
                    THEN round(public.ST_XMin(f.geom::public.box3d))::bigint || ','
                         || round(public.ST_YMin(f.geom::public.box3d))::bigint
                    ELSE '-' END AS place
        FROM checks.finding f WHERE f.run_id = p_run_id) k
$$;
COMMENT ON FUNCTION checks.finding_keys(bigint) IS
  'Identity key of each finding row of a check run (checks.finding_case.finding_key).';

-- The runner's step, at the end of every check run (checks.finish_run, sql/280): give each of
-- the run's findings its identity, open the new ones, re-open the resolved ones found again,
-- resolve the ones the run covered and no longer found. Once per run (a second call finds the
-- run's findings linked and does nothing). SECURITY DEFINER: only the owner writes the review
-- tables, so a writer cannot set a review state but through this step and
-- checks.review_finding.
CREATE OR REPLACE FUNCTION checks.review_after_run(p_run_id bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, checks, core, public, pg_temp AS $$
DECLARE
  r checks.run;
  v_at timestamptz := clock_timestamp();
BEGIN
  SELECT * INTO r FROM checks.run x WHERE x.run_id = p_run_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'check run % does not exist', p_run_id USING ERRCODE = 'no_data_found';
  END IF;
  IF EXISTS (SELECT 1 FROM checks.finding_occurrence o WHERE o.run_id = p_run_id)
     OR EXISTS (SELECT 1 FROM checks.finding_review v WHERE v.run_id = p_run_id) THEN
    RETURN;  -- done already
  END IF;
  -- Serialize with other runs of the plan area and with staff reviews of its findings.
  PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('rulem-db finding review'),
                                           r.plan_area_id);

  -- every identity the run found, new ones opened, and each finding linked to its identity:
  -- one statement, so the keys (a window over every finding of the run) are computed once.
  -- The new identities come from RETURNING, the existing ones from the statement's snapshot:
  -- the two are disjoint (ON CONFLICT DO NOTHING), and the advisory lock above keeps another
  -- run of the plan area from adding one in between.
  WITH k AS MATERIALIZED (
    SELECT f.*, fk.finding_key FROM checks.finding_keys(p_run_id) fk
    JOIN checks.finding f ON f.finding_id = fk.finding_id
  ), added AS (
    INSERT INTO checks.finding_case (plan_area_id, finding_key, paragraph, check_code,
                                     permit_id, parcel_id, feature_id, review_state,
                                     reviewed_by, reviewed_at, first_found_at, first_run_id,
                                     last_run_id)
    SELECT r.plan_area_id, k.finding_key, k.paragraph, k.check_code, k.permit_id, k.parcel_id,
           k.feature_id, 'open', session_user, v_at, v_at, p_run_id, p_run_id
    FROM k
    ON CONFLICT (plan_area_id, finding_key) DO NOTHING
    RETURNING finding_case_id, finding_key
  ), found AS (
    INSERT INTO checks.finding_review (finding_case_id, event, review_state, run_id,
                                       changed_at)
    SELECT a.finding_case_id, 'found', 'open', p_run_id, v_at FROM added a
  ), cases AS (
    SELECT a.finding_case_id, a.finding_key FROM added a
    UNION ALL
    SELECT c.finding_case_id, c.finding_key
    FROM k JOIN checks.finding_case c ON c.plan_area_id = r.plan_area_id
                                     AND c.finding_key = k.finding_key
  )
  INSERT INTO checks.finding_occurrence (finding_id, finding_case_id, run_id)
  SELECT k.finding_id, cs.finding_case_id, p_run_id
  FROM k JOIN cases cs ON cs.finding_key = k.finding_key;

  -- found again after it was resolved: open again
  WITH again AS (
    UPDATE checks.finding_case c
       SET review_state = 'open', waiver_reference = NULL, review_note = NULL,
           reviewed_by = session_user,
           reviewed_at = v_at, last_run_id = p_run_id
     WHERE c.review_state = 'resolved'
       AND c.finding_case_id IN (SELECT o.finding_case_id FROM checks.finding_occurrence o
                                 WHERE o.run_id = p_run_id)
    RETURNING c.finding_case_id
  )
  INSERT INTO checks.finding_review (finding_case_id, event, review_state, run_id, changed_at)
  SELECT a.finding_case_id, 'reopened', 'open', p_run_id, v_at FROM again a;

  -- still found: the latest run that found it
  UPDATE checks.finding_case c SET last_run_id = p_run_id
  WHERE c.last_run_id <> p_run_id
    AND c.finding_case_id IN (SELECT o.finding_case_id FROM checks.finding_occurrence o
                              WHERE o.run_id = p_run_id);

  -- covered by the run and not found: resolved
  WITH gone AS (
    UPDATE checks.finding_case c
       SET review_state = 'resolved', waiver_reference = NULL, review_note = NULL,
           reviewed_by = session_user,
           reviewed_at = v_at, last_run_id = p_run_id
     WHERE c.plan_area_id = r.plan_area_id AND c.review_state <> 'resolved'
       AND (r.permit_id IS NULL OR c.permit_id = r.permit_id)
       -- NOT IN, a hashed subplan: the run's occurrences were written in this transaction
       -- and are not in the statistics yet (estimated at one row), and NOT EXISTS was planned
       -- as a nested loop over them per case (50,000,000 comparisons, 4 s, on the county)
       AND c.finding_case_id NOT IN (SELECT o.finding_case_id
                                     FROM checks.finding_occurrence o
                                     WHERE o.run_id = p_run_id)
       AND CASE WHEN c.permit_id IS NULL
                THEN r.permit_id IS NULL
                     AND EXISTS (SELECT 1 FROM checks.rule_check rc
                                 WHERE rc.paragraph = c.paragraph
                                   AND rc.check_code = c.check_code
                                   AND rc.retired_at IS NULL)
                ELSE EXISTS (SELECT 1 FROM checks.outcome o
                             WHERE o.run_id = p_run_id AND o.permit_id = c.permit_id
                               AND o.paragraph = c.paragraph
                               AND o.check_code = c.check_code) END
    RETURNING c.finding_case_id
  )
  INSERT INTO checks.finding_review (finding_case_id, event, review_state, run_id, changed_at)
  SELECT g.finding_case_id, 'resolved', 'resolved', p_run_id, v_at FROM gone g;
END $$;
COMMENT ON FUNCTION checks.review_after_run(bigint) IS
  'End of a check run: gives its findings their identity (checks.finding_case), opens the new '
  'ones, re-opens resolved ones found again, resolves the ones the run covered and no longer '
  'found; each change a row of checks.finding_review.';

-- A staff review of one finding (its identity, checks.finding_case.finding_case_id):
--   p_state 'acknowledged'  seen, it stands;
--   p_state 'waived'        excused by the variance or decision p_reference (required);
--   p_state 'open'          a review withdrawn;
--   p_state NULL            a note only (p_note required), the state unchanged.
-- A resolved finding takes notes only: its state is the runner's. The login (session_user)
-- is recorded, also when called through edit.finding's trigger.
CREATE OR REPLACE FUNCTION checks.review_finding(p_finding bigint, p_state text,
                                                 p_reference text DEFAULT NULL,
                                                 p_note text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, checks, pg_temp AS $$
DECLARE
  c checks.finding_case;
  v_ref text := nullif(btrim(p_reference), '');
  v_note text := nullif(btrim(p_note), '');
  v_event text;
  v_id bigint;
BEGIN
  SELECT x.* INTO c FROM checks.finding_case x WHERE x.finding_case_id = p_finding;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'finding % does not exist', p_finding USING ERRCODE = 'no_data_found',
      HINT = 'The finding id is finding_case_id of pub.finding (rulem-db finding list).';
  END IF;
  PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('rulem-db finding review'),
                                           c.plan_area_id);
  SELECT x.* INTO c FROM checks.finding_case x WHERE x.finding_case_id = p_finding FOR UPDATE;
  IF p_state IS NULL THEN
    IF v_note IS NULL THEN
      RAISE EXCEPTION 'finding %: a note needs its text', p_finding
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_event := 'noted';
  ELSIF p_state NOT IN ('acknowledged', 'waived', 'open') THEN
    RAISE EXCEPTION 'finding %: % is not a review state staff set (acknowledged, waived, '
      'open; resolved is set by the check run that no longer finds it)', p_finding,
      quote_literal(p_state) USING ERRCODE = 'invalid_parameter_value';
  ELSIF c.review_state = 'resolved' THEN
    RAISE EXCEPTION 'finding % is resolved (check run %): only a note can be added',
      p_finding, c.last_run_id USING ERRCODE = 'invalid_parameter_value';
  ELSIF p_state = 'waived' AND v_ref IS NULL THEN
    RAISE EXCEPTION 'finding %: a waiver needs the reference of the variance or decision it '
      'stands on (Rule M 7(g): the District''s variance procedures)', p_finding
      USING ERRCODE = 'invalid_parameter_value';
  ELSE
    v_event := CASE p_state WHEN 'open' THEN 'opened' ELSE p_state END;
  END IF;
  UPDATE checks.finding_case x
     SET review_state = coalesce(p_state, x.review_state),
         waiver_reference = CASE WHEN coalesce(p_state, x.review_state) = 'waived'
                                 THEN coalesce(v_ref, x.waiver_reference) END,
         review_note = coalesce(v_note, x.review_note),
         reviewed_by = session_user, reviewed_at = clock_timestamp()
   WHERE x.finding_case_id = p_finding
  RETURNING x.* INTO c;
  INSERT INTO checks.finding_review (finding_case_id, event, review_state, waiver_reference,
                                     note)
  VALUES (p_finding, v_event, c.review_state, c.waiver_reference, v_note)
  RETURNING review_id INTO v_id;
  RETURN v_id;
END $$;
COMMENT ON FUNCTION checks.review_finding(bigint, text, text, text) IS
  'Staff review of a finding (finding_case_id): acknowledged, waived (reference of the '
  'variance or decision required, Rule M 7(g)), open again, or a note (state NULL); recorded '
  'with the login in checks.finding_review. Returns the history row.';

REVOKE ALL ON FUNCTION checks.finding_keys(bigint), checks.review_after_run(bigint),
  checks.review_finding(bigint, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.finding_keys(bigint), checks.review_after_run(bigint)
  TO rulem_etl;
-- Staff review findings: with the CLI under their own login (rulem_staff), in QGIS through
-- edit.finding (rulem_editor), and the writer login the embedded database's commands use.
-- USAGE on checks lets them call it by name; they read none of its tables.
GRANT USAGE ON SCHEMA checks TO rulem_staff, rulem_editor;
GRANT EXECUTE ON FUNCTION checks.review_finding(bigint, text, text, text)
  TO rulem_staff, rulem_editor, rulem_etl;
GRANT SELECT ON checks.finding_case, checks.finding_occurrence, checks.finding_review
  TO rulem_etl;
