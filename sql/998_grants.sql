-- 998_grants: least privilege, re-applied after every change to the files before it.
--   PUBLIC gets nothing; staff and gis read pub only (its views, and execute its functions:
--   the vector tiles); restricted reads restricted; etl writes core through the versioning
--   triggers (which refuse DELETE and history edits) and the staging and ops tables.
--   Everyone who reads layers reads QGIS's public.layer_styles (the default styles), and
--   nobody but the owner writes it: a style saved from QGIS needs the owner's login.
REVOKE ALL ON SCHEMA core, ops, staging, ledger, checks, pub, restricted FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA core, ops, staging, ledger, checks, pub, restricted
  FROM PUBLIC;

GRANT USAGE ON SCHEMA pub TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
GRANT SELECT ON ALL TABLES IN SCHEMA pub TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
GRANT USAGE ON SCHEMA restricted TO rulem_restricted;
GRANT SELECT ON ALL TABLES IN SCHEMA restricted TO rulem_restricted;
-- Readers execute the read-only functions of their schemas (tiles, balances as of a date):
-- those declared STABLE or IMMUTABLE. A VOLATILE function in pub (one that may write) is
-- executable by its owner only, whoever adds it.
DO $$
DECLARE
  f record;
BEGIN
  FOR f IN
    SELECT n.nspname, p.oid::regprocedure AS sig FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname IN ('pub', 'restricted') AND p.prokind = 'f' AND p.provolatile IN ('s', 'i')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', f.sig,
                   CASE f.nspname WHEN 'pub' THEN 'rulem_staff, rulem_gis, rulem_restricted, '
                                                  'rulem_etl'
                                  ELSE 'rulem_restricted' END);
  END LOOP;
END $$;

-- A view runs the functions it calls with the reader's EXECUTE right (its tables with the
-- view owner's), so the read-only functions that published views call (e.g. a SECURITY
-- DEFINER function of checks behind a live view) are executable by that view's readers.
-- Without USAGE on the function's schema a reader cannot call it by name: it only serves
-- the view.
DO $$
DECLARE
  f record;
BEGIN
  FOR f IN
    SELECT DISTINCT p.oid::regprocedure AS sig, vn.nspname
    FROM pg_depend d
    JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
    JOIN pg_class v ON v.oid = r.ev_class
    JOIN pg_namespace vn ON vn.oid = v.relnamespace
    JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
    JOIN pg_namespace pn ON pn.oid = p.pronamespace
    WHERE vn.nspname IN ('pub', 'restricted')
      AND pn.nspname NOT IN ('pg_catalog', 'information_schema', 'public', 'pub', 'restricted')
      AND p.provolatile IN ('s', 'i')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', f.sig,
                   CASE f.nspname WHEN 'pub' THEN 'rulem_staff, rulem_gis, rulem_restricted'
                                  ELSE 'rulem_restricted' END);
  END LOOP;
END $$;

REVOKE ALL ON public.layer_styles FROM PUBLIC;
GRANT SELECT ON public.layer_styles TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;

GRANT USAGE ON SCHEMA core, ops, staging, ledger, checks TO rulem_etl;
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA core TO rulem_etl;
-- ops.batch moves forward only and ops.batch_note is append-only (012_batch_record).
REVOKE ALL ON ops.batch, ops.batch_note FROM rulem_etl;
GRANT SELECT, INSERT, UPDATE ON ops.batch TO rulem_etl;
GRANT SELECT, INSERT ON ops.batch_note TO rulem_etl;
GRANT SELECT ON ops.setting, ops.sql_applied TO rulem_etl;
GRANT ALL ON ALL TABLES IN SCHEMA staging TO rulem_etl;
GRANT CREATE ON SCHEMA staging TO rulem_etl;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA core, ops, staging TO rulem_etl;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA core, ops TO rulem_etl;
REVOKE UPDATE ON core.parameter, core.susceptibility_limit, core.heritage_rank, core.tr55_cover,
  core.plan_area FROM rulem_etl;

-- Locks are the writers': sql/superuser/harden.sql takes the advisory lock functions from
-- PUBLIC and lets the owner pass them on; the writer role gets them here (nothing happens on a
-- database that was not hardened, where every login still has them: `db status` says so).
DO $$
DECLARE
  f record;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure AS sig FROM pg_proc p
    WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname ~ '^pg_(try_)?advisory_'
      AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
      AND has_function_privilege(current_user, p.oid, 'EXECUTE WITH GRANT OPTION')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO rulem_etl', f.sig);
  END LOOP;
END $$;

-- The writers' triggers notify rulem-db watch (sql/172) and record their batch's transaction
-- (sql/012): sql/superuser/harden.sql takes pg_notify and the transaction-id functions from
-- PUBLIC and lets the owner pass them on; rulem_etl and rulem_editor get them here.
DO $$
DECLARE
  f record;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure AS sig FROM pg_proc p
    WHERE ((p.pronamespace = 'pg_catalog'::regnamespace
            AND p.proname IN ('pg_notify', 'txid_current', 'pg_current_xact_id'))
           OR p.proname = 'gettransactionid')
      AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
      AND has_function_privilege(current_user, p.oid, 'EXECUTE WITH GRANT OPTION')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO rulem_etl, rulem_editor', f.sig);
  END LOOP;
END $$;
