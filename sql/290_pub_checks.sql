-- 290_pub_checks: the published views of the rule checks (docs/checks.md). Idempotent.
--   pub.finding            current findings (each permit's latest run), with geometry;
--   pub.permit_compliance  one row per permit and check of its latest run: pass, fail,
--                          not_evaluated or not_applicable, worst measured value and limit,
--                          open errors;
--   pub.finding_review_history  every review change of every finding (sql/287);
--   pub.buffer_transect    6(c) transects as lines with their widths, computed from the
--                          current layers when read;
--   pub.stormwater_volume  5(c) volumes per subwatershed, computed from the current layers
--                          when read.
-- Findings and compliance are what the last run found; transects and volumes are live, so a
-- GIS user sees the effect of an edit before the next run. The live views read core through
-- SECURITY DEFINER functions (staff and GIS roles read pub only).

-- Which run is current: per permit, the latest finished run of its plan area that covered it
-- (a plan-wide run, or a run of that permit alone); for findings without a permit (District
-- projects), the latest plan-wide run. A permit a later plan-wide run left out (denied,
-- withdrawn) has no current findings.
DROP VIEW IF EXISTS pub.finding, pub.permit_compliance, pub.buffer_transect,
  pub.stormwater_volume, pub.finding_review_history CASCADE;

-- One finding, one ID: finding_id is the finding's identity (checks.finding_case), the same
-- from run to run and the ID the review commands take (rulem-db finding, edit.finding); the
-- run's own row is occurrence_id (docs/checks.md, "Finding review").
CREATE VIEW pub.finding AS
SELECT fc.finding_case_id AS finding_id, f.finding_id AS occurrence_id, f.run_id,
       r.finished_at AS checked_at, f.plan_area_id,
       pa.code AS plan_area, f.permit_id, p.permit_no, f.parcel_id,
       core.pin_display(pc.pin) AS parcel_pin,
       f.paragraph, f.check_code, c.sort_order, f.severity, c.title, f.measured_value,
       f.limit_value, f.unit, f.message, f.feature_id, ft.layer AS feature_layer, f.geom,
       fc.finding_case_id, fc.review_state, fc.reviewed_by, fc.reviewed_at, fc.review_note,
       fc.waiver_reference, fc.first_found_at, fc.review_measure
FROM checks.finding f
JOIN checks.run r ON r.run_id = f.run_id
LEFT JOIN checks.finding_occurrence fo ON fo.finding_id = f.finding_id  -- sql/287
LEFT JOIN checks.finding_case fc ON fc.finding_case_id = fo.finding_case_id
JOIN checks.rule_check c ON c.paragraph = f.paragraph AND c.check_code = f.check_code
JOIN core.plan_area pa ON pa.plan_area_id = f.plan_area_id
LEFT JOIN core.permit p ON p.permit_id = f.permit_id AND p.valid_to IS NULL
LEFT JOIN core.parcel pc ON pc.parcel_id = f.parcel_id AND pc.valid_to IS NULL
LEFT JOIN core.feature ft ON ft.feature_id = f.feature_id
WHERE f.run_id = (
  SELECT max(r2.run_id) FROM checks.run r2
  WHERE r2.plan_area_id = f.plan_area_id AND r2.finished_at IS NOT NULL
    AND (r2.permit_id IS NULL OR r2.permit_id = f.permit_id));

COMMENT ON VIEW pub.finding IS
  'Current findings of the Rule M checks (the latest check run covering each permit): rule '
  'paragraph, check, severity, measured value against the limit, and where; with the '
  'finding''s identity from run to run and its review state.';
COMMENT ON COLUMN pub.finding.finding_id IS
  'The finding''s ID: the same from run to run (same permit, check and place), the ID the map, '
  'the reports and the review commands show and take (rulem-db finding ack|waive|note|reopen '
  'ID, edit.finding). NULL only for a finding of a run made before findings had identities.';
COMMENT ON COLUMN pub.finding.occurrence_id IS
  'This run''s row of the finding (checks.finding.finding_id): a new number every run; not '
  'the finding''s ID (finding_id).';
COMMENT ON COLUMN pub.finding.run_id IS 'Check run that found it.';
COMMENT ON COLUMN pub.finding.checked_at IS 'When that run finished.';
COMMENT ON COLUMN pub.finding.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.finding.plan_area IS 'Plan area code.';
COMMENT ON COLUMN pub.finding.permit_id IS 'Permit concerned (NULL for a District project).';
COMMENT ON COLUMN pub.finding.permit_no IS 'Permit number.';
COMMENT ON COLUMN pub.finding.parcel_id IS 'Parcel concerned, when the check is per parcel.';
COMMENT ON COLUMN pub.finding.parcel_pin IS
  'PIN of that parcel in its display form (NN-NN-NN-NN-NNNN; core.pin_display).';
COMMENT ON COLUMN pub.finding.paragraph IS 'Rule M paragraph, e.g. 6(c).';
COMMENT ON COLUMN pub.finding.check_code IS 'Short code of the check, e.g. buffer_min_width.';
COMMENT ON COLUMN pub.finding.sort_order IS 'Order of the check (the rule''s order).';
COMMENT ON COLUMN pub.finding.severity IS
  'error, warning or info; a case that could not be evaluated (a missing input) is an error.';
COMMENT ON COLUMN pub.finding.title IS 'What the rule requires.';
COMMENT ON COLUMN pub.finding.measured_value IS 'Measured value (see unit).';
COMMENT ON COLUMN pub.finding.limit_value IS 'The rule''s limit for it.';
COMMENT ON COLUMN pub.finding.unit IS 'Unit of the measured value and the limit.';
COMMENT ON COLUMN pub.finding.message IS 'What is wrong, in one line.';
COMMENT ON COLUMN pub.finding.feature_id IS
  'The feature found at fault (structure, BMP, replacement, subwatershed ...).';
COMMENT ON COLUMN pub.finding.feature_layer IS 'Layer of that feature.';
COMMENT ON COLUMN pub.finding.geom IS
  'Where: the failing area (e.g. buffer deficit, uncovered easement), line (marker gap) or '
  'point (unmarked lot-line crossing), in the working CRS; NULL for a missing record.';
COMMENT ON COLUMN pub.finding.finding_case_id IS
  'The same as finding_id (the name of the identity in pub.finding_review_history).';
COMMENT ON COLUMN pub.finding.review_state IS
  'open (not reviewed, or found again after it was resolved), acknowledged (seen, it stands) '
  'or waived (excused by the variance or decision in waiver_reference, Rule M 7(g)).';
COMMENT ON COLUMN pub.finding.reviewed_by IS
  'Database login of the latest review change (staff, or the check run that opened it).';
COMMENT ON COLUMN pub.finding.reviewed_at IS 'When of that change.';
COMMENT ON COLUMN pub.finding.review_note IS
  'The latest note: staff''s (at most 4,000 characters), or the check run''s reason for '
  're-opening it.';
COMMENT ON COLUMN pub.finding.waiver_reference IS
  'The variance or decision a waived finding stands on; NULL unless waived.';
COMMENT ON COLUMN pub.finding.first_found_at IS 'When a check run first found it.';
COMMENT ON COLUMN pub.finding.review_measure IS
  'The measured value the acknowledgement or waiver was given for: a run that measures it '
  'worse (beyond 1 %), or sees a new version of the feature at fault (of the permit''s '
  'features without one), re-opens it. NULL unless acknowledged or waived.';

CREATE VIEW pub.permit_compliance AS
SELECT o.plan_area_id, o.permit_id, p.permit_no, o.paragraph, o.check_code, c.sort_order,
       c.title, c.severity, o.outcome, o.measured_value, o.limit_value, o.unit,
       o.evaluated_count, o.finding_count, o.message, rp.run_id, r.finished_at AS checked_at,
       (SELECT count(*) FROM checks.finding f
        JOIN checks.finding_occurrence fo ON fo.finding_id = f.finding_id
        JOIN checks.finding_case fc ON fc.finding_case_id = fo.finding_case_id
        WHERE f.run_id = rp.run_id AND f.permit_id = o.permit_id AND f.paragraph = o.paragraph
          AND f.check_code = o.check_code AND f.severity = 'error'
          AND fc.review_state = 'open') AS open_errors,
       format('%s|%s|%s', coalesce(o.permit_id::text, 'plan'), o.paragraph, o.check_code)
         AS row_key
-- the permits the latest run covers, with the outcomes of the run that last evaluated each
-- (itself, or an earlier run whose outcomes an incremental run carried over: sql/285)
FROM checks.run_permit rp
JOIN checks.outcome o ON o.run_id = rp.outcome_run_id AND o.permit_id = rp.permit_id
JOIN checks.run r ON r.run_id = rp.run_id
JOIN checks.rule_check c ON c.paragraph = o.paragraph AND c.check_code = o.check_code
LEFT JOIN core.permit p ON p.permit_id = o.permit_id AND p.valid_to IS NULL
WHERE rp.run_id = (
  SELECT max(r2.run_id) FROM checks.run r2
  WHERE r2.plan_area_id = rp.plan_area_id AND r2.finished_at IS NOT NULL
    AND (r2.permit_id IS NULL OR r2.permit_id = rp.permit_id));

COMMENT ON VIEW pub.permit_compliance IS
  'One row per permit and Rule M check of the permit''s latest check run: pass, fail, '
  'not_evaluated or not_applicable, with the worst measured value and its limit.';
COMMENT ON COLUMN pub.permit_compliance.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.permit_compliance.row_key IS
  'The row''s key, permit_id|paragraph|check_code (plan for a plan-wide check): what QGIS and '
  'the OGC API take as its feature id (no other column names one row).';
COMMENT ON COLUMN pub.permit_compliance.permit_id IS 'Permit.';
COMMENT ON COLUMN pub.permit_compliance.permit_no IS 'Permit number.';
COMMENT ON COLUMN pub.permit_compliance.paragraph IS 'Rule M paragraph.';
COMMENT ON COLUMN pub.permit_compliance.check_code IS 'Short code of the check.';
COMMENT ON COLUMN pub.permit_compliance.sort_order IS 'Order of the check (the rule''s order).';
COMMENT ON COLUMN pub.permit_compliance.title IS 'What the rule requires.';
COMMENT ON COLUMN pub.permit_compliance.severity IS 'Severity of a failure of this check.';
COMMENT ON COLUMN pub.permit_compliance.outcome IS
  'pass; fail (some case failed); not_evaluated (no case failed, but an input the check needs '
  'is missing, e.g. land cover or the hydroperiod analysis: an error finding says which); or '
  'not_applicable (nothing of the permit to check).';
COMMENT ON COLUMN pub.permit_compliance.measured_value IS
  'Worst measured value among the permit''s cases (a failing one when it fails).';
COMMENT ON COLUMN pub.permit_compliance.limit_value IS 'Limit that value was held against.';
COMMENT ON COLUMN pub.permit_compliance.unit IS 'Unit of the measured value and the limit.';
COMMENT ON COLUMN pub.permit_compliance.evaluated_count IS
  'Cases evaluated (features, parcels, subwatersheds, transect sets ...).';
COMMENT ON COLUMN pub.permit_compliance.finding_count IS
  'Cases that failed or could not be evaluated (findings).';
COMMENT ON COLUMN pub.permit_compliance.message IS 'The worst case, in one line.';
COMMENT ON COLUMN pub.permit_compliance.run_id IS 'Check run.';
COMMENT ON COLUMN pub.permit_compliance.checked_at IS 'When that run finished.';
COMMENT ON COLUMN pub.permit_compliance.open_errors IS
  'Findings of severity error of this permit and check that are open: neither acknowledged '
  'nor waived (pub.finding.review_state).';

-- The review history of every finding, for auditors (sql/287).
CREATE VIEW pub.finding_review_history AS
SELECT v.review_id, v.finding_case_id AS finding_id, v.finding_case_id, fc.plan_area_id,
       pa.code AS plan_area, fc.permit_id,
       pf.feature_key AS permit_no, fc.paragraph, fc.check_code, fc.finding_key, v.event,
       v.review_state, v.waiver_reference, v.note, v.run_id, v.changed_by, v.changed_at
FROM checks.finding_review v
JOIN checks.finding_case fc ON fc.finding_case_id = v.finding_case_id
JOIN core.plan_area pa ON pa.plan_area_id = fc.plan_area_id
LEFT JOIN core.feature pf ON pf.feature_id = fc.permit_id;
COMMENT ON VIEW pub.finding_review_history IS
  'Every review change of every finding, oldest first by review_id: found, resolved and '
  'reopened by check runs; acknowledged, waived, opened and noted by staff; who and when.';
COMMENT ON COLUMN pub.finding_review_history.review_id IS
  'History row id, in the order the changes were made.';
COMMENT ON COLUMN pub.finding_review_history.finding_id IS
  'The finding (pub.finding.finding_id, the ID the review commands take).';
COMMENT ON COLUMN pub.finding_review_history.finding_case_id IS
  'The same as finding_id.';
COMMENT ON COLUMN pub.finding_review_history.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.finding_review_history.plan_area IS 'Plan area code.';
COMMENT ON COLUMN pub.finding_review_history.permit_id IS
  'Permit concerned (NULL for a District project).';
COMMENT ON COLUMN pub.finding_review_history.permit_no IS 'Permit number.';
COMMENT ON COLUMN pub.finding_review_history.paragraph IS 'Rule M paragraph.';
COMMENT ON COLUMN pub.finding_review_history.check_code IS 'Short code of the check.';
COMMENT ON COLUMN pub.finding_review_history.finding_key IS
  'What makes it the same finding: paragraph|check|permit|parcel|feature|place|n (feature '
  'ids; place: the lower-left corner of its geometry to the metre when no feature is named).';
COMMENT ON COLUMN pub.finding_review_history.event IS
  'found, resolved, reopened (by a check run: found again after it was resolved, or found '
  'worse or with a changed input after it was acknowledged or waived); acknowledged, waived, '
  'opened (a review withdrawn: rulem-db finding reopen), noted (by staff).';
COMMENT ON COLUMN pub.finding_review_history.review_state IS
  'State after the change: open, acknowledged, waived or resolved.';
COMMENT ON COLUMN pub.finding_review_history.waiver_reference IS
  'Variance or decision of a waiver.';
COMMENT ON COLUMN pub.finding_review_history.note IS
  'Note given with the change; for a re-opening by a check run, why (found worse, an input '
  'changed).';
COMMENT ON COLUMN pub.finding_review_history.run_id IS
  'Check run that made the change; NULL for a staff change.';
COMMENT ON COLUMN pub.finding_review_history.changed_by IS
  'Database login that made the change.';
COMMENT ON COLUMN pub.finding_review_history.changed_at IS 'When.';

-- Live views over the current layers, through definer functions.
CREATE OR REPLACE FUNCTION checks.published_transects()
RETURNS TABLE (plan_area_id integer, permit_id bigint, edge_no integer, transect_no integer,
               position_ft numeric, width_ft numeric, min_width_ft numeric, geom geometry)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET jit = off
ROWS 1000 AS $$
  SELECT pa.plan_area_id, t.permit_id, t.edge_no, t.transect_no, t.position_ft, t.width_ft,
         t.min_width_ft, t.geom
  FROM core.plan_area pa CROSS JOIN LATERAL checks.buffer_transects(pa.plan_area_id) t
$$;
COMMENT ON FUNCTION checks.published_transects() IS
  'Buffer transects of every plan area, for pub.buffer_transect (runs as the owner).';

CREATE OR REPLACE FUNCTION checks.published_stormwater()
RETURNS SETOF record
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET jit = off
ROWS 100 AS $$
  SELECT pa.plan_area_id, v.*
  FROM core.plan_area pa CROSS JOIN LATERAL checks.stormwater_volumes(pa.plan_area_id) v
$$;
COMMENT ON FUNCTION checks.published_stormwater() IS
  'Stormwater volumes of every plan area, for pub.stormwater_volume (runs as the owner).';

-- The live views cast their geometry to its type in the working CRS (typmod), so QGIS, GDAL and
-- tile servers read both from geometry_columns; the SRID is the database's, hence EXECUTE.
DO $$
BEGIN
  EXECUTE format($v$
    CREATE VIEW pub.buffer_transect AS
    SELECT row_number() OVER (ORDER BY t.plan_area_id, t.permit_id, t.edge_no, t.transect_no)
             AS transect_id,
           t.plan_area_id, t.permit_id, p.permit_no, t.edge_no, t.transect_no, t.position_ft,
           t.width_ft, t.min_width_ft,
           CASE WHEN t.width_ft >= t.min_width_ft THEN 'pass' ELSE 'fail' END AS outcome,
           t.geom::geometry(LineString, %1$s) AS geom
    FROM checks.published_transects() t
    LEFT JOIN core.permit p ON p.permit_id = t.permit_id AND p.valid_to IS NULL
  $v$, ops.working_srid());
END $$;

COMMENT ON VIEW pub.buffer_transect IS
  '6(c) buffer width transects along each permit''s protected edge (central wetland boundary '
  'inside its parcels), computed from the current layers when read.';
COMMENT ON COLUMN pub.buffer_transect.transect_id IS
  'Row number (stable while the layers do not change), a key for GIS clients.';
COMMENT ON COLUMN pub.buffer_transect.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.buffer_transect.permit_id IS 'Permit.';
COMMENT ON COLUMN pub.buffer_transect.permit_no IS 'Permit number.';
COMMENT ON COLUMN pub.buffer_transect.edge_no IS 'Protected edge line of the permit.';
COMMENT ON COLUMN pub.buffer_transect.transect_no IS 'Transect along that line, from 1.';
COMMENT ON COLUMN pub.buffer_transect.position_ft IS 'Distance of the station along the edge, ft.';
COMMENT ON COLUMN pub.buffer_transect.width_ft IS
  'Buffer width: from the edge to the first exit from the effective buffer (buffer - trails - '
  'wetland), ft.';
COMMENT ON COLUMN pub.buffer_transect.min_width_ft IS 'Minimum width at all points (6(c)), ft.';
COMMENT ON COLUMN pub.buffer_transect.outcome IS 'pass when width_ft >= min_width_ft, else fail.';
COMMENT ON COLUMN pub.buffer_transect.geom IS
  'The transect from the edge outward, as long as the width (a transect of width 0 is drawn as '
  'long as the minimum width, to show where buffer is missing).';

DO $$
BEGIN
  EXECUTE format($v$
    CREATE VIEW pub.stormwater_volume AS
    SELECT v.subwatershed_id, v.plan_area_id, v.permit_id, p.permit_no, v.name,
           v.area_acres::numeric(12,4) AS area_acres,
           v.uncovered_acres::numeric(12,4) AS uncovered_acres, v.design_storm_in, v.v_cuft, v.v_ab_cuft, v.v_cd_cuft,
           v.infiltration_cuft, v.pretreatment_cuft, v.biofiltration_cuft, v.wet_pond_cuft,
           v.ab_provided_cuft, v.cd_provided_cuft,
           CASE WHEN v.v_cd_cuft > 0 THEN v.biofiltration_required_cuft ELSE 0 END
             AS biofiltration_required_cuft,
           CASE WHEN v.has_impervious AND v.infiltration_needs_pretreatment
                     AND v.pretreatment_cuft <= 0 THEN 'fail'
                WHEN v.uncovered IS NOT NULL THEN 'not_evaluated'
                WHEN v.ab_provided_cuft >= v.v_ab_cuft
                 AND (v.v_cd_cuft = 0 OR v.biofiltration_cuft >= v.biofiltration_required_cuft)
                 AND v.cd_provided_cuft >= v.v_cd_cuft
                THEN 'pass' ELSE 'fail' END AS outcome,
           v.geom::geometry(MultiPolygon, %1$s) AS geom
    FROM checks.published_stormwater() AS v(
      plan_area_id integer, permit_id bigint, subwatershed_id bigint, name text,
      area_acres numeric, uncovered_acres numeric, design_storm_in numeric, v_cuft numeric,
      v_ab_cuft numeric, v_cd_cuft numeric, infiltration_cuft numeric, pretreatment_cuft numeric,
      biofiltration_cuft numeric, wet_pond_cuft numeric, ab_provided_cuft numeric,
      cd_provided_cuft numeric, pretreatment_max_share numeric, biofiltration_min_share numeric,
      has_impervious boolean, infiltration_needs_pretreatment boolean, geom geometry,
      share_base text, pretreatment_cap_cuft numeric, biofiltration_required_cuft numeric,
      uncovered geometry, uncovered_m2 double precision, area_tolerance_m2 numeric)
    LEFT JOIN core.permit p ON p.permit_id = v.permit_id AND p.valid_to IS NULL
  $v$, ops.working_srid());
END $$;

COMMENT ON VIEW pub.stormwater_volume IS
  '5(c) water quality volume per subwatershed: required (TR-55 runoff of the design storm, '
  'split A/B and C/D) against the BMP volume provided by kind; computed when read.';
COMMENT ON COLUMN pub.stormwater_volume.subwatershed_id IS 'Subwatershed.';
COMMENT ON COLUMN pub.stormwater_volume.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.stormwater_volume.permit_id IS 'Permit.';
COMMENT ON COLUMN pub.stormwater_volume.permit_no IS 'Permit number.';
COMMENT ON COLUMN pub.stormwater_volume.name IS 'Subwatershed name.';
COMMENT ON COLUMN pub.stormwater_volume.area_acres IS 'Area of the subwatershed, acres.';
COMMENT ON COLUMN pub.stormwater_volume.uncovered_acres IS
  'Acres of the subwatershed with no land cover of the permit: their runoff is unknown, so '
  'from area_tolerance_m2 on the volumes are not evaluated (outcome not_evaluated).';
COMMENT ON COLUMN pub.stormwater_volume.design_storm_in IS
  'Design storm (bmp_design_storm_in, 2-year 24-hour), inches.';
COMMENT ON COLUMN pub.stormwater_volume.v_cuft IS
  'Required volume V: sum over land cover x soil pieces of TR-55 runoff depth / 12 x area, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.v_ab_cuft IS
  'Part of V generated on A/B soil suited to infiltration, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.v_cd_cuft IS
  'Part of V generated where infiltration is not suited (C, D, dual or unmapped soil not '
  'routable to A/B, high groundwater, contamination), ft3.';
COMMENT ON COLUMN pub.stormwater_volume.infiltration_cuft IS 'Infiltration BMP volume, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.pretreatment_cuft IS 'Pretreatment BMP volume, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.biofiltration_cuft IS 'Biofiltration BMP volume, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.wet_pond_cuft IS 'Wet pond volume, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.ab_provided_cuft IS
  'Volume counted against V_AB: infiltration + pretreatment up to pretreatment_max_share x '
  'the share base (parameter stormwater_share_base: V, the volume required by 5(c)(i), by '
  'default; V_AB in the alternative reading), ft3.';
COMMENT ON COLUMN pub.stormwater_volume.cd_provided_cuft IS
  'Volume counted against V_CD: biofiltration + wet pond, ft3.';
COMMENT ON COLUMN pub.stormwater_volume.biofiltration_required_cuft IS
  'Biofiltration required where V_CD > 0: biofiltration_min_share x the share base '
  '(stormwater_share_base: V by default, V_CD in the alternative reading), ft3.';
COMMENT ON COLUMN pub.stormwater_volume.outcome IS
  'pass when A/B volume, C/D volume, biofiltration share and pretreatment all hold; fail when '
  'one does not; not_evaluated when land cover is missing over part of the subwatershed (and '
  'pretreatment holds) (BMP soils are checked per BMP in pub.finding).';
COMMENT ON COLUMN pub.stormwater_volume.geom IS 'Subwatershed polygon.';

REVOKE ALL ON FUNCTION checks.published_transects(), checks.published_stormwater() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION checks.published_transects(), checks.published_stormwater()
  TO rulem_staff, rulem_gis, rulem_etl;
GRANT SELECT ON pub.finding, pub.permit_compliance, pub.buffer_transect, pub.stormwater_volume,
  pub.finding_review_history TO rulem_staff, rulem_gis, rulem_etl;
