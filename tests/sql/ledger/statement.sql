-- pub.ledger_statement and pub.ledger_statement_entry, the annual statement staff run
-- (sql/310, docs/ledger.md section 4a): the entries effective in a year; those posted after
-- the year ended (midnight 1 January next year, America/Chicago) are prior-period
-- adjustments; opening = every entry effective before the year, closing = opening + lines =
-- pub.plan_balance_as_of(31 December).
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. Everything on parcel A-1 (0,0)-(300,600);
-- delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01, wetland W1 (0,0)-(200,100).
--   permit 22-001, decided 2022-05-10: fill (0,0)-(100,50) in W1, 5,000 m2
--       -> impact 1.2355 (memo), required 1.2355 (debit)
--     certified replacement (0,200)-(100,300), no wetland, certified 2022-11-01: 10,000 m2
--       -> credit 2.4711 (credit), credit_hosted 2.4711 (memo)
--     transfer of 0.6178 acres to 22-002 on 2022-12-01 -> transfer_out 0.6178 (debit)
--   permit 22-002, decided 2022-08-01: fill (100,0)-(150,50) in W1, 2,500 m2
--       -> impact 0.6178 (memo), required 0.6178 (debit); transfer_in 0.6178 (credit)
-- 8 entries, all effective in 2022 and all posted now (after 2022 was first reported), so
-- all on line 110, prior-period adjustments:
--   debit  1.2355 + 0.6178 + 0.6178 = 2.4711
--   credit 2.4711 + 0.6178          = 3.0889
--   memo   1.2355 + 2.4711 + 0.6178 = 4.3244
--   balance 3.0889 - 2.4711         = 0.6178 = the closing balance of 2022 and the opening
--   balance of 2023; 2021 opens and closes at 0 with no entry.
-- Plan as of 2022-12-31: required 1.2355 + 0.6178 = 1.8533, credit net of transfers
-- 2.4711 - 0.6178 + 0.6178 = 2.4711, balance 0.6178, surplus; 22-001: 2.4711 - 0.6178 -
-- 1.2355 = 0.6178 surplus; 22-002: 0.6178 - 0.6178 = 0 balanced.

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
INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres,
                                  transferred_on, source_fid)
SELECT 1, f.permit_id, t.permit_id, 0.6178, '2022-12-01', 'T-1'
FROM core.permit f, core.permit t WHERE f.permit_no = '22-001' AND t.permit_no = '22-002';

-- recompute on this session, as `rulem-db recompute` does on one connection
SELECT ledger.start_run('queue') AS run \gset
SELECT ledger.enqueue_dated(:run) >= 0 AS dated_queued;
SELECT ledger.drain_all(:run) > 0 AS drained;
SELECT status, owners, entries, reversals FROM ledger.finish_run(:run);

SET ROLE rulem_staff;

SELECT line_no, line_code, debit_acres, credit_acres, memo_acres, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2022);

SELECT line_code, permit_no, pin, measure, entry_kind, acres, balance_acres, effective_on,
       reverses_entry_id
FROM pub.ledger_statement_entry('acd-53-62', 2022)
ORDER BY permit_no, measure;

SELECT line_code, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2021)
WHERE line_code IN ('opening_balance', 'closing_balance');

SELECT line_code, balance_acres, entry_count
FROM pub.ledger_statement('acd-53-62', 2023)
WHERE line_code IN ('opening_balance', 'adjustment', 'closing_balance');

SELECT required_acres, credit_acres, balance_acres, status
FROM pub.plan_balance_as_of('2022-12-31');

SELECT permit_no, required_acres, credit_acres, transfer_in_acres, transfer_out_acres,
       balance_acres, status
FROM pub.permit_balance_as_of('2022-12-31')
ORDER BY permit_no;

SELECT * FROM pub.ledger_statement('no-such-plan', 2022);

RESET ROLE;
