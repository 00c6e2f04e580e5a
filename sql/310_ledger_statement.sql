-- 310_ledger_statement: the annual ledger statement of a plan area, as auditors and the state
-- ask for it: opening balance, impacts debited, credits by status, transfers, reversals and
-- prior-year adjustments, closing balance; every line is a set of ledger entries.
--
-- How entries fall on lines (revision 0019: by effective date, docs/ledger.md section 4a).
-- The statement of year Y holds the plan area's entries whose effective date (the date their
-- fact took effect: a permit's decision, a credit's status, a transfer) lies in Y. The year is
-- "first reported" at its end: midnight starting 1 January Y + 1 in the District's time zone
-- (default America/Chicago), the earliest a statement of Y can be issued. An entry posted by
-- then goes on the line of its measure, or on "reversals" when it reverses an entry; an entry
-- posted after then, a new entry or a reversal, goes on "adjustments" (a prior-period
-- adjustment: a permit decided in Y and loaded later, a correction of Y's figures). So every
-- entry effective in Y is on exactly one line, and
--   closing = opening + sum of the lines' balance effects,
-- with opening = every entry effective before Y (as recorded now) = the closing balance of
-- Y - 1 as this run states it, and closing = pub.plan_balance_as_of(31 December Y). A
-- reversal carries the date of the entry it reverses, so a correction lands in the year of the
-- fact it corrects. Balance effect = credit side minus debit side (spec section 4); memo
-- measures (impact, proposed, constructed and hosted credit) are shown and never move the
-- balance.
--
-- Acres are the entries' published acres (4 decimals, ledger.entry.acres_published; round(acres,
-- 4) for entries posted before revision 0018), the figures pub.plan_balance sums: the closing
-- balance is the plan balance published as of the end of the year, to the last digit, and
-- each entry's exact acres are in pub.ledger_statement_entry.acres_exact.
--
-- SECURITY DEFINER: staff may run the statement (schema pub) without reading ledger.entry;
-- the functions only read, and fix their search_path.

DROP FUNCTION IF EXISTS pub.ledger_statement_entry(text, integer, text);  -- effective_on added
CREATE OR REPLACE FUNCTION pub.ledger_statement_entry(p_plan_area text, p_year integer,
                                                      p_tz text DEFAULT 'America/Chicago')
RETURNS TABLE (line_no integer, line_code text, entry_id bigint, posted_at timestamptz,
               run_id bigint, permit_no text, district_project text, pin text, measure text,
               entry_kind text, acres numeric, balance_acres numeric,
               reverses_entry_id bigint, reversed_posted_at timestamptz, reason text,
               acres_exact numeric, effective_on date)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_plan integer;
  v_from date;
  v_to date;
  v_reported timestamptz;
BEGIN
  SELECT pa.plan_area_id INTO v_plan FROM core.plan_area pa WHERE pa.code = p_plan_area;
  IF v_plan IS NULL THEN
    RAISE EXCEPTION 'no plan area with code %', p_plan_area
      USING HINT = 'SELECT code FROM core.plan_area lists them.';
  END IF;
  v_from := make_date(p_year, 1, 1);
  v_to := make_date(p_year + 1, 1, 1);
  v_reported := make_timestamptz(p_year + 1, 1, 1, 0, 0, 0, p_tz);  -- the year first reported
  RETURN QUERY
  SELECT CASE
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
  WHERE e.plan_area_id = v_plan AND e.effective_on >= v_from AND e.effective_on < v_to
  ORDER BY 1, e.posted_at, e.entry_id;
END $$;
COMMENT ON FUNCTION pub.ledger_statement_entry(text, integer, text) IS
  'Detail of the annual ledger statement: every ledger entry of the plan area effective in the '
  'year (ledger.entry.effective_on), with the statement line it falls on (adjustment: posted '
  'after the year ended in the given time zone, default America/Chicago), its permit, parcel '
  '(pin: its latest version''s PIN in display form, core.pin_display), measure, acres, effect on the balance (credit minus debit) and, for '
  'a reversal, the entry it reverses. acres are the published acres (4 decimals, the figures '
  'the balance views sum), acres_exact the entry''s full precision.';

CREATE OR REPLACE FUNCTION pub.ledger_statement(p_plan_area text, p_year integer,
                                                p_tz text DEFAULT 'America/Chicago')
RETURNS TABLE (line_no integer, line_code text, line text, debit_acres numeric,
               credit_acres numeric, memo_acres numeric, balance_acres numeric,
               entry_count bigint, entry_ids bigint[])
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_plan integer;
  v_from date;
  v_to date;
  v_open numeric;
  v_open_n bigint;
  v_close numeric;
  v_close_n bigint;
BEGIN
  SELECT pa.plan_area_id INTO v_plan FROM core.plan_area pa WHERE pa.code = p_plan_area;
  IF v_plan IS NULL THEN
    RAISE EXCEPTION 'no plan area with code %', p_plan_area
      USING HINT = 'SELECT code FROM core.plan_area lists them.';
  END IF;
  v_from := make_date(p_year, 1, 1);
  v_to := make_date(p_year + 1, 1, 1);
  SELECT coalesce(sum(CASE e.entry_kind WHEN 'credit' THEN 1 WHEN 'debit' THEN -1 ELSE 0 END
                      * coalesce(e.acres_published, round(e.acres, 4))), 0),
         count(*)
    INTO v_open, v_open_n
    FROM ledger.entry e WHERE e.plan_area_id = v_plan AND e.effective_on < v_from;
  SELECT coalesce(sum(CASE e.entry_kind WHEN 'credit' THEN 1 WHEN 'debit' THEN -1 ELSE 0 END
                      * coalesce(e.acres_published, round(e.acres, 4))), 0),
         count(*)
    INTO v_close, v_close_n
    FROM ledger.entry e WHERE e.plan_area_id = v_plan AND e.effective_on < v_to;
  RETURN QUERY
  WITH lines (line_no, line_code, line) AS (
    VALUES
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
      (110, 'adjustment', 'Prior-period adjustments: entries for ' || p_year
                          || ' posted after 31 December ' || p_year
                          || ' (late postings and corrections)')
  ), d AS (
    SELECT * FROM pub.ledger_statement_entry(p_plan_area, p_year, p_tz)
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
           || ' as now recorded)',
         NULL::numeric, NULL::numeric, NULL::numeric, v_open, v_open_n, NULL::bigint[]
  UNION ALL
  SELECT a.line_no, a.line_code, a.line,
         a.debit_acres, a.credit_acres, a.memo_acres,
         CASE WHEN a.line_code IN ('impact', 'credit_constructed', 'credit_proposed',
                                   'credit_hosted') THEN NULL ELSE a.balance_acres END,
         a.entry_count, a.entry_ids
  FROM amounts a
  UNION ALL
  SELECT 120, 'closing_balance', 'Closing balance 31 December ' || p_year,
         NULL, NULL, NULL, v_close, v_close_n, NULL
  ORDER BY 1;
END $$;
COMMENT ON FUNCTION pub.ledger_statement(text, integer, text) IS
  'Annual ledger statement of a plan area (by code) for a calendar year of effective dates '
  '(ledger.entry.effective_on): opening balance (= closing balance of the year before), impacts '
  '(memo), replacement required (debit), credit by status (certified counts; constructed, '
  'proposed and hosted are memo), transfers in and out, reversals of the year''s entries, '
  'prior-period adjustments (entries for the year posted after it ended in the given time '
  'zone, default America/Chicago), closing balance. Acres are the '
  'published figures (4 decimals) that pub.plan_balance sums, so the closing balance is the '
  'published plan balance at the end of the year. Acres are positive on '
  'their own side (a reversal is negative); balance_acres is the line''s effect on the '
  'balance (credit minus debit), so opening + the lines = closing. entry_ids lists the ledger '
  'entries of each line (pub.ledger_statement_entry gives their detail); for the opening and '
  'closing balances entry_count is the number of entries they sum.';

REVOKE ALL ON FUNCTION pub.ledger_statement_entry(text, integer, text),
  pub.ledger_statement(text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pub.ledger_statement_entry(text, integer, text),
  pub.ledger_statement(text, integer, text) TO rulem_staff, rulem_gis, rulem_etl;
