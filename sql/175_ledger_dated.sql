-- 175_ledger_dated: what the passing of days changes, without any stored data changing.
-- An undecided permit is measured as of today (its baseline date, docs/ledger.md section 1), and so is
-- a District project without a status date. Their figures can move overnight with no row
-- written: a delineation approved with a date after the last recompute becomes part of
-- today's wetland layer, a parameter row takes effect on its date. The triggers of
-- sql/170 see rows, not days, so a recompute of the queue first asks this function to queue
-- those owners when (and only when) such a date fell between the last recompute and today.
-- That is what lets the nightly recompute only what changed instead of everything.

CREATE OR REPLACE FUNCTION ledger.dated_changes(p_plan_area_id integer, p_after date,
                                                p_through date)
RETURNS text[] LANGUAGE sql STABLE AS $$
  -- In words, the dated facts of the plan area that take effect in (p_after, p_through].
  SELECT array_remove(ARRAY[
    (SELECT format('%s delineation(s) approved as of %s', count(*), min(d.approved_on))
     FROM core.delineation d
     WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
       AND d.approved_on > p_after AND d.approved_on <= p_through
     HAVING count(*) > 0),
    (SELECT format('%s parameter(s) effective %s', count(*), min(p.effective_on))
     FROM core.parameter p
     WHERE p.plan_area_id = p_plan_area_id
       AND p.effective_on > p_after AND p.effective_on <= p_through
     HAVING count(*) > 0),
    (SELECT format('%s susceptibility limit(s) effective %s', count(*), min(s.effective_on))
     FROM core.susceptibility_limit s
     WHERE s.plan_area_id = p_plan_area_id
       AND s.effective_on > p_after AND s.effective_on <= p_through
     HAVING count(*) > 0)], NULL)
$$;
COMMENT ON FUNCTION ledger.dated_changes(integer, date, date) IS
  'The dated facts of a plan area (delineation approvals, parameter and susceptibility limit '
  'effective dates) that take effect after one date and by another, in words.';

CREATE OR REPLACE FUNCTION ledger.enqueue_dated(p_run_id bigint,
                                                p_today date DEFAULT current_date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_after date;
  v_why text[];
  v_pa integer;
  n integer := 0;
  k integer;
BEGIN
  -- The day the ledger last caught up: the start of the latest completed run before this one
  -- (a first run has nothing to catch up: every owner is queued by its own inserts).
  SELECT max(r.started_at)::date INTO v_after
  FROM ledger.run r WHERE r.status = 'done' AND r.run_id < p_run_id;
  IF v_after IS NULL OR v_after >= p_today THEN
    RETURN 0;
  END IF;
  FOR v_pa IN SELECT plan_area_id FROM core.plan_area ORDER BY plan_area_id LOOP
    v_why := ledger.dated_changes(v_pa, v_after, p_today);
    CONTINUE WHEN cardinality(v_why) = 0;
    INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, reason)
    SELECT v_pa, o.permit_id, o.district_project, 'date',
           format('measured as of today (%s): %s', p_today, array_to_string(v_why, '; '))
    FROM (
      SELECT pm.permit_id, NULL::text AS district_project   -- undecided: baseline is today
      FROM core.permit pm
      WHERE pm.valid_to IS NULL AND pm.plan_area_id = v_pa
        AND pm.baseline_on IS NULL AND pm.decided_on IS NULL
      UNION
      SELECT NULL, r.district_project                       -- no status date yet
      FROM core.replacement r
      WHERE r.valid_to IS NULL AND r.plan_area_id = v_pa AND r.permit_id IS NULL
      GROUP BY r.district_project
      HAVING min(r.status_on) IS NULL
    ) o
    WHERE ledger.owner_key(o.permit_id, o.district_project) NOT IN (  -- an owner already
      SELECT ledger.owner_key(c.permit_id, c.district_project)   -- waiting is recomputed
      FROM ledger.change_queue c                                  -- anyway (one hashed set)
      WHERE c.processed_at IS NULL AND c.plan_area_id = v_pa);
    GET DIAGNOSTICS k = ROW_COUNT;
    n := n + k;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ledger.enqueue_dated(bigint, date) IS
  'Queues the owners measured as of today (undecided permits, District projects without a '
  'status date) when a delineation approval or a parameter took effect since the last '
  'completed recompute; returns the rows queued. Every recompute of the queue calls it first.';

REVOKE ALL ON FUNCTION ledger.dated_changes(integer, date, date),
  ledger.enqueue_dated(bigint, date) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.dated_changes(integer, date, date),
  ledger.enqueue_dated(bigint, date) TO rulem_etl;
