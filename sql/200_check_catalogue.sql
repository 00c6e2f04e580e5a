-- 200_check_catalogue: the Rule M checks by paragraph and code (spec section 5), and the row
-- type every check function returns. Idempotent: the type is re-created (with the functions
-- of the files after this one, which are re-applied with it) and the catalogue is upserted.
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

INSERT INTO checks.rule_check (paragraph, check_code, severity, title, measure, unit, worse,
                               sort_order)
VALUES
  ('2(a)', 'applicability', 'warning',
   'A Rule M permit is required for (i) fill, excavation or drainage of CWMP wetland, (ii) more '
   'than impervious_trigger_sqft of new impervious surface in the CWMP area, or (iii) grading '
   'that alters runoff into a CWMP wetland.',
   'Number of the three 2(a) triggers the permit meets; fails (the permit is not a Rule M '
   'permit) when none is met.', 'triggers', 'lower', 10),
  ('3(e)', 'delineation_approved', 'error',
   'The application includes a wetland delineation, reviewed by the TEP and approved.',
   'Acres of the permit''s parcels not covered by the study area of an approved delineation '
   'with a TEP review date, approved on or before the baseline date.', 'acres', 'higher', 20),
  ('3(e)', 'type_determination', 'error',
   'Every delineated wetland on the site has a wetland type determination.',
   'Wetlands of the baseline layer on the permit''s parcels without a Circular 39 type.',
   'wetlands', 'higher', 21),
  ('3(e)', 'functional_assessment', 'error',
   'Every delineated wetland on the site has a functional assessment (MnRAM or approved).',
   'Wetlands of the baseline layer on the permit''s parcels with no current functional '
   'assessment.', 'wetlands', 'higher', 22),
  ('3(f)', 'ditch_determination', 'error',
   'The application includes an on-site determination of the existence and location of all '
   'ditches.',
   'Missing determinations: 1 when neither the permit''s ditch_determined_on nor a ditch '
   'determined for the permit is on record, plus each ditch crossing the permit''s parcels '
   'with no determination date.', 'missing', 'higher', 23),
  ('5(c)', 'stormwater_subwatersheds', 'error',
   'Water quality BMPs are sized per subwatershed for subdivision, grading or new impervious '
   'surface.',
   'Subwatersheds of a permit that subdivides, grades or creates impervious surface; fails at '
   'zero.', 'subwatersheds', 'lower', 30),
  ('5(c)(i)', 'land_cover_coverage', 'error',
   'The proposed land cover covers the tributary area of each subwatershed, so its runoff '
   '(the volume required by 5(c)(i)) can be computed.',
   'Acres of each subwatershed with no land cover of the permit (slivers under '
   'area_tolerance_m2 do not count); its volume checks are then not evaluated.', 'acres',
   'higher', 30),
  ('5(c)(ii)', 'infiltration_volume', 'error',
   'In A/B soils, infiltration (with at most pretreatment_max_share of it by pretreatment) '
   'retains the runoff of the design storm.',
   'Infiltration volume plus pretreatment volume up to pretreatment_max_share x the share base '
   '(stormwater_share_base: V, or V_AB), against V_AB (TR-55 runoff of the A/B pieces of the '
   'subwatershed).', 'ft3', 'lower', 31),
  ('5(c)(ii)', 'pretreatment', 'error',
   'Runoff from impervious surfaces other than rooftops is pretreated before infiltration.',
   'Pretreatment volume of a subwatershed with impervious cover and an infiltration BMP that '
   'does not treat rooftop runoff only; fails at zero.', 'ft3', 'lower', 32),
  ('5(c)(ii)', 'infiltration_soils', 'error',
   'Infiltration BMPs are placed in A/B hydrologic soil groups.',
   'Acres of infiltration BMPs on C, D or dual-group soil, high groundwater or contaminated '
   'soil, or on no mapped soil.', 'acres', 'higher', 33),
  ('5(c)(iii)', 'biofiltration_share', 'error',
   'Where infiltration is not suited, biofiltration provides at least biofiltration_min_share '
   'of the volume.',
   'Biofiltration volume against biofiltration_min_share x the share base '
   '(stormwater_share_base: V, the volume required by 5(c)(i), or V_CD).', 'ft3', 'lower', 34),
  ('5(c)(iii)', 'cd_volume', 'error',
   'Where infiltration is not suited, biofiltration plus NURP wet ponds retain the runoff of '
   'the design storm.',
   'Biofiltration plus wet pond volume against V_CD (TR-55 runoff of the C/D, high '
   'groundwater or contaminated pieces of the subwatershed).', 'ft3', 'lower', 35),
  ('5(d)', 'bounce', 'error',
   'The 10-year bounce of the receiving wetland increases no more than its susceptibility '
   'class allows.',
   'Proposed minus existing 10-year bounce against the class limit of core.susceptibility_limit '
   '(no limit for least susceptible).', 'ft', 'higher', 40),
  ('5(d)', 'inundation', 'error',
   'The 10-year inundation period of the receiving wetland increases no more than its '
   'susceptibility class allows.',
   'Proposed minus existing inundation period against the class limit of '
   'core.susceptibility_limit.', 'days', 'higher', 41),
  ('5(e)', 'declaration_missing', 'error',
   'A declaration against phosphorus fertilizer and plowed snow storage is recorded.',
   'Recorded fertilizer_snow declarations of a permit that subdivides, grades or creates '
   'impervious surface; fails at zero (a warning while the permit is undecided).',
   'declarations', 'lower', 42),
  ('6', 'declaration_missing', 'error',
   'A buffer declaration is recorded (on public land: a written agreement).',
   'Recorded buffer declarations of a permit with a buffer or a protected edge, public-land '
   'agreements counting only on public land; fails at zero (a warning while the permit is '
   'undecided).',
   'declarations', 'lower', 50),
  ('6(b)', 'marker_lot_line', 'error',
   'A buffer marker stands at each lot line crossing the buffer''s upland edge.',
   'Distance from each lot-line crossing of the upland edge to the nearest counted marker, '
   'against marker_tolerance_ft.', 'ft', 'higher', 51),
  ('6(b)', 'marker_gap', 'error',
   'Buffer markers stand along the upland edge at intervals of no more than '
   'marker_max_spacing_ft.',
   'Length along the upland edge between consecutive markers (and from an edge''s end to its '
   'first marker), against marker_max_spacing_ft.', 'ft', 'higher', 52),
  ('6(c)', 'buffer_min_width', 'error',
   'The buffer is at least buffer_min_width_ft wide at all points.',
   'Smallest transect width along the protected edge (inside the effective buffer = buffer - '
   'trails - wetland, out to the buffer''s outer edge), against buffer_min_width_ft.', 'ft',
   'lower', 53),
  ('6(c)', 'buffer_avg_width', 'error',
   'The buffer averages at least buffer_avg_width_ft in width.',
   'Mean transect width along the protected edge (transects equally spaced, so the mean is '
   'length-weighted), against buffer_avg_width_ft.', 'ft', 'lower', 54),
  ('6(d)', 'vegetation_plan', 'error',
   'The application includes a buffer vegetation management plan approved by the District.',
   'Missing approval date (permit.vegetation_plan_on) of a permit with a buffer.', 'missing',
   'higher', 55),
  ('6(e)(v)', 'declaration_missing', 'error',
   'Disturbed buffer: a declaration of three years of correction and maintenance is recorded.',
   'Recorded buffer_restoration_3yr declarations of a permit that grades inside a buffer; '
   'fails at zero (a warning while the permit is undecided).', 'declarations', 'lower', 56),
  ('6(f)', 'buffer_encroachment', 'error',
   'No structure or impervious surface is placed within the buffer, except 6(f)(i)-(ii) '
   'exceptions on record.',
   'Acres of each impervious surface, structure or stormwater BMP other than an infiltration '
   'feature (wet pond, biofiltration, pretreatment) of the permit inside a buffer.', 'acres',
   'higher', 57),
  ('6(f)(iii)', 'infiltration_in_buffer', 'error',
   'Infiltration features are not within the minimum buffer width of the wetland.',
   'Distance from each infiltration BMP of the permit to the central wetland, when closer '
   'than infiltration_min_offset_ft.', 'ft', 'lower', 58),
  ('6(f)(iv)', 'trail_width', 'error',
   'A trail a buffer encloses is no more than trail_max_width_ft wide.',
   'Recorded width of each trail inside a buffer (estimated as 2 x area / perimeter when not '
   'recorded), against trail_max_width_ft.', 'ft', 'higher', 59),
  ('7(c)(i)', 'heritage_wetland_impact', 'error',
   'No wetland community of Natural Heritage rank heritage_threshold or better is disturbed.',
   'Acres of each disturbing feature (impact, structure, grading, wetland replacement) inside '
   'a heritage wetland community ranked heritage_threshold or better.', 'acres', 'higher', 70),
  ('7(c)(ii)', 'heritage_upland_excavation', 'error',
   'Upland of Natural Heritage rank heritage_threshold or better is not excavated for '
   'replacement.',
   'Acres of each wetland replacement inside a heritage upland community ranked '
   'heritage_threshold or better.', 'acres', 'higher', 71),
  ('7(c)', 'replacement_outside_plan_area', 'error',
   'Replacement lies within the CWMP area.',
   'Acres of each replacement feature outside the CWMP area.', 'acres', 'higher', 72),
  ('7(c)', 'replacement_outside_figure5', 'warning',
   'Replacement location conforms to CWMP Map Figure 5.',
   'Acres of each wetland replacement outside every Figure 5 area.', 'acres', 'higher', 73),
  ('7(c)', 'replacement_type_figure5', 'warning',
   'Replacement type conforms to CWMP Map Figure 5.',
   'Acres of each wetland replacement with a planned type inside a Figure 5 area planned for '
   'another type.', 'acres', 'higher', 74),
  ('7(b)', 'replacement_deficit', 'error',
   'Wetland impact is replaced at one acre of replacement wetland for each acre of impact: an '
   'approved permit''s counted credit (with transfers) covers its required replacement; so '
   'does the plan area''s.',
   'Acres of required replacement not covered by counted credit and transfers (a warning when '
   'proposed or constructed credit would cover them), per approved permit and plan-wide.',
   'acres', 'higher', 65),
  ('7(b)', 'credit_overlap', 'error',
   'No acre of replacement is credited to two owners: ground an older claim holds earns the '
   'later owner nothing.',
   'Acres of each wetland replacement feature overlapping an older claim''s replacement (an '
   'error where the older ground is at a counted status, a warning where it is pending).',
   'acres', 'higher', 66),
  ('7(b)', 'impact_not_drawn', 'error',
   'Every structure in wetland is recorded as wetland impact (7(g) allows the structure, it '
   'does not excuse the replacement).',
   'Acres of each structure (not suspended, 6(f)(i)) inside baseline CWMP wetland that no '
   'impact polygon of the permit covers; the ledger counts them as fill all the same.',
   'acres', 'higher', 67),
  ('7(g)', 'structure_in_wetland', 'error',
   'A road, utility or other structure (not passive recreation or education) is placed in CWMP '
   'wetland only with a variance.',
   'Acres of each such structure inside the baseline CWMP wetland with no variance_ref.',
   'acres', 'higher', 75),
  ('8', 'easement_coverage', 'error',
   'A recorded easement covers the CWMP wetland, the upland it encloses and the buffer on each '
   'permitted parcel.',
   'Acres of each permitted parcel that are wetland (after the permit''s fill and full '
   'drainage), upland enclosed by wetland, buffer or the permit''s wetland replacement, and '
   'not inside a recorded easement (a warning while the permit is undecided).', 'acres',
   'higher', 80)
ON CONFLICT (paragraph, check_code) DO UPDATE SET
  severity = EXCLUDED.severity, title = EXCLUDED.title, measure = EXCLUDED.measure,
  unit = EXCLUDED.unit, worse = EXCLUDED.worse, sort_order = EXCLUDED.sort_order;

GRANT USAGE ON TYPE checks.evaluation TO rulem_etl;
GRANT SELECT ON checks.rule_check TO rulem_etl;
