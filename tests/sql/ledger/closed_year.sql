-- Closed years (sql/176, sql/310, sql/311; docs/ledger.md section 4b): the writer issues the
-- 2022 statement; a fact of 2022 recorded afterwards (22-002 withdrawn) changes nothing staff
-- read about 2022, shows as a prior-period adjustment of 2023, and 2022 restated shows it.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. The site of statement.sql: on parcel A-1,
-- wetland W1 (0,0)-(200,100) (D-1, approved 2020-01-01);
--   22-001 decided 2022-05-10: fill (0,0)-(100,50), 5,000 m2 -> required 1.2355;
--     certified basin (0,200)-(100,300) 2022-11-01, 10,000 m2 -> credit 2.4711;
--   22-002 decided 2022-08-01: fill (100,0)-(150,50), 2,500 m2 -> required 0.6178.
-- (No transfer here: a withdrawn receiver keeps nothing.) Issued: 2022 closes at
-- 2.4711 - 1.2355 - 0.6178 = 0.6178 (surplus). After 22-002 is withdrawn (its two entries
-- reversed, effective 2022-08-01, posted after the issue): 2022 as issued still closes at
-- 0.6178, plan as of 2022-12-31 still required 1.8533; 2023 opens at 0.6178, prior-period
-- adjustments +0.6178 (the reversal of 0.6178 required; the impact reversal is memo),
-- closes at 1.2356 = 2022 restated = the plan balance now.

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', ST_Multi(ST_MakeEnvelope(0, 0, 1000, 1000, 26915)));
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom)
SELECT 1, delineation_id, 'W1', ST_Multi(ST_MakeEnvelope(0, 0, 200, 100, 26915))
FROM core.delineation WHERE delineation_no = 'D-1';
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 300, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on)
VALUES (1, '22-001', 'approved', '2022-05-10'), (1, '22-002', 'approved', '2022-08-01');
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'fill-' || permit_no,
       ST_Multi(CASE permit_no WHEN '22-001' THEN ST_MakeEnvelope(0, 0, 100, 50, 26915)
                               ELSE ST_MakeEnvelope(100, 0, 150, 50, 26915) END)
FROM core.permit;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, permit_id, 'wetland', 'certified', '2022-11-01', 'basin-1',
       ST_Multi(ST_MakeEnvelope(0, 200, 100, 300, 26915))
FROM core.permit WHERE permit_no = '22-001';

SELECT ledger.start_run('queue') AS run \gset
SELECT ledger.drain_all(:run) > 0 AS drained;
SELECT status, owners, entries, reversals FROM ledger.finish_run(:run);

-- the writer issues 2022 (staff may not)
SET ROLE rulem_staff;
SELECT year FROM ledger.issue_statement('acd-53-62', 2022);
SET ROLE rulem_etl;
SELECT year, tz, closing_balance_acres, entry_count, issued_by = session_user AS by_login
FROM ledger.issue_statement('acd-53-62', 2022);
RESET ROLE;

-- a fact of 2022 recorded afterwards; the run takes 22-001 too (its fill meets 22-002's, so
-- the order of charges on that wetland may move: sql/170) and posts nothing new for it
UPDATE core.permit SET status = 'withdrawn' WHERE permit_no = '22-002' AND valid_to IS NULL;
SELECT ledger.start_run('queue') AS run \gset
SELECT ledger.drain_all(:run) > 0 AS drained;
SELECT status, owners, entries, reversals FROM ledger.finish_run(:run);

SET ROLE rulem_staff;

SELECT year, closing_balance_acres, figures_unchanged, digest = digest_now AS same_digest
FROM pub.ledger_statement_issue;

SELECT line_code, debit_acres, credit_acres, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2022)
WHERE line_code IN ('opening_balance', 'prior_period', 'adjustment', 'closing_balance');

SELECT required_acres, credit_acres, balance_acres, status
FROM pub.plan_balance_as_of('2022-12-31');

SELECT permit_no, permit_status, required_acres, balance_acres
FROM pub.permit_balance_as_of('2022-12-31') ORDER BY permit_no;

SELECT line_code, debit_acres, memo_acres, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2023)
WHERE line_code IN ('opening_balance', 'prior_period', 'closing_balance');

SELECT line_code, permit_no, measure, acres, balance_acres, effective_on,
       reverses_entry_id IS NOT NULL AS reversal
FROM pub.ledger_statement_entry('acd-53-62', 2023) ORDER BY measure;

-- restated: 2022 as now known
SELECT line_code, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2022, NULL, true)
WHERE line_code IN ('opening_balance', 'adjustment', 'closing_balance');

SELECT required_acres, credit_acres, balance_acres, status
FROM pub.plan_balance_as_of('2022-12-31', 'infinity', true);

SELECT balance_acres FROM pub.plan_balance;

RESET ROLE;
