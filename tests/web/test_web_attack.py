"""`rulem-db serve` against an attacker on the network (docs/publishing.md, "Web service").

A running server (tests/support/web_server.py, a subprocess on the reconciled demo) is attacked over
plain HTTP with each class: function calls through every filter language tipg accepts and
every place a filter can hide one, deep nesting, script in stored text, oversized bodies,
malformed parameters on every route. Each answer must be a 4xx with a one-line reason and no
internal text; the database must be as it was (a digest of the change log, the ledger, the
findings, the large objects and the web login's settings) and the server alive afterwards.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import httpx
import pytest
import sqlalchemy as sa
from web_server import ROOT, web_server_fixture  # noqa: F401  (provides `web_server`)

from rulem_web import filters, login, pages
from rulem_web.database import PoolSettings, create_pool

COLLECTION = "pub.parcel_balance"
# Text that must never reach a client: the database's, the driver's or Python's own words.
INTERNAL = re.compile(r"PostgreSQL \d|Traceback|asyncpg|psycopg|sqlalchemy|SELECT .* FROM|"
                      r"operator does not exist|invalid input syntax|relation \"|"
                      r"File \"/|line \d+, in ", re.I)
# Function calls an attacker would try; each must be refused by name, in every language.
CALLS = [
    ("version", "version()"),
    ("int4", "int4(version())"),
    ("pg_sleep", "pg_sleep(5)"),
    ("set_config", "set_config('statement_timeout', '0', false)"),
    ("lo_from_bytea", "lo_from_bytea(0, 'x')"),
    ("pg_catalog.version", "pg_catalog.version()"),
    ("current_setting", "current_setting('server_version')"),
    ("pg_read_file", "pg_read_file('/etc/passwd')"),
]
# Where a call can hide inside an otherwise allowed filter (cql2-text; {} is the call).
PLACES = [
    "{} = 1",
    "pin = {}",
    "upper({}) = 'X'",
    "impact_acres + {} > 0",
    "impact_acres BETWEEN {} AND 2",
    "pin IN ('a', {})",
    "NOT ({} IS NULL)",
    "pin LIKE {}",
    "S_INTERSECTS(geom, {})",
    "T_AFTER({}, TIMESTAMP('2020-01-01T00:00:00Z'))",
    "pin = 'a' OR (status = 'deficit' AND {} = 1)",
]


def get(server, path: str, **kw) -> httpx.Response:
    return httpx.get(server.base_url + path, timeout=60, **kw)


def items(server, collection: str = COLLECTION, **params) -> httpx.Response:
    return get(server, f"/collections/{collection}/items", params={"limit": 1, **params})


def digest(server) -> tuple:
    """What an attack could change: the change log of every published source (when the
    database has it), the ledger, the findings' reviews, the runs, the large objects, the
    reader logins' settings."""
    eng = sa.create_engine(server.url)
    try:
        with eng.connect() as conn:
            has_log = conn.execute(sa.text(
                "SELECT to_regprocedure('web.source_stamps()') IS NOT NULL")).scalar()
            stamps = conn.execute(sa.text(
                "SELECT md5(coalesce(string_agg(source || '=' || stamp, '|' ORDER BY source),"
                " '')) FROM web.source_stamps()")).scalar() if has_log else None
            return (stamps, *conn.execute(sa.text("""
                SELECT (SELECT count(*) || '/' || coalesce(max(entry_id), 0)
                        FROM ledger.entry),
                       (SELECT count(*) || '/' || coalesce(max(run_id), 0) FROM ops.run),
                       (SELECT md5(coalesce(string_agg(finding_case_id || ':' ||
                                   coalesce(review_note, ''), ',' ORDER BY 1), ''))
                        FROM checks.finding_case),
                       (SELECT count(*) FROM pg_largeobject_metadata),
                       (SELECT md5(coalesce(string_agg(r.rolname || coalesce(
                                   array_to_string(s.setconfig, ','), ''), '|'
                                   ORDER BY r.rolname), ''))
                        FROM pg_roles r LEFT JOIN pg_db_role_setting s ON s.setrole = r.oid
                        WHERE r.rolname IN (:login, 'rulem_gis', 'rulem_gis_web'))
            """), {"login": sa.engine.make_url(server.gis_url).username}).one())
    finally:
        eng.dispose()


def alive(server) -> bool:
    r = get(server, "/healthz")
    return r.status_code == 200 and r.json()["database"] == "ok"


def assert_clean_4xx(r: httpx.Response, status: int | tuple[int, ...] = 400) -> str:
    """A client error with a one-line reason and nothing internal; returns the reason."""
    expected = (status,) if isinstance(status, int) else status
    assert r.status_code in expected, (r.status_code, r.text[:300])
    assert not INTERNAL.search(r.text), r.text[:300]
    reason = r.json().get("detail") or r.json().get("error")
    assert isinstance(reason, str) and "\n" not in reason
    return reason


@pytest.fixture(scope="module")
def before(web_server) -> tuple:
    return digest(web_server)


# --- 1. filters call only allowed functions ---------------------------------------------

@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_a_function_call_in_cql2_text_is_refused_by_name(web_server, before, name,
                                                          call) -> None:
    for place in PLACES:
        r = items(web_server, filter=place.format(call))
        reason = assert_clean_4xx(r)
        assert name in reason and "not allowed" in reason, (place, reason)


@pytest.mark.parametrize("name,call", CALLS[:4], ids=[c[0] for c in CALLS[:4]])
def test_a_function_call_in_cql2_json_is_refused_by_name(web_server, before, name,
                                                          call) -> None:
    fn = {"op": name, "args": [] if name == "version" else [1]}
    trees = [
        {"op": "=", "args": [fn, 1]},
        {"op": "and", "args": [{"op": "=", "args": [{"property": "pin"}, "a"]},
                               {"op": "<", "args": [{"op": "+", "args": [fn, 1]}, 2]}]},
        {"op": "in", "args": [{"property": "pin"}, ["a", fn]]},
        {"op": "s_intersects", "args": [{"property": "geom"}, fn]},
        {"op": "=", "args": [{"op": name.upper(), "args": []}, 1]},
    ]
    for tree in trees:
        for lang in ({"filter-lang": "cql2-json"}, {}, {"filter-lang": "cql2-text"}):
            r = items(web_server, filter=json.dumps(tree), **lang)
            reason = assert_clean_4xx(r)
            assert "not allowed" in reason and name.lower() in reason.lower(), reason


def test_a_filter_names_only_the_collections_columns(web_server, before) -> None:
    for prop in ("version()", 'a") OR version() IS NOT NULL OR ("b', "nosuch",
                 "pg_sleep(1)"):
        tree = {"op": "=", "args": [{"property": prop}, 1]}
        reason = assert_clean_4xx(items(web_server, filter=json.dumps(tree),
                                        **{"filter-lang": "cql2-json"}))
        assert "is not a property" in reason


def test_literals_are_plain_values(web_server, before) -> None:
    bad = [
        {"op": "=", "args": [{"property": "pin"}, {"timestamp": "2020' || version() || '"}]},
        {"op": "s_intersects", "args": [{"property": "geom"}, {
            "type": "Point", "coordinates": [1, 2], "crs": "x'); SELECT version(); --"}]},
        {"op": "s_intersects", "args": [{"property": "geom"}, {"type": "Evil",
                                                               "coordinates": [1, 2]}]},
        {"op": "=", "args": [{"property": "impact_acres"}, {"function": {"name": "version"}}]},
    ]
    for tree in bad:
        r = items(web_server, filter=json.dumps(tree), **{"filter-lang": "cql2-json"})
        if r.status_code == 200:  # a literal rebuilt from its type and coordinates only
            assert tree["args"][1].get("crs"), r.text[:200]
        else:
            assert_clean_4xx(r)


def test_allowed_filters_still_answer(web_server) -> None:
    for f in ("pin = '14-31-22-12-0001'", "upper(pin) LIKE '14-%'",
              "casei(status) = casei('DEFICIT')", "impact_acres + 1 > 1",
              "S_INTERSECTS(geom, POLYGON((-94 44, -92 44, -92 46, -94 46, -94 44)))",
              "impact_acres BETWEEN 0 AND 100 AND status IN ('deficit', 'surplus')"):
        r = items(web_server, filter=f)
        assert r.status_code == 200, (f, r.text[:300])
    r = items(web_server, filter="pin = '14-31-22-12-0001'")
    assert r.json()["features"][0]["properties"]["pin"] == "14-31-22-12-0001"


def test_sql_errors_are_said_without_the_database_s_words(web_server) -> None:
    for params in ({"filter": "pin = 1"}, {"filter": "geom = 1"},
                   {"offset": str(10 ** 30)}, {"simplify": "nan"}):
        r = items(web_server, **params)
        assert_clean_4xx(r)


# --- 2. one GET cannot crash the process ------------------------------------------------

def test_deep_nesting_is_refused_before_the_parser(web_server, before) -> None:
    deep_text = "(" * 2000 + "pin = 'a'" + ")" * 2000
    deep_json = '{"op":"not","args":[' * 600 + '{"op":"=","args":[{"property":"pin"},"a"]}' \
        + "]}" * 600
    deep_list = "[" * 5000 + "1" + "]" * 5000
    for f in (deep_text, deep_json, deep_list, "pin = '" + "x" * 12_000 + "'"):
        r = httpx.get(web_server.base_url + f"/collections/{COLLECTION}/items",
                      params={"filter": f}, timeout=60)
        assert_clean_4xx(r)
    # nesting inside quotes is text, not nesting
    assert items(web_server, filter="pin = '" + "(" * 100 + "'").status_code == 200
    assert filters.nesting("((a))") == 2 and filters.nesting("'((('") == 0
    assert alive(web_server)


# --- 3. no stored script, nothing from another host -------------------------------------

HTML_PAGES = ["/collections", "/collections/pub.parcel", "/collections/pub.parcel/items",
              "/collections/pub.parcel/queryables", "/conformance", "/tileMatrixSets",
              "/tileMatrixSets/WebMercatorQuad", "/collections/pub.parcel/tiles",
              "/collections/pub.parcel/tiles/WebMercatorQuad", "/history/collections",
              "/api.html"]


@pytest.mark.parametrize("path", HTML_PAGES)
def test_html_pages_load_nothing_from_another_host(web_server, path) -> None:
    r = get(web_server, path, params={} if path == "/api.html" else {"f": "html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in r.headers
    assert "<script" not in r.text.lower() and " style=" not in r.text.lower()
    loads = re.findall(r'<(?:link|img|iframe|source)\b[^>]*\b(?:src|href)="([^"]*)"', r.text)
    for url in loads:
        assert url.startswith(web_server.base_url + "/") or url.startswith(("/", "data:")), url


def test_every_template_tipg_renders_is_ours_and_escaped() -> None:
    env = pages.environment()
    assert env.autoescape is True
    for name in pages.TIPG_TEMPLATES:
        assert (pages.TEMPLATE_DIR / f"{name}.html").is_file(), name
    tipg_templates = ROOT / ".venv/lib/python3.11/site-packages/tipg/factory.py"
    if tipg_templates.is_file():
        used = set(re.findall(r'template_name="(\w+)"', tipg_templates.read_text()))
        assert used <= set(pages.TIPG_TEMPLATES), used - set(pages.TIPG_TEMPLATES)


def test_host_and_forwarded_prefix_are_validated(web_server) -> None:
    for host in ('evil"><script>x', "a b", "x/y"):
        assert_clean_4xx(get(web_server, "/collections", headers={"Host": host}))
    for prefix in ('/a"><script>', "/a b", "/%3Cx", "javascript:alert(1)"):
        assert_clean_4xx(get(web_server, "/collections",
                             headers={"X-Forwarded-Prefix": prefix}))
    ok = get(web_server, "/collections", headers={"X-Forwarded-Prefix": "/gis/rule-m"})
    assert ok.status_code == 200 and "/gis/rule-m/collections" in ok.text


# --- 4. bounded requests, malformed parameters ------------------------------------------

def test_oversized_bodies_are_refused_before_they_are_read(web_server, before) -> None:
    big = b"x" * (3 * 1024 * 1024)
    r = httpx.post(web_server.base_url + "/api/screen", content=big, timeout=60)
    assert r.status_code == 413 and assert_clean_4xx(r, 413)

    def chunks():
        for _ in range(3):
            yield b"y" * (1024 * 1024)

    r = httpx.post(web_server.base_url + "/api/screen", content=chunks(), timeout=60)
    assert r.status_code == 413
    assert alive(web_server)


SCREEN_BODIES = [
    b'{"type":"Feature","properties":[1],"geometry":{"type":"Polygon","coordinates":'
    b'[[[-93,45],[-93,45.001],[-92.999,45.001],[-93,45]]]}}',
    b'{"type":"Feature","properties":{},"geometry":[1]}',
    b'{"type":"FeatureCollection","features":[1]}',
    b'{"type":"FeatureCollection","features":{"a":1}}',
    b'{"type":"Polygon","coordinates":[[["a","b"],[1,2],[3,4],[1,2]]]}',
    b'{"type":"Polygon","coordinates":[[[true,false],[1,2],[3,4],[1,2]]]}',
    b'{"type":"Polygon","coordinates":[[[NaN,1],[1,2],[3,4],[1,2]]]}',
    b'{"type":"Polygon","coordinates":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"type":{"x":1}}', b"[]", b"null", b"\xff\xfe", b"",
]


@pytest.mark.parametrize("body", SCREEN_BODIES, ids=range(len(SCREEN_BODIES)))
def test_malformed_screen_bodies_are_400(web_server, body) -> None:
    r = httpx.post(web_server.base_url + "/api/screen", content=body, timeout=60)
    assert_clean_4xx(r)


BAD_VALUES = ["", "a", "-1", "1e30", str(10 ** 30), "nan", "inf", "1,2", "a,b,c,d",
              "'; SELECT 1; --", '"', "%00", "\u00e9\u2028", "x" * 3000, "../../etc/passwd",
              "<script>", "{}", "[", "(" * 200]
ROUTES = {
    f"/collections/{COLLECTION}/items": [
        "filter", "filter-lang", "bbox", "datetime", "properties", "sortby", "ids", "limit",
        "offset", "geom-column", "datetime-column", "bbox-only", "simplify", "f", "pin",
        "bbox-crs"],
    f"/collections/{COLLECTION}/items/1": ["f", "properties", "geom-column", "bbox-only"],
    f"/collections/{COLLECTION}": ["f"],
    f"/collections/{COLLECTION}/queryables": ["f"],
    "/collections": ["bbox", "datetime", "type", "limit", "offset", "f"],
    "/history/collections": ["limit", "offset", "f"],
    f"/collections/{COLLECTION}/tiles/WebMercatorQuad/12/987/1472": [
        "filter", "bbox", "datetime", "properties", "sortby", "limit", "geom-column",
        "simplify", "ids"],
    "/collections/pub.parcel_history/tiles/WebMercatorQuad/12/987/1472": [
        "filter", "properties", "limit", "sortby"],
    f"/collections/{COLLECTION}/tiles/WebMercatorQuad/tilejson.json": [
        "minzoom", "maxzoom", "geom-column", "tile_format"],
    "/api/parcel": ["pin", "as_of"],
    "/api/permit": ["no", "as_of"],
    "/api/permits": ["q"],
    "/api/parcels": ["q"],
    "/api/plan": ["as_of"],
    "/tileMatrixSets/WebMercatorQuad": ["f"],
    "/conformance": ["f"],
}
PATHS = ["/collections/pub.nosuch/items", "/collections/nodot/items",
         f"/collections/{COLLECTION}/items/abc", f"/collections/{COLLECTION}/items/-1",
         f"/collections/{COLLECTION}/items/{10 ** 30}",
         f"/collections/{COLLECTION}/tiles/WebMercatorQuad/-1/0/0",
         f"/collections/{COLLECTION}/tiles/WebMercatorQuad/99/0/0",
         f"/collections/{COLLECTION}/tiles/WebMercatorQuad/2/9/9",
         f"/collections/{COLLECTION}/tiles/NoSuchTMS/2/1/1",
         f"/collections/{COLLECTION}/tiles/WebMercatorQuad/a/b/c",
         "/collections/pub.parcel_history/tiles/WebMercatorQuad/-1/0/0",
         "/tileMatrixSets/nosuch", "/static/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"]


def test_every_route_and_parameter_answers_bad_values_without_a_5xx(web_server,
                                                                     before) -> None:
    failures = []
    with httpx.Client(base_url=web_server.base_url, timeout=60) as client:
        for route, names in ROUTES.items():
            for name in names:
                for value in BAD_VALUES:
                    r = client.get(route, params={name: value})
                    if r.status_code >= 500 or INTERNAL.search(r.text):
                        failures.append((route, name, value[:20], r.status_code,
                                         r.text[:120]))
        for path in PATHS:
            r = client.get(path)
            if r.status_code >= 500 or INTERNAL.search(r.text):
                failures.append((path, "", "", r.status_code, r.text[:120]))
    assert not failures, failures[:10]
    assert alive(web_server)


# --- in depth: the pool, --set-role, the web login --------------------------------------

def test_a_pooled_connection_is_reset_to_the_service_settings(web_server) -> None:
    async def run() -> tuple:
        pool = await create_pool(PoolSettings(dsn=web_server.gis_url, min_size=1,
                                              max_size=1))
        try:
            async with pool.acquire() as conn:
                await conn.execute(
                    "SELECT set_config('statement_timeout', '0', false), "
                    "set_config('search_path', 'public', false), "
                    "set_config('default_transaction_read_only', 'off', false)")
                await conn.execute("SET SESSION ROLE rulem_gis")
            async with pool.acquire() as conn:
                return tuple(await conn.fetchrow(
                    "SELECT current_setting('statement_timeout'), "
                    "current_setting('search_path'), "
                    "current_setting('default_transaction_read_only'), current_user"))
        finally:
            await pool.close()

    timeout, path, read_only, user = asyncio.run(run())
    assert (timeout, path, read_only) == ("30s", "web, pub, public", "on")
    assert user == sa.engine.make_url(web_server.gis_url).username


def test_set_role_refuses_a_login_that_can_switch_back(web_server, admin_url) -> None:
    owner = sa.engine.make_url(web_server.url)
    with pytest.raises(login.ReaderError, match="superuser"):
        login.check_reader(web_server.url, "rulem_gis")
    out = subprocess.run(
        [sys.executable, "-m", "rulem_cli", "--db", web_server.url, "serve",
         "--set-role", "rulem_gis", "--port", "1"], cwd=ROOT, capture_output=True,
        text=True, timeout=120)
    assert out.returncode != 0 and "superuser" in (out.stderr + out.stdout)
    assert "--set-role rulem_gis" not in login.ReaderError.__doc__
    eng = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    user = "t_web_wide_login"
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {user}"))
            conn.execute(sa.text(f"CREATE ROLE {user} LOGIN NOINHERIT PASSWORD 'x1y2z3w4' "
                                 "IN ROLE rulem_gis, rulem_editor"))
        url = owner.set(username=user, password="x1y2z3w4").render_as_string(
            hide_password=False)
        with pytest.raises(login.ReaderError, match="rulem_editor"):
            login.check_reader(url, "rulem_gis")
    finally:
        with eng.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {user}"))
        eng.dispose()


# --- 7. the OGC API as GIS clients read it ----------------------------------------------

def test_numbers_titles_and_history_for_gis_clients(web_server) -> None:
    props = items(web_server).json()["features"][0]["properties"]
    assert isinstance(props["balance_acres"], float | int)
    listed = get(web_server, "/collections", params={"limit": 1000}).json()["collections"]
    history = get(web_server, "/history/collections",
                  params={"limit": 1000}).json()["collections"]
    assert listed and history and not any(c["id"].endswith("_history") for c in listed)
    assert all(c["id"].endswith("_history") for c in history)
    by_id = {c["id"]: c for c in listed}
    assert by_id[COLLECTION]["title"] and "balance" in by_id[COLLECTION]["description"]
    assert items(web_server, "pub.parcel_history").status_code == 200
    assert get(web_server, "/history/collections/pub.parcel_history/items",
               params={"limit": 1}).status_code == 200


# --- and afterwards ---------------------------------------------------------------------

def test_the_database_is_as_it_was_and_the_server_alive(web_server, before) -> None:
    """After the attacks above (module order); the tests below write on purpose."""
    assert digest(web_server) == before
    assert alive(web_server)


# --- what writes on purpose, after the digest above ---------------------------------

SCRIPT = '<img src=x onerror="document.title=1"><script>alert(1)</script>'


def test_stored_text_is_escaped_on_every_html_page(web_server, before) -> None:
    from rulem_db.checks import review

    eng = sa.create_engine(web_server.url)
    with eng.connect() as conn:
        case = conn.execute(sa.text("SELECT finding_case_id FROM checks.finding_case "
                                    "ORDER BY 1 LIMIT 1")).scalar_one()
    eng.dispose()
    review.review(web_server.url, case, None, note=SCRIPT)
    try:
        r = get(web_server, "/collections/pub.finding/items",
                params={"f": "html", "limit": 1000})
        assert r.status_code == 200 and "&lt;img src=x" in r.text
        assert "<img src=x" not in r.text and "<script>alert" not in r.text
        assert "script-src 'self'" in r.headers["content-security-policy"]
    finally:
        review.review(web_server.url, case, None, note="reviewed")


def test_the_web_login_password_is_not_logged_and_its_timeout_is_set(admin_url) -> None:
    from rulem_db.local import cluster

    emb = cluster.ensure_embedded()
    log = cluster.status()["log_file"]
    password = login._derived_password(emb.owner_url)
    with open(log, "rb") as fh:
        fh.seek(0, 2)
        start = fh.tell()
    login._provision(emb.admin_url, password)
    with open(log, "rb") as fh:
        fh.seek(start)
        written = fh.read().decode(errors="replace")
    assert "ALTER ROLE rulem_gis_web" in written  # DDL is logged here (log_statement=ddl)
    assert password not in written
    eng = sa.create_engine(admin_url.set(database="postgres"))
    try:
        with eng.connect() as conn:
            config = conn.execute(sa.text(
                "SELECT array_to_string(setconfig, ',') FROM pg_db_role_setting s "
                "JOIN pg_roles r ON r.oid = s.setrole WHERE r.rolname = :r "
                "AND s.setdatabase = 0"), {"r": login.WEB_LOGIN}).scalar()
    finally:
        eng.dispose()
    assert "statement_timeout=30s" in config


# --- 5. caching that tells the truth ----------------------------------------------------

def test_every_collection_s_etag_changes_with_its_sources(web_server) -> None:
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            sources = conn.execute(sa.text(
                "SELECT view_name, array_agg(source ORDER BY source) FROM "
                "web.pub_view_sources() GROUP BY 1")).all()
        listed = {c["id"] for c in get(web_server, "/collections",
                                       params={"limit": 1000}).json()["collections"]}
        listed |= {c["id"] for c in get(web_server, "/history/collections",
                                        params={"limit": 1000}).json()["collections"]}
        stale = []
        for view, tables in sources:
            cid = f"pub.{view}"
            if cid not in listed:
                continue
            first = items(web_server, cid)
            assert first.status_code == 200 and "etag" in first.headers, cid
            # a view over an opaque function ('*' only) follows every tracked table
            table = next((t for t in tables if t != "*"), "core.parcel")
            with eng.begin() as conn:  # a write statement on one source table
                col = conn.execute(sa.text(
                    "SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = "
                    "CAST(:t AS regclass) AND attnum > 0 AND NOT attisdropped "
                    "ORDER BY attnum LIMIT 1"), {"t": table}).scalar_one()
                conn.execute(sa.text(f"UPDATE {table} SET {col} = {col} WHERE false"))
            again = items(web_server, cid, headers={"If-None-Match": first.headers["etag"]})
            if again.status_code != 200:
                stale.append((cid, table))
        assert not stale, stale
    finally:
        eng.dispose()


def test_a_new_nightly_run_changes_reconciliation_run_s_etag(web_server) -> None:
    path = "/collections/pub.reconciliation_run/items"
    first = get(web_server, path)
    assert get(web_server, path, headers={"If-None-Match": first.headers["etag"]}
               ).status_code == 304
    eng = sa.create_engine(web_server.url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO ops.run (plan_area_id, flow, status, finished_at) "
                "SELECT plan_area_id, 'nightly_reconciliation', 'done', now() "
                "FROM core.plan_area LIMIT 1"))
    finally:
        eng.dispose()
    after = get(web_server, path, headers={"If-None-Match": first.headers["etag"]})
    assert after.status_code == 200 and after.headers["etag"] != first.headers["etag"]
