-- 030_parameters: plan areas and their rule parameters (docs/design.md, "Plan areas and
-- parameters"; each parameter's paragraph in docs/rule-m.md).
-- A parameter change is a new row with a later effective_on; rows are never updated.

DROP TRIGGER IF EXISTS parameter_append_only ON core.parameter;
CREATE TRIGGER parameter_append_only BEFORE UPDATE OR DELETE ON core.parameter
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS parameter_no_truncate ON core.parameter;
CREATE TRIGGER parameter_no_truncate BEFORE TRUNCATE ON core.parameter
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS susceptibility_append_only ON core.susceptibility_limit;
CREATE TRIGGER susceptibility_append_only BEFORE UPDATE OR DELETE ON core.susceptibility_limit
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();

-- The Rule M defaults, effective from the rule's adoption (2004-01-28).
CREATE OR REPLACE FUNCTION core.seed_rule_m_parameters(p_plan_area_id integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  INSERT INTO core.parameter (plan_area_id, name, value_num, value_text, unit, rule_ref,
                              effective_on, note)
  SELECT p_plan_area_id, v.name, v.num, v.txt, v.unit, v.ref, DATE '2004-01-28', v.note
  FROM (VALUES
    ('replacement_ratio',          1.0,    NULL, 'acre/acre', '7(b)', 'One acre of replacement per acre of impact.'),
    ('partial_drain_factor',       0.5,    NULL, 'ratio', '7(c)(vi)', 'Choice: WCA default (Minn. R. 8420.0522 subp. 2) until the CWMP scope-and-effect parameters are loaded.'),
    ('counted_credit_status',      NULL,   'certified', NULL, '7(b)', 'Choice: only certified replacement counts toward compliance.'),
    ('heritage_threshold',         NULL,   'BC', 'rank', '7(c)(i)-(ii)', 'Rank B/C or higher is protected.'),
    ('buffer_avg_width_ft',        50,     NULL, 'ft', '6(c)', 'Average buffer width.'),
    ('buffer_min_width_ft',        25,     NULL, 'ft', '6(c)', 'Minimum buffer width at all points.'),
    ('trail_max_width_ft',         10,     NULL, 'ft', '6(f)(iv)', 'Widest trail a buffer may enclose.'),
    ('infiltration_min_offset_ft', 25,     NULL, 'ft', '6(f)(iii)', 'No infiltration feature within the minimum buffer width.'),
    ('marker_max_spacing_ft',      200,    NULL, 'ft', '6(b)', 'Largest gap between buffer markers.'),
    ('marker_tolerance_ft',        10,     NULL, 'ft', '6(b)', 'Choice: a marker within this distance of a lot-line crossing counts.'),
    ('transect_spacing_ft',        5,      NULL, 'ft', '6(c)', 'Choice: spacing of buffer width transects.'),
    ('impervious_trigger_sqft',    10000,  NULL, 'ft2', '2(a)(ii)', 'New impervious surface needing a permit.'),
    ('bmp_design_storm_in',        2.8,    NULL, 'in', '5(c)(i)', '2-year, 24-hour storm.'),
    ('pretreatment_max_share',     0.20,   NULL, 'ratio', '5(c)(ii)', 'Share of the volume required by 5(c)(i) pretreatment may provide (the base: stormwater_share_base).'),
    ('biofiltration_min_share',    0.20,   NULL, 'ratio', '5(c)(iii)', 'Share of the volume required by 5(c)(i) biofiltration must provide (the base: stormwater_share_base).'),
    ('stormwater_share_base',      NULL,   'whole_5ci_volume', NULL, '5(c)(ii)-(iii)', 'Choice: the base of the pretreatment and biofiltration shares. whole_5ci_volume: "the volume required by paragraph 5(c)(i)", the whole subwatershed volume V, as the rule words it; group_volume: V_AB for pretreatment, V_CD for biofiltration (the alternative reading).'),
    ('area_tolerance_m2',          1,      NULL, 'm2', '1', 'Slivers below this raise no finding.'),
    -- replacement implementation, the records of the paragraphs without geometry
    -- (docs/rule-m.md; docs/checks.md "Implementation" and "Permit records")
    ('monitoring_years',           5,      NULL, 'years', '7(e)', 'Choice: years a certified replacement is monitored, the first being the year of certification (the WCA replacement rules that 7(e) incorporates follow a replacement for five growing seasons); its surety is held until they are met.'),
    ('monitoring_grace_days',      90,     NULL, 'days', '7(e)', 'Choice: a monitoring year is due by the end of its calendar year; missing, it is a warning, and an error once overdue by this many days.'),
    ('rate_control_events',        NULL,   '2,10,100', 'years', '5(b)(ii)', 'Choice: the 24-hour storm events (recurrence, years) of the Rule C paragraph 3(b) peak flow control that 5(b)(ii) applies: the proposed peak rate may not exceed the existing one.'),
    ('groundwater_flow_min_ratio', 1.0,    NULL, 'ratio', '5(f)', 'Proposed groundwater flow through the site as a share of the existing flow below which excavation or fill impedes it ("shall not impede").'),
    ('buffer_slope_max_hv',        5,      NULL, 'H:V', '6(e)(iii)', 'Steepest restored buffer slope (5:1 horizontal:vertical) unless the preexisting slope was steeper.'),
    ('buffer_soil_depth_in',       18,     NULL, 'in', '6(e)(iii)', 'Depth of the restored buffer''s soil profile that is uncompacted.'),
    ('buffer_organic_min_pct',     5,      NULL, '%', '6(e)(iii)', 'Least organic matter content of the restored top soil.'),
    ('buffer_organic_max_pct',     15,     NULL, '%', '6(e)(iii)', 'Most organic matter content of the restored top soil.'),
    ('buffer_permeability_min_ratio', 1.0, NULL, 'ratio', '6(e)(iii)', 'Restored permeability as a share of the preexisting uncompacted soil''s ("at least equal").')
  ) AS v(name, num, txt, unit, ref, note)
  ON CONFLICT (plan_area_id, name, effective_on) DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;

  INSERT INTO core.susceptibility_limit (plan_area_id, susceptibility_class,
    max_bounce_increase_ft, max_inundation_increase_days, effective_on)
  VALUES (p_plan_area_id, 'high', 0, 0, DATE '2004-01-28'),
         (p_plan_area_id, 'moderate', 0.5, 2, DATE '2004-01-28'),
         (p_plan_area_id, 'slight', 1.0, 14, DATE '2004-01-28'),
         (p_plan_area_id, 'least', NULL, 21, DATE '2004-01-28')
  ON CONFLICT (plan_area_id, susceptibility_class, effective_on) DO NOTHING;
  RETURN n;
END $$;
COMMENT ON FUNCTION core.seed_rule_m_parameters(integer) IS
  'Seeds the Rule M parameters (spec section 6) and the 5(d) table for a plan area; idempotent.';

-- Plan areas made before a parameter was added to the defaults get it too (from the rule's
-- adoption, like the others): no-op for the parameters they have.
SELECT core.seed_rule_m_parameters(plan_area_id) FROM core.plan_area ORDER BY plan_area_id;

CREATE OR REPLACE FUNCTION core.ensure_plan_area(p_code text, p_name text)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  pid integer;
BEGIN
  SELECT plan_area_id INTO pid FROM core.plan_area WHERE code = p_code;
  IF pid IS NULL THEN
    INSERT INTO core.plan_area (code, name) VALUES (p_code, p_name) RETURNING plan_area_id INTO pid;
  END IF;
  PERFORM core.seed_rule_m_parameters(pid);
  RETURN pid;
END $$;
COMMENT ON FUNCTION core.ensure_plan_area(text, text) IS
  'The plan area with this code, created with the Rule M parameters when new.';

CREATE OR REPLACE FUNCTION core.param_num(p_plan_area_id integer, p_name text,
                                          p_on date DEFAULT current_date)
RETURNS numeric LANGUAGE plpgsql STABLE AS $$
DECLARE
  v numeric;
BEGIN
  SELECT value_num INTO v FROM core.parameter
  WHERE plan_area_id = p_plan_area_id AND name = p_name AND effective_on <= p_on
  ORDER BY effective_on DESC LIMIT 1;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'parameter % is not set for plan area % on %', p_name, p_plan_area_id, p_on
      USING ERRCODE = 'no_data_found';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION core.param_num(integer, text, date) IS
  'Numeric parameter value in force for a plan area on a date.';

CREATE OR REPLACE FUNCTION core.param_text(p_plan_area_id integer, p_name text,
                                           p_on date DEFAULT current_date)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  v text;
BEGIN
  SELECT value_text INTO v FROM core.parameter
  WHERE plan_area_id = p_plan_area_id AND name = p_name AND effective_on <= p_on
  ORDER BY effective_on DESC LIMIT 1;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'parameter % is not set for plan area % on %', p_name, p_plan_area_id, p_on
      USING ERRCODE = 'no_data_found';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION core.param_text(integer, text, date) IS
  'Text parameter value in force for a plan area on a date.';
