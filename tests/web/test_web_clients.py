"""Real GIS clients against `rulem-db serve` on the reconciled demo, as a district's GIS staff
use them (docs/publishing.md, "Web service"): OWSLib's OGC API Features client (Python
scripts, notebooks) and QGIS's OAPIF provider (Debian's QGIS 3.22, headless, driven by
tests/support/web_qgis_driver.py). GDAL's OAPIF driver is tests/web/test_web_api.py's.

Every figure is compared with what SQL on the served database gives: counts, acre sums,
the rows a filter selects, the collections' titles (the views' COMMENTs). One server for the
module (tests/web_server.py); nothing here writes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
import sqlalchemy as sa
from markupsafe import escape
from owslib.ogcapi.features import Features
from qgis_run import drive, qgis_python  # noqa: F401  (fixture)
from web_server import web_server_fixture  # noqa: F401  (provides `web_server`)

from rulem_web.app import title_of

BALANCE = "pub.parcel_balance"
ACRES = ("impact_acres", "required_acres", "credit_acres", "balance_acres")
PAGE = 100          # small enough that the larger demo views take several pages
# pub.buffer_transect computes every transect on each read (0.7 s a page on the demo, whatever
# the page): its 1,839 rows are paged in fives of this, not nineteen pages of PAGE.
PAGE_OF = {"pub.buffer_transect": 400}
QGIS_DRIVER = Path(__file__).resolve().parents[1] / "support" / "web_qgis_driver.py"


def sql(web_server, query: str, **params) -> list[sa.Row]:
    """Rows of a query on the served database (as its superuser)."""
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            return list(conn.execute(sa.text(query), params))
    finally:
        eng.dispose()


@pytest.fixture(scope="module")
def client(web_server) -> Features:
    """OWSLib's client as a user makes it: from the service's address alone."""
    return Features(web_server.base_url, timeout=120)


def west_half(web_server) -> tuple[float, float, float, float]:
    """The western half of the demo plan area, as a longitude/latitude bbox."""
    w, s, e, n = sql(web_server, """
        SELECT ST_XMin(b), ST_YMin(b), ST_XMax(b), ST_YMax(b)
        FROM (SELECT ST_Transform(ST_Envelope(geom), 4326)::box2d AS b
              FROM pub.plan_balance) p""")[0]
    return (w, s, (w + e) / 2, n)


def every_page(client: Features, collection: str, **params) -> tuple[list[dict], int, int]:
    """All features of a collection, following its `next` links as a client does; the
    features, the numberMatched of the first page, and the number of pages."""
    features: list[dict] = []
    params = {"limit": PAGE, **params}
    matched, pages = None, 0
    while True:
        page = client.collection_items(collection, **params)
        pages += 1
        matched = page["numberMatched"] if matched is None else matched
        features += page["features"]
        following = [link for link in page["links"] if link["rel"] == "next"]
        if not following:
            return features, matched, pages
        href = urlsplit(following[0]["href"])
        assert href.path.endswith(f"/collections/{collection}/items")
        params = dict(parse_qsl(href.query))


# --- OWSLib's OGC API Features client ---------------------------------------------------

def test_owslib_reads_the_landing_page_and_conformance(client, web_server) -> None:
    rels = {link["rel"]: link["href"] for link in client.links}
    assert rels["self"].rstrip("/") == web_server.base_url
    assert {"service-desc", "conformance", "data"} <= set(rels)
    conforms = set(client.conformance()["conformsTo"])
    ogc = "http://www.opengis.net/spec/"
    assert {ogc + "ogcapi-features-1/1.0/conf/core", ogc + "ogcapi-features-1/1.0/conf/geojson",
            ogc + "ogcapi-features-3/1.0/conf/filter"} <= conforms
    assert client.api()["openapi"].startswith("3.")


def test_owslib_lists_the_layers_titled_by_their_comments(client, web_server) -> None:
    expected = {f"pub.{r.relname}": r.comment for r in sql(web_server, """
        SELECT c.relname, obj_description(c.oid, 'pg_class') AS comment FROM pg_class c
        WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('r', 'v', 'm')
          AND has_table_privilege('rulem_gis', c.oid, 'SELECT')
          AND c.relname NOT LIKE '%\\_history'""")}
    listed = {c["id"]: c for c in client.collections()["collections"]}
    assert set(listed) == set(expected)       # the history views are listed apart
    assert set(client.feature_collections()) == set(expected)
    for cid, collection in listed.items():
        comment = expected[cid]
        assert comment, f"{cid} has no COMMENT"
        assert collection["description"] == comment
        assert collection["title"] == title_of(comment, cid) != cid, cid
        assert comment.startswith(collection["title"].rstrip("…")), cid
        assert client.collection(cid)["title"] == collection["title"]
    page = httpx.get(web_server.base_url + "/collections", params={"f": "html"}, timeout=60)
    assert str(escape(listed[BALANCE]["title"])) in page.text     # the page a browser sees


def test_owslib_items_by_bbox_sum_to_the_database(client, web_server) -> None:
    bbox = west_half(web_server)
    (count, *sums), = sql(web_server, f"""
        SELECT count(*), {', '.join(f'sum({a})' for a in ACRES)} FROM pub.parcel_balance
        WHERE ST_Intersects(geom, ST_Envelope(ST_Transform(
              ST_Segmentize(ST_MakeEnvelope(:w, :s, :e, :n, 4326), 0.0001), ST_SRID(geom))))
        """, w=bbox[0], s=bbox[1], e=bbox[2], n=bbox[3])
    total, = sql(web_server, "SELECT count(*) FROM pub.parcel_balance")[0]
    assert 5 < count < total             # the bbox selects, and a page of 5 does not hold it
    first = client.collection_items(BALANCE, limit=5, bbox=list(bbox))
    assert first["numberMatched"] == count and first["numberReturned"] == 5
    assert any(link["rel"] == "next" for link in first["links"])
    features = client.collection_items(BALANCE, limit=count, bbox=list(bbox))["features"]
    assert len(features) == count
    for name, expected in zip(ACRES, sums, strict=True):
        values = [f["properties"][name] for f in features]
        assert all(type(v) in (int, float) for v in values), (name, values[:3])  # JSON numbers
        assert sum(values) == pytest.approx(float(expected), abs=1e-4), name


def test_owslib_reads_the_queryables(client, web_server) -> None:
    columns = {r.column_name: r.data_type for r in sql(web_server, """
        SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'pub' AND table_name = 'parcel_balance'""")}
    queryables = client.collection_queryables(BALANCE)["properties"]
    assert set(queryables) == set(columns)
    for name, data_type in columns.items():
        if data_type == "numeric":
            assert queryables[name]["type"] == "number", name
    assert queryables["pin"]["type"] == "string"
    assert "MultiPolygon" in queryables["geom"]["$ref"]


def test_owslib_filters_with_cql2_and_gets_a_refusal_as_an_error(client, web_server) -> None:
    expected = sorted(r.pin for r in sql(web_server, """
        SELECT pin FROM pub.parcel_balance WHERE status = 'deficit' OR required_acres > 0.5""")
                      )
    assert expected
    allowed = client.collection_items(
        BALANCE, limit=1000, filter="status = 'deficit' OR required_acres > 0.5")
    assert sorted(f["properties"]["pin"] for f in allowed["features"]) == expected
    # a function outside the allow-list: a 400 with its reason, which OWSLib raises
    with pytest.raises(RuntimeError, match="'pg_sleep' is not allowed"):
        client.collection_items(BALANCE, filter="pg_sleep(1) = 0")
    with pytest.raises(RuntimeError, match="not a property of this collection"):
        client.collection_items(BALANCE, filter="owner_name = 'x'")
    assert client.collection_items(BALANCE, limit=1)["numberReturned"] == 1  # still serving


def test_owslib_pages_reach_every_feature_once(client, web_server) -> None:
    """Every layer, page by page through the `next` links: as many features as SQL counts,
    no feature id twice, no row twice (keyed views: exactly the view's keys)."""
    keys = {f"pub.{r.relname}": r.key for r in sql(web_server, """
        SELECT c.relname, a.attname AS key FROM pg_class c
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1
        WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind = 'v'""")}
    paged = 0
    for cid in client.feature_collections():
        features, matched, pages = every_page(client, cid, limit=PAGE_OF.get(cid, PAGE))
        (count, distinct), = sql(web_server, f"""
            SELECT count(*), count(DISTINCT to_jsonb(t) - 'geom') FROM {cid} t""")
        ids = Counter(f["id"] for f in features)
        rows = {json.dumps(f["properties"], sort_keys=True) for f in features}
        assert matched == count and len(features) == count, cid
        assert not ids or max(ids.values()) == 1, (cid, ids.most_common(2))
        assert len(rows) == distinct, cid
        paged += pages > 1
        key = keys.get(cid.split(".")[1])
        if features and all(f["id"] == f["properties"].get(key) for f in features):
            assert sorted(ids) == sorted(r[0] for r in sql(web_server,
                                                           f"SELECT {key} FROM {cid}")), cid
    assert paged >= 3     # several layers really took more than one page


# --- QGIS's OAPIF provider --------------------------------------------------------------

@pytest.mark.qgis
def test_qgis_opens_the_layers_over_oapif(web_server, qgis_python, tmp_path) -> None:  # noqa: F811
    (count, *sums), = sql(web_server, f"""
        SELECT count(*), {', '.join(f'sum({a})' for a in ACRES)} FROM pub.parcel_balance""")
    deficit = sorted(r.pin for r in sql(
        web_server, "SELECT pin FROM pub.parcel_balance WHERE status = 'deficit'"))
    owing = sorted(r.pin for r in sql(
        web_server, "SELECT pin FROM pub.parcel_balance WHERE balance_acres < 0"))
    checks, = sql(web_server, "SELECT count(*) FROM pub.permit_compliance")[0]
    assert deficit and owing and checks > 1000
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(home), XDG_RUNTIME_DIR=str(home))
    report = drive(qgis_python, env, {"url": web_server.base_url, "layers": [
        {"typename": BALANCE, "sum": list(ACRES), "key": "pin",
         "subset": "status = 'deficit'", "expression": "balance_acres < 0"},
        {"typename": "pub.permit_compliance"},
    ]}, QGIS_DRIVER)
    balance, compliance = report["layers"]
    assert balance["valid"], balance.get("error")
    assert balance["feature_count"] == balance["features"] == balance["distinct_fids"] == count
    for name, expected in zip(ACRES, sums, strict=True):
        assert balance["field_types"][name] == "double", (name, balance["field_types"])
        assert balance["sums"][name] == pytest.approx(float(expected), abs=1e-4), name
    assert balance["subset"]["accepted"] and balance["subset"]["valid"]
    assert balance["subset"]["keys"] == deficit
    assert balance["subset"]["feature_count"] == len(deficit)
    assert balance["expression"]["keys"] == owing
    # a view without a one-column key: every row, each its own feature
    assert compliance["valid"], compliance.get("error")
    assert compliance["features"] == compliance["distinct_fids"] == checks
