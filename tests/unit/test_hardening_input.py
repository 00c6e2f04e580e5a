"""The input limits read from the environment (etl.limits.Limits); the refusals they cause
during an ingest are tested against a database in tests/security/test_hardening_input.py.

Why: a limit set by an operator in the environment that is misread, or silently ignored when
it is not a number, would let a hostile file through or refuse every good one.
"""

from __future__ import annotations

import pytest

from etl.limits import Limits


def test_limits_default_and_come_from_the_environment() -> None:
    assert Limits.from_env({}) == Limits()
    lim = Limits.from_env({"RULEM_MAX_FILE_BYTES": "5e9", "RULEM_MAX_ZIP_RATIO": "250",
                           "RULEM_MAX_VERTICES": "1_000"})
    assert (lim.max_file_bytes, lim.max_zip_ratio, lim.max_vertices) == (5 * 10**9, 250.0, 1000)
    with pytest.raises(ValueError, match="RULEM_MAX_FEATURES='many' is not a number"):
        Limits.from_env({"RULEM_MAX_FEATURES": "many"})
    with pytest.raises(ValueError, match="must be more than 0"):
        Limits.from_env({"RULEM_MAX_FEATURES": "0"})
