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
-- and the functions that write, sleep, signal or use up what the server has without asking
-- for any right on an object (the classification of every function PUBLIC may execute is in
-- docs/operations.md, "Functions every login may call", and rulem_db/catalogue/hardening.py):
--   * large objects (lo_from_bytea, lo_create, lo_put, lowrite, lo_unlink, ...): any login,
--     in a read-only transaction too, could write megabytes into the database per call;
--   * pg_logical_emit_message: writes to the WAL from a read-only transaction;
--   * pg_sleep, pg_sleep_for, pg_sleep_until: hold a connection (and whatever the statement
--     holds) for as long as asked;
--   * pg_notify: wakes every listener (rulem-db watch) on any channel;
--   * pg_cancel_backend, pg_terminate_backend: end the other sessions of the same login (the
--     web service's pooled connections);
--   * txid_current, pg_current_xact_id and PostGIS's gettransactionid: take a transaction id
--     from a read-only transaction (ids are a finite resource: wraparound).
-- Large objects: rulem-db stores none. Existing ones are given to the database owner and
-- PUBLIC loses every right on them, so a login that wrote one before can neither read nor
-- change it (`rulem-db db status` counts them); lo_compat_privileges (which would turn the
-- large objects' own rights off) is set off for this database.
-- Here PUBLIC loses them; the database owner keeps them all (with the right to pass them on,
-- which sql/998_grants uses for rulem_etl), the writer role keeps the locks and PostgreSQL's
-- monitoring role the statistics; the writers (rulem_etl, rulem_editor) keep pg_notify and
-- the transaction ids, which their statements' triggers use (sql/172, sql/012), and nobody
-- but the owner keeps the rest. Applied by `rulem-db db init` / `db migrate` when they run
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

DO $$
DECLARE
  f record;
  g text;
  lo record;
  v_owner text := (SELECT pg_get_userbyid(d.datdba) FROM pg_database d
                   WHERE d.datname = current_database());
  v_postgis name := (SELECT e.extnamespace::regnamespace::name FROM pg_extension e
                     WHERE e.extname = 'postgis');
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure AS sig,
           p.proname IN ('pg_notify', 'txid_current', 'pg_current_xact_id', 'gettransactionid')
             AS writers
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE (n.nspname = 'pg_catalog'
           AND (p.proname ~ '^(lo_.*|loread|lowrite)$'
                OR p.proname IN ('pg_logical_emit_message', 'pg_sleep', 'pg_sleep_for',
                                 'pg_sleep_until', 'pg_notify', 'pg_cancel_backend',
                                 'pg_terminate_backend', 'txid_current',
                                 'pg_current_xact_id')))
       OR (n.nspname = v_postgis AND p.proname = 'gettransactionid')
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.sig);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I WITH GRANT OPTION', f.sig, v_owner);
    IF f.writers THEN
      FOREACH g IN ARRAY ARRAY['rulem_etl', 'rulem_editor'] LOOP
        IF to_regrole(g) IS NOT NULL THEN
          EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f.sig, g);
        END IF;
      END LOOP;
    END IF;
  END LOOP;
  FOR lo IN SELECT m.oid FROM pg_largeobject_metadata m LOOP
    EXECUTE format('ALTER LARGE OBJECT %s OWNER TO %I', lo.oid, v_owner);
    EXECUTE format('REVOKE ALL ON LARGE OBJECT %s FROM PUBLIC', lo.oid);
    FOR g IN SELECT DISTINCT pg_get_userbyid(a.grantee) FROM pg_largeobject_metadata m
             CROSS JOIN LATERAL aclexplode(m.lomacl) a
             WHERE m.oid = lo.oid AND a.grantee <> 0 AND pg_get_userbyid(a.grantee) <> v_owner
    LOOP
      EXECUTE format('REVOKE ALL ON LARGE OBJECT %s FROM %I', lo.oid, g);
    END LOOP;
  END LOOP;
  EXECUTE format('ALTER DATABASE %I SET lo_compat_privileges = off', current_database());
END $$;
