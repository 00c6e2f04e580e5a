"""The demo's hand-checkable figures, read from ``cases.toml`` beside this module into
``DEMO_CASES`` (one entry per permit) and ``PLAN_FACTS`` (the plan area's totals).

Why a data file: every permit's figures sit with the arithmetic behind them, as comments next to
the values. Data, not code: no layer module reads them to draw a feature, and
tests/unit/test_demo.py recomputes each from the written files.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from demo.layers.frame import parcel_key

CASES_FILE = Path(__file__).with_name("cases.toml")
OPTIONAL_CASE_KEYS = ("buffer", "markers")  # absent from a case in cases.toml: it has none


def _tuples(value: Any) -> Any:
    """TOML arrays as tuples, all the way down.

    Why: the cases were tuple literals before they became a data file, and their users rely on
    it (``case["fails"]`` compared with ``()``, members hashed into sets).
    """
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def read_cases(path: Path = CASES_FILE) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(DEMO_CASES, PLAN_FACTS) from cases.toml: arrays as tuples, a missing buffer or markers as
    None (TOML has no null)."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    cases: dict[str, dict[str, Any]] = _tuples(data["cases"])
    for case in cases.values():
        for key in OPTIONAL_CASE_KEYS:
            case.setdefault(key, None)
    return cases, _tuples(data["plan_facts"])


DEMO_CASES: dict[str, dict[str, Any]]
PLAN_FACTS: dict[str, Any]
DEMO_CASES, PLAN_FACTS = read_cases()


def _add_pins_to_cases() -> None:
    """cases.toml names parcels by layout id (readable); tests elsewhere match on PINs."""
    for case in DEMO_CASES.values():
        case["pins"] = tuple(parcel_key(p) for p in case["parcels"])
        case["credit_by_pin_acres"] = {parcel_key(p): a
                                       for p, a in case["credit_by_parcel_acres"].items()}


_add_pins_to_cases()
