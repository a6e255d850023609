"""The tree agent's subagents as child runs: what it needs of the runtime to start and settle
them, and their results collected while people can still steer the waiting parent."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, runtime_checkable

from kforge.agents.results import TreeResult
from kforge.engine.run_context import SUBAGENTS_REASON, Parked, RunContext
from kforge.store.base import RunRecord, RunStatus

__all__ = ["Steered", "TreeSpawner", "child_result", "collect", "ended"]


@runtime_checkable
class TreeSpawner(Protocol):
    """What the tree agent needs of ``ctx.services.agents``: child runs it can name and wait for
    (``kforge.runtime.services.ChildAgents``)."""

    async def start(
        self, agent_type: str, args: dict[str, Any], *, run_id: str | None = None
    ) -> str: ...

    async def settle(self, handle: str, *, park: bool = False) -> RunRecord: ...


class Steered(Exception):
    """A person's intervention arrived while the step waited for the subagents."""


async def collect(
    spawner: TreeSpawner, ctx: RunContext, subagents: list[dict[str, Any]]
) -> dict[str, Any]:
    """Every subagent's result, in order, once all have ended. They are settled side by side,
    so children a restart left behind are resumed together, not one after another. A person's
    intervention arriving first raises ``Steered``; one waiting for a person parks the parent."""
    settling = [asyncio.ensure_future(spawner.settle(c["id"], park=True)) for c in subagents]
    settled = asyncio.gather(*settling)
    steered = asyncio.ensure_future(ctx.steered())
    try:
        racing: list[asyncio.Future[Any]] = [settled, steered]
        await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        if not settled.done():
            raise Steered
        runs = settled.result()
    finally:
        steered.cancel()
        if not settled.done():
            # cancelled while waiting, the gathering ends with the cancellation as its error
            settled.add_done_callback(_retrieved)
            settled.cancel()
    if any(not ended(run) for run in runs):
        raise Parked(SUBAGENTS_REASON)
    return {"results": [child_result(run) for run in runs]}


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def ended(run: RunRecord) -> bool:
    return run.status in (
        RunStatus.COMPLETED,
        RunStatus.FAILED,
        RunStatus.CANCELLED,
        RunStatus.DELETED,
    ) or (run.status == RunStatus.PAUSED and (run.pause_reason or "").startswith("limit:"))


def child_result(run: RunRecord) -> dict[str, Any]:
    result = TreeResult.load(run.result)
    return {
        "id": run.id,
        "status": run.status.value,
        "answer": result.text,
        "main_answer": result.main_answer,
        "sources": sorted({c.file for c in result.citations}),
        "error": run.error or "",
    }
