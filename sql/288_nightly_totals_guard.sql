-- 288_nightly_totals_guard: how many kept ledger totals differ from the entries, fast enough
-- for every nightly run (flows/tasks.py check_ledger_totals: after the ledger step, before
-- the checks; a difference fails the night and no report is written).
-- The same pairing as ledger.totals_drift() (sql/165: on coalesce(key_id, 0), a hash join),
-- counted without sorting or returning the rows, and with a plan-only variant.
-- Every night checks every level (plan, permit, parcel), whether it posted or not: a total
-- changed behind the posting trigger's back on a quiet night is caught that night, not at
-- the next posting. (The totals are written by the posting trigger and the rebuild only,
-- sql/165; the guard is for what no grant covers: an owner's hand, a restore, a bug.)
-- p_plan_only: only the plan-wide figures (pub.plan_balance's, the deficit counts included),
-- 0.05 s on the county, for a caller that wants that much only.
-- A hash join with room to work: the planner chose a merge join, sorting both sides' text
-- keys, the stored side on disk at the default work_mem: 0.36 s on the county (most of a
-- quiet night) and 2.3 s at state, against 0.10 s on the county this way.
CREATE OR REPLACE FUNCTION ops.totals_drift_count(p_plan_only boolean DEFAULT false)
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, ledger, pg_temp
SET enable_mergejoin = off SET work_mem = '64MB' AS $$
  SELECT count(*)
  FROM (SELECT * FROM ledger.totals_stored() t WHERE NOT p_plan_only OR t.level = 'plan') s
  FULL JOIN (SELECT * FROM ledger.totals_from_entries() t
             WHERE NOT p_plan_only OR t.level = 'plan') e
    ON e.level = s.level AND e.plan_area_id = s.plan_area_id
   AND coalesce(e.key_id, 0) = coalesce(s.key_id, 0) AND e.measure = s.measure
  WHERE coalesce(s.acres, 0) <> coalesce(e.acres, 0)
$$;
COMMENT ON FUNCTION ops.totals_drift_count(boolean) IS
  'The number of rows of ledger.totals_drift() (p_plan_only: of its plan level), counted with '
  'a hashable join: the nightly''s guard before its checks and report.';

REVOKE ALL ON FUNCTION ops.totals_drift_count(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.totals_drift_count(boolean) TO rulem_etl;
