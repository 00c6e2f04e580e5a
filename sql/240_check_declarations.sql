-- 240_check_declarations: the recorded declarations a permit needs (5(e), 6, 6(e)(v)).
-- Idempotent. A declaration counts when recorded (a recording number or date). On public
-- land a written agreement stands in for the buffer declaration (6: "On public land or
-- right-of-way, in place of recording a buffer may be documented in a written agreement
-- executed with the District"); on private land an agreement is no declaration. Public land
-- is the permit's public_land flag (the site is public land or right-of-way): the agreement's
-- own flag says what the document is, not whose land it is on. An agreement executed by
-- District staff stands in for nothing (10: "This delegation of authority to staff does not
-- extend to execution of an agreement in place of buffer declaration"; sql/246 reports who
-- executed it; one not recorded as executed by staff counts). Declarations are a
-- condition of issuance: missing ones are errors on approved (or expired) permits and
-- warnings while the permit is undecided.
--   5(e)    fertilizer_snow          a permit that subdivides, grades or creates impervious
--                                    surface (the activities of section 5);
--   6       buffer                   a permit with a buffer or a protected edge;
--   6(e)(v) buffer_restoration_3yr   a permit whose grading disturbs a buffer (at least
--                                    area_tolerance_m2 of grading inside a buffer).

DROP FUNCTION IF EXISTS checks.check_declarations(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_declarations(p_plan_area_id integer,
                                                     p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH site AS MATERIALIZED (
    SELECT ps.*, bs.edge, bs.buffer,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2
    FROM checks.permit_site ps
    LEFT JOIN checks.buffer_site_of(p_plan_area_id, p_permit_ids) bs USING (permit_id)
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), need AS (
    SELECT s.permit_id, s.decided, '5(e)' AS paragraph, 'fertilizer_snow' AS kind,
           'a declaration against phosphorus fertilizer and plowed snow storage' AS what
    FROM site s
    WHERE s.involves_subdivision
       OR EXISTS (SELECT 1 FROM core.grading g
                  WHERE g.valid_to IS NULL AND g.permit_id = s.permit_id)
       OR EXISTS (SELECT 1 FROM core.impervious i
                  WHERE i.valid_to IS NULL AND i.permit_id = s.permit_id
                    AND i.condition = 'proposed')
    UNION ALL
    SELECT s.permit_id, s.decided, '6', 'buffer', 'a buffer declaration (or public-land agreement)'
    FROM site s
    WHERE s.edge IS NOT NULL
       OR EXISTS (SELECT 1 FROM core.buffer b
                  WHERE b.valid_to IS NULL AND b.permit_id = s.permit_id)
    UNION ALL
    SELECT s.permit_id, s.decided, '6(e)(v)', 'buffer_restoration_3yr',
           'a three-year buffer restoration declaration'
    FROM site s
    WHERE s.buffer IS NOT NULL AND (
      SELECT ST_Area(ST_Intersection(ST_Union(g.geom), s.buffer)) FROM core.grading g
      WHERE g.valid_to IS NULL AND g.permit_id = s.permit_id AND g.geom && s.buffer
    ) >= s.tol_m2
  ), found AS (
    SELECT n.*, c.recorded, c.private_agreements, c.staff_agreements
    FROM need n
    JOIN site s USING (permit_id)
    CROSS JOIN LATERAL (
      SELECT count(*) FILTER (
               WHERE d.recording_no IS NOT NULL OR d.recorded_on IS NOT NULL
                  OR (n.kind = 'buffer' AND s.public_land
                      AND coalesce(d.public_land_agreement, false)
                      AND d.executed_by IS DISTINCT FROM 'staff')) AS recorded,
             count(*) FILTER (
               WHERE n.kind = 'buffer' AND NOT s.public_land
                 AND coalesce(d.public_land_agreement, false)
                 AND d.recording_no IS NULL AND d.recorded_on IS NULL) AS private_agreements,
             count(*) FILTER (
               WHERE n.kind = 'buffer' AND s.public_land
                 AND coalesce(d.public_land_agreement, false)
                 AND d.executed_by = 'staff'
                 AND d.recording_no IS NULL AND d.recorded_on IS NULL) AS staff_agreements
      FROM core.declaration d
      WHERE d.valid_to IS NULL AND d.permit_id = n.permit_id AND d.kind = n.kind
    ) c
  )
  SELECT f.paragraph, 'declaration_missing',
         CASE WHEN f.decided THEN 'error' ELSE 'warning' END,
         f.permit_id, NULL::bigint, NULL::bigint,
         f.recorded > 0, f.recorded::numeric, 1::numeric, 'declarations',
         CASE WHEN f.recorded > 0 THEN format('%s recorded', f.what)
              WHEN f.decided THEN format('%s is not recorded%s', f.what, a.note)
              ELSE format('%s is not recorded yet (a condition of issuance)%s', f.what,
                          a.note) END,
         NULL::geometry
  FROM found f
  CROSS JOIN LATERAL (
    SELECT CASE WHEN f.private_agreements > 0
                THEN ': a public-land agreement stands in for it only on public land or '
                     'right-of-way, and the permit is not marked public_land'
                WHEN f.staff_agreements > 0
                THEN ': the public-land agreement on record was executed by District staff, '
                     'who may not execute one (10)'
                ELSE '' END AS note) a
$$;
COMMENT ON FUNCTION checks.check_declarations(integer, bigint[]) IS
  '5(e), 6, 6(e)(v): recorded declarations of each kind a permit needs.';

GRANT EXECUTE ON FUNCTION checks.check_declarations(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('5(e)', 'declaration_missing', 'checks.check_declarations',
   '240_check_declarations.sql', 'error', 'lower', 'declarations', 42,
   'A declaration against phosphorus fertilizer and plowed snow storage is recorded.',
   'Recorded fertilizer_snow declarations of a permit that subdivides, grades or proposes '
   'impervious surface; fails at zero (a warning while the permit is undecided).',
   'The permit neither subdivides, grades nor proposes impervious surface.'),
  ('6', 'declaration_missing', 'checks.check_declarations',
   '240_check_declarations.sql', 'error', 'lower', 'declarations', 50,
   'A buffer declaration is recorded (on public land: a written agreement).',
   'Recorded buffer declarations of a permit with a buffer or a protected edge, public-land '
   'agreements counting only when the permit is on public land (public_land) and not executed '
   'by District staff (10); fails at zero (a warning while the permit is undecided).',
   'Neither a buffer nor a protected edge.'),
  ('6(e)(v)', 'declaration_missing', 'checks.check_declarations',
   '240_check_declarations.sql', 'error', 'lower', 'declarations', 56,
   'Disturbed buffer: a declaration of three years of correction and maintenance is recorded.',
   'Recorded buffer_restoration_3yr declarations of a permit with at least area_tolerance_m2 of '
   'grading inside a buffer; fails at zero (a warning while the permit is undecided).',
   'No grading in a buffer.');
SELECT checks.finish_registration('240_check_declarations.sql');
