-- 232_check_stormwater: the 5(c) conditions, per subwatershed, from 231. Idempotent.
--   5(c)      stormwater_subwatersheds  a permit that subdivides, grades or creates impervious
--                                        surface has subwatersheds to size BMPs for;
--   5(c)(ii)  infiltration_volume       V_AB > 0: infiltration + pretreatment (counted up to
--                                        pretreatment_max_share x V_AB) >= V_AB;
--   5(c)(ii)  pretreatment              impervious cover drains to an infiltration BMP that
--                                        does not take rooftop runoff only: pretreatment of
--                                        at least 1 ft3 (volumes are whole ft3: none fails,
--                                        and the limit shown says so, not "0");
--   5(c)(ii)  infiltration_soils        each infiltration BMP lies on A/B soil without high
--                                        groundwater or contamination;
--   5(c)(iii) biofiltration_share       V_CD > 0: biofiltration >= biofiltration_min_share x
--                                        V_CD;
--   5(c)(iii) cd_volume                 V_CD > 0: biofiltration + wet ponds >= V_CD.
--   5(c)(i)   land_cover_coverage       the permit's land cover covers each subwatershed
--                                        (the uncovered acres and polygon; slivers under
--                                        area_tolerance_m2 do not count).
-- Volumes compare in whole cubic feet. The 20 % shares are of the share base of 231
-- (stormwater_share_base: V by default, V_AB / V_CD in the alternative reading).
--
-- Land without land cover is not land without runoff: V, V_AB and V_CD of a subwatershed
-- with an uncovered part are unknown, so its three volume checks (infiltration_volume,
-- biofiltration_share, cd_volume) are not evaluated (passed NULL, sql/280), each an error
-- finding that names the uncovered acres; land_cover_coverage fails with them.

DROP FUNCTION IF EXISTS checks.check_stormwater(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_stormwater(p_plan_area_id integer,
                                                   p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH sv AS MATERIALIZED (
    SELECT x.*, x.uncovered IS NOT NULL AS incomplete
    FROM checks.stormwater_volumes_of(p_plan_area_id, p_permit_ids) x
  ), v AS (  -- the subwatersheds whose volumes are known
    SELECT * FROM sv WHERE NOT sv.incomplete
  ), active AS (
    SELECT ps.permit_id,
           ps.involves_subdivision
             OR EXISTS (SELECT 1 FROM core.grading g
                        WHERE g.valid_to IS NULL AND g.permit_id = ps.permit_id)
             OR EXISTS (SELECT 1 FROM core.impervious i
                        WHERE i.valid_to IS NULL AND i.permit_id = ps.permit_id
                          AND i.condition = 'proposed') AS subject,
           (SELECT count(*) FROM core.subwatershed s
            WHERE s.valid_to IS NULL AND s.permit_id = ps.permit_id) AS n
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  )
  SELECT '5(c)', 'stormwater_subwatersheds', 'error', a.permit_id, NULL::bigint, NULL::bigint,
         a.n > 0, a.n::numeric, 1::numeric, 'subwatersheds',
         CASE WHEN a.n > 0 THEN format('%s subwatershed%s to size water quality BMPs for', a.n,
                                       CASE WHEN a.n = 1 THEN '' ELSE 's' END)
              ELSE 'the permit subdivides, grades or creates impervious surface but has no '
                   'subwatershed to size water quality BMPs for' END,
         NULL::geometry
  FROM active a WHERE a.subject
  UNION ALL
  SELECT '5(c)(ii)', 'infiltration_volume', 'error', v.permit_id, NULL, v.subwatershed_id,
         v.ab_provided_cuft >= v.v_ab_cuft, v.ab_provided_cuft, v.v_ab_cuft, 'ft3',
         format('%s: infiltration %s + pretreatment %s (counted %s) = %s ft3 for V_AB %s ft3',
                v.name, v.infiltration_cuft, v.pretreatment_cuft,
                v.ab_provided_cuft - v.infiltration_cuft, v.ab_provided_cuft, v.v_ab_cuft),
         CASE WHEN v.ab_provided_cuft < v.v_ab_cuft THEN v.geom END
  FROM v WHERE v.v_ab_cuft > 0
  UNION ALL
  SELECT '5(c)(ii)', 'pretreatment', 'error', v.permit_id, NULL, v.subwatershed_id,
         v.pretreatment_cuft >= 1, v.pretreatment_cuft, 1::numeric, 'ft3',
         CASE WHEN v.pretreatment_cuft >= 1
              THEN format('%s: %s ft3 of pretreatment ahead of infiltration that takes runoff '
                          'from impervious surface other than rooftops', v.name,
                          v.pretreatment_cuft)
              ELSE format('%s: no pretreatment (%s ft3) ahead of infiltration that takes runoff '
                          'from impervious surface other than rooftops: 5(c)(ii) requires it',
                          v.name, v.pretreatment_cuft) END,
         CASE WHEN v.pretreatment_cuft < 1 THEN v.geom END
  FROM sv v WHERE v.has_impervious AND v.infiltration_needs_pretreatment  -- needs no volume
  UNION ALL
  SELECT '5(c)(iii)', 'biofiltration_share', 'error', v.permit_id, NULL, v.subwatershed_id,
         v.biofiltration_cuft >= r.share_cuft, v.biofiltration_cuft, r.share_cuft, 'ft3',
         format('%s: biofiltration %s ft3 %s %s%% of %s = %s ft3', v.name,
                v.biofiltration_cuft,
                CASE WHEN v.biofiltration_cuft >= r.share_cuft THEN 'meets'
                     ELSE 'falls short of' END,
                round(100 * v.biofiltration_min_share),
                CASE v.share_base WHEN 'group_volume' THEN format('V_CD %s ft3', v.v_cd_cuft)
                     ELSE format('the 5(c)(i) volume V %s ft3', v.v_cuft) END,
                r.share_cuft),
         CASE WHEN v.biofiltration_cuft < r.share_cuft THEN v.geom END
  FROM v CROSS JOIN LATERAL (SELECT v.biofiltration_required_cuft AS share_cuft) r
  WHERE v.v_cd_cuft > 0
  UNION ALL
  SELECT '5(c)(iii)', 'cd_volume', 'error', v.permit_id, NULL, v.subwatershed_id,
         v.cd_provided_cuft >= v.v_cd_cuft, v.cd_provided_cuft, v.v_cd_cuft, 'ft3',
         format('%s: biofiltration %s + wet pond %s = %s ft3 for V_CD %s ft3', v.name,
                v.biofiltration_cuft, v.wet_pond_cuft, v.cd_provided_cuft, v.v_cd_cuft),
         CASE WHEN v.cd_provided_cuft < v.v_cd_cuft THEN v.geom END
  FROM v WHERE v.v_cd_cuft > 0
  UNION ALL
  SELECT '5(c)(i)', 'land_cover_coverage', 'error', x.permit_id, NULL, x.subwatershed_id,
         NOT x.incomplete, CASE WHEN x.incomplete THEN x.uncovered_acres ELSE 0 END,
         0::numeric, 'acres',
         CASE WHEN x.incomplete
              THEN format('%s: %s acres of the subwatershed have no land cover, so its runoff '
                          '(5(c)(i)) cannot be computed', x.name, x.uncovered_acres)
              ELSE format('%s: land cover covers the subwatershed', x.name) END,
         x.uncovered
  FROM sv x
  UNION ALL  -- the volume checks of a subwatershed whose volume is unknown: not evaluated
  SELECT k.paragraph, k.code, 'error', x.permit_id, NULL, x.subwatershed_id, NULL::boolean,
         CASE k.code WHEN 'infiltration_volume' THEN x.ab_provided_cuft
                     WHEN 'biofiltration_share' THEN x.biofiltration_cuft
                     ELSE x.cd_provided_cuft END,
         NULL::numeric, 'ft3',
         format('not evaluated: %s acres of %s have no land cover, so the volume required by '
                '5(c)(i) is unknown (land cover missing)', x.uncovered_acres, x.name),
         x.uncovered
  FROM sv x
  CROSS JOIN (VALUES ('5(c)(ii)', 'infiltration_volume'), ('5(c)(iii)', 'biofiltration_share'),
                     ('5(c)(iii)', 'cd_volume')) k (paragraph, code)
  WHERE x.incomplete
$$;
COMMENT ON FUNCTION checks.check_stormwater(integer, bigint[]) IS
  '5(c): subwatersheds on record, and per subwatershed its land cover coverage, the A/B '
  'infiltration volume, pretreatment, C/D biofiltration share and C/D volume (not evaluated '
  'where land cover is missing).';

DROP FUNCTION IF EXISTS checks.check_infiltration_soils(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_infiltration_soils(p_plan_area_id integer,
                                                           p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH bmp AS (
    SELECT ps.permit_id, b.bmp_id, b.geom,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           (SELECT ST_Union(so.geom) FROM core.soil so
            WHERE so.valid_to IS NULL AND so.plan_area_id = p_plan_area_id
              AND so.hydrologic_soil_group IN ('A', 'B')
              AND NOT so.high_groundwater AND NOT so.contaminated
              AND so.geom && b.geom) AS suited
    FROM checks.permit_site ps
    JOIN core.bmp b ON b.permit_id = ps.permit_id AND b.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND b.kind = 'infiltration'
  ), off AS (
    SELECT bmp.*, CASE WHEN bmp.suited IS NULL THEN bmp.geom
                       ELSE ST_CollectionExtract(ST_Difference(bmp.geom, bmp.suited), 3)
                       END AS part
    FROM bmp
  )
  SELECT '5(c)(ii)', 'infiltration_soils', 'error', o.permit_id, NULL::bigint, o.bmp_id,
         ST_Area(o.part) < o.tol_m2, round(core.acres(o.part), 4), 0::numeric, 'acres',
         CASE WHEN ST_Area(o.part) < o.tol_m2
              THEN 'infiltration BMP on A/B soil'
              ELSE format('%s acres of the infiltration BMP lie on C/D, high-groundwater, '
                          'contaminated or unmapped soil', round(core.acres(o.part), 4)) END,
         CASE WHEN ST_Area(o.part) >= o.tol_m2 THEN o.part END
  FROM off o
$$;
COMMENT ON FUNCTION checks.check_infiltration_soils(integer, bigint[]) IS
  '5(c)(ii): acres of each infiltration BMP not on A/B soil free of high groundwater and '
  'contamination.';

GRANT EXECUTE ON FUNCTION checks.check_stormwater(integer, bigint[]),
  checks.check_infiltration_soils(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, title, measure, not_applicable_when)
VALUES
  ('5(c)', 'stormwater_subwatersheds', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'lower', 'subwatersheds', 30,
   'Water quality BMPs are sized per subwatershed for subdivision, grading or new impervious '
   'surface.',
   'Subwatersheds of a permit that subdivides, grades or proposes impervious surface; fails at '
   'zero.',
   'The permit neither subdivides, grades nor proposes impervious surface.'),
  ('5(c)(i)', 'land_cover_coverage', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'higher', 'acres', 30,
   'The proposed land cover covers the tributary area of each subwatershed, so its runoff (the '
   'volume required by 5(c)(i)) can be computed.',
   'Acres of each subwatershed with no land cover of the permit, with the polygon (slivers under '
   'area_tolerance_m2 do not count); fails above zero, and the subwatershed''s volume checks are '
   'then not evaluated.',
   'No subwatershed.'),
  ('5(c)(ii)', 'infiltration_volume', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'lower', 'ft3', 31,
   'In A/B soils, infiltration (with at most pretreatment_max_share of it by pretreatment) '
   'retains the runoff of the design storm.',
   'Infiltration volume plus pretreatment volume up to pretreatment_max_share x the share base '
   '(stormwater_share_base: V, or V_AB), against V_AB (TR-55 runoff of the A/B pieces of the '
   'subwatershed); fails below it, and is not evaluated where land cover is missing.',
   'V_AB = 0.'),
  ('5(c)(ii)', 'pretreatment', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'lower', 'ft3', 32,
   'Runoff from impervious surfaces other than rooftops is pretreated before infiltration.',
   'Pretreatment volume of a subwatershed with impervious cover and an infiltration BMP that does '
   'not treat rooftop runoff only (not roof_runoff_only), in whole ft3; fails below 1 ft3 (none).',
   'No such BMP, or no impervious cover.'),
  ('5(c)(ii)', 'infiltration_soils', 'checks.check_infiltration_soils',
   '232_check_stormwater.sql', 'error', 'higher', 'acres', 33,
   'Infiltration BMPs are placed in A/B hydrologic soil groups.',
   'Acres of each infiltration BMP not on A/B soil free of high groundwater and contamination (on '
   'C, D or dual-group soil, high groundwater, contaminated soil or no mapped soil); fails above '
   'zero.',
   'No infiltration BMP.'),
  ('5(c)(iii)', 'biofiltration_share', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'lower', 'ft3', 34,
   'Where infiltration is not suited, biofiltration provides at least biofiltration_min_share of '
   'the volume.',
   'Biofiltration volume against biofiltration_min_share x the share base (stormwater_share_base: '
   'V, the volume required by 5(c)(i), or V_CD); fails below it, and is not evaluated where land '
   'cover is missing.',
   'V_CD = 0.'),
  ('5(c)(iii)', 'cd_volume', 'checks.check_stormwater',
   '232_check_stormwater.sql', 'error', 'lower', 'ft3', 35,
   'Where infiltration is not suited, biofiltration plus NURP wet ponds retain the runoff of the '
   'design storm.',
   'Biofiltration plus wet pond volume against V_CD (TR-55 runoff of the C/D, high groundwater or '
   'contaminated pieces of the subwatershed); fails below it, and is not evaluated where land '
   'cover is missing.',
   'V_CD = 0.');
SELECT checks.finish_registration('232_check_stormwater.sql');
