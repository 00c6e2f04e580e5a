-- 032_district_text: the words a district puts on a permit's decision document, as parameters.
-- Why parameters (core.parameter, spec section 6) and not constants: the letterhead, who signs
-- and the appeal paragraph are the district's to edit, and an edit is dated like any other
-- rule parameter (a new row with a later effective_on: a document written as of a date shows
-- the words in force on that date). The defaults below are a starting point that a district
-- replaces (docs/reports.md "The permit's decision document"); they are seeded for every plan
-- area, now and when one is made.

CREATE OR REPLACE FUNCTION core.seed_district_text(p_plan_area_id integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  INSERT INTO core.parameter (plan_area_id, name, value_text, rule_ref, effective_on, note)
  SELECT p_plan_area_id, v.name, v.txt, v.ref, DATE '2004-01-28', v.note
  FROM (VALUES
    ('district_name', 'Rice Creek Watershed District', NULL,
     'District text: the name on the letterhead of a decision document.'),
    ('district_address', '4325 Pheasant Ridge Drive NE, Suite 611, Blaine, MN 55449', NULL,
     'District text: the postal address on the letterhead.'),
    ('district_contact', 'Telephone 763-398-3070 · www.ricecreek.org', NULL,
     'District text: telephone, e-mail or web address on the letterhead.'),
    ('decision_signatory', 'District Administrator, for the Board of Managers', '10',
     'District text: the title under the signature line of a decision document.'),
    ('decision_appeal_text',
     'The applicant, or any other person aggrieved by this decision, may appeal it as Minnesota '
     'Statutes section 103D.537 provides. A request that the Board of Managers hold a hearing '
     'on the decision must reach the District in writing within 30 days of the date of this '
     'decision.', NULL,
     'District text: the appeal paragraph printed above the signature of a decision document.')
  ) AS v(name, txt, ref, note)
  ON CONFLICT (plan_area_id, name, effective_on) DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
COMMENT ON FUNCTION core.seed_district_text(integer) IS
  'Seeds the district text parameters of the decision document (letterhead, signatory, appeal '
  'paragraph) for a plan area; idempotent.';

CREATE OR REPLACE FUNCTION core.plan_area_district_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM core.seed_district_text(NEW.plan_area_id);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.plan_area_district_text() IS
  'Trigger (core.plan_area): a new plan area gets the district text parameters.';

DROP TRIGGER IF EXISTS plan_area_district_text ON core.plan_area;
CREATE TRIGGER plan_area_district_text AFTER INSERT ON core.plan_area
  FOR EACH ROW EXECUTE FUNCTION core.plan_area_district_text();

SELECT core.seed_district_text(plan_area_id) FROM core.plan_area ORDER BY plan_area_id;
