"""Benchmark: what reading through a reader child (etl.isolation) costs against calling GDAL in
the ingest's own process, on the synthetic parcels of bench/ingest.py (no database needed).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/reader.py [--features 100000]
        [--repeat 5]

Prints the first child's cost (the forkserver starts in the background when etl.isolation is
imported, so here it is ready), and the medians of opening the file
(layers, fields, CRS, count) and of reading every batch with the limits' checks, in the
process and through a child.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ingest import make_parcels  # noqa: E402
from etl import gdal_read, isolation, sources  # noqa: E402
from etl.limits import Limits  # noqa: E402
from etl.reading import Guard, ReadLog, batches  # noqa: E402


def _timed(fn) -> tuple[float, object]:  # noqa: ANN001
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    limits = Limits()
    with tempfile.TemporaryDirectory(prefix="rulem-bench-reader-") as tmp:
        path = Path(tmp) / "parcels.gpkg"
        make_parcels(args.features).to_file(path, driver="GPKG", engine="pyogrio")

        def open_here() -> sources.Source:
            return sources._open_gdal(path, [str(path)], None, "parcel", True)

        def read_here(src: sources.Source) -> int:
            guard = Guard(src, limits)
            rows = 0
            for batch in gdal_read.gdal_batches(src, True, ReadLog(), 25_000):
                guard.check(batch)
                rows += batch.num_rows
            return rows

        def read_child(src: sources.Source) -> int:
            return sum(b.num_rows for b in batches(src, True, ReadLog(), limits=limits))

        start, _ = _timed(lambda: isolation.call(len, ((),), "x", limits))
        print(f"a first child (the forkserver started in the background when etl.isolation "
              f"was imported): {start:.3f} s")
        results: dict[str, list[float]] = {k: [] for k in
                                           ("open here", "open child", "read here",
                                            "read child")}
        for _ in range(args.repeat):
            t, src = _timed(open_here)
            results["open here"].append(t)
            t, src2 = _timed(lambda: sources.open_source(path, layer_name="parcel"))
            results["open child"].append(t)
            assert src2 == src
            t, n = _timed(partial(read_here, src))
            results["read here"].append(t)
            t, m = _timed(partial(read_child, src))
            results["read child"].append(t)
            assert n == m == args.features
        for name, times in results.items():
            print(f"{name:>11}: median {statistics.median(times):.3f} s  "
                  f"({', '.join(f'{x:.3f}' for x in times)})")


if __name__ == "__main__":
    main()
