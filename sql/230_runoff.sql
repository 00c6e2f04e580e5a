-- 230_runoff: TR-55 runoff depth and curve numbers (5(c)(i)). Idempotent.

-- TR-55 (NRCS 1986) equations 2-3 and 2-4: Q = (P - 0.2S)^2 / (P + 0.8S), S = 1000/CN - 10,
-- and Q = 0 while P <= 0.2S (all rain is initial abstraction). Inches in, inches out, in
-- numeric so that the hand-worked figures (tests/sql/checks/runoff_depth.sql) hold to the digit.
CREATE OR REPLACE FUNCTION pub.runoff_depth_in(p_in numeric, cn numeric)
RETURNS numeric LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  s numeric;
BEGIN
  IF cn <= 0 OR cn > 100 THEN
    RAISE EXCEPTION 'curve number % is outside (0, 100]', cn
      USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  IF p_in < 0 THEN
    RAISE EXCEPTION 'rainfall % in is negative', p_in USING ERRCODE = 'numeric_value_out_of_range';
  END IF;
  s := 1000 / cn - 10;
  IF p_in <= 0.2 * s THEN
    RETURN 0;
  END IF;
  RETURN (p_in - 0.2 * s) ^ 2 / (p_in + 0.8 * s);
END $$;
COMMENT ON FUNCTION pub.runoff_depth_in(numeric, numeric) IS
  'TR-55 runoff depth (inches) for rainfall p_in (inches) and curve number cn: '
  'Q = (P - 0.2S)^2 / (P + 0.8S), S = 1000/CN - 10, 0 when P <= 0.2S.';

-- The curve number of a TR-55 cover class on a hydrologic soil group. A dual group (A/D, B/D,
-- C/D) counts as its undrained class D (spec 5(c)); land with no mapped soil counts as D too,
-- the conservative choice.
CREATE OR REPLACE FUNCTION checks.curve_number(p_cover_class text, p_soil_group text)
RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE p_soil_group WHEN 'A' THEN c.cn_a WHEN 'B' THEN c.cn_b WHEN 'C' THEN c.cn_c
                           ELSE c.cn_d END
  FROM core.tr55_cover c WHERE c.cover_class = p_cover_class
$$;
COMMENT ON FUNCTION checks.curve_number(text, text) IS
  'TR-55 Table 2-2a curve number of a cover class on a soil group; dual groups and unmapped '
  'soil count as D.';

REVOKE ALL ON FUNCTION pub.runoff_depth_in(numeric, numeric) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pub.runoff_depth_in(numeric, numeric)
  TO rulem_staff, rulem_gis, rulem_etl;
GRANT EXECUTE ON FUNCTION checks.curve_number(text, text) TO rulem_etl;
