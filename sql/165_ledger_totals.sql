-- 165_ledger_totals: the plan, permit and parcel totals kept current at posting.
-- Why: the current balance views (pub.plan_balance, pub.permit_balance, pub.parcel_balance,
-- sql/180) read these totals instead of summing every entry at each read; the plan-wide sum
-- grew with the book's history (a change appends a reversal and a new entry). The history
-- queries (pub.*_balance_at, pub.*_balance_as_of) stay sums of the entries.
-- What is kept (revision 0027): per plan area, per (permit, plan area) and per (parcel, plan
-- area) the sums by measure of the entries' published acres (coalesce(acres_published,
-- round(acres, 4)), what the views publish), the plan area's District-project credit and
-- unallocated balance, its count of permits and of parcels in deficit, and the count of
-- entries.
-- How: a STATEMENT trigger with a transition table on ledger.entry adds each statement's
-- entries, grouped by key, to the totals: one row write per key per statement, not per entry,
-- in the posting transaction, so a reader sees the totals and the entries of the same commits.
-- Every path that writes entries is an INSERT (posting, sql/160; a hand or test insert; COPY
-- fires statement triggers too): entries are never updated, deleted or truncated (refused by
-- the triggers of sql/160), so inserts are the only change to follow.
-- Concurrency: INSERT ... ON CONFLICT DO UPDATE adds to the row as committed (a second
-- posting waits for the first's commit and adds to its sum: no lost update). The plan area's
-- row is written first, so every posting transaction of a plan area holds that row from its
-- first posted statement to its commit, and the permit and parcel rows are only ever locked
-- while it is held: they cannot deadlock. Within a statement keys are written in key order
-- (plan areas, then permits, then parcels), so two statements across plan areas lock in
-- the same order. The plan row also counts the permits and parcels in deficit: each
-- statement moves the counts by the rows whose in_deficit it changed, reading them as they
-- were in a snapshot taken once it holds the plan row, which no other posting of the plan
-- area can change before it commits.
-- Restore: pg_restore (rulem-db restore) loads the totals as data and creates the trigger in
-- its post-data section, after the entries are loaded, so nothing is counted twice.
-- A full recompute (a ledger.run of mode 'all') rebuilds the totals from the entries first
-- (ledger.rebuild_totals), and ledger.totals_drift() lists any difference.
-- Who writes them: nobody but these two functions. No role holds INSERT, UPDATE, DELETE or
-- TRUNCATE on the totals; the posting trigger and the rebuild run as the owner (SECURITY
-- DEFINER, search_path pg_catalog, pg_temp, reading no session setting and no temporary
-- object), and no role but the owner may execute the trigger function, so nobody can attach
-- it to a table of its own and feed it entries that are not in ledger.entry. The figures a
-- writer can move are those of the entries it posts, which are append-only (sql/160): a
-- balance is what the book says (docs/operations.md, "Safety").

-- ledger.entry_totals() is written out at apply time: the permits' and the parcels' blocks
-- are one template (key column, table, deficit counter), so the function runs static SQL
-- (planned once per session, as a hand-written body would be) and the two cannot drift apart.
DO $do$
DECLARE
  level text;
  levels text := '';
BEGIN
  FOREACH level IN ARRAY ARRAY['permit', 'parcel'] LOOP
    levels := levels || format($level$
  -- The %1$ss' rows, and the plan area's count of them in deficit moved by the rows
  -- whose in_deficit changed: was reads the rows as they were before this statement (one
  -- snapshot for the whole statement, taken after the plan row above was locked, so no
  -- other posting of the plan area can be between).
  WITH was AS (
    SELECT x.plan_area_id, x.in_deficit FROM ledger.%1$s_total x
    WHERE (x.%1$s_id, x.plan_area_id) IN (SELECT DISTINCT n.%1$s_id, n.plan_area_id
                                            FROM new_entries n WHERE n.%1$s_id IS NOT NULL)
  ), up AS (
    INSERT INTO ledger.%1$s_total AS t
      (%1$s_id, plan_area_id, impact, required, credit, transfer_in, transfer_out,
       credit_proposed, credit_constructed, credit_hosted, entries)
    SELECT d.%1$s_id, d.plan_area_id,
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'impact'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'required'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'transfer_in'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'transfer_out'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_proposed'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_constructed'), 0),
           coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_hosted'), 0),
           count(*)
    FROM (SELECT n.*, coalesce(n.acres_published, round(n.acres, 4)) AS pub
          FROM new_entries n) d
    WHERE d.%1$s_id IS NOT NULL
    GROUP BY d.%1$s_id, d.plan_area_id
    ORDER BY d.%1$s_id, d.plan_area_id
    ON CONFLICT (%1$s_id, plan_area_id) DO UPDATE SET
      impact = t.impact + EXCLUDED.impact, required = t.required + EXCLUDED.required,
      credit = t.credit + EXCLUDED.credit, transfer_in = t.transfer_in + EXCLUDED.transfer_in,
      transfer_out = t.transfer_out + EXCLUDED.transfer_out,
      credit_proposed = t.credit_proposed + EXCLUDED.credit_proposed,
      credit_constructed = t.credit_constructed + EXCLUDED.credit_constructed,
      credit_hosted = t.credit_hosted + EXCLUDED.credit_hosted,
      entries = t.entries + EXCLUDED.entries
    RETURNING t.plan_area_id, t.in_deficit
  )
  UPDATE ledger.plan_total p SET %1$ss_in_deficit = p.%1$ss_in_deficit + c.moved
  FROM (SELECT x.plan_area_id, sum(x.n) AS moved
        FROM (SELECT up.plan_area_id, up.in_deficit::integer AS n FROM up
              UNION ALL
              SELECT was.plan_area_id, -was.in_deficit::integer FROM was) x
        GROUP BY x.plan_area_id HAVING sum(x.n) <> 0) c
  WHERE p.plan_area_id = c.plan_area_id;
$level$, level);
  END LOOP;
  EXECUTE format($fn$
CREATE OR REPLACE FUNCTION ledger.entry_totals() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
BEGIN
  IF TG_TABLE_SCHEMA <> 'ledger' OR TG_TABLE_NAME <> 'entry' OR TG_LEVEL <> 'STATEMENT'
     OR TG_OP <> 'INSERT' THEN
    RAISE EXCEPTION 'ledger.entry_totals adds ledger.entry''s inserts only, not %%.%%''s',
      TG_TABLE_SCHEMA, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- The statement's entries are read once per table (a few thousand rows at most per
  -- posting chunk), written in a fixed order: plan areas, permits, parcels.
  INSERT INTO ledger.plan_total AS t
    (plan_area_id, impact, required, credit, transfer_in, transfer_out, credit_proposed,
     credit_constructed, credit_hosted, district_project_credit, unallocated_balance, entries)
  SELECT d.plan_area_id,
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'impact'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'required'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'transfer_in'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'transfer_out'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_proposed'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_constructed'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit_hosted'), 0),
         coalesce(sum(d.pub) FILTER (WHERE d.measure = 'credit' AND d.project), 0),
         coalesce(sum(CASE d.entry_kind WHEN 'credit' THEN d.pub WHEN 'debit' THEN -d.pub
                      END) FILTER (WHERE NOT d.on_parcel), 0),
         count(*)
  FROM (SELECT n.*, coalesce(n.acres_published, round(n.acres, 4)) AS pub,
               n.district_project IS NOT NULL AS project, n.parcel_id IS NOT NULL AS on_parcel
        FROM new_entries n) d
  GROUP BY d.plan_area_id
  ORDER BY d.plan_area_id
  ON CONFLICT (plan_area_id) DO UPDATE SET
    impact = t.impact + EXCLUDED.impact, required = t.required + EXCLUDED.required,
    credit = t.credit + EXCLUDED.credit, transfer_in = t.transfer_in + EXCLUDED.transfer_in,
    transfer_out = t.transfer_out + EXCLUDED.transfer_out,
    credit_proposed = t.credit_proposed + EXCLUDED.credit_proposed,
    credit_constructed = t.credit_constructed + EXCLUDED.credit_constructed,
    credit_hosted = t.credit_hosted + EXCLUDED.credit_hosted,
    district_project_credit = t.district_project_credit + EXCLUDED.district_project_credit,
    unallocated_balance = t.unallocated_balance + EXCLUDED.unallocated_balance,
    entries = t.entries + EXCLUDED.entries;
%s
  RETURN NULL;
END $$$fn$, levels);
END $do$;

COMMENT ON FUNCTION ledger.entry_totals() IS
  'Statement trigger on ledger.entry: adds the statement''s entries (published acres, by '
  'measure) to ledger.plan_total, permit_total and parcel_total, one write per key, in key '
  'order, the plan area''s row first. Runs as the owner: the one writer of the totals.';

DROP TRIGGER IF EXISTS entry_totals ON ledger.entry;
CREATE TRIGGER entry_totals AFTER INSERT ON ledger.entry
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.entry_totals();

-- The totals as the entries give them: one query for the check and the rebuild.
CREATE OR REPLACE FUNCTION ledger.totals_from_entries()
RETURNS TABLE (level text, plan_area_id integer, key_id bigint, measure text, acres numeric)
LANGUAGE sql STABLE AS $$
  WITH e AS MATERIALIZED (
    SELECT x.plan_area_id, x.permit_id, x.parcel_id, x.measure, x.entry_kind,
           x.district_project IS NOT NULL AS district_project,
           coalesce(x.acres_published, round(x.acres, 4)) AS acres
    FROM ledger.entry x
  )
  SELECT 'plan', e.plan_area_id, NULL::bigint, e.measure, sum(e.acres)
  FROM e GROUP BY e.plan_area_id, e.measure
  UNION ALL
  SELECT 'plan', e.plan_area_id, NULL, 'entries', count(*) FROM e GROUP BY e.plan_area_id
  UNION ALL
  SELECT 'plan', e.plan_area_id, NULL, 'district_project_credit', sum(e.acres)
  FROM e WHERE e.measure = 'credit' AND e.district_project GROUP BY e.plan_area_id
  UNION ALL
  SELECT 'plan', e.plan_area_id, NULL, 'unallocated_balance',
         sum(CASE e.entry_kind WHEN 'credit' THEN e.acres WHEN 'debit' THEN -e.acres END)
  FROM e WHERE e.parcel_id IS NULL AND e.entry_kind <> 'memo' GROUP BY e.plan_area_id
  UNION ALL
  SELECT 'plan', x.plan_area_id, NULL, x.what, count(*)
  FROM (SELECT e.plan_area_id, 'parcels_in_deficit' AS what
        FROM e WHERE e.parcel_id IS NOT NULL GROUP BY e.plan_area_id, e.parcel_id
        HAVING round(sum(CASE e.entry_kind WHEN 'credit' THEN e.acres
                                           WHEN 'debit' THEN -e.acres ELSE 0 END), 4) < 0
        UNION ALL
        SELECT e.plan_area_id, 'permits_in_deficit'
        FROM e WHERE e.permit_id IS NOT NULL GROUP BY e.plan_area_id, e.permit_id
        HAVING round(sum(CASE e.entry_kind WHEN 'credit' THEN e.acres
                                           WHEN 'debit' THEN -e.acres ELSE 0 END), 4) < 0) x
  GROUP BY x.plan_area_id, x.what
  UNION ALL
  SELECT 'permit', e.plan_area_id, e.permit_id, e.measure, sum(e.acres)
  FROM e WHERE e.permit_id IS NOT NULL GROUP BY e.plan_area_id, e.permit_id, e.measure
  UNION ALL
  SELECT 'permit', e.plan_area_id, e.permit_id, 'entries', count(*)
  FROM e WHERE e.permit_id IS NOT NULL GROUP BY e.plan_area_id, e.permit_id
  UNION ALL
  SELECT 'parcel', e.plan_area_id, e.parcel_id, e.measure, sum(e.acres)
  FROM e WHERE e.parcel_id IS NOT NULL GROUP BY e.plan_area_id, e.parcel_id, e.measure
  UNION ALL
  SELECT 'parcel', e.plan_area_id, e.parcel_id, 'entries', count(*)
  FROM e WHERE e.parcel_id IS NOT NULL GROUP BY e.plan_area_id, e.parcel_id
$$;
COMMENT ON FUNCTION ledger.totals_from_entries() IS
  'The figures ledger.plan_total, permit_total and parcel_total should hold, summed from the '
  'entries (published acres), one row per level, plan area, key and measure (or entries, '
  'parcels_in_deficit, permits_in_deficit: counts).';

-- The totals as stored, in the same shape.
CREATE OR REPLACE FUNCTION ledger.totals_stored()
RETURNS TABLE (level text, plan_area_id integer, key_id bigint, measure text, acres numeric)
LANGUAGE sql STABLE AS $$
  SELECT 'plan', t.plan_area_id, NULL::bigint, m.measure, m.acres
  FROM ledger.plan_total t
  CROSS JOIN LATERAL (VALUES ('impact', t.impact), ('required', t.required),
    ('credit', t.credit), ('transfer_in', t.transfer_in), ('transfer_out', t.transfer_out),
    ('credit_proposed', t.credit_proposed), ('credit_constructed', t.credit_constructed),
    ('credit_hosted', t.credit_hosted), ('district_project_credit', t.district_project_credit),
    ('unallocated_balance', t.unallocated_balance), ('entries', t.entries::numeric),
    ('parcels_in_deficit', t.parcels_in_deficit::numeric),
    ('permits_in_deficit', t.permits_in_deficit::numeric))
    AS m(measure, acres)
  UNION ALL
  SELECT x.level, x.plan_area_id, x.key_id, m.measure, m.acres
  FROM (SELECT 'permit' AS level, p.plan_area_id, p.permit_id AS key_id, p.impact, p.required,
               p.credit, p.transfer_in, p.transfer_out, p.credit_proposed,
               p.credit_constructed, p.credit_hosted, p.entries
        FROM ledger.permit_total p
        UNION ALL
        SELECT 'parcel', p.plan_area_id, p.parcel_id, p.impact, p.required, p.credit,
               p.transfer_in, p.transfer_out, p.credit_proposed, p.credit_constructed,
               p.credit_hosted, p.entries
        FROM ledger.parcel_total p) x
  CROSS JOIN LATERAL (VALUES ('impact', x.impact), ('required', x.required),
    ('credit', x.credit), ('transfer_in', x.transfer_in), ('transfer_out', x.transfer_out),
    ('credit_proposed', x.credit_proposed), ('credit_constructed', x.credit_constructed),
    ('credit_hosted', x.credit_hosted), ('entries', x.entries::numeric)) AS m(measure, acres)
$$;
COMMENT ON FUNCTION ledger.totals_stored() IS
  'ledger.plan_total, permit_total and parcel_total as rows of (level, plan area, key, '
  'measure, acres), the shape of ledger.totals_from_entries().';

CREATE OR REPLACE FUNCTION ledger.totals_drift()
RETURNS TABLE (level text, plan_area_id integer, key_id bigint, measure text,
               stored numeric, from_entries numeric)
LANGUAGE sql STABLE AS $$
  -- Paired on coalesce(key_id, 0) (feature ids start at 1; the plan level has none), which a
  -- hash join can use: IS NOT DISTINCT FROM cannot, and matched every parcel's figure of a
  -- measure against every other's (9 s on the county, quadratic in the parcels).
  SELECT coalesce(s.level, e.level), coalesce(s.plan_area_id, e.plan_area_id),
         coalesce(s.key_id, e.key_id), coalesce(s.measure, e.measure),
         coalesce(s.acres, 0), coalesce(e.acres, 0)
  FROM ledger.totals_stored() s
  FULL JOIN ledger.totals_from_entries() e
    ON e.level = s.level AND e.plan_area_id = s.plan_area_id
   AND coalesce(e.key_id, 0) = coalesce(s.key_id, 0) AND e.measure = s.measure
  WHERE coalesce(s.acres, 0) <> coalesce(e.acres, 0)
  ORDER BY 1, 2, 3, 4
$$;
COMMENT ON FUNCTION ledger.totals_drift() IS
  'Consistency check of the kept totals: every (level, plan area, key, measure) where '
  'ledger.plan_total, permit_total or parcel_total differs from the sum of the entries '
  '(published acres; entries, parcels_in_deficit, permits_in_deficit: counts). Empty when '
  'the totals are right.';

CREATE OR REPLACE FUNCTION ledger.rebuild_totals() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
SET work_mem = '64MB' AS $$
DECLARE
  n bigint;
BEGIN
  -- The lock waits for the postings in flight to commit and holds the next ones back until
  -- this transaction commits; the statements below then read every committed entry (each
  -- statement of a READ COMMITTED function takes a new snapshot). Readers are not blocked.
  LOCK TABLE ledger.plan_total, ledger.permit_total, ledger.parcel_total
    IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM ledger.plan_total;
  DELETE FROM ledger.permit_total;
  DELETE FROM ledger.parcel_total;
  -- One statement: the entries are summed once (a materialised CTE) and each level written
  -- from it. No temporary table: this function runs as the owner, and a caller's temporary
  -- schema is the caller's to fill.
  WITH r AS MATERIALIZED (
    SELECT * FROM ledger.totals_from_entries()
  ), plan AS (
    INSERT INTO ledger.plan_total (plan_area_id, impact, required, credit, transfer_in,
      transfer_out, credit_proposed, credit_constructed, credit_hosted, district_project_credit,
      unallocated_balance, entries, parcels_in_deficit, permits_in_deficit)
    SELECT r.plan_area_id,
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'impact'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'required'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_in'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_out'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_proposed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_constructed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_hosted'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'district_project_credit'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'unallocated_balance'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'entries'), 0)::bigint,
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'parcels_in_deficit'), 0)::bigint,
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'permits_in_deficit'), 0)::bigint
    FROM r WHERE r.level = 'plan'
    GROUP BY r.plan_area_id
  ), permit AS (
    INSERT INTO ledger.permit_total (permit_id, plan_area_id, impact, required, credit,
      transfer_in, transfer_out, credit_proposed, credit_constructed, credit_hosted, entries)
    SELECT r.key_id, r.plan_area_id,
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'impact'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'required'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_in'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_out'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_proposed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_constructed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_hosted'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'entries'), 0)::bigint
    FROM r WHERE r.level = 'permit'
    GROUP BY r.key_id, r.plan_area_id
  ), parcel AS (
    INSERT INTO ledger.parcel_total (parcel_id, plan_area_id, impact, required, credit,
      transfer_in, transfer_out, credit_proposed, credit_constructed, credit_hosted, entries)
    SELECT r.key_id, r.plan_area_id,
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'impact'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'required'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_in'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'transfer_out'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_proposed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_constructed'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'credit_hosted'), 0),
           coalesce(sum(r.acres) FILTER (WHERE r.measure = 'entries'), 0)::bigint
    FROM r WHERE r.level = 'parcel'
    GROUP BY r.key_id, r.plan_area_id
  )
  SELECT count(*) INTO n FROM r;
  RETURN n;
END $$;
COMMENT ON FUNCTION ledger.rebuild_totals() IS
  'Rebuilds ledger.plan_total, permit_total and parcel_total from the entries (a full '
  'recompute does it first: ledger.run of mode all); returns the figures written. Runs as '
  'the owner: with the posting trigger, the one writer of the totals.';

-- A full recompute is the book's reconciliation: it starts from totals summed afresh.
CREATE OR REPLACE FUNCTION ledger.run_rebuilds_totals() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ledger.rebuild_totals();
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.run_rebuilds_totals() IS
  'Trigger on ledger.run: a run of mode all (rulem-db recompute --all, nightly --full) '
  'rebuilds the totals from the entries when it starts.';
DROP TRIGGER IF EXISTS run_all_rebuilds_totals ON ledger.run;
CREATE TRIGGER run_all_rebuilds_totals AFTER INSERT ON ledger.run
  FOR EACH ROW WHEN (NEW.mode = 'all') EXECUTE FUNCTION ledger.run_rebuilds_totals();

REVOKE ALL ON FUNCTION ledger.entry_totals(), ledger.totals_from_entries(),
  ledger.totals_stored(), ledger.totals_drift(), ledger.rebuild_totals(),
  ledger.run_rebuilds_totals() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.totals_from_entries(), ledger.totals_stored(),
  ledger.totals_drift(), ledger.rebuild_totals() TO rulem_etl;
-- The totals are read by the writers and written by nobody but the two functions above.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger.plan_total, ledger.permit_total,
  ledger.parcel_total FROM rulem_etl;
GRANT SELECT ON ledger.plan_total, ledger.permit_total, ledger.parcel_total TO rulem_etl;
