"""findings.gpkg: a run's findings with their places, for any GIS.

A module of its own because two callers write it: the run report (run.py) and the read
ahead of the findings beside the run's snapshot (findings_ahead.py), which must not import
the report back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # geopandas, pandas and pyogrio load only when a file is written
    import geopandas as gpd


def write_findings_gpkg(path: Path, findings: gpd.GeoDataFrame) -> Path:
    """One layer per geometry type (what every GIS reads), plus findings without a place.
    Written through Arrow (use_arrow): the same file, field for field, as row by row, in
    half the time (a state's 240,000 findings: 0.8-1.0 s against 1.5-1.7 s). Single parts
    are made multi by pyogrio in one vectorised call (promote_to_multi), not one Python call
    per finding."""
    import pandas as pd
    import pyogrio

    path.unlink(missing_ok=True)
    frame = findings.copy()
    for col in ("measured_value", "limit_value"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    kinds = frame.geometry.geom_type.fillna("").str.replace("Multi", "", regex=False)
    written = False
    for name, kind in (("finding_area", "Polygon"), ("finding_line", "LineString"),
                       ("finding_point", "Point")):
        part = frame[kinds == kind]
        if part.empty:
            continue
        pyogrio.write_dataframe(part, path, layer=name, driver="GPKG",
                                geometry_type=f"Multi{kind}", promote_to_multi=True,
                                use_arrow=True)
        written = True
    rest = frame[kinds == ""]
    if len(rest) or not written:  # an empty file still carries the columns
        pyogrio.write_dataframe(pd.DataFrame(rest.drop(columns=frame.geometry.name)), path,
                                layer="finding_list", driver="GPKG", use_arrow=True)
    return path
