-- 955_edit_finding: the finding layer staff review in QGIS (the edit project's finding form).
-- edit.finding shows the current findings (pub.finding) by their ID (finding_id, the
-- identity the map and the reports show; finding_case_id, the same number, for projects that
-- key on it); an edit of review_state, waiver_reference or review_note is a review
-- (checks.review_finding, sql/287, which records the login and holds a note to 4,000
-- characters); any other change is refused. Idempotent.
CREATE SCHEMA IF NOT EXISTS edit;
REVOKE ALL ON SCHEMA edit FROM PUBLIC;
GRANT USAGE ON SCHEMA edit TO rulem_editor;

DROP VIEW IF EXISTS edit.finding CASCADE;
CREATE VIEW edit.finding AS
SELECT f.finding_id, f.finding_case_id, f.permit_no, f.paragraph, f.check_code, f.severity,
       f.message, f.geom, f.review_state, f.waiver_reference, f.review_note
FROM pub.finding f
WHERE f.finding_id IS NOT NULL;
COMMENT ON VIEW edit.finding IS
  'Current findings to review (QGIS finding form): change review_state (acknowledged, '
  'waived, open), waiver_reference (required to waive: Rule M 7(g)) or review_note; nothing '
  'else can change.';
COMMENT ON COLUMN edit.finding.finding_id IS
  'The finding''s ID, the same from run to run and on the map (pub.finding.finding_id).';
COMMENT ON COLUMN edit.finding.finding_case_id IS 'The same as finding_id.';
COMMENT ON COLUMN edit.finding.permit_no IS 'Permit number.';
COMMENT ON COLUMN edit.finding.paragraph IS 'Rule M paragraph.';
COMMENT ON COLUMN edit.finding.check_code IS 'Short code of the check.';
COMMENT ON COLUMN edit.finding.severity IS 'error, warning or info.';
COMMENT ON COLUMN edit.finding.message IS 'What is wrong, in one line.';
COMMENT ON COLUMN edit.finding.geom IS 'Where, in the working CRS.';
COMMENT ON COLUMN edit.finding.review_state IS
  'open, acknowledged or waived: set it to review the finding.';
COMMENT ON COLUMN edit.finding.waiver_reference IS
  'The variance or decision a waiver stands on (required with review_state waived).';
COMMENT ON COLUMN edit.finding.review_note IS
  'A note (at most 4,000 characters); a new text is kept in the history.';

-- An UPDATE of the view: the three review columns become one review, in the caller's rights
-- (rulem_editor executes checks.review_finding); any other column changed is refused.
CREATE OR REPLACE FUNCTION edit.finding_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_note text;
BEGIN
  IF (NEW.finding_id, NEW.finding_case_id) IS DISTINCT FROM (OLD.finding_id,
                                                              OLD.finding_case_id) THEN
    RAISE EXCEPTION 'edit.finding: finding %: its ID cannot change (only review_state, '
      'waiver_reference and review_note can)', OLD.finding_id
      USING ERRCODE = 'invalid_parameter_value';
  ELSIF (NEW.permit_no, NEW.paragraph, NEW.check_code, NEW.severity, NEW.message)
        IS DISTINCT FROM (OLD.permit_no, OLD.paragraph, OLD.check_code, OLD.severity,
                          OLD.message)
        OR public.ST_AsEWKB(NEW.geom) IS DISTINCT FROM public.ST_AsEWKB(OLD.geom) THEN
    RAISE EXCEPTION 'edit.finding: finding %: only review_state, waiver_reference and '
      'review_note can change (the finding itself is the check run''s)', OLD.finding_id
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  v_note := CASE WHEN NEW.review_note IS DISTINCT FROM OLD.review_note
                 THEN NEW.review_note END;
  IF NEW.review_state IS DISTINCT FROM OLD.review_state THEN
    PERFORM checks.review_finding(OLD.finding_id, NEW.review_state,
                                  NEW.waiver_reference, v_note);
  ELSIF NEW.waiver_reference IS DISTINCT FROM OLD.waiver_reference THEN
    IF OLD.review_state <> 'waived' THEN
      RAISE EXCEPTION 'edit.finding: finding %: a waiver reference goes with review_state '
        'waived (it is %)', OLD.finding_id, OLD.review_state
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM checks.review_finding(OLD.finding_id, 'waived', NEW.waiver_reference,
                                  v_note);
  ELSIF v_note IS NOT NULL THEN
    PERFORM checks.review_finding(OLD.finding_id, NULL, NULL, v_note);
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION edit.finding_update() IS
  'INSTEAD OF UPDATE of edit.finding: a review through checks.review_finding; refuses a '
  'change of anything but review_state, waiver_reference and review_note.';
REVOKE ALL ON FUNCTION edit.finding_update() FROM PUBLIC;

CREATE TRIGGER finding_update INSTEAD OF UPDATE ON edit.finding
FOR EACH ROW EXECUTE FUNCTION edit.finding_update();

GRANT SELECT, UPDATE ON edit.finding TO rulem_editor;
