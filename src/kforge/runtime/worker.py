"""``kforge worker``: a process that executes queued stretches of runs (see ``distributed.py``).

Each worker keeps a lease of its own in the store (renewed every ``poll_s``); when a worker's
lease lapses (it was killed, or its machine went away), a live worker has DBOS recover the dead
executor's workflows, and each continues from its run's last committed step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kforge.errors import ConfigurationError
from kforge.runtime.distributed import (
    APP_NAME,
    APP_VERSION,
    QUEUE_NAME,
    WORKFLOW_NAME,
    need_dbos,
)
from kforge.store.lease import DEFAULT_LEASE_TTL_S, lease_is_live

if TYPE_CHECKING:
    from kforge.engine.registry import AgentRegistry
    from kforge.engine.services import Services
    from kforge.llm.base import Model
    from kforge.runtime.host import RuntimeHost
    from kforge.runtime.runtime import Runtime
    from kforge.store.base import RunLog

__all__ = ["WORKERS", "WorkerLeases", "prepare_worker", "run_worker"]

WORKERS = "kforge.workers"
"""The document namespace of worker leases: owner -> {"expires": Unix seconds}."""


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
    need_dbos("kforge worker")
    from dbos import DBOS

    from kforge.runtime.runtime import Runtime

    runtime = Runtime(
        prepare_worker(url, concurrency=concurrency),
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


def prepare_worker(url: str, *, concurrency: int) -> RunLog:
    """What a worker does when it starts, before it takes any work, so that the first run it
    claims pays for none of it: opens its store, with room for ``concurrency`` stretches at
    once and the worker's own reads, its first connection made and warmed for steps and
    resumes (``PostgresRunLog``), and loads what a run's first tool call needs (the argument
    validators' library, a fifth of a second to import)."""
    from kforge.store.open import open_store
    from kforge.tools.validation import load_validators

    store = open_store(url, long_lived=True, pool_size=concurrency + 4)
    load_validators()
    return store


def _recover_left_runs(runtime: RuntimeHost, leases: WorkerLeases) -> None:
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
    runtime.executor.close()


class WorkerLeases:
    """Each worker's lease on being alive, kept as documents in the store."""

    def __init__(self, runtime: RuntimeHost, *, ttl_s: float) -> None:
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
