-- 160_ledger_posting: the book is append-only; recompute posts only differences.
-- For each line (owner, parcel, measure, effective date: an owner's credit and transfers can
-- take effect on several dates, sql/150) the open entry is the last new entry not yet
-- reversed; the posted acres of a line are the sum of its entries, which always equals its
-- open entry. Posting compares the desired lines (sql/150) with the open entries and, where
-- they differ, posts a reversal of the open entry (negated acres) and a new entry, both
-- tagged with the run, the reason and the input versions. Equal lines post nothing, so a
-- second recompute posts nothing.
-- Published acres (docs/ledger.md section 4): each new entry also carries the
-- 4-decimal figure published for its line. An owner's lines of one measure and date (one per
-- parcel, plus the line on no parcel) share the units the date adds to the owner's figure
-- rounded to 4 decimals (its cumulative figure by that date rounded, less the one by the date
-- before; one date: its total rounded) by largest remainder: every line gets its acres
-- rounded down to 4 decimals, and the units still missing go one each to the lines with the
-- largest remainders (ties: parcel id, the line on no parcel last). So as of any date the
-- owner's published lines add up to its exact figure then, rounded, and a line dated later
-- never moves a unit into an earlier date. So the published lines of an owner add up exactly to its
-- total rounded, and every published balance, a sum of published lines, adds up across
-- parcels, permits and the plan. A line is re-posted when its acres or its published acres
-- change (a unit can move between an owner's lines when one of them changes); a reversal
-- negates both. Entries posted before revision 0018 have no published acres: round(acres, 4)
-- stands for them, here and in the views.
-- Effective dates (docs/ledger.md 4a): each new entry carries its line's effective date
-- (sql/150; a line with none on record, an undecided permit's, keeps its open entry's date,
-- else today); a reversal carries the date of the entry it reverses. Desired lines meet their
-- open entries by line and date; those left over pair up within their (owner, parcel,
-- measure) in date order, so a line whose date moved (a permit decided, a status reached on
-- another date) is re-posted as a reversal and a new entry saying so.
-- Concurrency: posting takes each owner's transaction lock (ledger.owner_lock) in a fixed
-- order before it reads what is posted, so two recomputes of one owner run one after the
-- other and the second sees the first's entries.

DROP TRIGGER IF EXISTS entry_append_only ON ledger.entry;
CREATE TRIGGER entry_append_only BEFORE UPDATE OR DELETE ON ledger.entry
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS entry_no_truncate ON ledger.entry;
CREATE TRIGGER entry_no_truncate BEFORE TRUNCATE ON ledger.entry
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();

-- Effective dates (revision 0019, docs/ledger.md section 4a): posting dates every entry it
-- writes. An entry written otherwise (by hand, a test, an import) without one gets the date
-- of the entry it reverses, else the date it was posted; the trigger fires only for those.
CREATE OR REPLACE FUNCTION ledger.default_effective_on() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.effective_on := coalesce(
    (SELECT r.effective_on FROM ledger.entry r WHERE r.entry_id = NEW.reverses_entry_id),
    NEW.posted_at::date, current_date);
  RETURN NEW;
END $$;
COMMENT ON FUNCTION ledger.default_effective_on() IS
  'Fills ledger.entry.effective_on when an insert leaves it out: the reversed entry''s date, '
  'else the posting date.';
DROP TRIGGER IF EXISTS entry_default_effective_on ON ledger.entry;
CREATE TRIGGER entry_default_effective_on BEFORE INSERT ON ledger.entry
  FOR EACH ROW WHEN (NEW.effective_on IS NULL)
  EXECUTE FUNCTION ledger.default_effective_on();

CREATE OR REPLACE FUNCTION ledger.entry_kind(p_measure text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_measure IN ('required', 'transfer_out') THEN 'debit'
              WHEN p_measure IN ('credit', 'transfer_in') THEN 'credit'
              ELSE 'memo' END
$$;
COMMENT ON FUNCTION ledger.entry_kind(text) IS
  'Side of the book of a measure: debit (required, transfer_out), credit (credit, '
  'transfer_in), memo (everything else; never in a balance).';

-- ledger.owner_key (permit:<id> or project:<name>) is sql/100's.

DROP FUNCTION IF EXISTS ledger.post(bigint, integer, bigint[], text[], jsonb);
CREATE OR REPLACE FUNCTION ledger.post(p_run_id bigint, p_plan_area_id integer,
                                       p_permit_ids bigint[],
                                       p_district_projects text[] DEFAULT '{}',
                                       p_reasons jsonb DEFAULT '{}')
RETURNS TABLE (entries integer, reversals integer)
LANGUAGE plpgsql SET jit = off SET work_mem = '64MB' AS $$
DECLARE
  n_new integer;
  n_rev integer;
BEGIN
  PERFORM ledger.owner_lock(o.permit_id, o.district_project)
  FROM (SELECT DISTINCT x.permit_id, NULL::text AS district_project
        FROM unnest(p_permit_ids) AS x(permit_id) WHERE x.permit_id IS NOT NULL
        UNION
        SELECT DISTINCT NULL::bigint, x.d
        FROM unnest(p_district_projects) AS x(d) WHERE x.d IS NOT NULL
        ORDER BY 1, 2) o;

  WITH exact AS MATERIALIZED (
    SELECT d.*, ledger.owner_key(d.permit_id, d.district_project) AS okey,
           floor(d.acres * 10000) AS units   -- the line rounded down, in 0.0001 acre
    FROM ledger.desired_state(p_plan_area_id, p_permit_ids, p_district_projects) d
  ), dated AS (               -- an owner's units of a measure by date, from the cumulative
    SELECT c.okey, c.measure, c.effective_on,  -- figure rounded: as of any date the owner's
           round(sum(c.date_acres) OVER w * 10000)  -- lines add up to its exact figure then,
           - round((sum(c.date_acres) OVER w - c.date_acres) * 10000) AS date_units  -- rounded
    FROM (SELECT x.okey, x.measure, x.effective_on, sum(x.acres) AS date_acres
          FROM exact x GROUP BY x.okey, x.measure, x.effective_on) c
    WINDOW w AS (PARTITION BY c.okey, c.measure ORDER BY c.effective_on NULLS LAST
                 ROWS UNBOUNDED PRECEDING)
  ), desired AS MATERIALIZED (   -- largest remainder within each owner's lines of a measure
    SELECT x.permit_id, x.district_project, x.parcel_id, x.measure, x.acres, x.inputs, x.okey,
           x.effective_on,
           ((x.units
             + CASE WHEN row_number() OVER (PARTITION BY x.okey, x.measure, x.effective_on
                                            ORDER BY x.acres * 10000 - x.units DESC,
                                                     x.parcel_id NULLS LAST)
                         <= c.date_units - (sum(x.units) OVER w)
                    THEN 1 ELSE 0 END) / 10000)::numeric(14, 4) AS published
    FROM exact x
    JOIN dated c ON c.okey = x.okey AND c.measure = x.measure
                AND c.effective_on IS NOT DISTINCT FROM x.effective_on
    WINDOW w AS (PARTITION BY x.okey, x.measure, x.effective_on)
  ), open AS (
    -- A permit's entries all lie in its own plan area, so no plan-area condition here: with
    -- one, the planner ANDed the permit index with the plan area's, reading every entry of
    -- the plan area (12,556 index rows to find the 2 of a one-change recompute).
    SELECT e.entry_id, e.permit_id, e.district_project, e.parcel_id, e.measure, e.acres,
           coalesce(e.acres_published, round(e.acres, 4)) AS published,
           ledger.owner_key(e.permit_id, e.district_project) AS okey, e.effective_on
    FROM ledger.entry e
    WHERE e.reverses_entry_id IS NULL
      AND e.permit_id = ANY(p_permit_ids)
      AND NOT EXISTS (SELECT 1 FROM ledger.entry r WHERE r.reverses_entry_id = e.entry_id)
    UNION ALL
    SELECT e.entry_id, e.permit_id, e.district_project, e.parcel_id, e.measure, e.acres,
           coalesce(e.acres_published, round(e.acres, 4)),
           ledger.owner_key(e.permit_id, e.district_project), e.effective_on
    FROM ledger.entry e
    WHERE e.plan_area_id = p_plan_area_id AND e.reverses_entry_id IS NULL
      AND e.district_project = ANY(p_district_projects)
      AND NOT EXISTS (SELECT 1 FROM ledger.entry r WHERE r.reverses_entry_id = e.entry_id)
  ), dnum AS (                -- each desired line, numbered within its line and date
    SELECT d.*, row_number() OVER () AS did,
           row_number() OVER (PARTITION BY d.okey, coalesce(d.parcel_id, -1), d.measure,
                                           d.effective_on ORDER BY d.acres) AS drn
    FROM desired d
  ), onum AS (
    SELECT o.*, row_number() OVER (PARTITION BY o.okey, coalesce(o.parcel_id, -1), o.measure,
                                                o.effective_on ORDER BY o.entry_id) AS orn
    FROM open o
  ), same AS MATERIALIZED (   -- a desired line and an open entry of the same line and date
    -- Both sides' columns are carried here, not joined back to dnum and open by id below:
    -- the planner, expecting a row or two from each CTE, joined them back in nested loops,
    -- once per pair over every line (3,241 lines of 500 owners: 2.6 s of a 3.3 s posting;
    -- a full recompute over a posted ledger at state size did not end in 10 minutes). For
    -- the same reason dl and ol keep NOT IN: a hashed subplan, where NOT EXISTS became a
    -- nested-loop anti join over the CTE.
    SELECT d.did,
           d.okey AS d_okey, d.permit_id AS d_permit_id, d.district_project AS d_project,
           d.parcel_id AS d_parcel_id, d.measure AS d_measure, d.acres AS d_acres,
           d.published AS d_published, d.inputs AS d_inputs, d.effective_on AS d_effective_on,
           o.okey AS o_okey, o.permit_id AS o_permit_id, o.district_project AS o_project,
           o.parcel_id AS o_parcel_id, o.measure AS o_measure, o.entry_id AS o_entry_id,
           o.acres AS o_acres, o.published AS o_published, o.effective_on AS o_effective_on
    FROM dnum d JOIN onum o
      ON o.okey = d.okey AND coalesce(o.parcel_id, -1) = coalesce(d.parcel_id, -1)
     AND o.measure = d.measure AND o.effective_on = d.effective_on AND o.orn = d.drn
  ), dl AS (                  -- the others pair up in date order (a date that moved; a
    SELECT d.*, row_number() OVER (   -- floating date, NULL, with its open entry's date)
             PARTITION BY d.okey, coalesce(d.parcel_id, -1), d.measure
             ORDER BY d.effective_on NULLS LAST, d.did) AS rn
    FROM dnum d WHERE d.did NOT IN (SELECT same.did FROM same)
  ), ol AS (
    SELECT o.*, row_number() OVER (
             PARTITION BY o.okey, coalesce(o.parcel_id, -1), o.measure
             ORDER BY o.effective_on, o.entry_id) AS rn
    FROM open o WHERE o.entry_id NOT IN (SELECT same.o_entry_id FROM same)
  ), pairs AS (
    SELECT x.d_okey, x.d_permit_id, x.d_project, x.d_parcel_id, x.d_measure, x.d_acres,
           x.d_published, x.d_inputs, x.d_effective_on,
           x.o_okey, x.o_permit_id, x.o_project, x.o_parcel_id, x.o_measure, x.o_entry_id,
           x.o_acres, x.o_published, x.o_effective_on
    FROM same x
    UNION ALL
    SELECT d.okey, d.permit_id, d.district_project, d.parcel_id, d.measure, d.acres,
           d.published, d.inputs, d.effective_on,
           o.okey, o.permit_id, o.district_project, o.parcel_id, o.measure, o.entry_id,
           o.acres, o.published, o.effective_on
    FROM dl d
    FULL JOIN ol o
      ON o.okey = d.okey AND coalesce(o.parcel_id, -1) = coalesce(d.parcel_id, -1)
     AND o.measure = d.measure AND o.rn = d.rn
  ), diff AS MATERIALIZED (
    SELECT coalesce(p.d_okey, p.o_okey) AS okey,
           coalesce(p.d_permit_id, p.o_permit_id) AS permit_id,
           coalesce(p.d_project, p.o_project) AS district_project,
           coalesce(p.d_parcel_id, p.o_parcel_id) AS parcel_id,
           coalesce(p.d_measure, p.o_measure) AS measure,
           p.o_entry_id AS open_id, p.o_acres AS open_acres, p.o_published AS open_published,
           p.o_effective_on AS open_effective_on,
           p.d_acres AS acres, p.d_published AS published, p.d_inputs AS inputs,
           -- a line with no date on record keeps its open entry's date (else today)
           coalesce(p.d_effective_on, p.o_effective_on, current_date) AS effective_on,
           p.d_acres = p.o_acres AS rounding_only,
           p.d_acres = p.o_acres AND p.d_published = p.o_published AS date_only
    FROM pairs p
    WHERE p.d_acres IS DISTINCT FROM p.o_acres OR p.d_published IS DISTINCT FROM p.o_published
       OR p.d_effective_on <> p.o_effective_on   -- a dated fact moved (a NULL date never does)
  ), ins AS (
    INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, district_project, parcel_id,
                              measure, entry_kind, acres, acres_published, reverses_entry_id,
                              reason, inputs, effective_on)
    SELECT p_run_id, p_plan_area_id, y.permit_id, y.district_project, y.parcel_id, y.measure,
           ledger.entry_kind(y.measure), y.acres, y.published, y.reverses,
           coalesce(p_reasons ->> y.okey, 'recompute')
             || CASE WHEN y.date_only
                     THEN ' (same acres; effective date ' || y.open_effective_on || ' -> '
                          || y.new_effective_on || ')'
                     WHEN y.rounding_only
                     THEN ' (same acres; the owner''s 4-decimal rounding moved to or from '
                          'this line)' ELSE '' END,
           y.inputs, y.effective_on
    FROM (
      SELECT diff.okey, diff.permit_id, diff.district_project, diff.parcel_id, diff.measure,
             1 AS step, -diff.open_acres AS acres, -diff.open_published AS published,
             diff.open_id AS reverses, diff.rounding_only, diff.date_only,
             diff.open_effective_on, diff.effective_on AS new_effective_on,
             diff.open_effective_on AS effective_on,   -- a reversal keeps the date it reverses
             coalesce(diff.inputs,
                      (SELECT d2.inputs - 'parcel' FROM desired d2 WHERE d2.okey = diff.okey
                       LIMIT 1),
                      jsonb_build_object('permit', (
                        SELECT pv.version_id FROM core.permit pv
                        WHERE pv.permit_id = diff.permit_id
                        ORDER BY pv.valid_from DESC LIMIT 1))) AS inputs
      FROM diff WHERE diff.open_id IS NOT NULL
      UNION ALL
      SELECT diff.okey, diff.permit_id, diff.district_project, diff.parcel_id, diff.measure,
             2, diff.acres, diff.published, NULL, diff.rounding_only, diff.date_only,
             diff.open_effective_on, diff.effective_on, diff.effective_on, diff.inputs
      FROM diff WHERE diff.acres IS NOT NULL
    ) y
    ORDER BY y.okey, y.measure, y.parcel_id, y.new_effective_on, y.step
    RETURNING reverses_entry_id
  )
  SELECT count(*) FILTER (WHERE ins.reverses_entry_id IS NULL),
         count(*) FILTER (WHERE ins.reverses_entry_id IS NOT NULL)
  INTO n_new, n_rev
  FROM ins;
  RETURN QUERY SELECT n_new + n_rev, n_rev;
END $$;
COMMENT ON FUNCTION ledger.post(bigint, integer, bigint[], text[], jsonb) IS
  'Posts, for some owners, the difference between what the inputs imply (ledger.desired_state) '
  'and what is posted: a reversal plus a new entry per changed line; returns entries posted and '
  'how many were reversals. p_reasons maps ledger.owner_key to the reason text.';

REVOKE ALL ON FUNCTION ledger.default_effective_on() FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.entry_kind(text), ledger.owner_key(bigint, text),
  ledger.post(bigint, integer, bigint[], text[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.entry_kind(text), ledger.owner_key(bigint, text),
  ledger.post(bigint, integer, bigint[], text[], jsonb) TO rulem_etl;
GRANT SELECT, INSERT ON ledger.entry TO rulem_etl;
