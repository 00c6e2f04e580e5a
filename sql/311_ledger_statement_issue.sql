-- 311_ledger_statement_issue: issuing a year's statement (rulem-db statement --issue) and
-- proving later that the figures read are the ones issued (docs/ledger.md section 4b,
-- docs/operations.md section 5).
--
-- The digest: SHA-256 (hex) of the statement's lines in a fixed text form, one line per
-- statement line: line_no|line_code|debit|credit|memo|balance|entry_count|entry ids, acres to
-- 4 decimals, after a header naming the plan area, the year and the time zone. It covers
-- every figure and the id of every entry on every line; entries never change (sql/160), so
-- equal digests mean the same figures from the same entries.
--
-- Issuing, in one transaction: the year must have ended in its time zone, not be issued
-- already, and follow the last year issued (statements are issued year after year; the first
-- issue closes every year before it too); nothing may wait in the plan area's change queue
-- (the statement would leave out facts already recorded). A SHARE lock on ledger.entry waits
-- for the postings in flight and holds new ones back until the issue commits; the issue moment
-- is taken after it, and the statement is read up to that moment (sql/310), digested and
-- recorded with the login (session_user) and the lines. sql/176 then keeps the figures fixed.

CREATE OR REPLACE FUNCTION ledger.statement_digest(p_code text, p_year integer, p_tz text,
                                                   p_lines jsonb)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(
    'rulem-db ledger statement 1' || E'\n' || 'plan_area=' || p_code || E'\n'
    || 'year=' || p_year || E'\n' || 'tz=' || p_tz || E'\n'
    || coalesce(string_agg(concat(
         l ->> 'line_no', '|', l ->> 'line_code', '|',
         round((l ->> 'debit_acres')::numeric, 4), '|',
         round((l ->> 'credit_acres')::numeric, 4), '|',
         round((l ->> 'memo_acres')::numeric, 4), '|',
         round((l ->> 'balance_acres')::numeric, 4), '|',
         l ->> 'entry_count', '|',
         (SELECT string_agg(x, ' ' ORDER BY ord)
          FROM jsonb_array_elements_text(CASE jsonb_typeof(l -> 'entry_ids')
                                           WHEN 'array' THEN l -> 'entry_ids' ELSE '[]' END)
               WITH ORDINALITY AS t(x, ord))),
         E'\n' ORDER BY (l ->> 'line_no')::integer), ''),
    'UTF8')), 'hex')
  FROM jsonb_array_elements(p_lines) AS l
$$;
COMMENT ON FUNCTION ledger.statement_digest(text, integer, text, jsonb) IS
  'SHA-256 (hex) of a statement''s lines (as jsonb, pub.ledger_statement rows) in a fixed text '
  'form: plan area, year, time zone, then each line''s figures (4 decimals), entry count and '
  'entry ids.';

CREATE OR REPLACE FUNCTION ledger.statement_lines_json(p_plan_area text, p_year integer,
                                                       p_tz text DEFAULT NULL,
                                                       p_restated boolean DEFAULT false)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.line_no), '[]')
  FROM pub.ledger_statement(p_plan_area, p_year, p_tz, p_restated) l
$$;
COMMENT ON FUNCTION ledger.statement_lines_json(text, integer, text, boolean) IS
  'pub.ledger_statement''s lines as one jsonb array (what an issue records and digests).';

CREATE OR REPLACE FUNCTION pub.ledger_statement_digest(p_plan_area text, p_year integer)
RETURNS text LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM ledger.statement_reading(p_plan_area, p_year, NULL, false);
  RETURN ledger.statement_digest(p_plan_area, p_year, r.tz,
                                 ledger.statement_lines_json(p_plan_area, p_year));
END $$;
COMMENT ON FUNCTION pub.ledger_statement_digest(text, integer) IS
  'The digest of a plan area''s statement of a year as it reads now (an issued year: as '
  'issued, in its time zone): equal to pub.ledger_statement_issue.digest while the issued '
  'figures stand (docs/ledger.md section 4b).';

CREATE OR REPLACE FUNCTION ledger.issue_statement(p_plan_area text, p_year integer,
                                                  p_tz text DEFAULT 'America/Chicago')
RETURNS SETOF ledger.statement_issue
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_plan integer;
  v_tz text := coalesce(p_tz, 'America/Chicago');
  v_end timestamptz;
  v_done record;
  v_waiting bigint;
  v_at timestamptz;
  v_prev timestamptz;
  v_lines jsonb;
  v_close record;
  v_row ledger.statement_issue;
BEGIN
  SELECT pa.plan_area_id INTO v_plan FROM core.plan_area pa WHERE pa.code = p_plan_area;
  IF v_plan IS NULL THEN
    RAISE EXCEPTION 'no plan area with code %', p_plan_area
      USING HINT = 'SELECT code FROM core.plan_area lists them.';
  END IF;
  IF p_year IS NULL OR p_year NOT BETWEEN 1900 AND 9998 THEN
    RAISE EXCEPTION 'year % is not a calendar year', p_year;
  END IF;
  v_end := make_timestamptz(p_year + 1, 1, 1, 0, 0, 0, v_tz);  -- unknown zone: refused here
  -- One issuer at a time: the checks below read every issue committed before this one.
  LOCK TABLE ledger.statement_issue IN SHARE ROW EXCLUSIVE MODE;
  SELECT i.year, i.issued_at, i.issued_by, i.digest INTO v_done
  FROM ledger.statement_issue i WHERE i.plan_area_id = v_plan AND i.year = p_year;
  IF FOUND THEN
    RAISE EXCEPTION 'the % statement of % was issued on % by % (digest %): an issued year is '
      'never issued again', p_year, p_plan_area,
      to_char(v_done.issued_at AT TIME ZONE v_tz, 'YYYY-MM-DD HH24:MI'), v_done.issued_by,
      left(v_done.digest, 16)
      USING ERRCODE = 'unique_violation',
            HINT = 'Facts recorded later show as prior-period adjustments in the next '
                   'year''s statement; --restated shows the year as now known.';
  END IF;
  IF clock_timestamp() < v_end THEN
    RAISE EXCEPTION '% has not ended (in time zone %): a year''s statement is issued after '
      '31 December', p_year, v_tz USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  SELECT max(i.year) AS last_year, min(i.year) FILTER (WHERE i.year > p_year) AS later
    INTO v_done
  FROM ledger.statement_issue i WHERE i.plan_area_id = v_plan;
  IF v_done.later IS NOT NULL THEN
    RAISE EXCEPTION 'the % statement of % is issued already: statements are issued year '
      'after year, and % was closed with it', v_done.later, p_plan_area, p_year
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = '--restated shows the year as now known.';
  END IF;
  IF v_done.last_year IS NOT NULL AND v_done.last_year < p_year - 1 THEN
    RAISE EXCEPTION 'issue the % statement of % first: statements are issued year after '
      'year (the last issued is %)', v_done.last_year + 1, p_plan_area, v_done.last_year
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  -- Postings in flight commit first; new ones wait until this issue commits.
  LOCK TABLE ledger.entry IN SHARE MODE;
  SELECT count(*) INTO v_waiting FROM ledger.change_queue c
  WHERE c.plan_area_id = v_plan AND c.processed_at IS NULL;
  IF v_waiting > 0 THEN
    RAISE EXCEPTION '% change(s) wait in the ledger''s change queue of %: the statement would '
      'leave out facts already recorded', v_waiting, p_plan_area
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Run rulem-db recompute first, then issue.';
  END IF;
  v_at := clock_timestamp();
  -- The statement as it will read from now on: up to this moment (sql/310).
  v_prev := least(ledger.closed_at(v_plan, make_date(p_year - 1, 12, 31)), v_at);
  SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.line_no), '[]') INTO v_lines
  FROM ledger.statement_lines(v_plan, p_year, v_tz, v_prev, v_at) l;
  SELECT (l ->> 'balance_acres')::numeric AS balance, (l ->> 'entry_count')::bigint AS n
    INTO v_close
  FROM jsonb_array_elements(v_lines) l WHERE l ->> 'line_code' = 'closing_balance';
  INSERT INTO ledger.statement_issue (plan_area_id, year, tz, issued_at, issued_by, digest,
                                      closing_balance_acres, entry_count, lines)
  VALUES (v_plan, p_year, v_tz, v_at, session_user,
          ledger.statement_digest(p_plan_area, p_year, v_tz, v_lines), v_close.balance,
          v_close.n, v_lines)
  RETURNING * INTO v_row;
  -- Read back as everyone will read it: the same digest, or nothing is issued.
  IF pub.ledger_statement_digest(p_plan_area, p_year) <> v_row.digest THEN
    RAISE EXCEPTION 'the % statement of % reads differently once issued: nothing issued',
      p_year, p_plan_area;
  END IF;
  RETURN NEXT v_row;
END $$;
COMMENT ON FUNCTION ledger.issue_statement(text, integer, text) IS
  'Issues a plan area''s statement of a year (rulem-db statement --issue): refuses a year not '
  'ended in the time zone, issued already, out of order, or with changes waiting in the '
  'ledger''s queue; records who (login), when and the digest and lines of the statement as '
  'read up to that moment; from then on the year is read as recorded at it (sql/176, '
  'docs/ledger.md section 4b).';

DROP VIEW IF EXISTS pub.ledger_statement_issue;
CREATE VIEW pub.ledger_statement_issue AS
  SELECT i.statement_issue_id, pa.code AS plan_area, i.plan_area_id, i.year, i.tz,
         i.issued_at, i.issued_by, i.digest,
         n.digest AS digest_now, n.digest = i.digest AS figures_unchanged,
         i.closing_balance_acres::numeric(12,4) AS closing_balance_acres, i.entry_count,
         i.lines
  FROM ledger.statement_issue i
  JOIN core.plan_area pa ON pa.plan_area_id = i.plan_area_id
  CROSS JOIN LATERAL (SELECT pub.ledger_statement_digest(pa.code, i.year) AS digest) n;
COMMENT ON VIEW pub.ledger_statement_issue IS
  'The annual ledger statements issued (rulem-db statement --issue), one per plan area and '
  'year: who issued it, when (the year and every year before it are read as recorded at that '
  'moment from then on), the digest of its figures, and the digest of the statement as it '
  'reads now, which must be the same (docs/ledger.md section 4b).';
COMMENT ON COLUMN pub.ledger_statement_issue.statement_issue_id IS 'Issue id.';
COMMENT ON COLUMN pub.ledger_statement_issue.plan_area IS 'Plan area code.';
COMMENT ON COLUMN pub.ledger_statement_issue.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.ledger_statement_issue.year IS 'Calendar year of effective dates.';
COMMENT ON COLUMN pub.ledger_statement_issue.tz IS 'Time zone the year ran in (its end separates the year''s own lines from its late postings).';
COMMENT ON COLUMN pub.ledger_statement_issue.issued_at IS 'When issued: balances as of any date up to 31 December of the year are read as recorded at this moment.';
COMMENT ON COLUMN pub.ledger_statement_issue.issued_by IS 'Login that issued it.';
COMMENT ON COLUMN pub.ledger_statement_issue.digest IS 'SHA-256 (hex) of the statement''s lines as issued: figures and entry ids (ledger.statement_digest).';
COMMENT ON COLUMN pub.ledger_statement_issue.digest_now IS 'SHA-256 of the statement as it reads now (pub.ledger_statement_digest).';
COMMENT ON COLUMN pub.ledger_statement_issue.figures_unchanged IS 'digest_now = digest: the statement reads now exactly as issued.';
COMMENT ON COLUMN pub.ledger_statement_issue.closing_balance_acres IS 'Closing balance of the year as issued, 4 decimals.';
COMMENT ON COLUMN pub.ledger_statement_issue.entry_count IS 'Entries the closing balance sums.';
COMMENT ON COLUMN pub.ledger_statement_issue.lines IS 'The statement''s lines as issued (pub.ledger_statement rows, jsonb).';

REVOKE ALL ON FUNCTION ledger.statement_digest(text, integer, text, jsonb),
  ledger.statement_lines_json(text, integer, text, boolean),
  pub.ledger_statement_digest(text, integer),
  ledger.issue_statement(text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.statement_digest(text, integer, text, jsonb),
  ledger.statement_lines_json(text, integer, text, boolean),
  ledger.issue_statement(text, integer, text) TO rulem_etl;
GRANT EXECUTE ON FUNCTION pub.ledger_statement_digest(text, integer)
  TO rulem_staff, rulem_gis, rulem_etl;
GRANT SELECT ON pub.ledger_statement_issue TO rulem_staff, rulem_gis, rulem_etl;
