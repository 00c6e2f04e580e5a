-- Runs once, when the `db` volume is empty, after 01-roles.sql: the login of the `web`
-- service (rulem-db serve), a member of rulem_gis only (reads pub, nothing else), when
-- RULEM_WEB_PASSWORD is set for the db service. rulem_gis is created here if `db init` has
-- not made it yet (sql/001_roles.sql finds it and goes on). On a volume made before this
-- file existed, run the same statements once in psql (docker/README.md, section 9).
\set ON_ERROR_STOP on
\getenv rulem_web_password RULEM_WEB_PASSWORD
\if :{?rulem_web_password}
select :'rulem_web_password' <> '' as web_login \gset
\else
\set web_login false
\endif
\if :web_login
\connect rulem
do $$ begin
  if not exists (select 1 from pg_roles where rolname = 'rulem_gis') then
    create role rulem_gis nologin;
  end if;
end $$;
create role rulem_gis_web login password :'rulem_web_password' in role rulem_gis;
alter role rulem_gis_web set default_transaction_read_only = on;
\endif
