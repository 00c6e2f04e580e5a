"""Reading query results into GeoDataFrames for the reports: the parcel layer with its balances,
and any query that selects its geometry as EWKB.

Why a module of its own: the run report (run.py) and the read ahead of its parcels while the
checks run (prefetch.py) both read the parcel frame; with the reader in run.py, prefetch had to
import run.py back inside a function (an import circle). Both now import it from here, and
neither imports the other's callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:  # geopandas, pandas and shapely load only when a frame is read (1-2 s)
    import geopandas as gpd

# Up to this many parcels a plan area's maps draw every parcel from its polygon, with its edge
# (and its PIN at site scale); above it an edge is narrower than a pixel, and the maps draw the
# parcel raster kept between nights instead (reports/tiles.py).
MAX_EDGED_PARCELS = 20_000

PARCEL_COLUMNS = ("parcel_id", "pin", "impact_acres", "required_acres", "credit_acres",
                  "credit_proposed_acres", "credit_constructed_acres", "credit_hosted_acres",
                  "balance_acres", "status")


# The column types read through COPY (pg_type OIDs): whole numbers, floats and numerics (as
# float, what read_postgis makes of a Decimal), text, and the EWKB of the geometry (bytea).
_INTEGER_OIDS = frozenset({20, 21, 23})
_FLOAT_OIDS = frozenset({700, 701, 1700})
_TEXT_OIDS = frozenset({19, 25, 1042, 1043})
_BYTEA_OID = 17


def read_geo(conn: sa.Connection, sql: str, params: dict[str, Any]) -> gpd.GeoDataFrame:
    """A query's rows as a GeoDataFrame, as geopandas.read_postgis makes them (the same
    columns, values, types and CRS), read faster: the query selects its geometry as binary
    EWKB in a column `geom`, and the geometries are decoded in one vectorised call
    (read_postgis parses hex text one Python call per row: about 2 s of a county's 100,000
    parcels).

    The rows come through COPY as CSV, parsed by Arrow with each column's type taken from the
    query: a state's 240,000 findings in 1.6 s and its 1,000,000 parcels in 8.7 s, against
    2.3 s and 16.6 s as Python tuples made into a frame. A query with a column of another
    type is read as tuples (read_geo_rows)."""
    frame = _read_geo_copy(conn, sql, params)
    return frame if frame is not None else read_geo_rows(conn, sql, params)


def _read_geo_copy(conn: sa.Connection, sql: str,
                   params: dict[str, Any]) -> gpd.GeoDataFrame | None:
    """read_geo through COPY and Arrow; None when a column's type is not one it reads, the
    driver is not psycopg2, or the query has no rows (an empty frame's columns are typed as
    read_postgis types them: object)."""
    import io

    import pandas as pd
    import psycopg2.extensions
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    raw = conn.connection.dbapi_connection
    if not isinstance(raw, psycopg2.extensions.connection):
        return None
    compiled = sa.text(sql).compile(dialect=conn.dialect)
    bound = compiled.construct_params(params)
    with raw.cursor() as cur:
        literal = cur.mogrify(compiled.string, bound).decode()
        cur.execute(f"SELECT * FROM ({literal}) q LIMIT 0")
        described = [(c.name, c.type_code) for c in cur.description or ()]
    types: dict[str, pa.DataType] = {}
    for name, oid in described:
        if oid in _INTEGER_OIDS:
            types[name] = pa.int64()
        elif oid in _FLOAT_OIDS:
            types[name] = pa.float64()
        elif oid in _TEXT_OIDS or oid == _BYTEA_OID:
            types[name] = pa.string()
        else:
            return None
    if "geom" not in types or len(types) != len(described):  # a name twice: the tuple path
        return None
    out = io.BytesIO()
    with raw.cursor() as cur:
        cur.copy_expert(f"COPY ({literal}) TO STDOUT WITH (FORMAT csv, HEADER)", out)
    out.seek(0)
    table = pcsv.read_csv(
        out, parse_options=pcsv.ParseOptions(newlines_in_values=True),
        # COPY writes NULL as an empty field and an empty text as "": only the former is null
        convert_options=pcsv.ConvertOptions(
            column_types=types, null_values=[""], strings_can_be_null=True,
            quoted_strings_can_be_null=False))
    if table.num_rows == 0:
        return None
    # bytea as COPY writes it: \x and the hex digits, which shapely reads without the \x
    at = table.column_names.index("geom")
    hex_wkb = pc.utf8_slice_codeunits(table.column("geom"), 2).to_numpy(zero_copy_only=False)
    frame = table.drop_columns(["geom"]).to_pandas()
    for name in frame.columns[frame.isna().all()]:  # no value: object, as from the rows
        frame[name] = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    frame.insert(at, "geom", None)
    return _with_geometry(frame, hex_wkb)


def _with_geometry(frame: Any, wkb: Any) -> gpd.GeoDataFrame:
    """The frame with its `geom` column decoded from (hex) EWKB, in the CRS of the SRID of the
    first geometry (as read_postgis)."""
    import geopandas as gpd
    import numpy as np
    import shapely

    have = np.array([g is not None for g in wkb], dtype=bool)
    geoms = np.full(len(wkb), None, dtype=object)
    geoms[have] = shapely.from_wkb(wkb[have])
    crs = None
    if have.any():  # as read_postgis: the SRID of the first geometry
        srid = int(shapely.get_srid(geoms[have][0]))
        crs = f"EPSG:{srid}" if srid else None
    frame["geom"] = geoms
    return gpd.GeoDataFrame(frame, geometry="geom", crs=crs)


def read_geo_rows(conn: sa.Connection, sql: str, params: dict[str, Any]) -> gpd.GeoDataFrame:
    """read_geo with the rows as plain tuples (any column type)."""
    import numpy as np
    import pandas as pd

    result = conn.execute(sa.text(sql), params)
    columns = list(result.keys())
    rows = [tuple(r) for r in result.cursor.fetchall()] if result.cursor else []
    result.close()
    frame = pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)
    wkb = np.array([None if g is None else bytes(g) for g in frame["geom"]], dtype=object)
    return _with_geometry(frame, wkb)


def read_parcel_frame(conn: sa.Connection, plan_area_id: int) -> gpd.GeoDataFrame:
    """Every current parcel of the plan area with its balance, by PIN (the CSV's rows and the
    maps' parcels)."""
    return read_geo(
        conn, f"SELECT {', '.join(PARCEL_COLUMNS)}, ST_AsEWKB(geom) AS geom "
        "FROM pub.parcel_balance WHERE plan_area_id = :p ORDER BY pin", {"p": plan_area_id})


def parcel_count(conn: sa.Connection, plan_area_id: int) -> int:
    """The plan area's current parcels."""
    return int(conn.execute(sa.text(
        "SELECT count(*) FROM core.parcel WHERE valid_to IS NULL AND plan_area_id = :p"),
        {"p": plan_area_id}).scalar_one())


def drawn_as_vectors(parcels: int) -> bool:
    """Whether a plan area's maps draw every parcel from its polygon, and its report reads
    them all: up to MAX_EDGED_PARCELS. Here and not in map.py because the nightly asks before
    its checks, and importing map.py (matplotlib) there cost 0.9 s in the night's own thread
    that the thread loading it beside the checks (flows.nightly) now takes."""
    return parcels <= MAX_EDGED_PARCELS


def read_finding_frame(conn: sa.Connection, check_run_id: int | None,
                       plan_area_id: int) -> gpd.GeoDataFrame:
    """A check run's findings with their places, by permit, as the report's map and
    findings.gpkg show them (none for no check run).

    With hash joins only and room to sort (SET LOCAL: to the end of the caller's
    transaction): each of the run's findings, the run's occurrences (by their run index, not
    every run's: 1,400,000 after a state's fifth night, growing with every night) and the
    plan area's permits. Right after the check run the planner has no statistics for its
    findings and occurrences, estimates one row, and took minutes probing the run's
    occurrences once per finding; at the default 4 MB of work_mem a state's 240,000 findings
    (their messages) were sorted on disk, 54 MB (0.35 s of the read's 0.8 s)."""
    conn.execute(sa.text("SET LOCAL enable_nestloop = off"))
    conn.execute(sa.text("SET LOCAL work_mem = '128MB'"))
    return read_geo(conn, (
        # finding_id: the finding's ID from run to run (what `rulem-db finding` takes);
        # occurrence_id: this run's row (docs/checks.md, "Finding review")
        "SELECT fo.finding_case_id AS finding_id, f.finding_id AS occurrence_id, f.paragraph, "
        "f.check_code, f.severity, pf.feature_key AS permit_no, "
        # the parcel looked up only for a finding that has one (ops.finding_pin)
        "CASE WHEN f.parcel_id IS NOT NULL THEN ops.finding_pin(f.parcel_id) END AS pin, "
        "f.feature_id, "
        # as floats, which the frame would make of them: no Decimal for each of 480,000
        "f.measured_value::float8 AS measured_value, f.limit_value::float8 AS limit_value, "
        "f.unit, f.message, ST_AsEWKB(f.geom) AS geom "
        "FROM checks.finding f "
        # an occurrence's run is its finding's; a finding's permit is a permit of its plan
        # area (sql/281)
        "LEFT JOIN checks.finding_occurrence fo ON fo.finding_id = f.finding_id "
        "AND fo.run_id = :c "
        "LEFT JOIN core.feature pf ON pf.feature_id = f.permit_id AND pf.layer = 'permit' "
        "AND pf.plan_area_id = :p "
        "WHERE f.run_id = :c ORDER BY pf.feature_key, f.paragraph, f.check_code, f.finding_id"),
        {"c": check_run_id or -1, "p": plan_area_id})
