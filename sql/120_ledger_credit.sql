-- 120_ledger_credit: the replacement credit owners (permits, or District projects with no
-- permit) earn (docs/ledger.md section 1, Rule M 7(b), 7(c)(ii), (iv), (v), (vi)-(vii)), dated per
-- feature (docs/ledger.md sections 1 and 4a, decisions 19 and 26).
-- Credit = area(union of the owner's wetland-component replacement features
--               − baseline wetland (the wetland layer as of the baseline date)
--               − declared buffers (any permit's; 7(c)(v))
--               − heritage upland ranked heritage_threshold or better (7(c)(ii))
--               − the owner's upland-component features (7(c)(iv): upland inside the area
--                 earns nothing)
--               − anything outside the plan area (core.cwmp_area; no boundary loaded: no clip)
--               − ground another owner's claim holds (7(b): "one acre of replacement wetland
--                 for each acre of wetland impact": an acre of replacement answers for one
--                 impact, so ground one owner holds is no credit for another)).
-- Claims are the features' (ledger.replacement_claim): counted ground (a feature at
-- counted_credit_status or later) belongs to the owner for whom it was counted first (the
-- date it reached that status); a pending claim (below it) never displaces counted ground;
-- between pending claims the feature recorded first (core.feature.created_at) keeps the
-- ground; ties go to the lower feature id. Denied and withdrawn permits claim nothing. The
-- claim that does not get the ground is reported by the checks (sql/270, 7(b)
-- credit_overlap): an error where the ground it lost is counted, a warning where it is pending.
-- By status: ground covered by features of several statuses counts once, at the most advanced
-- status covering it, so the counted part and the memo parts (constructed, proposed, each
-- below the counted status or not) never count one acre twice.
-- Dated per feature: the counted ground of an owner is cut into parts by the date each feature
-- reached the counted status (ground two features cover: the earlier date), so certifying a
-- second basin never moves the first basin's credit in time. The memo parts are dated by the
-- date each feature reached its own status.
-- Final conditions (7(c)(vi)-(vii)): a delineation approved after a feature was built
-- (constructed_on, else certified_on, else status_on) whose study area meets it measures the
-- feature there from its approval date: inside that study area only what the wetland layer
-- (as of that date) maps as wetland is creditable. Earlier dates keep the earlier figure: the
-- change is a part of its own, dated on the approval, negative when credit falls.
-- Set-based like sql/110: parallel arrays, one element per owner (a permit id, or NULL and a
-- project name), owner_no = position. An owner's parts are disjoint within each date; a part
-- (date, sign, geometry) adds or (sign -1) removes ground from that date on.

DROP FUNCTION IF EXISTS ledger.credit_measure(integer, bigint, text, date, integer);
DROP FUNCTION IF EXISTS ledger.credit_measures(integer, bigint[], text[], date[], integer[]);

-- The date a feature now at p_status reached p_target (NULL: it has not, or no date is on
-- record). certified: certified_on, else status_on; constructed: constructed_on, else (still
-- constructed) status_on, else the certification date (built by then at the latest);
-- proposed: status_on while proposed, else the earliest date on record.
CREATE OR REPLACE FUNCTION ledger.reached_on(p_status text, p_target text, p_status_on date,
                                             p_constructed_on date, p_certified_on date)
RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN ledger.status_rank(p_status) < ledger.status_rank(p_target) THEN NULL
    WHEN p_target = 'certified' THEN coalesce(p_certified_on, p_status_on)
    WHEN p_target = 'constructed' THEN
      CASE WHEN p_status = 'constructed' THEN coalesce(p_constructed_on, p_status_on)
           ELSE coalesce(p_constructed_on, p_certified_on, p_status_on) END
    ELSE CASE WHEN p_status = 'proposed' THEN p_status_on
              ELSE least(p_constructed_on, p_certified_on, p_status_on) END
  END
$$;
COMMENT ON FUNCTION ledger.reached_on(text, text, date, date, date) IS
  'The date a replacement feature now at one status reached another (target) status, from '
  'its status_on, constructed_on and certified_on; NULL when not reached or not on record.';

-- The claim of one replacement feature version on its ground (docs/ledger.md decision 19):
-- claims (false: its permit is denied, withdrawn or not current), pending (below
-- counted_credit_status as of its owner's baseline date), claim_on (counted: the date it
-- reached that status, else its owner's own date, else never; pending: -infinity, so pending
-- claims go by recording), recorded (its feature's first version) and its feature id.
-- A lower (pending, claim_on, recorded, replacement_id) is the stronger claim.
DROP FUNCTION IF EXISTS ledger.claim_key(integer, bigint, text);
CREATE OR REPLACE FUNCTION ledger.replacement_claim(p_plan_area_id integer, p_version_id bigint)
RETURNS TABLE (claims boolean, pending boolean, claim_on date, recorded timestamptz,
               replacement_id bigint)
LANGUAGE sql STABLE AS $$
  SELECT r.permit_id IS NULL OR pm.permit_id IS NOT NULL,
         ledger.status_rank(r.status) < ledger.status_rank(c.counted),
         CASE WHEN ledger.status_rank(r.status) < ledger.status_rank(c.counted)
              THEN '-infinity'::date
              ELSE coalesce(ledger.reached_on(r.status, c.counted, r.status_on,
                                              r.constructed_on, r.certified_on),
                            b.own_on, 'infinity'::date) END,
         f.created_at, r.replacement_id
  FROM core.replacement r
  JOIN core.feature f ON f.feature_id = r.replacement_id
  LEFT JOIN core.permit pm
    ON pm.permit_id = r.permit_id AND pm.valid_to IS NULL
   AND pm.status NOT IN ('denied', 'withdrawn')
  CROSS JOIN LATERAL (
    SELECT CASE WHEN r.permit_id IS NULL THEN d.first_on
                ELSE coalesce(pm.decided_on, pm.baseline_on) END AS own_on,
           CASE WHEN r.permit_id IS NULL THEN coalesce(d.first_on, current_date)
                ELSE ledger.permit_baseline_on(pm.baseline_on, pm.decided_on) END AS base_on
    FROM (SELECT CASE WHEN r.permit_id IS NULL THEN (
            SELECT min(x.status_on) FROM core.replacement x
            WHERE x.permit_id IS NULL AND x.district_project = r.district_project
              AND x.valid_to IS NULL AND x.plan_area_id = r.plan_area_id) END AS first_on) d
  ) b
  CROSS JOIN LATERAL (
    SELECT core.param_text(p_plan_area_id, 'counted_credit_status', b.base_on) AS counted) c
  WHERE r.version_id = p_version_id
$$;
COMMENT ON FUNCTION ledger.replacement_claim(integer, bigint) IS
  'The claim of a replacement feature version on its ground (7(b)): whether its owner claims '
  'at all, whether it is pending, the date it was counted (pending: -infinity), when its '
  'feature was first recorded, its feature id. The lower row is the stronger claim.';

-- The credited ground of some features dated part by part (the slow path of
-- ledger.credit_measures: features of several dates, or built features that a later
-- delineation measures). Events: the features' dates, and the approval dates of delineations
-- approved after a feature was built whose study area meets it. At each event the ground is
-- every feature dated by then, each measured on the delineations approved after it was built
-- (inside their study areas only the wetland layer as of the event counts), clipped to
-- p_clip (NULL: no clip) less p_minus; the part of an event is what that ground gained (+1)
-- and lost (-1) since the event before. A NULL date is the owner's floating date: its event
-- comes last and is measured as of today.
CREATE OR REPLACE FUNCTION ledger.dated_ground(p_plan_area_id integer, p_geoms geometry[],
                                               p_dates date[], p_built date[],
                                               p_minus geometry, p_clip geometry)
RETURNS TABLE (on_date date, sign integer, geom geometry, delineation_versions bigint[])
LANGUAGE plpgsql STABLE SET jit = off AS $$
#variable_conflict use_column
DECLARE
  events date[];
  e date;
  at_date date;
  prev geometry;
  cur geometry;
  parts geometry[];
  g geometry;
  study geometry;
  wet geometry;
  dv bigint[];
  used bigint[] := '{}';
  i integer;
BEGIN
  SELECT array_agg(x.d ORDER BY x.d NULLS LAST) INTO events
  FROM (SELECT DISTINCT u.d FROM unnest(p_dates) u(d)
        UNION
        SELECT d.approved_on FROM core.delineation d
        JOIN unnest(p_geoms, p_built) AS f(geom, built) ON f.built IS NOT NULL
         AND d.geom && f.geom AND d.approved_on > f.built
        WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
          AND ST_Intersects(d.geom, f.geom)) x(d);
  FOREACH e IN ARRAY events LOOP
    at_date := coalesce(e, current_date);
    parts := '{}';
    FOR i IN 1 .. cardinality(p_geoms) LOOP
      CONTINUE WHEN NOT (e IS NULL OR p_dates[i] <= e);
      g := p_geoms[i];
      IF p_built[i] IS NOT NULL THEN
        SELECT ST_Union(d.geom), array_agg(d.version_id ORDER BY d.version_id)
        INTO study, dv
        FROM core.delineation d
        WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
          AND d.geom && g AND d.approved_on > p_built[i] AND d.approved_on <= at_date
          AND ST_Intersects(d.geom, g);
        IF study IS NOT NULL THEN
          used := used || dv;
          SELECT ledger.union_all(array_agg(ledger.meet(w.geom, g) ORDER BY w.wetland_piece_id))
          INTO wet
          FROM ledger.baseline_wetland(p_plan_area_id, at_date, g) w;
          g := ledger.union_all(ARRAY[ledger.minus(g, study),
                                      ledger.meet(ledger.meet(g, study), wet)]);
        END IF;
      END IF;
      parts := parts || g;
    END LOOP;
    cur := ledger.union_all(parts);
    IF p_clip IS NOT NULL THEN
      cur := ledger.meet(cur, p_clip);
    END IF;
    cur := ledger.minus(cur, p_minus);
    on_date := e;
    delineation_versions := (SELECT array_agg(DISTINCT v ORDER BY v) FROM unnest(used) v);
    sign := 1;
    geom := CASE WHEN prev IS NULL THEN cur ELSE ledger.minus(cur, prev) END;
    IF geom IS NOT NULL AND ST_Area(geom) > 0 THEN
      RETURN NEXT;
    END IF;
    sign := -1;
    geom := CASE WHEN cur IS NULL THEN prev ELSE ledger.minus(prev, cur) END;
    IF geom IS NOT NULL AND ST_Area(geom) > 0 THEN
      RETURN NEXT;
    END IF;
    prev := cur;
  END LOOP;
END $$;
COMMENT ON FUNCTION ledger.dated_ground(integer, geometry[], date[], date[], geometry,
                                        geometry) IS
  'Credited ground of some features, dated: per event (a feature''s date, or the approval of '
  'a delineation approved after a feature was built that meets it) the ground gained (+1) '
  'and lost (-1) since the event before, with the delineations that measured it.';

CREATE OR REPLACE FUNCTION ledger.credit_measures(p_plan_area_id integer,
                                                  p_permit_ids bigint[],
                                                  p_district_projects text[], p_on date[],
                                                  p_heritage_threshold_ordinal integer[],
                                                  p_counted text[], p_own_on date[])
RETURNS TABLE (
  owner_no integer,
  part_kinds text[],
  part_dates date[],
  part_signs integer[],
  part_geoms geometry[],
  part_acres numeric[],
  replacement_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  buffer_versions bigint[],
  heritage_area_versions bigint[],
  cwmp_area_versions bigint[],
  claimed_versions bigint[],
  final_delineation_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH o AS (
    SELECT u.n::integer AS owner_no, u.permit_id, u.project, u.on_date, u.ordinal, u.counted,
           u.own_on
    FROM unnest(p_permit_ids, p_district_projects, p_on, p_heritage_threshold_ordinal,
                p_counted, p_own_on)
         WITH ORDINALITY AS u(permit_id, project, on_date, ordinal, counted, own_on, n)
  ), rep AS MATERIALIZED (    -- each feature with its owner's facts (no join back to o)
    SELECT o.owner_no, r.replacement_id, r.version_id, r.component, r.status, r.status_on,
           r.constructed_on, r.certified_on, r.geom, o.permit_id AS o_permit,
           o.project AS o_project, o.counted, o.own_on
    FROM o JOIN core.replacement r
      ON r.permit_id = o.permit_id AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT o.owner_no, r.replacement_id, r.version_id, r.component, r.status, r.status_on,
           r.constructed_on, r.certified_on, r.geom, o.permit_id, o.project, o.counted,
           o.own_on
    FROM o JOIN core.replacement r
      ON o.permit_id IS NULL AND r.permit_id IS NULL AND r.district_project = o.project
     AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
  ), u AS (
    SELECT rep.owner_no,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'wetland')) AS wet_any,
      ledger.union_all(array_agg(rep.geom ORDER BY rep.version_id)
        FILTER (WHERE rep.component = 'upland')) AS upland,
      array_agg(rep.version_id ORDER BY rep.version_id) AS versions,
      ST_Envelope(ST_Collect(rep.geom) FILTER (WHERE rep.component = 'wetland')) AS box
    FROM rep
    GROUP BY rep.owner_no
  ), uo AS (
    SELECT u.*, o.on_date, o.ordinal, o.permit_id, o.project, o.counted, o.own_on
    FROM u JOIN o ON o.owner_no = u.owner_no
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
  ), rival AS MATERIALIZED (  -- other owners' wetland replacements meeting each own one
    SELECT rep.owner_no, rep.replacement_id, rep.version_id, x.version_id AS other_version,
           x.geom
    FROM rep
    JOIN core.replacement x
      ON x.geom && rep.geom AND x.valid_to IS NULL AND x.plan_area_id = p_plan_area_id
     AND x.component = 'wetland'
     AND (x.permit_id IS DISTINCT FROM rep.o_permit
          OR (x.permit_id IS NULL AND x.district_project IS DISTINCT FROM rep.o_project))
     AND ST_Intersects(x.geom, rep.geom)
    WHERE rep.component = 'wetland'
  ), stronger AS MATERIALIZED (  -- ... whose claim is stronger than the feature's own
    SELECT rv.owner_no, rv.replacement_id,
           ledger.union_all(array_agg(rv.geom ORDER BY rv.other_version)) AS geom,
           array_agg(rv.other_version ORDER BY rv.other_version) AS versions
    FROM rival rv
    CROSS JOIN LATERAL ledger.replacement_claim(p_plan_area_id, rv.version_id) mine
    CROSS JOIN LATERAL ledger.replacement_claim(p_plan_area_id, rv.other_version) theirs
    WHERE theirs.claims
      AND (theirs.pending, theirs.claim_on, theirs.recorded, theirs.replacement_id)
          < (mine.pending, mine.claim_on, mine.recorded, mine.replacement_id)
    GROUP BY rv.owner_no, rv.replacement_id
  ), feat AS MATERIALIZED (    -- each own wetland feature less the stronger claims, its dates
    SELECT rep.owner_no, rep.version_id, rep.status,
           ledger.minus(rep.geom, s.geom) AS g,
           ledger.status_rank(rep.status) >= ledger.status_rank(rep.counted) AS counted,
           coalesce(ledger.reached_on(rep.status, rep.counted, rep.status_on,
                                      rep.constructed_on, rep.certified_on),
                    rep.own_on) AS counted_on,
           coalesce(ledger.reached_on(rep.status, rep.status, rep.status_on,
                                      rep.constructed_on, rep.certified_on),
                    rep.own_on) AS status_reached_on,
           CASE WHEN rep.status IN ('constructed', 'certified')
                THEN coalesce(rep.constructed_on, rep.certified_on, rep.status_on) END
             AS built_on,
           s.versions AS claimed
    FROM rep
    LEFT JOIN stronger s ON s.owner_no = rep.owner_no AND s.replacement_id = rep.replacement_id
    WHERE rep.component = 'wetland'
  ), final AS MATERIALIZED (   -- delineations approved after a feature was built, meeting it
    SELECT f.owner_no, d.version_id
    FROM feat f JOIN core.delineation d
      ON f.built_on IS NOT NULL AND d.geom && f.g AND d.valid_to IS NULL
     AND d.plan_area_id = p_plan_area_id AND d.status = 'approved'
     AND d.approved_on > f.built_on AND ST_Intersects(d.geom, f.g)
  ), cls AS (                  -- the features of each owner's classes: counted, and the memo
    SELECT f.owner_no, k.kind, f.version_id, f.g, k.on_date, f.built_on, k.rnk
    FROM feat f
    CROSS JOIN LATERAL (VALUES
      ('counted', f.counted_on, 0, f.counted),
      ('constructed', f.status_reached_on, 2, f.status = 'constructed'),
      ('proposed', f.status_reached_on, 1, f.status = 'proposed')) AS k(kind, on_date, rnk, yes)
    WHERE k.yes AND f.g IS NOT NULL
  ), cw AS MATERIALIZED (     -- the plan boundary, once: joined to the owners below, not
    SELECT ledger.union_all(array_agg(c.geom ORDER BY c.version_id)) AS geom,  -- carried
           array_agg(c.version_id ORDER BY c.version_id) AS versions
    FROM core.cwmp_area c
    WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id
  ), fagg AS (                 -- per owner: the ground of the statuses above each memo class
    SELECT f.owner_no,
           ledger.union_all(array_agg(f.g ORDER BY f.version_id)
                            FILTER (WHERE f.status = 'certified')) AS cert,
           ledger.union_all(array_agg(f.g ORDER BY f.version_id)
                            FILTER (WHERE f.status IN ('certified', 'constructed')))
             AS cert_cons
    FROM feat f
    GROUP BY f.owner_no
  ), claimed AS (
    SELECT f.owner_no, array_agg(DISTINCT v ORDER BY v) AS versions
    FROM feat f CROSS JOIN LATERAL unnest(f.claimed) AS v
    GROUP BY f.owner_no
  ), fin AS (
    SELECT fi.owner_no, array_agg(DISTINCT fi.version_id ORDER BY fi.version_id) AS versions
    FROM final fi
    GROUP BY fi.owner_no
  ), excl AS MATERIALIZED (   -- once per owner: what no class earns
    -- (not the plan boundary: a copy of it in every row was 938 MB written to disk by a
    -- 5,000-owner chunk of the state, ten county outlines; the rows grew with the plan area
    -- and the chunk at once)
    SELECT uo.owner_no, uo.versions, uo.wet_any, wet.versions AS wversions, wet.dversions,
           buf.versions AS bversions, her.versions AS hversions,
           ledger.union_all(ARRAY[ledger.union_within(uo.wet_any, wet.parts), buf.geom, her.geom,
                                  uo.upland]) AS excluded,
           fagg.cert, fagg.cert_cons, claimed.versions AS oversions, fin.versions AS fversions
    FROM uo
    LEFT JOIN wet ON wet.owner_no = uo.owner_no
    LEFT JOIN buf ON buf.owner_no = uo.owner_no
    LEFT JOIN her ON her.owner_no = uo.owner_no
    LEFT JOIN fagg ON fagg.owner_no = uo.owner_no
    LEFT JOIN claimed ON claimed.owner_no = uo.owner_no
    LEFT JOIN fin ON fin.owner_no = uo.owner_no
  ), grp0 AS (                 -- per owner and class: its features and their dates
    SELECT c.owner_no, c.kind,
           array_agg(c.g ORDER BY c.version_id) AS geoms,
           array_agg(c.on_date ORDER BY c.version_id) AS dates,
           array_agg(CASE WHEN c.kind <> 'proposed' THEN c.built_on END ORDER BY c.version_id)
             AS built,
           count(DISTINCT coalesce(c.on_date, 'infinity'::date)) AS n_dates
    FROM cls c
    GROUP BY c.owner_no, c.kind
  ), grp AS (                  -- ... and what it does not earn
    SELECT g.*,
           ledger.union_all(ARRAY[x.excluded, CASE g.kind WHEN 'constructed' THEN x.cert
                                                          WHEN 'proposed' THEN x.cert_cons END])
             AS minus,
           x.fversions IS NOT NULL AND g.kind <> 'proposed' AS measured_again
    FROM grp0 g JOIN excl x ON x.owner_no = g.owner_no
  ), parts AS (
    -- one date and no later delineation (nearly every owner): the class's ground at once
    SELECT g.owner_no, g.kind, g.dates[1] AS on_date, 1 AS sign,
           ledger.minus(CASE WHEN cw.geom IS NULL THEN ledger.union_all(g.geoms)
                             ELSE ledger.meet(ledger.union_all(g.geoms), cw.geom) END,
                        g.minus) AS geom
    FROM grp g CROSS JOIN cw
    WHERE g.n_dates = 1 AND NOT g.measured_again
    UNION ALL                 -- else dated part by part
    SELECT g.owner_no, g.kind, d.on_date, d.sign, d.geom
    FROM grp g CROSS JOIN cw
    CROSS JOIN LATERAL ledger.dated_ground(p_plan_area_id, g.geoms, g.dates, g.built, g.minus,
                                           cw.geom) d
    WHERE g.n_dates > 1 OR g.measured_again
  ), measured AS (
    SELECT p.owner_no,
           array_agg(p.kind ORDER BY p.kind, p.on_date, p.sign DESC) AS kinds,
           array_agg(p.on_date ORDER BY p.kind, p.on_date, p.sign DESC) AS dates,
           array_agg(p.sign ORDER BY p.kind, p.on_date, p.sign DESC) AS signs,
           array_agg(p.geom ORDER BY p.kind, p.on_date, p.sign DESC) AS geoms,
           array_agg(p.sign * ledger.acres(p.geom) ORDER BY p.kind, p.on_date, p.sign DESC)
             AS acres
    FROM parts p
    WHERE p.geom IS NOT NULL AND NOT ST_IsEmpty(p.geom)
    GROUP BY p.owner_no
  )
  SELECT x.owner_no, m.kinds, m.dates, m.signs, m.geoms, m.acres,
         x.versions, x.wversions, x.dversions, x.bversions, x.hversions,
         CASE WHEN x.wet_any IS NULL THEN NULL ELSE cw.versions END,
         x.oversions, x.fversions
  FROM excl x
  CROSS JOIN cw
  LEFT JOIN measured m ON m.owner_no = x.owner_no
$$;
COMMENT ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[], text[],
                                           date[]) IS
  'Replacement credit of owners (parallel arrays: permit id or NULL, District project, baseline '
  'date, heritage_threshold ordinal, counted_credit_status, own date; owner_no = position) as '
  'dated parts: kind (counted, constructed, proposed), effective date, sign, ground, signed '
  'acres, after every exclusion of spec section 4 (stronger claims on the same ground '
  'included), with the input versions used. Owners with no replacement: no row.';

REVOKE ALL ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[],
                                              text[], date[]),
  ledger.replacement_claim(integer, bigint),
  ledger.reached_on(text, text, date, date, date),
  ledger.dated_ground(integer, geometry[], date[], date[], geometry, geometry) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.credit_measures(integer, bigint[], text[], date[], integer[],
                                                 text[], date[]),
  ledger.replacement_claim(integer, bigint),
  ledger.reached_on(text, text, date, date, date),
  ledger.dated_ground(integer, geometry[], date[], date[], geometry, geometry) TO rulem_etl;
