"""The order the test modules are handed to the test workers: the longest first.

Why: scripts/test runs pytest-xdist with `--dist loadfile` (a module whole on one worker) and
`--no-loadscope-reorder`, so the workers take the modules in collection order, each taking the
next when it is nearly done. Left to itself xdist orders them by their number of tests, which
put the few-test, long modules (a Prefect server, the bench harness, a cluster of a test's own)
last, and a worker could start a minute-long module when the other had nothing left to do.
Longest first, the last modules are short ones and the workers end together.

LONGEST is measured (seconds of a module on one worker of a full run, rounded); it needs to be
roughly right, not exact, and a module missing from it only loses its place at the front. The
other modules follow, the ones with more tests first (xdist's own order). The order of the tests
within a module is kept (several modules share a page or a server across their tests in file
order). Workers must collect the same order, so it depends on the collected names only.
"""

from __future__ import annotations

from collections import Counter

import pytest

# Longest first: seconds on a worker of a full run (three workers on two cores), databases on tmpfs
# (the first modules on the workers also wait for the run's shared templates: shared_templates.py).
LONGEST: dict[str, int] = {
    "tests/flows/test_prefect_server.py": 100,
    "tests/web/test_web_map.py": 61,
    "tests/web/test_web_attack.py": 51,
    "tests/checks/test_finding_record.py": 47,
    "tests/project/test_bench.py": 42,
    "tests/database/test_fresh_server.py": 35,
    "tests/security/test_hardening_input.py": 27,
    "tests/database/test_schema.py": 25,
    "tests/web/test_web_map_serving.py": 21,
    "tests/ingest/test_ingest_demo.py": 21,
    "tests/web/test_web_clients.py": 20,
    "tests/web/test_report_permit_web.py": 19,
    "tests/security/test_hardening_crash.py": 19,
    "tests/checks/test_checks_incremental.py": 19,
    "tests/ingest/test_ingest_real.py": 19,
    "tests/flows/test_flows.py": 17,
    "tests/ledger/test_ledger_writers.py": 17,
    "tests/security/test_write_rules.py": 14,
    "tests/web/test_web_api.py": 14,
    "tests/publish/test_publish_qgis.py": 14,
    "tests/publish/test_publish_demo.py": 14,
    "tests/publish/test_report_permit.py": 14,
    "tests/checks/test_checks_workers.py": 13,
    "tests/security/test_hardening_reader.py": 12,
    "tests/unit/test_demo.py": 12,
    "tests/ingest/test_ingest.py": 11,
    "tests/ledger/test_ledger_integrity.py": 11,
    "tests/security/test_security_privileges.py": 11,
    "tests/ledger/test_ledger_watch.py": 10,
    "tests/database/test_sql_files.py": 10,
    "tests/ledger/test_ledger.py": 10,
    "tests/ledger/test_ledger_explain.py": 9,
    "tests/unit/test_hardening_reader.py": 9,
    "tests/database/test_standby.py": 9,
    "tests/ingest/test_ingest_redelivery_merge.py": 9,
    "tests/ledger/test_ledger_charged_once.py": 8,
    "tests/publish/test_publish_ogr.py": 8,
    "tests/publish/test_publish_export.py": 8,
    "tests/publish/test_report_tiles.py": 8,
    "tests/checks/test_finding_review.py": 8,
    "tests/ledger/test_ledger_queue.py": 7,
}


def module_of(item: pytest.Item) -> str:
    """The item's module as xdist's loadfile names it (the node id up to the first ::)."""
    return item.nodeid.split("::", 1)[0]


def longest_first(items: list[pytest.Item]) -> None:
    """Reorder items in place: whole modules, LONGEST's first, then by number of tests."""
    tests = Counter(module_of(item) for item in items)
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(module_of(item), len(first_seen))

    def key(module: str) -> tuple[int, int, int]:
        return (-LONGEST.get(module, 0), -tests[module], first_seen[module])

    # sorted() is stable: the tests of a module keep their order
    items[:] = sorted(items, key=lambda item: key(module_of(item)))
