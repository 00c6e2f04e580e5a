"""The layer catalogue refuses a layer whose facts contradict each other, checked without a
database; what the catalogue makes in a database is tested in tests/test_layer_catalogue.py.

Why: the catalogue (rulem_db/catalogue/layers.py) is the one place a layer fact is written;
a contradiction caught when the Layer is made never reaches a migration.
"""

from __future__ import annotations

import pytest

from rulem_db.catalogue.layers import Col, Layer


def test_catalogue_refuses_inconsistent_layers() -> None:
    with pytest.raises(ValueError, match="ingest_scope 'owner' needs an owner column"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), ingest_scope="owner")
    with pytest.raises(ValueError, match="owner 'permit_id' is not one of its columns"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), owner="permit_id")
    with pytest.raises(ValueError, match="outside_plan_area must be one of"):
        Layer("x", None, "", "", (Col("a", "text", "a"),), outside_plan_area="maybe")
