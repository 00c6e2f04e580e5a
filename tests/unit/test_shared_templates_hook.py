"""The controller's clean-up of what test workers shared (tests/support/shared_templates.py)
reaches the cluster only when a worker built something: the unit tier runs with PostgreSQL
stopped, and its workers build nothing."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
REFUSED = pytest.fail.Exception


def _controller_session(folder: Path) -> SimpleNamespace:
    """What pytest_sessionfinish reads of a session whose workers' shared folder is `folder`."""
    plugins = SimpleNamespace(hasplugin=lambda name: name == "dsession")
    factory = SimpleNamespace(getbasetemp=lambda: folder)
    return SimpleNamespace(config=SimpleNamespace(pluginmanager=plugins,
                                                  _tmp_path_factory=factory))


def test_a_run_whose_workers_built_nothing_leaves_the_cluster_alone(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    hook = request.config.pluginmanager.get_plugin(str(ROOT_CONFTEST)).pytest_sessionfinish
    hook(_controller_session(tmp_path))  # no lock file: nothing to drop, no cluster asked for
    (tmp_path / "rulem_shared_tmpl_123.lock").touch()  # a worker asked for a shared database
    with pytest.raises(REFUSED, match="tried to start the embedded cluster|tried to connect"):
        hook(_controller_session(tmp_path))
