-- 200_check_catalogue: the row type every check function returns, and how a check registers
-- itself in the catalogue checks.rule_check (docs/checks.md: the checks by paragraph and code).
-- Idempotent: the type is re-created (with the functions of the files after this one, which
-- are re-applied with it).
--
-- A check function returns one checks.evaluation per case it looked at (a permit, a parcel, a
-- subwatershed, a transect set, a structure ...): passed or not, with the measured value, the
-- limit and the place. The runner (280_check_runner) keeps the failures as findings and rolls
-- every evaluation up into one outcome per permit and check. A permit with no evaluation for a
-- check is "not applicable" for it.

DROP TYPE IF EXISTS checks.evaluation CASCADE;
CREATE TYPE checks.evaluation AS (
  paragraph      text,
  check_code     text,
  severity       text,
  permit_id      bigint,
  parcel_id      bigint,
  feature_id     bigint,
  passed         boolean,
  measured_value numeric,
  limit_value    numeric,
  unit           text,
  message        text,
  geom           geometry
);
COMMENT ON TYPE checks.evaluation IS
  'One case a check looked at: passed or not, measured value, limit, unit, message and place.';

-- Registration. Each check file (sql/210-279) defines its check functions and then registers
-- the catalogue rows of the checks they evaluate, naming the function (evaluated_by) and
-- itself (defined_in), through the view checks.registration, and ends with
-- checks.finish_registration('<its file name>'):
--
--   INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, ...)
--   VALUES (...);
--   SELECT checks.finish_registration('250_check_buffer_width.sql');
--
-- The runner (sql/280) calls every function that a current row names, with (plan area,
-- permits) or (plan area, permit), so a new check is its file and nothing else. A check is
-- never deleted from the catalogue (the findings and outcomes of past runs reference it): one
-- its file no longer registers is retired by finish_registration, one whose function is gone
-- (a removed file: re-applying this file drops every check function, see the type above) by
-- sql/280; a retired check is not run and gets no outcome.

-- What a check file writes: a row of the catalogue's own columns. The view holds nothing; its
-- trigger adds the check or brings its row up to date (registered now, not retired), so the
-- upsert is written once, here, not in every check file.
CREATE OR REPLACE VIEW checks.registration AS
  SELECT paragraph, check_code, evaluated_by, defined_in, severity, worse, unit, sort_order,
         district_cases, title, measure, not_applicable_when
  FROM checks.rule_check WHERE false;
COMMENT ON VIEW checks.registration IS
  'Where a check file registers its checks (INSERT only): each row is added to '
  'checks.rule_check or updates the row of the same paragraph and check code.';

CREATE OR REPLACE FUNCTION checks.register_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO checks.rule_check AS c
    (paragraph, check_code, evaluated_by, defined_in, severity, worse, unit, sort_order,
     district_cases, title, measure, not_applicable_when, registered_at, retired_at)
  VALUES (NEW.paragraph, NEW.check_code, NEW.evaluated_by, NEW.defined_in, NEW.severity,
          NEW.worse, NEW.unit, NEW.sort_order, coalesce(NEW.district_cases, false), NEW.title,
          NEW.measure, NEW.not_applicable_when, now(), NULL)
  ON CONFLICT (paragraph, check_code) DO UPDATE SET
    evaluated_by = EXCLUDED.evaluated_by, defined_in = EXCLUDED.defined_in,
    severity = EXCLUDED.severity, worse = EXCLUDED.worse, unit = EXCLUDED.unit,
    sort_order = EXCLUDED.sort_order, district_cases = EXCLUDED.district_cases,
    title = EXCLUDED.title, measure = EXCLUDED.measure,
    not_applicable_when = EXCLUDED.not_applicable_when, registered_at = now(),
    retired_at = NULL;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION checks.register_check() IS
  'Trigger of checks.registration: adds a check to the catalogue or updates its row.';
DROP TRIGGER IF EXISTS register ON checks.registration;
CREATE TRIGGER register INSTEAD OF INSERT ON checks.registration
  FOR EACH ROW EXECUTE FUNCTION checks.register_check();

-- The function a catalogue row names, when it is one the runner can call, returning SETOF
-- checks.evaluation (NULL otherwise). Two forms (docs/checks.md, "Performance"):
--   f(plan_area integer, permits bigint[])  a set of permits in one statement (NULL: all);
--   f(plan_area integer, permit bigint)     one permit per call (NULL: all); the runner calls
--                                           it once per permit of an incremental run.
-- The set form is preferred when a file defines both.
CREATE OR REPLACE FUNCTION checks.evaluator(p_name text) RETURNS regprocedure
LANGUAGE sql STABLE AS $$
  SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
  WHERE p.oid = coalesce(to_regprocedure(p_name || '(integer, bigint[])'),
                         to_regprocedure(p_name || '(integer, bigint)'))
    AND p.proretset AND p.prorettype = 'checks.evaluation'::regtype
$$;
COMMENT ON FUNCTION checks.evaluator(text) IS
  'The check function a catalogue row names (evaluated_by), when it takes (integer, bigint[]) '
  'or (integer, bigint) and returns SETOF checks.evaluation; NULL otherwise.';

-- Whether a set of permits handed to a check function of the set form asks for the cases
-- without a permit too (District projects, the plan area: the checks registered with
-- district_cases): NULL asks for every permit and those; a set holding a NULL element asks for
-- its permits and those (an incremental run that evaluates the District projects again).
CREATE OR REPLACE FUNCTION checks.with_district(p_permit_ids bigint[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_permit_ids IS NULL OR array_position(p_permit_ids, NULL) IS NOT NULL
$$;
COMMENT ON FUNCTION checks.with_district(bigint[]) IS
  'Whether a check function''s set of permits asks for the cases without a permit too (NULL, '
  'or a set holding a NULL element).';

-- Whether a check function takes a set of permits (bigint[]) rather than one (bigint).
CREATE OR REPLACE FUNCTION checks.evaluates_set(p_fn regprocedure) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT p.proargtypes[1] = 'bigint[]'::regtype FROM pg_catalog.pg_proc p WHERE p.oid = p_fn
$$;
COMMENT ON FUNCTION checks.evaluates_set(regprocedure) IS
  'True when a check function takes its permits as a set (integer, bigint[]).';

-- End of a check file's registration: refuse a row naming no callable function (a typo would
-- otherwise leave the check silently unrun), and retire the file's rows it did not register
-- in this transaction (a check removed from the file).
CREATE OR REPLACE FUNCTION checks.finish_registration(p_defined_in text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  bad text;
BEGIN
  SELECT string_agg(format('%s %s (%s)', c.paragraph, c.check_code,
                           coalesce(c.evaluated_by, 'no function named')), ', '
                    ORDER BY c.sort_order, c.paragraph, c.check_code) INTO bad
  FROM checks.rule_check c
  WHERE c.defined_in = p_defined_in AND c.registered_at = now()
    AND checks.evaluator(c.evaluated_by) IS NULL;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION '%: no function f(integer, bigint[]) or f(integer, bigint) returning '
                    'SETOF checks.evaluation evaluates %', p_defined_in, bad;
  END IF;
  UPDATE checks.rule_check c SET retired_at = now()
  WHERE c.defined_in = p_defined_in AND c.retired_at IS NULL
    AND c.registered_at IS DISTINCT FROM now();
END $$;
COMMENT ON FUNCTION checks.finish_registration(text) IS
  'Ends a check file''s registration: refuses rows naming no check function, retires the '
  'file''s rows it no longer registers.';

REVOKE ALL ON FUNCTION checks.evaluator(text), checks.evaluates_set(regprocedure),
  checks.finish_registration(text), checks.register_check() FROM PUBLIC;
REVOKE ALL ON checks.registration FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.evaluator(text), checks.evaluates_set(regprocedure),
  checks.with_district(bigint[]) TO rulem_etl;

GRANT USAGE ON TYPE checks.evaluation TO rulem_etl;
GRANT SELECT ON checks.rule_check TO rulem_etl;
