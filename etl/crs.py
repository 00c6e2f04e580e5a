"""The CRS a file is in, and how its coordinates reach the database's working CRS.

Why it matters: the stored SRID is always the working SRID (ops.working_srid()), and never a
made-up one (GDAL's PostgreSQL driver invents a custom SRID for a .prj it cannot name). So the
file's CRS is identified with PROJ: when it is an EPSG CRS that PostGIS knows, the merge
transforms from that code (or not at all, when it is the working CRS: areas stay exact);
otherwise it transforms from the file's own definition. A file without a CRS is refused unless
the user names one, and the file's extent is checked to make sense in the CRS it claims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pyproj
from pyproj.exceptions import CRSError

from etl.problems import refuse


@dataclass(frozen=True)
class SourceCRS:
    """How the merge transforms: from an EPSG code (srid) or a PROJ definition (proj)."""

    label: str  # for people and ops.batch.source_crs, e.g. 'EPSG:5070'
    srid: int | None
    proj: str | None
    note: str | None = None  # what was decided (e.g. --crs overrides the file's)


def require(file: str, declared: str | None, given: str | None) -> None:
    """A file that declares no CRS is refused unless the user names one (checked before any
    feature is read)."""
    if declared is None and given is None:
        raise refuse(file, "declares no CRS (a shapefile without .prj, a CSV, a TopoJSON...); "
                     "name it with --crs, e.g. --crs EPSG:4326 for longitude/latitude")


def resolve(file: str, declared: str | None, given: str | None, work_srid: int,
            known: Callable[[int], bool],
            bounds: tuple[float, float, float, float] | None) -> SourceCRS:
    """The source CRS from the file's declaration or the user's --crs, checked."""
    require(file, declared, given)
    note = None
    if given is not None:
        try:
            crs = pyproj.CRS.from_user_input(given)
        except CRSError:
            raise refuse(file, f"--crs {given!r} is not a CRS PROJ knows; give an EPSG code "
                         "such as EPSG:26915") from None
        if declared is not None:
            try:
                same = crs.equals(pyproj.CRS.from_user_input(declared), ignore_axis_order=True)
            except CRSError:
                same = False
            if not same:
                note = (f"the file declares another CRS ({_name(declared)}); --crs {given} was "
                        "used as asked")
    else:
        try:
            crs = pyproj.CRS.from_user_input(str(declared))
        except CRSError as exc:
            raise refuse(file, f"its CRS cannot be read by PROJ ({exc}); name it with "
                         "--crs") from None
    _check_extent(file, crs, bounds, work_srid)
    code = _epsg(crs)
    if code is not None and code == work_srid:
        return SourceCRS(f"EPSG:{code}", code, None, note)
    try:
        pyproj.Transformer.from_crs(crs, pyproj.CRS.from_epsg(work_srid), always_xy=True)
    except CRSError as exc:
        raise refuse(file, f"its CRS ({crs.name}) cannot be transformed to the working CRS "
                     f"EPSG:{work_srid} ({exc}); name another with --crs") from None
    if code is not None and known(code):
        return SourceCRS(f"EPSG:{code}", code, None, note)
    return SourceCRS(crs.name if code is None else f"EPSG:{code}", None, crs.to_wkt(), note)


def _epsg(crs: pyproj.CRS) -> int | None:
    """The EPSG code of a CRS that is that EPSG CRS (the same definition, whatever its name)."""
    code = crs.to_epsg(min_confidence=70)
    if code is None:
        return None
    try:
        return code if crs.equals(pyproj.CRS.from_epsg(code), ignore_axis_order=True) else None
    except CRSError:
        return None


def _name(definition: str) -> str:
    try:
        return pyproj.CRS.from_user_input(definition).name
    except CRSError:
        return "unreadable"


def _check_extent(file: str, crs: pyproj.CRS, bounds: tuple[float, float, float, float] | None,
                  work_srid: int) -> None:
    """Coordinates that cannot be in the CRS claimed (degrees beyond 180, say), or that lie
    wholly outside where the working CRS is defined, are refused: they mean a wrong CRS (or a
    file for another database), and loading them would store nonsense without an error."""
    if bounds is None or not all(math.isfinite(b) for b in bounds):
        return
    x0, y0, x1, y1 = bounds
    if crs.is_geographic and (min(x0, y0) < -180.5 or max(x0, x1) > 360.5
                              or max(abs(y0), abs(y1)) > 90.5):
        raise refuse(file, f"its coordinates (x {x0:.1f} to {x1:.1f}, y {y0:.1f} to {y1:.1f}) "
                     f"are not degrees, so it is not in {crs.name}; name its real CRS with "
                     "--crs")
    try:
        t = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
        lons, lats = t.transform([x0, x1, x0, x1], [y0, y0, y1, y1])
    except Exception:  # noqa: BLE001 - no usable transformation is reported by the caller
        return
    if not all(math.isfinite(v) for v in list(lons) + list(lats)):
        raise refuse(file, f"its coordinates cannot be placed on the earth in {crs.name}; name "
                     "its real CRS with --crs")
    area = pyproj.CRS.from_epsg(work_srid).area_of_use
    if area is None:
        return
    west, east, south, north = min(lons), max(lons), min(lats), max(lats)
    if east < area.west or west > area.east or north < area.south or south > area.north:
        raise refuse(file, f"its features lie at longitude {west:.2f} to {east:.2f}, latitude "
                     f"{south:.2f} to {north:.2f}, wholly outside where the working CRS "
                     f"EPSG:{work_srid} is used (longitude {area.west:.2f} to {area.east:.2f}, "
                     f"latitude {area.south:.2f} to {area.north:.2f}); check the CRS (--crs), "
                     "or load the file into the database it belongs to")
