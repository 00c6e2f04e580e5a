-- superuser/harden: what only a superuser can do to keep the readers inside their boundary.
-- The functions below belong to PostgreSQL and PostGIS (to the superuser who created the
-- extension), and every login may call them by default:
--   * advisory locks (pg_advisory_lock ...): a reader could take the ingest, ledger and
--     reconciliation locks and make every writer wait;
--   * PostGIS's statistics readers (ST_EstimatedExtent, _postgis_stats, ...): they read the
--     planner's statistics of any table without asking for the right to read it, so a reader
--     learns the extent of a restricted layer (3(d) species records);
--   * per-table statistics and sizes (pg_stat_get_live_tuples, pg_relation_size ..., and the
--     pg_stat_*_tables views over them): row counts of tables a reader may not read.
-- Here PUBLIC loses them; the database owner keeps them all (with the right to pass them on,
-- which sql/998_grants uses for rulem_etl), the writer role keeps the locks and PostgreSQL's
-- monitoring role the statistics. Applied by `rulem-db db init` / `db migrate` when they run
-- as a superuser and by the embedded cluster's set-up; elsewhere a DBA runs this file once
-- per database (docs/operations.md). Function privileges live in the database, so clones
-- made from a hardened template are hardened. Idempotent.
DO $$
DECLARE
  f record;
  v_owner text := (SELECT pg_get_userbyid(d.datdba) FROM pg_database d
                   WHERE d.datname = current_database());
  v_postgis name := (SELECT e.extnamespace::regnamespace::name FROM pg_extension e
                     WHERE e.extname = 'postgis');
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure AS sig, p.proname ~ '^pg_(try_)?advisory_' AS lock,
           n.nspname = 'pg_catalog' AND p.proname !~ '^pg_(try_)?advisory_' AS stats
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE (n.nspname = 'pg_catalog' AND p.proname ~ '^pg_(try_)?advisory_')
       OR (n.nspname = 'pg_catalog' AND p.proargtypes = '26'::oidvector
           AND p.proname ~ ('^pg_stat_get_(xact_)?(numscans|lastscan|tuples_|live_tuples|'
                            'dead_tuples|mod_since_analyze|ins_since_vacuum|blocks_|last_|'
                            'vacuum_count|autovacuum_count|analyze_count|autoanalyze_count)'))
       OR (n.nspname = 'pg_catalog' AND p.proname IN ('pg_relation_size', 'pg_table_size',
                                                      'pg_indexes_size',
                                                      'pg_total_relation_size'))
       OR (n.nspname = v_postgis AND p.proname IN ('st_estimatedextent', '_postgis_stats',
                                                   '_postgis_selectivity',
                                                   '_postgis_join_selectivity',
                                                   '_postgis_index_extent'))
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.sig);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I WITH GRANT OPTION', f.sig, v_owner);
    IF f.stats THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO pg_read_all_stats', f.sig);
    END IF;
    IF f.lock AND to_regrole('rulem_etl') IS NOT NULL THEN
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO rulem_etl', f.sig);
    END IF;
  END LOOP;
END $$;
