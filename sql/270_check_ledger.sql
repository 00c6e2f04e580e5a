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
--   credit_overlap       each wetland replacement feature of a permit that overlaps ground a
--                        stronger claim holds (sql/120 ledger.replacement_claim: counted ground
--                        belongs to the owner for whom it was counted first; a pending claim
--                        never displaces counted ground; between pending claims the one
--                        recorded first): this permit earns nothing there (the ledger excludes
--                        it); an error where the other owner's ground is counted, a warning
--                        where it is pending. Names the other owner and the acres; the owner
--                        who keeps the ground gets no finding.
--   impact_not_drawn     each structure, stormwater BMP and grading of a permit whose part in
--                        CWMP wetland (baseline and built replacement, sql/110) no impact
--                        polygon of the permit covers: the ledger counts it as impact all the
--                        same, so the finding asks for the record, not for the replacement.
--   impact_charged_earlier  the wetland a permit disturbs that a permit decided earlier was
--                        charged already (sql/110): not charged again; a warning naming the
--                        earlier permit and the acres.
--   transfer_unbacked    each credit transfer to a permit that no longer stands (sql/130: its
--                        giver withdrawn, denied or undecided, or short of the credit behind
--                        it on its date): it no longer counts; an error naming the giver.
-- 7(c)(vii): "Actual final site conditions within the CWMP will depend on approved wetland
-- delineations and detailed property information."
--   final_conditions     a permit whose counted credit falls on the approval of a delineation
--                        approved after its replacement was built (sql/120): a warning with the
--                        acres lost and the delineation, dated.
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
    SELECT ps.permit_id, ps.permit_no, ps.baseline_on, r.replacement_id, r.version_id, r.geom,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2
    FROM checks.permit_site ps
    JOIN core.replacement r ON r.permit_id = ps.permit_id AND r.valid_to IS NULL
                           AND r.component = 'wetland'
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), hit AS (                  -- the other owners' features with a stronger claim on its ground
    SELECT m.permit_id, m.permit_no, m.replacement_id, m.tol_m2,
           coalesce('permit ' || opm.permit_no, 'District project ' || o.district_project)
             AS other_owner,
           o.status AS other_status, ok.pending AS other_pending, ok.claim_on,
           ST_CollectionExtract(ST_Intersection(m.geom, o.geom), 3) AS part
    FROM mine m
    JOIN core.replacement o
      ON o.geom && m.geom AND o.valid_to IS NULL AND o.plan_area_id = p_plan_area_id
     AND o.component = 'wetland' AND o.permit_id IS DISTINCT FROM m.permit_id
     AND ST_Intersects(o.geom, m.geom)
    CROSS JOIN LATERAL ledger.replacement_claim(p_plan_area_id, m.version_id) mk
    CROSS JOIN LATERAL ledger.replacement_claim(p_plan_area_id, o.version_id) ok
    LEFT JOIN core.permit opm ON opm.permit_id = o.permit_id AND opm.valid_to IS NULL
    WHERE ok.claims
      AND (ok.pending, ok.claim_on, ok.recorded, ok.replacement_id)
          < (mk.pending, mk.claim_on, mk.recorded, mk.replacement_id)
  ), found AS (                -- per feature and other owner: the ground it loses
    SELECT h.permit_id, h.permit_no, h.replacement_id, h.other_owner,
           bool_and(h.other_pending) AS pending,
           string_agg(DISTINCT h.other_status, ', ') AS statuses,
           min(h.claim_on) FILTER (WHERE NOT h.other_pending) AS counted_on,
           ST_Union(h.part) AS part, min(h.tol_m2) AS tol_m2
    FROM hit h
    GROUP BY h.permit_id, h.permit_no, h.replacement_id, h.other_owner
  ), measured AS (
    SELECT f.*, round(core.acres(f.part), 4) AS acres FROM found f
    WHERE ST_Area(f.part) >= f.tol_m2
  )
  SELECT '7(b)', 'credit_overlap',
         CASE WHEN f.pending THEN 'warning' ELSE 'error' END,
         f.permit_id, NULL::bigint, f.replacement_id, false, f.acres, 0::numeric, 'acres',
         CASE WHEN f.pending
              THEN format('replacement of permit %s overlaps %s acres of %s''s %s replacement, '
                          'a pending claim recorded first: no credit for it while that claim '
                          'holds the ground', f.permit_no, f.acres, f.other_owner, f.statuses)
              ELSE format('replacement of permit %s overlaps %s acres of %s''s %s replacement, '
                          'counted since %s: that ground is %s''s, no credit for it',
                          f.permit_no, f.acres, f.other_owner, f.statuses,
                          CASE WHEN f.counted_on = 'infinity' THEN 'a date not on record'
                               ELSE f.counted_on::text END, f.other_owner) END,
         f.part
  FROM measured f
  UNION ALL            -- every other replacement feature of the permits: evaluated, passed
  SELECT '7(b)', 'credit_overlap', 'error', m.permit_id, NULL::bigint, m.replacement_id, true,
         0::numeric, 0::numeric, 'acres',
         format('replacement of permit %s overlaps no stronger claim', m.permit_no), NULL
  FROM mine m
  WHERE NOT EXISTS (SELECT 1 FROM measured f WHERE f.replacement_id = m.replacement_id)
$$;
COMMENT ON FUNCTION checks.check_credit_overlap(integer, bigint[]) IS
  '7(b): acres of each wetland replacement of a permit that another owner''s stronger claim '
  'holds (counted first; pending never over counted; pending by recording): an error where '
  'that ground is counted, a warning where it is pending.';

DROP FUNCTION IF EXISTS checks.check_impact_drawn(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_impact_drawn(p_plan_area_id integer,
                                                     p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH plan AS MATERIALIZED (SELECT checks.plan_boundary(p_plan_area_id) AS geom),
  st AS (
    SELECT ps.permit_id, d.feature_id, d.label, d.kind, d.geom,
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           ledger.impact_wetland(p_plan_area_id, ps.baseline_on, d.geom) AS wetland,
           (SELECT ST_Union(i.geom) FROM core.impact i
            WHERE i.permit_id = ps.permit_id AND i.valid_to IS NULL AND i.geom && d.geom)
             AS drawn
    FROM checks.permit_site ps
    JOIN ledger.disturbance d ON d.permit_id = ps.permit_id AND d.src <> 'impact'
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), gap AS (
    SELECT st.*,
           ST_CollectionExtract(ledger.minus(ST_Intersection(
             ST_Intersection(st.geom, st.wetland), plan.geom),
             st.drawn), 3) AS part
    FROM st, plan WHERE st.wetland IS NOT NULL  -- the boundary once, not once per structure
  )
  SELECT '7(b)', 'impact_not_drawn', 'error', g.permit_id, NULL::bigint, g.feature_id,
         NOT a.missing, a.acres, 0::numeric, 'acres',
         CASE WHEN a.missing
              THEN format('%s in %s acres of CWMP wetland with no impact polygon: counted as '
                          '%s; record the impact', g.label, a.acres,
                          CASE g.kind WHEN 'excavate' THEN 'excavation' ELSE 'fill' END)
              ELSE format('%s in wetland is recorded as impact', g.label) END,
         CASE WHEN a.missing THEN g.part END
  FROM gap g
  CROSS JOIN LATERAL (SELECT round(coalesce(core.acres(g.part), 0), 4) AS acres,
                             coalesce(ST_Area(g.part), 0) >= g.tol_m2 AS missing) a
  WHERE ST_Area(ST_Intersection(g.geom, g.wetland)) >= g.tol_m2
$$;
COMMENT ON FUNCTION checks.check_impact_drawn(integer, bigint[]) IS
  '7(b): acres of each structure, stormwater BMP and grading of a permit in CWMP wetland that '
  'no impact polygon records (the ledger counts them as impact all the same).';

DROP FUNCTION IF EXISTS checks.check_impact_charged_earlier(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_impact_charged_earlier(p_plan_area_id integer,
                                                               p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH ps AS (                 -- permits whose disturbance another permit's meets (an index
    SELECT ps.permit_id, ps.permit_no,  -- look-up; only those are measured)
           core.param_num(p_plan_area_id, 'area_tolerance_m2', ps.baseline_on) AS tol_m2,
           EXISTS (SELECT 1 FROM ledger.disturbance d
                   JOIN ledger.disturbance x
                     ON x.geom && d.geom AND x.plan_area_id = p_plan_area_id
                    AND x.permit_id <> d.permit_id
                   WHERE d.permit_id = ps.permit_id AND d.plan_area_id = p_plan_area_id)
             AS near
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND EXISTS (SELECT 1 FROM ledger.disturbance d WHERE d.permit_id = ps.permit_id)
  ), hit AS (
    SELECT ps.permit_id, ps.permit_no, ps.tol_m2, c.earlier_permit_id, c.geom
    FROM ps CROSS JOIN LATERAL ledger.impact_charged_earlier(p_plan_area_id, ps.permit_id) c
    WHERE ps.near AND c.geom IS NOT NULL AND ST_Area(c.geom) >= ps.tol_m2
  )
  SELECT '7(b)', 'impact_charged_earlier', 'warning', h.permit_id, NULL::bigint, NULL::bigint,
         false, round(core.acres(h.geom), 4), 0::numeric, 'acres',
         format('%s acres of the wetland permit %s disturbs were charged to permit %s, decided '
                'earlier (%s): not charged again', round(core.acres(h.geom), 4), h.permit_no,
                e.permit_no, coalesce(e.decided_on::text, 'undecided')),
         h.geom
  FROM hit h
  JOIN core.permit e ON e.permit_id = h.earlier_permit_id AND e.valid_to IS NULL
  UNION ALL
  SELECT '7(b)', 'impact_charged_earlier', 'warning', ps.permit_id, NULL::bigint, NULL::bigint,
         true, 0::numeric, 0::numeric, 'acres',
         format('no wetland permit %s disturbs was charged to an earlier permit', ps.permit_no),
         NULL
  FROM ps WHERE NOT EXISTS (SELECT 1 FROM hit h WHERE h.permit_id = ps.permit_id)
$$;
COMMENT ON FUNCTION checks.check_impact_charged_earlier(integer, bigint[]) IS
  '7(b): acres of wetland a permit disturbs that a permit decided earlier was charged already '
  '(not charged again), per earlier permit.';

DROP FUNCTION IF EXISTS checks.check_transfer_unbacked(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_transfer_unbacked(p_plan_area_id integer,
                                                          p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH ps AS (
    SELECT ps.permit_id, ps.permit_no
    FROM checks.permit_site ps
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
      AND EXISTS (SELECT 1 FROM core.credit_transfer t
                  WHERE t.to_permit_id = ps.permit_id AND t.valid_to IS NULL)
  ), t AS (
    SELECT ps.permit_no, x.*
    FROM ps CROSS JOIN LATERAL ledger.transfer_standing(p_plan_area_id, ARRAY[ps.permit_id]) x
    WHERE x.to_permit_id = ps.permit_id
  )
  SELECT '7(b)', 'transfer_unbacked', 'error', t.to_permit_id, NULL::bigint,
         t.credit_transfer_id, t.stands,
         CASE WHEN t.stands THEN 0 ELSE round(t.acres, 4) END, 0::numeric, 'acres',
         CASE WHEN t.stands
              THEN format('credit transfer %s of %s acres to permit %s stands on its giver''s '
                          'position on %s', t.transfer_key, round(t.acres, 4), t.permit_no,
                          t.transferred_on)
              ELSE format('credit transfer %s of %s acres from %s to permit %s no longer '
                          'counts: it %s', t.transfer_key, round(t.acres, 4),
                          coalesce('permit ' || (SELECT g.permit_no FROM core.permit g
                                                 WHERE g.permit_id = t.from_permit_id
                                                   AND g.valid_to IS NULL),
                                   'District project ' || t.from_district_project,
                                   'a permit no longer on record'),
                          t.permit_no, t.why) END,
         NULL::geometry
  FROM t
$$;
COMMENT ON FUNCTION checks.check_transfer_unbacked(integer, bigint[]) IS
  '7(b): acres of each credit transfer to a permit that no longer stands on its giver''s '
  'position (giver withdrawn, denied or undecided, or short of the credit on its date).';

DROP FUNCTION IF EXISTS checks.check_final_conditions(integer, bigint);
CREATE OR REPLACE FUNCTION checks.check_final_conditions(p_plan_area_id integer,
                                                         p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE SET jit = off AS $$
  WITH ps AS (                 -- permits with a built basin that a later delineation meets
    SELECT DISTINCT ps.permit_id, ps.permit_no
    FROM checks.permit_site ps
    JOIN core.replacement r
      ON r.permit_id = ps.permit_id AND r.valid_to IS NULL AND r.component = 'wetland'
     AND r.status IN ('constructed', 'certified')
    JOIN core.delineation d
      ON d.geom && r.geom AND d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
     AND d.status = 'approved'
     AND d.approved_on > coalesce(r.constructed_on, r.certified_on, r.status_on)
     AND ST_Intersects(d.geom, r.geom)
    WHERE ps.plan_area_id = p_plan_area_id
      AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
  ), fall AS (                 -- the counted credit it loses, by date (sql/120)
    SELECT ps.permit_id, ps.permit_no, x.d AS on_date, -sum(x.a) AS acres
    FROM ps
    CROSS JOIN LATERAL ledger.owner_base(p_plan_area_id, ARRAY[ps.permit_id]) b
    CROSS JOIN LATERAL unnest(b.part_kinds, b.part_dates, b.part_acres) AS x(k, d, a)
    WHERE x.k = 'counted'
    GROUP BY ps.permit_id, ps.permit_no, x.d
    HAVING round(sum(x.a), 4) < 0
  ), per AS (
    SELECT f.permit_id, f.permit_no, round(sum(f.acres), 4) AS acres,
           string_agg(format('%s acres from %s (delineation %s)', round(f.acres, 4), f.on_date,
                             (SELECT string_agg(d.delineation_no, ', ' ORDER BY d.delineation_no)
                              FROM core.delineation d
                              WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
                                AND d.status = 'approved' AND d.approved_on = f.on_date)),
                      '; ' ORDER BY f.on_date) AS what
    FROM fall f GROUP BY f.permit_id, f.permit_no
  )
  SELECT '7(c)(vii)', 'final_conditions', 'warning', ps.permit_id, NULL::bigint, NULL::bigint,
         p.permit_id IS NULL, coalesce(p.acres, 0), 0::numeric, 'acres',
         CASE WHEN p.permit_id IS NULL
              THEN format('delineations approved after the replacement of permit %s was built '
                          'map no less creditable wetland than it was credited', ps.permit_no)
              ELSE format('counted credit of permit %s falls where delineations approved after '
                          'its replacement was built map it as upland: %s', ps.permit_no,
                          p.what) END,
         NULL::geometry
  FROM ps LEFT JOIN per p ON p.permit_id = ps.permit_id
$$;
COMMENT ON FUNCTION checks.check_final_conditions(integer, bigint[]) IS
  '7(c)(vii): acres of counted credit a permit loses, dated, where a delineation approved after '
  'its replacement was built maps part of it as upland.';

GRANT EXECUTE ON FUNCTION checks.pending_statuses(integer, date),
  checks.check_balance(integer, bigint[]), checks.check_credit_overlap(integer, bigint[]),
  checks.check_impact_drawn(integer, bigint[]),
  checks.check_impact_charged_earlier(integer, bigint[]),
  checks.check_transfer_unbacked(integer, bigint[]),
  checks.check_final_conditions(integer, bigint[]) TO rulem_etl;

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
   'No acre of replacement is credited to two owners, and nothing recorded later takes ground '
   'that already counts: counted ground belongs to the owner for whom it was counted first; a '
   'pending claim never displaces it; between pending claims the first recorded keeps it.',
   'Acres of each wetland replacement feature of the permit overlapping another owner''s wetland '
   'replacement with a stronger claim (counted first; counted over pending; pending by first '
   'record), with the polygon; fails above zero (an error where the other ground is counted, a '
   'warning where it is pending).',
   'No wetland replacement.'),
  ('7(b)', 'impact_not_drawn', 'checks.check_impact_drawn',
   '270_check_ledger.sql', 'error', 'higher', 'acres', 67, false,
   'Every structure, stormwater BMP and grading in wetland is recorded as wetland impact (7(g) '
   'allows a structure, it does not excuse the replacement).',
   'Acres of each structure, stormwater BMP and grading inside CWMP wetland (baseline, and '
   'replacement wetland built by the baseline date) that no impact polygon of the permit covers; '
   'fails above zero (the ledger counts them as impact all the same).',
   'No structure, BMP or grading in wetland.'),
  ('7(b)', 'impact_charged_earlier', 'checks.check_impact_charged_earlier',
   '270_check_ledger.sql', 'warning', 'higher', 'acres', 68, false,
   'Every acre of wetland lost is charged once: wetland a permit decided earlier was charged is '
   'not charged again.',
   'Acres of the wetland the permit disturbs that a permit decided earlier was charged, per '
   'earlier permit, with the polygon; fails above zero (the ledger does not charge them again).',
   'No disturbance meeting another permit''s.'),
  ('7(b)', 'transfer_unbacked', 'checks.check_transfer_unbacked',
   '270_check_ledger.sql', 'error', 'higher', 'acres', 69, false,
   'Credit transferred to a permit stands on its giver''s position on the transfer''s date.',
   'Acres of each credit transfer to the permit that no longer stands (its giver withdrawn, '
   'denied or undecided, dated before the giver''s decision, or beyond the giver''s surplus on '
   'its date); fails above zero (the ledger no longer counts it).',
   'No credit transferred to the permit.'),
  ('7(c)(vii)', 'final_conditions', 'checks.check_final_conditions',
   '270_check_ledger.sql', 'warning', 'higher', 'acres', 77, false,
   'Actual final site conditions depend on approved wetland delineations: a delineation approved '
   'after a replacement was built measures its credit from its approval date.',
   'Acres of counted credit the permit loses where a delineation approved after its replacement '
   'was built maps part of it as upland, by approval date; fails above zero.',
   'No built replacement that a later approved delineation meets.');
SELECT checks.finish_registration('270_check_ledger.sql');
