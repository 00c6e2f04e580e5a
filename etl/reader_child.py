"""What the reader children (etl.isolation) import before they are forked: pyogrio, pyarrow
and the ingest modules that drive GDAL, and nothing else.

Imported only in the forkserver, never in an ingest's own process: it hides geopandas, pandas,
pyproj and shapely from pyogrio, which imports them when they are installed (0.7 s of the 1.0 s
an interpreter would take to get ready; none of them is used to read). A child forked from this
clean process starts in a few milliseconds.

A child of a forkserver normally runs the parent's main script again (as `__mp_main__`, so
that functions defined there can be unpickled): for `rulem-db` or pytest that is their import
time in every child, for a script importing geopandas a second. The children here run
functions of etl modules only, so this module makes the forkserver's children skip it
(multiprocessing.spawn.prepare without init_main_*). The forkserver is this package's alone:
nothing else in rulem-db starts processes through multiprocessing's forkserver.
"""

import sys
from multiprocessing import spawn

for _name in ("geopandas", "pandas", "pyproj", "shapely"):
    sys.modules.setdefault(_name, None)  # type: ignore[assignment]

_prepare = spawn.prepare


def _prepare_without_main(data: dict) -> None:
    _prepare({k: v for k, v in data.items() if not k.startswith("init_main_from_")})


spawn.prepare = _prepare_without_main

import pyarrow  # noqa: E402,F401
import pyarrow.compute  # noqa: E402,F401  (casts while reading: 35 ms on first use)
import pyarrow.ipc  # noqa: E402,F401
import pyogrio.raw  # noqa: E402,F401

import etl.gdal_read  # noqa: E402,F401
import etl.isolation  # noqa: E402,F401
import etl.sources  # noqa: E402,F401
