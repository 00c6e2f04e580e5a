"""The privilege boundary, tried as real logins of each group role would try it.

Every read a role should have works; every write, DDL, lock, temporary object, restricted
extent, count or statistic it should not have is refused; and no SECURITY DEFINER function
reads anything a caller can create or set (an audit over pg_proc). The logins are created for
the test session with a password and connect over TCP, as staff, GIS clients and the ETL job
do (`SET ROLE` from a superuser would keep the superuser's session and its temporary schema).
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from rulem_db import db
from rulem_db.catalogue import hardening
from rulem_db.locks import reporting_wait

GROUPS = ("rulem_staff", "rulem_gis", "rulem_etl", "rulem_restricted")
READERS = ("rulem_staff", "rulem_gis")
SQUARE = "ST_Multi(ST_MakeEnvelope(1000, 1000, 1100, 1100, 26915))"  # 100 m: 2.4711 acres
# The schemas whose functions are rulem-db's own (PostgreSQL's and PostGIS's are audited for
# what a reader may call, not for how they are written).
OWN_SCHEMAS = ("core", "ops", "staging", "ledger", "checks", "pub", "restricted")


@pytest.fixture(scope="module")
def logins(admin_url: URL) -> Iterator[dict[str, URL]]:
    """One login per group role (member of it and nothing else), dropped afterwards."""
    suffix = f"{os.getpid()}_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    made: dict[str, URL] = {}
    admin = sa.create_engine(admin_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for group in GROUPS:
                name = f"{group}_login_{suffix}"
                conn.execute(sa.text(
                    f"CREATE ROLE {name} LOGIN PASSWORD :pw IN ROLE {group}"), {"pw": password})
                made[group] = admin_url.set(username=name, password=password)
        yield made
    finally:
        with admin.connect() as conn:
            for url in made.values():
                conn.execute(sa.text(f"DROP OWNED BY {url.username}"))
                conn.execute(sa.text(f"DROP ROLE IF EXISTS {url.username}"))
        admin.dispose()


@pytest.fixture
def secured(db_url: str) -> str:
    """A migrated clone holding one restricted species record (analyzed, so that the planner
    has statistics on it) and one parcel. The migration runs again on the clone: a database's
    own rights (who may create temporary objects) are not copied from its template."""
    db.migrate(db_url)
    eng = sa.create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.species_record (plan_area_id, species, source_fid, geom) "
            f"VALUES (1, 'Blanding''s turtle', 'S1', {SQUARE})"))
        conn.execute(sa.text(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
            f"VALUES (1, 'P-1', 'P1', {SQUARE})"))
    with eng.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE core.species_record"))
        conn.execute(sa.text("ANALYZE core.parcel"))
    eng.dispose()
    return db_url


def _as(logins: dict[str, URL], group: str, url: str) -> sa.Engine:
    login = logins[group]
    return sa.create_engine(sa.engine.make_url(url).set(username=login.username,
                                                        password=login.password),
                            poolclass=NullPool)


def _refused(eng: sa.Engine, sql: str, match: str = "permission denied") -> None:
    with pytest.raises(sa.exc.DBAPIError, match=match), eng.begin() as conn:
        conn.execute(sa.text(sql))


# --------------------------------------------------------------------------------------------
# SECURITY DEFINER functions


def _bodies(conn: sa.Connection) -> dict[str, list[str]]:
    """Source of every function of ours, by schema.name (all overloads together)."""
    out: dict[str, list[str]] = {}
    for name, src in conn.execute(sa.text(
            "SELECT n.nspname || '.' || p.proname, p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY(:s)"),
            {"s": list(OWN_SCHEMAS)}):
        out.setdefault(name, []).append(src)
    return out


CALL = re.compile(r"\b(" + "|".join(OWN_SCHEMAS) + r")\.([a-z_][a-z0-9_]*)\s*\(", re.I)
CALLER_MADE = re.compile(
    r"pg_temp|current_setting\s*\(\s*(?:'([a-z_]+)')?|set_config\s*\(", re.I)


def _caller_made(src: str, fixed: set[str]) -> str | None:
    """The first read of something a caller makes, or None. A setting of context 'internal'
    (block_size, server_version...) is fixed when the server is built or its cluster made: a
    caller cannot set it, so reading it by its literal name is no such read."""
    for hit in CALLER_MADE.finditer(src):
        if not (hit.group(1) and hit.group(1).lower() in fixed):
            return hit.group(0)
    return None


def test_definer_functions_pin_their_path_and_read_nothing_a_caller_makes(
        secured: str) -> None:
    """Every SECURITY DEFINER function of ours: a fixed search_path that starts with
    pg_catalog and ends with pg_temp, and neither it nor any function of ours it calls (by
    name, transitively) reads the caller's temporary schema or a session setting."""
    eng = sa.create_engine(secured, poolclass=NullPool)
    with eng.connect() as conn:
        definers = conn.execute(sa.text(
            "SELECT n.nspname || '.' || p.proname AS name, p.oid::regprocedure::text AS sig, "
            "(SELECT c FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%') AS path "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE p.prosecdef AND n.nspname = ANY(:s) ORDER BY 2"),
            {"s": list(OWN_SCHEMAS)}).all()
        bodies = _bodies(conn)
        fixed = set(conn.execute(sa.text(
            "SELECT name FROM pg_settings WHERE context = 'internal'")).scalars())
        # no role below the owner may create objects in a schema a definer searches
        creatable = conn.execute(sa.text(
            "SELECT r.rolname || ' on ' || n.nspname FROM pg_roles r CROSS JOIN pg_namespace n "
            "WHERE r.rolname = ANY(:g) AND n.nspname IN ('pg_catalog', 'public') "
            "AND has_schema_privilege(r.oid, n.oid, 'CREATE')"), {"g": list(GROUPS)}).all()
    eng.dispose()
    assert len(definers) > 10  # the audit sees them
    # ...and tells a setting the caller makes from one fixed with the cluster
    assert _caller_made("x := current_setting('search_path');", fixed)
    assert _caller_made("current_setting( 'rulem.user' , true)", fixed)
    assert _caller_made("x := current_setting('block_size')::int;", fixed) is None
    problems = []
    for d in definers:
        parts = [x.strip() for x in (d.path or "").removeprefix("search_path=").split(",")]
        if not d.path or parts[0] != "pg_catalog" or parts[-1] != "pg_temp":
            problems.append(f"{d.sig}: search_path {d.path!r} must be pg_catalog, ..., pg_temp")
        seen, todo = set(), [d.name]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for src in bodies.get(name, []):
                hit = _caller_made(src, fixed)
                if hit:
                    via = "" if name == d.name else f" (through {name})"
                    problems.append(f"{d.sig}{via} reads {hit!r}")
                todo += [f"{m.group(1).lower()}.{m.group(2).lower()}" for m in CALL.finditer(src)]
    assert problems == []
    assert creatable == []


def test_a_login_cannot_make_the_owner_run_its_code(secured: str,
                                                    logins: dict[str, URL]) -> None:
    """The attack that worked: a temporary view named like the check run's site table, over a
    temporary function, and the setting that told checks.buffer_site to read it; reading
    pub.buffer_transect then ran the function as the owner. A writer login (the only kind
    with temporary objects now) tries it; the function must never run."""
    eng = _as(logins, "rulem_etl", secured)
    with eng.connect() as conn:
        conn.execute(sa.text(
            "CREATE FUNCTION pg_temp.evil() RETURNS geometry LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'ran as %', current_user; END $$"))
        conn.execute(sa.text(
            "CREATE TEMP VIEW check_buffer_site AS SELECT 1 AS plan_area_id, 1::bigint AS "
            "permit_id, current_date AS baseline_on, pg_temp.evil() AS parcels, "
            "NULL::geometry AS edge, NULL::geometry AS wetland, NULL::geometry AS central, "
            "NULL::geometry AS buffer, NULL::geometry AS own_buffer, NULL::geometry AS effective"))
        conn.execute(sa.text("SELECT set_config('rulem.check_buffer_site', 'ready', false)"))
        for view in ("pub.buffer_transect", "pub.stormwater_volume", "pub.parcel_balance"):
            conn.execute(sa.text(f"SELECT count(*) FROM {view}")).scalar_one()
        conn.rollback()
    eng.dispose()
    # and the readers cannot even try: no temporary objects for them
    for group in READERS:
        reader = _as(logins, group, secured)
        _refused(reader, "CREATE TEMP TABLE check_buffer_site (x int)",
                 "permission denied to create temporary tables")
        _refused(reader, "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
                 "permission denied")
        reader.dispose()


# --------------------------------------------------------------------------------------------
# What each role may and may not do


@pytest.mark.parametrize("group", READERS)
def test_readers_read_pub_and_nothing_else(secured: str, logins: dict[str, URL],
                                           group: str) -> None:
    eng = _as(logins, group, secured)
    with eng.connect() as conn:
        views = conn.execute(sa.text(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'pub'::regnamespace "
            "AND c.relkind = 'v' ORDER BY 1")).scalars().all()
        assert len(views) > 40
        for view in views:  # every published view answers this login
            conn.execute(sa.text(f"SELECT count(*) FROM pub.{view}")).scalar_one()
        assert conn.execute(sa.text("SELECT pin FROM pub.parcel")).scalars().all() == ["P-1"]
    for sql in ("SELECT * FROM core.parcel", "SELECT * FROM core.species_record",
                "SELECT * FROM restricted.species_record", "SELECT * FROM ledger.entry",
                "SELECT * FROM ops.batch", "UPDATE pub.parcel SET pin = 'x'",
                "DELETE FROM pub.parcel", "INSERT INTO core.parcel (plan_area_id) VALUES (1)",
                "CREATE TABLE public.mine (x int)", "CREATE VIEW pub.mine AS SELECT 1",
                "CREATE TEMP TABLE mine (x int)",
                "ALTER TABLE ledger.entry DISABLE TRIGGER ALL",
                "SELECT ledger.start_run('all', 1)"):
        _refused(eng, sql, "permission denied|must be owner|does not exist")
    eng.dispose()


@pytest.mark.parametrize("group", READERS)
def test_readers_can_take_no_writer_lock(secured: str, logins: dict[str, URL],
                                         group: str) -> None:
    """Advisory locks are the writers' (the ingest, ledger and reconciliation locks): a
    reader that took one made every ingest wait."""
    eng = _as(logins, group, secured)
    for sql in ("SELECT pg_advisory_lock(hashtext('rulem-db reconciliation'), 1)",
                "SELECT pg_try_advisory_lock(hashtext('rulem-db reconciliation'), 1)",
                "SELECT pg_advisory_xact_lock(hashtext('rulem-ingest'), hashtext('parcel'))",
                "SELECT pg_advisory_lock_shared(1279607879, 1)",
                "SELECT pg_try_advisory_xact_lock(1280723283, 1)",
                "SELECT pg_advisory_lock(1)",
                "LOCK TABLE core.parcel IN ACCESS EXCLUSIVE MODE",
                "SELECT * FROM pub.parcel FOR UPDATE"):
        _refused(eng, sql)
    eng.dispose()
    writer = _as(logins, "rulem_etl", secured)
    with writer.begin() as conn:  # the writers keep them
        assert conn.execute(sa.text(
            "SELECT pg_try_advisory_xact_lock(hashtext('rulem-ingest'), hashtext('parcel'))"
        )).scalar_one()
    writer.dispose()


@pytest.mark.parametrize("group", READERS)
def test_readers_learn_nothing_of_where_restricted_records_are(
        secured: str, logins: dict[str, URL], group: str) -> None:
    """3(d) species records: not their extent (PostGIS reads the planner's statistics without
    asking for the right to read the table), not the statistics themselves, not their count
    or size. (rulem_etl writes them, so it reads core; rulem_restricted reads the layer.)"""
    eng = _as(logins, group, secured)
    for sql in ("SELECT ST_EstimatedExtent('core', 'species_record', 'geom')",
                "SELECT ST_EstimatedExtent('core', 'parcel', 'geom')",
                "SELECT _postgis_stats('core.species_record'::regclass, 'geom')",
                "SELECT _postgis_selectivity('core.species_record'::regclass, 'geom', "
                "ST_MakeEnvelope(0, 0, 1, 1, 26915))",
                "SELECT _postgis_index_extent('core.species_record'::regclass, 'geom')",
                "SELECT pg_stat_get_live_tuples('core.species_record'::regclass)",
                "SELECT pg_stat_get_tuples_inserted('core.species_record'::regclass)",
                "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'species_record'",
                "SELECT pg_relation_size('core.species_record')",
                "SELECT pg_total_relation_size('core.species_record')"):
        _refused(eng, sql)
    with eng.connect() as conn:
        for view in ("pg_stats", "pg_stats_ext"):
            assert conn.execute(sa.text(
                f"SELECT count(*) FROM {view} WHERE schemaname IN ('core', 'restricted')"
            )).scalar_one() == 0
    eng.dispose()


def test_the_restricted_role_reads_its_layer(secured: str, logins: dict[str, URL]) -> None:
    eng = _as(logins, "rulem_restricted", secured)
    with eng.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT species FROM restricted.species_record")).scalars().all() == [
            "Blanding's turtle"]
    _refused(eng, "DELETE FROM restricted.species_record", "permission denied|cannot delete")
    _refused(eng, "SELECT ST_EstimatedExtent('core', 'species_record', 'geom')")
    eng.dispose()


def test_the_writer_role_writes_only_through_the_rules(secured: str,
                                                       logins: dict[str, URL]) -> None:
    """rulem_etl writes layers and batches, but the audit trail only moves forward: a batch
    records its file, its runner and its start for good, a finished batch is final, notes
    are never changed; and it owns nothing, so it can switch no trigger off."""
    eng = _as(logins, "rulem_etl", secured)
    login = logins["rulem_etl"].username
    with eng.begin() as conn:
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, created_by, started_at) "
            "VALUES (1, 'parcel', 'parcels.gpkg', 'someone_else', '2001-01-01') "
            "RETURNING batch_id")).scalar_one()
        conn.execute(sa.text("INSERT INTO ops.batch_note (batch_id, kind, message) "
                             "VALUES (:b, 'warning', 'a note')"), {"b": batch})
        row = conn.execute(sa.text("SELECT created_by, started_at > now() - interval '1 hour' "
                                   "FROM ops.batch WHERE batch_id = :b"), {"b": batch}).one()
        assert tuple(row) == (login, True)  # the database's word, not the caller's
        conn.execute(sa.text("UPDATE core.parcel SET pin = 'P-2' WHERE pin = 'P-1'"))
    for sql, match in [
        (f"UPDATE ops.batch SET file_name = 'x.gpkg' WHERE batch_id = {batch}", "never changes"),
        (f"UPDATE ops.batch SET created_by = 'x' WHERE batch_id = {batch}", "never changes"),
        (f"UPDATE ops.batch_note SET message = 'x' WHERE batch_id = {batch}", "permission denied"),
        (f"DELETE FROM ops.batch_note WHERE batch_id = {batch}", "permission denied"),
        (f"DELETE FROM ops.batch WHERE batch_id = {batch}", "permission denied"),
        ("DELETE FROM core.parcel", "permission denied"),
        ("TRUNCATE core.parcel", "permission denied"),
        ("UPDATE ledger.entry SET acres = 0", "permission denied"),
        ("DELETE FROM ledger.entry", "permission denied"),
        ("DELETE FROM checks.finding", "permission denied"),
        ("ALTER TABLE core.parcel DISABLE TRIGGER ALL", "must be owner"),
        ("ALTER TABLE ops.batch DISABLE TRIGGER ALL", "must be owner"),
        ("CREATE TABLE core.mine (x int)", "permission denied"),
    ]:
        _refused(eng, sql, match)
    with eng.begin() as conn:  # the batch moves forward once, then is final
        conn.execute(sa.text("UPDATE ops.batch SET status = 'loaded', message = 'done' "
                             "WHERE batch_id = :b"), {"b": batch})
    _refused(eng, f"UPDATE ops.batch SET status = 'running' WHERE batch_id = {batch}",
             "its record is final")
    eng.dispose()


def test_the_database_is_hardened_where_a_superuser_migrated_it(secured: str) -> None:
    eng = sa.create_engine(secured, poolclass=NullPool)
    with eng.connect() as conn:
        assert hardening.gaps(conn) == []
    eng.dispose()


def test_a_writer_that_waits_for_a_lock_says_what_it_waits_for(secured: str) -> None:
    """A second ingest of a layer waits for the first; after a moment it says whom it waits
    for (the holder's database session), and goes on when the holder finishes."""
    eng = sa.create_engine(secured, poolclass=NullPool)
    key = "SELECT pg_advisory_xact_lock(hashtext('rulem-ingest'), hashtext('parcel'))"
    said: list[str] = []
    with eng.connect() as holder, eng.connect() as waiter:
        holder.begin()
        holder.execute(sa.text(key))
        holder_pid = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        timer = threading.Timer(2.0, holder.rollback)
        timer.start()
        started = time.monotonic()
        with waiter.begin(), reporting_wait(waiter, "the ingest lock of layer parcel",
                                            say=said.append, first=0.5):
            waiter.execute(sa.text(key))
        timer.join()
        assert time.monotonic() - started >= 1.5  # it did wait for the holder
    eng.dispose()
    assert len(said) == 1
    assert said[0].startswith("waiting for the ingest lock of layer parcel (advisory lock)")
    assert f"database session {holder_pid}" in said[0]


# --------------------------------------------------------------------------------------------
# The embedded default: who the commands run as, and the owner's bypass in the log

embedded_only = pytest.mark.skipif(bool(os.environ.get("RULEM_TEST_ADMIN_URL")),
                                   reason="the embedded cluster's own logins and log")


@embedded_only
def test_the_day_to_day_login_is_a_writer_that_owns_nothing() -> None:
    from rulem_db import config
    from rulem_db.local import cluster

    embedded = cluster.ensure_embedded()
    env = {k: os.environ.pop(k) for k in ("RULEM_DATABASE_URL",) if k in os.environ}
    try:
        assert config.database_url() == embedded.writer_url
        assert config.database_url(owner=True) == embedded.owner_url
    finally:
        os.environ.update(env)
    eng = sa.create_engine(embedded.writer_url, poolclass=NullPool)
    with eng.connect() as conn:
        row = conn.execute(sa.text(
            "SELECT pg_has_role(current_user, 'rulem_etl', 'member'), r.rolsuper, "
            "r.rolcreaterole, r.rolcreatedb, "
            "(SELECT count(*) FROM pg_class c WHERE c.relowner = r.oid) "
            "+ (SELECT count(*) FROM pg_proc p WHERE p.proowner = r.oid) "
            "+ (SELECT count(*) FROM pg_namespace n WHERE n.nspowner = r.oid) "
            "FROM pg_roles r WHERE r.rolname = current_user")).one()
    eng.dispose()
    assert tuple(row) == (True, False, False, False, 0)


@embedded_only
def test_the_owner_switching_a_trigger_off_leaves_a_line_in_the_server_log(
        secured: str) -> None:
    """Only the owner can disable the append-only triggers; the statement is logged with the
    role that ran it (log_statement = 'ddl', set by the embedded cluster)."""
    from rulem_db.local import cluster

    layout = cluster._layout()
    marker = f"rulem_bypass_probe_{secrets.token_hex(4)}"
    with layout.log_file.open("rb") as fh:
        start = fh.seek(0, os.SEEK_END)  # the log is long-lived: read only what this test adds
    eng = sa.create_engine(secured, poolclass=NullPool)
    with eng.connect() as conn:
        assert conn.execute(sa.text("SHOW log_statement")).scalar_one() == "ddl"
        conn.rollback()
        with conn.begin():
            conn.execute(sa.text(f"ALTER TABLE ledger.entry DISABLE TRIGGER ALL /* {marker} */"))
            conn.rollback()
    eng.dispose()

    def written() -> str:
        with layout.log_file.open("rb") as fh:
            fh.seek(start)
            return fh.read().decode(errors="replace")

    deadline = time.monotonic() + 10
    while marker not in written() and time.monotonic() < deadline:
        time.sleep(0.2)
    lines = [x for x in written().splitlines() if marker in x]
    assert lines and "DISABLE TRIGGER ALL" in lines[0]
