"""Open a delivered file as GIS staff receive it: find the layer to read, its fields, whether
it carries geometry and which CRS it declares, and the file's SHA-256.

Why this is separate from reading: everything here is cheap (no feature is read), so a file
that cannot be ingested (an empty zip, a shapefile without its index, a multi-layer file with
no layer named) is refused with a precise message before the database is touched. What asks
GDAL (the layers, their fields, CRS and counts) runs in a reader child that is killed after
the stall limit (etl.isolation): opening a GeoPackage whose layer is an endless recursive
view never returns.

Formats: GeoPackage, Shapefile (loose, or zipped alone or among others), GeoJSON and TopoJSON,
File Geodatabase (a .gdb folder or zipped), GeoParquet (read with pyarrow: the GDAL in the
pyogrio wheel has no Parquet driver), CSV with a WKT column, and attribute-only CSV.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pyogrio
import pyogrio.errors
import pyogrio.util

from etl import isolation
from etl.limits import Limits, env_name, size_words
from etl.problems import refuse

# Names a CSV's WKT column goes by (case-insensitive); a mapping file may name another.
WKT_COLUMN_NAMES = ("wkt", "geom", "geometry", "the_geom", "wkt_geom", "shape", "geom_wkt")
PARQUET_GEOMETRY_NAMES = ("geometry", "geom", "wkb_geometry", "wkb", "the_geom")
SHAPEFILE_SIDECARS = (".shp", ".shx", ".dbf", ".prj", ".cpg")
ZIPPED_FILES = (".shp", ".gpkg", ".geojson", ".json", ".topojson")  # (and .gdb folders)
# What a file of each extension starts with; a file that starts otherwise is not what its name
# says (a renamed file, an error page saved as the download), and is refused saying what it is.
SIGNATURES = {".gpkg": (b"SQLite format 3\0",), ".zip": (b"PK\x03\x04", b"PK\x05\x06"),
              ".parquet": (b"PAR1",), ".geoparquet": (b"PAR1",), ".shp": (b"\0\0\x27\x0a",)}
LATIN_1 = "ISO-8859-1"
FORMAT_NAMES = {".gpkg": "a GeoPackage", ".zip": "a zip file", ".parquet": "a Parquet file",
                ".geoparquet": "a Parquet file", ".shp": "a shapefile"}


@dataclass(frozen=True)
class Source:
    """One readable layer of a delivered file."""

    path: Path  # the file as delivered
    reader: str  # "gdal" or "parquet"
    dataset: str  # what GDAL opens (may be /vsizip/...), or the parquet path
    layer: str | None  # the layer within the dataset
    driver: str
    fields: tuple[str, ...]
    has_geometry: bool
    crs: str | None  # the CRS the file declares (WKT or PROJJSON), None when it declares none
    feature_count: int | None
    geometry_type: str | None = None
    geometry_column: str | None = None  # CSV: the WKT column; parquet: the WKB column
    open_options: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what was decided on the user's behalf (e.g. layer picked)

    @property
    def name(self) -> str:
        """The file's name, as problems name it."""
        return self.path.name


def file_sha256(path: Path) -> str:
    """SHA-256 of what was delivered: the file, or for a loose shapefile its .shp, .shx, .dbf,
    .prj and .cpg in that order (the attributes and the CRS are part of the delivery), or for
    a folder (an unzipped .gdb) every file in it by name."""
    h = hashlib.sha256()
    parts = _delivered_parts(path)
    for part in parts:
        if len(parts) > 1:
            h.update(part.name.encode() + b"\0")
        with part.open("rb") as f:
            for chunk in iter(lambda f=f: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _sidecar(shp: Path, ext: str) -> Path | None:
    for candidate in (shp.with_suffix(ext), shp.with_suffix(ext.upper())):
        if candidate.exists():
            return candidate
    return None


def open_source(path: Path, *, source_layer: str | None = None, layer_name: str | None = None,
                wants_geometry: bool = True, geometry_field: str | None = None) -> Source:
    """The layer of path to ingest as layer_name; refuses what cannot be read, saying why."""
    path = Path(path)
    name = path.name
    if not path.exists():
        raise refuse(name, f"no such file: {path}")
    limits = Limits.from_env()
    _check_size(path, limits)
    suffix = path.suffix.lower()
    _check_signature(path, suffix)
    if suffix in (".parquet", ".geoparquet"):
        return _open_parquet(path, geometry_field)
    if suffix == ".csv":
        return _open_csv(path, wants_geometry, geometry_field)
    if suffix == ".zip":
        candidates = _zip_datasets(path, limits)
    elif suffix == ".shp":
        _check_shapefile(path)
        candidates = [gdal_path(path)]
    else:
        candidates = [gdal_path(path)]
    return isolation.call(_open_gdal, (path, candidates, source_layer, layer_name,
                                       wants_geometry), name, limits, "opening")


def gdal_path(path: Path) -> str:
    """The name GDAL is given for a local file. pyogrio reads every name as a URI first (its
    issue #632): a `;` in the last part starts URI parameters and is cut off with the rest
    (`a;b.gpkg` became `a`: "No such file or directory"), a `!` separates an archive from its
    member, a tab or CR is dropped, a relative `s3:x.gpkg` becomes /vsis3/. A name it would
    change is given as the subfile of itself from offset 0 to its end (/vsisubfile/0_0,...),
    which pyogrio passes untouched and GDAL reads as the file itself (its sidecars, a
    shapefile's .dbf and .prj, are found beside it the same way)."""
    text = str(path)
    if pyogrio.util.vsi_path(text) == text:
        return text
    return f"/vsisubfile/0_0,{path.absolute()}"


def _delivered_parts(path: Path) -> list[Path]:
    """The files a delivery consists of: a folder's files, a shapefile's parts, or the file."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    if path.suffix.lower() == ".shp":
        return [p for ext in SHAPEFILE_SIDECARS if (p := _sidecar(path, ext)) is not None]
    return [path]


def _check_size(path: Path, limits: Limits) -> None:
    """A 0-byte file is a failed export or transfer; a file over the limit is refused before
    anything reads it."""
    parts = _delivered_parts(path)
    empty = [p.name for p in parts if p.stat().st_size == 0]
    if empty or not parts:
        what = "is empty (0 bytes)" if empty == [path.name] or not parts else \
            f"has empty parts ({', '.join(empty)}: 0 bytes)"
        raise refuse(path.name, f"{what}: the export or the transfer failed; deliver it again")
    total = sum(p.stat().st_size for p in parts)
    if total > limits.max_file_bytes:
        raise refuse(path.name, f"is {size_words(total)}, more than the limit of "
                     f"{size_words(limits.max_file_bytes)} for one delivery; split it, or raise "
                     f"the limit with {env_name('max_file_bytes')}")


def _check_signature(path: Path, suffix: str) -> None:
    """A file whose first bytes are not those of its extension's format is refused, saying
    what it seems to be instead."""
    if suffix not in SIGNATURES or path.is_dir():
        return
    with path.open("rb") as f:
        head = f.read(64)
    if head.startswith(SIGNATURES[suffix]):
        return
    raise refuse(path.name, f"is not {FORMAT_NAMES[suffix]}: its content is {_looks_like(head)} "
                 "(a renamed file, or an error page saved as the download?); deliver the real "
                 "file")


def _looks_like(head: bytes) -> str:
    kinds = [(b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
             (b"%PDF", "a PDF document"), (b"PK", "a zip file"),
             (b"SQLite format 3", "an SQLite database"), (b"PAR1", "a Parquet file"),
             (b"\0\0\x27\x0a", "a shapefile's geometry (.shp)")]
    for magic, words in kinds:
        if head.startswith(magic):
            return words
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data of no format ingest knows"
    start = " ".join(text.split())[:30]
    if start.lower().startswith(("<!doctype html", "<html")):
        return f"an HTML page ({start!r}...)"
    if start.startswith(("{", "[")):
        return f"JSON text ({start!r}...)"
    return f"text ({start!r}...)"


def _check_shapefile(path: Path) -> None:
    missing = [ext for ext in (".shx", ".dbf") if _sidecar(path, ext) is None]
    if missing:
        raise refuse(path.name, f"the shapefile's {' and '.join(missing)} file is missing "
                     f"(a shapefile is delivered as .shp, .shx, .dbf and .prj together); ask "
                     f"for the complete set, or a zip of it")


def _zip_datasets(path: Path, limits: Limits) -> list[str]:
    """GDAL paths of the datasets inside a zip: .gdb folders, shapefiles, GeoPackages..."""
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            _check_zip(path.name, members, limits)
            _check_declared_sizes(path.name, z, members)
    except zipfile.BadZipFile as exc:
        raise refuse(path.name, f"not a readable zip file ({exc}); deliver it again") from None
    names = [m.filename for m in members]
    found: list[str] = []
    for n in names:
        parts = n.rstrip("/").split("/")
        for i, part in enumerate(parts):
            if part.lower().endswith(".gdb"):
                gdb = "/".join(parts[: i + 1])
                if gdb not in found:
                    found.append(gdb)
                break
        else:
            if n.lower().endswith(ZIPPED_FILES):
                found.append(n)
    shp = [n for n in found if n.lower().endswith(".shp")]
    for n in shp:
        stem = n[:-4]
        if not any(m.lower() == (stem + ".shx").lower() for m in names):
            raise refuse(path.name, f"{n} in the zip has no .shx index; ask for the complete "
                         "shapefile (.shp, .shx, .dbf, .prj)")
    if not found:
        held = ", ".join(names[:8]) or "nothing"
        raise refuse(path.name, f"the zip holds no shapefile, File Geodatabase, GeoPackage or "
                     f"GeoJSON (it holds {held}); deliver one of those")
    return [f"/vsizip/{path}/{n}" for n in found]


def _check_zip(name: str, members: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Nothing in a zip is read before its member names and declared sizes pass: no name that
    climbs out of the zip's folder (zip slip), no expansion beyond the limits (zip bomb).

    The sizes checked here are those the zip declares (nothing is expanded yet);
    _check_declared_sizes then proves them."""
    for m in members:
        parts = m.filename.replace("\\", "/").split("/")
        if m.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            raise refuse(name, f"member {m.filename!r} climbs out of the zip's folder (zip "
                         "slip): refused without reading anything; ask for a zip of the "
                         "files themselves")
    total = sum(m.file_size for m in members)
    packed = sum(m.compress_size for m in members)
    if total > limits.max_unzipped_bytes:
        raise refuse(name, f"expands to {size_words(total)}, more than the limit of "
                     f"{size_words(limits.max_unzipped_bytes)} (zip bomb?); raise the limit "
                     f"with {env_name('max_unzipped_bytes')} if the data is real")
    for m, size, comp in [*((m, m.file_size, m.compress_size) for m in members),
                          (None, total, packed)]:
        if size > limits.zip_ratio_floor and size > limits.max_zip_ratio * max(comp, 1):
            what = f"member {m.filename!r}" if m is not None else "the zip"
            raise refuse(name, f"{what} expands {size / max(comp, 1):,.0f} times (to "
                         f"{size_words(size)} from {size_words(comp)}), more than the limit of "
                         f"{limits.max_zip_ratio:,.0f} (zip bomb?); refused without expanding "
                         f"it; raise the limit with {env_name('max_zip_ratio')} if the data "
                         "is real")


def _check_declared_sizes(name: str, z: zipfile.ZipFile,
                          members: list[zipfile.ZipInfo]) -> None:
    """Each member expands to no more than it declares: GDAL's /vsizip/ reads a member's whole
    compressed stream whatever size it declares, so a zip that declares 100 bytes for a stream
    of gigabytes would pass the limits. Each member is expanded in memory, a megabyte at a time
    and discarded, up to one byte past its declared size (so a lie is caught without expanding
    the bomb); measured 0.9 s for a 300 MB member."""
    for m in members:
        if m.is_dir():
            continue
        probe = copy.copy(m)
        probe.file_size = m.file_size + 1
        del probe.CRC  # no checksum over the probe's extra byte (GDAL checks the real one)
        seen = 0
        try:
            with z.open(probe) as f:
                while seen <= m.file_size and (chunk := f.read(1 << 20)):
                    seen += len(chunk)
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            raise refuse(name, f"member {m.filename!r} cannot be expanded ({exc}); deliver "
                         "the zip again") from None
        if seen > m.file_size:
            raise refuse(name, f"member {m.filename!r} expands beyond the {m.file_size:,} "
                         "bytes it declares (a forged zip, or a zip bomb): refused without "
                         "expanding it; deliver the zip again")


def _layers(dataset: str) -> list[tuple[str, str | None]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [(str(n), None if t is None else str(t))
                for n, t in pyogrio.list_layers(dataset)]


def _open_gdal(path: Path, datasets: list[str], source_layer: str | None,
               layer_name: str | None, wants_geometry: bool) -> Source:
    """The layer to read and what GDAL says of it; runs in a reader child (open_source)."""
    name = path.name
    options: list[tuple[str, str, str | None]] = []  # (dataset, layer, geometry type)
    for ds in datasets:
        try:
            options += [(ds, n, t) for n, t in _layers(ds)]
        except pyogrio.errors.DataSourceError as exc:
            raise refuse(name, f"GDAL cannot read it ({_gdal_message(exc)}); check that it is "
                         "a complete GIS file of a supported format") from None
    notes: list[str] = []
    if source_layer is not None:
        chosen = [o for o in options if o[1] == source_layer]
        if not chosen:
            raise refuse(name, f"has no layer {source_layer!r}; its layers are "
                         f"{', '.join(o[1] for o in options)}")
        pick = chosen[0]
    elif len(options) == 1:
        pick = options[0]
    else:
        pick = _pick_layer(name, options, layer_name, wants_geometry, notes)
    ds, layer, _ = pick
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            info = pyogrio.read_info(ds, layer=layer)
    except pyogrio.errors.DataSourceError as exc:
        raise refuse(name, f"GDAL cannot read layer {layer} ({_gdal_message(exc)})") from None
    gtype = info.get("geometry_type")
    count = info.get("features")
    _check_count(name, count)
    options = {}
    if info["driver"] == "ESRI Shapefile" and _declares_no_encoding(path, ds):
        options["ENCODING"] = LATIN_1
        notes.append("the shapefile declares no encoding (no .cpg, no code page in its .dbf): "
                     "its text was read as ISO-8859-1 (Latin-1); deliver a .cpg if it is not")
    return Source(path=path, reader="gdal", dataset=ds, layer=layer, driver=info["driver"],
                  fields=tuple(str(f) for f in info["fields"]), has_geometry=gtype is not None,
                  crs=info.get("crs"), feature_count=None if count is None or count < 0
                  else int(count), geometry_type=gtype, open_options=options,
                  notes=tuple(notes))


def _declares_no_encoding(path: Path, dataset: str) -> bool:
    """Whether a shapefile has neither a .cpg nor a code page in its .dbf (byte 29). GDAL then
    hands its text over undecoded; we read it as Latin-1, the shapefile's historical default
    (ArcGIS and GDAL both assume it), rather than load bytes that are not text."""
    if dataset.startswith("/vsizip/"):
        member = dataset[len(f"/vsizip/{path}/"):]
        stem = member[:-4].lower()
        with zipfile.ZipFile(path) as z:
            names = {n.lower(): n for n in z.namelist()}
            if stem + ".cpg" in names or stem + ".dbf" not in names:
                return False
            with z.open(names[stem + ".dbf"]) as f:
                head = f.read(32)
    else:
        shp = path
        dbf = _sidecar(shp, ".dbf")
        if _sidecar(shp, ".cpg") is not None or dbf is None:
            return False
        with dbf.open("rb") as f:
            head = f.read(32)
    return len(head) > 29 and head[29] == 0


def _check_count(name: str, count: int | None) -> None:
    """A file declaring more features than the limit is refused before any is read (reading
    checks the count again, for formats that declare none)."""
    limit = Limits.from_env().max_features
    if count is not None and count > limit:
        raise refuse(name, f"holds {count:,} features, more than the limit of {limit:,}; split "
                     f"it, or raise the limit with {env_name('max_features')}")


def _pick_layer(name: str, options: list[tuple[str, str, str | None]], layer_name: str | None,
                wants_geometry: bool, notes: list[str]) -> tuple[str, str, str | None]:
    """A multi-layer file: the layer named like ours, else the biggest layer of the right kind
    (a consultant's zip often carries metadata layers beside the wetlands); noted either way."""
    same = [o for o in options if layer_name and o[1].lower() == layer_name.lower()]
    if same:
        return same[0]
    kind = [o for o in options if (o[2] is not None) == wants_geometry]
    if not kind:
        raise refuse(name, f"none of its layers ({', '.join(o[1] for o in options)}) "
                     f"{'has geometry' if wants_geometry else 'is a table'}; name one with "
                     "--source-layer")

    def size(o: tuple[str, str, str | None]) -> int:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return int(pyogrio.read_info(o[0], layer=o[1])["features"])
        except Exception:  # noqa: BLE001 - an unreadable layer is simply not the biggest
            return -1

    sizes = sorted(((size(o), o) for o in kind), key=lambda x: -x[0])
    pick = sizes[0][1]
    others = ", ".join(f"{o[1]} ({n})" for n, o in sizes[1:])
    notes.append(f"the file has several layers; read {pick[1]} ({sizes[0][0]} features), the "
                 f"biggest, and not {others}; name another with --source-layer")
    return pick


def _gdal_message(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text.split("; It might help")[0]


def _open_csv(path: Path, wants_geometry: bool, geometry_field: str | None) -> Source:
    """A CSV: checked with Python's csv module first, because GDAL silently reads nothing after
    an unbalanced quote; the WKT column (if the layer has geometry) is named or recognised."""
    name = path.name
    header, records = _csv_shape(path)
    geometry_column = None
    if wants_geometry:
        if geometry_field is not None:
            if geometry_field not in header:
                raise refuse(name, f"has no column {geometry_field!r} for the geometry; its "
                             f"columns are {', '.join(header)}")
            geometry_column = geometry_field
        else:
            lower = {h.lower(): h for h in header}
            geometry_column = next((lower[n] for n in WKT_COLUMN_NAMES if n in lower), None)
            if geometry_column is None:
                geometry_column = next((h for h in header if h.lower().startswith("wkt")), None)
    options = {"KEEP_GEOM_COLUMNS": "YES", "EMPTY_STRING_AS_NULL": "NO"}
    if geometry_column is not None:
        options["GEOM_POSSIBLE_NAMES"] = geometry_column
    return Source(path=path, reader="gdal", dataset=gdal_path(path), layer=None, driver="CSV",
                  fields=tuple(header), has_geometry=geometry_column is not None, crs=None,
                  feature_count=records, geometry_column=geometry_column, open_options=options)


def _csv_shape(path: Path) -> tuple[list[str], int]:
    name = path.name
    csv.field_size_limit(1 << 30)  # a WKT value can be megabytes long
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, strict=True)
            header = next(reader, None)
            if header is None:
                raise refuse(name, "is empty (no header line); deliver the CSV with its header")
            records = 0
            for row in reader:
                if row and any(cell.strip() for cell in row):
                    records += 1
                    if len(row) != len(header):
                        raise refuse(name, f"line {reader.line_num} has {len(row)} values for "
                                     f"{len(header)} columns; check the quoting and commas")
    except UnicodeDecodeError as exc:
        raise refuse(name, f"is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as "
                     "UTF-8 CSV") from None
    except csv.Error as exc:
        raise refuse(name, f"is not valid CSV near line {reader.line_num} ({exc}); usually an "
                     "unbalanced double quote: a quote inside a value must be doubled") from None
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        raise refuse(name, f"has duplicate column names ({', '.join(dup)}); rename them")
    return header, records


def _open_parquet(path: Path, geometry_field: str | None) -> Source:
    """GeoParquet: its 'geo' metadata names the WKB column and the CRS (a column without a
    'crs' entry is OGC:CRS84, as the GeoParquet specification says)."""
    import pyarrow.parquet as pq

    name = path.name
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise refuse(name, f"is not a readable Parquet file ({exc})") from None
    schema = pf.schema_arrow
    meta = (pf.metadata.metadata or {}).get(b"geo")
    crs: str | None = None
    column = geometry_field
    if meta is not None:
        geo = json.loads(meta)
        column = column or geo.get("primary_column")
        spec = geo.get("columns", {}).get(column, {})
        encoding = str(spec.get("encoding", "WKB")).upper()
        if encoding != "WKB":
            raise refuse(name, f"stores its geometry as {encoding}; only WKB GeoParquet is "
                         "read: convert it (e.g. with ogr2ogr or geopandas)")
        if "crs" not in spec:
            crs = "OGC:CRS84"
        elif spec["crs"] is not None:
            crs = json.dumps(spec["crs"])
    elif column is None:
        column = next((n for n in schema.names if n.lower() in PARQUET_GEOMETRY_NAMES), None)
    if column is not None and column not in schema.names:
        raise refuse(name, f"has no column {column!r}; its columns are {', '.join(schema.names)}")
    fields = tuple(n for n in schema.names if n != column)
    _check_count(name, pf.metadata.num_rows)
    return Source(path=path, reader="parquet", dataset=str(path), layer=None, driver="Parquet",
                  fields=fields, has_geometry=column is not None, crs=crs,
                  feature_count=pf.metadata.num_rows, geometry_column=column,
                  notes=() if meta is not None or column is None else (
                      f"no GeoParquet metadata: column {column} read as WKB geometry",))

