-- 120_ledger_credit: the replacement credit owners (permits, or District projects with no
-- permit) earn (spec section 4, Rule M 7(b), 7(c)(ii), (iv), (v)).
-- Credit = area(union of the owner's wetland-component replacement features
--               − baseline wetland (the wetland layer as of the baseline date)
--               − declared buffers (any permit's; 7(c)(v))
--               − heritage upland ranked heritage_threshold or better (7(c)(ii))
--               − the owner's upland-component features (7(c)(iv): upland inside the area
--                 earns nothing)
--               − anything outside the plan area (core.cwmp_area; no boundary loaded: no clip)
--               − ground an older claim holds: another owner's wetland-component replacement
--                 whose claim is older (7(b): "one acre of replacement wetland for each acre
--                 of wetland impact": an acre of replacement answers for one impact, so
--                 ground already claimed by one owner is no credit for another)).
-- The claim order (ledger.claim_key): the permit's decision date (a District project's
-- earliest status date), then entry order (the permit's registration; the project's first
-- replacement feature); undecided claims come after every decided one. Denied and withdrawn
-- permits claim nothing. The overlap is reported by the checks (sql/270, 7(b) credit_overlap):
-- an error where the older ground is at a counted status, a warning where it is pending.
-- By status: ground covered by features of several statuses counts once, at the most advanced
-- status covering it (certified, then constructed, then proposed), so the three parts are
-- disjoint and add up to the credit of all statuses.
-- Set-based like sql/110: parallel arrays, one element per owner (a permit id, or NULL and a
-- project name), owner_no = position.

DROP FUNCTION IF EXISTS ledger.credit_measure(integer, bigint, text, date, integer);

-- The order of an owner's claim on replacement ground: decision date, then entry order
-- (no row: the owner claims nothing, a denied or withdrawn permit, or nobody).
CREATE OR REPLACE FUNCTION ledger.claim_key(p_plan_area_id integer, p_permit_id bigint,
                                            p_district_project text)
RETURNS TABLE (claim_on date, entry bigint)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(pm.decided_on, 'infinity'::date), pm.permit_id
  FROM core.permit pm
  WHERE p_permit_id IS NOT NULL AND pm.permit_id = p_permit_id AND pm.valid_to IS NULL
    AND pm.status NOT IN ('denied', 'withdrawn')
  UNION ALL
  SELECT coalesce(min(r.status_on), 'infinity'::date), min(r.replacement_id)
  FROM core.replacement r
  WHERE p_permit_id IS NULL AND r.permit_id IS NULL AND r.district_project = p_district_project
    AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
  HAVING count(*) > 0
$$;
COMMENT ON FUNCTION ledger.claim_key(integer, bigint, text) IS
  'Order of an owner''s claim on replacement ground (7(b)): decision date (a District '
  'project''s earliest status date; undecided: last), then entry order. No row: no claim.';

DROP FUNCTION IF EXISTS ledger.credit_measures(integer, bigint[], text[], date[], integer[]);
CREATE OR REPLACE FUNCTION ledger.credit_measures(p_plan_area_id integer,
                                                  p_permit_ids bigint[],
                                                  p_district_projects text[], p_on date[],
                                                  p_heritage_threshold_ordinal integer[])
RETURNS TABLE (
  owner_no integer,
  certified_geom geometry,
  constructed_geom geometry,
  proposed_geom geometry,
  replacement_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  buffer_versions bigint[],
  heritage_area_versions bigint[],
  cwmp_area_versions bigint[],
  claimed_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH o AS (
    SELECT u.n::integer AS owner_no, u.permit_id, u.project, u.on_date, u.ordinal
    FROM unnest(p_permit_ids, p_district_projects, p_on, p_heritage_threshold_ordinal)
         WITH ORDINALITY AS u(permit_id, project, on_date, ordinal, n)
  ), rep AS (
    SELECT o.owner_no, r.version_id, r.component, r.status, r.geom
    FROM o JOIN core.replacement r
      ON r.permit_id = o.permit_id AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT o.owner_no, r.version_id, r.component, r.status, r.geom
    FROM o JOIN core.replacement r
      ON o.permit_id IS NULL AND r.permit_id IS NULL AND r.district_project = o.project
     AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
  ), u AS (
    SELECT rep.owner_no,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'wetland' AND rep.status = 'certified')) AS cert,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'wetland' AND rep.status = 'constructed')) AS cons,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'wetland' AND rep.status = 'proposed')) AS prop,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'wetland')) AS wet_any,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'upland')) AS upland,
      array_agg(rep.version_id ORDER BY rep.version_id) AS versions,
      ST_Envelope(ST_Collect(rep.geom) FILTER (WHERE rep.component = 'wetland')) AS box
    FROM rep
    GROUP BY rep.owner_no
  ), uo AS (
    SELECT u.*, o.on_date, o.ordinal, o.permit_id, o.project, k.claim_on, k.entry
    FROM u JOIN o ON o.owner_no = u.owner_no
    LEFT JOIN LATERAL ledger.claim_key(p_plan_area_id, o.permit_id, o.project) k ON true
  ), cut AS (                  -- replacement area ∩ each baseline wetland piece it meets
    SELECT uo.owner_no, b.wetland_piece_id, b.version_id, b.delineation_version_id,
           ledger.meet(uo.wet_any, b.geom) AS part
    FROM (SELECT array_agg(uo.owner_no ORDER BY uo.owner_no) AS nos,
                 array_agg(uo.on_date ORDER BY uo.owner_no) AS dates,
                 array_agg(uo.box ORDER BY uo.owner_no) AS boxes FROM uo) a
    CROSS JOIN LATERAL ledger.baseline_pieces(p_plan_area_id, a.nos, a.dates, a.boxes) b
    JOIN uo ON uo.owner_no = b.owner_no
    OFFSET 0                   -- once per piece: the filter and the aggregate both use it
  ), wet AS (                  -- baseline wetland inside the replacement area, from pieces
    SELECT cut.owner_no,
           array_agg(cut.part ORDER BY cut.wetland_piece_id) AS parts,
           array_agg(DISTINCT cut.version_id) AS versions,
           array_agg(DISTINCT cut.delineation_version_id) AS dversions
    FROM cut
    WHERE NOT ST_IsEmpty(cut.part)
    GROUP BY cut.owner_no
  ), buf AS (                  -- declared buffers inside it
    SELECT uo.owner_no, ledger.union_all(array_agg(b.geom ORDER BY b.version_id)) AS geom,
           array_agg(b.version_id ORDER BY b.version_id) AS versions
    FROM uo JOIN core.buffer b
      ON b.geom && uo.box AND ST_Intersects(b.geom, uo.wet_any)
     AND b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id
    GROUP BY uo.owner_no
  ), her AS (                  -- heritage upland at or above the threshold inside it
    SELECT uo.owner_no,
           ledger.union_all(array_agg(ledger.meet(uo.wet_any, h.geom)
                                      ORDER BY h.version_id)) AS geom,
           array_agg(h.version_id ORDER BY h.version_id) AS versions
    FROM uo JOIN core.heritage_area h
      ON h.geom && uo.box AND ST_Intersects(h.geom, uo.wet_any)
     AND h.valid_to IS NULL AND h.plan_area_id = p_plan_area_id
     AND h.community_kind = 'upland'
    JOIN core.heritage_rank hr ON hr.rank = h.rank AND hr.ordinal <= uo.ordinal
    GROUP BY uo.owner_no
  ), older AS (                -- other owners' replacement ground with an older claim on it
    SELECT uo.owner_no, ledger.union_all(array_agg(r.geom ORDER BY r.version_id)) AS geom,
           array_agg(r.version_id ORDER BY r.version_id) AS versions
    FROM uo
    JOIN core.replacement r
      ON r.geom && uo.box AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
     AND r.component = 'wetland'
     AND (r.permit_id IS DISTINCT FROM uo.permit_id
          OR (r.permit_id IS NULL AND r.district_project IS DISTINCT FROM uo.project))
     AND ST_Intersects(r.geom, uo.wet_any)
    JOIN LATERAL ledger.claim_key(p_plan_area_id, r.permit_id,
                                  CASE WHEN r.permit_id IS NULL THEN r.district_project END) k
      ON (k.claim_on, k.entry) < (uo.claim_on, uo.entry) OR uo.entry IS NULL
    GROUP BY uo.owner_no
  ), cw AS MATERIALIZED (     -- the plan boundary, once: joined to the owners below, not
    SELECT ledger.union_all(array_agg(c.geom ORDER BY c.version_id)) AS geom,  -- carried
           array_agg(c.version_id ORDER BY c.version_id) AS versions
    FROM core.cwmp_area c
    WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id
  ), parts AS MATERIALIZED (  -- once per owner: the SELECT below uses excluded three times
    -- (not the plan boundary: a copy of it in every row was 938 MB written to disk by a
    -- 5,000-owner chunk of the state, ten county outlines; the rows grew with the plan area
    -- and the chunk at once)
    SELECT uo.owner_no, uo.versions, uo.wet_any, wet.versions AS wversions, wet.dversions,
           buf.versions AS bversions, her.versions AS hversions,
           older.versions AS oversions,
           uo.cert,
           ledger.minus(uo.cons, uo.cert) AS cons,
           ledger.minus(uo.prop, ledger.union_all(ARRAY[uo.cert, uo.cons])) AS prop,
           ledger.union_all(ARRAY[ledger.union_within(uo.wet_any, wet.parts), buf.geom, her.geom,
                                  uo.upland, older.geom]) AS excluded
    FROM uo
    LEFT JOIN wet ON wet.owner_no = uo.owner_no
    LEFT JOIN buf ON buf.owner_no = uo.owner_no
    LEFT JOIN her ON her.owner_no = uo.owner_no
    LEFT JOIN older ON older.owner_no = uo.owner_no
  )
  SELECT p.owner_no,
         ledger.minus(CASE WHEN cw.geom IS NULL THEN p.cert ELSE ledger.meet(p.cert, cw.geom)
                      END, p.excluded),
         ledger.minus(CASE WHEN cw.geom IS NULL THEN p.cons ELSE ledger.meet(p.cons, cw.geom)
                      END, p.excluded),
         ledger.minus(CASE WHEN cw.geom IS NULL THEN p.prop ELSE ledger.meet(p.prop, cw.geom)
                      END, p.excluded),
         p.versions, p.wversions, p.dversions, p.bversions, p.hversions,
         CASE WHEN p.wet_any IS NULL THEN NULL ELSE cw.versions END, p.oversions
  FROM parts p CROSS JOIN cw
$$;
COMMENT ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[]) IS
  'Replacement credit of owners (parallel arrays: permit id or NULL, District project, baseline '
  'date, heritage_threshold ordinal; owner_no = position): creditable ground by status '
  '(certified, constructed, proposed; disjoint) after every exclusion of spec section 4 (older '
  'claims on the same ground included), with the input versions used. Owners with no '
  'replacement: no row.';

REVOKE ALL ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[]),
  ledger.claim_key(integer, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[]),
  ledger.claim_key(integer, bigint, text) TO rulem_etl;
