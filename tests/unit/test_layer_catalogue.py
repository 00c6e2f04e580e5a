"""The layer catalogue refuses a layer whose facts contradict each other, checked without a
database; what the catalogue makes in a database is tested in
tests/database/test_layer_catalogue.py.

Why: the catalogue (rulem_db/catalogue/layers.py) is the one place a layer fact is written;
a contradiction caught when the Layer is made never reaches a migration.
"""

from __future__ import annotations

import pytest

from rulem_db.catalogue.layers import BY_NAME, LAYERS, Col, Layer, load_order


def test_catalogue_refuses_inconsistent_layers() -> None:
    with pytest.raises(ValueError, match="ingest_scope 'owner' needs an owner column"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), ingest_scope="owner")
    with pytest.raises(ValueError, match="owner 'permit_id' is not one of its columns"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), owner="permit_id")
    with pytest.raises(ValueError, match="outside_plan_area must be one of"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), outside_plan_area="maybe")
    with pytest.raises(ValueError, match="ledger_input must be one of"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), ledger_input="sometimes")


# What sql/170 (the change queue's triggers) and sql/285 (checks.recheck_places and the layers
# whose change makes a full run) listed by hand before the catalogue held these facts: the
# catalogue gives exactly the same.
FORMER_QUEUE_TRIGGERS = {
    "impact": "queue_owned_change", "replacement": "queue_owned_change",
    "structure": "queue_owned_change", "bmp": "queue_owned_change",
    "grading": "queue_owned_change",
    "wetland": "queue_spatial_change", "delineation": "queue_spatial_change",
    "buffer": "queue_spatial_change", "heritage_area": "queue_spatial_change",
    "parcel": "queue_spatial_change", "permit": "queue_permit_change",
    "credit_transfer": "queue_transfer_change", "cwmp_area": "queue_plan_change",
}
FORMER_CHARGE_TRIGGERS = {"impact", "structure", "bmp", "grading"}
SITE, NEAR = "checks.reach_m()", "checks.recheck_reach_m()"
FORMER_RECHECK_PLACES = {
    "functional_assessment": (SITE, (), "0"),
    "ditch": (SITE, (), "0"),
    "buffer": (SITE, ("*",), "0"),
    "trail": (SITE, ("*",), "0"),
    "buffer_marker": (SITE, ("buffer",), NEAR),
    "easement": (SITE, (), "0"),
    "soil": (None, ("*",), "0"),
    "heritage_area": (None, ("*",), "0"),
    "parcel": (None, ("buffer",), "0"),
    # changed on purpose since the hand-kept list: a disturbance reaches the permits whose
    # disturbance meets it (7(b) names the ground of each earlier permit; docs/checks.md)
    **{name: (None, ("impact", "structure", "bmp", "grading"), "0") for name in (
        "impact", "structure", "grading", "bmp")},
    # ... and so do a wetland's, a delineation's and a built replacement's: disturbance in
    # wetland is charged, replacement wetland included (sql/110; docs/checks.md)
    **{name: (SITE, ("impact", "structure", "bmp", "grading"), "0") for name in (
        "wetland", "delineation")},
    "replacement": (None, ("replacement", "impact", "structure", "bmp", "grading"), "0"),
    **{name: (None, (), "0") for name in (
        "impervious", "land_cover", "subwatershed", "declaration", "hydroperiod", "permit",
        "credit_transfer", "replacement_monitoring")},
}
FORMER_EVERYTHING = {"cwmp_area", "central_wetland_seed", "figure5_area"}
# demo/generate.py's hand-kept LOAD_ORDER, before it became the catalogue's load_order().
FORMER_DEMO_ORDER = (
    "cwmp_area", "central_wetland_seed", "parcel", "soil", "heritage_area", "figure5_area",
    "permit", "delineation", "wetland", "functional_assessment", "ditch", "impact",
    "replacement", "credit_transfer", "buffer", "trail", "buffer_marker", "easement",
    "declaration", "impervious", "grading", "structure", "land_cover", "subwatershed", "bmp",
    "hydroperiod", "species_record", "replacement_monitoring", "financial_assurance",
    "permit_condition", "permit_record",
)


def test_the_ledger_inputs_are_what_sql_170_listed() -> None:
    trigger = {"disturbance": "queue_owned_change", "replacement": "queue_owned_change",
               "place": "queue_spatial_change", "permit": "queue_permit_change",
               "transfer": "queue_transfer_change", "plan": "queue_plan_change"}
    assert {la.name: trigger[la.ledger_input] for la in LAYERS
            if la.ledger_input} == FORMER_QUEUE_TRIGGERS
    assert {la.name for la in LAYERS if la.ledger_input == "disturbance"} == \
        FORMER_CHARGE_TRIGGERS


def test_the_rechecks_are_what_sql_285_listed() -> None:
    places = {la.name: (SITE if la.recheck.site else None, la.recheck.features,
                        NEAR if la.recheck.near else "0")
              for la in LAYERS if la.recheck and not la.recheck.everything}
    assert places == FORMER_RECHECK_PLACES
    assert {la.name for la in LAYERS if la.recheck and la.recheck.everything} == \
        FORMER_EVERYTHING
    for la in LAYERS:  # a kind of feature compared with is a layer with a permit
        for kind in la.recheck.features if la.recheck else ():
            assert kind == "*" or "permit_id" in {c.name for c in BY_NAME[kind].columns}


def test_the_load_order_is_the_demos_former_order_with_unrelated_layers_in_catalogue_order(
        ) -> None:
    """The demo now loads in the inbox's order (load_order()); it differs from its former
    hand-kept order only in where soil, which references and is referenced by no layer, sits
    among the other such layers (heritage_area, figure5_area), which changes no figure."""
    order = load_order()
    assert sorted(order) == sorted(FORMER_DEMO_ORDER) == sorted(BY_NAME)
    moved = [name for name in FORMER_DEMO_ORDER if name not in ("soil",)]
    assert [name for name in order if name != "soil"] == moved
    assert order.index("soil") < order.index("permit")
    for la in LAYERS:
        for col in la.columns:
            if col.ref_layer and col.ref_layer != la.name:
                assert order.index(col.ref_layer) < order.index(la.name), (la.name, col.name)


def test_the_qgis_projects_unchecked_layers_are_what_build_project_listed() -> None:
    """qgis/build_project.py kept HIDDEN = {"soil", "land_cover", "delineation", "plan_balance"}
    by hand; the layers among them are the catalogue's legend_unchecked now (plan_balance is a
    view, not a layer, and stays named in the builder)."""
    assert {la.name for la in LAYERS if la.legend_unchecked} == {"soil", "land_cover",
                                                                "delineation"}
    assert all(la.legend for la in LAYERS if la.legend_unchecked)  # unchecked: still drawn
