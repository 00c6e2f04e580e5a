-- 001_roles: the application's group roles (cluster-wide, created once per cluster).
--   rulem_etl         writes layers through ingest and merge functions, and derived tables
--   rulem_staff       reads the published views (schema pub) and nothing else
--   rulem_gis         reads the published layers (schema pub) and nothing else
--   rulem_restricted  reads restricted layers (3(d) species records)
--   rulem_editor      edits what staff draw by hand, through the views of schema edit
-- The migration runs this file before the first revision (migrations/env.py: revisions grant
-- to these roles) and again with the other files at head. The migrating role (the owner)
-- needs CREATEROLE to create them; on a managed server a DBA creates them once with the
-- statements the refusal names (docs/operations.md, "A district's own server"). Two `db init`
-- on one cluster may race to create a role: the one that loses finds it created and goes on.
DO $$
DECLARE
  r text;
  missing text[] := '{}';
BEGIN
  FOREACH r IN ARRAY ARRAY['rulem_etl', 'rulem_staff', 'rulem_gis', 'rulem_restricted',
                       'rulem_editor'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      missing := missing || r;
    END IF;
  END LOOP;
  FOREACH r IN ARRAY missing LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
      EXCEPTION
        WHEN insufficient_privilege THEN
          -- every missing role in one message: a DBA runs the hint once and is done
          RAISE EXCEPTION 'group role% % % not exist and % may not create % (no CREATEROLE)',
              CASE WHEN cardinality(missing) > 1 THEN 's' ELSE '' END,
              array_to_string(missing, ', '),
              CASE WHEN cardinality(missing) > 1 THEN 'do' ELSE 'does' END,
              current_user,
              CASE WHEN cardinality(missing) > 1 THEN 'them' ELSE 'it' END
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'a DBA runs once on this server: ' || (
                    SELECT string_agg(format('CREATE ROLE %I NOLOGIN;', m), ' ')
                    FROM unnest(missing) AS m);
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
