"""One look (docs/publishing.md): PINs shown one way everywhere, one severity palette,
labels at site scale, acre columns BI tools read as decimals.

Read-only tests share the publishing fixture (tests/support/publish_fixture.py: parcel P1 is
500 m x 300 m = 37.0658 acres, impact 100 m x 50 m = 1.2355 acres, PINs 01-31-23-11-000N).
"""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal

import pytest
import sqlalchemy as sa
from publish_fixture import published_url  # noqa: F401  (fixture)

from rulem_db.pins import pin_display
from rulem_db.reports.palette import SEVERITY_COLOURS

# PINs as files deliver them, each with the form people should read, worked out by hand:
# 12 digits in any punctuation become NN-NN-NN-NN-NNNN; anything else stays as delivered.
PINS = {
    "313223110001": "31-32-23-11-0001",  # Anoka County, digits only
    "31-32-23-11-0001": "31-32-23-11-0001",  # already in display form
    "15 31 22 11 0003": "15-31-22-11-0003",  # the demo's spaced PIN
    "31.32.23.11.0001": "31-32-23-11-0001",
    " 313223110001 ": "31-32-23-11-0001",
    "3132231100011": "3132231100011",  # 13 digits: not a county PIN
    "31322311000": "31322311000",  # 11 digits
    "R31-32-23-11-0001": "R31-32-23-11-0001",  # a letter: not only digits
    "127-123": "127-123",  # Cambridge, MA map-lot (../shared/data/real/cambridge_ma)
    "P-1": "P-1",
    "": "",
    "31-32-23-11-000é": "31-32-23-11-000é",  # 11 ASCII digits and a letter
}


@pytest.fixture(scope="module")
def pub(published_url: str) -> Iterator[sa.Connection]:  # noqa: F811
    eng = sa.create_engine(published_url)
    with eng.connect() as conn:
        yield conn
    eng.dispose()


def test_sql_and_python_show_every_pin_alike(pub: sa.Connection) -> None:
    inputs = [*PINS, None]
    shown = dict(pub.execute(sa.text(
        "SELECT p, core.pin_display(p) FROM unnest(CAST(:a AS text[])) p"), {"a": inputs}).all())
    for pin in inputs:
        assert shown[pin] == pin_display(pin), repr(pin)
    assert {pin: shown[pin] for pin in PINS} == PINS
    assert shown[None] is None


def _generated_pins(n: int) -> list[str]:
    """PINs of every shape the short ways of core.pin_display meet (sql/025): 12 digits bare,
    in display form and in any punctuation, one digit short or over, with letters and
    non-ASCII digits and letters, 11 to 13 characters around the length test."""
    rng = random.Random(20261207)
    marks = ["", "-", " ", ".", "/", "--", "é", "٣", "R", "a"]
    pins = []
    for _ in range(n):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.choice((10, 11, 12, 13))))
        cuts = sorted(rng.sample(range(1, len(digits)), rng.randint(0, 4)))
        parts = [digits[a:b] for a, b in zip([0, *cuts], [*cuts, len(digits)], strict=True)]
        pins.append(rng.choice(marks).join(parts) if rng.random() < 0.5 else
                    "".join(p + rng.choice(marks) for p in parts))
        if rng.random() < 0.1:
            pins.append(f"{digits[:2]}-{digits[2:4]}-{digits[4:6]}-{digits[6:8]}-{digits[8:]}")
    return pins


def test_sql_and_python_show_generated_pins_alike(pub: sa.Connection) -> None:
    """The short ways through core.pin_display give what the general one gives: every
    generated PIN shown as the twin shows it (the twin does only the general way)."""
    inputs = _generated_pins(5000)
    shown = pub.execute(sa.text(
        "SELECT core.pin_display(p) FROM unnest(CAST(:a AS text[])) WITH ORDINALITY AS x(p, i) "
        "ORDER BY i"), {"a": inputs}).scalars().all()
    differ = [(pin, got) for pin, got in zip(inputs, shown, strict=True)
              if got != pin_display(pin)]
    assert differ == []
    # every way through the function is taken, many times
    display = re.compile(r"[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{4}")
    ways = Counter(
        "short" if len(p) < 12 else
        "12 digits" if re.fullmatch(r"[0-9]{12}", p) else
        "display form" if display.fullmatch(p) else
        "reformatted" if pin_display(p) != p else "as delivered" for p in inputs)
    assert min(ways.values()) >= 50 and len(ways) == 5, ways


def test_pub_shows_the_display_pin_beside_the_delivered_one(db_url: str) -> None:
    eng = sa.create_engine(db_url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) VALUES "
                "(1, '313223110001', '313223110001', ST_Multi(ST_MakeEnvelope("
                "487000, 4993000, 487100, 4993100, 26915))), "
                "(1, '127-123', '127123', ST_Multi(ST_MakeEnvelope("
                "487100, 4993000, 487200, 4993100, 26915)))"))
        with eng.connect() as conn:
            parcels = conn.execute(sa.text(
                "SELECT pin, pin_display, area_acres FROM pub.parcel ORDER BY pin")).all()
            balances = conn.execute(sa.text(
                "SELECT pin FROM pub.parcel_balance ORDER BY pin")).scalars().all()
            history = conn.execute(sa.text(
                "SELECT pin, pin_display FROM pub.parcel_history ORDER BY pin")).all()
    finally:
        eng.dispose()
    # a 100 m square is 10,000 m^2 / 4046.8564224 = 2.4711 acres
    assert parcels == [("127-123", "127-123", Decimal("2.4711")),
                       ("313223110001", "31-32-23-11-0001", Decimal("2.4711"))]
    assert balances == ["127-123", "31-32-23-11-0001"]
    assert history == [tuple(p[:2]) for p in parcels]


def test_a_parcel_balance_is_found_by_its_display_pin_through_an_index(
        pub: sa.Connection) -> None:
    """pub.parcel_balance shows core.pin_display(pin); looking a parcel up by that PIN must
    use the expression index (revision 0025), not sum the ledger of every parcel."""
    pub.execute(sa.text("SET enable_seqscan = off"))
    try:
        plan = "\n".join(pub.execute(sa.text(
            "EXPLAIN SELECT * FROM pub.parcel_balance WHERE pin = '01-31-23-11-0001'"
        )).scalars())
    finally:
        pub.execute(sa.text("RESET enable_seqscan"))
    assert "ix_parcel_pin_display" in plan, plan


def test_every_acre_column_in_pub_is_numeric_12_4(pub: sa.Connection) -> None:
    columns = pub.execute(sa.text(
        "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
        "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') AND a.attnum > 0 "
        "AND NOT a.attisdropped AND a.attname LIKE '%acres' ORDER BY 1, 2")).all()
    held = {(view, column): kind for view, column, kind in columns}
    assert {("parcel", "area_acres"), ("parcel_history", "area_acres"),
            ("layer_summary", "area_acres"), ("parcel_balance", "balance_acres"),
            ("plan_balance", "unallocated_balance_acres"), ("ledger_entry", "acres"),
            ("stormwater_volume", "uncovered_acres"),
            ("reconciliation_run", "plan_balance_acres")} <= set(held)
    assert {k: v for k, v in held.items() if v != "numeric(12,4)"} == {}
    # and the figures stay what they were: P1 is 500 m x 300 m = 37.0658 acres
    assert pub.execute(sa.text(
        "SELECT area_acres FROM pub.parcel WHERE pin = '01-31-23-11-0001'")).scalar_one() \
        == Decimal("37.0658")


def test_one_severity_palette_in_python_the_database_and_qgis(pub: sa.Connection) -> None:
    published = dict(pub.execute(sa.text(
        "SELECT severity, colour FROM pub.severity_style ORDER BY rank")).all())
    assert published == SEVERITY_COLOURS
    assert list(published) == ["error", "warning", "info"]
    styles = pub.execute(sa.text(
        "SELECT styleqml::text FROM public.layer_styles WHERE f_table_schema = 'pub' "
        "AND f_table_name = 'finding' AND stylename = 'rulem-db default'")).scalars().all()
    assert styles
    for qml in styles:
        rules = {r.get("label"): r for r in ET.fromstring(qml).iter("rule")}
        symbols = {s.get("name"): s for s in ET.fromstring(qml).iter("symbol")}
        for severity, colour in SEVERITY_COLOURS.items():
            rgb = ",".join(str(int(colour[i:i + 2], 16)) for i in (1, 3, 5))
            symbol = symbols[rules[severity.capitalize()].get("symbol")]
            colours = {p.get("v") for p in symbol.iter("prop")
                       if p.get("k") in ("color", "line_color")}
            assert f"{rgb},255" in colours, (severity, colours)


def _style(pub: sa.Connection, view: str) -> ET.Element:
    qml = pub.execute(sa.text(
        "SELECT styleqml::text FROM public.layer_styles WHERE f_table_schema = 'pub' "
        "AND f_table_name = :v AND stylename = 'rulem-db default' ORDER BY type LIMIT 1"),
        {"v": view}).scalar_one()
    return ET.fromstring(qml)


@pytest.mark.parametrize(("view", "field"), [
    ("parcel", "pin_display"), ("parcel_balance", "pin"), ("parcel_history", "pin_display"),
    ("impact", "permit_no"), ("replacement", "permit_no"), ("finding", "check_code")])
def test_qgis_labels_parcels_permits_and_findings_at_site_scale(
        pub: sa.Connection, view: str, field: str) -> None:
    root = _style(pub, view)
    assert root.get("labelsEnabled") == "1"
    assert "Labeling" in root.get("styleCategories", "")
    text = root.find("labeling/settings/text-style")
    rendering = root.find("labeling/settings/rendering")
    assert text is not None and rendering is not None
    assert text.get("fieldName") == field and text.get("isExpression") == "0"
    # QGIS writes a label's scale range as scaleMin (zoomed in) and scaleMax (zoomed out)
    assert (rendering.get("scaleVisibility"), rendering.get("scaleMin"),
            rendering.get("scaleMax")) == ("1", "1", "10000")


def test_other_layers_are_not_labelled(pub: sa.Connection) -> None:
    for view in ("wetland", "soil", "buffer"):
        root = _style(pub, view)
        assert root.get("labelsEnabled") == "0" and root.find("labeling") is None, view
