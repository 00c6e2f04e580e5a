"""NUL characters in a delivered file's values and field names: found and refused, never cut.

Why a check of its own: GDAL hands text over as C strings, so a value `ab\0cd` in a GeoPackage,
a GeoJSON (`"ab\u0000cd"`) or a CSV arrives as `ab`, and a field name `no\0te` as `no`, without
a warning; PostgreSQL text cannot hold a NUL at all. Loading the rest of the value would change
the data silently, so the file is refused with a line per value naming the feature and the
field (and the field names themselves), as for any data that would otherwise be changed.

Where GDAL would cut, the file itself is read (a CSV's bytes, a GeoJSON's text when it holds
an escaped NUL, a GeoPackage layer's text columns with SQLite); what arrives in Arrow batches
(GeoParquet, read by pyarrow, keeps its NULs) is checked batch by batch while staging.
Shapefiles are not checked: a .dbf pads its fields with NULs by design, and GDAL's reading of
one as the end of the value is the format's rule.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
import urllib.parse
from contextlib import closing

import pyarrow as pa
import pyarrow.compute as pc

from etl.problems import IngestRefused, Problem
from etl.sources import Source

MAX_PROBLEMS = 200
HINT = ("nothing was loaded (a NUL cannot be stored, and cutting the value there would change "
        "it; --skip-bad-features does not skip it)")
_VALUE = "holds a NUL character (\\x00), which cannot be stored; remove it and deliver the file " \
    "again"
_NAME = "this field's name holds a NUL character (\\x00); rename the field and deliver the file " \
    "again"


class Found:
    """The NULs found, as problems (the first MAX_PROBLEMS of them, and a count of all)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.total = 0
        self.names: set[str] = set()

    def value(self, fid: object, field: str) -> None:
        self._add(Problem(self.file, _VALUE, feature=None if fid is None else str(fid),
                          field=field.replace("\0", "\\x00")))

    def name(self, field: str) -> None:
        if field not in self.names:
            self.names.add(field)
            self._add(Problem(self.file, _NAME, field=field.replace("\0", "\\x00")))

    def _add(self, problem: Problem) -> None:
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def refuse(self) -> None:
        if self.total:
            raise IngestRefused(self.file, self.problems, self.total, HINT)


def check_source(src: Source) -> None:
    """Refuse a file whose values or field names hold a NUL that GDAL would cut (a loose
    CSV, GeoJSON or GeoPackage; see the module doc)."""
    if src.reader != "gdal" or src.dataset.startswith("/vsizip/"):
        return
    found = Found(src.name)
    if src.driver == "CSV":
        _csv(src, found)
    elif src.driver == "GeoJSON":
        _geojson(src, found)
    elif src.driver == "GPKG" and src.layer is not None:
        _gpkg(src, found)
    found.refuse()


class Beside:
    """check_source in a thread of its own, started when the ingest has read the file and
    whose outcome the ingest asks for before it commits (etl.ingest).

    Why: searching a state's GeoPackage of 1,000,000 parcels for NULs is a pass of SQLite
    over every row (0.4-0.7 s), which held up the read of a re-delivery whose changed rows
    take 0.1 s to stage. Started once the rows are staged, it runs beside the validation and
    the merge, which are the server's work; SQLite and the file reads run outside Python's
    lock. A file with a NUL is still refused before anything is committed, and its refusal
    comes before any other: a value GDAL cut can fail a check of its own (a key cut short),
    and the NUL is what the sender must fix."""

    def __init__(self, src: Source) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(src,), daemon=True,
                                        name="rulem-nul-check")
        self._thread.start()

    def _run(self, src: Source) -> None:
        try:
            check_source(src)
        except BaseException as exc:  # noqa: BLE001 - the ingest's thread raises it (etl.ingest)
            self._error = exc

    def outcome(self) -> BaseException | None:
        """Wait for the search; what it raised (IngestRefused for a NUL), or None."""
        self._thread.join()
        return self._error


def check_batch(found: Found, batch: pa.RecordBatch) -> None:
    """NULs in an Arrow batch's field names and text values (as read: GeoParquet)."""
    names = batch.schema.names
    fids = batch.column(names.index("_fid")) if "_fid" in names else None
    for name, col in zip(names, batch.columns, strict=True):
        if name in ("_fid", "_geom"):
            continue
        if "\0" in name:
            found.name(name)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            continue
        hits = pc.fill_null(pc.match_substring(col, "\0"), False)
        if not pc.any(hits).as_py():
            continue
        for i in pc.indices_nonzero(hits).to_pylist():
            found.value(None if fids is None else fids[i].as_py(), name)


def _has_nul(path, needle: bytes) -> bool:
    """Whether the file's bytes hold needle (read a megabyte at a time)."""
    keep = len(needle) - 1
    with path.open("rb") as f:
        tail = b""
        while chunk := f.read(1 << 20):
            if needle in tail + chunk:
                return True
            tail = chunk[-keep:] if keep else b""
    return False


def _csv(src: Source, found: Found) -> None:
    if not _has_nul(src.path, b"\0"):
        return
    with src.path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, strict=True)
        header = next(reader, [])
        for name in header:
            if "\0" in name:
                found.name(name)
        fid = 0
        for row in reader:
            if not (row and any(cell.strip() for cell in row)):
                continue
            fid += 1  # GDAL's feature ids of a CSV: its records, from 1
            for name, cell in zip(header, row, strict=False):
                if "\0" in cell:
                    found.value(fid, name)


def _geojson(src: Source, found: Found) -> None:
    """A GeoJSON holds a NUL only as the escape \\u0000; the file is parsed only then."""
    if not _has_nul(src.path, b"\\u0000"):
        return
    with src.path.open("rb") as f:
        data = json.load(io.TextIOWrapper(f, encoding="utf-8", errors="replace"))
    features = data.get("features", []) if isinstance(data, dict) else []
    ids = [f.get("id") if isinstance(f, dict) else None for f in features]
    use_ids = all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids)
    for i, feature in enumerate(features):
        props = feature.get("properties") if isinstance(feature, dict) else None
        if not isinstance(props, dict):
            continue
        for name, value in props.items():
            if "\0" in name:
                found.name(name)
            if isinstance(value, str) and "\0" in value:
                found.value(ids[i] if use_ids else i, name)


def _gpkg(src: Source, found: Found) -> None:
    """The layer's text columns, with SQLite: a NUL byte in the stored text (SQLite keeps it;
    GDAL cuts the value there)."""
    uri = f"file:{urllib.parse.quote(str(src.path.absolute()))}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as con:
            info = con.execute("SELECT name, type, pk FROM pragma_table_info(?)",
                               (src.layer,)).fetchall()
            geom = {r[0] for r in con.execute(
                "SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?",
                (src.layer,))}
            pk = next((r[0] for r in info if r[2]), None)
            if pk is None:
                return
            names = [name for name, _type, is_pk in info if not is_pk and name not in geom]
            if not names:
                return
            # one pass over the table for every column (a pass each cost 0.17 s per
            # 1,000,000 parcels, the geometry blobs read every time)
            hits = [f"typeof({_ident(n)}) = 'text' AND instr(CAST({_ident(n)} AS BLOB), "
                    "x'00') > 0" for n in names]
            found_rows = con.execute(
                f"SELECT {_ident(pk)}, {', '.join(hits)} FROM {_ident(src.layer)} "
                f"WHERE {' OR '.join(f'({h})' for h in hits)} ORDER BY 1").fetchall()
            for i, name in enumerate(names):  # by field, then feature
                for row in found_rows:
                    if row[i + 1]:
                        found.value(row[0], name)
    except sqlite3.Error:
        return  # what SQLite cannot read, GDAL reports when it reads the file


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
