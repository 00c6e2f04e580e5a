-- 168_ledger_statistics: the planner's statistics of the ledger's totals and entries, kept
-- up with what a recompute wrote.
--
-- Why: PostgreSQL plans a query from the statistics ANALYZE last gathered, and autovacuum
-- gathers them again only up to a minute (autovacuum_naptime) after a table grew by a tenth.
-- The night after the ledger's first full recompute read pub.parcel_balance while
-- ledger.parcel_total still had no statistics: the planner took its 5,436 rows of the county
-- benchmark for 8, joined them to 100,320 parcels by a nested loop of 530 million
-- comparisons, and the report's parcel CSV took 36-57 s instead of 0.3 s (the checks and the
-- web read the same tables). So a recompute ends by analyzing each of the tables it writes
-- that grew by more than a tenth since the planner last looked (its size in pages against
-- pg_class.relpages, which ANALYZE set: a cheap test, no count), as autovacuum would, only
-- now. A night that changed 1 % of the plan area grows none of them that much and pays
-- nothing; ANALYZE reads a sample of 30,000 rows at most, tens of milliseconds at state size.
--
-- SECURITY DEFINER: ANALYZE needs the table's owner, and the nightly's writer role
-- (rulem_etl) does not own the ledger. The tables are fixed here; the caller chooses none.
CREATE OR REPLACE FUNCTION ledger.refresh_statistics()
RETURNS text[] LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t regclass;
  seen integer;
  now_pages bigint;
  analyzed text[] := '{}';
BEGIN
  FOREACH t IN ARRAY ARRAY['ledger.parcel_total', 'ledger.permit_total', 'ledger.plan_total',
                           'ledger.entry']::regclass[] LOOP
    SELECT c.relpages INTO seen FROM pg_class c WHERE c.oid = t;
    now_pages := pg_relation_size(t) / current_setting('block_size')::integer;
    IF now_pages > 1.1 * greatest(seen, 0) THEN
      EXECUTE format('ANALYZE %s', t);
      analyzed := analyzed || t::text;
    END IF;
  END LOOP;
  RETURN analyzed;
END $$;
COMMENT ON FUNCTION ledger.refresh_statistics() IS
  'Analyzes the ledger''s totals and entries when one grew by more than a tenth (in pages) '
  'since its last ANALYZE, as autovacuum would a minute later; returns the tables analyzed. '
  'Run at the end of every ledger.finish_run, so what reads the ledger next plans from what '
  'it holds.';

REVOKE ALL ON FUNCTION ledger.refresh_statistics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.refresh_statistics() TO rulem_etl;
