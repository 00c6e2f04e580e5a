-- 110_ledger_impact: the impact permits record (Rule M 7(b); docs/ledger.md
-- section 1, decisions 18 and 25): every acre of wetland lost is charged once, whoever loses it.
-- Impact acres = area(disturbance ∩ wetland) x factor: 1 for fill, excavate and drain_full,
-- partial_drain_factor for drain_partial.
--   * Disturbance: the permit's impact polygons, and, drawn or not, its structures (fill; a
--     structure suspended above the buffer, 6(f)(i), is a buffer exception and fills the
--     wetland all the same), its stormwater BMPs (excavate for a wet pond or an infiltration
--     basin, fill for the others) and its grading (fill): 7(b) asks replacement "for each acre
--     of wetland impact from fill, excavation or draining", 7(g) lets a structure in under a
--     variance without excusing that, and 7(d) makes the WCA exemptions of Minn. R. 8420.0122
--     inapplicable. A disturbance without an impact polygon is a finding (sql/270).
--     Overlapping features count once, at the highest factor.
--   * Wetland: the baseline wetland (as of the permit's baseline date) plus the wetland
--     replacement already built by then (constructed or certified, constructed_on, else
--     certified_on, else status_on on or before the baseline date; no date: as of today), any
--     owner's: whoever fills a basin is charged, and its owner keeps its credit.
--   * Inside the CWMP area: 7 applies to "fill or excavation in or draining ... of a wetland
--     within the CWMP area" (no boundary loaded: no clip, as for credit).
--   * Once: ground already charged to a permit decided earlier (decision date, then permit
--     id; undecided permits after every decided one; denied and withdrawn permits charge
--     nothing) is not charged again. Ground an earlier permit drained partially is charged
--     the rest, 1 - partial_drain_factor, when filled, excavated or drained fully; a partial
--     drain over it is charged nothing. The later permit gets the finding (sql/270).
-- Set-based: one call measures many permits (the owners of a recompute chunk), each against
-- the wetland as of its own baseline date; the arrays are parallel, one element per permit,
-- and owner_no is the element's position.

DROP FUNCTION IF EXISTS ledger.impact_measure(integer, bigint, date, numeric);
DROP FUNCTION IF EXISTS ledger.impact_measures(integer, bigint[], date[], numeric[]);

-- The disturbing features of a permit with the kind of impact each is: impact polygons as
-- recorded; structures and grading fill; BMPs dug (wet pond, infiltration) excavate, the
-- others fill. src orders them (impact polygons first).
-- The current-version filter stands outside the UNION ALL, not in each branch: PostgreSQL
-- flattens a UNION ALL into one append relation only when its branches have no WHERE of
-- their own, and only then can a join with this view (x.geom && d.geom, x.permit_id = ...)
-- reach each layer's indexes. With the filter in the branches, the check 7(b)
-- impact_charged_earlier read every impact once per permit (83 s for 2,000 permits at state
-- size; bench/check_profile.py). tests/ledger/test_ledger_charged_once.py holds the plan.
CREATE OR REPLACE VIEW ledger.disturbance AS
SELECT u.plan_area_id, u.permit_id, u.src, u.version_id, u.kind, u.geom, u.feature_id, u.label
FROM (
  SELECT i.plan_area_id, i.permit_id, 'impact'::text AS src, i.version_id, i.kind, i.geom,
         i.impact_id AS feature_id, i.kind || ' impact' AS label, i.valid_to
  FROM core.impact i
  UNION ALL
  SELECT s.plan_area_id, s.permit_id, 'structure', s.version_id, 'fill', s.geom,
         s.structure_id, coalesce(s.kind, 'other') || ' structure', s.valid_to
  FROM core.structure s
  UNION ALL
  SELECT b.plan_area_id, b.permit_id, 'bmp', b.version_id,
         CASE WHEN b.kind IN ('wet_pond', 'infiltration') THEN 'excavate' ELSE 'fill' END,
         b.geom, b.bmp_id, b.kind || ' stormwater BMP', b.valid_to
  FROM core.bmp b
  UNION ALL
  SELECT g.plan_area_id, g.permit_id, 'grading', g.version_id, 'fill', g.geom, g.grading_id,
         'grading', g.valid_to
  FROM core.grading g
) u
WHERE u.valid_to IS NULL;
COMMENT ON VIEW ledger.disturbance IS
  'Current features that disturb ground, by permit, with the impact kind each is (7(b)): impact '
  'polygons as recorded; structures and grading fill; wet ponds and infiltration basins '
  'excavate, other BMPs fill. src: the layer; label: the feature in words.';

-- The disturbance of some permits, through each layer's permit index (a join with the view
-- hashed every impact of the plan area, 1.2 ms of a one-change recompute at county size).
CREATE OR REPLACE FUNCTION ledger.disturbance_of(p_plan_area_id integer, p_permit_ids bigint[])
RETURNS TABLE (plan_area_id integer, permit_id bigint, src text, version_id bigint, kind text,
               geom geometry, feature_id bigint, label text)
LANGUAGE sql STABLE AS $$
  SELECT i.plan_area_id, i.permit_id, 'impact'::text, i.version_id, i.kind, i.geom,
         i.impact_id, i.kind || ' impact'
  FROM core.impact i
  WHERE i.permit_id = ANY(p_permit_ids) AND i.valid_to IS NULL
    AND i.plan_area_id = p_plan_area_id
  UNION ALL
  SELECT s.plan_area_id, s.permit_id, 'structure', s.version_id, 'fill', s.geom, s.structure_id,
         coalesce(s.kind, 'other') || ' structure'
  FROM core.structure s
  WHERE s.permit_id = ANY(p_permit_ids) AND s.valid_to IS NULL
    AND s.plan_area_id = p_plan_area_id
  UNION ALL
  SELECT b.plan_area_id, b.permit_id, 'bmp', b.version_id,
         CASE WHEN b.kind IN ('wet_pond', 'infiltration') THEN 'excavate' ELSE 'fill' END,
         b.geom, b.bmp_id, b.kind || ' stormwater BMP'
  FROM core.bmp b
  WHERE b.permit_id = ANY(p_permit_ids) AND b.valid_to IS NULL
    AND b.plan_area_id = p_plan_area_id
  UNION ALL
  SELECT g.plan_area_id, g.permit_id, 'grading', g.version_id, 'fill', g.geom, g.grading_id,
         'grading'
  FROM core.grading g
  WHERE g.permit_id = ANY(p_permit_ids) AND g.valid_to IS NULL
    AND g.plan_area_id = p_plan_area_id
$$;
COMMENT ON FUNCTION ledger.disturbance_of(integer, bigint[]) IS
  'ledger.disturbance of some permits (each layer read through its permit index).';

-- The permits decided earlier (decision date, then permit id; undecided after every decided
-- one; denied and withdrawn never) whose disturbance meets a box, for each of some permits.
CREATE OR REPLACE FUNCTION ledger.earlier_near(p_plan_area_id integer, p_permit_ids bigint[],
                                               p_boxes geometry[])
RETURNS TABLE (owner_no integer, earlier_permit_id bigint)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT u.n::integer, x.permit_id
  FROM unnest(p_permit_ids, p_boxes) WITH ORDINALITY AS u(permit_id, box, n)
  CROSS JOIN LATERAL (SELECT p.permit_id, p.decided_on FROM core.permit p
                      WHERE p.permit_id = u.permit_id AND p.valid_to IS NULL) me
  CROSS JOIN LATERAL (   -- by each layer's spatial index, owner by owner (a join with the
    SELECT i.permit_id FROM core.impact i   -- view compared every pair: 7.7 million a county)
    WHERE i.geom && u.box AND i.valid_to IS NULL AND i.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT s.permit_id FROM core.structure s
    WHERE s.geom && u.box AND s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT b.permit_id FROM core.bmp b
    WHERE b.geom && u.box AND b.valid_to IS NULL AND b.plan_area_id = p_plan_area_id
    UNION ALL
    SELECT g.permit_id FROM core.grading g
    WHERE g.geom && u.box AND g.valid_to IS NULL AND g.plan_area_id = p_plan_area_id) x
  CROSS JOIN LATERAL (SELECT p.permit_id, p.decided_on FROM core.permit p
                      WHERE p.permit_id = x.permit_id AND p.valid_to IS NULL
                        AND p.status NOT IN ('denied', 'withdrawn')) pm
  WHERE u.box IS NOT NULL AND x.permit_id <> u.permit_id
    AND (coalesce(pm.decided_on, 'infinity'::date), pm.permit_id)
        < (coalesce(me.decided_on, 'infinity'::date), me.permit_id)
$$;
COMMENT ON FUNCTION ledger.earlier_near(integer, bigint[], geometry[]) IS
  'For each of some permits (owner_no: position) and a box: the permits decided earlier whose '
  'disturbance meets the box.';

-- What each permit's disturbance meets of the wetland as of its date (no earlier charge taken
-- away): the full-factor part and the partial-drain part outside it.
CREATE OR REPLACE FUNCTION ledger.impact_ground(p_plan_area_id integer, p_permit_ids bigint[],
                                                p_on date[])
RETURNS TABLE (
  owner_no integer,
  full_geom geometry,
  partial_geom geometry,
  impact_versions bigint[],
  structure_versions bigint[],
  bmp_versions bigint[],
  grading_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  basin_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH o AS (
    SELECT u.n::integer AS owner_no, u.permit_id, u.on_date
    FROM unnest(p_permit_ids, p_on) WITH ORDINALITY AS u(permit_id, on_date, n)
    WHERE u.permit_id IS NOT NULL
  ), imp0 AS (
    SELECT o.owner_no, min(o.on_date) AS on_date,
           ledger.union_all(array_agg(i.geom ORDER BY i.src, i.version_id)
             FILTER (WHERE i.kind <> 'drain_partial')) AS full_g,
           ledger.union_all(array_agg(i.geom ORDER BY i.version_id)
             FILTER (WHERE i.kind = 'drain_partial')) AS partial_g,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE i.src = 'impact')
             AS versions,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE i.src = 'structure')
             AS structure_versions,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE i.src = 'bmp')
             AS bmp_versions,
           array_agg(i.version_id ORDER BY i.version_id) FILTER (WHERE i.src = 'grading')
             AS grading_versions,
           ST_Envelope(ST_Collect(i.geom)) AS box
    FROM o
    JOIN ledger.disturbance_of(p_plan_area_id, p_permit_ids) i ON i.permit_id = o.permit_id
    GROUP BY o.owner_no
  ), imp AS (                 -- partial drains outside the full-factor kinds
    SELECT imp0.*, ledger.minus(imp0.partial_g, imp0.full_g) AS partial_only FROM imp0
  ), cut AS (                 -- disturbance ∩ each baseline wetland piece it meets
    SELECT imp.owner_no, 0 AS src, b.wetland_piece_id AS id, b.version_id,
           b.delineation_version_id,
           ledger.meet(imp.full_g, b.geom) AS full_p,
           ledger.meet(imp.partial_only, b.geom) AS partial_p
    FROM (SELECT array_agg(imp.owner_no ORDER BY imp.owner_no) AS nos,
                 array_agg(imp.on_date ORDER BY imp.owner_no) AS dates,
                 array_agg(imp.box ORDER BY imp.owner_no) AS boxes FROM imp) a
    CROSS JOIN LATERAL ledger.baseline_pieces(p_plan_area_id, a.nos, a.dates, a.boxes) b
    JOIN imp ON imp.owner_no = b.owner_no
    UNION ALL                 -- ... and each replacement wetland built by the permit's date
    SELECT imp.owner_no, 1, r.version_id, NULL, NULL,
           ledger.meet(imp.full_g, r.geom), ledger.meet(imp.partial_only, r.geom)
    FROM imp JOIN core.replacement r
      ON r.geom && imp.box AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
     AND r.component = 'wetland' AND r.status IN ('constructed', 'certified')
     AND coalesce(r.constructed_on, r.certified_on, r.status_on, current_date) <= imp.on_date
    OFFSET 0                   -- once per piece: the filter and the aggregates both use it
  ), wet AS (                  -- the pieces' parts: overlapping wetlands count once
    SELECT cut.owner_no,
           array_agg(cut.full_p ORDER BY cut.src, cut.id) AS full_parts,
           array_agg(cut.partial_p ORDER BY cut.src, cut.id) AS partial_parts,
           array_agg(DISTINCT cut.version_id) FILTER (WHERE cut.src = 0) AS versions,
           array_agg(DISTINCT cut.delineation_version_id) FILTER (WHERE cut.src = 0)
             AS dversions,
           array_agg(cut.id ORDER BY cut.id) FILTER (WHERE cut.src = 1) AS basins
    FROM cut
    WHERE NOT ST_IsEmpty(coalesce(cut.full_p, cut.partial_p))   -- pieces that share area
       OR NOT ST_IsEmpty(coalesce(cut.partial_p, cut.full_p))   -- with it, not just a box
    GROUP BY cut.owner_no
  )
  SELECT imp.owner_no,
         ledger.union_within(imp.full_g, wet.full_parts),
         ledger.union_within(imp.partial_only, wet.partial_parts),
         imp.versions, imp.structure_versions, imp.bmp_versions, imp.grading_versions,
         wet.versions, wet.dversions, wet.basins
  FROM imp LEFT JOIN wet ON wet.owner_no = imp.owner_no
$$;
COMMENT ON FUNCTION ledger.impact_ground(integer, bigint[], date[]) IS
  'What each permit''s disturbance (ledger.disturbance) meets of the wetland as of its date '
  '(baseline wetland and built replacement wetland): the full-factor ground and the '
  'partial-drain ground outside it, with the versions used; earlier charges not taken away.';

-- For each permit (owner_no: position) and the box of its wetland ground, the permits decided
-- earlier (decision date, then permit id; undecided after every decided one; denied and
-- withdrawn never) whose disturbance meets the box, with the ground each was charged (its
-- disturbance ∩ its wetland as of its own baseline date).
CREATE OR REPLACE FUNCTION ledger.earlier_charges(p_plan_area_id integer, p_permit_ids bigint[],
                                                  p_boxes geometry[])
RETURNS TABLE (owner_no integer, earlier_permit_id bigint, full_geom geometry,
               partial_geom geometry)
LANGUAGE sql STABLE AS $$
  WITH near AS MATERIALIZED (
    SELECT * FROM ledger.earlier_near(p_plan_area_id, p_permit_ids, p_boxes)
  ), q AS (
    SELECT array_agg(pm.permit_id ORDER BY pm.permit_id) AS ids,
           array_agg(ledger.permit_baseline_on(pm.baseline_on, pm.decided_on)
                     ORDER BY pm.permit_id) AS dates
    FROM core.permit pm
    WHERE pm.valid_to IS NULL AND pm.permit_id IN (SELECT near.earlier_permit_id FROM near)
  ), e AS MATERIALIZED (
    SELECT q.ids[g.owner_no] AS permit_id, g.full_geom, g.partial_geom
    FROM q CROSS JOIN LATERAL ledger.impact_ground(p_plan_area_id, q.ids, q.dates) g
    WHERE q.ids IS NOT NULL
  )
  SELECT near.owner_no, e.permit_id, e.full_geom, e.partial_geom
  FROM near JOIN e ON e.permit_id = near.earlier_permit_id
  WHERE e.full_geom IS NOT NULL OR e.partial_geom IS NOT NULL
$$;
COMMENT ON FUNCTION ledger.earlier_charges(integer, bigint[], geometry[]) IS
  'For each permit and the box of its wetland ground: the permits decided earlier whose '
  'disturbance meets it, and the ground each was charged (full-factor, partial drain).';

CREATE OR REPLACE FUNCTION ledger.impact_measures(p_plan_area_id integer, p_permit_ids bigint[],
                                                  p_on date[], p_partial_drain_factor numeric[])
RETURNS TABLE (
  owner_no integer,
  full_geom geometry,
  partial_geom geometry,
  remainder_geom geometry,
  impact_acres numeric,
  impact_versions bigint[],
  wetland_versions bigint[],
  delineation_versions bigint[],
  structure_versions bigint[],
  bmp_versions bigint[],
  grading_versions bigint[],
  basin_versions bigint[],
  earlier_permits bigint[],
  cwmp_area_versions bigint[]
)
LANGUAGE sql STABLE AS $$
  WITH cw AS MATERIALIZED (   -- the plan boundary, once (no boundary loaded: no clip)
    SELECT ledger.union_all(array_agg(c.geom ORDER BY c.version_id)) AS geom,
           array_agg(c.version_id ORDER BY c.version_id) AS versions
    FROM core.cwmp_area c
    WHERE c.valid_to IS NULL AND c.plan_area_id = p_plan_area_id
  ), box AS (                -- each permit's disturbance, boxed
    SELECT u.n::integer AS owner_no, ST_Envelope(ST_Collect(d.geom)) AS box
    FROM unnest(p_permit_ids) WITH ORDINALITY AS u(permit_id, n)
    JOIN ledger.disturbance_of(p_plan_area_id, p_permit_ids) d ON d.permit_id = u.permit_id
    GROUP BY u.n
  ), boxes AS (              -- as an array by position (a sub-select as the argument would
    SELECT ARRAY(SELECT b.box    -- keep ledger.earlier_near from being inlined: planned anew
                 FROM generate_series(1, cardinality(p_permit_ids)) AS k(i)  -- at each call)
                 LEFT JOIN box b ON b.owner_no = k.i ORDER BY k.i) AS boxes
  ), near AS MATERIALIZED (   -- the permits decided earlier whose disturbance meets it
    SELECT n.* FROM boxes
    CROSS JOIN LATERAL ledger.earlier_near(p_plan_area_id, p_permit_ids, boxes.boxes) n
  ), extra AS (               -- those not measured anyway, with their baseline dates
    SELECT coalesce(array_agg(pm.permit_id ORDER BY pm.permit_id), '{}') AS ids,
           coalesce(array_agg(ledger.permit_baseline_on(pm.baseline_on, pm.decided_on)
                              ORDER BY pm.permit_id), '{}') AS dates
    FROM (SELECT DISTINCT near.earlier_permit_id AS id FROM near) n
    CROSS JOIN LATERAL (       -- by the permit index, not a hash of every permit
      SELECT p.permit_id, p.baseline_on, p.decided_on FROM core.permit p
      WHERE p.permit_id = n.id AND p.valid_to IS NULL) pm
    WHERE pm.permit_id <> ALL(array_remove(p_permit_ids, NULL))
  ), g AS MATERIALIZED (       -- what each disturbance meets of its wetland: one call for all
    SELECT x.*, (p_permit_ids || extra.ids)[x.owner_no] AS permit_id
    FROM extra CROSS JOIN LATERAL ledger.impact_ground(
      p_plan_area_id, p_permit_ids || extra.ids, p_on || extra.dates) x
  ), ex AS (                   -- ground charged earlier: wholly, and only as a partial drain
    SELECT n.owner_no,        -- (of the earlier permits whose ground meets the box of this
           ledger.union_all(array_agg(e.full_geom ORDER BY e.permit_id)) AS e_full,  -- one's:
           ledger.union_all(array_agg(e.partial_geom ORDER BY e.permit_id)) AS e_part,  -- the
           array_agg(e.permit_id ORDER BY e.permit_id) AS earlier  -- others take nothing away)
    FROM near n
    JOIN g m ON m.owner_no = n.owner_no
    JOIN g e ON e.permit_id = n.earlier_permit_id
    WHERE ST_Envelope(ST_Collect(m.full_geom, m.partial_geom))
          && ST_Collect(e.full_geom, e.partial_geom)
    GROUP BY n.owner_no
  ), c AS (
    SELECT g.*, p_partial_drain_factor[g.owner_no] AS factor, ex.earlier,
           ledger.union_all(ARRAY[ex.e_full, ex.e_part]) AS e_any,
           ledger.minus(ex.e_part, ex.e_full) AS e_part_only
    FROM g LEFT JOIN ex ON ex.owner_no = g.owner_no
    WHERE g.owner_no <= cardinality(p_permit_ids)
  ), charged AS (             -- inside the CWMP area (7: "wetland within the CWMP area")
    SELECT c.*,
           ledger.minus(CASE WHEN cw.geom IS NULL THEN c.full_geom
                             ELSE ledger.meet(c.full_geom, cw.geom) END, c.e_any) AS full_c,
           ledger.meet(CASE WHEN cw.geom IS NULL THEN c.full_geom
                            ELSE ledger.meet(c.full_geom, cw.geom) END, c.e_part_only) AS rem_c,
           ledger.minus(CASE WHEN cw.geom IS NULL THEN c.partial_geom
                             ELSE ledger.meet(c.partial_geom, cw.geom) END, c.e_any) AS part_c,
           cw.versions AS cw_versions
    FROM c CROSS JOIN cw
    OFFSET 0                   -- once per owner, not once per use
  )
  SELECT x.owner_no, x.full_c, x.part_c, x.rem_c,
         ledger.acres(x.full_c) + x.factor * ledger.acres(x.part_c)
         + (1 - x.factor) * ledger.acres(x.rem_c),
         x.impact_versions, x.wetland_versions, x.delineation_versions, x.structure_versions,
         x.bmp_versions, x.grading_versions, x.basin_versions, x.earlier,
         CASE WHEN x.full_geom IS NOT NULL OR x.partial_geom IS NOT NULL THEN x.cw_versions END
  FROM charged x
$$;
COMMENT ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]) IS
  'Impact of permits (parallel arrays: permit, baseline date, partial_drain_factor; owner_no = '
  'position): the ground charged at factor 1, at partial_drain_factor and at 1 - that factor '
  '(fully lost ground an earlier permit drained partially), impact acres, and the versions '
  'used, with the earlier permits whose charges were taken away. Permits with no disturbance: '
  'no row.';

-- The wetland a disturbance is measured on, near a window: the baseline wetland as of a date
-- and the wetland replacement built by then (the checks' view of what sql/110 charges).
CREATE OR REPLACE FUNCTION ledger.impact_wetland(p_plan_area_id integer, p_on date,
                                                 p_window geometry)
RETURNS geometry LANGUAGE sql STABLE AS $$
  SELECT ledger.union_all(ARRAY(
    SELECT ledger.meet(w.geom, p_window)
    FROM ledger.baseline_wetland(p_plan_area_id, p_on, p_window) w
    UNION ALL
    SELECT ledger.meet(r.geom, p_window)
    FROM core.replacement r
    WHERE r.geom && p_window AND r.valid_to IS NULL AND r.plan_area_id = p_plan_area_id
      AND r.component = 'wetland' AND r.status IN ('constructed', 'certified')
      AND coalesce(r.constructed_on, r.certified_on, r.status_on, current_date) <= p_on))
$$;
COMMENT ON FUNCTION ledger.impact_wetland(integer, date, geometry) IS
  'Wetland for impacts near a window as of a date: baseline wetland and replacement wetland '
  'built (constructed or certified) by then, clipped to the window.';

-- The part of a permit's wetland ground that permits decided earlier were charged, per earlier
-- permit (the 7(b) impact_charged_earlier finding, sql/270).
CREATE OR REPLACE FUNCTION ledger.impact_charged_earlier(p_plan_area_id integer,
                                                         p_permit_id bigint)
RETURNS TABLE (earlier_permit_id bigint, geom geometry)
LANGUAGE sql STABLE AS $$
  WITH me AS (
    SELECT pm.permit_id, ledger.permit_baseline_on(pm.baseline_on, pm.decided_on) AS on_date
    FROM core.permit pm
    WHERE pm.permit_id = p_permit_id AND pm.valid_to IS NULL
      AND pm.status NOT IN ('denied', 'withdrawn')
  ), g AS MATERIALIZED (
    SELECT ledger.union_all(ARRAY[x.full_geom, x.partial_geom]) AS ground
    FROM me CROSS JOIN LATERAL ledger.impact_ground(p_plan_area_id, ARRAY[me.permit_id],
                                                   ARRAY[me.on_date]) x
  )
  SELECT c.earlier_permit_id,
         ledger.meet(g.ground, ledger.union_all(ARRAY[c.full_geom, c.partial_geom]))
  FROM g CROSS JOIN LATERAL ledger.earlier_charges(p_plan_area_id, ARRAY[p_permit_id],
                                                   ARRAY[ST_Envelope(g.ground)]) c
  WHERE g.ground IS NOT NULL
$$;
COMMENT ON FUNCTION ledger.impact_charged_earlier(integer, bigint) IS
  'Per permit decided earlier: the part of a permit''s wetland ground it was charged already.';

REVOKE ALL ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]),
  ledger.impact_ground(integer, bigint[], date[]),
  ledger.earlier_charges(integer, bigint[], geometry[]),
  ledger.impact_charged_earlier(integer, bigint),
  ledger.impact_wetland(integer, date, geometry),
  ledger.disturbance_of(integer, bigint[]),
  ledger.earlier_near(integer, bigint[], geometry[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.impact_measures(integer, bigint[], date[], numeric[]),
  ledger.impact_ground(integer, bigint[], date[]),
  ledger.earlier_charges(integer, bigint[], geometry[]),
  ledger.impact_charged_earlier(integer, bigint),
  ledger.impact_wetland(integer, date, geometry),
  ledger.disturbance_of(integer, bigint[]),
  ledger.earlier_near(integer, bigint[], geometry[]) TO rulem_etl;
GRANT SELECT ON ledger.disturbance TO rulem_etl;
