"""The inbox folder logic of the flows (flows.inbox) and the retry policy (flows.retry): plain
files and functions, no database."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import psycopg2
import pytest
import sqlalchemy as sa

from flows import inbox, retry


def _touch(path: Path, text: str = "x", age: float = 3600.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_load_order_puts_referenced_layers_first():
    order = inbox.load_order()
    for before, after in (("permit", "impact"), ("delineation", "wetland"),
                          ("permit", "replacement"), ("wetland", "functional_assessment"),
                          ("subwatershed", "bmp"), ("permit", "credit_transfer")):
        assert order.index(before) < order.index(after), (before, after)
    assert sorted(order) == sorted(set(order))


def test_layer_from_folder_or_manifest_in_load_order(tmp_path):
    _touch(tmp_path / "impact" / "fill.gpkg")
    _touch(tmp_path / "permits" / "permits.csv")  # plural folder names work too
    _touch(tmp_path / "from_consultant" / "smith.gpkg")
    _touch(tmp_path / "from_consultant" / "smith.gpkg.ingest.json",
           json.dumps({"layer": "delineation", "crs": "EPSG:26915",
                       "study_area": "smith_study.geojson"}))
    _touch(tmp_path / "from_consultant" / "smith_study.geojson")
    items = inbox.scan(tmp_path)
    assert [(i.rel, i.layer) for i in items] == [
        ("permits/permits.csv", "permit"),
        ("from_consultant/smith.gpkg", "delineation"),
        ("impact/fill.gpkg", "impact"),
    ]
    smith = items[1]
    assert smith.problem is None
    assert smith.options["crs"] == "EPSG:26915"
    assert smith.options["study_area"] == (tmp_path / "from_consultant" /
                                           "smith_study.geojson").resolve()
    # The study area travels with its delineation and is no item of its own.
    assert {p.name for p in smith.parts} == {"smith.gpkg", "smith.gpkg.ingest.json",
                                             "smith_study.geojson"}


def test_shapefile_is_one_item_with_its_companions(tmp_path):
    for ext in (".shp", ".shx", ".dbf", ".prj", ".cpg"):
        _touch(tmp_path / "parcel" / f"anoka{ext}")
    _touch(tmp_path / "parcel" / "orphan.dbf")  # no .shp: an item of its own
    items = inbox.scan(tmp_path)
    assert [i.rel for i in items] == ["parcel/anoka.shp", "parcel/orphan.dbf"]
    assert {p.suffix for p in items[0].parts} == {".shp", ".shx", ".dbf", ".prj", ".cpg"}


def test_unknown_layer_and_bad_manifest_are_problems_not_crashes(tmp_path):
    _touch(tmp_path / "loose.gpkg")
    _touch(tmp_path / "wetlandz" / "w.gpkg")
    _touch(tmp_path / "parcel" / "p.gpkg")
    _touch(tmp_path / "parcel" / "p.gpkg.ingest.json", "{not json")
    _touch(tmp_path / "parcel" / "q.gpkg")
    _touch(tmp_path / "parcel" / "q.gpkg.ingest.json", json.dumps({"lyr": "parcel"}))
    problems = {i.rel: i.problem for i in inbox.scan(tmp_path)}
    assert "put it in inbox/<layer>/" in problems["loose.gpkg"]
    assert "put it in inbox/<layer>/" in problems["wetlandz/w.gpkg"]
    assert "not valid JSON" in problems["parcel/p.gpkg"]
    assert "unknown keys lyr" in problems["parcel/q.gpkg"]


def test_partial_hidden_and_fresh_files_wait(tmp_path):
    _touch(tmp_path / "parcel" / "done.gpkg")
    _touch(tmp_path / "parcel" / "copying.gpkg.part")
    _touch(tmp_path / "parcel" / ".hidden.gpkg")
    _touch(tmp_path / "parcel" / "fresh.gpkg", age=5)
    assert [i.rel for i in inbox.scan(tmp_path, settle_seconds=60)] == ["parcel/done.gpkg"]
    assert [i.rel for i in inbox.scan(tmp_path)] == ["parcel/done.gpkg", "parcel/fresh.gpkg"]


def test_gdb_folder_is_one_item(tmp_path):
    _touch(tmp_path / "soil" / "ssurgo.gdb" / "a0000001.gdbtable")
    _touch(tmp_path / "soil" / "ssurgo.gdb" / "gdb")
    items = inbox.scan(tmp_path)
    assert [(i.rel, i.layer) for i in items] == [("soil/ssurgo.gdb", "soil")]
    assert inbox.sha256(items[0].path) is None


def test_move_keeps_layer_folders_and_writes_the_error_report(tmp_path):
    box = tmp_path / "inbox"
    for ext in (".shp", ".shx", ".dbf", ".prj"):
        _touch(box / "parcel" / "sub" / f"anoka{ext}")
    (item,) = inbox.scan(box)
    day = dt.date(2026, 11, 30)
    moved = inbox.move(item, box, tmp_path / "quarantine", day, 7)
    assert moved == tmp_path / "quarantine" / "2026-11-30" / "run-7" / "parcel" / "sub" / \
        "anoka.shp"
    assert sorted(p.name for p in moved.parent.iterdir()) == [
        "anoka.dbf", "anoka.prj", "anoka.shp", "anoka.shx"]
    assert (box / "parcel").is_dir() and not (box / "parcel" / "sub").exists()
    text = inbox.error_report(item, "no CRS", ["anoka.shp: feature 3: pin: missing"],
                              "ab" * 32, 7, dt.datetime(2026, 11, 30, 2, 0))
    report = inbox.write_error_report(moved, text)
    assert report.name == "anoka.shp.error.txt"
    body = report.read_text()
    assert "no CRS" in body and "feature 3" in body and "Run:      7" in body


def test_sha256_of_a_file(tmp_path):
    f = _touch(tmp_path / "a.csv", "abc")
    assert inbox.sha256(f) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# --- retries -----------------------------------------------------------------------------------
def _operational() -> sa.exc.OperationalError:
    return sa.exc.OperationalError("SELECT 1", {}, psycopg2.OperationalError("server closed"))


def test_transient_errors_are_retried_after_the_delays():
    calls, sleeps = [], []

    def flaky(x: int) -> int:
        calls.append(x)
        if len(calls) < 3:
            raise _operational()
        return x * 2

    assert retry.with_retries(flaky, 21, delays=(5.0, 30.0), sleep=sleeps.append) == 42
    assert len(calls) == 3 and sleeps == [5.0, 30.0]


def test_other_errors_and_exhausted_retries_fail():
    sleeps: list[float] = []

    def bad() -> None:
        raise ValueError("a bug, not the network")

    with pytest.raises(ValueError):
        retry.with_retries(bad, sleep=sleeps.append)
    assert sleeps == []

    def down() -> None:
        raise _operational()

    with pytest.raises(sa.exc.OperationalError):
        retry.with_retries(down, retries=2, delays=(1.0,), sleep=sleeps.append)
    assert sleeps == [1.0, 1.0]


def test_a_refusal_raised_while_handling_a_lost_connection_is_transient():
    try:
        try:
            raise _operational()
        except sa.exc.DBAPIError:
            raise RuntimeError("file.gpkg: refused") from None
    except RuntimeError as exc:
        assert retry.is_transient(exc)
    assert not retry.is_transient(RuntimeError("file.gpkg: no CRS"))
    assert not retry.is_transient(sa.exc.IntegrityError("INSERT", {}, Exception("dup")))


def test_prepare_makes_the_layer_folders_once(tmp_path):
    box = tmp_path / "inbox"
    made = inbox.prepare(box)
    assert box in made and (box / "delineation").is_dir() and (box / "parcel").is_dir()
    assert len(made) == len(inbox.load_order()) + 1
    _touch(box / "parcel" / "p.gpkg")
    assert inbox.prepare(box) == []
    assert (box / "parcel" / "p.gpkg").exists()


def test_final_errors_are_never_retried():
    try:
        try:
            raise _operational()
        except sa.exc.DBAPIError as lost:
            raise retry.Final("moved, but not recorded") from lost
    except retry.Final as exc:
        assert not retry.is_transient(exc)
