-- 130_ledger_permit_totals: what an owner (a permit, or a District project without a permit)
-- owes and earns, straight from the inputs (spec section 4), and the refusal of a credit
-- transfer larger than the giving permit's surplus.
--   required = impact acres x replacement_ratio
--   credit   = replacement credit at counted_credit_status or a later status
--              (+ transfers in − transfers out for the balance)
--   balance  = credit + transfers in − transfers out − required
-- Parameters are those in force on the owner's baseline date, so a parameter change never
-- rewrites a decided permit. Permits denied or withdrawn carry nothing (no impact happens);
-- permits applied or under review are measured as of today, so their pending impact shows.
-- A District project's baseline date is the earliest status date of its features (today when
-- none is recorded).

DROP FUNCTION IF EXISTS ledger.sorted_ids(bigint[]);
DROP FUNCTION IF EXISTS ledger.owner_measure(integer, bigint, text);

DROP FUNCTION IF EXISTS ledger.owner_measures(integer, bigint[], text[]);
CREATE OR REPLACE FUNCTION ledger.owner_measures(p_plan_area_id integer, p_permit_ids bigint[],
                                                 p_district_projects text[] DEFAULT '{}')
RETURNS TABLE (
  permit_id bigint,
  district_project text,
  measured_on date,
  parcel_pins text[],
  partial_drain_factor numeric,
  replacement_ratio numeric,
  counted_credit_status text,
  impact_full_geom geometry,
  impact_partial_geom geometry,
  certified_geom geometry,
  constructed_geom geometry,
  proposed_geom geometry,
  impact_acres numeric,
  required_acres numeric,
  credit_acres numeric,
  credit_proposed_acres numeric,
  credit_constructed_acres numeric,
  transfer_in_acres numeric,
  transfer_out_acres numeric,
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
  -- The owners that carry something, their baseline dates and the parameters in force then
  -- (looked up for all dates in one query), as parallel arrays for the set-based measures.
  WITH own AS (
    SELECT pm.permit_id, NULL::text AS district_project, pm.version_id AS permit_version_id,
           ledger.permit_baseline_on(pm.baseline_on, pm.decided_on) AS measured_on,
           pm.parcel_pins
    FROM core.permit pm
    WHERE pm.permit_id = ANY(p_permit_ids) AND pm.valid_to IS NULL
      AND pm.plan_area_id = p_plan_area_id AND pm.status NOT IN ('denied', 'withdrawn')
    UNION ALL
    SELECT NULL, r.district_project, NULL, coalesce(min(r.status_on), current_date), NULL
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
    FROM unnest(o.permits, o.projects, o.permit_versions, o.dates, o.factors, o.ratios,
                o.counted, o.parameters, o.pins)
         WITH ORDINALITY AS u(permit_id, district_project, permit_version_id, measured_on,
                              factor, ratio, counted, parameters, pins, n)
  ), im AS (
    SELECT * FROM ledger.impact_measures(p_plan_area_id, o.permits, o.dates, o.factors)
  ), cm AS (
    SELECT c.*,
           ledger.acres(c.certified_geom) AS cert_acres,
           ledger.acres(c.constructed_geom) AS cons_acres,
           ledger.acres(c.proposed_geom) AS prop_acres
    FROM ledger.credit_measures(p_plan_area_id, o.permits, o.projects, o.dates,
                                o.ordinals) c
  ), tr AS (
    SELECT x.owner_no, sum(x.a_in) AS t_in, sum(x.a_out) AS t_out,
           array_agg(x.version_id ORDER BY x.version_id) AS versions
    FROM (SELECT own.owner_no, t.acres AS a_in, 0 AS a_out, t.version_id
          FROM own JOIN core.credit_transfer t
            ON t.to_permit_id = own.permit_id AND t.valid_to IS NULL
           AND t.plan_area_id = p_plan_area_id
          UNION ALL
          SELECT own.owner_no, 0, t.acres, t.version_id
          FROM own JOIN core.credit_transfer t
            ON t.from_permit_id = own.permit_id AND t.valid_to IS NULL
           AND t.plan_area_id = p_plan_area_id
          UNION ALL                   -- a District project gives credit to permits
          SELECT own.owner_no, 0, t.acres, t.version_id
          FROM own JOIN core.credit_transfer t
            ON own.permit_id IS NULL AND t.from_district_project = own.district_project
           AND t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id) x
    GROUP BY x.owner_no
  ), m AS (
    SELECT own.*, im.full_geom, im.partial_geom, coalesce(im.impact_acres, 0) AS impact_acres,
           im.impact_versions, im.wetland_versions, im.delineation_versions,
           im.structure_versions,
           cm.certified_geom, cm.constructed_geom, cm.proposed_geom, cm.replacement_versions,
           cm.wetland_versions AS credit_wetland_versions,
           cm.delineation_versions AS credit_delineation_versions,
           cm.buffer_versions, cm.heritage_area_versions, cm.cwmp_area_versions,
           cm.claimed_versions,
           coalesce(cm.cert_acres, 0) AS cert_acres, coalesce(cm.cons_acres, 0) AS cons_acres,
           coalesce(cm.prop_acres, 0) AS prop_acres,
           coalesce(tr.t_in, 0) AS t_in, coalesce(tr.t_out, 0) AS t_out,
           tr.versions AS transfer_versions
    FROM own
    LEFT JOIN im ON im.owner_no = own.owner_no
    LEFT JOIN cm ON cm.owner_no = own.owner_no
    LEFT JOIN tr ON tr.owner_no = own.owner_no
  )
  SELECT m.permit_id, m.district_project, m.measured_on,
         string_to_array(m.pins, ','),
         m.factor, m.ratio, m.counted,
         m.full_geom, m.partial_geom, m.certified_geom, m.constructed_geom, m.proposed_geom,
         m.impact_acres,
         m.impact_acres * m.ratio,
         CASE WHEN ledger.status_rank('certified') >= ledger.status_rank(m.counted)
              THEN m.cert_acres ELSE 0 END
         + CASE WHEN ledger.status_rank('constructed') >= ledger.status_rank(m.counted)
                THEN m.cons_acres ELSE 0 END
         + CASE WHEN ledger.status_rank('proposed') >= ledger.status_rank(m.counted)
                THEN m.prop_acres ELSE 0 END,
         m.prop_acres, m.cons_acres, m.t_in, m.t_out,
         jsonb_strip_nulls(jsonb_build_object(
           'permit', m.permit_version_id,
           'baseline_on', m.measured_on,
           'impact', m.impact_versions,
           'structure', m.structure_versions,
           'replacement', m.replacement_versions,
           'wetland', m.wetland_versions,
           'delineation', m.delineation_versions,
           'replacement_wetland', m.credit_wetland_versions,
           'replacement_delineation', m.credit_delineation_versions,
           'buffer', m.buffer_versions,
           'heritage_area', m.heritage_area_versions,
           'cwmp_area', m.cwmp_area_versions,
           'claimed_replacement', m.claimed_versions,
           'credit_transfer', m.transfer_versions,
           'parameter', m.parameters))
  FROM m;
END $$;
COMMENT ON FUNCTION ledger.owner_measures(integer, bigint[], text[]) IS
  'Everything the ledger derives for some owners (permits; District projects by name) from the '
  'current inputs: baseline date, parameters, impact and credit geometry, acres by measure and '
  'the versions of every input used. An owner with no row carries nothing (a permit denied, '
  'withdrawn or retired; a project with no current feature).';

CREATE OR REPLACE FUNCTION ledger.owner_lock(p_permit_id bigint, p_district_project text)
RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(1279607879,   -- 'LEDG': the ledger's advisory lock class
           CASE WHEN p_permit_id IS NOT NULL THEN (p_permit_id % 2147483647)::integer
                ELSE hashtext(p_district_project) END)
$$;
COMMENT ON FUNCTION ledger.owner_lock(bigint, text) IS
  'Waits for and takes the transaction lock of one ledger owner, so that two recomputes (or a '
  'recompute and a transfer check) of the same permit never interleave.';

DROP FUNCTION IF EXISTS ledger.permit_totals(bigint);
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

-- A transfer larger than the giver's surplus, as published (4 decimals), is refused when it
-- is recorded (a deferred constraint trigger, so a batch of transfers and permits loaded
-- together is judged at commit). The giver is a permit or a District replacement project (the plan area's own
-- replacement, which permittees draw from), with the same check. Later changes can still push
-- the giver into deficit; the ledger then shows that deficit on the giver, as it is
-- (docs/ledger.md).
CREATE OR REPLACE FUNCTION ledger.refuse_transfer_beyond_surplus() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  t record;
  surplus numeric;
  giver text;
BEGIN
  IF NEW.valid_to IS NOT NULL OR NOT EXISTS (
       SELECT 1 FROM core.credit_transfer c
       WHERE c.version_id = NEW.version_id AND c.valid_to IS NULL) THEN
    RETURN NULL;                              -- no longer current at commit: nothing to judge
  END IF;
  PERFORM ledger.owner_lock(NEW.from_permit_id, NEW.from_district_project);
  -- judged on the figures as published: each measure of an owner rounded to 4 decimals
  -- (the ledger allocates the rounding so its lines add up to exactly these, sql/160)
  SELECT round(m.credit_acres, 4) AS credit_acres, round(m.transfer_in_acres, 4)
           AS transfer_in_acres, round(m.transfer_out_acres, 4) AS transfer_out_acres,
         round(m.required_acres, 4) AS required_acres,
         round(m.credit_acres, 4) + round(m.transfer_in_acres, 4)
         - round(m.transfer_out_acres, 4) - round(m.required_acres, 4) AS balance_acres
  INTO t
  FROM ledger.owner_measures(
         NEW.plan_area_id,
         CASE WHEN NEW.from_permit_id IS NULL THEN '{}'::bigint[]
              ELSE ARRAY[NEW.from_permit_id] END,
         CASE WHEN NEW.from_permit_id IS NULL THEN ARRAY[NEW.from_district_project]
              ELSE '{}'::text[] END) m;
  surplus := coalesce(t.balance_acres, -coalesce((
               SELECT sum(c.acres) FROM core.credit_transfer c
               WHERE c.plan_area_id = NEW.plan_area_id AND c.valid_to IS NULL
                 AND (c.from_permit_id = NEW.from_permit_id
                      OR c.from_district_project = NEW.from_district_project)), 0))
             + NEW.acres;
  IF NEW.acres > surplus THEN
    giver := CASE WHEN NEW.from_permit_id IS NOT NULL THEN 'permit' ELSE 'District project'
             END;
    RAISE EXCEPTION 'credit transfer of % acres from % % to permit % exceeds the giving %''s '
                    'surplus of % acres',
      round(NEW.acres, 4), giver,
      coalesce((SELECT feature_key FROM core.feature WHERE feature_id = NEW.from_permit_id),
               NEW.from_district_project),
      (SELECT feature_key FROM core.feature WHERE feature_id = NEW.to_permit_id),
      giver, round(greatest(surplus, 0), 4)
      USING ERRCODE = 'check_violation',
            HINT = format('Giver: counted credit %s, received %s, required %s, other transfers '
                          'out %s acres (ledger.owner_measures).',
                          round(coalesce(t.credit_acres, 0), 4),
                          round(coalesce(t.transfer_in_acres, 0), 4),
                          round(coalesce(t.required_acres, 0), 4),
                          round(coalesce(t.transfer_out_acres, 0) - NEW.acres, 4));
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.refuse_transfer_beyond_surplus() IS
  'Constraint trigger on core.credit_transfer: refuses a transfer larger than the giver''s '
  '(permit''s or District project''s) surplus (counted credit + received - required - other '
  'transfers out).';

DROP TRIGGER IF EXISTS ledger_transfer_within_surplus ON core.credit_transfer;
CREATE CONSTRAINT TRIGGER ledger_transfer_within_surplus
  AFTER INSERT ON core.credit_transfer
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_transfer_beyond_surplus();

REVOKE ALL ON FUNCTION ledger.owner_measures(integer, bigint[], text[]),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.owner_measures(integer, bigint[], text[]),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() TO rulem_etl;
