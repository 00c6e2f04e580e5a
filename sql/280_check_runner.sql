-- 280_check_runner: run every check of a plan area (or one permit) and record the run: the
-- failures as findings, and one outcome per permit in scope and catalogue check (pass, fail,
-- not_applicable) with the worst measured value. Idempotent.

-- Every evaluation of every check. A new check is one more line here and rows in the
-- catalogue (200_check_catalogue).
CREATE OR REPLACE FUNCTION checks.all_evaluations(p_plan_area_id integer,
                                                  p_permit_id bigint DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  SELECT * FROM checks.check_applicability(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_delineation(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_wetland_records(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_ditch_determination(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_stormwater(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_infiltration_soils(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_hydroperiod(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_declarations(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_easement(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_marker_lot_line(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_marker_gap(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_buffer_width(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_vegetation_plan(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_buffer_encroachment(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_infiltration_in_buffer(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_trail_width(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_replacement(p_plan_area_id, p_permit_id)
  UNION ALL SELECT * FROM checks.check_structures(p_plan_area_id, p_permit_id)
$$;
COMMENT ON FUNCTION checks.all_evaluations(integer, bigint) IS
  'Every evaluation of every Rule M check for a plan area (or one permit).';

CREATE OR REPLACE FUNCTION checks.run_checks(p_plan_area_id integer,
                                             p_permit_id bigint DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  rid bigint;
  n_permits integer;
  n_findings integer;
  n_errors integer;
  n_warnings integer;
BEGIN
  PERFORM checks.plan_boundary(p_plan_area_id);  -- refuses a plan area without a boundary
  IF p_permit_id IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM core.permit p WHERE p.permit_id = p_permit_id AND p.valid_to IS NULL
         AND p.plan_area_id = p_plan_area_id) THEN
    RAISE EXCEPTION 'permit % is not a current permit of plan area %', p_permit_id,
      p_plan_area_id USING ERRCODE = 'no_data_found';
  END IF;
  INSERT INTO checks.run (plan_area_id, permit_id) VALUES (p_plan_area_id, p_permit_id)
  RETURNING run_id INTO rid;
  -- Five buffer checks start from the same sites: compute them once for this run
  -- (checks.buffer_site reads this table while the setting says it is ready).
  PERFORM set_config('rulem.check_buffer_site', '', true);
  DROP TABLE IF EXISTS pg_temp.check_buffer_site;
  CREATE TEMP TABLE check_buffer_site AS
  SELECT p_plan_area_id AS plan_area_id, s.*
  FROM checks.buffer_site(p_plan_area_id, p_permit_id) s;
  PERFORM set_config('rulem.check_buffer_site', 'ready', true);

  WITH ev AS MATERIALIZED (
    SELECT * FROM checks.all_evaluations(p_plan_area_id, p_permit_id)
  ), f AS (
    INSERT INTO checks.finding (run_id, plan_area_id, paragraph, check_code, severity,
                                permit_id, parcel_id, feature_id, measured_value, limit_value,
                                unit, message, geom)
    SELECT rid, p_plan_area_id, ev.paragraph, ev.check_code, ev.severity, ev.permit_id,
           ev.parcel_id, ev.feature_id, ev.measured_value, ev.limit_value, ev.unit, ev.message,
           ev.geom
    FROM ev WHERE NOT ev.passed
    RETURNING severity
  ), scope AS (
    SELECT ps.permit_id FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_id IS NULL OR ps.permit_id = p_permit_id)
  ), ranked AS (
    -- the worst evaluation of each permit and check: a failure first, then by the measure
    SELECT DISTINCT ON (ev.permit_id, ev.paragraph, ev.check_code) ev.*,
           count(*) OVER w AS n, count(*) FILTER (WHERE NOT ev.passed) OVER w AS n_fail
    FROM ev JOIN checks.rule_check c USING (paragraph, check_code)
    WHERE ev.permit_id IS NOT NULL
    WINDOW w AS (PARTITION BY ev.permit_id, ev.paragraph, ev.check_code)
    ORDER BY ev.permit_id, ev.paragraph, ev.check_code, ev.passed,
             CASE c.worse WHEN 'higher' THEN -ev.measured_value
                          WHEN 'lower' THEN ev.measured_value END NULLS FIRST
  ), o AS (  -- a data-modifying CTE runs to completion whether read or not
    INSERT INTO checks.outcome (run_id, plan_area_id, permit_id, paragraph, check_code,
                                outcome, measured_value, limit_value, unit, evaluated_count,
                                finding_count, message)
    SELECT rid, p_plan_area_id, s.permit_id, c.paragraph, c.check_code,
           CASE WHEN r.n IS NULL THEN 'not_applicable' WHEN r.n_fail > 0 THEN 'fail'
                ELSE 'pass' END,
           r.measured_value, r.limit_value, coalesce(r.unit, c.unit), coalesce(r.n, 0),
           coalesce(r.n_fail, 0), r.message
    FROM scope s CROSS JOIN checks.rule_check c
    LEFT JOIN ranked r ON r.permit_id = s.permit_id AND r.paragraph = c.paragraph
                      AND r.check_code = c.check_code
  )
  SELECT (SELECT count(DISTINCT permit_id) FROM scope), (SELECT count(*) FROM f),
         (SELECT count(*) FROM f WHERE severity = 'error'),
         (SELECT count(*) FROM f WHERE severity = 'warning')
  INTO n_permits, n_findings, n_errors, n_warnings;

  PERFORM set_config('rulem.check_buffer_site', '', true);
  DROP TABLE pg_temp.check_buffer_site;
  UPDATE checks.run SET finished_at = clock_timestamp(), permit_count = n_permits,
         finding_count = n_findings, error_count = n_errors, warning_count = n_warnings
  WHERE run_id = rid;
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.run_checks(integer, bigint) IS
  'Runs every Rule M check for a plan area (or one permit), records the run, its findings and '
  'an outcome per permit and check; returns the run id.';

GRANT EXECUTE ON FUNCTION checks.all_evaluations(integer, bigint),
  checks.run_checks(integer, bigint) TO rulem_etl;
GRANT SELECT, INSERT ON checks.run, checks.finding, checks.outcome TO rulem_etl;
GRANT UPDATE ON checks.run TO rulem_etl;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA checks TO rulem_etl;
