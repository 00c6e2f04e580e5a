"""The district's basemap setting (rulem_web/basemap.py), checked without a server: a value that
could break out of the style or the CSP, carries a password, names another scheme or is no
raster PMTiles file is refused in one line, before `rulem-db serve` listens (that it stops
serve is tests/web/test_web_map_serving.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulem_web.basemap import BasemapError, parse

HOSTILE_BASEMAPS = (
    "javascript:alert(1)//{z}/{x}/{y}",
    "ftp://tiles.example.org/{z}/{x}/{y}.png",
    "https://user:secret@tiles.example.org/{z}/{x}/{y}.png",
    "https://tiles.example.org/{z}/{x}/{y}.png; script-src *",
    "https://tiles.example.org/{z}/{x}/{y}.png'",
    'https://tiles.example.org/"{z}/{x}/{y}.png',
    "https://tiles.example.org/{z}/{x}/{y}.png\nimg-src *",
    "https://tiles.example.org /{z}/{x}/{y}.png",
    "https://tiles.example.org/tile.png",          # no {z}/{x}/{y}
    "/no/such/basemap.pmtiles",
)


@pytest.mark.parametrize("value", HOSTILE_BASEMAPS)
def test_a_hostile_value_is_refused_in_one_line(value: str) -> None:
    with pytest.raises(BasemapError) as refused:
        parse(value)
    said = str(refused.value)
    assert said.startswith("RULEM_BASEMAP_URL") and "\n" not in said, said
    assert "secret" not in said


def test_a_file_that_is_no_pmtiles_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pmtiles"
    fake.write_bytes(b"not a pmtiles file" * 10)
    with pytest.raises(BasemapError, match="is not a PMTiles version 3 file"):
        parse(str(fake))


def test_an_xyz_template_gives_its_origin_for_the_csp() -> None:
    basemap = parse("https://Tiles.Example.org:8443/osm/{z}/{x}/{y}.png", "© <OSM>")
    assert (basemap.tiles, basemap.origin) == (
        "https://Tiles.Example.org:8443/osm/{z}/{x}/{y}.png", "https://tiles.example.org:8443")
    assert basemap.attribution == "© &lt;OSM&gt;"
    assert parse("") is None and parse(None) is None
