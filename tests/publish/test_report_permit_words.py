"""The words of the permit's decision document, without a database: a requirement reads with
the parameter values in force written in (never the parameter's name), a check code breaks
only after an underscore, the decision follows the permit record, and the map's scale bar is
in feet. The values are sql/030's defaults; each expected sentence is worked by hand.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from rulem_db.reports.permit.read import PermitDocument
from rulem_db.reports.permit.render import code, decision, in_values, words


def p(value: object, unit: str | None = None) -> dict:
    """A parameter row as pub.parameter gives it."""
    if isinstance(value, str):
        return {"value_num": None, "value_text": value, "unit": unit}
    return {"value_num": Decimal(str(value)), "value_text": None, "unit": unit}


PARAMETERS = {
    "buffer_avg_width_ft": p(50, "ft"),
    "buffer_min_width_ft": p(25, "ft"),
    "impervious_trigger_sqft": p(10000, "ft2"),
    "heritage_threshold": p("BC", "rank"),
    "monitoring_years": p(5, "years"),
    "buffer_slope_max_hv": p(5, "H:V"),
    "buffer_soil_depth_in": p(18, "in"),
    "buffer_organic_min_pct": p(5, "%"),
    "buffer_organic_max_pct": p(15, "%"),
    "pretreatment_max_share": p(0.20, "ratio"),
    "rate_control_events": p("2,10,100", "years"),
}


@pytest.mark.parametrize(("title", "expected"), [
    ("The buffer averages at least buffer_avg_width_ft in width.",
     "The buffer averages at least 50 ft in width."),
    ("more than impervious_trigger_sqft of new impervious surface",
     "more than 10,000 sq ft of new impervious surface"),
    ("No wetland community of Natural Heritage rank heritage_threshold (B/C) or higher",
     "No wetland community of Natural Heritage rank B/C or higher"),
    ("A certified replacement is monitored for monitoring_years years",
     "A certified replacement is monitored for 5 years"),
    ("slope no steeper than before or buffer_slope_max_hv:1, top buffer_soil_depth_in in "
     "uncompacted, organic matter buffer_organic_min_pct-buffer_organic_max_pct %",
     "slope no steeper than before or 5:1, top 18 in uncompacted, organic matter 5-15 %"),
    ("infiltration (with at most pretreatment_max_share of it by pretreatment)",
     "infiltration (with at most 20 % of it by pretreatment)"),
    ("no increase over existing rates for the storm events of rate_control_events.",
     "no increase over existing rates for the storm events of 2-, 10- and 100-year."),
    ("The buffer is at least buffer_min_width_ft wide at all points.",
     "The buffer is at least 25 ft wide at all points."),
])
def test_a_requirement_reads_with_the_values_in_force(title: str, expected: str) -> None:
    assert in_values(title, PARAMETERS) == expected


def test_a_name_inside_another_word_is_left_alone() -> None:
    assert in_values("xbuffer_avg_width_ft_old", PARAMETERS) == "xbuffer_avg_width_ft_old"


def test_a_check_code_breaks_only_after_an_underscore() -> None:
    assert code("replacement_outside_plan_area") == (
        '<span class="code">replacement_<wbr>outside_<wbr>plan_<wbr>area</span>')
    assert code("a<b") == '<span class="code">a&lt;b</span>'


def test_a_statute_number_never_breaks_at_its_dot() -> None:
    assert words("Minn. Stat. 103D.537 <x>") == (
        'Minn. Stat. <span class="keep">103D.537</span> &lt;x&gt;')


def _doc(status: str, decided: dt.date | None, conditions: int,
         as_of: dt.date | None = None) -> PermitDocument:
    return PermitDocument(
        permit={"permit_no": "24-004", "status": status, "decided_on": decided}, as_of=as_of,
        balance={}, parcels=[], explain=[], transfers=[], checks=[], findings=[],
        conditions=[{"source": "permit"}] * conditions, parameters={}, provenance={},
        batches=[])


def test_the_decision_follows_the_permit_record() -> None:
    day = dt.date(2024, 6, 11)
    assert decision(_doc("approved", day, 2))[0] == "Approved with conditions"
    assert decision(_doc("approved", day, 0))[0] == "Approved"
    assert decision(_doc("denied", day, 0))[0] == "Denied"
    assert decision(_doc("under_review", None, 0))[0] == "No decision yet"
    # as of a date before the decision, there was none
    assert decision(_doc("approved", day, 2, dt.date(2024, 6, 1)))[0] == "No decision yet"


def test_the_scale_bar_is_in_feet() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rulem_db.reports.permit.draw import FOOT_M, scale_bar_feet

    fig, ax = plt.subplots()
    try:
        ax.set_xlim(0, 400)          # 400 m = 1,312 ft wide: a quarter holds 200 ft
        ax.set_ylim(0, 300)
        scale_bar_feet(ax)
        labels = [t.get_text() for t in ax.texts]
        assert labels == ["200 ft"]
        bar = ax.lines[0].get_xdata()
        assert bar[1] - bar[0] == pytest.approx(200 * FOOT_M)
    finally:
        plt.close(fig)
