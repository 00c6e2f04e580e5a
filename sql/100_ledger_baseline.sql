-- 100_ledger_baseline: what the ledger measures against, and helpers every ledger file uses.
--   * the baseline date of an owner (a permit: baseline_on, else decided_on, else today; a
--     District project: its earliest status date, else today);
--   * the baseline wetland near a window: core.wetland_layer's rule (sql/050) evaluated only
--     for the wetland pieces (sql/105) whose box meets the window, so that a permit's measure
--     reads the few pieces around it instead of the whole plan area (tests/ledger/test_ledger_queue.py
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
                   'downgrade 0001, then rulem-db db migrate; or start from a new database.';
  END IF;
END $$;

-- Null-safe geometry algebra for the ledger: NULL means "nothing", so a - NULL = a, and results
-- keep only their polygonal part (a shared edge is not area; an empty result is 0 acres).
-- The predicates skip GEOS overlay work whenever one side lies inside the other or their boxes
-- do not meet. ledger.minus does not ask ST_Intersects first: in a county's recompute 2,424 of
-- 2,425 differences whose boxes met did intersect, and a GEOS 3.11 ST_Intersects of two
-- geometries that do not repeat is a full relate, about what the difference itself costs.
CREATE OR REPLACE FUNCTION ledger.minus(a geometry, b geometry) RETURNS geometry
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN CASE
    WHEN a IS NULL THEN NULL
    WHEN b IS NULL OR NOT (a && b) THEN a
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
    WHEN ST_Covers(b, a) THEN a   -- ST_Covers, not ST_CoveredBy: GEOS prepares its first
    WHEN ST_Covers(a, b) THEN b   -- argument when it repeats (a plan boundary: 20x faster)
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

-- The union of parts of a whole (each part inside it, e.g. ledger.meet(whole, x) for several
-- x): when one part is the whole itself (ledger.meet returns its first argument when the
-- other covers it: a fill inside one wetland piece), the union is the whole and GEOS has
-- nothing to do. Half the impacts of a county lie inside one wetland piece.
CREATE OR REPLACE FUNCTION ledger.union_within(whole geometry, parts geometry[])
RETURNS geometry LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF whole IS NOT NULL AND whole = ANY(parts) THEN  -- same coordinates in the same order
    RETURN whole;
  END IF;
  RETURN ledger.union_all(parts);
END $$;
COMMENT ON FUNCTION ledger.union_within(geometry, geometry[]) IS
  'Union of parts of a whole (every part must lie inside whole): the whole itself when one '
  'part equals it, else ledger.union_all(parts).';

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

-- The visible study areas of a plan area's delineations as of an approval epoch (a date on
-- which some delineation was approved): each approved delineation's study area minus every
-- study area approved after it by then (docs/ledger.md section 1, supersession; ties in approval date
-- go to the higher delineation id, as in core.wetland_layer). p_delineation_ids NULL: all.
CREATE OR REPLACE FUNCTION ledger.visible_areas(p_plan_area_id integer, p_epoch date,
                                                p_delineation_ids bigint[] DEFAULT NULL)
RETURNS TABLE (delineation_id bigint, version_id bigint, whole boolean, area geometry)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH dl AS MATERIALIZED (
    SELECT d.delineation_id, d.version_id, d.approved_on, d.geom
    FROM core.delineation d
    WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
      AND d.approved_on <= p_epoch
  )
  SELECT d.delineation_id, d.version_id, later.geom IS NULL, ledger.minus(d.geom, later.geom)
  FROM dl d
  LEFT JOIN LATERAL (
    SELECT ST_Union(l.geom) AS geom FROM dl l
    WHERE l.geom && d.geom
      AND (l.approved_on, l.delineation_id) > (d.approved_on, d.delineation_id)
  ) later ON true
  WHERE p_delineation_ids IS NULL OR d.delineation_id = ANY(p_delineation_ids)
$$;
COMMENT ON FUNCTION ledger.visible_areas(integer, date, bigint[]) IS
  'Visible study area of approved delineations as of an approval date: each one''s study area '
  'minus the study areas approved after it by then (whole: none overlaps it).';

-- The visible areas as of the latest approval are stored (ledger.visible_area, revision 0013)
-- with the version ids of the delineations they came from (ledger.visible_epoch.inputs), so
-- that a recompute's chunks read them instead of computing them twice each (docs/ledger.md
-- section 7). ledger.baseline_pieces reads them only while those version ids
-- are exactly the plan area's approved current delineations, in the same snapshot, so a stale
-- row is never used; ledger.start_run refreshes them when stale.
CREATE OR REPLACE FUNCTION ledger.visible_inputs(p_plan_area_id integer)
RETURNS TABLE (epoch date, inputs bigint[])
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT max(d.approved_on), array_agg(d.version_id ORDER BY d.version_id)
  FROM core.delineation d
  WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
    AND d.approved_on IS NOT NULL
$$;
COMMENT ON FUNCTION ledger.visible_inputs(integer) IS
  'The latest approval date of a plan area and the sorted version ids of its approved current '
  'delineations: what ledger.visible_area must have been computed from to be used.';

-- The one test of whether the stored areas may be read (ledger.baseline_pieces) or must be
-- computed again (ledger.refresh_visible).
-- PL/pgSQL, not SQL: a SQL function called from a query is planned again at each execution
-- of that query (0.2 ms, four times in the measuring of every chunk: a fifth of measuring one
-- owner); PL/pgSQL keeps its plan for the session. STABLE: the caller's snapshot.
CREATE OR REPLACE FUNCTION ledger.stored_visible_epoch(p_plan_area_id integer) RETURNS date
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT v.epoch FROM ledger.visible_epoch v, ledger.visible_inputs(p_plan_area_id) i
          WHERE v.plan_area_id = p_plan_area_id AND v.inputs = i.inputs);
END $$;
COMMENT ON FUNCTION ledger.stored_visible_epoch(integer) IS
  'The epoch of the stored visible study areas of a plan area when they were computed from '
  'its approved current delineations; NULL when stale or none are stored.';

CREATE OR REPLACE FUNCTION ledger.refresh_visible(p_plan_area_id integer) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ledger.stored_visible_epoch(p_plan_area_id) IS NOT NULL THEN
    RETURN false;                             -- current
  END IF;
  -- One refresher per plan area; a session that finds another refreshing goes on without
  -- (ledger.baseline_pieces computes what it needs while the stored areas are stale).
  IF NOT pg_try_advisory_xact_lock(1280723283, p_plan_area_id) THEN  -- 'LVIS'
    RETURN false;
  END IF;
  DELETE FROM ledger.visible_area a WHERE a.plan_area_id = p_plan_area_id;
  DELETE FROM ledger.visible_epoch v WHERE v.plan_area_id = p_plan_area_id;
  WITH i AS MATERIALIZED (     -- one statement, one snapshot: the inputs are what was read
    SELECT * FROM ledger.visible_inputs(p_plan_area_id) WHERE inputs IS NOT NULL
  ), e AS (
    INSERT INTO ledger.visible_epoch (plan_area_id, epoch, inputs)
    SELECT p_plan_area_id, i.epoch, i.inputs FROM i
  )
  INSERT INTO ledger.visible_area (plan_area_id, delineation_id, version_id, whole, area)
  SELECT p_plan_area_id, v.delineation_id, v.version_id, v.whole, v.area
  FROM i CROSS JOIN LATERAL ledger.visible_areas(p_plan_area_id, i.epoch) v;
  RETURN true;
END $$;
COMMENT ON FUNCTION ledger.refresh_visible(integer) IS
  'Recomputes ledger.visible_area of a plan area when its approved delineations changed since '
  '(returns true), else does nothing (false); skipped while another session refreshes it.';

-- The baseline wetland of many owners at once: each owner (owner_no) has a date and a window;
-- the result is, for each wetland piece whose box meets an owner's window, the part the rule
-- keeps as of the owner's date. The visible part of each delineation's study area (minus the
-- study areas approved after it) depends on the date only through which delineations were
-- approved by then, so it is computed once per such "epoch" (the latest approval on or before
-- the date) and delineation, for the whole call, not once per piece: a recompute's owners
-- nearly all share one epoch, the latest, whose areas are stored (ledger.visible_area). Per
-- piece what remains is a hash lookup and, for a delineation that a later one supersedes
-- somewhere, an ST_Covers by its visible area (consecutive pieces of one delineation reuse
-- GEOS's prepared geometry of the area).
DROP FUNCTION IF EXISTS ledger.baseline_pieces(integer, integer[], date[], geometry[]);
CREATE OR REPLACE FUNCTION ledger.baseline_pieces(p_plan_area_id integer, p_owner_nos integer[],
                                                  p_on date[], p_windows geometry[])
RETURNS TABLE (
  owner_no integer,
  wetland_id bigint,
  version_id bigint,
  delineation_id bigint,
  delineation_version_id bigint,
  geom geometry,
  wetland_piece_id bigint
)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH o AS (
    SELECT u.owner_no, u.on_date, u.win
    FROM unnest(p_owner_nos, p_on, p_windows) AS u(owner_no, on_date, win)
    WHERE u.win IS NOT NULL AND u.on_date IS NOT NULL
  ), near AS MATERIALIZED (   -- the pieces (sql/105: current wetlands only) near each window
    SELECT o.owner_no, o.on_date, p.wetland_piece_id, p.wetland_id, p.version_id,
           p.delineation_id, p.geom
    FROM o JOIN ledger.wetland_piece p
      ON p.geom && o.win AND p.plan_area_id = p_plan_area_id
  ), dl AS MATERIALIZED (     -- approved delineations (current knowledge of each)
    SELECT d.delineation_id, d.version_id, d.approved_on, d.geom
    FROM core.delineation d
    WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
      AND d.approved_on <= (SELECT max(o.on_date) FROM o)
  ), epoch AS MATERIALIZED (  -- each date -> the latest approval on or before it (nearly
    SELECT x.on_date,        -- every date is after the latest: no scan for those)
           CASE WHEN x.on_date >= l.latest THEN l.latest
                ELSE (SELECT max(dl.approved_on) FROM dl WHERE dl.approved_on <= x.on_date)
           END AS epoch
    FROM (SELECT DISTINCT near.on_date FROM near) x
    CROSS JOIN (SELECT max(dl.approved_on) AS latest FROM dl) l
  ), stored AS MATERIALIZED ( -- the stored visible areas' epoch, if they are current (in
    SELECT x.epoch           -- FROM: once; a subquery in the select list was pulled up and
    FROM ledger.stored_visible_epoch(p_plan_area_id) AS x(epoch)  -- called it twice)
    WHERE x.epoch IS NOT NULL
  ), vis AS MATERIALIZED (    -- per epoch and delineation met: its visible study area
    SELECT s.epoch, a.delineation_id, a.version_id, a.whole, a.area
    FROM stored s
    JOIN ledger.visible_area a
      ON a.plan_area_id = p_plan_area_id
     AND a.delineation_id IN (SELECT DISTINCT near.delineation_id FROM near)
    WHERE s.epoch IN (SELECT epoch.epoch FROM epoch)
    UNION ALL
    SELECT e.epoch, v.delineation_id, v.version_id, v.whole, v.area
    FROM (SELECT DISTINCT epoch.epoch FROM epoch
          WHERE epoch.epoch IS NOT NULL AND epoch.epoch NOT IN (SELECT s.epoch FROM stored s)) e
    CROSS JOIN LATERAL ledger.visible_areas(
      p_plan_area_id, e.epoch, ARRAY(SELECT DISTINCT near.delineation_id FROM near)) v
  )
  SELECT n.owner_no, n.wetland_id, n.version_id, n.delineation_id, v.version_id, g.geom,
         n.wetland_piece_id
  FROM near n
  JOIN epoch e ON e.on_date = n.on_date
  JOIN vis v ON v.epoch = e.epoch AND v.delineation_id = n.delineation_id
  CROSS JOIN LATERAL (
    SELECT CASE WHEN v.whole OR ST_Covers(v.area, n.geom) THEN n.geom
                ELSE ST_CollectionExtract(ST_Intersection(n.geom, v.area), 3) END AS geom
    OFFSET 0                                -- computed once per piece, not once per use
  ) g
  WHERE NOT ST_IsEmpty(g.geom)
$$;
COMMENT ON FUNCTION ledger.baseline_pieces(integer, integer[], date[], geometry[]) IS
  'core.wetland_layer near many windows at once (parallel arrays: owner number, date, window): '
  'for each piece (sql/105) of a current wetland whose box meets an owner''s window, the part '
  'the rule keeps as of the owner''s date (approved delineations, each clipped where a '
  'later-approved study area covers it), with the versions used. Each delineation''s visible '
  'area is read from ledger.visible_area (latest approval, when current) or computed once per '
  'call and approval epoch.';

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
  SELECT b.wetland_id, b.version_id, b.delineation_id, b.delineation_version_id, b.geom,
         b.wetland_piece_id
  FROM ledger.baseline_pieces(p_plan_area_id, ARRAY[1], ARRAY[p_on], ARRAY[p_window]) b
$$;
COMMENT ON FUNCTION ledger.baseline_wetland(integer, date, geometry) IS
  'core.wetland_layer(plan area, date) near p_window, in pieces: for each piece (sql/105) of a '
  'current wetland whose box meets the window, the part the rule keeps (approved delineations, '
  'each clipped where a later-approved study area covers it), with the versions used. The '
  'pieces of one wetland union to its core.wetland_layer geometry.';

DROP FUNCTION IF EXISTS ledger.parameters(integer, date);  -- now ledger.parameters_on

-- The ledger's parameters in force on some dates (a county's 2,000 permits have 1,900 baseline
-- dates: one query for all of them), as core.param_num / core.param_text read them: the row
-- with the latest effective_on <= the date. A parameter missing on the earliest date is
-- reported by core.param_* itself (a parameter set by a date is set on every later date).
DROP FUNCTION IF EXISTS ledger.parameters_on(integer, date[]);
CREATE OR REPLACE FUNCTION ledger.parameters_on(p_plan_area_id integer, p_dates date[])
RETURNS TABLE (
  on_date date,
  partial_drain_factor numeric,
  replacement_ratio numeric,
  counted_credit_status text,
  heritage_threshold_ordinal integer,
  parameter_ids integer[]
)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  first_on date := (SELECT min(d) FROM unnest(p_dates) AS d);
BEGIN
  IF first_on IS NOT NULL AND (
       SELECT count(DISTINCT p.name) FROM core.parameter p
       WHERE p.plan_area_id = p_plan_area_id AND p.effective_on <= first_on
         AND p.name IN ('partial_drain_factor', 'replacement_ratio', 'counted_credit_status',
                        'heritage_threshold')) < 4 THEN
    -- raises "parameter ... is not set for plan area ... on ..."
    PERFORM core.param_num(p_plan_area_id, 'partial_drain_factor', first_on),
            core.param_num(p_plan_area_id, 'replacement_ratio', first_on),
            core.param_text(p_plan_area_id, 'counted_credit_status', first_on),
            core.param_text(p_plan_area_id, 'heritage_threshold', first_on);
  END IF;
  RETURN QUERY
  SELECT x.on_date,
         max(x.value_num) FILTER (WHERE x.name = 'partial_drain_factor'),
         max(x.value_num) FILTER (WHERE x.name = 'replacement_ratio'),
         max(x.value_text) FILTER (WHERE x.name = 'counted_credit_status'),
         (SELECT h.ordinal FROM core.heritage_rank h
          WHERE h.rank = max(x.value_text) FILTER (WHERE x.name = 'heritage_threshold')),
         array_agg(x.parameter_id ORDER BY x.parameter_id)
  FROM (SELECT DISTINCT ON (d.on_date, p.name) d.on_date, p.name, p.value_num, p.value_text,
               p.parameter_id
        FROM (SELECT DISTINCT u.d AS on_date FROM unnest(p_dates) AS u(d)) d
        JOIN core.parameter p
          ON p.plan_area_id = p_plan_area_id AND p.effective_on <= d.on_date
         AND p.name IN ('partial_drain_factor', 'replacement_ratio', 'counted_credit_status',
                        'heritage_threshold')
        ORDER BY d.on_date, p.name, p.effective_on DESC) x
  GROUP BY x.on_date;
END $$;
COMMENT ON FUNCTION ledger.parameters_on(integer, date[]) IS
  'The ledger''s parameters (partial_drain_factor, replacement_ratio, counted_credit_status, '
  'heritage_threshold as a rank ordinal) in force for a plan area on each of some dates (one '
  'row per distinct date), as core.param_num/param_text read them, and the ids of the rows '
  'used.';

-- One text key per ledger owner (posting, sql/160, and the transfers, sql/130).
CREATE OR REPLACE FUNCTION ledger.owner_key(p_permit_id bigint, p_district_project text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT coalesce('permit:' || p_permit_id::text, 'project:' || p_district_project) $$;
-- (::text: bigint || text is only STABLE, which kept this IMMUTABLE function from inlining)
COMMENT ON FUNCTION ledger.owner_key(bigint, text) IS
  'One text key for a ledger owner: permit:<id> or project:<name>.';

-- Replacement status order: credit counts at counted_credit_status or any later status.
CREATE OR REPLACE FUNCTION ledger.status_rank(p_status text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_status WHEN 'proposed' THEN 1 WHEN 'constructed' THEN 2 WHEN 'certified' THEN 3
         END
$$;
COMMENT ON FUNCTION ledger.status_rank(text) IS
  'Order of replacement status: proposed 1 < constructed 2 < certified 3.';

REVOKE ALL ON FUNCTION ledger.union_all(geometry[]), ledger.union_within(geometry, geometry[]), ledger.permit_baseline_on(date, date),
  ledger.baseline_wetland(integer, date, geometry),
  ledger.baseline_pieces(integer, integer[], date[], geometry[]), ledger.minus(geometry, geometry),
  ledger.meet(geometry, geometry), ledger.acres(geometry),
  ledger.parameters_on(integer, date[]), ledger.status_rank(text),
  ledger.visible_areas(integer, date, bigint[]), ledger.visible_inputs(integer),
  ledger.stored_visible_epoch(integer), ledger.refresh_visible(integer),
  ledger.owner_key(bigint, text) FROM PUBLIC;
GRANT USAGE ON SCHEMA ledger TO rulem_etl;
GRANT EXECUTE ON FUNCTION ledger.union_all(geometry[]), ledger.union_within(geometry, geometry[]), ledger.permit_baseline_on(date, date),
  ledger.baseline_wetland(integer, date, geometry),
  ledger.baseline_pieces(integer, integer[], date[], geometry[]), ledger.minus(geometry, geometry),
  ledger.meet(geometry, geometry), ledger.acres(geometry),
  ledger.parameters_on(integer, date[]), ledger.status_rank(text),
  ledger.visible_areas(integer, date, bigint[]), ledger.visible_inputs(integer),
  ledger.stored_visible_epoch(integer), ledger.refresh_visible(integer),
  ledger.owner_key(bigint, text) TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON ledger.visible_epoch, ledger.visible_area TO rulem_etl;
