"""The distributed executor on DBOS: each stretch of a run (start or resume, until it pauses or
ends) is a DBOS workflow on one DBOS queue, and ``kforge worker`` processes execute them.

Starting or answering a run enqueues its next stretch with DBOS's client; a worker dequeues it and
runs it with its own runtime over the same PostgreSQL store, so the stretch resumes at the exact
step whatever process ran the previous one. A run waiting for a person has no workflow and holds
no worker. Each worker keeps a lease of its own in the store (renewed every ``poll_s``); when a
worker's lease lapses (it was killed, or its machine went away), a live worker has DBOS recover
the dead executor's workflows, and each continues from its run's last committed step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kforge.errors import ConfigurationError
from kforge.extras import require_extra
from kforge.store.lease import DEFAULT_LEASE_TTL_S, lease_is_live

if TYPE_CHECKING:
    from kforge.engine.services import Services
    from kforge.llm.base import Model
    from kforge.runtime.registry import AgentRegistry
    from kforge.runtime.runtime import Runtime

__all__ = ["APP_NAME", "QUEUE_NAME", "WORKFLOW_NAME", "StretchQueue", "run_worker"]

APP_NAME = "kforge"
QUEUE_NAME = "kforge_runs"
WORKFLOW_NAME = "kforge_run_stretch"
APP_VERSION = "kforge-stretch-1"
"""Every worker and client agree on it, so any worker takes any stretch (and recovers it)."""
WORKERS = "kforge.workers"
"""The document namespace of worker leases: owner -> {"expires": Unix seconds}."""


def _need_dbos(feature: str) -> None:
    require_extra("dbos", feature)


def _migrate(url: str) -> None:
    from dbos import DBOS

    DBOS.migrate(url)


class StretchQueue:
    """Enqueues stretches of runs from any process (the CLI, the server, a worker's agents)."""

    def __init__(self, url: str) -> None:
        _need_dbos("the dbos executor")
        from dbos import DBOSClient

        _migrate(url)
        self._client = DBOSClient(system_database_url=url, application_name=APP_NAME)

    def enqueue(self, run_id: str, seq: int) -> None:
        """Queue the stretch that continues ``run_id`` after its frame ``seq``; enqueueing the
        same stretch twice queues it once."""
        self._client.enqueue(
            {
                "queue_name": QUEUE_NAME,
                "workflow_name": WORKFLOW_NAME,
                "workflow_id": f"{run_id}@{seq}",
                "app_version": APP_VERSION,
            },
            run_id,
        )

    def close(self) -> None:
        self._client.destroy()


def run_worker(
    url: str,
    *,
    concurrency: int = 4,
    model: Model | str | None = None,
    registry: AgentRegistry | None = None,
    stop: threading.Event | None = None,
    on_ready: Callable[[str], None] | None = None,
    poll_s: float = 0.1,
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
    recover: bool = True,
    services: Services | None = None,
) -> None:
    """Execute queued stretches, at most ``concurrency`` at once, until ``stop`` is set.
    ``services`` (an application's tools) are given to every run it executes.

    ``on_ready(owner)`` is called once the worker takes work; ``owner`` is both its lease owner
    and its DBOS executor id. With ``recover`` (the default) it first queues the runs a gone
    process that was not a worker left unfinished, and it takes over the stretches of workers
    whose lease lapsed.
    """
    if concurrency < 1:
        raise ConfigurationError(f"--concurrency must be at least 1 (got {concurrency})")
    _need_dbos("kforge worker")
    from dbos import DBOS

    from kforge.runtime.runtime import Runtime
    from kforge.store.postgres import PostgresStore

    store = PostgresStore(url, pool_size=concurrency + 4)
    runtime = Runtime(
        store,
        model=model,
        registry=registry,
        services=services,
        lease_ttl_s=lease_ttl_s,
        executor="dbos",
    )
    owner = runtime.owner
    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": url,
            "executor_id": owner,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
        }
    )

    @DBOS.workflow(name=WORKFLOW_NAME)
    async def run_stretch(run_id: str) -> str:
        return (await runtime.execute_stretch(run_id)).value

    stop = stop or threading.Event()
    try:
        DBOS.launch()
        # the queue's settings live in the database: the worker started last sets them for all
        DBOS.register_queue(
            QUEUE_NAME,
            worker_concurrency=concurrency,
            polling_interval_sec=poll_s,
            on_conflict="always_update",
        )
        leases = WorkerLeases(runtime, ttl_s=lease_ttl_s)
        leases.renew()
        if recover:
            _recover_left_runs(runtime, leases)
        if on_ready is not None:
            on_ready(owner)
        while not stop.wait(max(poll_s, 0.2)):
            leases.renew()
            for gone in leases.lapsed() if recover else ():
                DBOS._recover_pending_workflows([gone])
                leases.forget(gone)
        leases.release()
    finally:
        DBOS.destroy(destroy_registry=True)
        _close(runtime)


def _recover_left_runs(runtime: Runtime, leases: WorkerLeases) -> None:
    """Queue the runs a process that was no worker left unfinished (a server or CLI on the
    local executor); workers' stretches, and runs queued but not yet taken, are DBOS's."""
    import asyncio

    from kforge.runtime.recovery import recover_runs
    from kforge.store.base import RunStatus

    workers = leases.owners()
    asyncio.run(
        recover_runs(
            runtime,
            leave=lambda run: run.status == RunStatus.PENDING or run.lease_owner in workers,
        )
    )


def _close(runtime: Runtime) -> None:
    runtime.bus.close()
    runtime.store.close()
    if runtime.stretches is not None:
        runtime.stretches.close()


class WorkerLeases:
    """Each worker's lease on being alive, kept as documents in the store."""

    def __init__(self, runtime: Runtime, *, ttl_s: float) -> None:
        self.store = runtime.store
        self.owner = runtime.owner
        self.ttl_s = ttl_s

    def renew(self) -> None:
        self.store.put_docs(WORKERS, {self.owner: {"expires": time.time() + self.ttl_s}})

    def lapsed(self) -> list[str]:
        """Workers whose lease lapsed (or whose process on this host is gone)."""
        return [
            owner
            for owner, lease in self.store.get_docs(WORKERS).items()
            if owner != self.owner and not lease_is_live(owner, float(lease.get("expires", 0)))
        ]

    def owners(self) -> set[str]:
        """Every worker that has held a lease here, live or not."""
        return set(self.store.get_docs(WORKERS))

    def forget(self, owner: str) -> None:
        self.store.delete_docs(WORKERS, [owner])

    def release(self) -> None:
        """Stopping: let the lease lapse now, so that a live worker recovers whatever this one
        leaves unfinished (each run's own lease keeps it from running twice meanwhile)."""
        self.store.put_docs(WORKERS, {self.owner: {"expires": 0.0}})
