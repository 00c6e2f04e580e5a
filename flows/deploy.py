"""The inbox ingest as a deployment of a Prefect process work pool, so that several workers load
deliveries of several plan areas at once (docs/operations.md, section 6).

Why a work pool beside the served nightly: `rulem-db schedule` serves the nightly in its own
process, one run at a time, which suits one reconciliation per plan area per night. Ingests of
different plan areas are independent (each takes its own plan area's reconciliation lock,
flows.runs), so they can run side by side: a process work pool hands each flow run to the
next free worker (`prefect worker start --pool POOL --limit 1`, one process per worker, on
this machine or another with the project installed), and each worker runs it in a new process.

What the workers need, and why it is not in the deployment: the database URL. Flow runs read
RULEM_DATABASE_URL from the worker's environment (the process worker passes its environment
on), never from a parameter or a job variable, because Prefect shows both in its UI.

Which plan area and which inbox are the run's parameters (plan_area, inbox): one deployment
serves every plan area of the database, and a run for one plan area never waits for a run of
another.
"""

from __future__ import annotations

from typing import Any

DEFAULT_POOL = "rulem-ingest"
DEFAULT_NAME = "ingest"
POOL_TYPE = "process"


def ensure_process_pool(client: Any, pool: str) -> bool:
    """Create the process work pool `pool` unless it exists; True when created. A pool of
    another type is refused in one line (its workers could not run the ingest as is)."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        found = client.read_work_pool(pool)
    except ObjectNotFound:
        try:
            client.create_work_pool(WorkPoolCreate(
                name=pool, type=POOL_TYPE,
                base_job_template=ProcessWorker.get_default_base_job_template(),
                description="rulem-db: ingests of inbox deliveries, one process per run"))
            return True
        except ObjectAlreadyExists:  # a worker started meanwhile made it
            found = client.read_work_pool(pool)
    if found.type != POOL_TYPE:
        raise ValueError(f"work pool {pool!r} is of type {found.type!r}; the ingest needs a "
                         f"{POOL_TYPE!r} pool: name another with --work-pool")
    return False


def ingest_deployment(name: str = DEFAULT_NAME) -> Any:
    """The `ingest_inbox` flow as a deployment (not yet registered). The entrypoint is the
    module path, so a worker runs the installed code: no image, no copy of the source."""
    from prefect.types.entrypoint import EntrypointType

    from flows.nightly import ingest_inbox

    return ingest_inbox.to_deployment(
        name=name, tags=["rulem-db"], parameters={"started_via": "work pool"},
        description="Load an inbox of one plan area (parameters inbox and plan_area); bad "
                    "files to quarantine, loaded ones to the archive.",
        entrypoint_type=EntrypointType.MODULE_PATH)


def deploy_ingest(pool: str = DEFAULT_POOL, name: str = DEFAULT_NAME) -> tuple[str, bool]:
    """Register the ingest deployment in the process work pool (created when missing) on the
    Prefect server of PREFECT_API_URL; returns the deployment's id and whether the pool was
    created."""
    from prefect import deploy
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        created = ensure_process_pool(client, pool)
    ids = deploy(ingest_deployment(name), work_pool_name=pool, build=False, push=False,
                 print_next_steps_message=False, ignore_warnings=True)
    return str(ids[0]), created


def worker_command(pool: str = DEFAULT_POOL) -> str:
    """How to start one worker of the pool (start two for two ingests at once)."""
    return f"RULEM_DATABASE_URL=... prefect worker start --pool {pool} --type process --limit 1"
