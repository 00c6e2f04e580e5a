"""Writes the layer catalogue (rulem_db/catalogue/layers.py) into ops.layer, where the SQL files
read it.

Why a table and not generated SQL: the numbered files under sql/ build each layer's versioning
triggers, pub and history views and summaries by looping over the catalogue, so a new layer
needs no SQL edit; the files are plain SQL and read the catalogue where SQL can, in a table.
Called by the migration step (migrations/env.py) at head, before the SQL files run; when a row
changed, every SQL file is applied again, since their hashes alone would not show it.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from rulem_db.catalogue import layers

_COLUMNS = ("layer", "position", "rule", "doc", "geometry_type", "natural_key", "restricted",
            "owner_column", "ingest_scope", "outside_plan_area", "legend_group",
            "legend_position", "editable", "ledger_input", "recheck")


def catalogue_rows(catalogue: tuple[layers.Layer, ...] | None = None) -> list[dict[str, Any]]:
    """The rows of ops.layer for the catalogue (by default the current layers.LAYERS)."""
    rows = []
    for position, layer in enumerate(catalogue or layers.LAYERS, start=1):
        rows.append({
            "layer": layer.name, "position": position, "rule": layer.rule, "doc": layer.doc,
            "geometry_type": layer.geometry, "natural_key": layer.key,
            "restricted": layer.restricted, "owner_column": layer.owner,
            "ingest_scope": layer.ingest_scope, "outside_plan_area": layer.outside_plan_area,
            "legend_group": layer.legend[0] if layer.legend else None,
            "legend_position": layer.legend[1] if layer.legend else None,
            "editable": layer.editable, "ledger_input": layer.ledger_input,
            "recheck": layer.recheck.as_json() if layer.recheck else None,
        })
    return rows


def write_layer_catalogue(conn: sa.Connection) -> bool:
    """Make ops.layer hold exactly the catalogue; True when anything changed."""
    wanted = {r["layer"]: r for r in catalogue_rows()}
    stored = {r["layer"]: dict(r) for r in conn.execute(sa.text(
        f"SELECT {', '.join(_COLUMNS)} FROM ops.layer")).mappings()}
    if stored == wanted:
        return False
    gone = sorted(set(stored) - set(wanted))
    if gone:
        conn.execute(sa.text("DELETE FROM ops.layer WHERE layer = ANY(:gone)"), {"gone": gone})
    changed = [r for name, r in wanted.items() if stored.get(name) != r]
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in _COLUMNS[1:])
    values = ", ".join("CAST(:recheck AS jsonb)" if c == "recheck" else ":" + c
                       for c in _COLUMNS)
    conn.execute(sa.text(
        f"INSERT INTO ops.layer ({', '.join(_COLUMNS)}) VALUES ({values}) "
        f"ON CONFLICT (layer) DO UPDATE SET {updates}"),
        [{**r, "recheck": None if r["recheck"] is None else json.dumps(r["recheck"])}
         for r in changed])
    return True
