-- 150_ledger_desired_state: what the inputs imply now, line by line. A line is (owner, parcel,
-- measure) with its acres and the input versions behind it; posting (sql/160) compares these
-- lines with the posted ones. An owner is a permit or a District project (replacement with no
-- permit). Measures: impact, required, credit, transfer_in, transfer_out, credit_proposed,
-- credit_constructed (allocated as sql/140 says) and credit_hosted (the counted credit
-- generated on each parcel, where it lies, whoever it is allocated to).
-- Each line carries the date its fact took effect (docs/ledger.md section 4a): impact and
-- required the permit's decision date (else its recorded baseline date; NULL, floating, while
-- undecided with none); credit and credit_hosted the latest status_on among the owner's
-- current wetland replacements at a counted status; credit_constructed and credit_proposed
-- the latest status_on at that status; transfers the latest transferred_on of the owner's
-- transfers in (out); each falls back to the owner's own date when no date is on record.
-- One date per owner and measure: all its parcel lines share it.

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
  ), piece AS (               -- the ground each owner's figures come from, by kind; credit
    SELECT m.okey, k.kind, k.geom  -- not counted matters only to an owner with no impact
    FROM m CROSS JOIN LATERAL (VALUES
      ('impact_full', m.impact_full_geom), ('impact_partial', m.impact_partial_geom),
      ('certified', m.certified_geom), ('constructed', m.constructed_geom),
      ('proposed', m.proposed_geom)) AS k(kind, geom)
    WHERE k.geom IS NOT NULL
      AND (k.kind LIKE 'impact%' OR m.impact_acres = 0
           OR ledger.status_rank(k.kind) >= ledger.status_rank(m.counted_credit_status))
  ), on_parcel AS MATERIALIZED (
    -- The acres of each piece inside each current parcel its box meets (sql/140), as one
    -- join: a LATERAL function per piece restarted a subquery 4,000 times a county (about
    -- 6 % of the whole); OFFSET 0 keeps the overlay once per pair, not again in the filter;
    -- parcels it only touches (0 acres) are left out.
    SELECT x.okey, x.kind, x.parcel_id, x.parcel_version_id, x.acres
    FROM (SELECT piece.okey, piece.kind, p.parcel_id, p.version_id AS parcel_version_id,
                 ledger.parcel_acres(p.geom, piece.geom) AS acres
          FROM piece JOIN core.parcel p
            ON p.geom && piece.geom AND p.valid_to IS NULL AND p.plan_area_id = p_plan_area_id
          OFFSET 0) x
    WHERE x.acres > 0
  ), basis AS (               -- candidate allocation bases: weight per owner and parcel
    SELECT o.okey, b.basis, o.parcel_id, max(o.parcel_version_id) AS parcel_version_id,
           sum(b.weight) AS weight
    FROM on_parcel o
    JOIN m ON m.okey = o.okey
    CROSS JOIN LATERAL (VALUES
      ('impact', CASE o.kind WHEN 'impact_full' THEN o.acres
                             WHEN 'impact_partial' THEN o.acres * m.partial_drain_factor END),
      ('counted', CASE WHEN o.kind IN ('certified', 'constructed', 'proposed')
                        AND ledger.status_rank(o.kind)
                            >= ledger.status_rank(m.counted_credit_status) THEN o.acres END),
      ('constructed', CASE WHEN o.kind = 'constructed' THEN o.acres END),
      ('proposed', CASE WHEN o.kind = 'proposed' THEN o.acres END),
      ('any', CASE WHEN o.kind IN ('certified', 'constructed', 'proposed') THEN o.acres END)
    ) AS b(basis, weight)
    WHERE b.weight > 0
    GROUP BY o.okey, b.basis, o.parcel_id
    UNION ALL
    SELECT DISTINCT m.okey, 'pins', p.parcel_id, p.version_id, 1::numeric
    FROM m
    CROSS JOIN LATERAL unnest(m.parcel_pins) AS pin(pin_normalized)
    JOIN core.feature f
      ON f.layer = 'parcel' AND f.plan_area_id = p_plan_area_id
     AND f.feature_key = pin.pin_normalized
    JOIN core.parcel p ON p.parcel_id = f.feature_id AND p.valid_to IS NULL
  ), total AS (               -- each owner's total per measure
    SELECT m.okey, t.measure, t.acres, m.impact_acres > 0 AS has_impact
    FROM m CROSS JOIN LATERAL (VALUES
      ('impact', m.impact_acres), ('required', m.required_acres), ('credit', m.credit_acres),
      ('transfer_in', m.transfer_in_acres), ('transfer_out', m.transfer_out_acres),
      ('credit_proposed', m.credit_proposed_acres),
      ('credit_constructed', m.credit_constructed_acres)) AS t(measure, acres)
    WHERE t.acres <> 0
  ), chain (measure, with_impact, priority, basis) AS (
    VALUES ('impact', true, 1, 'impact'), ('impact', true, 2, 'pins'),
           ('required', true, 1, 'impact'), ('required', true, 2, 'pins')
    UNION ALL
    SELECT c.measure, w.with_impact, w.priority, w.basis
    FROM (VALUES ('credit', 'counted'), ('transfer_in', 'counted'), ('transfer_out', 'counted'),
                 ('credit_proposed', 'proposed'), ('credit_constructed', 'constructed'))
         AS c(measure, own_basis)
    CROSS JOIN LATERAL (VALUES (true, 1, 'impact'), (true, 2, 'pins'),
                               (false, 1, c.own_basis), (false, 2, 'any'), (false, 3, 'pins'))
         AS w(with_impact, priority, basis)
  ), chosen AS (              -- per owner and measure, the first basis that has weight
    SELECT DISTINCT ON (t.okey, t.measure) t.okey, t.measure, t.acres, c.basis,
           bs.okey IS NOT NULL AS has_basis
    FROM total t
    JOIN chain c ON c.measure = t.measure AND c.with_impact = t.has_impact
    LEFT JOIN (SELECT DISTINCT b.okey, b.basis FROM basis b) bs
      ON bs.okey = t.okey AND bs.basis = c.basis
    ORDER BY t.okey, t.measure, bs.okey IS NULL, c.priority
  ), shares AS (              -- the total in proportion to the weights, 12 decimals
    SELECT c.okey, c.measure, c.acres AS total, b.parcel_id, b.parcel_version_id,
           round(c.acres * b.weight / sum(b.weight) OVER w, 12) AS part,
           row_number() OVER (PARTITION BY c.okey, c.measure
                              ORDER BY b.weight DESC, b.parcel_id) AS rk
    FROM chosen c
    JOIN basis b ON b.okey = c.okey AND b.basis = c.basis
    WINDOW w AS (PARTITION BY c.okey, c.measure)
  ), allocated AS (           -- the largest share takes the rounding remainder: exact sums
    SELECT s.okey, s.measure, s.parcel_id, s.parcel_version_id,
           CASE WHEN s.rk = 1
                THEN s.total - (sum(s.part) OVER (PARTITION BY s.okey, s.measure) - s.part)
                ELSE s.part END AS acres
    FROM shares s
    UNION ALL                 -- no basis lies on a parcel: the whole total on no parcel
    SELECT c.okey, c.measure, NULL, NULL, c.acres FROM chosen c WHERE NOT c.has_basis
    UNION ALL
    SELECT b.okey, 'credit_hosted', b.parcel_id, b.parcel_version_id, b.weight
    FROM basis b WHERE b.basis = 'counted'
  ), dated AS (              -- the date each measure's fact took effect (docs/ledger.md 4a)
    SELECT m.okey,
           -- the owner's own date: a permit's decision date (else its recorded baseline
           -- date); a District project's earliest status date. NULL: none on record (an
           -- undecided permit measured as of today): posting keeps the date of the line's
           -- open entry, else today (sql/160).
           CASE WHEN m.permit_id IS NOT NULL
                THEN (SELECT coalesce(pm.decided_on, pm.baseline_on) FROM core.permit pm
                      WHERE pm.permit_id = m.permit_id AND pm.valid_to IS NULL)
                ELSE r.first_on END AS own_on,
           r.counted_on, r.constructed_on, r.proposed_on, t.in_on, t.out_on
    FROM m
    CROSS JOIN LATERAL (      -- the owner's current replacements, one scan
      SELECT min(x.status_on) AS first_on,
             -- the latest status date among its wetland replacements at a status that makes
             -- the measure: counted (credit, credit_hosted), constructed, proposed
             max(x.status_on) FILTER (WHERE x.component = 'wetland'
                                        AND ledger.status_rank(x.status)
                                            >= ledger.status_rank(m.counted_credit_status))
               AS counted_on,
             max(x.status_on) FILTER (WHERE x.component = 'wetland'
                                        AND x.status = 'constructed') AS constructed_on,
             max(x.status_on) FILTER (WHERE x.component = 'wetland'
                                        AND x.status = 'proposed') AS proposed_on
      FROM (SELECT y.status_on, y.status, y.component FROM core.replacement y
            WHERE y.permit_id = m.permit_id AND y.valid_to IS NULL   -- by the permit index
            UNION ALL
            SELECT y.status_on, y.status, y.component FROM core.replacement y
            WHERE m.permit_id IS NULL AND y.permit_id IS NULL AND y.valid_to IS NULL
              AND y.plan_area_id = p_plan_area_id
              AND y.district_project = m.district_project) x) r
    CROSS JOIN LATERAL (      -- its current transfers in and out
      SELECT max(x.transferred_on) FILTER (WHERE x.side = 'in') AS in_on,
             max(x.transferred_on) FILTER (WHERE x.side = 'out') AS out_on
      FROM (SELECT 'in' AS side, y.transferred_on FROM core.credit_transfer y
            WHERE y.to_permit_id = m.permit_id AND y.valid_to IS NULL
            UNION ALL
            SELECT 'out', y.transferred_on FROM core.credit_transfer y
            WHERE y.from_permit_id = m.permit_id AND y.valid_to IS NULL
            UNION ALL
            SELECT 'out', y.transferred_on FROM core.credit_transfer y
            WHERE m.permit_id IS NULL AND y.valid_to IS NULL
              AND y.plan_area_id = p_plan_area_id
              AND y.from_district_project = m.district_project) x) t
  )
  SELECT m.permit_id, m.district_project, a.parcel_id, a.measure, a.acres,
         m.inputs || jsonb_build_object('parcel', a.parcel_version_id),
         CASE a.measure
           WHEN 'credit' THEN coalesce(d.counted_on, d.own_on)
           WHEN 'credit_hosted' THEN coalesce(d.counted_on, d.own_on)
           WHEN 'credit_constructed' THEN coalesce(d.constructed_on, d.own_on)
           WHEN 'credit_proposed' THEN coalesce(d.proposed_on, d.own_on)
           WHEN 'transfer_in' THEN coalesce(d.in_on, d.own_on)
           WHEN 'transfer_out' THEN coalesce(d.out_on, d.own_on)
           ELSE d.own_on END              -- impact, required
  FROM allocated a JOIN m ON m.okey = a.okey JOIN dated d ON d.okey = a.okey
  WHERE a.acres <> 0;
END
$$;
COMMENT ON FUNCTION ledger.desired_state(integer, bigint[], text[]) IS
  'The ledger lines the current inputs imply for some owners (permits; District projects by '
  'name): (owner, parcel, measure, acres, input versions, effective date: NULL when the owner '
  'has no date on record, an undecided permit). Posting compares them with what is posted.';

REVOKE ALL ON FUNCTION ledger.desired_state(integer, bigint[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.desired_state(integer, bigint[], text[]) TO rulem_etl;
