-- 210_check_applicability: 2(a), when a Rule M permit is required. Idempotent.
--   (i)   fill, excavation or drainage of CWMP wetland: exactly the impact the ledger counts
--         for the permit (its posted impact acres, docs/ledger.md section 1: impact polygons,
--         structures, stormwater BMPs and grading in CWMP wetland, built replacement wetland
--         included, ground charged to a permit decided earlier not again), at least
--         area_tolerance_m2; read as posted (the nightly recomputes before it checks), or,
--         while a change to the permit waits in the ledger's queue, measured as the ledger
--         will post it (the same function), so a permit's 2(a)(i) and its 7(b) never disagree;
--   (ii)  more than impervious_trigger_sqft of new (proposed) impervious surface in the CWMP
--         area, overlaps counted once;
--   (iii) grading flagged as altering runoff into a CWMP wetland, inside the CWMP area.
-- For a permit on record the check fails (a warning) when none of the three applies: the work
-- does not need a Rule M permit. pub.screen_footprint answers the same question for a proposed
-- footprint before any application exists.

-- p_plan and p_wetland: the CWMP area boundary and the disturbed part of the baseline
-- wetland (an empty geometry for none) when the caller has them: checks.applicability reads
-- the boundary once and the baseline wetland of all its permits in one call, where each
-- permit reading them again made the check run grow with the square of the plan area (the
-- boundary's union and an unprepared overlay with it per permit; docs/checks.md,
-- "Performance"). NULL: read here. No SET clause, so that a caller's query inlines the
-- function: its tests against the repeated boundary then reuse GEOS's prepared geometry.
DROP FUNCTION IF EXISTS checks.applicability_triggers(integer, date, geometry, geometry, geometry);
CREATE OR REPLACE FUNCTION checks.applicability_triggers(p_plan_area_id integer, p_on date,
                                                         p_disturbance geometry,
                                                         p_impervious geometry,
                                                         p_grading geometry,
                                                         p_plan geometry DEFAULT NULL,
                                                         p_wetland geometry DEFAULT NULL)
RETURNS TABLE (wetland_acres numeric, impervious_sqft numeric, grading boolean,
               trigger_sqft numeric, tolerance_m2 numeric, in_plan boolean)
LANGUAGE sql STABLE AS $$
  WITH plan AS (SELECT coalesce(p_plan, checks.plan_boundary(p_plan_area_id)) AS geom),
  wet AS (
    -- the disturbed part of the baseline wetland, from the ledger's wetland pieces near the
    -- footprint (sql/100, 105): the same area as the whole layer's (the pieces of a wetland
    -- union to it), read through an index instead of clipping every wetland of the plan area
    -- (docs/scaling.md, "What limits it": the whole layer per permit grew with the plan area)
    SELECT p_wetland AS geom WHERE p_wetland IS NOT NULL
    UNION ALL
    SELECT ST_Union(ledger.meet(w.geom, p_disturbance))
    FROM ledger.baseline_wetland(p_plan_area_id, p_on, p_disturbance) w
    WHERE p_wetland IS NULL AND p_disturbance IS NOT NULL AND w.geom && p_disturbance
    HAVING p_wetland IS NULL  -- one row: the caller's, or this one
  )
  -- ledger.meet (sql/100) skips the overlay when one side lies inside the other: most
  -- footprints lie wholly inside the plan area's large boundary polygon.
  SELECT ledger.acres(ledger.meet(wet.geom, plan.geom)),
         round(coalesce((ST_Area(ledger.meet(p_impervious, plan.geom))
                         / 0.09290304)::numeric, 0)),
         coalesce(ST_Intersects(p_grading, plan.geom), false),
         core.param_num(p_plan_area_id, 'impervious_trigger_sqft', p_on),
         core.param_num(p_plan_area_id, 'area_tolerance_m2', p_on),
         coalesce(ST_Intersects(plan.geom, p_disturbance), false)
           OR coalesce(ST_Intersects(plan.geom, p_impervious), false)
           OR coalesce(ST_Intersects(plan.geom, p_grading), false)
  FROM plan, wet
$$;
COMMENT ON FUNCTION checks.applicability_triggers(integer, date, geometry, geometry, geometry,
                                                  geometry, geometry) IS
  'The three 2(a) measures of a disturbance footprint, new impervious surface and grading that '
  'alters runoff: wetland acres, impervious ft2, grading in the plan area, with the trigger '
  'and tolerance in force (p_plan, p_wetland: the boundary and the disturbed baseline wetland '
  'when the caller has them).';

-- The 2(a) measures of each permit in scope (or one): the three triggers as 0/1 and whether
-- a Rule M permit is required. check_applicability reports them; the 5(d) check (sql/235)
-- asks whether the work is "subject to this Rule".
DROP FUNCTION IF EXISTS checks.applicability(integer, bigint);
CREATE OR REPLACE FUNCTION checks.applicability(p_plan_area_id integer,
                                                p_permit_ids bigint[] DEFAULT NULL)
RETURNS TABLE (permit_id bigint, wetland_acres numeric, impervious_sqft numeric,
               grading boolean, trigger_sqft numeric, i integer, ii integer, iii integer,
               required boolean)
LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  permit AS MATERIALIZED (
    SELECT ps.permit_id, ps.baseline_on,
           -- the ledger's impact of the permit: as posted (published acres, ledger.permit_total),
           -- or, while a change to it waits in the ledger's queue, as the ledger will post it
           -- (ledger.impact_measures, sql/110: the same measure)
           CASE WHEN EXISTS (SELECT 1 FROM ledger.change_queue q
                             WHERE q.processed_at IS NULL AND q.permit_id = ps.permit_id)
                THEN coalesce((SELECT m.impact_acres
                               FROM ledger.impact_measures(
                                 p_plan_area_id, ARRAY[ps.permit_id], ARRAY[ps.baseline_on],
                                 ARRAY[core.param_num(p_plan_area_id, 'partial_drain_factor',
                                                      ps.baseline_on)]) m), 0)
                ELSE coalesce((SELECT t.impact FROM ledger.permit_total t
                               WHERE t.permit_id = ps.permit_id
                                 AND t.plan_area_id = p_plan_area_id), 0) END
             AS impact_acres,
           (SELECT ST_Union(i.geom) FROM core.impervious i
            WHERE i.valid_to IS NULL AND i.permit_id = ps.permit_id
              AND i.condition = 'proposed') AS impervious,
           (SELECT ST_Union(g.geom) FROM core.grading g
            WHERE g.valid_to IS NULL AND g.permit_id = ps.permit_id
              AND g.alters_runoff_to_wetland) AS grading
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), measured AS (           -- (ii) and (iii) measured here, (i) read from the ledger
    SELECT p.permit_id, p.impact_acres AS wetland_acres, t.impervious_sqft, t.grading,
           t.trigger_sqft, t.tolerance_m2,
           (p.impact_acres * 4046.8564224 >= t.tolerance_m2)::int AS i,
           (t.impervious_sqft > t.trigger_sqft)::int AS ii,
           t.grading::int AS iii
    FROM permit p
    CROSS JOIN plan
    CROSS JOIN LATERAL checks.applicability_triggers(
      p_plan_area_id, p.baseline_on, NULL, p.impervious, p.grading, plan.geom,
      ST_SetSRID('POLYGON EMPTY'::geometry, ST_SRID(plan.geom))) t
  )
  SELECT m.permit_id, m.wetland_acres, m.impervious_sqft, m.grading, m.trigger_sqft,
         m.i, m.ii, m.iii, m.i + m.ii + m.iii >= 1
  FROM measured m
$$;
COMMENT ON FUNCTION checks.applicability(integer, bigint[]) IS
  '2(a) per permit: the three triggers (0/1) with their measures, and whether a Rule M '
  'permit is required (at least one trigger).';

DROP FUNCTION IF EXISTS checks.check_applicability(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_applicability(p_plan_area_id integer,
                                                      p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  SELECT '2(a)', 'applicability', 'warning', m.permit_id, NULL::bigint, NULL::bigint,
         m.i + m.ii + m.iii >= 1, (m.i + m.ii + m.iii)::numeric, 1::numeric, 'triggers',
         CASE WHEN m.i + m.ii + m.iii >= 1 THEN 'Rule M permit required: ' ELSE
           'no 2(a) trigger, a Rule M permit is not required: ' END
         || format('(i) %s acres of CWMP wetland impact; (ii) %s ft2 of new impervious '
                   'surface (more than %s ft2 triggers); (iii) %s',
                   round(m.wetland_acres, 4), m.impervious_sqft, m.trigger_sqft,
                   CASE WHEN m.grading THEN 'grading alters runoff into a CWMP wetland'
                        ELSE 'no grading altering runoff into a CWMP wetland' END),
         NULL::geometry
  FROM checks.applicability(p_plan_area_id, p_permit_ids) m
$$;
COMMENT ON FUNCTION checks.check_applicability(integer, bigint[]) IS
  '2(a): the triggers each permit meets; a permit meeting none does not need a Rule M permit.';

-- Screening before any application: is a Rule M permit required for this footprint, and why?
-- One row per trigger and a first row with the answer: true (required), false (not required)
-- or NULL (it depends on whether the grading alters runoff into a CWMP wetland, which the
-- caller did not say). p_footprint is the area to be filled, excavated, drained or graded;
-- p_new_impervious the proposed impervious surface (NULL: none); both in any CRS with an SRID.
CREATE OR REPLACE FUNCTION pub.screen_footprint(p_plan_area text, p_footprint geometry,
                                                p_new_impervious geometry DEFAULT NULL,
                                                p_alters_runoff boolean DEFAULT NULL,
                                                p_on date DEFAULT current_date)
RETURNS TABLE (paragraph text, required boolean, measured_value numeric, limit_value numeric,
               unit text, reason text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET jit = off
AS $$
DECLARE
  pid integer;
  srid integer := ops.working_srid();
  fp geometry;
  imp geometry;
  t record;
  i boolean;
  ii boolean;
  iii boolean;
BEGIN
  SELECT plan_area_id INTO pid FROM core.plan_area WHERE code = p_plan_area;
  IF pid IS NULL THEN
    RAISE EXCEPTION 'unknown plan area %: see SELECT code FROM core.plan_area', p_plan_area
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF p_footprint IS NULL AND p_new_impervious IS NULL THEN
    RAISE EXCEPTION 'give a footprint or new impervious surface to screen'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF coalesce(ST_SRID(p_footprint), srid) = 0 OR coalesce(ST_SRID(p_new_impervious), srid) = 0
  THEN
    RAISE EXCEPTION 'the footprint has no CRS: set one, e.g. ST_SetSRID(geom, %)', srid
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  fp := ST_Transform(p_footprint, srid);
  imp := ST_Transform(p_new_impervious, srid);
  SELECT * INTO t FROM checks.applicability_triggers(
    pid, p_on, fp, imp, CASE WHEN p_alters_runoff THEN fp END);
  i := t.wetland_acres * 4046.8564224 >= t.tolerance_m2;
  ii := t.impervious_sqft > t.trigger_sqft;
  iii := CASE WHEN fp IS NULL OR NOT ST_Intersects(checks.plan_boundary(pid), fp) THEN false
              WHEN p_alters_runoff IS NULL THEN NULL ELSE p_alters_runoff END;

  paragraph := '2(a)';
  required := CASE WHEN i OR ii OR iii THEN true
                   WHEN iii IS NULL THEN NULL ELSE false END;
  measured_value := (i::int + ii::int + coalesce(iii, false)::int);
  limit_value := 1;
  unit := 'triggers';
  reason := CASE WHEN NOT t.in_plan THEN 'outside the CWMP area: Rule M does not apply'
                 WHEN required THEN 'a Rule M permit is required'
                 WHEN required IS NULL THEN 'required if the grading alters the rate or '
                   'volume of runoff into a CWMP wetland (2(a)(iii))'
                 ELSE 'no 2(a) trigger: a Rule M permit is not required' END;
  RETURN NEXT;

  paragraph := '2(a)(i)';
  required := i;
  measured_value := round(t.wetland_acres, 4);
  limit_value := 0;
  unit := 'acres';
  reason := CASE WHEN i THEN format('fills, excavates or drains %s acres of CWMP wetland',
                                    round(t.wetland_acres, 4))
                 ELSE 'no CWMP wetland in the footprint' END;
  RETURN NEXT;

  paragraph := '2(a)(ii)';
  required := ii;
  measured_value := t.impervious_sqft;
  limit_value := t.trigger_sqft;
  unit := 'ft2';
  reason := format('%s ft2 of new impervious surface in the CWMP area (%s than %s ft2)',
                   t.impervious_sqft, CASE WHEN ii THEN 'more' ELSE 'not more' END,
                   t.trigger_sqft);
  RETURN NEXT;

  paragraph := '2(a)(iii)';
  required := iii;
  measured_value := NULL;
  limit_value := NULL;
  unit := NULL;
  reason := CASE WHEN iii THEN 'grading in the CWMP area alters runoff into a CWMP wetland'
                 WHEN iii IS NULL THEN 'grading in the CWMP area: say whether it alters the '
                   'rate or volume of runoff into a CWMP wetland (p_alters_runoff)'
                 ELSE 'no grading altering runoff into a CWMP wetland' END;
  RETURN NEXT;
END $$;
COMMENT ON FUNCTION pub.screen_footprint(text, geometry, geometry, boolean, date) IS
  'Screening before an application (2(a)): is a Rule M permit required for a proposed '
  'footprint (area to be filled, excavated, drained or graded), new impervious surface and '
  'grading that alters runoff? First row: the answer (NULL: depends on the grading); then '
  'one row per trigger with its measure and limit. Geometry in any CRS with an SRID.';

GRANT EXECUTE ON FUNCTION
  checks.applicability_triggers(integer, date, geometry, geometry, geometry, geometry, geometry),
  checks.applicability(integer, bigint[]), checks.check_applicability(integer, bigint[])
  TO rulem_etl;
REVOKE ALL ON FUNCTION pub.screen_footprint(text, geometry, geometry, boolean, date)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pub.screen_footprint(text, geometry, geometry, boolean, date)
  TO rulem_staff, rulem_gis, rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('2(a)', 'applicability', 'checks.check_applicability',
   '210_check_applicability.sql', 'warning', 'lower', 'triggers', 10,
   'A Rule M permit is required for (i) fill, excavation or drainage of CWMP wetland, (ii) more '
   'than impervious_trigger_sqft of new impervious surface in the CWMP area, or (iii) grading '
   'that alters runoff into a CWMP wetland.',
   'Number of the three 2(a) triggers the permit meets: (i) the impact the ledger counts for the '
   'permit (CWMP wetland filled, excavated or drained, by impact polygons, structures, stormwater '
   'BMPs and grading) of at least area_tolerance_m2; (ii) proposed impervious surface in the CWMP '
   'area, overlaps counted once, of more than impervious_trigger_sqft; (iii) grading flagged '
   'alters_runoff_to_wetland inside the CWMP area. Fails at zero: the permit is not a Rule M '
   'permit.',
   'Never.');
SELECT checks.finish_registration('210_check_applicability.sql');
