-- 246_check_declaration_content: what section 6's documents state, and who executed the
-- agreement that stands in for a declaration (6, 10). Idempotent.
--   6  declaration_content  each buffer declaration of a permit states the subdivision clause:
--                           "The declaration shall state that on further subdivision of the
--                           property, each subdivided lot of record shall meet the
--                           monumentation requirement of paragraph 6(b)" (subdivision_clause);
--                           each public-land agreement in its place states the conveyance
--                           clause: "The agreement shall state that if the land containing the
--                           buffer is conveyed, the seller must require the buyer to comply with
--                           this section" (conveyance_clause). A clause not recorded as stated
--                           is missing. An error once the permit is decided, a warning before
--                           (a condition of issuance, as declaration_missing, sql/240);
--   10 agreement_executor   "This delegation of authority to staff does not extend to
--                           execution of an agreement in place of buffer declaration under
--                           section 6": each public-land agreement was executed for the
--                           District by its board (executed_by), not by staff; not recorded is
--                           a finding too.
-- A document is judged for what it is (its public_land_agreement flag); whether it may stand
-- in for the declaration on this land is sql/240's question.

DROP FUNCTION IF EXISTS checks.check_declaration_content(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_declaration_content(p_plan_area_id integer,
                                                            p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH doc AS (
    SELECT a.permit_id, a.decided, d.declaration_id, d.recording_no, d.executed_by,
           coalesce(d.public_land_agreement, false) AS agreement,
           CASE WHEN coalesce(d.public_land_agreement, false)
                THEN coalesce(d.conveyance_clause, false)
                ELSE coalesce(d.subdivision_clause, false) END AS stated,
           coalesce(f.feature_key, '#' || d.declaration_id) AS key
    FROM checks.permit_activity a
    JOIN core.declaration d ON d.permit_id = a.permit_id AND d.valid_to IS NULL
    LEFT JOIN core.feature f ON f.feature_id = d.declaration_id
    WHERE a.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR a.permit_id IN (SELECT unnest(p_permit_ids)))
      AND d.kind = 'buffer'
  )
  SELECT '6', 'declaration_content', CASE WHEN d.decided THEN 'error' ELSE 'warning' END,
         d.permit_id, NULL::bigint, d.declaration_id, d.stated,
         (NOT d.stated)::int::numeric, 0::numeric, 'clauses',
         CASE WHEN d.agreement AND d.stated
              THEN format('public-land agreement %s states that a buyer of the land must comply '
                          'with section 6', d.key)
              WHEN d.agreement
              THEN format('public-land agreement %s does not state that if the land is '
                          'conveyed, the seller must require the buyer to comply with section 6 '
                          '(conveyance_clause)', d.key)
              WHEN d.stated
              THEN format('buffer declaration %s states that each lot of a further '
                          'subdivision meets the monumentation of 6(b)',
                          coalesce(d.recording_no, d.key))
              ELSE format('buffer declaration %s does not state that on further subdivision '
                          'each lot of record meets the monumentation of 6(b) '
                          '(subdivision_clause)', coalesce(d.recording_no, d.key)) END,
         NULL::geometry
  FROM doc d
  UNION ALL
  SELECT '10', 'agreement_executor', 'error', d.permit_id, NULL, d.declaration_id,
         coalesce(d.executed_by = 'board', false),
         (d.executed_by IS DISTINCT FROM 'board')::int::numeric,
         0::numeric, 'agreements',
         CASE d.executed_by
              WHEN 'board' THEN format('public-land agreement %s executed by the District''s '
                                       'board', d.key)
              WHEN 'staff' THEN format('public-land agreement %s was executed by District '
                                       'staff: 10 does not delegate the execution of an '
                                       'agreement in place of a buffer declaration to staff',
                                       d.key)
              ELSE format('public-land agreement %s: who executed it for the District is not '
                          'on record (executed_by)', d.key) END,
         NULL::geometry
  FROM doc d WHERE d.agreement
$$;
COMMENT ON FUNCTION checks.check_declaration_content(integer, bigint[]) IS
  '6: buffer declarations state the subdivision clause, public-land agreements the conveyance '
  'clause; 10: public-land agreements are executed by the District''s board, not staff.';

GRANT EXECUTE ON FUNCTION checks.check_declaration_content(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('6', 'declaration_content', 'checks.check_declaration_content',
   '246_check_declaration_content.sql', 'error', 'higher', 'clauses', 50,
   'The buffer declaration states that each lot of a further subdivision meets 6(b); a '
   'public-land agreement, that a buyer of the land must comply with section 6.',
   'Per buffer declaration of the permit: 1 when its clause is not recorded as stated '
   '(subdivision_clause; for a public-land agreement conveyance_clause); fails above zero (a '
   'warning while the permit is undecided).',
   'No buffer declaration on record.'),
  ('10', 'agreement_executor', 'checks.check_declaration_content',
   '246_check_declaration_content.sql', 'error', 'higher', 'agreements', 91,
   'An agreement in place of a buffer declaration is executed by the District''s board: the '
   'delegation of approvals to staff does not extend to it.',
   'Per public-land agreement of the permit: 1 when executed_by is not board (staff, or not '
   'recorded); fails above zero.',
   'No public-land agreement.');
SELECT checks.finish_registration('246_check_declaration_content.sql');
