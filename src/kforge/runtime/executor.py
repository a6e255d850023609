"""Where the stretches of runs execute: the ``Executor`` protocol and its two implementations.

A stretch is a run's execution from a start or a resume until it pauses or ends. The local
executor has the runtime that starts it execute it as an asyncio task in this process; the DBOS
executor (``distributed.DBOSExecutor``) queues it for ``kforge worker`` processes, which
execute it with ``Runtime.execute_stretch``. Another queue (Celery, a cloud queue) is one more
class with these three members whose workers call ``execute_stretch``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from kforge.errors import ConfigurationError, InvalidRunStateError

if TYPE_CHECKING:
    from kforge.store.base import RunLog

__all__ = ["Executor", "ExecutorName", "LocalExecutor", "open_executor"]

ExecutorName = Literal["local", "dbos"]


@runtime_checkable
class Executor(Protocol):
    """Where stretches go once a run is started or resumed."""

    @property
    def queued(self) -> bool:
        """True: stretches are handed to ``enqueue`` for other processes to execute; False: the
        runtime that starts or resumes a run executes the stretch itself."""
        ...

    def enqueue(self, run_id: str, after_seq: int) -> None:
        """Queue the stretch that continues ``run_id`` after its frame ``after_seq``; queueing
        the same stretch twice must execute it once."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Stretches execute as asyncio tasks of the runtime that starts them (the default)."""

    @property
    def queued(self) -> bool:
        return False

    def enqueue(self, run_id: str, after_seq: int) -> None:
        raise InvalidRunStateError(
            f"run '{run_id}': the local executor queues nothing; its runtime executes each "
            "stretch itself (use Runtime.resume, or a queued executor such as DBOSExecutor)"
        )

    def close(self) -> None:
        return None


def open_executor(executor: Executor | ExecutorName, store: RunLog) -> Executor:
    """The executor ``executor`` names (``"local"``, or ``"dbos"`` over a PostgreSQL store), or
    ``executor`` itself."""
    if executor == "local":
        return LocalExecutor()
    if executor == "dbos":
        from kforge.runtime.distributed import DBOSExecutor
        from kforge.store.postgres_runs import PostgresRunLog

        if not isinstance(store, PostgresRunLog):
            raise ConfigurationError(
                "the dbos executor needs the PostgreSQL store: "
                "Runtime(store='postgresql://...', executor='dbos')"
            )
        return DBOSExecutor(store.url)
    if isinstance(executor, Executor):
        return executor
    raise ConfigurationError(
        f"executor must be 'local', 'dbos' or an Executor (got {executor!r}); "
        "see kforge.runtime.executor"
    )
