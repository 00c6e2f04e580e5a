"""Size limits of a delivery, in one place: what ingest refuses before it can hurt the database
or the machine (a zip bomb, a runaway export, a blob in an attribute).

Why limits at all: ingest reads whatever a consultant sends. Without a bound, a 40 KB zip that
expands to 40 GB fills the disk, a feature of fifty million vertices stalls validation for
everyone, and a coordinate of 1e300 passes as a number. Each limit is far above anything a real
Rule M delivery holds (the county's parcel fabric: ~150,000 features, 300 MB; the biggest real
wetland outline seen: ~60,000 vertices), so it only ever stops a broken or hostile file.

Reading has two time limits too: GDAL reads a delivered file in a child process
(etl.isolation) that is killed when it gives nothing for read_stall_seconds (a GeoPackage
whose layer is a recursive view makes GDAL spin at full CPU forever, while opening the file as
much as while reading it), or when reading has waited on it for max_read_seconds in all.

Every limit can be raised (or lowered) for one run with an environment variable, e.g.
RULEM_MAX_FILE_BYTES=5e9 rulem-db ingest parcel county.gpkg; docs/ingest.md ("Limits") lists them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

GB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """The limits of one ingest (defaults, or the environment's overrides)."""

    max_file_bytes: int = 2 * GB  # the delivered file (a shapefile's parts, a folder together)
    max_unzipped_bytes: int = 10 * GB  # what a zip's members declare they expand to, in all
    max_zip_ratio: float = 100.0  # expanded : compressed, per member and for the whole zip
    zip_ratio_floor: int = 16 << 20  # members (and zips) expanding to less are never a bomb
    max_features: int = 5_000_000  # features in the file (the layer read)
    max_vertices: int = 2_000_000  # vertices of one feature
    max_attribute_chars: int = 100_000  # characters of one attribute value
    max_abs_coordinate: float = 1e9  # |x| and |y|: beyond any place on earth in any CRS
    read_stall_seconds: float = 120.0  # GDAL gives nothing (no answer, no feature) this long
    max_read_seconds: float = 3600.0  # time spent waiting on GDAL for one file, in all

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Limits:
        """The defaults, each overridden by RULEM_<NAME IN CAPITALS> when that is set."""
        env = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = env.get(env_name(f.name))
            if raw is None or not raw.strip():
                continue
            try:
                number = float(raw.replace("_", ""))
            except ValueError:
                raise ValueError(f"{env_name(f.name)}={raw!r} is not a number") from None
            if number <= 0:
                raise ValueError(f"{env_name(f.name)}={raw!r} must be more than 0")
            values[f.name] = number if f.type == "float" else int(number)
        return cls(**values)


def env_name(field_name: str) -> str:
    """The environment variable that overrides a limit: RULEM_MAX_FILE_BYTES, ..."""
    return "RULEM_" + field_name.upper()


def size_words(n: float) -> str:
    """A byte count for people: 2.0 GB, 512.0 MB, 900 bytes."""
    for unit, size in (("GB", GB), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{int(n)} bytes"
