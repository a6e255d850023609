"""The distributed executor on DBOS: each stretch of a run (start or resume, until it pauses or
ends) is a DBOS workflow on one DBOS queue, and ``kforge worker`` processes execute them.

Starting or answering a run enqueues its next stretch with DBOS's client; a worker dequeues it and
runs it with its own runtime over the same PostgreSQL store, so the stretch resumes at the exact
step whatever process ran the previous one. A run waiting for a person has no workflow and holds
no worker. The workers themselves are in ``worker.py``.
"""

from __future__ import annotations

from kforge.extras import require_extra

__all__ = ["APP_NAME", "APP_VERSION", "QUEUE_NAME", "WORKFLOW_NAME", "DBOSExecutor", "need_dbos"]

APP_NAME = "kforge"
QUEUE_NAME = "kforge_runs"
WORKFLOW_NAME = "kforge_run_stretch"
APP_VERSION = "kforge-stretch-1"
"""Every worker and client agree on it, so any worker takes any stretch (and recovers it)."""


def need_dbos(feature: str) -> None:
    require_extra("dbos", feature)


def _migrate(url: str) -> None:
    from dbos import DBOS

    DBOS.migrate(url)


class DBOSExecutor:
    """Queues stretches of runs for ``kforge worker`` processes from any process (the CLI,
    the server, a worker's agents)."""

    @property
    def queued(self) -> bool:
        return True

    def __init__(self, url: str) -> None:
        need_dbos("the dbos executor")
        from dbos import DBOSClient

        _migrate(url)
        self._client = DBOSClient(system_database_url=url, application_name=APP_NAME)

    def enqueue(self, run_id: str, after_seq: int) -> None:
        """Queue the stretch that continues ``run_id`` after its frame ``after_seq``; enqueueing the
        same stretch twice queues it once."""
        self._client.enqueue(
            {
                "queue_name": QUEUE_NAME,
                "workflow_name": WORKFLOW_NAME,
                "workflow_id": f"{run_id}@{after_seq}",
                "app_version": APP_VERSION,
            },
            run_id,
        )

    def close(self) -> None:
        self._client.destroy()
