-- 231_stormwater_volume: required and provided water quality volume per subwatershed (5(c)).
-- Idempotent.
--
-- Pieces: each land cover feature of the permit inside the subwatershed, cut by the soil map
-- (and the part on no mapped soil, which counts as group D). Each piece yields
-- runoff_depth_in(bmp_design_storm_in, CN) / 12 x its area in ft2 (spec: runoff per piece, not
-- a composite CN). A piece is C/D ("infiltration not ideally suited", 5(c)(iii)) when its group
-- is C, D or dual, or unmapped, or the soil has a high water table or contamination; C/D
-- pieces count as A/B when the subwatershed is flagged routable_to_ab (gravity-routed to
-- on-site A/B soil), unless high groundwater or contamination rules infiltration out.
-- Provided volumes are the BMPs' recorded volumes by kind; pretreatment counts toward the A/B
-- volume up to pretreatment_max_share of the share base. Volumes in ft3.
--
-- The share base (5(c)(ii) and (iii): "20% of the volume required by paragraph 5(c)(i)") is
-- the dated parameter stormwater_share_base as of the permit's baseline date:
-- whole_5ci_volume (default, the rule's words) takes V for both shares; group_volume takes
-- V_AB for the pretreatment cap and V_CD for the biofiltration minimum.
--
-- Subwatershed land with no land cover of the permit adds no runoff here, so V is only known
-- when the land cover covers the subwatershed: uncovered (the polygon) and uncovered_m2 say
-- what is missing, and the checks (232) do not evaluate the volumes of a subwatershed whose
-- uncovered part reaches area_tolerance_m2.

-- The share base in force on a date; refuses a value it does not know (a typo must not
-- silently change what counts).
CREATE OR REPLACE FUNCTION checks.stormwater_share_base(p_plan_area_id integer, p_on date)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  v text := core.param_text(p_plan_area_id, 'stormwater_share_base', p_on);
BEGIN
  IF v IS NULL OR v NOT IN ('whole_5ci_volume', 'group_volume') THEN
    RAISE EXCEPTION 'parameter stormwater_share_base is %, not whole_5ci_volume or group_volume',
      coalesce(v, 'NULL') USING ERRCODE = 'invalid_parameter_value';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION checks.stormwater_share_base(integer, date) IS
  'Base of the 5(c)(ii)-(iii) 20 % shares in force on a date: whole_5ci_volume (V) or '
  'group_volume (V_AB, V_CD).';

-- The result gained columns (share base, uncovered polygon): a new signature of the same name.
DROP FUNCTION IF EXISTS checks.stormwater_volumes(integer, bigint);
-- The volumes of a set of permits (NULL: all) in one statement; checks.stormwater_volumes
-- (below) is one permit's, which the published view reads.
CREATE OR REPLACE FUNCTION checks.stormwater_volumes_of(p_plan_area_id integer,
                                                        p_permit_ids bigint[])
RETURNS TABLE (
  permit_id bigint,
  subwatershed_id bigint,
  name text,
  area_acres numeric,
  uncovered_acres numeric,
  design_storm_in numeric,
  v_cuft numeric,
  v_ab_cuft numeric,
  v_cd_cuft numeric,
  infiltration_cuft numeric,
  pretreatment_cuft numeric,
  biofiltration_cuft numeric,
  wet_pond_cuft numeric,
  ab_provided_cuft numeric,
  cd_provided_cuft numeric,
  pretreatment_max_share numeric,
  biofiltration_min_share numeric,
  has_impervious boolean,
  infiltration_needs_pretreatment boolean,
  geom geometry,
  share_base text,
  pretreatment_cap_cuft numeric,
  biofiltration_required_cuft numeric,
  uncovered geometry,
  uncovered_m2 double precision,
  area_tolerance_m2 numeric
)
LANGUAGE sql STABLE SET jit = off AS $$
  WITH sw AS MATERIALIZED (
    SELECT ps.permit_id, ps.baseline_on, s.subwatershed_id, s.name, s.geom,
           coalesce(s.routable_to_ab, false) AS routable,
           core.param_num(p_plan_area_id, 'bmp_design_storm_in', ps.baseline_on) AS storm_in,
           core.param_num(p_plan_area_id, 'pretreatment_max_share', ps.baseline_on) AS pre_max,
           core.param_num(p_plan_area_id, 'biofiltration_min_share', ps.baseline_on) AS bio_min,
           checks.stormwater_share_base(p_plan_area_id, ps.baseline_on) AS base,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2
    FROM checks.permit_site ps
    JOIN core.subwatershed s ON s.permit_id = ps.permit_id AND s.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), cover AS (
    SELECT sw.subwatershed_id, lc.cover_class,
           ST_CollectionExtract(ST_Intersection(lc.geom, sw.geom), 3) AS geom
    FROM sw JOIN core.land_cover lc
      ON lc.permit_id = sw.permit_id AND lc.valid_to IS NULL
     AND lc.geom && sw.geom AND ST_Intersects(lc.geom, sw.geom)
  ), piece AS MATERIALIZED (  -- each overlay once, not once per subwatershed joined
    SELECT c.subwatershed_id, c.cover_class, so.hydrologic_soil_group AS hsg,
           so.high_groundwater OR so.contaminated AS unsuited,
           ST_Area(ST_Intersection(c.geom, so.geom)) AS area_m2
    FROM cover c JOIN core.soil so
      ON so.valid_to IS NULL AND so.plan_area_id = p_plan_area_id
     AND so.geom && c.geom AND ST_Intersects(so.geom, c.geom)
    UNION ALL  -- land cover on no mapped soil
    SELECT c.subwatershed_id, c.cover_class, NULL, false,
           ST_Area(coalesce(ST_Difference(c.geom, m.geom), c.geom))
    FROM cover c
    CROSS JOIN LATERAL (
      SELECT ST_Union(so.geom) AS geom FROM core.soil so
      WHERE so.valid_to IS NULL AND so.plan_area_id = p_plan_area_id AND so.geom && c.geom
    ) m
  ), runoff AS (
    SELECT p.subwatershed_id,
           pub.runoff_depth_in(sw.storm_in, checks.curve_number(p.cover_class, p.hsg)) / 12
             * (p.area_m2 / 0.09290304)::numeric AS v,
           NOT (p.unsuited OR (coalesce(p.hsg, 'D') NOT IN ('A', 'B') AND NOT sw.routable))
             AS ab
    FROM piece p JOIN sw USING (subwatershed_id)
    WHERE p.area_m2 > 0
  ), volume AS (
    SELECT r.subwatershed_id, sum(r.v) AS v, coalesce(sum(r.v) FILTER (WHERE r.ab), 0) AS v_ab,
           coalesce(sum(r.v) FILTER (WHERE NOT r.ab), 0) AS v_cd
    FROM runoff r GROUP BY r.subwatershed_id
  ), provided AS (
    SELECT b.subwatershed_id,
           coalesce(sum(b.volume_cuft) FILTER (WHERE b.kind = 'infiltration'), 0) AS inf,
           coalesce(sum(b.volume_cuft) FILTER (WHERE b.kind = 'pretreatment'), 0) AS pre,
           coalesce(sum(b.volume_cuft) FILTER (WHERE b.kind = 'biofiltration'), 0) AS bio,
           coalesce(sum(b.volume_cuft) FILTER (WHERE b.kind = 'wet_pond'), 0) AS wet,
           bool_or(b.kind = 'infiltration' AND NOT b.roof_runoff_only) AS needs_pre
    FROM core.bmp b
    WHERE b.valid_to IS NULL AND b.subwatershed_id IN (SELECT sw.subwatershed_id FROM sw)
    GROUP BY b.subwatershed_id
  ), uncovered AS (  -- the subwatershed less its land cover (NULL or empty: fully covered)
    SELECT sw.subwatershed_id,
           ST_CollectionExtract(coalesce(ST_Difference(sw.geom, (
             SELECT ST_Union(c.geom) FROM cover c WHERE c.subwatershed_id = sw.subwatershed_id)),
             sw.geom), 3) AS geom
    FROM sw
  ), share AS (
    SELECT sw.subwatershed_id,
           CASE sw.base WHEN 'whole_5ci_volume' THEN coalesce(v.v, 0)
                WHEN 'group_volume' THEN coalesce(v.v_ab, 0) END AS pre_base,
           -- the biofiltration minimum is a share of the whole-ft3 volume (as it always was)
           CASE sw.base WHEN 'whole_5ci_volume' THEN round(coalesce(v.v, 0))
                WHEN 'group_volume' THEN round(coalesce(v.v_cd, 0)) END AS bio_base
    FROM sw LEFT JOIN volume v USING (subwatershed_id)
  )
  SELECT sw.permit_id, sw.subwatershed_id, sw.name, round(core.acres(sw.geom), 4),
         round(core.acres(u.geom), 4),
         sw.storm_in,
         round(coalesce(v.v, 0)), round(coalesce(v.v_ab, 0)), round(coalesce(v.v_cd, 0)),
         coalesce(pr.inf, 0), coalesce(pr.pre, 0), coalesce(pr.bio, 0), coalesce(pr.wet, 0),
         round(coalesce(pr.inf, 0) + least(coalesce(pr.pre, 0), sw.pre_max * sh.pre_base)),
         coalesce(pr.bio, 0) + coalesce(pr.wet, 0),
         sw.pre_max, sw.bio_min,
         EXISTS (SELECT 1 FROM cover c WHERE c.subwatershed_id = sw.subwatershed_id
                   AND c.cover_class IN ('impervious', 'street_paved') AND NOT ST_IsEmpty(c.geom))
           OR EXISTS (SELECT 1 FROM core.impervious i
                      WHERE i.valid_to IS NULL AND i.permit_id = sw.permit_id
                        AND i.condition = 'proposed' AND i.geom && sw.geom
                        AND ST_Area(ST_Intersection(i.geom, sw.geom))
                            >= core.param_num(p_plan_area_id, 'area_tolerance_m2',
                                              sw.baseline_on)),
         coalesce(pr.needs_pre, false),
         sw.geom,
         sw.base, round(sw.pre_max * sh.pre_base),
         round(sw.bio_min * sh.bio_base),
         CASE WHEN ST_Area(u.geom) >= sw.tol_m2 THEN ST_Multi(u.geom) END, ST_Area(u.geom),
         sw.tol_m2
  FROM sw
  JOIN uncovered u USING (subwatershed_id)
  JOIN share sh USING (subwatershed_id)
  LEFT JOIN volume v USING (subwatershed_id)
  LEFT JOIN provided pr USING (subwatershed_id)
  ORDER BY sw.permit_id, sw.subwatershed_id
$$;
COMMENT ON FUNCTION checks.stormwater_volumes_of(integer, bigint[]) IS
  '5(c) per subwatershed: required volume V from TR-55 runoff per (land cover x soil) piece, '
  'split into V_AB and V_CD, the volume provided by BMP kind, the base of the 20 % shares '
  '(stormwater_share_base) and the part without land cover.';

CREATE OR REPLACE FUNCTION checks.stormwater_volumes(p_plan_area_id integer,
                                                     p_permit_id bigint DEFAULT NULL)
RETURNS TABLE (
  permit_id bigint,
  subwatershed_id bigint,
  name text,
  area_acres numeric,
  uncovered_acres numeric,
  design_storm_in numeric,
  v_cuft numeric,
  v_ab_cuft numeric,
  v_cd_cuft numeric,
  infiltration_cuft numeric,
  pretreatment_cuft numeric,
  biofiltration_cuft numeric,
  wet_pond_cuft numeric,
  ab_provided_cuft numeric,
  cd_provided_cuft numeric,
  pretreatment_max_share numeric,
  biofiltration_min_share numeric,
  has_impervious boolean,
  infiltration_needs_pretreatment boolean,
  geom geometry,
  share_base text,
  pretreatment_cap_cuft numeric,
  biofiltration_required_cuft numeric,
  uncovered geometry,
  uncovered_m2 double precision,
  area_tolerance_m2 numeric
)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT * FROM checks.stormwater_volumes_of(
    p_plan_area_id, CASE WHEN p_permit_id IS NOT NULL THEN ARRAY[p_permit_id] END)
$$;
COMMENT ON FUNCTION checks.stormwater_volumes(integer, bigint) IS
  '5(c) per subwatershed: required volume V from TR-55 runoff per (land cover x soil) piece, '
  'split into V_AB and V_CD, the volume provided by BMP kind, the base of the 20 % shares '
  '(stormwater_share_base) and the part without land cover.';

GRANT EXECUTE ON FUNCTION checks.stormwater_share_base(integer, date),
  checks.stormwater_volumes_of(integer, bigint[]),
  checks.stormwater_volumes(integer, bigint) TO rulem_etl;
