-- 262_check_certification: credit counted as certified stands on a certification and on
-- monitoring that met its performance standards (7(d), 7(e)). Idempotent.
--
-- 7(e): "Replacement plans will be evaluated and implemented in accordance with Minnesota Rules
-- 8420.0230 and 8420.0500 through 8420.0630." 7(d): "The provisions of the Wetland
-- Conservation Act ... and its implementing rules ... shall apply under this Rule except where
-- inconsistent with this Rule or CWMP". The rule counts replacement toward 7(b) once it is
-- implemented, and the ledger counts it at counted_credit_status (docs/ledger.md section 1; certified);
-- the WCA rules it incorporates follow a replacement through monitoring years against
-- performance standards before credit is final. The rule names no date logic; this check's
-- reading (docs/checks.md, "Certification and monitoring"):
--   replacement_certification  each wetland replacement feature whose status the ledger counts
--     (its status at or above counted_credit_status as of the permit's baseline date, as
--     sql/270 reads pending credit; a District project's as of its status date) fails when
--     - it is certified and has no certification date: certified_on, else status_on (the
--       date its current status, certified, was reached); or
--     - a current monitoring record of it has outcome not_met and was observed on or before
--       the check date (observed_on; a record without one counts from when it is recorded).
--       A later year that meets its standard does not clear an earlier failure: the District
--       records the corrected outcome of that year (a new version; the failure stays in the
--       history) or the check keeps failing.
--   An error, per replacement feature, with the count of problems (1 for the missing date,
--   plus one per not-met standard-year) and the feature's polygon. District projects
--   (replacement without a permit) are checked in plan-wide runs, with no permit.
-- The counted statuses come from ledger.status_rank (sql/100) and the parameter directly:
-- sql/270's checks.pending_statuses is applied after this file.

DROP FUNCTION IF EXISTS checks.check_certification(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_certification(p_plan_area_id integer,
                                                      p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH counted AS (
    SELECT r.permit_id, r.replacement_id, r.status, r.geom,
           CASE WHEN r.status = 'certified' THEN coalesce(r.certified_on, r.status_on)
                END AS certified_on,
           f.feature_key
    FROM core.replacement r
    LEFT JOIN checks.permit_site ps ON ps.permit_id = r.permit_id
    CROSS JOIN LATERAL (SELECT coalesce(ps.baseline_on, r.status_on, current_date) AS on_date) x
    LEFT JOIN core.feature f ON f.feature_id = r.replacement_id
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id AND r.component = 'wetland'
      AND (ps.permit_id IS NOT NULL
           OR (r.permit_id IS NULL AND checks.with_district(p_permit_ids)))
      AND (p_permit_ids IS NULL OR r.permit_id IS NULL
           OR r.permit_id IN (SELECT unnest(p_permit_ids)))
      AND ledger.status_rank(r.status) >= ledger.status_rank(
            core.param_text(p_plan_area_id, 'counted_credit_status', x.on_date))
  ), failed AS (
    SELECT m.replacement_id, count(*) AS n,
           string_agg(format('%s %s', m.monitoring_year, m.performance_standard), '; '
                      ORDER BY m.monitoring_year, m.performance_standard) AS what
    FROM core.replacement_monitoring m
    WHERE m.valid_to IS NULL AND m.plan_area_id = p_plan_area_id AND m.outcome = 'not_met'
      AND (m.observed_on IS NULL OR m.observed_on <= current_date)
      AND m.replacement_id IN (SELECT c.replacement_id FROM counted c)
    GROUP BY m.replacement_id
  ), observed AS (  -- the records observed by the check date, to say what a pass stands on
    SELECT m.replacement_id, count(*) AS n, count(DISTINCT m.monitoring_year) AS years
    FROM core.replacement_monitoring m
    WHERE m.valid_to IS NULL AND m.plan_area_id = p_plan_area_id
      AND (m.observed_on IS NULL OR m.observed_on <= current_date)
      AND m.replacement_id IN (SELECT c.replacement_id FROM counted c)
    GROUP BY m.replacement_id
  ), judged AS (
    SELECT c.*, (c.status = 'certified' AND c.certified_on IS NULL) AS no_date,
           coalesce(fl.n, 0) AS not_met, fl.what, coalesce(o.n, 0) AS records,
           coalesce(o.years, 0) AS years
    FROM counted c LEFT JOIN failed fl USING (replacement_id)
    LEFT JOIN observed o USING (replacement_id)
  )
  SELECT '7(e)', 'replacement_certification', 'error', j.permit_id, NULL::bigint,
         j.replacement_id, NOT j.no_date AND j.not_met = 0,
         (j.no_date::integer + j.not_met)::numeric, 0::numeric, 'problems',
         CASE WHEN NOT j.no_date AND j.not_met = 0
              THEN format('replacement %s counted as %s credit: %s; %s', j.feature_key,
                          j.status,
                          coalesce('certified on ' || j.certified_on, 'not certified yet'),
                          CASE WHEN j.records = 0
                               THEN 'no monitoring record yet (7(e) monitoring_due says when '
                                    'one is due)'
                               ELSE format('%s monitoring record%s over %s year%s, every '
                                           'standard met', j.records,
                                           CASE WHEN j.records = 1 THEN '' ELSE 's' END,
                                           j.years,
                                           CASE WHEN j.years = 1 THEN '' ELSE 's' END) END)
              ELSE format('replacement %s is counted as %s credit but %s', j.feature_key,
                          j.status, concat_ws(' and ',
                            CASE WHEN j.no_date THEN 'has no certification date' END,
                            CASE WHEN j.not_met > 0
                                 THEN format('monitoring found %s standard-year(s) not met (%s)',
                                             j.not_met, j.what) END))
              END,
         j.geom
  FROM judged j
$$;
COMMENT ON FUNCTION checks.check_certification(integer, bigint[]) IS
  '7(e): counted replacement credit has a certification date (when certified) and no '
  'monitoring year whose performance standard was not met.';

GRANT EXECUTE ON FUNCTION checks.check_certification(integer, bigint[]) TO rulem_etl;

-- The check this file's function evaluates, registered in the catalogue (sql/200): the runner
-- (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, district_cases, title, measure,
                                 not_applicable_when)
VALUES
  ('7(e)', 'replacement_certification', 'checks.check_certification',
   '262_check_certification.sql', 'error', 'higher', 'problems', 76, true,
   'Counted replacement credit is certified on a date and met its monitoring standards.',
   'For each wetland replacement feature at a status the ledger counts (District projects'' '
   'too): 1 if it is certified without a certification date (certified_on, else status_on), '
   'plus the number of its monitoring records with outcome not_met observed by the check '
   'date; fails above zero.',
   'No wetland replacement at a counted status.');
SELECT checks.finish_registration('262_check_certification.sql');
