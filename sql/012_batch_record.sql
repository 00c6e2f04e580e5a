-- 012_batch_record: the ingest record (ops.batch, ops.batch_note) is append-only in what it
-- says happened. Idempotent.
--
-- A batch row is written by the ingest that it records, inside that ingest's transaction: it
-- is inserted as `running` and, before commit, moves forward once to its outcome with its
-- counts. What it records about the file (plan area, layer, file name, checksum, size,
-- options), who ran it and when it started are set when it is inserted and never change, and
-- a batch that reached an outcome (loaded, failed, duplicate) never changes again. Who ran it
-- and when are the database's (current_user, clock_timestamp()), not the caller's word, and
-- so is the transaction that opened it (opened_xact): only that transaction may attribute
-- versions to the batch (sql/010_versioning.sql, "attribution"). Notes
-- are never changed or removed. These triggers hold for every role; only the owner can
-- disable them, and PostgreSQL logs that statement (docs/design.md, "Roles").

CREATE OR REPLACE FUNCTION ops.batch_stamp() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.created_by := current_user;
  NEW.started_at := clock_timestamp();
  NEW.opened_xact := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION ops.batch_stamp() IS
  'Trigger: a new ops.batch row records who ran the ingest, when, and in which transaction, '
  'as the database knows it.';

CREATE OR REPLACE FUNCTION ops.batch_moves_forward() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.plan_area_id, NEW.layer, NEW.file_name, NEW.file_sha256, NEW.file_size, NEW.options,
      NEW.created_by, NEW.started_at, NEW.opened_xact)
     IS DISTINCT FROM
     (OLD.plan_area_id, OLD.layer, OLD.file_name, OLD.file_sha256, OLD.file_size, OLD.options,
      OLD.created_by, OLD.started_at, OLD.opened_xact) THEN
    RAISE EXCEPTION 'ops.batch %: what a batch records about its file, who ran it and when '
      'never changes', OLD.batch_id USING ERRCODE = 'insufficient_privilege',
      HINT = 'A new delivery is a new batch.';
  END IF;
  IF OLD.status <> 'running' THEN
    RAISE EXCEPTION 'ops.batch %: the batch ended as %; its record is final', OLD.batch_id,
      OLD.status USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION ops.batch_moves_forward() IS
  'Trigger: an ops.batch row changes only while running (its outcome, counts and message), '
  'and never in what it records about the file, who ran it and when.';

DROP TRIGGER IF EXISTS batch_stamp ON ops.batch;
CREATE TRIGGER batch_stamp BEFORE INSERT ON ops.batch
  FOR EACH ROW EXECUTE FUNCTION ops.batch_stamp();
DROP TRIGGER IF EXISTS batch_moves_forward ON ops.batch;
CREATE TRIGGER batch_moves_forward BEFORE UPDATE ON ops.batch
  FOR EACH ROW EXECUTE FUNCTION ops.batch_moves_forward();

DROP TRIGGER IF EXISTS batch_note_append_only ON ops.batch_note;
CREATE TRIGGER batch_note_append_only BEFORE UPDATE OR DELETE ON ops.batch_note
  FOR EACH ROW EXECUTE FUNCTION ops.refuse_change();
DROP TRIGGER IF EXISTS batch_note_no_truncate ON ops.batch_note;
CREATE TRIGGER batch_note_no_truncate BEFORE TRUNCATE ON ops.batch_note
  FOR EACH STATEMENT EXECUTE FUNCTION ops.refuse_change();
