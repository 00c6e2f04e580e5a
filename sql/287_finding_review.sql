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
-- for them (evaluated, or carried over by an incremental run, sql/285, through
-- checks.run_permit); for a finding without a permit (District projects, the plan area) when
-- the run is plan-wide and the check current.
-- A finding absent from a run that did not cover it is left as it is.
--
-- A waiver does not survive a resolve: when a resolved finding is found again it is open
-- again (event reopened), whatever it was before it was resolved. The waiver was granted for
-- the condition as it was; a condition that went away and came back is for staff to look at
-- again. The runner's resolve and re-open clear the waiver reference and the note of the
-- finding as it is now; the history keeps them.
--
-- A review holds for what was reviewed (docs/checks.md, "Finding review"): an acknowledgement
-- or a waiver records the measured value, the check run and the versions of the inputs it was
-- given for (checks.finding_case.review_measure, review_run_id, review_inputs). The inputs
-- are the feature at fault; for a finding without one, the permit, its own features, the
-- credit transfers it gives or receives, and the parcel. A later run that finds it measured
-- worse (by the catalogue's worse direction, beyond checks.review_tolerance) or sees a new
-- version of an input re-opens it (event reopened, the reason in words in the note).
--
-- Review texts are lines a clerk writes, not files: a note is at most
-- checks.review_note_max() characters, a waiver reference checks.waiver_reference_max()
-- (the tables' constraints, revision 0037, hold the same numbers for every writer).

-- The identity key of each finding row of a run; with p_unlinked, of the rows not yet linked
-- to their identity only (the review links a carried-over copy to its source's first). The
-- rank counts like findings within a permit (the window is by permit), and an incremental run
-- carries every finding of a permit or none, so the rows left are keyed as among all.
DROP FUNCTION IF EXISTS checks.finding_keys(bigint);
CREATE OR REPLACE FUNCTION checks.finding_keys(p_run_id bigint, p_unlinked boolean DEFAULT false)
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
        FROM checks.finding f WHERE f.run_id = p_run_id
          -- a probe of the occurrences' key per row: an IN over the run's occurrences is
          -- planned without the run's id here (a SQL function's parameter), estimated at
          -- a whole run's rows, and so not hashed but scanned again for every row
          AND NOT (p_unlinked AND EXISTS (SELECT 1 FROM checks.finding_occurrence o
                                          WHERE o.finding_id = f.finding_id))) k
$$;
COMMENT ON FUNCTION checks.finding_keys(bigint, boolean) IS
  'Identity key of each finding row of a check run (checks.finding_case.finding_key); with '
  'p_unlinked, of the rows not yet linked to their identity.';

-- The longest review note and waiver reference, in characters (the constraints of
-- checks.finding_case and checks.finding_review, revision 0037, hold the same numbers).
CREATE OR REPLACE FUNCTION checks.review_note_max() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 4000 $$;
COMMENT ON FUNCTION checks.review_note_max() IS
  'The longest review note, in characters (4,000).';
CREATE OR REPLACE FUNCTION checks.waiver_reference_max() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 200 $$;
COMMENT ON FUNCTION checks.waiver_reference_max() IS
  'The longest waiver reference, in characters (200).';

-- How much worse a measure may be before a review no longer holds: 1 % of the value reviewed,
-- and at least 0.0001 (the published acres' last place): the checks publish rounded values,
-- and a figure that moves in its last place has not worsened.
CREATE OR REPLACE FUNCTION checks.review_tolerance(p_reviewed numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT greatest(abs(p_reviewed) * 0.01, 0.0001)
$$;
COMMENT ON FUNCTION checks.review_tolerance(numeric) IS
  'How far a measure may move the worse way from the value an acknowledgement or waiver was '
  'given for before the finding re-opens: 1 % of it, at least 0.0001.';

-- Whether p_now is worse than p_reviewed by the check's worse direction (checks.rule_check:
-- higher, lower; flag has no measure to compare), beyond the tolerance.
CREATE OR REPLACE FUNCTION checks.measured_worse(p_worse text, p_reviewed numeric,
                                                 p_now numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(CASE p_worse
                    WHEN 'higher' THEN p_now > p_reviewed + checks.review_tolerance(p_reviewed)
                    WHEN 'lower' THEN p_now < p_reviewed - checks.review_tolerance(p_reviewed)
                  END, false)
$$;
COMMENT ON FUNCTION checks.measured_worse(text, numeric, numeric) IS
  'Whether a measure is worse than the value reviewed, by the check''s worse direction '
  '(higher, lower), beyond checks.review_tolerance.';

-- The inputs of findings as of a time: for each finding (its identity), {feature_id:
-- version_id} of the feature at fault; for a finding without one, of the permit, every
-- feature of the permit (each versioned core layer with permit_id), the credit transfers it
-- gives or receives, and the parcel. A version is the one valid at p_at (a check run's
-- start: what it read); a feature retired by then is absent.
CREATE OR REPLACE FUNCTION checks.review_inputs(p_cases bigint[], p_at timestamptz)
RETURNS TABLE (finding_case_id bigint, inputs jsonb)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, checks, core, public, pg_temp AS $$
DECLARE
  v_permits bigint[];
  v_owner bigint[];    -- (permit, feature of the permit) pairs
  v_owned bigint[];
  o bigint[];
  f bigint[];
  v_case bigint[];     -- (finding, input) pairs
  v_input bigint[];
  v_fid bigint[] := '{}';  -- (input, version) pairs
  v_ver bigint[] := '{}';
  t text;
  g record;
BEGIN
  SELECT coalesce(array_agg(DISTINCT c.permit_id), '{}') INTO v_permits
  FROM checks.finding_case c
  WHERE c.finding_case_id = ANY (p_cases) AND c.feature_id IS NULL AND c.permit_id IS NOT NULL;
  v_owner := v_permits;  -- the permit itself
  v_owned := v_permits;
  IF cardinality(v_permits) > 0 THEN
    FOR t IN  -- the versioned layers whose features belong to a permit
      SELECT c.relname::text FROM pg_catalog.pg_class c
      WHERE c.relnamespace = 'core'::regnamespace AND c.relkind = 'r' AND c.relname <> 'permit'
        AND (SELECT count(*) FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = c.oid AND NOT a.attisdropped
               AND a.attname IN ('permit_id', 'version_id', 'valid_from', 'valid_to',
                                 c.relname || '_id')) = 5
      ORDER BY 1
    LOOP
      EXECUTE format('SELECT coalesce(array_agg(x.permit_id), ''{}''), '
                     'coalesce(array_agg(x.%1$I), ''{}'') FROM core.%2$I x '
                     'WHERE x.permit_id = ANY ($1) AND x.valid_from <= $2 '
                     'AND (x.valid_to IS NULL OR x.valid_to > $2)', t || '_id', t)
        INTO o, f USING v_permits, p_at;
      v_owner := v_owner || o;
      v_owned := v_owned || f;
    END LOOP;
    SELECT v_owner || coalesce(array_agg(x.pid), '{}'),
           v_owned || coalesce(array_agg(x.tid), '{}')
      INTO v_owner, v_owned
    FROM (SELECT p.pid, ct.credit_transfer_id AS tid
          FROM core.credit_transfer ct
          CROSS JOIN LATERAL (VALUES (ct.from_permit_id), (ct.to_permit_id)) p (pid)
          WHERE p.pid = ANY (v_permits) AND ct.valid_from <= p_at
            AND (ct.valid_to IS NULL OR ct.valid_to > p_at)) x;
  END IF;

  SELECT coalesce(array_agg(x.cid), '{}'), coalesce(array_agg(x.fid), '{}')
    INTO v_case, v_input
  FROM (SELECT c.finding_case_id AS cid, c.feature_id AS fid FROM checks.finding_case c
        WHERE c.finding_case_id = ANY (p_cases) AND c.feature_id IS NOT NULL
        UNION
        SELECT c.finding_case_id, c.parcel_id FROM checks.finding_case c
        WHERE c.finding_case_id = ANY (p_cases) AND c.feature_id IS NULL
          AND c.parcel_id IS NOT NULL
        UNION
        SELECT c.finding_case_id, po.owned FROM checks.finding_case c
        JOIN unnest(v_owner, v_owned) po (owner, owned) ON po.owner = c.permit_id
        WHERE c.finding_case_id = ANY (p_cases) AND c.feature_id IS NULL) x;

  -- each input's version at p_at, one query per layer
  FOR g IN
    SELECT fe.layer, array_agg(DISTINCT fe.feature_id) AS ids
    FROM core.feature fe WHERE fe.feature_id = ANY (v_input)
    GROUP BY fe.layer ORDER BY fe.layer
  LOOP
    CONTINUE WHEN (SELECT count(*) FROM pg_catalog.pg_attribute a
                   WHERE a.attrelid = to_regclass(format('core.%I', g.layer))
                     AND NOT a.attisdropped
                     AND a.attname IN ('version_id', 'valid_from', 'valid_to',
                                       g.layer || '_id')) <> 4;
    EXECUTE format('SELECT coalesce(array_agg(x.%1$I), ''{}''), '
                   'coalesce(array_agg(x.version_id), ''{}'') FROM core.%2$I x '
                   'WHERE x.%1$I = ANY ($1) AND x.valid_from <= $2 '
                   'AND (x.valid_to IS NULL OR x.valid_to > $2)', g.layer || '_id', g.layer)
      INTO o, f USING g.ids, p_at;
    v_fid := v_fid || o;
    v_ver := v_ver || f;
  END LOOP;

  RETURN QUERY
  SELECT c.id, coalesce(jsonb_object_agg(p.fid::text, v.ver) FILTER (WHERE v.ver IS NOT NULL),
                        '{}'::jsonb)
  FROM unnest(p_cases) c (id)
  LEFT JOIN unnest(v_case, v_input) p (cid, fid) ON p.cid = c.id
  LEFT JOIN unnest(v_fid, v_ver) v (fid, ver) ON v.fid = p.fid
  GROUP BY c.id;
END $$;
COMMENT ON FUNCTION checks.review_inputs(bigint[], timestamptz) IS
  'The inputs of findings (identities) as of a time, as {feature_id: version_id}: the feature '
  'at fault; without one, the permit, its features, its transfers and the parcel.';

-- What changed between the inputs a review was given for and the inputs now, in words:
-- "structure 24-008/ST-003 changed (version 40 -> 55)", "added (version 7)", "retired
-- (version 7)"; the first five, then how many more. NULL when nothing changed.
CREATE OR REPLACE FUNCTION checks.inputs_changed(p_then jsonb, p_now jsonb) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, core, pg_temp AS $$
  SELECT nullif(array_to_string((array_agg(x.w ORDER BY x.w))[1:5], '; ')
                || CASE WHEN count(*) > 5 THEN format('; and %s more changes', count(*) - 5)
                        ELSE '' END, '')
  FROM (SELECT format('%s %s %s', fe.layer, fe.feature_key,
                      CASE WHEN n.v IS NULL THEN format('retired (version %s)', t.v)
                           WHEN t.v IS NULL THEN format('added (version %s)', n.v)
                           ELSE format('changed (version %s -> %s)', t.v, n.v) END) AS w
        FROM (SELECT e.key, e.value::bigint AS v FROM jsonb_each_text(p_then) e) t
        FULL JOIN (SELECT e.key, e.value::bigint AS v FROM jsonb_each_text(p_now) e) n
          USING (key)
        JOIN core.feature fe ON fe.feature_id = key::bigint
        WHERE t.v IS DISTINCT FROM n.v) x
$$;
COMMENT ON FUNCTION checks.inputs_changed(jsonb, jsonb) IS
  'The inputs added, changed or retired between two checks.review_inputs maps, in words; NULL '
  'when none.';

-- The finding as the current check run found it: its row of the latest finished run that
-- covers its permit (a plan-wide run, or a run of that permit; for a finding without a
-- permit, the latest plan-wide run), as pub.finding shows it. No row: it is not a current
-- finding (resolved, or its permit left the checks' scope).
CREATE OR REPLACE FUNCTION checks.current_occurrence(p_case bigint)
RETURNS TABLE (finding_id bigint, run_id bigint, measured_value numeric, unit text,
               started_at timestamptz)
LANGUAGE sql STABLE SET search_path = pg_catalog, checks, pg_temp AS $$
  SELECT o.finding_id, o.run_id, f.measured_value, f.unit, r.started_at
  FROM checks.finding_case c
  CROSS JOIN LATERAL (SELECT x.finding_id, x.run_id FROM checks.finding_occurrence x
                      WHERE x.finding_case_id = c.finding_case_id
                      ORDER BY x.run_id DESC LIMIT 1) o
  JOIN checks.finding f ON f.finding_id = o.finding_id
  JOIN checks.run r ON r.run_id = o.run_id
  WHERE c.finding_case_id = p_case
    AND o.run_id = (SELECT max(r2.run_id) FROM checks.run r2
                    WHERE r2.plan_area_id = c.plan_area_id AND r2.finished_at IS NOT NULL
                      AND (r2.permit_id IS NULL OR r2.permit_id = c.permit_id))
$$;
COMMENT ON FUNCTION checks.current_occurrence(bigint) IS
  'A finding''s row in the current check run (as pub.finding shows it), with the run''s '
  'start; no row when it is not a current finding.';

-- The runner's step, at the end of every check run (checks.finish_run, sql/280): give each of
-- the run's findings its identity, open the new ones, re-open the resolved ones found again,
-- re-open the acknowledged or waived ones found worse or with a changed input, resolve the
-- ones the run covered and no longer found. Once per run (a second call finds the run's
-- findings linked and does nothing). SECURITY DEFINER: only the owner writes the review
-- tables, so a writer cannot set a review state but through this step and
-- checks.review_finding.
CREATE OR REPLACE FUNCTION checks.review_after_run(p_run_id bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, checks, core, public, pg_temp AS $$
DECLARE
  r checks.run;
  v_at timestamptz := clock_timestamp();
  v_reviewed bigint[];
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

  -- An incremental run's copies of its base run's findings (checks.carry_over, sql/285) are
  -- the findings their sources are: linked to the source's identity, not keyed again (keying
  -- a state's 240,000 findings was 9 s of a night in which 1 % changed). Only when every copy
  -- is its source's finding, in the base run, linked, each source once (the run's writer
  -- names the source, and the review trusts no writer); else every row is keyed below.
  IF r.base_run_id IS NOT NULL THEN
    WITH carried AS MATERIALIZED (
      SELECT f.finding_id, bo.finding_case_id,
             coalesce(b.run_id = r.base_run_id AND bc.plan_area_id = r.plan_area_id
                      AND b.plan_area_id = f.plan_area_id AND b.paragraph = f.paragraph
                      AND b.check_code = f.check_code AND b.severity = f.severity
                      AND b.permit_id IS NOT DISTINCT FROM f.permit_id
                      AND b.parcel_id IS NOT DISTINCT FROM f.parcel_id
                      AND b.feature_id IS NOT DISTINCT FROM f.feature_id
                      AND b.measured_value IS NOT DISTINCT FROM f.measured_value
                      AND b.message = f.message AND b.geom IS NOT DISTINCT FROM f.geom,
                      false) AS same
      FROM checks.finding f
      LEFT JOIN checks.finding b ON b.finding_id = f.carried_from_id
      LEFT JOIN checks.finding_occurrence bo ON bo.finding_id = b.finding_id
      LEFT JOIN checks.finding_case bc ON bc.finding_case_id = bo.finding_case_id
      WHERE f.run_id = p_run_id AND f.carried_from_id IS NOT NULL
    )
    INSERT INTO checks.finding_occurrence (finding_id, finding_case_id, run_id)
    SELECT c.finding_id, c.finding_case_id, p_run_id FROM carried c
    -- a scalar subquery, computed once (as a joined aggregate it was computed per row)
    WHERE (SELECT coalesce(bool_and(w.same), true)
                  AND count(DISTINCT w.finding_case_id) = count(*)
           FROM carried w);
  END IF;

  -- every identity the run found (of the rows not linked above), new ones opened, each
  -- finding linked to its identity, and the run made the latest that found the ones it found
  -- again: one statement, so the keys (a window over the run's findings) are computed once.
  -- The new identities come from RETURNING, the existing ones from the statement's snapshot:
  -- the two are disjoint (ON CONFLICT DO NOTHING), and the advisory lock above keeps another
  -- run of the plan area from adding one in between. A copy linked above keeps the run that
  -- evaluated it as its latest (rewriting every identity of the plan area on a night in which
  -- 1 % changed was 6 s at state size).
  WITH k AS MATERIALIZED (
    SELECT f.*, fk.finding_key FROM checks.finding_keys(p_run_id, true) fk
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
  ), linked AS (
    INSERT INTO checks.finding_occurrence (finding_id, finding_case_id, run_id)
    SELECT k.finding_id, cs.finding_case_id, p_run_id
    FROM k JOIN cases cs ON cs.finding_key = k.finding_key
    RETURNING finding_case_id
  )
  UPDATE checks.finding_case c SET last_run_id = p_run_id
  FROM linked l
  WHERE c.finding_case_id = l.finding_case_id AND c.last_run_id <> p_run_id;

  -- found again after it was resolved: open again
  WITH again AS (
    UPDATE checks.finding_case c
       SET review_state = 'open', waiver_reference = NULL, review_note = NULL,
           review_measure = NULL, review_inputs = NULL, review_run_id = NULL,
           reviewed_by = session_user,
           reviewed_at = v_at, last_run_id = p_run_id
     WHERE c.review_state = 'resolved'
       AND c.finding_case_id IN (SELECT o.finding_case_id FROM checks.finding_occurrence o
                                 WHERE o.run_id = p_run_id)
    RETURNING c.finding_case_id
  )
  INSERT INTO checks.finding_review (finding_case_id, event, review_state, run_id, changed_at)
  SELECT a.finding_case_id, 'reopened', 'open', p_run_id, v_at FROM again a;

  -- found again, acknowledged or waived: the review holds for what it was given for. Found
  -- worse, or with a new version of an input since: open again, the reason in the note.
  SELECT array_agg(c.finding_case_id) INTO v_reviewed
  FROM checks.finding_occurrence o
  JOIN checks.finding_case c ON c.finding_case_id = o.finding_case_id
  WHERE o.run_id = p_run_id AND c.review_state IN ('acknowledged', 'waived')
    AND c.review_run_id IS NOT NULL;
  IF v_reviewed IS NOT NULL THEN
    WITH why AS (
      SELECT c.finding_case_id,
             concat_ws('; ',
               CASE WHEN checks.measured_worse(rc.worse, c.review_measure, f.measured_value)
                    THEN format('measured %s%s, worse than the %s%s it was %s for',
                                f.measured_value, ' ' || f.unit, c.review_measure,
                                ' ' || f.unit, c.review_state) END,
               checks.inputs_changed(c.review_inputs, ni.inputs)) AS reason,
             c.review_state AS was, c.waiver_reference AS was_reference
      FROM checks.finding_occurrence o
      JOIN checks.finding f ON f.finding_id = o.finding_id
      JOIN checks.finding_case c ON c.finding_case_id = o.finding_case_id
      JOIN checks.rule_check rc ON rc.paragraph = c.paragraph AND rc.check_code = c.check_code
      JOIN checks.review_inputs(v_reviewed, r.started_at) ni
        ON ni.finding_case_id = c.finding_case_id
      WHERE o.run_id = p_run_id AND c.finding_case_id = ANY (v_reviewed)
    ), notes AS (
      SELECT w.finding_case_id,
             left(format('re-opened by check run %s (%s%s): %s', p_run_id, w.was,
                         ' ' || w.was_reference, w.reason),
                  checks.review_note_max()) AS note
      FROM why w WHERE w.reason <> ''
    ), again AS (
      UPDATE checks.finding_case c
         SET review_state = 'open', waiver_reference = NULL, review_note = n.note,
             review_measure = NULL, review_inputs = NULL, review_run_id = NULL,
             reviewed_by = session_user, reviewed_at = v_at
        FROM notes n
       WHERE c.finding_case_id = n.finding_case_id
      RETURNING c.finding_case_id, n.note
    )
    INSERT INTO checks.finding_review (finding_case_id, event, review_state, note, run_id,
                                       changed_at)
    SELECT a.finding_case_id, 'reopened', 'open', a.note, p_run_id, v_at FROM again a;
  END IF;

  -- covered by the run and not found: resolved
  WITH gone AS (
    UPDATE checks.finding_case c
       SET review_state = 'resolved', waiver_reference = NULL, review_note = NULL,
           review_measure = NULL, review_inputs = NULL, review_run_id = NULL,
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
                ELSE EXISTS (SELECT 1 FROM checks.run_permit rp
                             JOIN checks.outcome o ON o.run_id = rp.outcome_run_id
                                                  AND o.permit_id = rp.permit_id
                             WHERE rp.run_id = p_run_id AND rp.permit_id = c.permit_id
                               AND o.paragraph = c.paragraph
                               AND o.check_code = c.check_code) END
    RETURNING c.finding_case_id
  )
  INSERT INTO checks.finding_review (finding_case_id, event, review_state, run_id, changed_at)
  SELECT g.finding_case_id, 'resolved', 'resolved', p_run_id, v_at FROM gone g;
END $$;
COMMENT ON FUNCTION checks.review_after_run(bigint) IS
  'End of a check run: gives its findings their identity (checks.finding_case), opens the new '
  'ones, re-opens resolved ones found again and acknowledged or waived ones found worse or '
  'with a changed input, resolves the ones the run covered and no longer found; each change '
  'a row of checks.finding_review.';

-- A staff review of one finding (its identity: pub.finding.finding_id, the ID every reader
-- shows):
--   p_state 'acknowledged'  seen, it stands;
--   p_state 'waived'        excused by the variance or decision p_reference (required);
--   p_state 'open'          a review withdrawn (rulem-db finding reopen);
--   p_state NULL            a note only (p_note required), the state unchanged.
-- A state is set only on a current finding (checks.current_occurrence: pub.finding shows
-- it); an acknowledgement or waiver records what it is given for (the measured value, the
-- run, the inputs' versions as that run read them). A resolved or former finding takes notes
-- only: its state is the runner's. The login (session_user) is recorded, also when called
-- through edit.finding's trigger.
CREATE OR REPLACE FUNCTION checks.review_finding(p_finding bigint, p_state text,
                                                 p_reference text DEFAULT NULL,
                                                 p_note text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, checks, pg_temp AS $$
DECLARE
  c checks.finding_case;
  cur record;
  v_ref text := nullif(btrim(p_reference), '');
  v_note text := nullif(btrim(p_note), '');
  v_event text;
  v_inputs jsonb;
  v_measure numeric;
  v_run bigint;
  v_id bigint;
BEGIN
  IF char_length(v_note) > checks.review_note_max() THEN
    RAISE EXCEPTION 'finding %: a note is at most % characters (this one has %)', p_finding,
      to_char(checks.review_note_max(), 'FM999,999,999'),
      to_char(char_length(v_note), 'FM999,999,999,999')
      USING ERRCODE = 'string_data_right_truncation';
  ELSIF char_length(v_ref) > checks.waiver_reference_max() THEN
    RAISE EXCEPTION 'finding %: a waiver reference is at most % characters (this one has %)',
      p_finding, to_char(checks.waiver_reference_max(), 'FM999,999,999'),
      to_char(char_length(v_ref), 'FM999,999,999,999')
      USING ERRCODE = 'string_data_right_truncation';
  END IF;
  SELECT x.* INTO c FROM checks.finding_case x WHERE x.finding_case_id = p_finding;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'finding % does not exist', p_finding USING ERRCODE = 'no_data_found',
      HINT = 'The finding id is finding_id of pub.finding (rulem-db finding list).';
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
  ELSIF p_state = 'open' AND c.review_state = 'open' THEN
    RAISE EXCEPTION 'finding % is open already: nothing to re-open', p_finding
      USING ERRCODE = 'invalid_parameter_value';
  ELSE
    SELECT * INTO cur FROM checks.current_occurrence(p_finding);
    IF NOT FOUND THEN
      RAISE EXCEPTION 'finding % is not a current finding (the latest check run of % did not '
        'find it): only a note can be added', p_finding,
        coalesce('permit ' || (SELECT fe.feature_key FROM core.feature fe
                               WHERE fe.feature_id = c.permit_id), 'the plan area')
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_state <> 'open' THEN
      SELECT i.inputs INTO v_inputs
      FROM checks.review_inputs(ARRAY[p_finding], cur.started_at) i;
      v_measure := cur.measured_value;
      v_run := cur.run_id;
    END IF;
    v_event := CASE p_state WHEN 'open' THEN 'opened' ELSE p_state END;
  END IF;
  UPDATE checks.finding_case x
     SET review_state = coalesce(p_state, x.review_state),
         waiver_reference = CASE WHEN coalesce(p_state, x.review_state) = 'waived'
                                 THEN coalesce(v_ref, x.waiver_reference) END,
         review_note = coalesce(v_note, x.review_note),
         review_measure = CASE WHEN p_state IS NULL THEN x.review_measure
                               ELSE v_measure END,
         review_inputs = CASE WHEN p_state IS NULL THEN x.review_inputs
                              ELSE v_inputs END,
         review_run_id = CASE WHEN p_state IS NULL THEN x.review_run_id
                              ELSE v_run END,
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
  'Staff review of a current finding (pub.finding.finding_id): acknowledged, waived '
  '(reference of the variance or decision required, Rule M 7(g)), open again, or a note '
  '(state NULL; also on a resolved finding); an acknowledgement or waiver records the '
  'measured value and inputs it holds for; recorded with the login in checks.finding_review. '
  'Returns the history row.';

-- Acknowledgements and waivers given before they recorded what they hold for (revision
-- 0037): the finding as the latest run before the review found it, with the inputs as that
-- run read them. Idempotent: only reviews without a recorded run, once.
DO $$
DECLARE
  c record;
  o record;
BEGIN
  FOR c IN
    SELECT x.finding_case_id,
           (SELECT max(v.changed_at) FROM checks.finding_review v
            WHERE v.finding_case_id = x.finding_case_id AND v.event = x.review_state) AS at
    FROM checks.finding_case x
    WHERE x.review_state IN ('acknowledged', 'waived') AND x.review_run_id IS NULL
  LOOP
    SELECT oc.run_id, f.measured_value, r.started_at INTO o
    FROM checks.finding_occurrence oc
    JOIN checks.finding f ON f.finding_id = oc.finding_id
    JOIN checks.run r ON r.run_id = oc.run_id
    WHERE oc.finding_case_id = c.finding_case_id
      AND (c.at IS NULL OR r.finished_at <= c.at)
    ORDER BY oc.run_id DESC LIMIT 1;
    CONTINUE WHEN NOT FOUND;
    UPDATE checks.finding_case x
       SET review_measure = o.measured_value, review_run_id = o.run_id,
           review_inputs = (SELECT i.inputs FROM checks.review_inputs(ARRAY[c.finding_case_id],
                                                                      o.started_at) i)
     WHERE x.finding_case_id = c.finding_case_id;
  END LOOP;
END $$;

REVOKE ALL ON FUNCTION checks.finding_keys(bigint, boolean), checks.review_after_run(bigint),
  checks.review_finding(bigint, text, text, text), checks.review_note_max(),
  checks.waiver_reference_max(), checks.review_tolerance(numeric),
  checks.measured_worse(text, numeric, numeric), checks.review_inputs(bigint[], timestamptz),
  checks.inputs_changed(jsonb, jsonb), checks.current_occurrence(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.finding_keys(bigint, boolean), checks.review_after_run(bigint),
  checks.review_note_max(), checks.waiver_reference_max(), checks.review_tolerance(numeric),
  checks.measured_worse(text, numeric, numeric) TO rulem_etl;
-- Staff review findings: with the CLI under their own login (rulem_staff), in QGIS through
-- edit.finding (rulem_editor), and the writer login the embedded database's commands use.
-- USAGE on checks lets them call it by name; they read none of its tables.
GRANT USAGE ON SCHEMA checks TO rulem_staff, rulem_editor;
GRANT EXECUTE ON FUNCTION checks.review_finding(bigint, text, text, text)
  TO rulem_staff, rulem_editor, rulem_etl;
GRANT SELECT ON checks.finding_case, checks.finding_occurrence, checks.finding_review
  TO rulem_etl;
