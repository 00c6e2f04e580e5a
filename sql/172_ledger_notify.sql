-- Telling a waiting recompute service that the change queue has work (rulem-db watch,
-- rulem_db/ledger/watch.py, docs/ledger.md section 7).
--
-- Why a notification and not polling: the queue triggers (sql/170) already know the moment an
-- input changes; one NOTIFY per statement that queued something lets a resident process that
-- keeps its session recompute within a second of the commit, and sleep otherwise. PostgreSQL
-- delivers a notification only when the queuing transaction commits (a rolled-back edit wakes
-- nobody) and folds identical notifications of one transaction into one, so a bulk ingest
-- sends one, not one per row. The payload is empty: the queue itself says what to do.

CREATE OR REPLACE FUNCTION ledger.notify_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rulem_ledger_queue', '');
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.notify_queue() IS
  'Statement trigger on ledger.change_queue: NOTIFY rulem_ledger_queue (empty payload) when '
  'a statement queued owners, delivered at commit; rulem-db watch listens for it.';

DROP TRIGGER IF EXISTS ledger_queue_notify ON ledger.change_queue;
CREATE TRIGGER ledger_queue_notify AFTER INSERT ON ledger.change_queue
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.notify_queue();

REVOKE ALL ON FUNCTION ledger.notify_queue() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.notify_queue() TO rulem_etl;
