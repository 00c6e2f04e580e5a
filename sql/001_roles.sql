-- 001_roles: the application's group roles (cluster-wide, created once per cluster).
--   rulem_etl         writes layers through ingest and merge functions, and derived tables
--   rulem_staff       reads the published views (schema pub) and nothing else
--   rulem_gis         reads the published layers (schema pub) and nothing else
--   rulem_restricted  reads restricted layers (3(d) species records)
--   rulem_editor      edits what staff draw by hand, through the views of schema edit
-- The migrating role (the owner) needs CREATEROLE to create them; on a managed server a DBA
-- creates them once with the statements below (docs/operations.md). Two `db init` on one
-- cluster may race to create a role: the one that loses finds it created and goes on.
DO $$
DECLARE
  r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['rulem_etl', 'rulem_staff', 'rulem_gis', 'rulem_restricted',
                       'rulem_editor'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
      EXCEPTION
        WHEN insufficient_privilege THEN
          RAISE EXCEPTION 'role % does not exist and % may not create it', r, current_user
            USING HINT = 'A DBA runs: CREATE ROLE ' || r || ' NOLOGIN;';
        WHEN duplicate_object OR unique_violation THEN
          -- another db init on the same cluster created it since the check above (committed:
          -- duplicate_object; or waited for, then committed: unique_violation on pg_authid)
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            RAISE;
          END IF;
      END;
    END IF;
  END LOOP;
END $$;
