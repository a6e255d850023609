"""The runtime's implementations of the capabilities agents get in ``RunContext.services``:
each a narrow view of the store or the runtime, never the thing itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kforge import jsoncodec
from kforge.agents.results import read_result
from kforge.engine.run_context import SUBAGENTS_REASON, Parked
from kforge.errors import (
    InvalidRunStateError,
    RunLeasedError,
    RunNotFoundError,
    StateCorruptionError,
    ValidationError,
)
from kforge.runtime.forking import fork_child, lineage
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = [
    "ChildAgents",
    "ChildPlan",
    "Documents",
    "RunSession",
    "session_turns",
]


ChildPlan = Callable[[str], tuple[str, dict[str, Any]]]
"""What a ``fork(prompt)`` starts: ``prompt -> (agent type, arguments)``."""


def _waits(run: RunRecord) -> bool:
    """The run waits for a person, or for its own children."""
    return run.status == RunStatus.AWAITING_USER or (
        run.status == RunStatus.PAUSED and run.pause_reason == SUBAGENTS_REASON
    )


def _at_limit(run: RunRecord) -> bool:
    return run.status == RunStatus.PAUSED and (run.pause_reason or "").startswith("limit:")


class ChildAgents:
    """``fork(prompt)`` / ``wait(handle)`` for agent code and the python tool: each fork is a
    child run (its own durable record, ``parent_id`` set); ``plan`` says of which agent type
    and with which arguments (default: a ``react`` agent with the prompt as its goal)."""

    def __init__(
        self,
        runtime: RuntimeHost,
        parent_id: str,
        *,
        agent_type: str = "react",
        plan: ChildPlan | None = None,
    ) -> None:
        self._runtime = runtime
        self._parent_id = parent_id
        self._plan = plan or (lambda prompt: (agent_type, {"goal": prompt}))
        self._session: list[str | None] = []
        """The parent's session (read once), which its children share."""

    async def fork(self, prompt: str) -> str:
        if not prompt.strip():
            raise ValidationError("fork(prompt): the prompt is empty")
        agent_type, args = self._plan(prompt)
        return await self.start(agent_type, args)

    async def start(
        self, agent_type: str, args: dict[str, Any], *, run_id: str | None = None
    ) -> str:
        """Start a child run; with ``run_id``, one that already exists is not started again (a
        re-executed step starts each of its children once), only resumed if no process
        executes it any more. Returns the child's id."""
        if run_id is not None:
            try:
                child = self._child(run_id)
            except RunNotFoundError:
                pass
            else:
                await self._continue(child)
                return child.id
        parent = self._runtime.get_run(self._parent_id)
        return await self._runtime.start(
            agent_type,
            args,
            parent_id=self._parent_id,
            session_id=parent.session_id,
            run_id=run_id,
        )

    async def _continue(self, run: RunRecord) -> None:
        """Resume a child no process executes (left behind by a crash, or forked with this
        run), so that it works alongside this run again; one that ended, waits, or is queued
        for a worker is left as it is."""
        runtime = self._runtime
        if runtime.is_active(run.id) or run.is_live() or _waits(run) or _at_limit(run):
            return
        queued = run.status == RunStatus.PENDING and runtime.queued
        if run.status in TERMINAL_STATUSES or queued:
            return
        try:
            await runtime.resume(run.id)
        except (InvalidRunStateError, RunLeasedError):
            pass  # another process or stretch took it meanwhile

    def _child(self, handle: str) -> RunRecord:
        """The child run ``handle`` names. A forked run's code names its children by the ids
        its source recorded: those are the children forked with it (even once the source is
        deleted); a child its source started after the fork point is started over here, as a
        fork of its first frame. RunNotFoundError when there is no such run yet."""
        runtime = self._runtime
        store = runtime.store
        try:
            run: RunRecord | None = runtime.get_run(handle)
        except RunNotFoundError:
            run = None
        if run is not None and run.parent_id == self._parent_id:
            return run
        for child in store.list_runs(parent_id=self._parent_id, limit=10_000):
            if handle in lineage(store, child):
                return child
        if run is None:
            raise RunNotFoundError(handle)
        parent = runtime.get_run(self._parent_id)
        if run.parent_id is not None and run.parent_id in lineage(store, parent):
            return runtime.get_run(fork_child(store, handle, self._parent_id))
        raise ValidationError(f"wait({handle!r}): not a run forked by this run")

    async def settle(self, handle: str, *, park: bool = False) -> RunRecord:
        """The child once it has ended or waits for a person (or for its own children): a
        child no process executes any more (after a restart, or forked with this run) is
        resumed here first.

        With ``park`` and stretches executed by workers, a child still at work is not waited
        for: ``Parked`` pauses this run, holding no worker, and the child's end resumes it."""
        runtime = self._runtime
        run = self._child(handle)
        handle = run.id
        if park and runtime.queued:
            if run.status in TERMINAL_STATUSES or _waits(run):
                return run
            if run.status == RunStatus.PAUSED and not _at_limit(run) and not run.is_live():
                await runtime.resume(handle)  # queued for a worker
            raise Parked(SUBAGENTS_REASON)
        while True:
            if runtime.is_active(handle):
                run = await runtime.wait(handle)
            if run.status in TERMINAL_STATUSES or _waits(run):
                return run
            if _at_limit(run):
                return run
            if run.is_live():
                raise InvalidRunStateError(
                    f"child run {handle} executes in another process; wait for it there"
                )
            await runtime.resume(handle)
            run = runtime.get_run(handle)

    async def wait(self, handle: str) -> str:
        run = await self.settle(handle)
        if run.status != RunStatus.COMPLETED:
            detail = (
                run.error or run.pause_reason or (run.pending_interaction or {}).get("prompt", "")
            )
            return f"[child run {handle} is {run.status.value}: {detail}]"
        result = read_result(run, self._runtime.registry)
        return result.text or jsoncodec.dumps(run.result or {}, spaced=True)


class Documents:
    """The run log's documents, where episodic memory is kept across runs."""

    def __init__(self, store: RunLog) -> None:
        self._store = store

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        self._store.put_docs(namespace, docs)

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        return self._store.get_docs(namespace, keys)

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        self._store.delete_docs(namespace, keys)


def session_turns(
    store: RunLog, session_id: str, *, agent_type: str = "router", exclude: Iterable[str] = ()
) -> list[dict[str, str]]:
    """The completed turns of ``session_id`` as ``{"question", "answer"}``, oldest first."""
    skip = set(exclude)
    runs = store.list_runs(session_id=session_id, status=RunStatus.COMPLETED, limit=1000)
    turns = []
    for run in sorted(runs, key=lambda r: r.created_at):
        if run.agent_type != agent_type or run.id in skip:
            continue
        question = (run.input.get("args") or {}).get("question")
        try:
            answer = read_result(run).text
        except StateCorruptionError:  # a turn whose record cannot be read is left out
            continue
        if isinstance(question, str) and answer:
            turns.append({"question": question, "answer": answer})
    return turns


class RunSession:
    """The earlier turns of one run's session, read-only."""

    def __init__(self, store: RunLog, run_id: str, session_id: str | None) -> None:
        self._store = store
        self._run_id = run_id
        self._session_id = session_id

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def turns(self, agent_type: str) -> list[dict[str, str]]:
        if not self._session_id:
            return []
        return session_turns(
            self._store, self._session_id, agent_type=agent_type, exclude=[self._run_id]
        )
