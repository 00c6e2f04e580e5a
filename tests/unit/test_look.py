"""One look without a database (docs/publishing.md): the PIN display form, figures in a
CSV as the table prints them, the report map's PIN labels at site scale and its parcel raster
averaged down to the figure's size. The PIN form is held to core.pin_display, and the palette
to pub.severity_style, in tests/publish/test_publish_look.py."""

from __future__ import annotations

import configparser
import csv
import io
import re
from decimal import Decimal
from pathlib import Path

import geopandas as gpd
import matplotlib.pyplot as plt
import numpy as np
import pytest
from shapely.geometry import box

from rulem_cli import main as cli
from rulem_cli.output import emit
from rulem_db.pins import pin_display
from rulem_db.reports import map as report_map
from rulem_db.reports import statement, tiles
from rulem_db.reports.html import CSS
from rulem_db.reports.palette import SEVERITY_COLOURS


def test_a_twelve_digit_pin_reads_nn_nn_nn_nn_nnnn_and_any_other_as_delivered() -> None:
    assert pin_display("313223110001") == "31-32-23-11-0001"
    assert pin_display("15 31 22 11 0003") == "15-31-22-11-0003"
    assert pin_display("31-32-23-11-0001") == "31-32-23-11-0001"
    assert pin_display("127-123") == "127-123"
    assert pin_display("3132231100012") == "3132231100012"
    assert pin_display(None) is None


def test_a_csv_prints_each_figure_as_the_table_does() -> None:
    columns = ("pin", "balance_acres", "area_acres", "features")
    rows = [("31-32-23-11-0001", Decimal("-1.2356"), 2.471053814671, 3),
            ("31-32-23-11-0002", Decimal("0"), Decimal("1234.5"), 1200)]
    table, text = io.StringIO(), io.StringIO()
    emit(columns, rows, "table", out=table)
    emit(columns, rows, "csv", out=text)
    printed = [line.split() for line in table.getvalue().splitlines()[2:]]
    written = list(csv.reader(text.getvalue().splitlines()))[1:]
    assert written == [["31-32-23-11-0001", "-1.2356", "2.4711", "3"],
                       ["31-32-23-11-0002", "0.0000", "1234.5000", "1200"]]
    # the same figures, the table with thousands separators
    assert [[c.replace(",", "") for c in r] for r in printed] == written


def test_the_statement_csv_writes_acres_to_four_decimals(tmp_path: Path) -> None:
    rows = [{"line_code": "opening_balance", "balance_acres": Decimal("0"), "entry_ids": None},
            {"line_code": "required", "balance_acres": Decimal("-2.4711"),
             "entry_ids": [3, 4]}]
    path = statement.write_csv(tmp_path / "s.csv", ("line_code", "balance_acres", "entry_ids"),
                               rows)
    assert path.read_text().splitlines() == [
        "line_code,balance_acres,entry_ids", "opening_balance,0.0000,", "required,-2.4711,3 4"]


def test_report_tables_use_the_severity_palette() -> None:
    for severity, colour in SEVERITY_COLOURS.items():
        assert f".s-{severity} {{ background: {colour};" in CSS


def _site(n: int, size: float) -> gpd.GeoDataFrame:
    """n square parcels of size metres in a row, PINs delivered without punctuation."""
    return gpd.GeoDataFrame(
        {"parcel_id": range(n), "status": ["surplus"] * n,
         "pin": [f"3132231100{i:02d}" for i in range(n)]},
        geometry=[box(i * size, 0, (i + 1) * size, size) for i in range(n)], crs=26915)


def test_parcels_are_labelled_with_their_display_pin_inside_each_parcel() -> None:
    labels = report_map.parcel_labels(_site(2, 100.0))
    assert [t for _, _, t in labels] == ["31-32-23-11-0000", "31-32-23-11-0001"]
    assert [(round(x), round(y)) for x, y, _ in labels] == [(50, 50), (150, 50)]


def test_the_map_labels_parcels_at_site_scale_only() -> None:
    # 1,000 m across 8 inches of paper (0.2032 m) is 1:4,921: site scale, labelled;
    # 100 km across the same 8 inches is 1:492,126: no labels
    for size, labelled in ((100.0, True), (10_000.0, False)):
        fig, ax = plt.subplots(figsize=(8, 8))
        try:
            ax.set_position((0, 0, 1, 1))
            ax.set_xlim(0, size * 10)
            ax.set_ylim(0, size * 10)
            ax.set_aspect("equal")
            scale = report_map.map_scale(ax, fig)
            assert round(scale) == round(size * 10 / 0.2032)
            drawn = report_map._label_parcels(ax, fig, _site(10, size))
            assert drawn == (10 if labelled else 0)
        finally:
            plt.close(fig)
    png = report_map.balance_map(_site(4, 100.0), None, None, "site")
    assert png.startswith(b"\x89PNG")


def test_the_parcel_raster_is_averaged_down_to_no_fewer_pixels_than_it_is_shown_on() -> None:
    # shown on 900 x 900 pixels, a 2,048-pixel raster is 2.28 times that (k = 2), an
    # 8,192-pixel one 9.1 times (k = 8); 1,792 x 2,048 on 1,000 x 700 pixels: k = 2 keeps
    # 1,024 >= 1,000 and 896 >= 700; on 1,100 pixels wide, 1,024 would be fewer (k = 1)
    raster = np.zeros((2048, 2048, 4), np.uint8)
    raster[0::2, 0::2] = 255  # one pixel of each 2 x 2 block white: 255 / 4 = 63.75 -> 64
    raster[-2:, -2:] = (10, 20, 30, 40)  # the last block all one colour
    shown = report_map.shown_pixels(raster, (900, 900))
    assert shown.shape == (1024, 1024, 4) and shown.dtype == np.uint8
    assert tuple(shown[0, 0]) == (64, 64, 64, 64)
    assert tuple(shown[-1, -1]) == (10, 20, 30, 40)
    big = np.full((8192, 8192, 4), 200, np.uint8)
    assert report_map.shown_pixels(big, (900, 900)).shape == (1024, 1024, 4)
    wide = np.zeros((1792, 2048, 4), np.uint8)
    assert report_map.shown_pixels(wide, (1000, 700)).shape == (896, 1024, 4)
    assert report_map.shown_pixels(wide, (1100, 700)) is wide


def test_the_balance_map_averages_its_raster_for_the_size_it_is_laid_out_at(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a 2,048 x 1,792 raster over 2,048 x 1,792 m on the default figure (11 x 8.5 in at
    # 110 dpi): laid out, it takes under 1,024 pixels of the map's width, so it is averaged
    # once (k = 2)
    frame = tiles.Frame(0.0, 1792.0, 1.0, 8, 7)
    raster = tiles.Raster(frame, np.full((1792, 2048, 4), 255, np.uint8), "kept")
    seen: list[tuple[int, ...]] = []
    real = report_map.shown_pixels

    def spy(pixels: np.ndarray, shown: tuple[float, float]) -> np.ndarray:
        out = real(pixels, shown)
        seen.append(out.shape)
        assert shown[0] <= out.shape[1] and shown[1] <= out.shape[0]
        return out

    monkeypatch.setattr(report_map, "shown_pixels", spy)
    png = report_map.balance_map(None, None, None, "raster", raster=raster)
    assert png.startswith(b"\x89PNG") and seen == [(896, 1024, 4)]


def test_schedule_help_says_it_needs_a_prefect_server_and_how_to_start_one(
        capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        cli.main(["schedule", "--help"])
    out = capsys.readouterr().out
    assert "needs a Prefect server" in out and "PREFECT_API_URL" in out
    assert "prefect server start" in out and "http://127.0.0.1:4200/api" in out


def test_the_example_service_entry_is_the_one_the_docs_and_the_qgis_project_name() -> None:
    root = Path(__file__).resolve().parents[2]
    services = configparser.ConfigParser()
    services.read(root / "docs" / "pg_service.conf.example")
    assert services.sections() == ["rulem"]
    assert dict(services["rulem"]) == {"host": "127.0.0.1", "port": "5433", "dbname": "rulem",
                                       "user": "rulem_owner"}  # the demo's embedded database
    named = set(re.findall(r"service='([^']+)'", (root / "qgis" / "rulem-db.qgs").read_text()))
    named |= set(re.findall(r"service=([\w-]+)", (root / "docs" / "publishing.md").read_text()))
    assert named == {"rulem"}
