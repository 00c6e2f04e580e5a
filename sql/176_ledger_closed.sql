-- 176_ledger_closed: closed years (docs/ledger.md 4b).
-- Once a year's statement is issued (ledger.statement_issue, revision 0035; sql/311 issues
-- it), the figures as of any date in that year never change. The book is bitemporal already:
-- an issued year is read as recorded at its issue moment. A year before the first issued one
-- is closed by that issue too (issuing Y closes the books through 31 December Y), so the
-- moment a date D was closed is the earliest issue of a year ending on or after D:
--   closed_at(plan area, D) = min(issued_at) over the issues with 31 December year >= D
--                            ('infinity' while D's year is open).
-- A fact recorded after that moment (posted_at > closed_at) is read from the first year not
-- yet issued when it was posted: there it is a prior-period adjustment (sql/310).
--
-- What keeps the issued figures fixed: entries are append-only (sql/160), every issued read
-- sums the entries posted up to the issue moment, and no entry can be inserted afterwards
-- with a posting time at or before the issue moment of a year it falls in (the guard below:
-- a recompute whose transaction began before the issue and posts after it, or a hand insert
-- with a back-dated posting time). The issue itself takes a SHARE lock on ledger.entry, so
-- postings in flight commit before it reads (sql/311).

DROP TRIGGER IF EXISTS statement_issue_append_only ON ledger.statement_issue;
CREATE TRIGGER statement_issue_append_only BEFORE UPDATE OR DELETE ON ledger.statement_issue
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS statement_issue_no_truncate ON ledger.statement_issue;
CREATE TRIGGER statement_issue_no_truncate BEFORE TRUNCATE ON ledger.statement_issue
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();

CREATE OR REPLACE FUNCTION ledger.closed_at(p_plan_area_id integer, p_on date)
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(min(i.issued_at), 'infinity'::timestamptz)
  FROM ledger.statement_issue i
  WHERE i.plan_area_id = p_plan_area_id AND make_date(i.year, 12, 31) >= p_on
$$;
COMMENT ON FUNCTION ledger.closed_at(integer, date) IS
  'The moment the books of a plan area were closed for a date: the earliest issue of a '
  'statement for its year or a later one (infinity while the year is open). Balances as of '
  'the date read the entries posted up to it (docs/ledger.md section 4b).';

CREATE OR REPLACE FUNCTION ledger.entry_closed_books() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger.statement_issue) THEN
    RETURN NULL;
  END IF;
  SELECT n.entry_id, n.effective_on, n.posted_at, i.year, i.issued_at, pa.code INTO r
  FROM new_entries n
  JOIN ledger.statement_issue i
    ON i.plan_area_id = n.plan_area_id AND make_date(i.year, 12, 31) >= n.effective_on
   AND n.posted_at <= i.issued_at
  JOIN core.plan_area pa ON pa.plan_area_id = i.plan_area_id
  ORDER BY i.year, n.entry_id
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger entry effective % with posting time % falls in a closed year: '
      'the % statement of % was issued at %', r.effective_on, r.posted_at, r.year, r.code,
      r.issued_at
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'A recompute that began before the issue posts nothing into the closed '
                   'year: run it again (rulem-db recompute); its entries then count as '
                   'prior-period adjustments of the next year.';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.entry_closed_books() IS
  'Statement trigger on ledger.entry: refuses entries posted (posted_at) at or before the '
  'issue of a statement whose year they fall in or precede, which would change figures '
  'already issued (docs/ledger.md section 4b).';
DROP TRIGGER IF EXISTS entry_closed_books ON ledger.entry;
CREATE TRIGGER entry_closed_books AFTER INSERT ON ledger.entry
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.entry_closed_books();

REVOKE ALL ON FUNCTION ledger.closed_at(integer, date), ledger.entry_closed_books()
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.closed_at(integer, date) TO rulem_etl;
GRANT SELECT ON ledger.statement_issue TO rulem_etl;
