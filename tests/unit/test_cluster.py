"""The embedded cluster's tuning of postgresql.conf, on a copy in tmp_path: no cluster is
started or reached (the tests of the running cluster are in tests/database/test_cluster.py).

Why: _tune() edits a real server's configuration; writing its block twice, or dropping a
library someone else preloads, would break a server on its next restart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rulem_db.local import cluster


def test_tuning_keeps_libraries_already_preloaded_and_writes_once(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    conf.write_text("port = 5999\nshared_preload_libraries = 'pg_stat_statements'\n")
    layout = cluster._Layout(mode="user", version=cluster._pick_version(), state_dir=tmp_path,
                             data_dir=tmp_path, socket_dir=tmp_path, log_file=tmp_path / "log",
                             conf_file=conf)
    if not (layout.bindir.parent / "lib" / f"{cluster.PRELOAD}.so").is_file():
        pytest.skip("PostGIS is not installed for this PostgreSQL")
    cluster._tune(layout)
    cluster._tune(layout)  # idempotent
    text_ = conf.read_text()
    assert text_.count(cluster.TUNING_MARK) == 1
    assert cluster._read_conf(conf)["shared_preload_libraries"] == (
        f"pg_stat_statements, {cluster.PRELOAD}")
