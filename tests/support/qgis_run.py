"""Headless QGIS for the tests (Debian's QGIS 3.22, python3-qgis, run by the system Python in a
subprocess): the interpreter (installed when missing, if root), a private environment logged in
through a pg_service entry, and a driver script run with a JSON job on stdin."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from publish_fixture import Login
from sqlalchemy.engine import make_url

from rulem_db.paths import ROOT

SYSTEM_PYTHON = "/usr/bin/python3"
DRIVER = ROOT / "tests" / "support" / "publish_qgis_driver.py"
PACKAGES = ["python3-qgis", "qgis-providers"]


def _has_qgis() -> bool:
    if not Path(SYSTEM_PYTHON).exists():
        return False
    return subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"],
                          capture_output=True).returncode == 0


@pytest.fixture(scope="session")
def qgis_python() -> str:
    """/usr/bin/python3 with PyQGIS, installed from Debian when missing and we are root."""
    if _has_qgis():
        return SYSTEM_PYTHON
    if os.geteuid() != 0:
        pytest.skip("QGIS is not installed and installing it needs root: "
                    f"apt-get install -y {' '.join(PACKAGES)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log = []
    # one install at a time: the test workers (scripts/test) each ask for it at once
    with open(Path(tempfile.gettempdir()) / "rulem-db-qgis-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for cmd in ([], ["apt-get", "install", "-y", *PACKAGES], ["apt-get", "update"],
                    ["apt-get", "install", "-y", *PACKAGES]):
            if cmd:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                      timeout=1800)
                log.append(proc.stderr[-500:])
            if _has_qgis():
                return SYSTEM_PYTHON
    pytest.fail(f"could not install {' '.join(PACKAGES)}: {' '.join(log)[-800:]}")


def qgis_environment(login: Login, url: str, folder: Path) -> dict[str, str]:
    """Environment for a headless QGIS: service 'rulem' = the database of url as login, and a
    private HOME and runtime folder (folder, made private)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)
    (folder / "home").mkdir()
    service = login.service_file(folder / "pg_service.conf", make_url(url).database)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(folder / "home"),
               PGSERVICEFILE=str(service), XDG_RUNTIME_DIR=str(folder))
    return env


def drive(python: str, env: dict[str, str], job: dict, driver: Path = DRIVER) -> dict:
    """Run a QGIS driver script with job on stdin; its JSON report."""
    proc = subprocess.run([python, str(driver)], input=json.dumps(job), capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout, proc.stderr[-2000:]
    return json.loads(proc.stdout)
