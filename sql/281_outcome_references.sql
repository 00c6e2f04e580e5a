-- 281_outcome_references: the references of checks.outcome, checks.finding and
-- checks.finding_occurrence, checked once per statement.
-- Why: a check run records an outcome per permit and catalogue check (72,000 rows on the
-- county) and its findings (8,600-11,500); four foreign keys of the outcomes and six of the
-- findings (0.4 s) checked them row by row. The outcomes' four foreign keys (run, plan area, permit, rule check) checked them with one query
-- per row and reference, about a second of every run. As for the layers' references
-- (docs/design.md, "Feature keys and references"), a statement trigger checks the rows a
-- statement wrote in one set-based query per reference, on each distinct value once:
--   run_id        a check run of checks.run, of the row's plan area;
--   plan_area_id  a plan area (implied by the run's);
--   permit_id     a permit of core.feature (layer 'permit') of that plan area;
--   (paragraph, check_code) a check of the catalogue, checks.rule_check.
-- The first bad reference is refused in one line naming the column and value; the statement
-- (and so the run's recording step) is undone. Outcomes are only ever inserted (sql/280,
-- sql/285); what they reference is never deleted: features and plan areas are kept by
-- core.refuse_referenced_change, runs and rule checks are referenced by foreign keys of
-- checks.finding and checks.finding_case too and nothing deletes them. Idempotent.

CREATE OR REPLACE FUNCTION checks.outcome_references() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, checks, core, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.run_id, n.plan_area_id INTO bad
  FROM (SELECT DISTINCT run_id, plan_area_id FROM new_outcomes) n
  LEFT JOIN checks.run r ON r.run_id = n.run_id
  WHERE r.run_id IS NULL OR r.plan_area_id IS DISTINCT FROM n.plan_area_id
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.outcome: run_id % is not a check run of plan area %',
      bad.run_id, bad.plan_area_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT n.permit_id, n.plan_area_id INTO bad
  FROM (SELECT DISTINCT permit_id, plan_area_id FROM new_outcomes) n
  LEFT JOIN core.feature f ON f.feature_id = n.permit_id AND f.layer = 'permit'
                          AND f.plan_area_id = n.plan_area_id
  WHERE f.feature_id IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.outcome: permit_id % is not a permit of plan area %',
      bad.permit_id, bad.plan_area_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT n.paragraph, n.check_code INTO bad
  FROM (SELECT DISTINCT paragraph, check_code FROM new_outcomes) n
  LEFT JOIN checks.rule_check c ON c.paragraph = n.paragraph AND c.check_code = n.check_code
  WHERE c.check_code IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.outcome: check % % is not in the catalogue (checks.rule_check)',
      bad.paragraph, bad.check_code USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION checks.outcome_references() IS
  'Statement trigger of checks.outcome: refuses in one line an outcome whose run, plan area, '
  'permit or rule check does not exist (set-based, in place of per-row foreign keys).';

DROP TRIGGER IF EXISTS outcome_references ON checks.outcome;
CREATE TRIGGER outcome_references AFTER INSERT ON checks.outcome
  REFERENCING NEW TABLE AS new_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION checks.outcome_references();

DROP TRIGGER IF EXISTS outcome_references_update ON checks.outcome;
CREATE TRIGGER outcome_references_update AFTER UPDATE ON checks.outcome
  REFERENCING NEW TABLE AS new_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION checks.outcome_references();

-- The findings: run_id a check run of the row's plan area; permit_id, parcel_id and
-- feature_id (each may be NULL) features of core.feature; the check in the catalogue.
CREATE OR REPLACE FUNCTION checks.finding_references() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, checks, core, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.run_id, n.plan_area_id INTO bad
  FROM (SELECT DISTINCT run_id, plan_area_id FROM new_findings) n
  LEFT JOIN checks.run r ON r.run_id = n.run_id
  WHERE r.run_id IS NULL OR r.plan_area_id IS DISTINCT FROM n.plan_area_id
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.finding: run_id % is not a check run of plan area %',
      bad.run_id, bad.plan_area_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT n.col, n.id INTO bad
  FROM (SELECT DISTINCT x.col, x.id FROM new_findings f
        CROSS JOIN LATERAL (VALUES ('permit_id', f.permit_id), ('parcel_id', f.parcel_id),
                                   ('feature_id', f.feature_id)) x (col, id)
        WHERE x.id IS NOT NULL) n
  WHERE NOT EXISTS (SELECT 1 FROM core.feature t WHERE t.feature_id = n.id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.finding: % % is not a feature (core.feature)', bad.col, bad.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT n.paragraph, n.check_code INTO bad
  FROM (SELECT DISTINCT paragraph, check_code FROM new_findings) n
  LEFT JOIN checks.rule_check c ON c.paragraph = n.paragraph AND c.check_code = n.check_code
  WHERE c.check_code IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'checks.finding: check % % is not in the catalogue (checks.rule_check)',
      bad.paragraph, bad.check_code USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION checks.finding_references() IS
  'Statement trigger of checks.finding: refuses in one line a finding whose run, plan area, '
  'permit, parcel, feature or rule check does not exist (set-based, in place of per-row '
  'foreign keys).';

DROP TRIGGER IF EXISTS finding_references ON checks.finding;
CREATE TRIGGER finding_references AFTER INSERT ON checks.finding
  REFERENCING NEW TABLE AS new_findings
  FOR EACH STATEMENT EXECUTE FUNCTION checks.finding_references();

DROP TRIGGER IF EXISTS finding_references_update ON checks.finding;
CREATE TRIGGER finding_references_update AFTER UPDATE ON checks.finding
  REFERENCING NEW TABLE AS new_findings
  FOR EACH STATEMENT EXECUTE FUNCTION checks.finding_references();

-- A finding's occurrence (checks.finding_occurrence, which identity a run's finding row is):
-- finding_id a finding of the row's run, finding_case_id an identity of that finding's plan
-- area, run_id a check run (implied by the finding's). Revision 0047: three foreign keys
-- checked them row by row and locked the finding and the identity each row named, 6.8 s for
-- the 239,000 findings a state-size run links (1.1 s without them); these joins check the
-- same, and more (the run and plan area must agree). What they reference is never deleted:
-- checks.finding and checks.finding_case refuse deletes (checks.refuse_delete below), runs
-- are referenced by the findings' identities.
CREATE OR REPLACE FUNCTION checks.occurrence_references() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, checks, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  -- one pass, a lookup of each row's finding and identity by their keys (0.7 s for 239,000
  -- rows; a query per reference was 1.2 s)
  SELECT n.finding_id, n.run_id, n.finding_case_id, f.plan_area_id,
         f.finding_id IS NULL OR f.run_id IS DISTINCT FROM n.run_id AS bad_finding INTO bad
  FROM new_occurrences n
  LEFT JOIN checks.finding f ON f.finding_id = n.finding_id
  LEFT JOIN checks.finding_case c ON c.finding_case_id = n.finding_case_id
  WHERE f.finding_id IS NULL OR f.run_id IS DISTINCT FROM n.run_id
     OR c.finding_case_id IS NULL OR c.plan_area_id IS DISTINCT FROM f.plan_area_id
  LIMIT 1;
  IF FOUND AND bad.bad_finding THEN
    RAISE EXCEPTION 'checks.finding_occurrence: finding_id % is not a finding of check run %',
      bad.finding_id, bad.run_id USING ERRCODE = 'foreign_key_violation';
  ELSIF FOUND THEN
    RAISE EXCEPTION 'checks.finding_occurrence: finding_case_id % is not a finding of plan '
      'area %', bad.finding_case_id, bad.plan_area_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION checks.occurrence_references() IS
  'Statement trigger of checks.finding_occurrence: refuses in one line an occurrence whose '
  'finding is not of its run, or whose identity is not of the finding''s plan area '
  '(set-based, in place of per-row foreign keys).';

DROP TRIGGER IF EXISTS occurrence_references ON checks.finding_occurrence;
CREATE TRIGGER occurrence_references AFTER INSERT ON checks.finding_occurrence
  REFERENCING NEW TABLE AS new_occurrences
  FOR EACH STATEMENT EXECUTE FUNCTION checks.occurrence_references();

DROP TRIGGER IF EXISTS occurrence_references_update ON checks.finding_occurrence;
CREATE TRIGGER occurrence_references_update AFTER UPDATE ON checks.finding_occurrence
  REFERENCING NEW TABLE AS new_occurrences
  FOR EACH STATEMENT EXECUTE FUNCTION checks.occurrence_references();

-- Findings and their identities are a record: never deleted (the occurrences refer to both
-- without a foreign key, and staff's reviews hang on the identities).
CREATE OR REPLACE FUNCTION checks.refuse_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%.%: check results are a record and are not deleted', TG_TABLE_SCHEMA,
    TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
COMMENT ON FUNCTION checks.refuse_delete() IS
  'Statement trigger: refuses DELETE and TRUNCATE of check findings and their identities.';

DROP TRIGGER IF EXISTS finding_no_delete ON checks.finding;
CREATE TRIGGER finding_no_delete BEFORE DELETE OR TRUNCATE ON checks.finding
  FOR EACH STATEMENT EXECUTE FUNCTION checks.refuse_delete();
DROP TRIGGER IF EXISTS finding_case_no_delete ON checks.finding_case;
CREATE TRIGGER finding_case_no_delete BEFORE DELETE OR TRUNCATE ON checks.finding_case
  FOR EACH STATEMENT EXECUTE FUNCTION checks.refuse_delete();
