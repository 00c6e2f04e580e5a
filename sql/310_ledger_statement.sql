-- 310_ledger_statement: the annual ledger statement of a plan area, as auditors and the state
-- ask for it: opening balance, prior-period adjustments, impacts debited, credits by status,
-- transfers, reversals and late postings, closing balance; every line is a set of ledger
-- entries.
--
-- How entries fall on lines (by effective date, docs/ledger.md sections 4a and 4b). The
-- statement of year Y is read up to a cut: the moment Y's books were closed (the issue of its
-- statement, or of the first statement issued after it: ledger.closed_at, sql/176), or
-- everything recorded while Y is open or when the year is asked restated. With prev the cut
-- of Y - 1 (never later than Y's):
--   opening      = entries effective before Y, posted up to prev (the closing balance of
--                  Y - 1 as its statement reads it: as issued once closed);
--   prior_period = entries effective before Y, posted after prev and up to the cut: facts of
--                  closed years recorded after their books closed (prior-period adjustments);
--   the year     = entries effective in Y, posted up to the cut: on the line of their
--                  measure, or on "reversals" when they reverse an entry, or on "adjustment"
--                  (late postings) when posted after the year ended (midnight starting
--                  1 January Y + 1 in the statement's time zone, default America/Chicago): a
--                  permit decided in Y and loaded later, a correction of Y's figures;
--   closing      = opening + the lines = entries effective by 31 December Y, posted up to the
--                  cut = pub.plan_balance_as_of(31 December Y), which reads a closed year at
--                  the same cut.
-- So every entry is on exactly one year's statement as read now: its effective year while
-- that year is open or when posted before it closed, else the first year not yet closed when
-- it was posted. Restated (p_restated), the cut is everything recorded: the year as now known,
-- with no prior-period line. A reversal carries the date of the entry it reverses, so a
-- correction lands in the year of the fact it corrects. Balance effect = credit side minus
-- debit side (docs/ledger.md section 1); memo measures (impact, proposed, constructed and hosted credit)
-- are shown and never move the balance.
--
-- Acres are the entries' published acres (4 decimals, ledger.entry.acres_published; round(acres,
-- 4) for entries posted before revision 0018), the figures pub.plan_balance sums: the closing
-- balance is the plan balance published as of the end of the year, to the last digit, and
-- each entry's exact acres are in pub.ledger_statement_entry.acres_exact.
--
-- The time zone: an issued year is read in the time zone it was issued in (another one asked
-- for is refused, unless restated); otherwise the one asked for, default America/Chicago.
--
-- SECURITY DEFINER: staff may run the statement (schema pub) without reading ledger.entry;
-- the functions only read, and fix their search_path.

DROP FUNCTION IF EXISTS pub.ledger_statement_entry(text, integer, text);  -- revision 0035
DROP FUNCTION IF EXISTS pub.ledger_statement(text, integer, text);        -- p_restated added

-- The entries of a statement read up to given cuts (p_prev: Y - 1's, p_cut: Y's).
CREATE OR REPLACE FUNCTION ledger.statement_entries(p_plan_area_id integer, p_year integer,
                                                    p_tz text, p_prev timestamptz,
                                                    p_cut timestamptz)
RETURNS TABLE (line_no integer, line_code text, entry_id bigint, posted_at timestamptz,
               run_id bigint, permit_no text, district_project text, pin text, measure text,
               entry_kind text, acres numeric, balance_acres numeric,
               reverses_entry_id bigint, reversed_posted_at timestamptz, reason text,
               acres_exact numeric, effective_on date)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_from date := make_date(p_year, 1, 1);
  v_to date := make_date(p_year + 1, 1, 1);
  -- the year first reported: its end in the statement's time zone
  v_reported timestamptz := make_timestamptz(p_year + 1, 1, 1, 0, 0, 0, p_tz);
BEGIN
  RETURN QUERY
  SELECT CASE
           WHEN e.effective_on < v_from THEN 15
           WHEN e.posted_at >= v_reported THEN 110
           WHEN e.reverses_entry_id IS NOT NULL THEN 100
           WHEN e.measure = 'impact' THEN 20
           WHEN e.measure = 'required' THEN 30
           WHEN e.measure = 'credit' THEN 40
           WHEN e.measure = 'credit_constructed' THEN 50
           WHEN e.measure = 'credit_proposed' THEN 60
           WHEN e.measure = 'credit_hosted' THEN 70
           WHEN e.measure = 'transfer_in' THEN 80
           WHEN e.measure = 'transfer_out' THEN 90
           ELSE 95 END,
         CASE
           WHEN e.effective_on < v_from THEN 'prior_period'
           WHEN e.posted_at >= v_reported THEN 'adjustment'
           WHEN e.reverses_entry_id IS NOT NULL THEN 'reversal'
           ELSE e.measure END,
         e.entry_id, e.posted_at, e.run_id, pf.feature_key, e.district_project,
         core.pin_display(coalesce(pp.pin, cf.feature_key)),
         e.measure, e.entry_kind, e.published,
         CASE e.entry_kind WHEN 'credit' THEN e.published WHEN 'debit' THEN -e.published
                           ELSE 0 END,
         e.reverses_entry_id, r.posted_at, e.reason, e.acres, e.effective_on
  FROM (SELECT x.*, coalesce(x.acres_published, round(x.acres, 4)) AS published
        FROM ledger.entry x) e
  LEFT JOIN ledger.entry r ON r.entry_id = e.reverses_entry_id
  LEFT JOIN core.feature pf ON pf.feature_id = e.permit_id
  LEFT JOIN core.feature cf ON cf.feature_id = e.parcel_id
  LEFT JOIN LATERAL (SELECT p.pin FROM core.parcel p  -- as pub.ledger_entry shows it
                     WHERE p.plan_area_id = e.plan_area_id AND p.parcel_id = e.parcel_id
                     ORDER BY p.valid_from DESC LIMIT 1) pp ON true
  WHERE e.plan_area_id = p_plan_area_id AND e.posted_at <= p_cut
    AND ((e.effective_on >= v_from AND e.effective_on < v_to)
         OR (e.effective_on < v_from AND e.posted_at > p_prev))
  ORDER BY 1, e.posted_at, e.entry_id;
END $$;
COMMENT ON FUNCTION ledger.statement_entries(integer, integer, text, timestamptz, timestamptz) IS
  'The entries of a plan area''s statement of a year read up to given cuts (the year before''s '
  'and the year''s): entries effective in the year posted up to the cut, and entries '
  'effective before it posted between the two cuts (prior_period), with their lines.';

-- The lines of a statement read up to given cuts.
CREATE OR REPLACE FUNCTION ledger.statement_lines(p_plan_area_id integer, p_year integer,
                                                  p_tz text, p_prev timestamptz,
                                                  p_cut timestamptz,
                                                  p_restated boolean DEFAULT false)
RETURNS TABLE (line_no integer, line_code text, line text, debit_acres numeric,
               credit_acres numeric, memo_acres numeric, balance_acres numeric,
               entry_count bigint, entry_ids bigint[])
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_from date := make_date(p_year, 1, 1);
  v_to date := make_date(p_year + 1, 1, 1);
  v_open numeric;
  v_open_n bigint;
  v_close numeric;
  v_close_n bigint;
  v_prev_text text := CASE WHEN p_prev < 'infinity' THEN
    'as its books closed ' || to_char(p_prev AT TIME ZONE p_tz, 'YYYY-MM-DD HH24:MI') ELSE
    'as now recorded' END;
  v_cut_text text := CASE WHEN p_cut < 'infinity' THEN
    ', as issued ' || to_char(p_cut AT TIME ZONE p_tz, 'YYYY-MM-DD HH24:MI') WHEN p_restated
    THEN ', restated (as now recorded)' ELSE '' END;
BEGIN
  SELECT coalesce(sum(CASE e.entry_kind WHEN 'credit' THEN 1 WHEN 'debit' THEN -1 ELSE 0 END
                      * coalesce(e.acres_published, round(e.acres, 4))), 0),
         count(*)
    INTO v_open, v_open_n
    FROM ledger.entry e
    WHERE e.plan_area_id = p_plan_area_id AND e.effective_on < v_from
      AND e.posted_at <= p_prev;
  SELECT coalesce(sum(CASE e.entry_kind WHEN 'credit' THEN 1 WHEN 'debit' THEN -1 ELSE 0 END
                      * coalesce(e.acres_published, round(e.acres, 4))), 0),
         count(*)
    INTO v_close, v_close_n
    FROM ledger.entry e
    WHERE e.plan_area_id = p_plan_area_id AND e.effective_on < v_to
      AND e.posted_at <= p_cut;
  RETURN QUERY
  WITH lines (line_no, line_code, line) AS (
    VALUES
      (15, 'prior_period', 'Prior-period adjustments: facts of years before ' || p_year
                           || ' recorded after those years were closed (statements issued)'),
      (20, 'impact', 'Wetland impact (fill, excavation, drainage x factor), memo'),
      (30, 'required', 'Replacement required, debited (impact x replacement ratio, 7(b))'),
      (40, 'credit', 'Replacement credit certified, counted'),
      (50, 'credit_constructed', 'Replacement credit constructed, not yet counted (memo)'),
      (60, 'credit_proposed', 'Replacement credit proposed, not yet counted (memo)'),
      (70, 'credit_hosted', 'Counted credit by the parcel that hosts it (memo)'),
      (80, 'transfer_in', 'Credit transferred in'),
      (90, 'transfer_out', 'Credit transferred out'),
      (100, 'reversal', 'Reversals of ' || p_year || ' entries, posted by 31 December '
                        || p_year || ' (recomputed figures)'),
      (110, 'adjustment', 'Late postings: entries for ' || p_year
                          || ' posted after 31 December ' || p_year
                          || CASE WHEN p_cut < 'infinity'
                                  THEN ' and before its books closed' ELSE '' END
                          || ' (late filings and corrections)')
  ), d AS (
    SELECT * FROM ledger.statement_entries(p_plan_area_id, p_year, p_tz, p_prev, p_cut)
  ), amounts AS (
    SELECT l.line_no, l.line_code, l.line,
           coalesce(sum(d.acres) FILTER (WHERE d.entry_kind = 'debit'), 0) AS debit_acres,
           coalesce(sum(d.acres) FILTER (WHERE d.entry_kind = 'credit'), 0) AS credit_acres,
           coalesce(sum(d.acres) FILTER (WHERE d.entry_kind = 'memo'), 0) AS memo_acres,
           coalesce(sum(d.balance_acres), 0) AS balance_acres,
           count(d.entry_id) AS entry_count,
           coalesce(array_agg(d.entry_id ORDER BY d.entry_id)
                      FILTER (WHERE d.entry_id IS NOT NULL), '{}') AS entry_ids
    FROM (SELECT * FROM lines
          UNION ALL
          SELECT 95, 'other', 'Other entries'
          WHERE EXISTS (SELECT 1 FROM d WHERE d.line_no = 95)) l
    LEFT JOIN d ON d.line_no = l.line_no
    GROUP BY l.line_no, l.line_code, l.line
  )
  SELECT 10, 'opening_balance'::text,
         'Opening balance 1 January ' || p_year || ' (closing balance of ' || (p_year - 1)
           || ' ' || v_prev_text || ')',
         NULL::numeric, NULL::numeric, NULL::numeric, v_open, v_open_n, NULL::bigint[]
  UNION ALL
  SELECT a.line_no, a.line_code, a.line,
         a.debit_acres, a.credit_acres, a.memo_acres,
         CASE WHEN a.line_code IN ('impact', 'credit_constructed', 'credit_proposed',
                                   'credit_hosted') THEN NULL ELSE a.balance_acres END,
         a.entry_count, a.entry_ids
  FROM amounts a
  UNION ALL
  SELECT 120, 'closing_balance', 'Closing balance 31 December ' || p_year || v_cut_text,
         NULL, NULL, NULL, v_close, v_close_n, NULL
  ORDER BY 1;
END $$;
COMMENT ON FUNCTION ledger.statement_lines(integer, integer, text, timestamptz, timestamptz,
                                           boolean) IS
  'The lines of a plan area''s statement of a year read up to given cuts (the year before''s '
  'and the year''s): what pub.ledger_statement returns and ledger.issue_statement digests.';

-- Which cuts and time zone a statement is read with (closed years: sql/176).
CREATE OR REPLACE FUNCTION ledger.statement_reading(p_plan_area text, p_year integer,
                                                    p_tz text, p_restated boolean,
                                                    OUT plan_area_id integer, OUT tz text,
                                                    OUT prev timestamptz, OUT cut timestamptz)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_issue record;
BEGIN
  SELECT pa.plan_area_id INTO plan_area_id FROM core.plan_area pa WHERE pa.code = p_plan_area;
  IF plan_area_id IS NULL THEN
    RAISE EXCEPTION 'no plan area with code %', p_plan_area
      USING HINT = 'SELECT code FROM core.plan_area lists them.';
  END IF;
  IF p_year IS NULL OR p_year NOT BETWEEN 1900 AND 9998 THEN
    RAISE EXCEPTION 'year % is not a calendar year', p_year;
  END IF;
  SELECT i.tz, i.issued_at INTO v_issue FROM ledger.statement_issue i
  WHERE i.plan_area_id = statement_reading.plan_area_id AND i.year = p_year;
  IF FOUND AND NOT p_restated THEN
    IF p_tz IS NOT NULL AND p_tz <> v_issue.tz THEN
      RAISE EXCEPTION 'the % statement of % was issued in time zone %, not %', p_year,
        p_plan_area, v_issue.tz, p_tz
        USING HINT = 'Ask without a time zone, or for the year restated (as now known).';
    END IF;
    tz := v_issue.tz;
  ELSE
    tz := coalesce(p_tz, 'America/Chicago');
  END IF;
  PERFORM make_timestamptz(p_year, 1, 1, 0, 0, 0, tz);  -- an unknown time zone: one line
  IF p_restated THEN
    prev := 'infinity';
    cut := 'infinity';
  ELSE
    cut := ledger.closed_at(plan_area_id, make_date(p_year, 12, 31));
    prev := least(ledger.closed_at(plan_area_id, make_date(p_year - 1, 12, 31)), cut);
  END IF;
END $$;
COMMENT ON FUNCTION ledger.statement_reading(text, integer, text, boolean) IS
  'How a statement is read: the plan area, the time zone (an issued year''s own unless '
  'restated) and the cuts of the year before and of the year (their closing moments, '
  'infinity while open or when restated).';

CREATE OR REPLACE FUNCTION pub.ledger_statement_entry(p_plan_area text, p_year integer,
                                                      p_tz text DEFAULT NULL,
                                                      p_restated boolean DEFAULT false)
RETURNS TABLE (line_no integer, line_code text, entry_id bigint, posted_at timestamptz,
               run_id bigint, permit_no text, district_project text, pin text, measure text,
               entry_kind text, acres numeric, balance_acres numeric,
               reverses_entry_id bigint, reversed_posted_at timestamptz, reason text,
               acres_exact numeric, effective_on date)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r
  FROM ledger.statement_reading(p_plan_area, p_year, p_tz, coalesce(p_restated, false));
  RETURN QUERY SELECT * FROM ledger.statement_entries(r.plan_area_id, p_year, r.tz, r.prev,
                                                      r.cut);
END $$;
COMMENT ON FUNCTION pub.ledger_statement_entry(text, integer, text, boolean) IS
  'Detail of the annual ledger statement: every ledger entry on it, with the line it falls on '
  '(prior_period: an earlier year''s entry recorded after that year''s books closed; '
  'adjustment: an entry of the year posted after the year ended in the time zone, default '
  'America/Chicago, or the one the year was issued in), its permit, parcel (pin: its latest '
  'version''s PIN in display form, core.pin_display), measure, acres, effect on the balance '
  '(credit minus debit) and, for a reversal, the entry it reverses. acres are the published '
  'acres (4 decimals, the figures the balance views sum), acres_exact the entry''s full '
  'precision. An issued year is read as issued; p_restated = true reads it as now known '
  '(docs/ledger.md section 4b).';

CREATE OR REPLACE FUNCTION pub.ledger_statement(p_plan_area text, p_year integer,
                                                p_tz text DEFAULT NULL,
                                                p_restated boolean DEFAULT false)
RETURNS TABLE (line_no integer, line_code text, line text, debit_acres numeric,
               credit_acres numeric, memo_acres numeric, balance_acres numeric,
               entry_count bigint, entry_ids bigint[])
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r
  FROM ledger.statement_reading(p_plan_area, p_year, p_tz, coalesce(p_restated, false));
  RETURN QUERY SELECT * FROM ledger.statement_lines(r.plan_area_id, p_year, r.tz, r.prev,
                                                    r.cut, coalesce(p_restated, false));
END $$;
COMMENT ON FUNCTION pub.ledger_statement(text, integer, text, boolean) IS
  'Annual ledger statement of a plan area (by code) for a calendar year of effective dates '
  '(ledger.entry.effective_on): opening balance (= closing balance of the year before as its '
  'statement reads it), prior-period adjustments (entries of earlier years recorded after '
  'their books closed), impacts (memo), replacement required (debit), credit by status '
  '(certified counts; constructed, proposed and hosted are memo), transfers in and out, '
  'reversals of the year''s entries, late postings (adjustment: entries for the year posted '
  'after it ended in the time zone), closing balance. A year whose statement was issued '
  '(pub.ledger_statement_issue) is read as recorded at its issue, so it returns the figures '
  'issued; p_restated = true reads it as now known. Acres are the published figures (4 '
  'decimals) that pub.plan_balance sums, so the closing balance is '
  'pub.plan_balance_as_of(31 December). Acres are positive on their own side (a reversal is '
  'negative); balance_acres is the line''s effect on the balance (credit minus debit), so '
  'opening + the lines = closing. entry_ids lists the ledger entries of each line '
  '(pub.ledger_statement_entry gives their detail); for the opening and closing balances '
  'entry_count is the number of entries they sum.';

REVOKE ALL ON FUNCTION
  ledger.statement_entries(integer, integer, text, timestamptz, timestamptz),
  ledger.statement_lines(integer, integer, text, timestamptz, timestamptz, boolean),
  ledger.statement_reading(text, integer, text, boolean),
  pub.ledger_statement_entry(text, integer, text, boolean),
  pub.ledger_statement(text, integer, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
  ledger.statement_entries(integer, integer, text, timestamptz, timestamptz),
  ledger.statement_lines(integer, integer, text, timestamptz, timestamptz, boolean),
  ledger.statement_reading(text, integer, text, boolean) TO rulem_etl;
GRANT EXECUTE ON FUNCTION pub.ledger_statement_entry(text, integer, text, boolean),
  pub.ledger_statement(text, integer, text, boolean) TO rulem_staff, rulem_gis, rulem_etl;
