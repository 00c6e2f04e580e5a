-- 998_grants: least privilege, re-applied after every change to the files before it.
--   PUBLIC gets nothing; staff and gis read pub only; restricted reads restricted;
--   etl writes core through the versioning triggers (which refuse DELETE and history edits)
--   and the staging and ops tables.
REVOKE ALL ON SCHEMA core, ops, staging, ledger, checks, pub, restricted FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA core, ops, staging, ledger, checks FROM PUBLIC;

GRANT USAGE ON SCHEMA pub TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
GRANT SELECT ON ALL TABLES IN SCHEMA pub TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
GRANT USAGE ON SCHEMA restricted TO rulem_restricted;
GRANT SELECT ON ALL TABLES IN SCHEMA restricted TO rulem_restricted;

GRANT USAGE ON SCHEMA core, ops, staging, ledger, checks TO rulem_etl;
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA core TO rulem_etl;
GRANT SELECT, INSERT, UPDATE ON ops.batch, ops.batch_note TO rulem_etl;
GRANT SELECT ON ops.setting, ops.sql_applied TO rulem_etl;
GRANT ALL ON ALL TABLES IN SCHEMA staging TO rulem_etl;
GRANT CREATE ON SCHEMA staging TO rulem_etl;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA core, ops, staging TO rulem_etl;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA core, ops TO rulem_etl;
REVOKE UPDATE ON core.parameter, core.susceptibility_limit, core.heritage_rank, core.tr55_cover,
  core.plan_area FROM rulem_etl;
