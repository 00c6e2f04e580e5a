-- 263_check_implementation: a replacement carried out as the rule takes in the WCA's
-- replacement-plan rules (7(d), 7(e)), the TEP's review before the decision (7(f)), and the
-- conditions of issuance followed after it (10). Idempotent.
--
-- 7(e): "Replacement plans will be evaluated and implemented in accordance with Minnesota
-- Rules 8420.0230 and 8420.0500 through 8420.0630"; those rules secure a replacement with a
-- financial assurance until it is established and follow it through monitoring years. The
-- rule names no dates; the reading (docs/rule-m.md, 7(e); dated parameters):
--   7(e) monitoring_due   each certified wetland replacement feature (District projects' too)
--                         is monitored monitoring_years years, the first being the calendar
--                         year of its certification (certified_on, else status_on); a year is
--                         due by the end of its calendar year. A year due with no monitoring
--                         record observed by the check date is a warning, an error once overdue
--                         by monitoring_grace_days; measured: the years missing;
--   7(e) surety_held      each wetland replacement feature of a decided permit is secured
--                         until it is certified and its monitoring years are met (every year
--                         recorded, no standard not met): until then a surety of the permit
--                         (for that feature, or for the permit as a whole) is held (not
--                         released by the check date); measured: 1 when none is;
--   7(e) impact_surety    an impact that began (permit.impact_started_on) before a wetland
--                         replacement feature of the permit was constructed needs a surety
--                         held on the day it began (posted on or before, not released by
--                         then); measured: 1 when none was;
--   7(f) tep_before_decision  "The Technical Evaluation Panel will review the wetland
--                         delineation, wetland type determination and functional assessment
--                         before the District acts on a permit": a decided permit with wetland
--                         impact (section 7's work) has a TEP review date (permit.tep_on) on
--                         or before its decision; measured: days the review came after it;
--   10   condition_overdue  each condition of issuance (core.permit_condition) still open
--                         after its due date: a warning; measured: 1 per such condition.
-- Credit (7(b)) is not touched: these checks flag what the District should act on.
-- Findings that depend on the date (a year falling due, a condition passing its date) are
-- found again by the nightly's incremental run through checks.dated_check_changes (sql/285).

DROP FUNCTION IF EXISTS checks.check_implementation(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_implementation(p_plan_area_id integer,
                                                       p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH repl AS MATERIALIZED (  -- wetland replacement of the permits in scope (and District's)
    SELECT r.permit_id, r.replacement_id, r.status, r.geom, a.decided, a.impact_started_on,
           CASE WHEN r.status = 'certified' THEN coalesce(r.certified_on, r.status_on) END
             AS certified_on,
           coalesce(r.constructed_on, CASE WHEN r.status <> 'proposed'
                                           THEN coalesce(r.certified_on, r.status_on) END)
             AS built_on,
           coalesce(a.baseline_on, r.status_on, current_date) AS on_date,
           coalesce(f.feature_key, '#' || r.replacement_id) AS key
    FROM core.replacement r
    LEFT JOIN checks.permit_activity a ON a.permit_id = r.permit_id
    LEFT JOIN core.feature f ON f.feature_id = r.replacement_id
    WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id AND r.component = 'wetland'
      AND (a.permit_id IS NOT NULL OR (r.permit_id IS NULL AND p_permit_ids IS NULL))
      AND (p_permit_ids IS NULL OR r.permit_id IN (SELECT unnest(p_permit_ids)))
  ), sched AS MATERIALIZED (  -- the monitoring years of the certified features
    SELECT rp.*, p.n, p.grace, extract(year FROM rp.certified_on)::int AS first_year,
           extract(year FROM rp.certified_on)::int + p.n - 1 AS last_year
    FROM repl rp
    CROSS JOIN LATERAL (
      SELECT core.param_num(p_plan_area_id, 'monitoring_years', rp.on_date)::int AS n,
             core.param_num(p_plan_area_id, 'monitoring_grace_days', rp.on_date)::int AS grace
    ) p
    WHERE rp.certified_on IS NOT NULL
  ), yr AS (
    SELECT s.replacement_id, y.y, make_date(y.y, 12, 31) AS due_on, s.grace,
           coalesce(m.n, 0) AS records, coalesce(m.not_met, 0) AS not_met, m.last_observed
    FROM sched s
    CROSS JOIN LATERAL generate_series(s.first_year, s.last_year) y (y)
    LEFT JOIN (
      SELECT x.replacement_id, x.monitoring_year, count(*) AS n,
             count(*) FILTER (WHERE x.outcome = 'not_met') AS not_met,
             max(x.observed_on) AS last_observed
      FROM core.replacement_monitoring x
      WHERE x.valid_to IS NULL AND x.plan_area_id = p_plan_area_id
        AND (x.observed_on IS NULL OR x.observed_on <= current_date)
        AND x.replacement_id IN (SELECT s2.replacement_id FROM sched s2)
      GROUP BY x.replacement_id, x.monitoring_year
    ) m ON m.replacement_id = s.replacement_id AND m.monitoring_year = y.y
  ), progress AS (
    SELECT s.replacement_id,
           array_agg(yr.y ORDER BY yr.y) FILTER (
             WHERE yr.records = 0 AND yr.due_on < current_date) AS missing,
           min(yr.due_on) FILTER (WHERE yr.records = 0 AND yr.due_on < current_date)
             AS oldest_due,
           count(*) FILTER (WHERE yr.records > 0) AS recorded,
           min(yr.y) FILTER (WHERE yr.records = 0 AND yr.due_on >= current_date) AS next_year,
           bool_and(yr.records > 0 AND yr.not_met = 0) AS all_met,
           max(coalesce(yr.last_observed, yr.due_on)) AS met_on
    FROM sched s JOIN yr USING (replacement_id)
    GROUP BY s.replacement_id
  ), monitored AS (
    SELECT s.*, p.missing, p.oldest_due, p.recorded, p.next_year, p.all_met, p.met_on,
           current_date - p.oldest_due AS overdue_days
    FROM sched s JOIN progress p USING (replacement_id)
  ), surety AS (  -- the sureties that can secure a feature: its own and the permit's
    SELECT rp.replacement_id, fa.financial_assurance_id, fa.amount, fa.posted_on,
           fa.released_on, coalesce(f.feature_key, '#' || fa.financial_assurance_id) AS key
    FROM repl rp
    JOIN core.financial_assurance fa ON fa.permit_id = rp.permit_id AND fa.valid_to IS NULL
     AND (fa.replacement_id IS NULL OR fa.replacement_id = rp.replacement_id)
    LEFT JOIN core.feature f ON f.feature_id = fa.financial_assurance_id
    WHERE rp.permit_id IS NOT NULL
  ), secured AS (
    SELECT rp.*, m.all_met, m.met_on, m.first_year, m.last_year,
           (SELECT string_agg(format('%s ($%s)', s.key, to_char(s.amount, 'FM999,999,990')),
                              ', ' ORDER BY s.key)
            FROM surety s WHERE s.replacement_id = rp.replacement_id
              AND (s.released_on IS NULL OR s.released_on > current_date)) AS held,
           (SELECT string_agg(format('%s was released on %s', s.key, s.released_on), ', '
                              ORDER BY s.key)
            FROM surety s WHERE s.replacement_id = rp.replacement_id
              AND s.released_on <= current_date) AS released,
           (SELECT string_agg(s.key, ', ' ORDER BY s.key)
            FROM surety s WHERE s.replacement_id = rp.replacement_id
              AND s.posted_on <= rp.impact_started_on
              AND (s.released_on IS NULL OR s.released_on > rp.impact_started_on))
             AS held_at_start,
           (SELECT string_agg(format('%s posted %s', s.key,
                                     coalesce(s.posted_on::text, 'on an unknown date')), ', '
                              ORDER BY s.key)
            FROM surety s WHERE s.replacement_id = rp.replacement_id) AS posted
    FROM repl rp LEFT JOIN monitored m USING (replacement_id)
    WHERE rp.permit_id IS NOT NULL AND rp.decided
  )
  -- 7(e) monitoring_due
  SELECT '7(e)', 'monitoring_due',
         CASE WHEN m.missing IS NOT NULL AND m.overdue_days <= m.grace THEN 'warning'
              ELSE 'error' END,
         m.permit_id, NULL::bigint, m.replacement_id, m.missing IS NULL,
         coalesce(cardinality(m.missing), 0)::numeric, 0::numeric, 'years',
         CASE WHEN m.missing IS NOT NULL
              THEN format('replacement %s (certified %s): no monitoring record for %s (due by %s, '
                          '%s days overdue: %s)', m.key, m.certified_on,
                          array_to_string(m.missing, ', '), m.oldest_due, m.overdue_days,
                          CASE WHEN m.overdue_days <= m.grace
                               THEN format('a warning for up to %s days', m.grace)
                               ELSE format('an error after %s days', m.grace) END)
              WHEN m.next_year IS NULL
              THEN format('replacement %s (certified %s): all %s monitoring years (%s-%s) on '
                          'record', m.key, m.certified_on, m.n, m.first_year, m.last_year)
              WHEN m.recorded = 0
              THEN format('replacement %s (certified %s): its first monitoring year, %s, is due '
                          'by %s-12-31', m.key, m.certified_on, m.next_year, m.next_year)
              ELSE format('replacement %s (certified %s): %s of %s monitoring years (%s-%s) on '
                          'record; %s is due by %s-12-31', m.key, m.certified_on, m.recorded,
                          m.n, m.first_year, m.last_year, m.next_year, m.next_year) END,
         CASE WHEN m.missing IS NOT NULL THEN m.geom END
  FROM monitored m
  UNION ALL
  -- 7(e) surety_held
  SELECT '7(e)', 'surety_held', 'error', s.permit_id, NULL, s.replacement_id, o.ok,
         (NOT o.ok)::int::numeric, 0::numeric, 'missing',
         CASE WHEN coalesce(s.all_met, false)
              THEN format('replacement %s certified %s and its monitoring years %s-%s met (the '
                          'last observed %s): no surety needs to be held', s.key,
                          s.certified_on, s.first_year, s.last_year, s.met_on)
              WHEN s.held IS NOT NULL
              THEN format('replacement %s (%s): surety %s held until it is certified and its '
                          'monitoring years are met', s.key, w.state, s.held)
              ELSE format('replacement %s (%s) has no surety held: %s', s.key, w.state,
                          coalesce(s.released, 'none was posted for it')) END,
         CASE WHEN NOT o.ok THEN s.geom END
  FROM secured s
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.status = 'proposed' THEN 'not constructed yet'
                WHEN s.certified_on IS NULL THEN format('constructed %s, not certified yet',
                                                        coalesce(s.built_on::text, '(no date)'))
                ELSE format('certified %s; monitoring years %s-%s not all met yet',
                            s.certified_on, s.first_year, s.last_year) END AS state) w
  CROSS JOIN LATERAL (SELECT coalesce(s.all_met, false) OR s.held IS NOT NULL AS ok) o
  UNION ALL
  -- 7(e) impact_surety
  SELECT '7(e)', 'impact_surety', 'error', s.permit_id, NULL, s.replacement_id, o.ok,
         (NOT o.ok)::int::numeric, 0::numeric, 'missing',
         CASE WHEN NOT w.before
              THEN format('replacement %s was constructed %s, before the impact began (%s)',
                          s.key, s.built_on, s.impact_started_on)
              WHEN o.ok
              THEN format('the impact began %s, before replacement %s was constructed%s; surety '
                          '%s was held that day', s.impact_started_on, s.key,
                          coalesce(' (' || s.built_on || ')', ''), s.held_at_start)
              ELSE format('the impact began %s, before replacement %s was constructed%s, and no '
                          'surety was held that day: %s', s.impact_started_on, s.key,
                          coalesce(' (' || s.built_on || ')', ''),
                          coalesce(s.posted, 'none was posted for it')) END,
         CASE WHEN NOT o.ok THEN s.geom END
  FROM secured s
  CROSS JOIN LATERAL (
    SELECT s.built_on IS NULL OR s.built_on > s.impact_started_on AS before) w
  CROSS JOIN LATERAL (SELECT NOT w.before OR s.held_at_start IS NOT NULL AS ok) o
  WHERE s.impact_started_on IS NOT NULL
  UNION ALL
  -- 7(f) tep_before_decision
  SELECT '7(f)', 'tep_before_decision', 'error', a.permit_id, NULL, NULL,
         CASE WHEN a.decided_on IS NOT NULL
              THEN coalesce(a.tep_on <= a.decided_on, false) END,
         CASE WHEN a.tep_on IS NOT NULL AND a.decided_on IS NOT NULL
              THEN greatest(a.tep_on - a.decided_on, 0)::numeric END,
         0::numeric, 'days',
         CASE WHEN a.decided_on IS NULL
              THEN format('not evaluated: the permit is %s but its decision date (decided_on) is '
                          'not on record', a.status)
              WHEN a.tep_on IS NULL
              THEN format('the District decided on %s, and no review by the Technical '
                          'Evaluation Panel (tep_on) is on record: 7(f) asks for it before the '
                          'District acts', a.decided_on)
              WHEN a.tep_on <= a.decided_on
              THEN format('the TEP reviewed the delineation, type determination and functional '
                          'assessment on %s, before the District''s decision of %s', a.tep_on,
                          a.decided_on)
              ELSE format('the TEP review is dated %s, %s days after the District''s decision of '
                          '%s: 7(f) asks for it before the District acts', a.tep_on,
                          a.tep_on - a.decided_on, a.decided_on) END,
         NULL::geometry
  FROM checks.permit_activity a
  WHERE a.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
    AND a.decided AND a.impacts
  UNION ALL
  -- 10 condition_overdue
  SELECT '10', 'condition_overdue', 'warning', a.permit_id, NULL, c.permit_condition_id, o.ok,
         (NOT o.ok)::int::numeric, 0::numeric, 'conditions',
         CASE WHEN NOT o.ok
              THEN format('condition %s (%s) "%s" was due %s and is still open, %s days later',
                          k.key, c.kind, c.condition, c.due_on, current_date - c.due_on)
              WHEN c.state = 'open'
              THEN format('condition %s (%s) "%s" is open%s', k.key, c.kind, c.condition,
                          coalesce(', due ' || c.due_on, ', with no due date'))
              ELSE format('condition %s (%s) "%s" %s on %s', k.key, c.kind, c.condition,
                          c.state, c.met_on) END,
         NULL::geometry
  FROM checks.permit_activity a
  JOIN core.permit_condition c ON c.permit_id = a.permit_id AND c.valid_to IS NULL
  CROSS JOIN LATERAL (
    SELECT coalesce((SELECT f.feature_key FROM core.feature f
                     WHERE f.feature_id = c.permit_condition_id),
                    '#' || c.permit_condition_id) AS key) k
  CROSS JOIN LATERAL (
    SELECT c.state <> 'open' OR c.due_on IS NULL OR c.due_on >= current_date AS ok) o
  WHERE a.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
$$;
COMMENT ON FUNCTION checks.check_implementation(integer, bigint[]) IS
  '7(e): monitoring years due without a record, replacement not secured by a held surety until '
  'certified and monitored, impact begun before construction without a surety; 7(f): TEP '
  'review after the decision; 10: conditions of issuance open past their due date.';

-- The permits (NULL: the District projects) whose date-dependent findings of this file may
-- have changed between two days without any write: a condition passing its due date, a
-- monitoring year falling due or overdue, a monitoring record's observation date or a surety's
-- release date arriving. The nightly's incremental run evaluates them again (sql/285).
CREATE OR REPLACE FUNCTION checks.dated_check_changes(p_plan_area_id integer, p_after date,
                                                      p_today date)
RETURNS TABLE (permit_id bigint, why text) LANGUAGE sql STABLE AS $$
  SELECT DISTINCT c.permit_id, 'a condition of issuance fell due'
  FROM core.permit_condition c
  WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id AND c.state = 'open'
    AND c.due_on >= p_after AND c.due_on < p_today
  UNION
  SELECT DISTINCT r.permit_id, 'a monitoring year fell due'
  FROM core.replacement r
  CROSS JOIN LATERAL (
    SELECT core.param_num(p_plan_area_id, 'monitoring_grace_days', p_today)::int AS grace) g
  WHERE r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id AND r.component = 'wetland'
    AND r.status = 'certified'
    AND EXISTS (  -- a year end, or a year end and the grace, between the two days
      SELECT 1 FROM generate_series(extract(year FROM p_after)::int - 1,
                                    extract(year FROM p_today)::int) y (y)
      WHERE make_date(y.y, 12, 31) >= p_after AND make_date(y.y, 12, 31) < p_today
         OR make_date(y.y, 12, 31) + g.grace >= p_after
            AND make_date(y.y, 12, 31) + g.grace < p_today)
  UNION
  SELECT DISTINCT r.permit_id, 'a monitoring observation came due'
  FROM core.replacement_monitoring m
  JOIN core.replacement r ON r.replacement_id = m.replacement_id AND r.valid_to IS NULL
  WHERE m.valid_to IS NULL AND m.plan_area_id = p_plan_area_id
    AND m.observed_on > p_after AND m.observed_on <= p_today
  UNION
  SELECT DISTINCT s.permit_id, 'a surety''s release date came'
  FROM core.financial_assurance s
  WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
    AND s.released_on > p_after AND s.released_on <= p_today
$$;
COMMENT ON FUNCTION checks.dated_check_changes(integer, date, date) IS
  'Permits (NULL: District projects) whose date-dependent findings (sql/263, 262) may change '
  'between two days without a write: conditions falling due, monitoring years due or '
  'overdue, observation and release dates arriving.';

GRANT EXECUTE ON FUNCTION checks.check_implementation(integer, bigint[]),
  checks.dated_check_changes(integer, date, date) TO rulem_etl;

-- The checks this file's function evaluates, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, district_cases, title, measure,
                                 not_applicable_when)
VALUES
  ('7(e)', 'monitoring_due', 'checks.check_implementation',
   '263_check_implementation.sql', 'error', 'higher', 'years', 77, true,
   'A certified replacement is monitored for monitoring_years years, the first being the year '
   'of certification, each recorded by the end of its year.',
   'For each certified wetland replacement feature (District projects'' too): its monitoring '
   'years past their due date (December 31) with no monitoring record observed by the check '
   'date; fails above zero: a warning, an error once overdue by monitoring_grace_days.',
   'No certified wetland replacement.'),
  ('7(e)', 'surety_held', 'checks.check_implementation',
   '263_check_implementation.sql', 'error', 'higher', 'missing', 78, false,
   'A replacement is secured by a held surety until it is certified and its monitoring years '
   'are met.',
   'For each wetland replacement feature of a decided permit not yet certified with every '
   'monitoring year recorded and met: 1 when no surety of the permit (for the feature or the '
   'whole permit) is held on the check date; fails above zero.',
   'The permit is undecided or has no wetland replacement.'),
  ('7(e)', 'impact_surety', 'checks.check_implementation',
   '263_check_implementation.sql', 'error', 'higher', 'missing', 79, false,
   'An impact begun before its replacement is constructed is secured by a surety held the day '
   'it began.',
   'For each wetland replacement feature of a decided permit constructed after '
   'permit.impact_started_on (or not yet): 1 when no surety for it was posted on or before that '
   'day and not released by then; fails above zero.',
   'No impact start date, or no wetland replacement of the permit.'),
  ('7(f)', 'tep_before_decision', 'checks.check_implementation',
   '263_check_implementation.sql', 'error', 'higher', 'days', 80, false,
   'The Technical Evaluation Panel reviews the delineation, type determination and functional '
   'assessment before the District acts on a permit.',
   'Days from the decision (decided_on) to the TEP review (tep_on) of a decided permit with '
   'wetland impact, 0 when before; fails above zero and when no TEP review is on record.',
   'The permit is undecided or impacts no wetland.'),
  ('10', 'condition_overdue', 'checks.check_implementation',
   '263_check_implementation.sql', 'warning', 'higher', 'conditions', 92, false,
   'Conditions of issuance are met by their due date.',
   'Per condition of issuance (permit_condition): 1 when it is still open after its due_on; '
   'fails above zero.',
   'No condition of issuance on record.');
SELECT checks.finish_registration('263_check_implementation.sql');
