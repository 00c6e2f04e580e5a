"""Shared pieces of the reader-child tests (docs/ingest.md): a GeoPackage GDAL never
finishes reading, and ways to see the reader children that etl.isolation forks.

Why a module of its own: the tests of the stall limits themselves need no database and live in
the unit tier (tests/unit/test_hardening_reader.py), while the ingest, nightly and SIGTERM
tests of the same file need one (tests/security/test_hardening_reader.py); both use these.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import flows_fixtures as fx
import psutil

STALL = "1"  # seconds, for the tests
BOUND = 120  # seconds: far above what a stopped read takes, far below "for ever"
REASON = ("opening stopped: GDAL gave no answer for 1 s (a recursive view or a broken "
          "file?); nothing was loaded (raise the limit with RULEM_READ_STALL_SECONDS if the "
          "file is real and that slow)")


def recursive_view_gpkg(path: Path) -> Path:
    """A valid GeoPackage of one parcel whose only registered layer is a view that recurses
    for ever and never yields a row (gpkg_contents and gpkg_geometry_columns name the view;
    the table it reads is unregistered)."""
    fx.parcels_gpkg(path, {"P-LOOP": (0, 0, 100, 100)})
    con = sqlite3.connect(path)
    try:
        table, srs = con.execute("SELECT table_name, srs_id FROM gpkg_contents").fetchone()
        con.execute(f"""CREATE VIEW parcel_loop AS
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
            SELECT t.fid AS fid, t.geom AS geom, t.pin AS pin FROM "{table}" t, n
            WHERE n.i < 0""")
        for meta in ("gpkg_geometry_columns", "gpkg_contents", "gpkg_ogr_contents"):
            con.execute(f"DELETE FROM {meta}")
        con.execute("INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) "
                    "VALUES ('parcel_loop', 'features', 'parcel_loop', ?)", (srs,))
        con.execute("INSERT INTO gpkg_geometry_columns VALUES "
                    "('parcel_loop', 'geom', 'MULTIPOLYGON', ?, 0, 0)", (srs,))
        con.commit()
    finally:
        con.close()
    return path


def reader_children(pid: int | None = None, spinning: bool = False) -> list[psutil.Process]:
    """The live reader children of a process (this one by default): its forkserver's children;
    spinning: only those using most of a CPU."""
    found = []
    try:
        servers = [p for p in psutil.Process(pid).children()
                   if "forkserver" in " ".join(p.cmdline())]
        for server in servers:
            for child in server.children():
                try:
                    if child.status() != psutil.STATUS_ZOMBIE and (
                            not spinning or child.cpu_percent(0.2) > 50):
                        found.append(child)
                except psutil.NoSuchProcess:
                    continue
    except psutil.NoSuchProcess:
        pass
    return found


def no_reader_left() -> None:
    """Wait up to 10 s for this process's reader children to be gone; fail naming any left."""
    deadline = time.monotonic() + 10
    while (left := reader_children()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"reader processes left: {left}"
