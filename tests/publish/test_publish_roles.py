"""Who reads what: staff and GIS read every published view (all of it, every column computed),
nothing else of ours, and can change nothing; restricted layers only for rulem_restricted.
Views are discovered from the catalogue, so views added later are covered too."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from publish_fixture import published_url  # noqa: F401  (fixture)

READERS = ("rulem_staff", "rulem_gis")
# PostGIS's catalogue views and QGIS's style table are readable by the readers by design.
PUBLIC_READABLE = {"public.spatial_ref_sys", "public.geometry_columns",
                   "public.geography_columns", "public.layer_styles"}


def _relations(conn: sa.Connection, schema: str) -> list[str]:
    return conn.execute(sa.text(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = :s AND c.relkind IN ('v', 'm', 'r', 'p') ORDER BY 1"),
        {"s": schema}).scalars().all()


@pytest.fixture
def conn(published_url: str):  # noqa: F811
    eng = sa.create_engine(published_url)
    with eng.connect() as c:
        yield c
    eng.dispose()


@pytest.mark.parametrize("role", READERS)
def test_readers_read_every_column_of_every_pub_view(conn: sa.Connection, role: str) -> None:
    views = _relations(conn, "pub")
    assert len(views) > 40
    failures = []
    conn.execute(sa.text(f"SET ROLE {role}"))
    for view in views:
        try:
            with conn.begin_nested():
                # Every row and column, so that whatever the view computes is computed.
                conn.execute(sa.text(f"SELECT md5(v::text) FROM pub.{view} v")).all()
        except sa.exc.DBAPIError as exc:
            failures.append(f"pub.{view}: {str(exc.orig).splitlines()[0]}")
    conn.execute(sa.text("RESET ROLE"))
    assert failures == []


@pytest.mark.parametrize("role", READERS)
def test_readers_read_nothing_outside_pub(conn: sa.Connection, role: str) -> None:
    conn.execute(sa.text(f"SET ROLE {role}"))
    readable = set(conn.execute(sa.text(
        "SELECT n.nspname || '.' || c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'pub') "
        "AND c.relkind IN ('r', 'v', 'm', 'p', 'f') "
        "AND has_table_privilege(c.oid, 'SELECT')")).scalars())
    # Outside pub, a reader executes only read-only functions that a pub view calls (a view
    # runs them with the reader's right); without USAGE on their schema it cannot call them.
    executable = conn.execute(sa.text(
        "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname IN ('core', 'ops', 'staging', 'ledger', 'checks', 'restricted') "
        "AND has_function_privilege(p.oid, 'EXECUTE') AND (p.provolatile = 'v' OR NOT EXISTS ("
        "  SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid "
        "  JOIN pg_class v ON v.oid = r.ev_class "
        "  WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = p.oid "
        "  AND v.relnamespace = 'pub'::regnamespace))")).scalars().all()
    usable = conn.execute(sa.text(
        "SELECT nspname FROM pg_namespace WHERE has_schema_privilege(oid, 'USAGE') "
        "AND nspname IN ('core', 'ops', 'staging', 'ledger', 'checks', 'restricted')")).all()
    conn.execute(sa.text("RESET ROLE"))
    assert readable <= PUBLIC_READABLE
    # The one thing a reader does outside pub: staff review findings (sql/287), through the
    # definer function that records their login; GIS clients do not.
    reviews = ["checks.review_finding(bigint,text,text,text)"] if role == "rulem_staff" else []
    assert executable == reviews
    assert [u.nspname for u in usable] == (["checks"] if reviews else [])


@pytest.mark.parametrize("role", (*READERS, "rulem_restricted"))
def test_readers_can_change_nothing(conn: sa.Connection, role: str) -> None:
    conn.execute(sa.text(f"SET ROLE {role}"))
    writable = conn.execute(sa.text(
        "SELECT n.nspname || '.' || c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
        "AND c.relkind IN ('r', 'v', 'm', 'p', 'f') "
        "AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE') "
        "  OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))"
    )).scalars().all()
    creatable = conn.execute(sa.text(
        "SELECT nspname FROM pg_namespace WHERE has_schema_privilege(oid, 'CREATE')")).all()
    # Functions of pub that may write (not declared STABLE or IMMUTABLE) stay with the owner.
    volatile = conn.execute(sa.text(
        "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname IN ('pub', 'restricted') AND p.provolatile = 'v' "
        "AND has_function_privilege(p.oid, 'EXECUTE')")).scalars().all()
    conn.execute(sa.text("RESET ROLE"))
    assert writable == []
    assert creatable == []
    assert volatile == []


@pytest.mark.parametrize(("sql", "match"), [
    ("UPDATE pub.parcel SET pin = 'x'", "permission denied"),
    ("DELETE FROM pub.cwmp_area", "permission denied"),
    ("SELECT * FROM pub.impact FOR UPDATE", "permission denied"),
    ("INSERT INTO public.layer_styles (stylename) VALUES ('mine')", "permission denied"),
    ("UPDATE public.layer_styles SET useasdefault = false", "permission denied"),
    ("CREATE VIEW pub.mine AS SELECT 1", "permission denied"),
])
def test_a_gis_client_that_tries_to_write_is_refused(conn: sa.Connection, sql: str,
                                                     match: str) -> None:
    with pytest.raises(sa.exc.ProgrammingError, match=match), conn.begin():
        conn.execute(sa.text("SET LOCAL ROLE rulem_gis"))
        conn.execute(sa.text(sql))


def test_restricted_layers_and_their_tiles_only_for_the_restricted_role(
        conn: sa.Connection) -> None:
    restricted = _relations(conn, "restricted")
    assert restricted == ["species_record", "species_record_history"]
    conn.execute(sa.text("SET ROLE rulem_restricted"))
    assert conn.execute(sa.text("SELECT count(*) FROM restricted.species_record")).scalar() == 1
    assert conn.execute(sa.text(
        "SELECT has_function_privilege('restricted.species_record_tile(integer, integer, "
        "integer)', 'EXECUTE')")).scalar()
    conn.execute(sa.text("RESET ROLE"))
    conn.rollback()
    for role in READERS:
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"), conn.begin():
            conn.execute(sa.text(f"SET LOCAL ROLE {role}"))
            conn.execute(sa.text("SELECT restricted.species_record_tile(0, 0, 0)"))
    styles = conn.execute(sa.text(
        "SELECT count(*) FROM public.layer_styles WHERE f_table_schema = 'restricted'")).scalar()
    assert styles == 2  # its style exists (a style, not data) for rulem_restricted's QGIS


def test_public_executes_no_published_function(conn: sa.Connection) -> None:
    public_exec = conn.execute(sa.text(
        "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname IN ('pub', 'restricted') "
        "AND has_function_privilege('public', p.oid, 'EXECUTE')")).scalars().all()
    assert public_exec == []
