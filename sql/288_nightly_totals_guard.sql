-- 288_nightly_totals_guard: how many kept ledger totals differ from the entries, fast enough
-- for every nightly run (flows/tasks.py check_ledger_totals: after the ledger step, before
-- the checks; a difference fails the night and no report is written).
-- The plan level paired as ledger.totals_drift() pairs it (sql/165), the permit and parcel
-- levels a key at a time (below), counted without sorting or returning the rows, and with a
-- plan-only variant.
-- Every night checks every level (plan, permit, parcel), whether it posted or not: a total
-- changed behind the posting trigger's back on a quiet night is caught that night, not at
-- the next posting. (The totals are written by the posting trigger and the rebuild only,
-- sql/165; the guard is for what no grant covers: an owner's hand, a restore, a bug.)
-- p_plan_only: only the plan-wide figures (pub.plan_balance's, the deficit counts included),
-- 0.05 s on the county, for a caller that wants that much only.
-- A hash join with room to work: the planner chose a merge join, sorting both sides' text
-- keys, the stored side on disk at the default work_mem: 0.36 s on the county (most of a
-- quiet night) and 2.3 s at state, against 0.10 s on the county this way.
-- The permit and parcel levels are compared a key at a time, one wide row a side, and each
-- row counts its differing figures: the same count as the rows of ledger.totals_drift() (an
-- entry's measure is one of the eight a total row holds, ck_entry_measure_code, and a missing
-- row or figure is 0 on either side), joining one row per key instead of one per key and
-- measure (700,000 a side at state size, 1.4-1.6 s of every night there; on the county 69-80
-- ms against 110-117 ms, the same 489 figures found in a test of every kind of drift).
CREATE OR REPLACE FUNCTION ops.totals_drift_count(p_plan_only boolean DEFAULT false)
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, ledger, pg_temp
SET enable_mergejoin = off SET work_mem = '64MB' AS $$
  WITH e AS (  -- every entry under its permit and under its parcel, published acres
    SELECT k.level, x.plan_area_id, k.key_id, x.measure,
           coalesce(x.acres_published, round(x.acres, 4)) AS acres
    FROM ledger.entry x
    CROSS JOIN LATERAL (VALUES ('permit', x.permit_id), ('parcel', x.parcel_id))
      AS k (level, key_id)
    WHERE NOT p_plan_only AND k.key_id IS NOT NULL
  ), w AS (
    SELECT e.level, e.plan_area_id, e.key_id,
           sum(e.acres) FILTER (WHERE e.measure = 'impact') AS impact,
           sum(e.acres) FILTER (WHERE e.measure = 'required') AS required,
           sum(e.acres) FILTER (WHERE e.measure = 'credit') AS credit,
           sum(e.acres) FILTER (WHERE e.measure = 'transfer_in') AS transfer_in,
           sum(e.acres) FILTER (WHERE e.measure = 'transfer_out') AS transfer_out,
           sum(e.acres) FILTER (WHERE e.measure = 'credit_proposed') AS credit_proposed,
           sum(e.acres) FILTER (WHERE e.measure = 'credit_constructed') AS credit_constructed,
           sum(e.acres) FILTER (WHERE e.measure = 'credit_hosted') AS credit_hosted,
           count(*)::numeric AS entries
    FROM e GROUP BY e.level, e.plan_area_id, e.key_id
  ), stored AS (
    SELECT 'permit' AS level, t.plan_area_id, t.permit_id AS key_id, t.impact, t.required,
           t.credit, t.transfer_in, t.transfer_out, t.credit_proposed, t.credit_constructed,
           t.credit_hosted, t.entries::numeric AS entries
    FROM ledger.permit_total t WHERE NOT p_plan_only
    UNION ALL
    SELECT 'parcel', t.plan_area_id, t.parcel_id, t.impact, t.required, t.credit,
           t.transfer_in, t.transfer_out, t.credit_proposed, t.credit_constructed,
           t.credit_hosted, t.entries::numeric
    FROM ledger.parcel_total t WHERE NOT p_plan_only
  ), pairs AS (
    SELECT s.impact AS s1, s.required AS s2, s.credit AS s3, s.transfer_in AS s4,
           s.transfer_out AS s5, s.credit_proposed AS s6, s.credit_constructed AS s7,
           s.credit_hosted AS s8, s.entries AS s9,
           w.impact AS e1, w.required AS e2, w.credit AS e3, w.transfer_in AS e4,
           w.transfer_out AS e5, w.credit_proposed AS e6, w.credit_constructed AS e7,
           w.credit_hosted AS e8, w.entries AS e9
    FROM stored s
    FULL JOIN w ON w.level = s.level AND w.plan_area_id = s.plan_area_id
               AND w.key_id = s.key_id
  )
  SELECT (SELECT count(*)
          FROM (SELECT * FROM ledger.totals_stored() t WHERE t.level = 'plan') s
          FULL JOIN (SELECT * FROM ledger.totals_from_entries() t WHERE t.level = 'plan') e
            ON e.plan_area_id = s.plan_area_id AND e.measure = s.measure
          WHERE coalesce(s.acres, 0) <> coalesce(e.acres, 0))
       + (SELECT coalesce(sum(
            (coalesce(p.s1, 0) <> coalesce(p.e1, 0))::integer
            + (coalesce(p.s2, 0) <> coalesce(p.e2, 0))::integer
            + (coalesce(p.s3, 0) <> coalesce(p.e3, 0))::integer
            + (coalesce(p.s4, 0) <> coalesce(p.e4, 0))::integer
            + (coalesce(p.s5, 0) <> coalesce(p.e5, 0))::integer
            + (coalesce(p.s6, 0) <> coalesce(p.e6, 0))::integer
            + (coalesce(p.s7, 0) <> coalesce(p.e7, 0))::integer
            + (coalesce(p.s8, 0) <> coalesce(p.e8, 0))::integer
            + (coalesce(p.s9, 0) <> coalesce(p.e9, 0))::integer), 0)
          FROM pairs p)
$$;
COMMENT ON FUNCTION ops.totals_drift_count(boolean) IS
  'The number of rows of ledger.totals_drift() (p_plan_only: of its plan level), counted with '
  'a hashable join: the nightly''s guard before its checks and report.';

REVOKE ALL ON FUNCTION ops.totals_drift_count(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.totals_drift_count(boolean) TO rulem_etl;
