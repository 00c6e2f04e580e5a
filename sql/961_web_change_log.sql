-- 961_web_change_log: what each published view reads, found in the catalogue, and a record
-- of every write to those tables, so that `rulem-db serve` gives each collection an ETag that
-- changes whenever what it shows changes (docs/publishing.md, "Web service").
-- The table web.table_change is made by revision 0032.

-- The tables a view of pub reads, through other views, materialized views and functions
-- whose bodies PostgreSQL records (BEGIN ATOMIC), recursively from pg_rewrite and pg_depend.
-- A function whose body is not recorded (LANGUAGE sql/plpgsql with a string body) and that
-- may read tables (STABLE or VOLATILE, outside pg_catalog and public, where PostGIS lives)
-- is opaque: its view answers source '*' (it follows every table that has the trigger).
-- `tracked` says whether the source carries the trigger below.
CREATE OR REPLACE FUNCTION web.pub_view_sources()
RETURNS TABLE (view_name text, source text, tracked boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
  WITH RECURSIVE deps(classid, objid) AS (
    SELECT 'pg_class'::regclass::oid, c.oid FROM pg_class c
    WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('v', 'm', 'r', 'p')
  ), walk(view_oid, classid, objid) AS (
    SELECT objid, classid, objid FROM deps
    UNION
    SELECT w.view_oid, d.refclassid, d.refobjid
    FROM walk w
    JOIN pg_depend d ON (
           -- a view's or materialized view's rule
           (w.classid = 'pg_class'::regclass AND d.classid = 'pg_rewrite'::regclass
            AND d.objid IN (SELECT r.oid FROM pg_rewrite r WHERE r.ev_class = w.objid))
           -- a function with a recorded body
        OR (w.classid = 'pg_proc'::regclass AND d.classid = 'pg_proc'::regclass
            AND d.objid = w.objid))
    WHERE d.refclassid IN ('pg_class'::regclass, 'pg_proc'::regclass)
      AND NOT (d.refclassid = 'pg_class'::regclass AND d.refobjid = w.objid)
      AND d.deptype = 'n'
  ), leaves AS (
    SELECT w.view_oid, c.oid AS rel, n.nspname || '.' || c.relname AS source
    FROM walk w
    JOIN pg_class c ON w.classid = 'pg_class'::regclass AND c.oid = w.objid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'f')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND NOT (n.nspname = 'public' AND c.relname = 'spatial_ref_sys')
    UNION
    SELECT w.view_oid, NULL::oid, '*'
    FROM walk w
    JOIN pg_proc p ON w.classid = 'pg_proc'::regclass AND p.oid = w.objid
    WHERE p.provolatile <> 'i' AND p.prosqlbody IS NULL
      AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'public'::regnamespace)
  )
  SELECT DISTINCT v.relname::text, l.source,
         l.rel IS NULL OR EXISTS (
           SELECT 1 FROM pg_trigger t
           WHERE t.tgrelid = l.rel AND t.tgname = 'web_change_stamp')
  FROM leaves l JOIN pg_class v ON v.oid = l.view_oid
$$;
COMMENT ON FUNCTION web.pub_view_sources() IS
  'For each view of pub, the tables it reads (through views and recorded function bodies; '
  '''*'' for a function whose body is not recorded) and whether each carries the change '
  'trigger: rulem-db serve derives each collection''s ETag from these.';

-- One row per write statement on a source table; the older rows of the same table that no
-- other transaction holds are deleted, so the table keeps about one row per source. Only the
-- set of ids matters to a reader: a committed write always adds an id never seen before,
-- whatever order transactions commit in.
CREATE OR REPLACE FUNCTION web.note_change()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  src text := TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME;
  mine bigint;
  noted text := coalesce(current_setting('rulem.web_noted', true), '');
BEGIN
  -- One stamp per source per transaction is enough (readers see the transaction whole), and
  -- a load that writes row by row (core.register_feature: one INSERT per new feature) would
  -- otherwise add and prune a row per statement, each prune reading the dead rows of the
  -- ones before it: 100,000 parcels took 88 minutes instead of seconds. The list of sources
  -- noted is transaction-local, and undone with a rolled-back savepoint like the stamp.
  IF position('|' || src || '|' IN noted) > 0 THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('rulem.web_noted', noted || '|' || src || '|', true);
  INSERT INTO web.table_change (source) VALUES (src) RETURNING change_id INTO mine;
  -- Pruning is left to read-committed writers: in a snapshot transaction (the check run's
  -- workers share one, REPEATABLE READ) a row another transaction deleted since the snapshot
  -- would end the writer with a serialization failure; the rows it leaves cost nothing.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RETURN NULL;
  END IF;
  DELETE FROM web.table_change t
  WHERE t.ctid IN (SELECT o.ctid FROM web.table_change o
                   WHERE o.source = src AND o.change_id < mine
                   FOR UPDATE SKIP LOCKED);
  RETURN NULL;
END
$$;
COMMENT ON FUNCTION web.note_change() IS
  'Statement trigger of every table a published view reads: records that the table '
  'changed (web.table_change), for rulem-db serve''s ETags.';
REVOKE ALL ON FUNCTION web.note_change() FROM PUBLIC;

-- The trigger on every table of the project's schemas (an opaque function may read any of
-- them) and on every other source of a published view the migrating role owns.
DO $$
DECLARE
  t regclass;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
      AND n.nspname IN ('core', 'ops', 'staging', 'ledger', 'checks', 'restricted')
      AND pg_has_role(current_user, c.relowner, 'USAGE')
    UNION
    SELECT c.oid::regclass FROM web.pub_view_sources() s
    JOIN pg_class c ON c.oid = to_regclass(s.source)
    WHERE s.source <> '*' AND NOT c.relispartition
      AND pg_has_role(current_user, c.relowner, 'USAGE')
  LOOP
    EXECUTE format('CREATE OR REPLACE TRIGGER web_change_stamp AFTER INSERT OR UPDATE OR '
                   'DELETE OR TRUNCATE ON %s FOR EACH STATEMENT '
                   'EXECUTE FUNCTION web.note_change()', t);
  END LOOP;
END
$$;

-- Each source's recorded changes (their ids, in order): a collection's ETag is a digest of
-- its sources' lists. SECURITY DEFINER because the readers may not read web.table_change;
-- it returns table names and numbers only.
CREATE OR REPLACE FUNCTION web.source_stamps()
RETURNS TABLE (source text, stamp text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
  SELECT t.source, string_agg(t.change_id::text, ',' ORDER BY t.change_id)
  FROM web.table_change t GROUP BY t.source
$$;
COMMENT ON FUNCTION web.source_stamps() IS
  'For each table written since the service''s change log began, the ids of its latest '
  'writes: what rulem-db serve makes ETags from.';

REVOKE ALL ON FUNCTION web.pub_view_sources(), web.source_stamps() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION web.pub_view_sources(), web.source_stamps()
  TO rulem_staff, rulem_gis, rulem_restricted;
