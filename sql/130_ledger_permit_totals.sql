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

CREATE OR REPLACE FUNCTION ledger.sorted_ids(a bigint[]) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(a) AS x WHERE x IS NOT NULL $$;
COMMENT ON FUNCTION ledger.sorted_ids(bigint[]) IS
  'The distinct non-null ids of an array, sorted (NULL when there are none).';

CREATE OR REPLACE FUNCTION ledger.owner_measure(p_plan_area_id integer, p_permit_id bigint,
                                                p_district_project text DEFAULT NULL)
RETURNS TABLE (
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
LANGUAGE sql STABLE AS $$
  WITH own AS (
    SELECT pm.version_id AS permit_version_id,
           ledger.permit_baseline_on(pm.baseline_on, pm.decided_on) AS measured_on,
           pm.parcel_pins
    FROM core.permit pm
    WHERE p_permit_id IS NOT NULL AND pm.permit_id = p_permit_id AND pm.valid_to IS NULL
      AND pm.plan_area_id = p_plan_area_id AND pm.status NOT IN ('denied', 'withdrawn')
    UNION ALL
    SELECT NULL, coalesce(min(r.status_on), current_date), NULL
    FROM core.replacement r
    WHERE p_permit_id IS NULL AND r.permit_id IS NULL AND r.district_project = p_district_project
      AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    HAVING count(*) > 0
  ), m AS (
    SELECT own.*, prm.*, im.*,
           cr.certified_geom, cr.constructed_geom, cr.proposed_geom, cr.replacement_versions,
           cr.wetland_versions AS credit_wetland_versions,
           cr.delineation_versions AS credit_delineation_versions,
           cr.buffer_versions, cr.heritage_area_versions, cr.cwmp_area_versions,
           ledger.acres(cr.certified_geom) AS cert_acres,
           ledger.acres(cr.constructed_geom) AS cons_acres,
           ledger.acres(cr.proposed_geom) AS prop_acres
    FROM own
    CROSS JOIN LATERAL ledger.parameters(p_plan_area_id, own.measured_on) prm
    CROSS JOIN LATERAL ledger.impact_measure(p_plan_area_id, p_permit_id, own.measured_on,
                                             prm.partial_drain_factor) im
    CROSS JOIN LATERAL ledger.credit_measure(p_plan_area_id, p_permit_id, p_district_project,
                                             own.measured_on, prm.heritage_threshold_ordinal) cr
  ), tr AS (
    SELECT coalesce(sum(t.acres) FILTER (WHERE t.to_permit_id = p_permit_id), 0) AS t_in,
           coalesce(sum(t.acres) FILTER (WHERE t.from_permit_id = p_permit_id), 0) AS t_out,
           array_agg(t.version_id ORDER BY t.version_id) AS versions
    FROM core.credit_transfer t
    WHERE p_permit_id IS NOT NULL AND t.valid_to IS NULL AND t.plan_area_id = p_plan_area_id
      AND (t.to_permit_id = p_permit_id OR t.from_permit_id = p_permit_id)
  )
  SELECT m.measured_on, m.parcel_pins, m.partial_drain_factor, m.replacement_ratio,
         m.counted_credit_status,
         m.full_geom, m.partial_geom, m.certified_geom, m.constructed_geom, m.proposed_geom,
         m.impact_acres,
         m.impact_acres * m.replacement_ratio,
         CASE WHEN ledger.status_rank('certified') >= ledger.status_rank(m.counted_credit_status)
              THEN m.cert_acres ELSE 0 END
         + CASE WHEN ledger.status_rank('constructed') >= ledger.status_rank(m.counted_credit_status)
                THEN m.cons_acres ELSE 0 END
         + CASE WHEN ledger.status_rank('proposed') >= ledger.status_rank(m.counted_credit_status)
                THEN m.prop_acres ELSE 0 END,
         m.prop_acres, m.cons_acres, tr.t_in, tr.t_out,
         jsonb_strip_nulls(jsonb_build_object(
           'permit', m.permit_version_id,
           'baseline_on', m.measured_on,
           'impact', m.impact_versions,
           'replacement', m.replacement_versions,
           'wetland', ledger.sorted_ids(m.wetland_versions || m.credit_wetland_versions),
           'delineation', ledger.sorted_ids(m.delineation_versions || m.credit_delineation_versions),
           'buffer', m.buffer_versions,
           'heritage_area', m.heritage_area_versions,
           'cwmp_area', m.cwmp_area_versions,
           'credit_transfer', tr.versions,
           'parameter', m.parameter_ids))
  FROM m, tr
$$;
COMMENT ON FUNCTION ledger.owner_measure(integer, bigint, text) IS
  'Everything the ledger derives for one owner (a permit, or with p_permit_id NULL a District '
  'project) from the current inputs: baseline date, parameters, impact and credit geometry, '
  'acres by measure and the versions of every input used. No row: the owner carries nothing.';

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
  CROSS JOIN LATERAL ledger.owner_measure(f.plan_area_id, f.feature_id, NULL) m
  WHERE f.feature_id = p_permit_id AND f.layer = 'permit'
$$;
COMMENT ON FUNCTION ledger.permit_totals(bigint) IS
  'A permit''s totals computed now from the inputs (not from the posted ledger): impact, '
  'required, counted credit (own), proposed and constructed credit, transfers, balance.';

-- A transfer larger than the giving permit's surplus is refused when it is recorded (a
-- deferred constraint trigger, so a batch of transfers and permits loaded together is judged
-- at commit). Later changes can still push the giver into deficit; the ledger then shows that
-- deficit on the giver, as it is (docs/ledger.md).
CREATE OR REPLACE FUNCTION ledger.refuse_transfer_beyond_surplus() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  t record;
  surplus numeric;
BEGIN
  IF NEW.valid_to IS NOT NULL OR NOT EXISTS (
       SELECT 1 FROM core.credit_transfer c
       WHERE c.version_id = NEW.version_id AND c.valid_to IS NULL) THEN
    RETURN NULL;                              -- no longer current at commit: nothing to judge
  END IF;
  PERFORM ledger.owner_lock(NEW.from_permit_id, NULL);
  SELECT * INTO t FROM ledger.permit_totals(NEW.from_permit_id);
  surplus := coalesce(t.balance_acres, -coalesce((
               SELECT sum(c.acres) FROM core.credit_transfer c
               WHERE c.from_permit_id = NEW.from_permit_id AND c.valid_to IS NULL), 0))
             + NEW.acres;
  IF NEW.acres > surplus + 0.00005 THEN       -- half the reporting unit (4 decimals)
    RAISE EXCEPTION 'credit transfer of % acres from permit % to permit % exceeds the giving '
                    'permit''s surplus of % acres',
      round(NEW.acres, 4),
      (SELECT feature_key FROM core.feature WHERE feature_id = NEW.from_permit_id),
      (SELECT feature_key FROM core.feature WHERE feature_id = NEW.to_permit_id),
      round(greatest(surplus, 0), 4)
      USING ERRCODE = 'check_violation',
            HINT = format('Giver: counted credit %s, received %s, required %s, other transfers '
                          'out %s acres (ledger.permit_totals(%s)).',
                          round(coalesce(t.credit_acres, 0), 4),
                          round(coalesce(t.transfer_in_acres, 0), 4),
                          round(coalesce(t.required_acres, 0), 4),
                          round(coalesce(t.transfer_out_acres, 0) - NEW.acres, 4),
                          NEW.from_permit_id);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.refuse_transfer_beyond_surplus() IS
  'Constraint trigger on core.credit_transfer: refuses a transfer larger than the giving '
  'permit''s surplus (counted credit + received − required − other transfers out).';

DROP TRIGGER IF EXISTS ledger_transfer_within_surplus ON core.credit_transfer;
CREATE CONSTRAINT TRIGGER ledger_transfer_within_surplus
  AFTER INSERT ON core.credit_transfer
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_transfer_beyond_surplus();

REVOKE ALL ON FUNCTION ledger.sorted_ids(bigint[]), ledger.owner_measure(integer, bigint, text),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.sorted_ids(bigint[]), ledger.owner_measure(integer, bigint, text),
  ledger.owner_lock(bigint, text), ledger.permit_totals(bigint),
  ledger.refuse_transfer_beyond_surplus() TO rulem_etl;
