"""`rulem-db demo`: the main job on the bundled demo plan area, for a new user's first run.

It makes sure the database exists and is current, generates the deterministic demo plan area
(GeoPackage and CSV files, as a consultant or the county would deliver them), loads them through
the ordinary ingest path (a second run finds the same files and loads nothing), runs the
nightly reconciliation once (recompute the ledger, run the checks, compare with the previous
run, write the report) and prints what the database holds, read back from it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from demo import DEMO_PLAN_AREA
from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db import db as dbmod

Say = Callable[[str], None]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="load the bundled demo plan area and reconcile it")
    p.add_argument("--dir", type=Path, default=None,
                   help="where the demo files are written (default: ~/.cache/rulem-db/demo)")
    p.add_argument("--reports", type=Path, default=Path("reports"),
                   help="where the run report is written (default: ./reports)")
    add_format_option(p)
    p.set_defaults(func=run)


def demo_dir() -> Path:
    """The demo files' home: a cache, since they are regenerated identically at will."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rulem-db" / "demo"


def run(args: argparse.Namespace) -> int:
    from demo import load as load_demo
    from flows.nightly import reconcile_now

    say = _say(args.format)
    owner_url = config.database_url(args.db, owner=True)  # the schema is the owner's work
    url = config.database_url(args.db)  # loading and reconciling are the writer's
    say(f"database: {config.redact(url)}")
    dbmod.migrate(owner_url, plan_area=DEMO_PLAN_AREA)
    directory = args.dir or demo_dir()
    if _generate_if_stale(directory, _generator_sources()):
        say(f"demo files generated: {directory}")
    else:
        say(f"demo files: {directory} (already generated)")
    results = load_demo.load_demo(url, directory)
    loaded = [r for r in results if r.status == "loaded"]
    say(f"ingest: {len(loaded)} files loaded, {len(results) - len(loaded)} unchanged since an "
        "earlier run")
    summary = reconcile_now(url, reports=args.reports.resolve(), started_via="demo",
                            use_prefect=False)
    _print_results(url, args.format)
    for line in summary.lines():
        say(line)
    return 0 if summary.status != "failed" else 1


def _generator_sources() -> tuple[Path, ...]:
    """The files the demo is generated from: every module of the demo package (the generator is
    split by layer, demo/layers/) and its cases file."""
    from demo.cases import CASES_FILE

    return (*sorted(CASES_FILE.parent.rglob("*.py")), CASES_FILE)


def _generate_if_stale(directory: Path, sources: tuple[Path, ...]) -> bool:
    """Generate the demo files unless this generator already wrote them there.

    Why: a GeoPackage carries GDAL's write timestamps, so regenerated files differ byte for byte
    and would be ingested again (finding nothing changed, but slowly). The stamp is the hash of
    the generator's modules and its cases file, so a change to any of them regenerates.
    """
    from demo import generate as demo

    stamp = directory / ".generator-sha256"
    h = hashlib.sha256()
    for source in sources:
        h.update(source.read_bytes())
    digest = h.hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == digest and \
            (directory / "manifest.json").is_file():
        return False
    demo.generate(directory)
    stamp.write_text(digest + "\n")
    return True


def _say(fmt: str) -> Say:
    """Progress lines for people; machine formats get only the tables."""
    def say(message: str) -> None:
        if fmt == "table":
            print(message, flush=True)
    return say


def _print_results(url: str, fmt: str) -> None:
    code = DEMO_PLAN_AREA[0]
    with dbmod.connect(url) as conn:
        layers = conn.execute(sa.text(
            "SELECT layer, geometry_type, features, versions, area_acres, length_ft "
            "FROM pub.layer_summary WHERE plan_area = :code ORDER BY layer"),
            {"code": code}).all()
        parcels = conn.execute(sa.text(
            "SELECT pin, impact_acres, required_acres, credit_acres, credit_proposed_acres, "
            "credit_hosted_acres, balance_acres, status FROM pub.parcel_balance "
            "ORDER BY pin")).all()
        plan = conn.execute(sa.text(
            "SELECT impact_acres, required_acres, credit_acres, credit_proposed_acres, "
            "balance_acres, status FROM pub.plan_balance")).all()
        findings = conn.execute(sa.text(
            "SELECT permit_no, paragraph, check_code, severity, count(*) AS findings "
            "FROM pub.finding GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3")).all()
    if fmt != "table":  # one document: the sections keyed by name
        import json

        from rulem_cli.output import _plain

        def rows(cols, data):
            return [{c: _plain(v) for c, v in zip(cols, r, strict=True)} for r in data]

        doc = {
            "layers": rows(("layer", "geometry", "features", "versions", "area_acres",
                            "length_ft"), layers),
            "parcel_balance": rows(PARCEL_COLS, parcels),
            "plan_balance": rows(PLAN_COLS, plan),
            "findings": rows(FINDING_COLS, findings),
        }
        if fmt == "json":
            print(json.dumps(doc, indent=2))
        else:
            emit(PARCEL_COLS, parcels, "csv")
        return
    print()
    emit(("layer", "geometry", "features", "versions", "area_acres", "length_ft"), layers,
         title="What the database holds (current features per layer):")
    print()
    active = [p for p in parcels if p.status != "none" or p.credit_hosted_acres]
    emit(PARCEL_COLS, active, title="1:1 replacement balance per parcel (acres; parcels with "
         "impact, credit or hosted replacement):")
    print(f"{len(parcels) - len(active)} other parcels have no impact and no credit "
          "(rulem-db balance lists them all).")
    print()
    emit(PLAN_COLS, plan, title="Plan-wide balance (acres):")
    print()
    emit(FINDING_COLS, findings, title="Rule check findings by permit and paragraph:")
    print()


PARCEL_COLS = ("pin", "impact", "required", "credit", "proposed", "hosted", "balance", "status")
PLAN_COLS = ("impact", "required", "credit", "proposed", "balance", "status")
FINDING_COLS = ("permit", "paragraph", "check", "severity", "findings")
