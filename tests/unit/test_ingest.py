"""The geometry of the ingest tests' fixtures (tests/support/ingest_helpers.py), checked without a
database.

Why: the worked answers of tests/ingest/test_ingest.py (acres, which feature is repaired and which
refused) rest on these numbers; if a helper changed, those tests would fail for the wrong
reason, or pass by accident.
"""

from __future__ import annotations

from ingest_helpers import SQUARE_ACRES, Y0, bowtie, spike, square


def test_fixture_geometry_is_what_the_answers_assume() -> None:
    """The fixtures' worked answers rest on these numbers."""
    assert square(0).area == 10_000 and round(SQUARE_ACRES, 4) == 2.4711
    assert square(1).bounds[0] - square(0).bounds[0] == 110
    assert spike(0).area == 10_000 and not spike(0).is_valid
    assert bowtie(0).area == 0 and not bowtie(0).is_valid
    assert square(0).bounds[1] == Y0
