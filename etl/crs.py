"""The CRS a file is in, and how its coordinates reach the database's working CRS.

Why it matters: the stored SRID is always the working SRID (ops.working_srid()), and never a
made-up one (GDAL's PostgreSQL driver invents a custom SRID for a .prj it cannot name). So the
file's CRS is identified with PROJ: when it is an EPSG CRS that PostGIS knows, the merge
transforms from that code (or not at all, when it is the working CRS: areas stay exact);
otherwise it transforms from the file's own definition. A file without a CRS is refused unless
the user names one, and the file's extent is checked to make sense in the CRS it claims.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import urllib.parse
import zipfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import pyproj
from pyproj.exceptions import CRSError

from etl.problems import refuse

if TYPE_CHECKING:
    from etl.sources import Source


@dataclass(frozen=True)
class SourceCRS:
    """How the merge transforms: from an EPSG code (srid) or a PROJ definition (proj)."""

    label: str  # for people and ops.batch.source_crs, e.g. 'EPSG:5070'
    srid: int | None
    proj: str | None
    note: str | None = None  # what was decided (e.g. --crs overrides the file's)


def unknown_declared(src: Source) -> str | None:
    """The CRS the file declares when PROJ does not know it (as the file names it, e.g.
    'EPSG:999999'), else None.

    GDAL does not always say so: a GeoJSON `crs` member naming a code PROJ does not know is
    read as WGS 84 (GeoJSON's default) without a word, and a GeoPackage srs or a .prj GDAL
    cannot read comes back as no CRS at all, which would be refused as "declares no CRS". So
    the declaration is looked up in the file itself: the `crs` member of a GeoJSON GDAL called
    WGS 84 (or nothing), the .prj of a shapefile and the srs of a GeoPackage layer GDAL found
    none in; and a declaration GDAL passed on (an authority code, a PROJJSON) is tried with
    PROJ here, before anything is staged."""
    if src.crs is not None:
        try:
            pyproj.CRS.from_user_input(src.crs)
        except CRSError:
            return _label(src.crs)
    if src.driver == "GeoJSON" and src.crs in (None, "EPSG:4326", "OGC:CRS84"):
        named = _geojson_crs(src)
        if named is not None:
            try:
                pyproj.CRS.from_user_input(named)
            except CRSError:
                return named
        return None
    if src.crs is not None:
        return None
    if src.driver == "ESRI Shapefile":
        text = _prj_text(src)
        return _label(text) if text and text.strip() else None
    if src.driver == "GPKG" and not src.dataset.startswith("/vsizip/"):
        return _gpkg_srs(src)
    return None


def _label(text: str) -> str:
    """A declaration as people name it: its authority and code when it has them."""
    text = " ".join(text.split())
    code = re.fullmatch(r"([A-Za-z]+):+(\d+)", text)
    if code:
        return f"{code[1].upper()}:{code[2]}"
    wkt = re.findall(r'(?:AUTHORITY|ID)\[\s*"([^"]+)"\s*,\s*"?(\d+)"?', text, re.I)
    if wkt:
        return f"{wkt[-1][0].upper()}:{wkt[-1][1]}"  # the CRS's own is the last one
    try:
        ident = json.loads(text).get("id") or {}
        return f"{str(ident['authority']).upper()}:{ident['code']}"
    except (ValueError, AttributeError, KeyError, TypeError):
        pass
    return repr(text[:60] + ("..." if len(text) > 60 else ""))


_CRS_MEMBER = re.compile(rb'"crs"\s*:\s*\{')


def _geojson_crs(src: Source) -> str | None:
    """The CRS a GeoJSON's `crs` member names (GeoJSON 2008: {"type": "name", "properties":
    {"name": ...}}, or the older {"type": "EPSG", "properties": {"code": ...}}), None when it
    has none. The text is scanned a megabyte at a time, so a big file costs a read, not
    memory."""
    decoder = json.JSONDecoder()
    overlap = 4096  # a member starting this close to a piece's end is read with the next one
    with _open_member(src) as f:
        buf = b""
        while True:
            chunk = f.read(1 << 20)
            buf += chunk
            last = not chunk
            for m in _CRS_MEMBER.finditer(buf):
                if not last and m.start() > len(buf) - overlap:
                    break
                try:
                    obj, _ = decoder.raw_decode(buf[m.end() - 1:m.end() + overlap]
                                                .decode("utf-8", "replace"))
                except ValueError:
                    continue
                props = obj.get("properties") if isinstance(obj, dict) else None
                if not isinstance(props, dict):
                    continue
                kind = str(obj.get("type", "")).lower()
                if kind == "name" and props.get("name") is not None:
                    return str(props["name"])
                if kind == "epsg" and props.get("code") is not None:
                    return f"EPSG:{props['code']}"
            if last:
                return None
            buf = buf[-overlap:]


@contextmanager
def _open_member(src: Source) -> Iterator[BinaryIO]:
    """The delivered file, or the zip member GDAL reads, as bytes."""
    prefix = f"/vsizip/{src.path}/"
    if src.dataset.startswith(prefix):
        with zipfile.ZipFile(src.path) as z, z.open(src.dataset[len(prefix):]) as f:
            yield f
    else:
        with src.path.open("rb") as f:
            yield f


def _prj_text(src: Source) -> str | None:
    prefix = f"/vsizip/{src.path}/"
    if src.dataset.startswith(prefix):
        member = src.dataset[len(prefix):-4] + ".prj"
        with zipfile.ZipFile(src.path) as z:
            names = {n.lower(): n for n in z.namelist()}
            if member.lower() not in names:
                return None
            return z.read(names[member.lower()]).decode("latin-1")
    for prj in (src.path.with_suffix(".prj"), src.path.with_suffix(".PRJ")):
        if prj.is_file():
            return prj.read_text(encoding="latin-1")
    return None


def _gpkg_srs(src: Source) -> str | None:
    """The srs of a GeoPackage layer GDAL read no CRS from, as organization:code; None for the
    srs meaning "undefined": the GeoPackage's 0 and -1 (organization NONE) and GDAL's 99999
    (organization GDAL), which GDAL writes for a layer without a CRS."""
    uri = f"file:{urllib.parse.quote(str(src.path.absolute()))}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as con:
            row = con.execute(
                "SELECT s.srs_id, s.organization, s.organization_coordsys_id "
                "FROM gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s USING (srs_id) "
                "WHERE g.table_name = ?", (src.layer,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None or row[0] in (0, -1) or str(row[1]).upper() in ("NONE", "GDAL"):
        return None
    srs_id, org, code = row
    return f"{str(org).upper()}:{code}" if org and code is not None else f"srs_id {srs_id}"


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
