"""The reports' query reader (rulem_db.reports.frames.read_geo): rows through COPY and Arrow give
the frame geopandas.read_postgis gives, stored text included.

Why: the run report writes findings.gpkg and draws its maps from these frames; a message the
CSV parser took for a null, a number, a second row or a delimiter would change what the
district's file says. The values below are the ones a CSV round trip gets wrong: empty text
against NULL, the words Arrow reads as null by default ("NULL", "NA", "nan"), quotes, commas
and line breaks, text that looks like a number, a column with no value at all, and rows
without a geometry.
"""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import sqlalchemy as sa

from rulem_db.reports import frames

TRICKY = """
SELECT * FROM (VALUES
  (1::bigint, 'plain'::text, 2.5::numeric, NULL::int, 1.25::float8, NULL::text,
   ST_AsEWKB(ST_SetSRID(ST_MakeEnvelope(0, 0, 100, 100), 26915))),
  (2, '', NULL, 7, NULL, NULL, NULL),
  (3, 'NULL', 0.1, NULL, -0.0, NULL,
   ST_AsEWKB(ST_SetSRID(ST_MakePoint(480000.5, 5000000.25), 26915))),
  (4, 'NA', 1e-9, 3, 1e300, NULL, NULL),
  (5, 'nan', 123456789.123456789, NULL, NULL, NULL,
   ST_AsEWKB(ST_SetSRID(ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))'),
                        26915))),
  (6, 'says "no", then,' || chr(10) || 'a second line' || chr(13) || chr(10) || 'and €',
   NULL, NULL, NULL, NULL, NULL),
  (7, '00123', NULL, NULL, NULL, NULL, NULL),
  (8, NULL, NULL, NULL, NULL, NULL, NULL)
) AS t (id, message, acres, count_value, measured, nothing, geom)
WHERE id <= :last ORDER BY id
"""


def test_rows_through_copy_are_what_read_postgis_gives(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        ours = frames._read_geo_copy(conn, TRICKY, {"last": 8})
        assert ours is not None  # the COPY path, not the tuples' path
        # read_postgis reads the geometry itself (as hex text), not its EWKB
        theirs = gpd.read_postgis(sa.text(TRICKY.replace("ST_AsEWKB(", "(")).bindparams(last=8),
                                  conn, geom_col="geom")
        rows = frames.read_geo_rows(conn, TRICKY, {"last": 8})
    assert list(ours["message"][:7]) == [
        "plain", "", "NULL", "NA", "nan",
        'says "no", then,\na second line\r\nand €', "00123"]
    assert pd.isna(ours["message"][7])
    assert ours["acres"][1] != ours["acres"][1]  # NULL numeric: NaN, as read_postgis
    assert ours["acres"][4] == 123456789.12345679
    for other in (theirs, rows):
        assert list(ours.columns) == list(other.columns)
        pd.testing.assert_frame_equal(pd.DataFrame(ours.drop(columns="geom")),
                                      pd.DataFrame(other.drop(columns="geom")))
        assert ours.crs == other.crs == "EPSG:26915"
        assert list(ours.geometry.isna()) == list(other.geometry.isna())
        assert all(a is None and b is None or a.equals_exact(b, 0)
                   for a, b in zip(ours.geometry, other.geometry, strict=True))
    assert ours.geometry[0].area == 10_000.0


def test_no_rows_and_other_types_take_the_tuples_path(engine: sa.Engine) -> None:
    """An empty result is typed as read_postgis types it (object columns); a column of a type
    the CSV reader is not told about (here a date) is read as tuples, and both give the same
    frame as read_geo."""
    with engine.connect() as conn:
        assert frames._read_geo_copy(conn, TRICKY, {"last": 0}) is None
        empty = frames.read_geo(conn, TRICKY, {"last": 0})
        dated = ("SELECT now()::date AS day, ST_AsEWKB(ST_SetSRID(ST_MakePoint(1, 2), 26915)) "
                 "AS geom")
        assert frames._read_geo_copy(conn, dated, {}) is None
        day = frames.read_geo(conn, dated, {})
    assert len(empty) == 0 and list(empty.columns) == [
        "id", "message", "acres", "count_value", "measured", "nothing", "geom"]
    assert len(day) == 1 and day.geometry[0].x == 1.0 and day.crs == "EPSG:26915"
