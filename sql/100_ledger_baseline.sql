-- 100_ledger_baseline: what the ledger measures against, and helpers every ledger file uses.
--   * the baseline date of an owner (a permit: baseline_on, else decided_on, else today; a
--     District project: its earliest status date, else today);
--   * the baseline wetland near a window: core.wetland_layer's rule (sql/050) evaluated only
--     for the wetland pieces (sql/105) whose box meets the window, so that a permit's measure
--     reads the few pieces around it instead of the whole plan area (tests/test_ledger_queue.py
--     proves the pieces add up to core.wetland_layer's geometries);
--   * null-safe geometry algebra (NULL stands for "nothing") and the ledger's parameters as of
--     a date.
-- The small helpers are PL/pgSQL on purpose: called thousands of times inside one query, a
-- PL/pgSQL expression costs a few microseconds where a non-inlined SQL function pays for an
-- executor start per call.

-- A database migrated with revision 0003 before ledger.wetland_piece joined it (during
-- development) lacks the table; say what to do instead of failing on the first use.
DO $$
BEGIN
  IF to_regclass('ledger.wetland_piece') IS NULL THEN
    RAISE EXCEPTION 'ledger.wetland_piece is missing: this database ran an earlier revision 0003'
      USING HINT = 'Recreate the derived tables (core data is kept): alembic -x url=<URL> '
                   'downgrade 0002, then rulem-db db migrate; or start from a new database.';
  END IF;
END $$;

-- Null-safe geometry algebra for the ledger: NULL means "nothing", so a - NULL = a, and results
-- keep only their polygonal part (a shared edge is not area; an empty result is 0 acres).
-- The predicates skip GEOS overlay work whenever one side lies inside the other or they do not
-- meet.
CREATE OR REPLACE FUNCTION ledger.minus(a geometry, b geometry) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN CASE
    WHEN a IS NULL THEN NULL
    WHEN b IS NULL OR NOT (a && b) OR NOT ST_Intersects(a, b) THEN a
    ELSE ST_CollectionExtract(ST_Difference(a, b), 3)
  END;
END $$;
COMMENT ON FUNCTION ledger.minus(geometry, geometry) IS
  'a minus b, polygons only; NULL stands for nothing (a - NULL = a, NULL - b = NULL).';

CREATE OR REPLACE FUNCTION ledger.meet(a geometry, b geometry) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN CASE
    WHEN a IS NULL OR b IS NULL OR NOT (a && b) THEN NULL
    WHEN ST_CoveredBy(a, b) THEN a
    WHEN ST_CoveredBy(b, a) THEN b
    ELSE ST_CollectionExtract(ST_Intersection(a, b), 3)
  END;
END $$;
COMMENT ON FUNCTION ledger.meet(geometry, geometry) IS
  'a intersected with b, polygons only; NULL (nothing) when either is NULL or their boxes do '
  'not meet.';

-- The union of some geometries (NULLs ignored); one geometry is returned as it is (a valid
-- multipolygon needs no dissolving), which spares GEOS most of the ledger's unions.
CREATE OR REPLACE FUNCTION ledger.union_all(a geometry[]) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  g geometry[] := array_remove(a, NULL);
BEGIN
  RETURN CASE cardinality(g) WHEN 0 THEN NULL WHEN 1 THEN g[1] ELSE ST_Union(g) END;
END $$;
COMMENT ON FUNCTION ledger.union_all(geometry[]) IS
  'Union of the non-null geometries of an array (NULL when none; the one itself when one).';

CREATE OR REPLACE FUNCTION ledger.acres(g geometry) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT coalesce(core.acres(g), 0) $$;
COMMENT ON FUNCTION ledger.acres(geometry) IS
  'core.acres with NULL (nothing) as 0 acres.';

CREATE OR REPLACE FUNCTION ledger.permit_baseline_on(p_baseline_on date, p_decided_on date)
RETURNS date LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT coalesce(p_baseline_on, p_decided_on, current_date) $$;
COMMENT ON FUNCTION ledger.permit_baseline_on(date, date) IS
  'Baseline date of a permit (spec section 3): baseline_on, else decided_on, else today while '
  'undecided. Its wetland layer, and the parameters in force on it, measure the permit.';

DROP FUNCTION IF EXISTS ledger.baseline_wetland(integer, date, geometry);
CREATE OR REPLACE FUNCTION ledger.baseline_wetland(p_plan_area_id integer, p_on date,
                                                   p_window geometry)
RETURNS TABLE (
  wetland_id bigint,
  version_id bigint,
  delineation_id bigint,
  delineation_version_id bigint,
  geom geometry,
  wetland_piece_id bigint
)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT w.wetland_id, w.version_id, w.delineation_id, d.version_id, g.geom,
         p.wetland_piece_id
  FROM ledger.wetland_piece p                -- sql/105: the current wetlands in small pieces
  JOIN core.wetland w ON w.version_id = p.version_id AND w.valid_to IS NULL
  JOIN core.delineation d                   -- the wetland's delineation, approved by p_on
    ON d.delineation_id = w.delineation_id AND d.valid_to IS NULL
   AND d.plan_area_id = p_plan_area_id AND d.status = 'approved' AND d.approved_on <= p_on
  CROSS JOIN LATERAL (                      -- approved later (by p_on) with a box meeting it?
    SELECT EXISTS (SELECT 1 FROM core.delineation l
                   WHERE l.geom && d.geom AND l.valid_to IS NULL
                     AND l.plan_area_id = p_plan_area_id AND l.status = 'approved'
                     AND l.approved_on <= p_on
                     AND (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id))
           AS superseded_somewhere
  ) s
  CROSS JOIN LATERAL (
    SELECT CASE
             WHEN NOT s.superseded_somewhere THEN p.geom
             WHEN later.geom IS NULL AND ST_CoveredBy(p.geom, d.geom) THEN p.geom
             ELSE ST_CollectionExtract(ST_Intersection(
                    p.geom, ledger.minus(d.geom, later.geom)), 3)
           END AS geom
    FROM (SELECT ledger.union_all(array_agg(l.geom ORDER BY l.delineation_id)) AS geom
          FROM core.delineation l
          WHERE s.superseded_somewhere
            AND l.geom && d.geom AND l.geom && p.geom AND l.valid_to IS NULL
            AND l.plan_area_id = p_plan_area_id AND l.status = 'approved'
            AND l.approved_on <= p_on
            AND (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id)) later
    OFFSET 0                                -- computed once per piece, not once per use
  ) g
  WHERE p.geom && p_window AND p.plan_area_id = p_plan_area_id
    AND NOT ST_IsEmpty(g.geom)
$$;
COMMENT ON FUNCTION ledger.baseline_wetland(integer, date, geometry) IS
  'core.wetland_layer(plan area, date) near p_window, in pieces: for each piece (sql/105) of a '
  'current wetland whose box meets the window, the part the rule keeps (approved delineations, '
  'each clipped where a later-approved study area covers it), with the versions used. The '
  'pieces of one wetland union to its core.wetland_layer geometry.';

DROP FUNCTION IF EXISTS ledger.parameters(integer, date);
CREATE OR REPLACE FUNCTION ledger.parameters(p_plan_area_id integer, p_on date)
RETURNS TABLE (
  partial_drain_factor numeric,
  replacement_ratio numeric,
  counted_credit_status text,
  heritage_threshold_ordinal integer,
  parameter_ids integer[]
)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
BEGIN
  -- The rows core.param_num / core.param_text read (latest effective_on <= p_on), in one
  -- index scan; a missing one is reported by core.param_* itself.
  SELECT max(x.value_num) FILTER (WHERE x.name = 'partial_drain_factor') AS pdf,
         max(x.value_num) FILTER (WHERE x.name = 'replacement_ratio') AS rr,
         max(x.value_text) FILTER (WHERE x.name = 'counted_credit_status') AS ccs,
         max(x.value_text) FILTER (WHERE x.name = 'heritage_threshold') AS ht,
         count(*) AS n,
         array_agg(x.parameter_id ORDER BY x.parameter_id) AS ids
  INTO r
  FROM (SELECT DISTINCT ON (p.name) p.name, p.value_num, p.value_text, p.parameter_id
        FROM core.parameter p
        WHERE p.plan_area_id = p_plan_area_id AND p.effective_on <= p_on
          AND p.name IN ('partial_drain_factor', 'replacement_ratio', 'counted_credit_status',
                         'heritage_threshold')
        ORDER BY p.name, p.effective_on DESC) x;
  IF r.n < 4 THEN                 -- raises "parameter ... is not set for plan area ... on ..."
    PERFORM core.param_num(p_plan_area_id, 'partial_drain_factor', p_on),
            core.param_num(p_plan_area_id, 'replacement_ratio', p_on),
            core.param_text(p_plan_area_id, 'counted_credit_status', p_on),
            core.param_text(p_plan_area_id, 'heritage_threshold', p_on);
  END IF;
  RETURN QUERY SELECT r.pdf, r.rr, r.ccs,
                      (SELECT h.ordinal FROM core.heritage_rank h WHERE h.rank = r.ht), r.ids;
END $$;
COMMENT ON FUNCTION ledger.parameters(integer, date) IS
  'The ledger''s parameters (partial_drain_factor, replacement_ratio, counted_credit_status, '
  'heritage_threshold as a rank ordinal) in force for a plan area on a date, as '
  'core.param_num/param_text read them, and the ids of the rows used.';

-- Replacement status order: credit counts at counted_credit_status or any later status.
CREATE OR REPLACE FUNCTION ledger.status_rank(p_status text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_status WHEN 'proposed' THEN 1 WHEN 'constructed' THEN 2 WHEN 'certified' THEN 3
         END
$$;
COMMENT ON FUNCTION ledger.status_rank(text) IS
  'Order of replacement status: proposed 1 < constructed 2 < certified 3.';

REVOKE ALL ON FUNCTION ledger.union_all(geometry[]), ledger.permit_baseline_on(date, date),
  ledger.baseline_wetland(integer, date, geometry), ledger.minus(geometry, geometry),
  ledger.meet(geometry, geometry), ledger.acres(geometry), ledger.parameters(integer, date),
  ledger.status_rank(text) FROM PUBLIC;
GRANT USAGE ON SCHEMA ledger TO rulem_etl;
GRANT EXECUTE ON FUNCTION ledger.union_all(geometry[]), ledger.permit_baseline_on(date, date),
  ledger.baseline_wetland(integer, date, geometry), ledger.minus(geometry, geometry),
  ledger.meet(geometry, geometry), ledger.acres(geometry), ledger.parameters(integer, date),
  ledger.status_rank(text) TO rulem_etl;
