"""Steering a tree of agents: interventions, people's answers to agents' questions, the tree's
view and stream, and waking a parent whose subagents ended (the ``Runtime``'s tree methods)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from kforge.engine.run_context import SUBAGENTS_REASON
from kforge.engine.runner import load_state
from kforge.errors import InvalidRunStateError, RunLeasedError
from kforge.frames import InteractionRequested
from kforge.runtime.inbox import InterventionInbox
from kforge.runtime.interventions import Intervention, InterventionAction, delete_run, intervene
from kforge.runtime.tree import TreeChunk, agent_node, agent_tree, stream_tree
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = ["QueryUserHandler", "TreeSteering"]

QueryUserHandler = Callable[[str, str], Awaitable[str | None]]
"""``async (agent_id, prompt) -> answer``: None declines the question."""


class TreeSteering:
    """The agent-tree half of ``Runtime`` (which provides what is declared here)."""

    store: RunLog
    interventions: InterventionInbox
    _tasks: dict[str, asyncio.Task[RunStatus]]
    _query_user: QueryUserHandler | None
    _waking: set[asyncio.Task[None]]

    def _host(self) -> RuntimeHost:
        return cast("RuntimeHost", self)

    def set_query_user_handler(self, handler: QueryUserHandler | None) -> None:
        """Answer agents' questions with ``handler(agent_id, prompt)`` as they ask them (a
        None answer declines); without one, a question parks its run as ``awaiting_user``
        until ``resume(run_id, answer)``. Either way the answer is recorded in the run."""
        self._query_user = handler

    async def _answer_inline(
        self, run_id: str, request: InteractionRequested
    ) -> dict[str, Any] | None:
        handler = self._query_user
        if handler is None:
            return None
        try:
            reply = await handler(run_id, request.prompt)
        except Exception:
            return None  # the question stays open: the run parks and can be answered later
        if reply is None or not str(reply).strip():
            return {"declined": True}
        return {"text": str(reply)}

    async def intervene(self, agent_id: str, intervention: Intervention) -> dict[str, Any]:
        """Steer one agent of a tree with a typed ``Intervention``: a delete stops it and its
        subagents at their next step boundary; a modify makes it re-plan with the content as
        its instructions; a comment gives it the content to see at its next step. The action
        is the intervention's, never read from its text. A waiting or queued agent takes it
        when it next runs, and a parent parked while its subagents work is resumed to take it
        now, not when they end. A finished agent refuses it, as does one that ends or is
        deleted while it is delivered (InvalidRunStateError)."""
        outcome = await intervene(self._host(), agent_id, intervention)
        if outcome.get("applied") == "now" and intervention.action != InterventionAction.DELETE:
            self._wake_parked(self.store.get_run(agent_id))
        return outcome

    async def delete(self, run_id: str, *, reason: str = "deleted by user") -> str:
        """Mark a run and the runs below it ``deleted``, finished ones too (frames are kept):
        one executing here is stopped first, one another process executes takes the delete at
        its next step boundary (``"next_step"``), the others at once (``"now"``). A parent
        paused for the deleted run learns of it as a child result. Refused
        (InvalidRunStateError) for a run already deleted."""
        return await delete_run(self._host(), run_id, reason)

    def agent_tree(self, root_id: str) -> dict[str, dict[str, Any]]:
        """The tree under ``root_id`` as a map by agent id (no message history)."""
        return agent_tree(self.store, self.interventions, root_id)

    def get_agent(self, agent_id: str) -> dict[str, Any]:
        """One agent with its history: its tree entry plus its frames and its state."""
        from kforge.frames import frame_to_dict

        node = agent_node(self.store, self.interventions, self.store.get_run(agent_id))
        point_state: dict[str, Any] = {}
        try:
            point_state = load_state(self.store, agent_id)[0].get("agent", {})
        except Exception:
            point_state = {}
        frames = self.store.read_frames(agent_id)
        return {**node, "state": point_state, "history": [frame_to_dict(f) for f in frames]}

    def stream(self, root_id: str, *, follow: bool = True) -> AsyncIterator[TreeChunk]:
        """The whole tree's chunks, live: ``text-delta``, ``agent-state``, ``tool-call`` and
        ``tool-result``, from the frames of ``root_id`` and every run below it. Ends once
        every run of the tree has ended (with ``follow=False``, once none executes here)."""
        return stream_tree(self._host(), root_id, follow=follow)

    def _wake_if_children_ended(self, run_id: str) -> None:
        """A run that just paused for its subagents, all of which ended before the pause was
        recorded (their ends found it still running, so none resumed it), continues now."""
        try:
            run = self.store.get_run(run_id)
            if run.status != RunStatus.PAUSED or run.pause_reason != SUBAGENTS_REASON:
                return
            children = self.store.list_runs(parent_id=run_id, limit=1000)
        except Exception:
            return
        if children and all(c.status in TERMINAL_STATUSES for c in children):
            self.child_ended(children[0].id)

    def child_ended(self, run_id: str) -> None:
        """A child run ended or parked: a parent paused for its subagents continues here."""
        try:
            run = self.store.get_run(run_id)
            if run.parent_id is None or run.status not in TERMINAL_STATUSES:
                return
            parent = self.store.get_run(run.parent_id)
        except Exception:
            return
        self._wake_parked(parent)

    def _wake_parked(self, parent: RunRecord) -> None:
        """Resume ``parent`` if it is paused for its subagents (here, or queued for a worker)."""
        if (
            parent.status != RunStatus.PAUSED
            or parent.pause_reason != SUBAGENTS_REASON
            or parent.id in self._tasks
        ):
            return

        async def wake() -> None:
            try:
                await self._host().resume(parent.id)
            except (InvalidRunStateError, RunLeasedError):
                pass  # another process or stretch took it

        task = asyncio.get_running_loop().create_task(wake())
        self._waking.add(task)
        task.add_done_callback(self._waking.discard)
