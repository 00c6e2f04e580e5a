-- 150_ledger_desired_state: what the inputs imply now, line by line. A line is (owner, parcel,
-- measure, effective date) with its acres and the input versions behind it; posting (sql/160)
-- compares these lines with the posted ones. An owner is a permit or a District project
-- (replacement with no permit). Measures: impact, required, credit, transfer_in, transfer_out,
-- credit_proposed, credit_constructed (allocated as sql/140 says) and credit_hosted (the
-- counted credit generated on each parcel, where it lies, whoever it is allocated to).
-- Each line carries the date its fact took effect (docs/ledger.md section 4a): impact and
-- required the permit's decision date (else its recorded baseline date; NULL, floating, while
-- undecided with none); credit, credit_hosted and the memo credit measures the date of each
-- dated part of the owner's credit (sql/120: the date each feature reached its status, and
-- the approval of a delineation that measures a built basin again), so an owner has one line
-- per parcel, measure and date; transfers the date of each transfer that stands (sql/130).
-- A part can be negative (credit a later delineation takes away from its date on).

DROP FUNCTION IF EXISTS ledger.desired_state(integer, bigint[], text[]);
CREATE OR REPLACE FUNCTION ledger.desired_state(p_plan_area_id integer, p_permit_ids bigint[],
                                                p_district_projects text[] DEFAULT '{}')
RETURNS TABLE (
  permit_id bigint,
  district_project text,
  parcel_id bigint,
  measure text,
  acres numeric,
  inputs jsonb,
  effective_on date
)
LANGUAGE plpgsql STABLE
SET jit = off   -- hundreds of small geometry queries: compiling them costs seconds, saves none
SET plan_cache_mode = force_generic_plan  -- planned once per session, not once per chunk
SET work_mem = '64MB'  -- the chunk's geometries sorted and hashed in memory, not on disk
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH m AS MATERIALIZED (
    SELECT row_number() OVER () AS okey, om.*
    FROM ledger.owner_measures(p_plan_area_id, p_permit_ids, p_district_projects) om
  ), piece AS (               -- the ground each owner's figures come from, by kind and date;
    SELECT m.okey, k.kind, k.on_date, k.sign, k.geom  -- memo credit matters only to an
    FROM m CROSS JOIN LATERAL (                        -- owner with no impact
      SELECT 'impact_full' AS kind, m.own_on AS on_date, 1 AS sign, m.impact_full_geom AS geom
      UNION ALL
      SELECT 'impact_partial', m.own_on, 1, m.impact_partial_geom
      UNION ALL
      SELECT 'impact_remainder', m.own_on, 1, m.impact_remainder_geom
      UNION ALL
      SELECT x.k, x.d, x.s, x.g
      FROM unnest(m.part_kinds, m.part_dates, m.part_signs, m.part_geoms) AS x(k, d, s, g)
    ) k
    WHERE k.geom IS NOT NULL
      AND (k.kind LIKE 'impact%' OR m.impact_acres = 0 OR k.kind = 'counted')
  ), on_parcel AS MATERIALIZED (
    -- The acres of each piece inside each current parcel its box meets (sql/140), as one
    -- join: a LATERAL function per piece restarted a subquery 4,000 times a county (about
    -- 6 % of the whole); OFFSET 0 keeps the overlay once per pair, not again in the filter;
    -- parcels it only touches (0 acres) are left out. Signed: a part that takes ground away
    -- counts negative.
    SELECT x.okey, x.kind, x.on_date, x.parcel_id, x.parcel_version_id, x.sign * x.acres AS acres
    FROM (SELECT piece.okey, piece.kind, piece.on_date, piece.sign, p.parcel_id,
                 p.version_id AS parcel_version_id,
                 ledger.parcel_acres(p.geom, piece.geom) AS acres
          FROM piece JOIN core.parcel p
            ON p.geom && piece.geom AND p.valid_to IS NULL AND p.plan_area_id = p_plan_area_id
          OFFSET 0) x
    WHERE x.acres > 0
  ), basis AS (               -- candidate allocation bases: weight per owner, date and parcel
    SELECT o.okey, b.basis, b.bdate, o.parcel_id, max(o.parcel_version_id) AS parcel_version_id,
           sum(b.weight) AS weight
    FROM on_parcel o
    JOIN m ON m.okey = o.okey
    CROSS JOIN LATERAL (VALUES
      ('impact', NULL::date,
       CASE o.kind WHEN 'impact_full' THEN o.acres
                   WHEN 'impact_partial' THEN o.acres * m.partial_drain_factor
                   WHEN 'impact_remainder' THEN o.acres * (1 - m.partial_drain_factor) END),
      ('counted', o.on_date, CASE WHEN o.kind = 'counted' THEN o.acres END),
      ('counted_all', NULL, CASE WHEN o.kind = 'counted' THEN o.acres END),
      ('constructed', o.on_date, CASE WHEN o.kind = 'constructed' THEN o.acres END),
      ('proposed', o.on_date, CASE WHEN o.kind = 'proposed' THEN o.acres END),
      ('any', NULL, CASE WHEN o.kind IN ('counted', 'constructed', 'proposed') THEN o.acres END)
    ) AS b(basis, bdate, weight)
    WHERE b.weight IS NOT NULL
    GROUP BY o.okey, b.basis, b.bdate, o.parcel_id
    HAVING sum(b.weight) <> 0
    UNION ALL
    SELECT DISTINCT m.okey, 'pins', NULL::date, p.parcel_id, p.version_id, 1::numeric
    FROM m
    CROSS JOIN LATERAL unnest(m.parcel_pins) AS pin(pin_normalized)
    JOIN core.feature f
      ON f.layer = 'parcel' AND f.plan_area_id = p_plan_area_id
     AND f.feature_key = pin.pin_normalized
    JOIN core.parcel p ON p.parcel_id = f.feature_id AND p.valid_to IS NULL
  ), usable AS (              -- bases whose weights do not add up to nothing
    SELECT b.okey, b.basis, b.bdate FROM basis b
    GROUP BY b.okey, b.basis, b.bdate HAVING sum(b.weight) <> 0
  ), total AS (               -- each owner's total per measure and date
    SELECT m.okey, t.measure, t.on_date, sum(t.acres) AS acres,
           bool_or(m.impact_acres > 0) AS has_impact
    FROM m CROSS JOIN LATERAL (
      SELECT 'impact' AS measure, m.own_on AS on_date, m.impact_acres AS acres
      UNION ALL
      SELECT 'required', m.own_on, m.required_acres
      UNION ALL
      SELECT CASE x.k WHEN 'counted' THEN 'credit' WHEN 'constructed' THEN 'credit_constructed'
                      ELSE 'credit_proposed' END, x.d, x.a
      FROM unnest(m.part_kinds, m.part_dates, m.part_acres) AS x(k, d, a)
      UNION ALL
      SELECT CASE x.s WHEN 'in' THEN 'transfer_in' ELSE 'transfer_out' END, x.d, x.a
      FROM unnest(m.transfer_sides, m.transfer_dates, m.transfer_amounts) AS x(s, d, a)
    ) t
    GROUP BY m.okey, t.measure, t.on_date
    HAVING sum(t.acres) <> 0
  ), chain (measure, with_impact, priority, basis, dated) AS (
    VALUES ('impact', true, 1, 'impact', false), ('impact', true, 2, 'pins', false),
           ('required', true, 1, 'impact', false), ('required', true, 2, 'pins', false)
    UNION ALL
    SELECT c.measure, w.with_impact, w.priority, w.basis, w.dated
    FROM (VALUES ('credit', 'counted'), ('transfer_in', 'counted_all'),
                 ('transfer_out', 'counted_all'), ('credit_proposed', 'proposed'),
                 ('credit_constructed', 'constructed'))
         AS c(measure, own_basis)
    CROSS JOIN LATERAL (VALUES (true, 1, 'impact', false), (true, 2, 'pins', false),
                               (false, 1, c.own_basis, c.own_basis <> 'counted_all'),
                               (false, 2, 'any', false), (false, 3, 'pins', false))
         AS w(with_impact, priority, basis, dated)
  ), chosen AS (              -- per owner, measure and date, the first basis that has weight
    SELECT DISTINCT ON (t.okey, t.measure, t.on_date) t.okey, t.measure, t.on_date, t.acres,
           c.basis, c.dated, u.okey IS NOT NULL AS has_basis
    FROM total t
    JOIN chain c ON c.measure = t.measure AND c.with_impact = t.has_impact
    LEFT JOIN usable u
      ON u.okey = t.okey AND u.basis = c.basis
     AND u.bdate IS NOT DISTINCT FROM CASE WHEN c.dated THEN t.on_date END
    ORDER BY t.okey, t.measure, t.on_date, u.okey IS NULL, c.priority
  ), shares AS (              -- the total in proportion to the weights, 12 decimals
    SELECT c.okey, c.measure, c.on_date, c.acres AS total, b.parcel_id, b.parcel_version_id,
           round(c.acres * b.weight / sum(b.weight) OVER w, 12) AS part,
           row_number() OVER (PARTITION BY c.okey, c.measure, c.on_date
                              ORDER BY b.weight DESC, b.parcel_id) AS rk
    FROM chosen c
    JOIN basis b
      ON b.okey = c.okey AND b.basis = c.basis
     AND b.bdate IS NOT DISTINCT FROM CASE WHEN c.dated THEN c.on_date END
    WHERE c.has_basis
    WINDOW w AS (PARTITION BY c.okey, c.measure, c.on_date)
  ), allocated AS (           -- the largest share takes the rounding remainder: exact sums
    SELECT s.okey, s.measure, s.on_date, s.parcel_id, s.parcel_version_id,
           CASE WHEN s.rk = 1
                THEN s.total - (sum(s.part) OVER (PARTITION BY s.okey, s.measure, s.on_date)
                                - s.part)
                ELSE s.part END AS acres
    FROM shares s
    UNION ALL                 -- no basis lies on a parcel: the whole total on no parcel
    SELECT c.okey, c.measure, c.on_date, NULL, NULL, c.acres FROM chosen c WHERE NOT c.has_basis
    UNION ALL                 -- counted credit where it lies, by date
    SELECT o.okey, 'credit_hosted', o.on_date, o.parcel_id, max(o.parcel_version_id),
           sum(o.acres)
    FROM on_parcel o WHERE o.kind = 'counted'
    GROUP BY o.okey, o.on_date, o.parcel_id
  )
  SELECT m.permit_id, m.district_project, a.parcel_id, a.measure, a.acres,
         m.inputs || jsonb_build_object('parcel', a.parcel_version_id), a.on_date
  FROM allocated a JOIN m ON m.okey = a.okey
  WHERE a.acres <> 0;
END
$$;
COMMENT ON FUNCTION ledger.desired_state(integer, bigint[], text[]) IS
  'The ledger lines the current inputs imply for some owners (permits; District projects by '
  'name): (owner, parcel, measure, acres, input versions, effective date: NULL when the owner '
  'has no date on record, an undecided permit); an owner has a line per parcel, measure and '
  'effective date. Posting compares them with what is posted.';

REVOKE ALL ON FUNCTION ledger.desired_state(integer, bigint[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.desired_state(integer, bigint[], text[]) TO rulem_etl;
