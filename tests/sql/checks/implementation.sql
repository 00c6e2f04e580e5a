-- A replacement carried out, the TEP's review and the conditions of issuance (sql/263,
-- checks.check_implementation; docs/checks.md, "Implementation"): 7(e) monitoring_due (each
-- certified wetland replacement is monitored monitoring_years, 5, years from the year of its
-- certification; a year due with no record is a warning, an error once overdue by
-- monitoring_grace_days; measured: years missing), 7(e) surety_held (a decided permit's
-- replacement is secured by a held surety until certified and its monitoring met), 7(e)
-- impact_surety (an impact begun before the replacement was built needs a surety held that
-- day), 7(f) tep_before_decision (the TEP reviewed before the decision; measured: days after)
-- and 10 condition_overdue (a condition still open after its due date, a warning). Every
-- date here is years before any check date, so the answers do not move with the calendar
-- (only the days since, which the query masks).
--
-- Metres in EPSG:26915. CWMP area (-1000,-1000)-(5000,5000); parcel A-1 (0,0)-(600,600);
-- delineation D-1 over (0,0)-(1000,1000) approved 2010-01-01, wetland W1 (0,0)-(200,100);
-- permits approved 2014-04-03, each with a fill in W1. Worked by hand:
--   14-001 TEP 2014-03-01 -> 0 days, passes; F1 built 2015-05-01, certified 2015-06-01:
--          monitoring years 2015-2019, records for 2015-2017 (met) -> 2 missing, long
--          overdue: an error; not yet met, and surety S1 posted 2014-01-01 is held ->
--          surety_held passes; its impact began 2015-07-01, after F1 was built:
--          impact_surety passes; condition C1 due 2020-01-01 still open -> 1, a warning;
--          condition C2 met -> passes
--   14-002 TEP 2014-04-13 -> 10 days after the decision, fails; F2 constructed 2015-06-01;
--          its impact began 2015-05-01, before: surety S2 posted only 2015-06-15 -> none held
--          that day, impact_surety fails; S2 is held now -> surety_held passes
--   14-003 TEP 2014-03-01 -> passes; F3 certified 2015-06-01 with all five years met ->
--          monitoring passes; its surety S3 released 2021-01-01 is no longer needed ->
--          surety_held passes

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2010-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation;
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, tep_on,
                         impact_started_on, parcel_pins)
VALUES (1, '14-001', 'approved', '2014-04-03', '2014-03-01', '2015-07-01', '{A1}'),
       (1, '14-002', 'approved', '2014-04-03', '2014-04-13', '2015-05-01', '{A1}'),
       (1, '14-003', 'approved', '2014-04-03', '2014-03-01', NULL, '{A1}');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, p.permit_id, 'fill', 'I-' || p.permit_no,
       ST_Multi(ST_MakeEnvelope(x, 0, x + 10, 10, 26915))
FROM core.permit p
CROSS JOIN LATERAL (SELECT 20 * right(p.permit_no, 1)::int AS x) o;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              constructed_on, certified_on, source_fid, geom)
SELECT 1, p.permit_id, 'wetland', r.status, r.status_on, r.built, r.certified, r.fid,
       ST_Multi(ST_MakeEnvelope(r.x, 300, r.x + 50, 350, 26915))
FROM core.permit p
JOIN (VALUES ('14-001', 'F1', 'certified', DATE '2015-06-01', DATE '2015-05-01',
              DATE '2015-06-01', 0),
             ('14-002', 'F2', 'constructed', '2015-06-01', '2015-06-01', NULL, 100),
             ('14-003', 'F3', 'certified', '2015-06-01', '2015-05-01', '2015-06-01', 200))
  AS r (no, fid, status, status_on, built, certified, x)
  ON r.no = p.permit_no;
INSERT INTO core.replacement_monitoring (plan_area_id, replacement_id, monitoring_year,
                                         performance_standard, outcome, observed_on, source_fid)
SELECT 1, r.replacement_id, y, 'hydrology: saturated 30 days', 'met',
       make_date(y, 8, 1), r.source_fid || '-' || y
FROM core.replacement r
CROSS JOIN generate_series(2015, 2019) AS y
WHERE (r.source_fid = 'F1' AND y <= 2017) OR r.source_fid = 'F3';
INSERT INTO core.financial_assurance (plan_area_id, permit_id, amount, instrument, posted_on,
                                      released_on, source_fid)
SELECT 1, p.permit_id, 50000, 'letter_of_credit', s.posted, s.released, s.fid
FROM core.permit p
JOIN (VALUES ('14-001', 'S1', DATE '2014-01-01', NULL::date),
             ('14-002', 'S2', '2015-06-15', NULL),
             ('14-003', 'S3', '2014-01-01', '2021-01-01')) AS s (no, fid, posted, released)
  ON s.no = p.permit_no;
INSERT INTO core.permit_condition (plan_area_id, permit_id, condition, kind, state, due_on,
                                   met_on, source_fid)
SELECT 1, permit_id, c.text, c.kind, c.state, c.due, c.met, c.fid
FROM core.permit
CROSS JOIN (VALUES ('C1', 'Record the easement', 'easement', 'open', DATE '2020-01-01',
                    NULL::date),
                   ('C2', 'Post the surety', 'surety', 'met', '2014-01-01', '2014-01-01'))
  AS c (fid, text, kind, state, due, met)
WHERE permit_no = '14-001';

-- every evaluation, by permit and check (the days since a date passed, which grow with the
-- calendar, shown as N)
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit,
       regexp_replace(e.message, '[0-9]+ days (later|overdue)', 'N days \1', 'g') AS message
FROM checks.check_implementation(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no, e.paragraph, e.check_code, 9;
