-- Runs once, when the `db` volume is empty (docker-entrypoint-initdb.d), as the postgres
-- superuser, before the postgis image's own 10_postgis.sh.
-- Passwords come from the db container's environment through psql's \getenv (psql >= 15), so
-- none is written here. Later password changes: ALTER ROLE ... PASSWORD in psql.
\set ON_ERROR_STOP on
\getenv rulem_owner_password RULEM_OWNER_PASSWORD
\getenv prefect_password PREFECT_DB_PASSWORD

\if :{?rulem_owner_password}
\else
do $$ begin raise exception 'RULEM_OWNER_PASSWORD is not set for the db service'; end $$;
\endif
\if :{?prefect_password}
\else
do $$ begin raise exception 'PREFECT_DB_PASSWORD is not set for the db service'; end $$;
\endif

-- The application's login: owns database rulem and its schema, runs the migrations, and
-- creates the staff/gis roles (CREATEROLE). The postgres superuser plays the part that
-- rulem_admin plays in the embedded cluster.
create role rulem_owner login createdb createrole password :'rulem_owner_password';

-- Prefect's own database in the same server, out of reach of the rulem roles.
create role prefect login password :'prefect_password';
create database prefect owner prefect;
revoke connect, temporary on database prefect from public;
\connect prefect
create extension if not exists pg_trgm;

\connect postgres
create database rulem owner rulem_owner;
\connect rulem
create extension if not exists postgis;
create extension if not exists btree_gist;

-- As in the embedded cluster: databases created later (e.g. by the test suite pointed here
-- with RULEM_TEST_ADMIN_URL) get the extensions too.
\connect template1
create extension if not exists postgis;
create extension if not exists btree_gist;
