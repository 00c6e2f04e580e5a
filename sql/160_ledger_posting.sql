-- 160_ledger_posting: the book is append-only; recompute posts only differences.
-- For each line (owner, parcel, measure) the open entry is the last new entry not yet
-- reversed; the posted acres of a line are the sum of its entries, which always equals its
-- open entry. Posting compares the desired lines (sql/150) with the open entries and, where
-- they differ, posts a reversal of the open entry (negated acres) and a new entry, both
-- tagged with the run, the reason and the input versions. Equal lines post nothing, so a
-- second recompute posts nothing.
-- Published acres (spec section 4, docs/ledger.md section 4): each new entry also carries the
-- 4-decimal figure published for its line. An owner's lines of one measure (one per parcel,
-- plus the line on no parcel) share the owner's total rounded to 4 decimals by largest
-- remainder: every line gets its acres rounded down to 4 decimals, and the units still missing
-- from the rounded total go one each to the lines with the largest remainders (ties: parcel
-- id, the line on no parcel last). So the published lines of an owner add up exactly to its
-- total rounded, and every published balance, a sum of published lines, adds up across
-- parcels, permits and the plan. A line is re-posted when its acres or its published acres
-- change (a unit can move between an owner's lines when one of them changes); a reversal
-- negates both. Entries posted before revision 0018 have no published acres: round(acres, 4)
-- stands for them, here and in the views.
-- Effective dates (docs/ledger.md 4a): each new entry carries its line's effective date
-- (sql/150; a line with none on record, an undecided permit's, keeps its open entry's date,
-- else today); a reversal carries the date of the entry it reverses. A line is re-posted when
-- its dated effective date moves too (a permit decided, a status reached on another date).
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

CREATE OR REPLACE FUNCTION ledger.owner_key(p_permit_id bigint, p_district_project text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT coalesce('permit:' || p_permit_id::text, 'project:' || p_district_project) $$;
-- (::text: bigint || text is only STABLE, which kept this IMMUTABLE function from inlining)
COMMENT ON FUNCTION ledger.owner_key(bigint, text) IS
  'One text key for a ledger owner: permit:<id> or project:<name>.';

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
  ), desired AS MATERIALIZED (   -- largest remainder within each owner's lines of a measure
    SELECT x.permit_id, x.district_project, x.parcel_id, x.measure, x.acres, x.inputs, x.okey,
           x.effective_on,
           ((x.units
             + CASE WHEN row_number() OVER (PARTITION BY x.okey, x.measure
                                            ORDER BY x.acres * 10000 - x.units DESC,
                                                     x.parcel_id NULLS LAST)
                         <= round((sum(x.acres) OVER w) * 10000) - (sum(x.units) OVER w)
                    THEN 1 ELSE 0 END) / 10000)::numeric(14, 4) AS published
    FROM exact x
    WINDOW w AS (PARTITION BY x.okey, x.measure)
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
  ), diff AS MATERIALIZED (
    SELECT coalesce(d.okey, o.okey) AS okey,
           coalesce(d.permit_id, o.permit_id) AS permit_id,
           coalesce(d.district_project, o.district_project) AS district_project,
           coalesce(d.parcel_id, o.parcel_id) AS parcel_id,
           coalesce(d.measure, o.measure) AS measure,
           o.entry_id AS open_id, o.acres AS open_acres, o.published AS open_published,
           o.effective_on AS open_effective_on,
           d.acres, d.published, d.inputs,
           -- a line with no date on record keeps its open entry's date (else today)
           coalesce(d.effective_on, o.effective_on, current_date) AS effective_on,
           d.acres = o.acres AS rounding_only,
           d.acres = o.acres AND d.published = o.published AS date_only
    FROM desired d
    FULL JOIN open o
      ON o.okey = d.okey AND coalesce(o.parcel_id, -1) = coalesce(d.parcel_id, -1)
     AND o.measure = d.measure
    WHERE d.acres IS DISTINCT FROM o.acres OR d.published IS DISTINCT FROM o.published
       OR d.effective_on <> o.effective_on   -- a dated fact moved (a NULL date never does)
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
    ORDER BY y.okey, y.measure, y.parcel_id, y.step
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
