-- 270_check_ledger: the 7(b) checks, on the ledger's own figures. Idempotent.
--
-- 7(b): "Wetland impact from fill, excavation or draining shall be replaced at a ratio of one
-- acre of replacement wetland for each acre of wetland impact."
--   replacement_deficit  an approved (or expired) permit whose required replacement exceeds its
--                        counted credit with transfers: an error with the shortfall in acres,
--                        a warning when proposed or constructed credit (not yet counted) would
--                        cover it, naming what is pending. The same for the plan area as a
--                        whole (a District-level finding: permit NULL). Read from the posted
--                        ledger's published figures (the nightly recomputes before it checks).
--   credit_overlap       each wetland replacement feature of a permit that overlaps ground an
--                        older claim holds (sql/120 ledger.claim_key: decision date, then entry
--                        order): the later owner earns nothing there (the ledger excludes it);
--                        an error where the older feature is at a counted status, a warning
--                        where it is still pending. Names both owners and the acres.
--   impact_not_drawn     each structure of a permit (not suspended, 6(f)(i)) whose part in
--                        baseline CWMP wetland no impact polygon of the permit covers: the
--                        ledger counts it as fill all the same (sql/110), so the finding asks
--                        for the record, not for the replacement.
-- Slivers under area_tolerance_m2 do not raise a finding; shortfalls are judged on the 4
-- decimals that are published.

CREATE OR REPLACE FUNCTION checks.pending_statuses(p_plan_area_id integer, p_on date)
RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT ARRAY(SELECT s FROM unnest(ARRAY['proposed', 'constructed']) s
               WHERE ledger.status_rank(s) < ledger.status_rank(
                       core.param_text(p_plan_area_id, 'counted_credit_status', p_on)))
$$;
COMMENT ON FUNCTION checks.pending_statuses(integer, date) IS
  'Replacement statuses below counted_credit_status on a date: credit that is pending.';

DROP FUNCTION IF EXISTS checks.check_balance(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_balance(p_plan_area_id integer,
                                                p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  -- the published figures (pub.permit_balance, pub.plan_balance), so that a finding and the
  -- balance staff read never disagree by a last-digit rounding; credit_acres is net of
  -- transfers there
  WITH per AS (
    SELECT ps.permit_id, pb.permit_no, pb.required_acres, pb.credit_acres,
           pb.credit_proposed_acres, pb.credit_constructed_acres,
           checks.pending_statuses(p_plan_area_id, ps.baseline_on) AS pending_statuses
    FROM checks.permit_site ps
    JOIN pub.permit_balance pb ON pb.permit_id = ps.permit_id
    WHERE ps.plan_area_id = p_plan_area_id AND ps.decided
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), plan AS (
    SELECT NULL::bigint, NULL::text, pl.required_acres, pl.credit_acres,
           pl.credit_proposed_acres, pl.credit_constructed_acres,
           checks.pending_statuses(p_plan_area_id, current_date)
    FROM pub.plan_balance pl
    WHERE pl.plan_area_id = p_plan_area_id AND checks.with_district(p_permit_ids)
  ), b AS (
    SELECT x.*, x.required_acres - x.credit_acres AS short,
           CASE WHEN 'proposed' = ANY (x.pending_statuses) THEN x.credit_proposed_acres
                ELSE 0 END
           + CASE WHEN 'constructed' = ANY (x.pending_statuses) THEN x.credit_constructed_acres
                  ELSE 0 END AS pending
    FROM (SELECT * FROM per UNION ALL SELECT * FROM plan) x
  )
  SELECT '7(b)', 'replacement_deficit',
         CASE WHEN b.short > 0 AND b.pending >= b.short THEN 'warning' ELSE 'error' END,
         b.permit_id, NULL::bigint, NULL::bigint, b.short <= 0, greatest(b.short, 0),
         0::numeric, 'acres',
         CASE WHEN b.short <= 0
              THEN format('%s: %s acres required, %s acres counted with transfers',
                          coalesce('permit ' || b.permit_no, 'the plan area'),
                          b.required_acres, b.credit_acres)
              WHEN b.pending >= b.short
              THEN format('%s is short %s acres of counted replacement (%s required, %s '
                          'counted with transfers); pending credit would cover it: %s acres '
                          'constructed, %s acres proposed, not yet at the counted status',
                          coalesce('permit ' || b.permit_no, 'the plan area'), b.short,
                          b.required_acres, b.credit_acres, b.credit_constructed_acres,
                          b.credit_proposed_acres)
              ELSE format('%s is short %s acres of replacement (%s required, %s counted with '
                          'transfers, %s pending)',
                          coalesce('permit ' || b.permit_no, 'the plan area'), b.short,
                          b.required_acres, b.credit_acres, b.pending)
              END,
         NULL::geometry
  FROM b
$$;
COMMENT ON FUNCTION checks.check_balance(integer, bigint[]) IS
  '7(b): each approved permit''s (and the plan area''s) shortfall of counted replacement, from '
  'the posted ledger.';

DROP FUNCTION IF EXISTS checks.check_credit_overlap(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_credit_overlap(p_plan_area_id integer,
                                                       p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH mine AS (
    SELECT ps.permit_id, ps.permit_no, ps.baseline_on, r.replacement_id, r.geom,
           k.claim_on, k.entry,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           checks.pending_statuses(p_plan_area_id, ps.baseline_on) AS pending_statuses
    FROM checks.permit_site ps
    JOIN core.replacement r ON r.permit_id = ps.permit_id AND r.valid_to IS NULL
                           AND r.component = 'wetland'
    CROSS JOIN LATERAL ledger.claim_key(p_plan_area_id, ps.permit_id, NULL) k
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), hit AS (
    SELECT m.*, o.replacement_id AS other_id, o.status AS other_status,
           coalesce('permit ' || opm.permit_no, 'District project ' || o.district_project)
             AS other_owner,
           ST_CollectionExtract(ST_Intersection(m.geom, o.geom), 3) AS part
    FROM mine m
    JOIN core.replacement o
      ON o.geom && m.geom AND o.valid_to IS NULL AND o.plan_area_id = p_plan_area_id
     AND o.component = 'wetland' AND o.permit_id IS DISTINCT FROM m.permit_id
     AND ST_Intersects(o.geom, m.geom)
    JOIN LATERAL ledger.claim_key(p_plan_area_id, o.permit_id,
                                  CASE WHEN o.permit_id IS NULL THEN o.district_project END) ok
      ON (ok.claim_on, ok.entry) < (m.claim_on, m.entry)
    LEFT JOIN core.permit opm ON opm.permit_id = o.permit_id AND opm.valid_to IS NULL
  ), found AS (
    SELECT h.*, round(core.acres(h.part), 4) AS acres FROM hit h
    WHERE ST_Area(h.part) >= h.tol_m2
  )
  SELECT '7(b)', 'credit_overlap',
         CASE WHEN f.other_status = ANY (f.pending_statuses) THEN 'warning' ELSE 'error' END,
         f.permit_id, NULL::bigint, f.replacement_id, false, f.acres, 0::numeric, 'acres',
         format('replacement of permit %s overlaps %s acres of %s''s %s replacement, an older '
                'claim: no credit for it', f.permit_no, f.acres, f.other_owner, f.other_status),
         f.part
  FROM found f
  UNION ALL            -- every other replacement feature of the permits: evaluated, passed
  SELECT '7(b)', 'credit_overlap', 'error', m.permit_id, NULL::bigint, m.replacement_id, true,
         0::numeric, 0::numeric, 'acres',
         format('replacement of permit %s overlaps no older claim', m.permit_no), NULL
  FROM mine m
  WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.replacement_id = m.replacement_id)
$$;
COMMENT ON FUNCTION checks.check_credit_overlap(integer, bigint[]) IS
  '7(b): acres of each wetland replacement of a permit that an older claim''s replacement '
  'already holds (an error where that ground is counted, a warning where it is pending).';

DROP FUNCTION IF EXISTS checks.check_impact_drawn(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_impact_drawn(p_plan_area_id integer,
                                                     p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  st AS (
    SELECT ps.permit_id, s.structure_id, s.kind, s.geom,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           (SELECT ST_Union(ledger.meet(w.geom, s.geom))
            FROM ledger.baseline_wetland(p_plan_area_id, ps.baseline_on, s.geom) w
            WHERE w.geom && s.geom) AS wetland,
           (SELECT ST_Union(i.geom) FROM core.impact i
            WHERE i.permit_id = ps.permit_id AND i.valid_to IS NULL AND i.geom && s.geom)
             AS drawn
    FROM checks.permit_site ps
    JOIN core.structure s ON s.permit_id = ps.permit_id AND s.valid_to IS NULL
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND s.buffer_exception IS DISTINCT FROM 'suspended_6fi'
  ), gap AS (
    SELECT st.*,
           ST_CollectionExtract(ledger.minus(ST_Intersection(
             ST_Intersection(st.geom, st.wetland), plan.geom),
             st.drawn), 3) AS part
    FROM st, plan WHERE st.wetland IS NOT NULL  -- the boundary once, not once per structure
  )
  SELECT '7(b)', 'impact_not_drawn', 'error', g.permit_id, NULL::bigint, g.structure_id,
         NOT a.missing, a.acres, 0::numeric, 'acres',
         CASE WHEN a.missing
              THEN format('%s in %s acres of CWMP wetland with no impact polygon: counted as '
                          'fill; record the impact', g.kind, a.acres)
              ELSE format('%s in wetland is recorded as impact', g.kind) END,
         CASE WHEN a.missing THEN g.part END
  FROM gap g
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(g.part), 0), 4) AS acres,
                             coalesce(ST_Area(g.part), 0) >= g.tol_m2 AS missing) a
  WHERE ST_Area(ST_Intersection(g.geom, g.wetland)) >= g.tol_m2
$$;
COMMENT ON FUNCTION checks.check_impact_drawn(integer, bigint[]) IS
  '7(b): acres of each structure of a permit in CWMP wetland that no impact polygon records '
  '(the ledger counts them as fill all the same).';

GRANT EXECUTE ON FUNCTION checks.pending_statuses(integer, date),
  checks.check_balance(integer, bigint[]), checks.check_credit_overlap(integer, bigint[]),
  checks.check_impact_drawn(integer, bigint[]) TO rulem_etl;

-- The checks this file's functions evaluate, registered in the catalogue (sql/200): the
-- runner (sql/280) calls every function a current row names.
INSERT INTO checks.registration (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                                 unit, sort_order, district_cases, title, measure,
                               not_applicable_when)
VALUES
  ('7(b)', 'replacement_deficit', 'checks.check_balance',
   '270_check_ledger.sql', 'error', 'higher', 'acres', 65, true,
   'Wetland impact is replaced at one acre of replacement wetland for each acre of impact: an '
   'approved permit''s counted credit (with transfers) covers its required replacement; so does '
   'the plan area''s.',
   'Per approved or expired permit, and for the plan area (no permit), acres of required '
   'replacement not covered by counted credit with transfers, from the posted ledger''s published '
   'figures; fails above zero (a warning when pending, proposed or constructed, credit would '
   'cover them).',
   'The permit is undecided.'),
  ('7(b)', 'credit_overlap', 'checks.check_credit_overlap',
   '270_check_ledger.sql', 'error', 'higher', 'acres', 66, false,
   'No acre of replacement is credited to two owners: ground an older claim holds earns the later '
   'owner nothing.',
   'Acres of each wetland replacement feature of the permit overlapping another owner''s wetland '
   'replacement with an older claim (decision date, then entry order), with the polygon; fails '
   'above zero (an error where the older ground is at a counted status, a warning where it is '
   'pending).',
   'No wetland replacement.'),
  ('7(b)', 'impact_not_drawn', 'checks.check_impact_drawn',
   '270_check_ledger.sql', 'error', 'higher', 'acres', 67, false,
   'Every structure in wetland is recorded as wetland impact (7(g) allows the structure, it does '
   'not excuse the replacement).',
   'Acres of each structure (not suspended, 6(f)(i)) inside baseline CWMP wetland that no impact '
   'polygon of the permit covers; fails above zero (the ledger counts them as fill all the same).',
   'No structure in wetland.');
SELECT checks.finish_registration('270_check_ledger.sql');
