-- 130_ledger_permit_totals: what an owner (a permit, or a District project without a permit)
-- owes and earns, straight from the inputs (docs/ledger.md section 1), the credit transfers that stand,
-- and the refusal of a transfer its giver cannot back.
--   required = impact acres x replacement_ratio
--   credit   = replacement credit at counted_credit_status or a later status, in parts dated
--              per feature (sql/120)
--              (+ transfers in − transfers out for the balance: the transfers that stand)
--   balance  = credit + transfers in − transfers out − required
-- Parameters are those in force on the owner's baseline date, so a parameter change never
-- rewrites a decided permit. Permits denied or withdrawn carry nothing (no impact happens);
-- permits applied or under review are measured as of today, so their pending impact shows.
-- A District project's baseline date is the earliest status date of its features (today when
-- none is recorded).
-- Transfers (docs/ledger.md decision 9): a transfer stands when its receiving permit is
-- current and neither denied nor withdrawn, its giver is a decided permit (neither denied nor
-- withdrawn) or a District project with current replacement, it is dated on or after the
-- giver's decision, and the giver's position on its date covers it: the giver's counted
-- credit dated by then, plus the transfers it received that stand, less its required
-- replacement (dated its decision), less the transfers it gave before (in the order of their
-- dates, then their ids) that stand, each rounded to 4 decimals as published. A transfer that
-- does not stand counts for neither side (the receiver gets a finding, sql/270); one that
-- would not stand when recorded is refused.

DROP FUNCTION IF EXISTS ledger.sorted_ids(bigint[]);
DROP FUNCTION IF EXISTS ledger.owner_measure(integer, bigint, text);
DROP FUNCTION IF EXISTS ledger.permit_totals(bigint);
DROP FUNCTION IF EXISTS ledger.owner_measures(integer, bigint[], text[]);

-- Everything an owner carries but its transfers.
DROP FUNCTION IF EXISTS ledger.owner_base(integer, bigint[], text[]);
CREATE OR REPLACE FUNCTION ledger.owner_base(p_plan_area_id integer, p_permit_ids bigint[],
                                             p_district_projects text[] DEFAULT '{}')
RETURNS TABLE (
  permit_id bigint,
  district_project text,
  measured_on date,
  own_on date,
  parcel_pins text[],
  partial_drain_factor numeric,
  replacement_ratio numeric,
  counted_credit_status text,
  impact_full_geom geometry,
  impact_partial_geom geometry,
  impact_remainder_geom geometry,
  part_kinds text[],
  part_dates date[],
  part_signs integer[],
  part_geoms geometry[],
  part_acres numeric[],
  impact_acres numeric,
  required_acres numeric,
  credit_acres numeric,
  credit_proposed_acres numeric,
  credit_constructed_acres numeric,
  inputs jsonb
)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan  -- planned once per session, not once per chunk
SET work_mem = '64MB'  -- a chunk's pieces and geometries: 4 MB spilled 29 MB to disk a county
SET jit = off  -- its generic plan's cost grows with the tables (518,000 on three counties),
               -- past jit_optimize_above_cost: LLVM then compiled the query at every call,
               -- 8 s of a transfer's surplus check (52 ms without: the trigger below); the
               -- recompute (sql/150) and permit_totals had it off already
AS $$
#variable_conflict use_column
DECLARE
  o record;
BEGIN
  -- The owners that carry something, their baseline and own dates and the parameters in force
  -- then (looked up for all dates in one query), as parallel arrays for the set-based
  -- measures. The own date: a permit's decision date, else its recorded baseline date; a
  -- District project's earliest status date (NULL: none on record, an undecided permit).
  WITH own AS (
    SELECT pm.permit_id, NULL::text AS district_project, pm.version_id AS permit_version_id,
           ledger.permit_baseline_on(pm.baseline_on, pm.decided_on) AS measured_on,
           coalesce(pm.decided_on, pm.baseline_on) AS own_on,
           pm.parcel_pins
    FROM core.permit pm
    WHERE pm.permit_id = ANY(p_permit_ids) AND pm.valid_to IS NULL
      AND pm.plan_area_id = p_plan_area_id AND pm.status NOT IN ('denied', 'withdrawn')
    UNION ALL
    SELECT NULL, r.district_project, NULL, coalesce(min(r.status_on), current_date),
           min(r.status_on), NULL
    FROM core.replacement r
    WHERE r.permit_id IS NULL AND r.district_project = ANY(p_district_projects)
      AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    GROUP BY r.district_project
  ), prm AS (
    SELECT x.on_date AS measured_on, x.*
    FROM ledger.parameters_on(p_plan_area_id, ARRAY(SELECT own.measured_on FROM own)) x
  )
  SELECT array_agg(own.permit_id ORDER BY own.permit_id, own.district_project) AS permits,
         array_agg(own.district_project ORDER BY own.permit_id, own.district_project)
           AS projects,
         array_agg(own.permit_version_id ORDER BY own.permit_id, own.district_project)
           AS permit_versions,
         array_agg(own.measured_on ORDER BY own.permit_id, own.district_project) AS dates,
         array_agg(own.own_on ORDER BY own.permit_id, own.district_project) AS own_dates,
         array_agg(prm.partial_drain_factor ORDER BY own.permit_id, own.district_project)
           AS factors,
         array_agg(prm.replacement_ratio ORDER BY own.permit_id, own.district_project)
           AS ratios,
         array_agg(prm.counted_credit_status ORDER BY own.permit_id, own.district_project)
           AS counted,
         array_agg(prm.heritage_threshold_ordinal ORDER BY own.permit_id, own.district_project)
           AS ordinals,
         array_agg(to_jsonb(prm.parameter_ids) ORDER BY own.permit_id, own.district_project)
           AS parameters,
         array_agg(array_to_string(own.parcel_pins, ',')     -- normalized PINs: no commas
                   ORDER BY own.permit_id, own.district_project) AS pins
  INTO o
  FROM own JOIN prm ON prm.measured_on = own.measured_on;

  IF o.permits IS NULL THEN
    RETURN;
  END IF;

  RETURN QUERY
  WITH own AS (
    SELECT u.n::integer AS owner_no, u.*
    FROM unnest(o.permits, o.projects, o.permit_versions, o.dates, o.own_dates, o.factors,
                o.ratios, o.counted, o.parameters, o.pins)
         WITH ORDINALITY AS u(permit_id, district_project, permit_version_id, measured_on,
                              own_on, factor, ratio, counted, parameters, pins, n)
  ), im AS (
    SELECT * FROM ledger.impact_measures(p_plan_area_id, o.permits, o.dates, o.factors)
  ), cm AS (
    SELECT c.*,
           (SELECT coalesce(sum(a), 0) FROM unnest(c.part_kinds, c.part_acres) AS x(k, a)
            WHERE k = 'counted') AS counted_acres,
           (SELECT coalesce(sum(a), 0) FROM unnest(c.part_kinds, c.part_acres) AS x(k, a)
            WHERE k = 'constructed') AS cons_acres,
           (SELECT coalesce(sum(a), 0) FROM unnest(c.part_kinds, c.part_acres) AS x(k, a)
            WHERE k = 'proposed') AS prop_acres
    FROM ledger.credit_measures(p_plan_area_id, o.permits, o.projects, o.dates, o.ordinals,
                                o.counted, o.own_dates) c
  ), m AS (
    SELECT own.*, im.full_geom, im.partial_geom, im.remainder_geom,
           coalesce(im.impact_acres, 0) AS impact_acres,
           im.impact_versions, im.wetland_versions, im.delineation_versions,
           im.structure_versions, im.bmp_versions, im.grading_versions, im.basin_versions,
           im.earlier_permits, im.cwmp_area_versions AS impact_cwmp_area_versions,
           cm.part_kinds, cm.part_dates, cm.part_signs, cm.part_geoms, cm.part_acres,
           cm.replacement_versions,
           cm.wetland_versions AS credit_wetland_versions,
           cm.delineation_versions AS credit_delineation_versions,
           cm.buffer_versions, cm.heritage_area_versions, cm.cwmp_area_versions,
           cm.claimed_versions, cm.final_delineation_versions,
           coalesce(cm.counted_acres, 0) AS counted_acres,
           coalesce(cm.cons_acres, 0) AS cons_acres,
           coalesce(cm.prop_acres, 0) AS prop_acres
    FROM own
    LEFT JOIN im ON im.owner_no = own.owner_no
    LEFT JOIN cm ON cm.owner_no = own.owner_no
  )
  SELECT m.permit_id, m.district_project, m.measured_on, m.own_on,
         string_to_array(m.pins, ','),
         m.factor, m.ratio, m.counted,
         m.full_geom, m.partial_geom, m.remainder_geom,
         m.part_kinds, m.part_dates, m.part_signs, m.part_geoms, m.part_acres,
         m.impact_acres,
         m.impact_acres * m.ratio,
         m.counted_acres, m.prop_acres, m.cons_acres,
         jsonb_strip_nulls(jsonb_build_object(
           'permit', m.permit_version_id,
           'baseline_on', m.measured_on,
           'impact', m.impact_versions,
           'structure', m.structure_versions,
           'bmp', m.bmp_versions,
           'grading', m.grading_versions,
           'replacement', m.replacement_versions,
           'wetland', m.wetland_versions,
           'delineation', m.delineation_versions,
           'impact_replacement', m.basin_versions,
           'charged_earlier_permit', m.earlier_permits,
           'replacement_wetland', m.credit_wetland_versions,
           'replacement_delineation', m.credit_delineation_versions,
           'final_delineation', m.final_delineation_versions,
           'buffer', m.buffer_versions,
           'heritage_area', m.heritage_area_versions,
           'cwmp_area', coalesce(m.cwmp_area_versions, m.impact_cwmp_area_versions),
           'claimed_replacement', m.claimed_versions,
           'parameter', m.parameters))
  FROM m;
END $$;
COMMENT ON FUNCTION ledger.owner_base(integer, bigint[], text[]) IS
  'Everything the ledger derives for some owners from the current inputs but their transfers: '
  'baseline and own dates, parameters, impact geometry, credit in dated parts, acres by '
  'measure and the versions of every input used.';

-- The givers a set of owners' transfers stand on: the givers of every transfer to or from
-- them, and, again and again, the givers of the transfers those givers received.
CREATE OR REPLACE FUNCTION ledger.transfer_givers(p_plan_area_id integer, p_permit_ids bigint[],
                                                  p_district_projects text[] DEFAULT '{}')
RETURNS TABLE (permit_id bigint, district_project text)
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE g(permit_id, district_project) AS (
    SELECT t.from_permit_id, t.from_district_project FROM core.credit_transfer t
    WHERE t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id
      AND (t.to_permit_id = ANY(p_permit_ids) OR t.from_permit_id = ANY(p_permit_ids)
           OR t.from_district_project = ANY(p_district_projects))
    UNION
    SELECT t.from_permit_id, t.from_district_project
    FROM g JOIN core.credit_transfer t
      ON t.to_permit_id = g.permit_id AND t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id
  )
  SELECT g.permit_id, g.district_project FROM g
$$;
COMMENT ON FUNCTION ledger.transfer_givers(integer, bigint[], text[]) IS
  'Givers whose position decides whether the transfers to or from some owners stand: the '
  'givers of those transfers and, transitively, of the transfers the givers received.';

-- Which transfers stand, in the order of their dates (then ids): p_positions holds each
-- owner's position as ledger.owner_position builds it (by ledger.owner_key); the transfers
-- judged are every current transfer whose giver is one of p_permit_ids / p_district_projects,
-- but p_exclude_version (a transfer left out, to see what it changes).
CREATE OR REPLACE FUNCTION ledger.transfer_fold(p_plan_area_id integer, p_positions jsonb,
                                                p_permit_ids bigint[],
                                                p_district_projects text[],
                                                p_exclude_version bigint DEFAULT NULL)
RETURNS TABLE (credit_transfer_id bigint, version_id bigint, transfer_key text,
               from_permit_id bigint, from_district_project text, to_permit_id bigint,
               acres numeric, transferred_on date, stands boolean, why text,
               surplus numeric)
LANGUAGE plpgsql STABLE SET jit = off AS $$
#variable_conflict use_column
DECLARE
  t record;
  pos jsonb;
  gkey text;
  giver text;
  used jsonb := '{}';
  recv jsonb := '{}';
  have numeric;
BEGIN
  FOR t IN
    SELECT ct.credit_transfer_id, ct.version_id, f.feature_key, ct.from_permit_id,
           ct.from_district_project, ct.to_permit_id, ct.acres, ct.transferred_on,
           gp.permit_no AS giver_no, gp.status AS giver_status, gp.decided_on AS giver_decided,
           rp.permit_no AS taker_no, rp.status AS taker_status
    FROM core.credit_transfer ct
    JOIN core.feature f ON f.feature_id = ct.credit_transfer_id
    LEFT JOIN core.permit gp ON gp.permit_id = ct.from_permit_id AND gp.valid_to IS NULL
    LEFT JOIN core.permit rp ON rp.permit_id = ct.to_permit_id AND rp.valid_to IS NULL
    WHERE ct.valid_to IS NULL AND ct.plan_area_id = p_plan_area_id
      AND (ct.from_permit_id = ANY(p_permit_ids)
           OR ct.from_district_project = ANY(p_district_projects))
      AND ct.version_id IS DISTINCT FROM p_exclude_version
    ORDER BY ct.transferred_on, ct.credit_transfer_id
  LOOP
    gkey := ledger.owner_key(t.from_permit_id, t.from_district_project);
    giver := CASE WHEN t.from_permit_id IS NOT NULL THEN 'permit ' || coalesce(t.giver_no, '?')
                  ELSE 'District project ' || t.from_district_project END;
    pos := p_positions -> gkey;
    credit_transfer_id := t.credit_transfer_id;
    version_id := t.version_id;
    transfer_key := t.feature_key;
    from_permit_id := t.from_permit_id;
    from_district_project := t.from_district_project;
    to_permit_id := t.to_permit_id;
    acres := t.acres;
    transferred_on := t.transferred_on;
    stands := false;
    surplus := NULL;
    IF t.taker_status IS NULL OR t.taker_status IN ('denied', 'withdrawn') THEN
      why := format('goes to permit %s, which is %s', coalesce(t.taker_no, '?'),
                    coalesce(t.taker_status, 'no current permit'));
    ELSIF t.from_permit_id IS NOT NULL AND (t.giver_status IS NULL
                                             OR t.giver_status IN ('denied', 'withdrawn')) THEN
      why := format('comes from %s, which is %s', giver,
                    coalesce(t.giver_status, 'no current permit'));
    ELSIF t.from_permit_id IS NOT NULL AND t.giver_decided IS NULL THEN
      why := format('comes from %s, which is not decided', giver);
    ELSIF t.from_permit_id IS NOT NULL AND t.transferred_on < t.giver_decided THEN
      why := format('is dated %s, before the giving %s was decided (%s)', t.transferred_on,
                    giver, t.giver_decided);
    ELSE
      -- the giver's position on the transfer's date, each measure as published
      have := round(coalesce((SELECT sum((x ->> 1)::numeric)
                              FROM jsonb_array_elements(pos -> 'credit') x
                              WHERE coalesce((x ->> 0)::date, current_date)
                                    <= t.transferred_on), 0), 4)
              + round(coalesce((recv ->> gkey)::numeric, 0), 4)
              - CASE WHEN coalesce((pos ->> 'required_on')::date, current_date)
                          <= t.transferred_on
                     THEN round(coalesce((pos ->> 'required')::numeric, 0), 4) ELSE 0 END
              - round(coalesce((used ->> gkey)::numeric, 0), 4);
      surplus := have;
      IF t.acres > have THEN
        why := format('exceeds the giving %s''s surplus of %s acres on %s',
                      split_part(giver, ' ', 1)
                      || CASE WHEN t.from_permit_id IS NULL THEN ' project' ELSE '' END,
                      round(greatest(have, 0), 4), t.transferred_on);
      ELSE
        stands := true;
        why := NULL;
        used := used || jsonb_build_object(gkey, coalesce((used ->> gkey)::numeric, 0)
                                                 + t.acres);
        recv := recv || jsonb_build_object(
          ledger.owner_key(t.to_permit_id, NULL),
          coalesce((recv ->> ledger.owner_key(t.to_permit_id, NULL))::numeric, 0) + t.acres);
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;
COMMENT ON FUNCTION ledger.transfer_fold(integer, jsonb, bigint[], text[], bigint) IS
  'The transfers some givers made, in date order, each with whether it stands (receiver and '
  'giver current and not denied or withdrawn, dated on or after the giver''s decision, '
  'covered by the giver''s position on its date) and why not, from the givers'' positions.';

-- An owner's position for the fold: its counted credit parts [[date, acres], ...] and its
-- required replacement with the date it takes effect.
CREATE OR REPLACE FUNCTION ledger.owner_position(p_part_kinds text[], p_part_dates date[],
                                                 p_part_acres numeric[], p_required numeric,
                                                 p_required_on date)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'credit', coalesce((SELECT jsonb_agg(jsonb_build_array(x.d, x.a))
                        FROM unnest(p_part_kinds, p_part_dates, p_part_acres) AS x(k, d, a)
                        WHERE x.k = 'counted'), '[]'::jsonb),
    'required', p_required, 'required_on', p_required_on)
$$;
COMMENT ON FUNCTION ledger.owner_position(text[], date[], numeric[], numeric, date) IS
  'An owner''s position for ledger.transfer_fold: dated counted credit and required acres.';

-- The transfers to and from some owners, each with whether it stands (the refusal below and
-- the finding of sql/270 ask this; the recompute folds inside ledger.owner_measures).
CREATE OR REPLACE FUNCTION ledger.transfer_standing(p_plan_area_id integer,
                                                    p_permit_ids bigint[],
                                                    p_district_projects text[] DEFAULT '{}',
                                                    p_exclude_version bigint DEFAULT NULL)
RETURNS TABLE (credit_transfer_id bigint, version_id bigint, transfer_key text,
               from_permit_id bigint, from_district_project text, to_permit_id bigint,
               acres numeric, transferred_on date, stands boolean, why text,
               surplus numeric)
LANGUAGE sql STABLE SET jit = off AS $$
  WITH g AS (
    SELECT coalesce(array_agg(DISTINCT x.permit_id) FILTER (WHERE x.permit_id IS NOT NULL),
                    '{}') || p_permit_ids AS permits,
           coalesce(array_agg(DISTINCT x.district_project)
                    FILTER (WHERE x.district_project IS NOT NULL), '{}')
           || p_district_projects AS projects
    FROM ledger.transfer_givers(p_plan_area_id, p_permit_ids, p_district_projects) x
  ), pos AS (
    SELECT coalesce(jsonb_object_agg(ledger.owner_key(b.permit_id, b.district_project),
                                     ledger.owner_position(b.part_kinds, b.part_dates,
                                                           b.part_acres, b.required_acres,
                                                           b.own_on)), '{}') AS j
    FROM g CROSS JOIN LATERAL ledger.owner_base(
      p_plan_area_id,
      ARRAY(SELECT DISTINCT u FROM unnest(g.permits) u),
      ARRAY(SELECT DISTINCT u FROM unnest(g.projects) u)) b
  )
  SELECT f.*
  FROM g, pos,
       ledger.transfer_fold(p_plan_area_id, pos.j, g.permits, g.projects, p_exclude_version) f
  WHERE f.to_permit_id = ANY(p_permit_ids) OR f.from_permit_id = ANY(p_permit_ids)
     OR f.from_district_project = ANY(p_district_projects)
$$;
COMMENT ON FUNCTION ledger.transfer_standing(integer, bigint[], text[], bigint) IS
  'The current transfers to or from some owners (but p_exclude_version), each with whether '
  'it stands and why not (ledger.transfer_fold over the givers they stand on).';

CREATE OR REPLACE FUNCTION ledger.owner_measures(p_plan_area_id integer, p_permit_ids bigint[],
                                                 p_district_projects text[] DEFAULT '{}')
RETURNS TABLE (
  permit_id bigint,
  district_project text,
  measured_on date,
  own_on date,
  parcel_pins text[],
  partial_drain_factor numeric,
  replacement_ratio numeric,
  counted_credit_status text,
  impact_full_geom geometry,
  impact_partial_geom geometry,
  impact_remainder_geom geometry,
  part_kinds text[],
  part_dates date[],
  part_signs integer[],
  part_geoms geometry[],
  part_acres numeric[],
  impact_acres numeric,
  required_acres numeric,
  credit_acres numeric,
  credit_proposed_acres numeric,
  credit_constructed_acres numeric,
  transfer_in_acres numeric,
  transfer_out_acres numeric,
  transfer_sides text[],
  transfer_dates date[],
  transfer_amounts numeric[],
  inputs jsonb
)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET work_mem = '64MB'
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  gp bigint[];
  gj text[];
BEGIN
  -- The givers the owners' transfers stand on, measured with them (not twice).
  SELECT coalesce(array_agg(DISTINCT x.permit_id)
                  FILTER (WHERE x.permit_id IS NOT NULL
                            AND NOT x.permit_id = ANY(p_permit_ids)), '{}'),
         coalesce(array_agg(DISTINCT x.district_project)
                  FILTER (WHERE x.district_project IS NOT NULL
                            AND NOT x.district_project = ANY(p_district_projects)), '{}')
  INTO gp, gj
  FROM ledger.transfer_givers(p_plan_area_id, p_permit_ids, p_district_projects) x;

  RETURN QUERY
  WITH b AS MATERIALIZED (
    SELECT * FROM ledger.owner_base(p_plan_area_id, p_permit_ids || gp,
                                    p_district_projects || gj)
  ), st AS MATERIALIZED (     -- the transfers of the owners and givers, standing or not
    SELECT f.*
    FROM (SELECT coalesce(jsonb_object_agg(
                   ledger.owner_key(b.permit_id, b.district_project),
                   ledger.owner_position(b.part_kinds, b.part_dates, b.part_acres,
                                         b.required_acres, b.own_on)), '{}') AS j
          FROM b) pos
    CROSS JOIN LATERAL ledger.transfer_fold(p_plan_area_id, pos.j, p_permit_ids || gp,
                                            p_district_projects || gj) f
    WHERE cardinality(gp) + cardinality(gj) > 0
       OR EXISTS (SELECT 1 FROM core.credit_transfer t
                  WHERE t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id
                    AND (t.from_permit_id = ANY(p_permit_ids)
                         OR t.from_district_project = ANY(p_district_projects)))
  ), tr AS (
    SELECT ledger.owner_key(x.permit_id, x.project) AS okey,
           sum(x.a) FILTER (WHERE x.side = 'in' AND x.stands) AS t_in,
           sum(x.a) FILTER (WHERE x.side = 'out' AND x.stands) AS t_out,
           array_agg(x.side ORDER BY x.on_date, x.side) FILTER (WHERE x.stands) AS sides,
           array_agg(x.on_date ORDER BY x.on_date, x.side) FILTER (WHERE x.stands) AS dates,
           array_agg(x.a ORDER BY x.on_date, x.side) FILTER (WHERE x.stands) AS amounts,
           array_agg(x.version_id ORDER BY x.version_id) FILTER (WHERE x.stands) AS versions,
           array_agg(x.version_id ORDER BY x.version_id) FILTER (WHERE NOT x.stands)
             AS not_counted
    FROM (SELECT st.to_permit_id AS permit_id, NULL::text AS project, 'in' AS side,
                 st.transferred_on AS on_date, st.acres AS a, st.version_id, st.stands
          FROM st
          UNION ALL
          SELECT st.from_permit_id, st.from_district_project, 'out', st.transferred_on,
                 st.acres, st.version_id, st.stands
          FROM st) x
    GROUP BY 1
  )
  SELECT b.permit_id, b.district_project, b.measured_on, b.own_on, b.parcel_pins,
         b.partial_drain_factor, b.replacement_ratio, b.counted_credit_status,
         b.impact_full_geom, b.impact_partial_geom, b.impact_remainder_geom,
         b.part_kinds, b.part_dates, b.part_signs, b.part_geoms, b.part_acres,
         b.impact_acres, b.required_acres, b.credit_acres, b.credit_proposed_acres,
         b.credit_constructed_acres,
         coalesce(tr.t_in, 0), coalesce(tr.t_out, 0), tr.sides, tr.dates, tr.amounts,
         b.inputs || jsonb_strip_nulls(jsonb_build_object(
           'credit_transfer', tr.versions, 'credit_transfer_not_counted', tr.not_counted))
  FROM b
  LEFT JOIN tr ON tr.okey = ledger.owner_key(b.permit_id, b.district_project)
  WHERE b.permit_id = ANY(p_permit_ids) OR b.district_project = ANY(p_district_projects);
END $$;
COMMENT ON FUNCTION ledger.owner_measures(integer, bigint[], text[]) IS
  'Everything the ledger derives for some owners (permits; District projects by name) from the '
  'current inputs: baseline and own dates, parameters, impact geometry, credit in dated parts, '
  'acres by measure, the transfers that stand (dated each) and the versions of every input '
  'used. An owner with no row carries nothing (a permit denied, withdrawn or retired; a '
  'project with no current feature).';

CREATE OR REPLACE FUNCTION ledger.owner_lock(p_permit_id bigint, p_district_project text)
RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(1279607879,   -- 'LEDG': the ledger's advisory lock class
           CASE WHEN p_permit_id IS NOT NULL THEN (p_permit_id % 2147483647)::integer
                ELSE hashtext(p_district_project) END)
$$;
COMMENT ON FUNCTION ledger.owner_lock(bigint, text) IS
  'Waits for and takes the transaction lock of one ledger owner, so that two recomputes (or a '
  'recompute and a transfer check) of the same permit never interleave.';

CREATE OR REPLACE FUNCTION ledger.permit_totals(p_permit_id bigint)
RETURNS TABLE (
  permit_id bigint,
  measured_on date,
  impact_acres numeric,
  required_acres numeric,
  credit_acres numeric,
  credit_proposed_acres numeric,
  credit_constructed_acres numeric,
  transfer_in_acres numeric,
  transfer_out_acres numeric,
  balance_acres numeric
)
LANGUAGE sql STABLE SET jit = off AS $$
  SELECT p_permit_id, m.measured_on, m.impact_acres, m.required_acres, m.credit_acres,
         m.credit_proposed_acres, m.credit_constructed_acres, m.transfer_in_acres,
         m.transfer_out_acres,
         m.credit_acres + m.transfer_in_acres - m.transfer_out_acres - m.required_acres
  FROM core.feature f
  CROSS JOIN LATERAL ledger.owner_measures(f.plan_area_id, ARRAY[f.feature_id]) m
  WHERE f.feature_id = p_permit_id AND f.layer = 'permit'
$$;
COMMENT ON FUNCTION ledger.permit_totals(bigint) IS
  'A permit''s totals computed now from the inputs (not from the posted ledger): impact, '
  'required, counted credit (own), proposed and constructed credit, transfers, balance.';

-- A transfer that would not stand is refused when it is recorded (a deferred constraint
-- trigger, so a batch of transfers and permits loaded together is judged at commit), by
-- whoever writes it: ingest, an editor, SQL. The giver is a permit or a District replacement
-- project (the plan area's own replacement, which permittees draw from). Refused too: a
-- transfer dated before others of the same giver that stood without it and would not with
-- it (a back-dated transfer cannot take the credit behind one recorded earlier). Later
-- changes can still take a giver's position away; the transfer then stops counting and the
-- receiver gets the 7(b) transfer_unbacked finding (sql/270).
CREATE OR REPLACE FUNCTION ledger.refuse_transfer_beyond_surplus() RETURNS trigger
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
  g record;
  pos jsonb;
  mine record;
  broken record;
  line text;
BEGIN
  IF NEW.valid_to IS NOT NULL OR NOT EXISTS (
       SELECT 1 FROM core.credit_transfer c
       WHERE c.version_id = NEW.version_id AND c.valid_to IS NULL) THEN
    RETURN NULL;                              -- no longer current at commit: nothing to judge
  END IF;
  PERFORM ledger.owner_lock(NEW.from_permit_id, NEW.from_district_project);
  -- the giver, and the givers its position stands on, measured once; judged on the figures
  -- as published: each measure rounded to 4 decimals (ledger.transfer_fold)
  SELECT coalesce(array_agg(DISTINCT x.permit_id) FILTER (WHERE x.permit_id IS NOT NULL), '{}')
           AS permits,
         coalesce(array_agg(DISTINCT x.district_project)
                  FILTER (WHERE x.district_project IS NOT NULL), '{}') AS projects
  INTO g
  FROM (SELECT * FROM ledger.transfer_givers(
          NEW.plan_area_id, ARRAY[NEW.to_permit_id, NEW.from_permit_id],
          ARRAY[NEW.from_district_project])
        UNION ALL SELECT NEW.from_permit_id, NEW.from_district_project) x;
  SELECT coalesce(jsonb_object_agg(ledger.owner_key(b.permit_id, b.district_project),
                                   ledger.owner_position(b.part_kinds, b.part_dates,
                                                         b.part_acres, b.required_acres,
                                                         b.own_on)), '{}')
  INTO pos
  FROM ledger.owner_base(NEW.plan_area_id, g.permits, g.projects) b;
  line := format('credit transfer of %s acres from %s to permit %s',
                 round(NEW.acres, 4),
                 coalesce('permit ' || (SELECT feature_key FROM core.feature
                                        WHERE feature_id = NEW.from_permit_id),
                          'District project ' || NEW.from_district_project),
                 (SELECT feature_key FROM core.feature WHERE feature_id = NEW.to_permit_id));
  SELECT f.* INTO mine
  FROM ledger.transfer_fold(NEW.plan_area_id, pos, g.permits, g.projects) f
  WHERE f.version_id = NEW.version_id;
  IF FOUND AND NOT mine.stands THEN
    RAISE EXCEPTION '% %', line, mine.why
      USING ERRCODE = 'check_violation',
            HINT = 'The giver''s position on the transfer''s date: counted credit dated by '
                   'then, plus the transfers it received, less its required replacement and '
                   'the transfers it gave before (ledger.transfer_standing).';
  END IF;
  SELECT w.transfer_key, w.acres, w.transferred_on INTO broken
  FROM ledger.transfer_fold(NEW.plan_area_id, pos, g.permits, g.projects,
                            NEW.version_id) w
  JOIN ledger.transfer_fold(NEW.plan_area_id, pos, g.permits, g.projects) n
    ON n.version_id = w.version_id
  WHERE w.stands AND NOT n.stands
  ORDER BY w.transferred_on, w.credit_transfer_id
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION '% would leave credit transfer % of % acres (%) without the surplus '
                    'behind it', line, broken.transfer_key, round(broken.acres, 4),
                    broken.transferred_on
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.refuse_transfer_beyond_surplus() IS
  'Constraint trigger on core.credit_transfer: refuses a transfer that would not stand (giver '
  'or receiver denied, withdrawn or undecided, dated before the giver''s decision, beyond the '
  'giver''s surplus on its date) or that would leave another transfer of the giver without '
  'the surplus behind it.';

DROP TRIGGER IF EXISTS ledger_transfer_within_surplus ON core.credit_transfer;
CREATE CONSTRAINT TRIGGER ledger_transfer_within_surplus
  AFTER INSERT ON core.credit_transfer
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_transfer_beyond_surplus();

REVOKE ALL ON FUNCTION ledger.owner_measures(integer, bigint[], text[]),
  ledger.owner_base(integer, bigint[], text[]),
  ledger.transfer_givers(integer, bigint[], text[]),
  ledger.transfer_fold(integer, jsonb, bigint[], text[], bigint),
  ledger.owner_position(text[], date[], numeric[], numeric, date),
  ledger.transfer_standing(integer, bigint[], text[], bigint),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.owner_measures(integer, bigint[], text[]),
  ledger.owner_base(integer, bigint[], text[]),
  ledger.transfer_givers(integer, bigint[], text[]),
  ledger.transfer_fold(integer, jsonb, bigint[], text[], bigint),
  ledger.owner_position(text[], date[], numeric[], numeric, date),
  ledger.transfer_standing(integer, bigint[], text[], bigint),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() TO rulem_etl;
