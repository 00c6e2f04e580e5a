"""The inbox folder: what arrived, which layer each file is, and where it goes afterwards.

Layout (docs/operations.md). Staff and consultants drop files into `inbox/<layer>/` (the
folder names the layer: `inbox/delineation/smith_2025.gpkg`, `inbox/parcel/anoka.zip`), or
anywhere in the inbox with a small manifest beside the file, `<file>.ingest.json`:

    {"layer": "delineation", "crs": "EPSG:26915", "permit": "24-017",
     "study_area": "smith_study_area.gpkg", "mapping": "smith_fields.json",
     "skip_bad_features": false}

(also "source_layer" for a multi-layer file, "records": true for a file of delineation
records, "delineation" for the number of a delineation to revise: the options of
`rulem-db ingest`, docs/ingest.md).

Files the manifest names (study area, mapping) travel with their file. A shapefile is its .shp
with the companion files of the same name; a File Geodatabase folder (`*.gdb`) is one item.
Hidden files, README files, partial downloads (`.part`, `.tmp`, `.crdownload`) and files
younger than the settle time are left where they are.

After the run a loaded or duplicate file moves to `archive/<date>/run-<id>/<path in inbox>`, a
refused one to `quarantine/<date>/run-<id>/<path in inbox>` with `<file>.error.txt` beside it.
A file ingest could not finish reading (GDAL spinning on a recursive view, stopped after the
stall limit of etl.limits) is refused like any other, so it is quarantined with its one-line
reason and the run goes on with the next item.
Nothing here touches the database: this module is plain file handling, tested on its own.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulem_db.catalogue import layers
from rulem_db.catalogue.layers import BY_NAME

SIDECAR_SUFFIX = ".ingest.json"
SIDECAR_KEYS = ("layer", "crs", "mapping", "permit", "study_area", "skip_bad_features",
                "source_layer", "records", "delineation")
SHAPEFILE_COMPANIONS = (".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx", ".shp.xml",
                        ".qmd", ".fix", ".aih", ".ain", ".atx")
PARTIAL_SUFFIXES = (".part", ".partial", ".tmp", ".crdownload", ".download", ".lock")


@dataclass(frozen=True)
class InboxItem:
    """One thing to ingest: a file (or .gdb folder) and everything that travels with it."""

    path: Path
    rel: str
    layer: str | None
    parts: tuple[Path, ...]
    options: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None

    @property
    def name(self) -> str:
        return self.path.name


def load_order() -> tuple[str, ...]:
    """Layers ordered so that each comes after the layers it references (permits before
    impacts, delineations before wetlands), ties in catalogue order: the catalogue's
    load_order(), read at call time so a layer added to the catalogue is ingested in its
    place."""
    return layers.load_order()


def layer_of_folder(name: str) -> str | None:
    """The layer a folder name stands for: the layer's name, or its plural."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key in BY_NAME:
        return key
    if key.endswith("s") and key[:-1] in BY_NAME:
        return key[:-1]
    return None


def _ignored(path: Path) -> bool:
    name = path.name.lower()
    return (name.startswith((".", "~$", "readme")) or name.endswith(PARTIAL_SUFFIXES)
            or name in ("thumbs.db", "desktop.ini"))


def _companion_of(path: Path) -> Path | None:
    """The .shp a companion file belongs to, if it is one and the .shp is there."""
    name = path.name
    for suffix in SHAPEFILE_COMPANIONS:
        if name.lower().endswith(suffix):
            stem = name[: -len(suffix)]
            for shp in (path.with_name(stem + ".shp"), path.with_name(stem + ".SHP")):
                if shp.exists():
                    return shp
    return None


def _read_sidecar(sidecar: Path) -> tuple[dict[str, Any], str | None]:
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"{sidecar.name} is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return {}, f"{sidecar.name} must hold a JSON object"
    unknown = sorted(set(data) - set(SIDECAR_KEYS))
    if unknown:
        return {}, (f"{sidecar.name}: unknown keys {', '.join(unknown)} (allowed: "
                    f"{', '.join(SIDECAR_KEYS)})")
    return data, None


def _attached(path: Path, options: dict[str, Any]) -> tuple[dict[str, Any], list[Path], str | None]:
    """Resolve the files a manifest names (relative to it); they travel with the item."""
    resolved = dict(options)
    files: list[Path] = []
    for key in ("study_area", "mapping"):
        value = options.get(key)
        if not value:
            continue
        target = (path.parent / str(value)).resolve()
        if not target.exists():
            return resolved, files, f"{key} file {value} named in the manifest is missing"
        resolved[key] = target
        files.append(target)
        if target.suffix.lower() == ".shp":
            files += [p for p in target.parent.iterdir()
                      if p != target and _companion_of(p) == target]
    return resolved, files, None


def _candidates(inbox: Path) -> list[Path]:
    """Every file or .gdb folder under the inbox, not descending into .gdb folders."""
    found: list[Path] = []
    stack = [inbox]
    while stack:
        folder = stack.pop()
        for entry in sorted(folder.iterdir()):
            if _ignored(entry):
                continue
            if entry.is_dir():
                if entry.suffix.lower() == ".gdb":
                    found.append(entry)
                else:
                    stack.append(entry)
            elif entry.is_file():
                found.append(entry)
    return found


def _age_seconds(path: Path, now: float) -> float:
    if path.is_dir():
        stamps = [p.stat().st_mtime for p in path.rglob("*")] or [path.stat().st_mtime]
        return now - max(stamps)
    return now - path.stat().st_mtime


def scan(inbox: Path, settle_seconds: float = 0.0, now: float | None = None) -> list[InboxItem]:
    """The items in the inbox, in load order (referenced layers first), then by path."""
    inbox = Path(inbox)
    if not inbox.is_dir():
        return []
    now = time.time() if now is None else now
    entries = _candidates(inbox)
    sidecars = {p for p in entries if p.name.lower().endswith(SIDECAR_SUFFIX)}
    items: list[InboxItem] = []
    claimed: set[Path] = set()
    mains: list[tuple[Path, Path | None]] = []
    for path in entries:
        if path in sidecars or _companion_of(path) is not None:
            continue
        sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
        mains.append((path, sidecar if sidecar in sidecars else None))
    # Files named by a manifest belong to that item, not to themselves.
    for path, sidecar in mains:
        if sidecar is not None:
            options, _ = _read_sidecar(sidecar)
            _, attached, _ = _attached(path, options)
            claimed.update(p.resolve() for p in attached)
    for path, sidecar in mains:
        if path.resolve() in claimed:
            continue
        items.append(_item(inbox, path, sidecar))
    order = {name: i for i, name in enumerate(load_order())}
    items = [i for i in items if all(_age_seconds(p, now) >= settle_seconds
                                     for p in i.parts if p.exists())]
    return sorted(items, key=lambda i: (order.get(i.layer or "", len(order)), i.rel))


def _item(inbox: Path, path: Path, sidecar: Path | None) -> InboxItem:
    rel = path.relative_to(inbox).as_posix()
    parts: list[Path] = [path]
    if path.suffix.lower() == ".shp":
        parts += [p for p in path.parent.iterdir() if p != path and _companion_of(p) == path]
    options: dict[str, Any] = {}
    problem: str | None = None
    if sidecar is not None:
        parts.append(sidecar)
        options, problem = _read_sidecar(sidecar)
        if problem is None:
            options, attached, problem = _attached(path, options)
            parts += attached
    layer: str | None = None
    if problem is None:
        given = options.get("layer")
        if given:
            layer = layer_of_folder(str(given))
            if layer is None:
                problem = f"manifest names an unknown layer {given!r}"
        else:
            top = Path(rel).parts[0] if len(Path(rel).parts) > 1 else None
            layer = layer_of_folder(top) if top else None
            if layer is None:
                problem = (f"cannot tell the layer of {rel}: put it in inbox/<layer>/ (e.g. "
                           f"inbox/delineation/) or add {path.name}{SIDECAR_SUFFIX} with "
                           f'{{"layer": "..."}}')
    return InboxItem(path=path, rel=rel, layer=layer, parts=tuple(dict.fromkeys(parts)),
                     options={k: v for k, v in options.items() if k != "layer"},
                     problem=problem)


def prepare(inbox: Path) -> list[Path]:
    """Create the inbox and one folder per layer in it (the layout staff drop files into);
    returns the folders created. Existing folders and files are left as they are."""
    made = []
    for folder in [Path(inbox)] + [Path(inbox) / name for name in load_order()]:
        if not folder.is_dir():
            folder.mkdir(parents=True)
            made.append(folder)
    return made


def sha256(path: Path) -> str | None:
    """SHA-256 of a file (None for a folder such as a .gdb)."""
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def destination(root: Path, day: dt.date, run_id: int, rel: str) -> Path:
    """Where an item with this inbox path goes under archive/ or quarantine/."""
    return Path(root) / day.isoformat() / f"run-{run_id}" / rel


def move(item: InboxItem, inbox: Path, root: Path, day: dt.date, run_id: int) -> Path:
    """Move the item and everything travelling with it; returns the main file's new path."""
    inbox = Path(inbox)
    target_main = destination(root, day, run_id, item.rel)
    for part in item.parts:
        if not part.exists():
            continue
        try:
            rel = part.resolve().relative_to(inbox.resolve()).as_posix()
        except ValueError:  # a manifest may name a file outside the inbox: leave it there
            continue
        target = destination(root, day, run_id, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(part), str(target))
    _prune_empty(item.path.parent, inbox)
    return target_main


def _prune_empty(folder: Path, inbox: Path) -> None:
    """Remove folders the move emptied, below the layer folders (which staff expect to stay)."""
    inbox = inbox.resolve()
    folder = folder.resolve()
    while folder != inbox and folder.parent != inbox and folder.is_dir():
        if any(folder.iterdir()):
            return
        folder.rmdir()
        folder = folder.parent


def write_error_report(target_main: Path, text: str) -> Path:
    """Write `<file>.error.txt` beside a quarantined file."""
    report = target_main.with_name(target_main.name + ".error.txt")
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(text, encoding="utf-8")
    return report


def error_report(item: InboxItem, reason: str, details: list[str], sha: str | None,
                 run_id: int, when: dt.datetime) -> str:
    """The error report staff read: what, why, and what to do."""
    lines = [
        f"File:     {item.rel}",
        f"Layer:    {item.layer or 'unknown'}",
        f"SHA-256:  {sha or '-'}",
        f"Run:      {run_id} at {when.isoformat(timespec='seconds')}",
        "",
        "Refused:",
        f"  {reason}",
    ]
    details = [d for d in details if d != reason]  # a one-line refusal is its own detail
    if details:
        lines += ["", "Details:"] + [f"  {d}" for d in details]
    lines += [
        "",
        "Nothing from this file was loaded (an ingest is all or nothing).",
        "To retry: fix the file (or add a manifest <file>.ingest.json with the layer, crs, "
        "mapping ...), then put it back into the inbox folder of its layer; the next run "
        "loads it.",
        "",
    ]
    return "\n".join(lines)
