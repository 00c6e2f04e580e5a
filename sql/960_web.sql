-- 960_web: what `rulem-db serve` (rulem_web) asks the database besides the published views:
-- the change stamps behind its ETags, and which kind of change each published view follows.
-- Schema web is made by revision 0026 (it also holds tipg's catalog functions, installed
-- there so that readers need no temporary objects).

-- The latest change of each kind, as ids that only grow: a write to any layer table (ingest,
-- edit, close: ops.layer_write), a ledger posting, a check run, a finding review. SECURITY
-- DEFINER because the readers may not read ops, ledger or checks; it returns four numbers
-- and nothing else. Each is the max of a primary key: an index probe, cheap on every tile.
CREATE OR REPLACE FUNCTION web.change_stamps(
  OUT layer_write bigint, OUT ledger_entry bigint, OUT check_run bigint,
  OUT finding_review bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
  SELECT (SELECT max(layer_write_id) FROM ops.layer_write),
         (SELECT max(entry_id) FROM ledger.entry),
         (SELECT max(run_id) FROM checks.run),
         (SELECT max(review_id) FROM checks.finding_review)
$$;
COMMENT ON FUNCTION web.change_stamps() IS
  'The latest layer write, ledger entry, check run and finding review (ids that only grow): '
  'rulem-db serve derives its tiles'' and items'' ETags from them.';

-- Which kinds of change each view of pub follows: 'ledger' when it reads schema ledger,
-- 'checks' when it reads schema checks (through other views too), else 'layer'. Read once
-- at the service's start.
CREATE OR REPLACE FUNCTION web.pub_view_kind()
RETURNS TABLE (view_name text, reads_ledger boolean, reads_checks boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
  WITH RECURSIVE reads(view_oid, ref) AS (
    SELECT r.ev_class, d.refobjid
    FROM pg_rewrite r
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                    AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.ev_class
    JOIN pg_class v ON v.oid = r.ev_class
    WHERE v.relnamespace = 'pub'::regnamespace
    UNION
    SELECT reads.view_oid, d.refobjid
    FROM reads
    JOIN pg_rewrite r ON r.ev_class = reads.ref
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                    AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.ev_class
  )
  SELECT v.relname::text,
         coalesce(bool_or(c.relnamespace = 'ledger'::regnamespace), false),
         coalesce(bool_or(c.relnamespace = 'checks'::regnamespace), false)
  FROM pg_class v
  LEFT JOIN reads ON reads.view_oid = v.oid
  LEFT JOIN pg_class c ON c.oid = reads.ref
  WHERE v.relnamespace = 'pub'::regnamespace AND v.relkind IN ('v', 'm', 'r')
  GROUP BY v.relname
$$;
COMMENT ON FUNCTION web.pub_view_kind() IS
  'For each view of pub: whether it reads the ledger or the checks (directly or through '
  'other views), so rulem-db serve knows which changes make its tiles and items stale.';

REVOKE ALL ON FUNCTION web.change_stamps(), web.pub_view_kind() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION web.change_stamps(), web.pub_view_kind()
  TO rulem_staff, rulem_gis, rulem_restricted;

-- The latest loaded batch, for /healthz (the readers may not read ops.batch).
CREATE OR REPLACE FUNCTION web.latest_batch(
  OUT batch_id bigint, OUT layer text, OUT status text, OUT finished_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
  SELECT b.batch_id, b.layer, b.status, b.finished_at FROM ops.batch b
  ORDER BY b.batch_id DESC LIMIT 1
$$;
COMMENT ON FUNCTION web.latest_batch() IS
  'The latest ingest batch (id, layer, status, finished): what /healthz of rulem-db serve '
  'reports as the data''s freshness.';
REVOKE ALL ON FUNCTION web.latest_batch() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION web.latest_batch() TO rulem_staff, rulem_gis, rulem_restricted;

-- The QGIS default styles' rules (sql/940), for the web map's style and legend: one palette
-- for QGIS, the reports and the browser. SECURITY DEFINER only because the rules live in ops;
-- they are the published look of pub's layers, nothing private.
CREATE OR REPLACE FUNCTION web.style_rule()
RETURNS TABLE (layer text, pos integer, attr text, label text, filter text, fill text,
               alpha integer, pattern text, outline text, width numeric, line text,
               size numeric, shape text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
  SELECT * FROM ops.layer_style_rule() r
  WHERE to_regclass('pub.' || quote_ident(r.layer)) IS NOT NULL
  ORDER BY r.layer, r.pos
$$;
COMMENT ON FUNCTION web.style_rule() IS
  'The default look of each layer of pub (the rules of the QGIS styles, sql/940): what '
  'rulem-db serve translates into the web map''s MapLibre style and legend.';
REVOKE ALL ON FUNCTION web.style_rule() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION web.style_rule() TO rulem_staff, rulem_gis, rulem_restricted;
