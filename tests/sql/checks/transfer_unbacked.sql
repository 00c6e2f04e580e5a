-- The 7(b) transfer_unbacked check (sql/270, checks.check_transfer_unbacked; which transfers
-- stand: sql/130, ledger.transfer_standing; docs/ledger.md): each credit transfer to a permit
-- stands on its giver's position on the transfer date (counted credit less what the giver
-- owes and has given before); one that no longer does (its giver withdrawn, denied or
-- undecided, or short of the credit behind it) no longer counts: an error with its acres.
--
-- Metres in EPSG:26915; 1 acre = 4046.8564224 m2. CWMP area (-1000,-1000)-(5000,5000);
-- parcel A-1 (0,0)-(600,600); permits on A-1: 23-001 approved 2023-01-10, with a wetland
-- replacement (0,200)-(100,300) certified 2023-02-01, 10,000 m2 = 2.4711 acres and no impact;
-- 23-002 and 23-003 approved 2023-04-03. Transfers from 23-001: T1 0.5 acres to 23-002 on
-- 2023-03-01, T2 1.0 acres to 23-003 on 2023-03-02. Worked by hand:
--   23-001's position: 2.4711 acres counted, 0 owed; T1 leaves 1.9711, T2 then 0.9711 ->
--   both stand (measured 0, passed)
--   23-001 withdrawn: its credit no longer counts -> T1 fails 0.5000, T2 fails 1.0000

INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'test plan', ST_Multi(ST_MakeEnvelope(-1000, -1000, 5000, 5000, 26915)));
INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
VALUES (1, 'A-1', 'A1', ST_Multi(ST_MakeEnvelope(0, 0, 600, 600, 26915)));
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, parcel_pins)
VALUES (1, '23-001', 'approved', '2023-01-10', '{A1}'),
       (1, '23-002', 'approved', '2023-04-03', '{A1}'),
       (1, '23-003', 'approved', '2023-04-03', '{A1}');
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              certified_on, source_fid, geom)
SELECT 1, permit_id, 'wetland', 'certified', DATE '2023-02-01', DATE '2023-02-01', 'F1',
       ST_Multi(ST_MakeEnvelope(0, 200, 100, 300, 26915))
FROM core.permit WHERE permit_no = '23-001';
INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres,
                                  transferred_on, source_fid)
SELECT 1, g.permit_id, r.permit_id, t.acres, t.on_date, t.fid
FROM (VALUES ('T1', '23-002', 0.5, DATE '2023-03-01'),
             ('T2', '23-003', 1.0, DATE '2023-03-02')) AS t (fid, receiver, acres, on_date)
JOIN core.permit g ON g.permit_no = '23-001'
JOIN core.permit r ON r.permit_no = t.receiver;

-- both transfers stand
SELECT p.permit_no, e.paragraph, e.check_code, e.severity, e.passed, e.measured_value,
       e.limit_value, e.unit, e.message
FROM checks.check_transfer_unbacked(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no;

-- the giver withdrawn: neither stands
UPDATE core.permit SET status = 'withdrawn' WHERE permit_no = '23-001' AND valid_to IS NULL;
SELECT p.permit_no, e.passed, e.measured_value, e.message
FROM checks.check_transfer_unbacked(1) e
JOIN core.permit p ON p.permit_id = e.permit_id AND p.valid_to IS NULL
ORDER BY p.permit_no;
