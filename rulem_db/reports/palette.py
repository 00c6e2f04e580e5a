"""The palette: one colour per meaning wherever it is drawn (docs/publishing.md, "Severity
palette").

Error red, warning orange, info blue, in QGIS (sql/940_layer_styles.sql, which publishes the
same values as pub.severity_style for the web), the report maps (reports/map.py), the report
tables (reports/html.py) and the permit's decision document (reports/permit/draw.py).
tests/publish/test_publish_look.py holds this dictionary to pub.severity_style.

Why these values: each stands out on white paper and on a light basemap (contrast with white
5.2:1, 3.8:1 and 5.9:1, at least the 3:1 WCAG asks of graphics; red and blue pass 4.5:1 for
text too), and none is a colour a balance status uses. QGIS also tells them apart by marker
shape (circle, triangle, square) for readers who cannot tell red from orange.
"""

from __future__ import annotations

SEVERITY_COLOURS: dict[str, str] = {
    "error": "#d7191c",
    "warning": "#d95f02",
    "info": "#2166ac",
}

# A parcel's (and the plan's) 1:1 balance status, on the web map, in QGIS (sql/940's
# parcel_balance rules), the nightly report's map and tables (reports/map.py, html.py).
# Deficit is magenta, not the error red: a parcel short of credit is not a finding.
BALANCE_COLOURS: dict[str, str] = {
    "deficit": "#c51b7d",
    "balanced": "#fee08b",
    "surplus": "#1a9641",
    "none": "#ffffff",
}

# Wetland filled: an ochre of earth, not the error red (sql/940's impact rule for kind fill).
IMPACT_FILL = "#bf812d"

# The layers a site is drawn with, in QGIS and on the web (sql/940's rules) and on the permit's
# decision document (reports/permit/draw.py): (fill, outline). Replacement wetland is teal,
# apart from the parcels' surplus green and the wetland's blue; a buffer is a pale green.
LAYER_COLOURS: dict[str, tuple[str, str]] = {
    "wetland": ("#3182bd", "#08519c"),                    # an approved delineation's wetland
    "buffer": ("#d9f0a3", "#4d9221"),
    "replacement certified": ("#01665e", "#003c30"),
    "replacement constructed": ("#5ab4ac", "#01665e"),
    "impact fill": (IMPACT_FILL, "#67001f"),
}

# Every meaning and its colour: no two meanings share one (tests/web/test_web_map_serving.py).
MEANINGS: dict[str, str] = {
    **{f"finding {k}": v for k, v in SEVERITY_COLOURS.items()},
    **{f"balance {k}": v for k, v in BALANCE_COLOURS.items()},
    **{k: fill for k, (fill, _) in LAYER_COLOURS.items()},
}
