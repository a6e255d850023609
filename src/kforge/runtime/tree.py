"""The agent tree read from runs and their child runs: snapshots of it and its live stream.

An agent is a run; its subagents are its child runs. Each agent's state (the tree's
``running``, ``completed``, ``deleted``, ``modified``, ``error``, ``awaiting_user``) is derived
from its run status and its frames, the same way in the snapshot and in the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from kforge.engine.run_context import SUBAGENTS_REASON
from kforge.frames import (
    AgentSpeaking,
    DataEvent,
    Frame,
    InteractionAnswered,
    InteractionRequested,
    Intervention,
    StatusChanged,
    TokenDelta,
    ToolCallFrame,
    ToolResultFrame,
    UsageFrame,
)
from kforge.runtime.inbox import InterventionInbox
from kforge.runtime.interventions import descendants
from kforge.runtime.text_deltas import SpokenText
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = [
    "AGENT_STATES",
    "TreeChunk",
    "agent_node",
    "agent_state",
    "agent_tree",
    "stream_tree",
    "user_content",
]

TreeChunk = dict[str, Any]
"""One chunk of a tree's stream: ``{"type": "text-delta" | "agent-state" | "tool-call" |
"tool-result", "agentId": ..., ...}``."""

AGENT_STATES = ("running", "completed", "deleted", "modified", "error", "awaiting_user")


def user_content(run: RunRecord) -> str:
    """The agent's task as its user gave it."""
    args = run.input.get("args", {})
    for key in ("prompt", "goal", "question", "task"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return ""


def agent_state(run: RunRecord, *, action: str = "", asking: bool = False) -> str:
    """The tree state of the agent behind ``run`` (``action``: its latest intervention's): see
    the table in the documentation."""
    status = run.status
    if status == RunStatus.COMPLETED:
        return "completed"
    if status == RunStatus.DELETED:
        return "deleted"
    if status in (RunStatus.FAILED, RunStatus.CANCELLED):
        return "error"
    if status == RunStatus.AWAITING_USER or asking:
        return "awaiting_user"
    if status == RunStatus.PAUSED and run.pause_reason != SUBAGENTS_REASON:
        return "awaiting_user"  # a person resumes it (a limit was reached, or it was paused)
    return "modified" if action == "modify" else "running"


def _comment(item: Intervention) -> str:
    """The specification's ``userComment``: the action's marker, or a comment's text (read
    the typed ``intervention`` to tell a comment that says "delete" from a delete)."""
    return item.action if item.action in ("delete", "modify") else item.content


def _typed(item: Intervention | None) -> dict[str, str] | None:
    return None if item is None else {"action": item.action, "content": item.content}


def agent_node(
    store: RunLog,
    inbox: InterventionInbox,
    run: RunRecord,
    children: list[str] | None = None,
    frames: list[Frame] | None = None,
) -> dict[str, Any]:
    """One agent of the tree: ids, task, state, subagents, last intervention, timing, tokens."""
    if children is None:
        children = [
            c.id
            for c in sorted(
                store.list_runs(parent_id=run.id, limit=10_000), key=lambda r: r.created_at
            )
        ]
    if frames is None:
        frames = store.read_frames(run.id)
    interventions = [f for f in frames if isinstance(f, Intervention)]
    pending = inbox.pending(run.id) if run.status not in TERMINAL_STATUSES else []
    latest = (interventions + pending)[-1] if interventions or pending else None
    comment = _comment(latest) if latest else "unchanged"
    usage = next((f for f in reversed(frames) if isinstance(f, UsageFrame)), None)
    asked = {f.interaction_id for f in frames if isinstance(f, InteractionRequested)}
    answered = {f.interaction_id for f in frames if isinstance(f, InteractionAnswered)}
    asking = run.status == RunStatus.RUNNING and bool(asked - answered)
    modified = next((f.content for f in reversed(interventions) if f.action == "modify"), None)
    return {
        "agentId": run.id,
        "parentId": run.parent_id,
        "agent": run.agent_type,
        "status": agent_state(run, action=latest.action if latest else "", asking=asking),
        "runStatus": run.status.value,
        "userContent": modified or user_content(run),
        "userComment": comment,
        "intervention": _typed(latest),
        "subagents": children,
        "steps": run.iteration,
        "last_seq": run.last_seq,
        "pending_interaction": run.pending_interaction,
        "created_at": run.created_at.isoformat(),
        "updated_at": run.updated_at.isoformat(),
        "elapsed_s": round((run.updated_at - run.created_at).total_seconds(), 3),
        "tokens": {
            "input": usage.run_input_tokens if usage else 0,
            "output": usage.run_output_tokens if usage else 0,
        },
        "error": run.error,
    }


def agent_tree(store: RunLog, inbox: InterventionInbox, root_id: str) -> dict[str, dict[str, Any]]:
    """Every agent of the tree under ``root_id`` (the root first), by id."""
    root = store.get_run(root_id)
    runs = [root, *descendants(store, root_id)]
    children: dict[str, list[str]] = {r.id: [] for r in runs}
    for run in runs:
        if run.parent_id in children and run.id != root_id:
            children[run.parent_id].append(run.id)
    return {r.id: agent_node(store, inbox, r, children[r.id]) for r in runs}


class _Watch:
    """What the stream knows of one agent between its frames."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.comment = "unchanged"
        self.latest: Intervention | None = None
        self.asking = False
        self.modified: str | None = None
        """The task a person's latest modify gave the agent, which replaces its own."""
        self.text = SpokenText()
        """Its text given as ``text-delta`` chunks so far."""


def _text_chunks(agent_id: str, said: Iterable[str]) -> list[TreeChunk]:
    """Pieces of an agent's text as ``text-delta`` chunks."""
    return [{"type": "text-delta", "agentId": agent_id, "textDelta": text} for text in said]


def _chunks(watch: _Watch, item: Frame | TokenDelta, store: RunLog) -> list[TreeChunk]:
    agent_id = watch.run.id
    if isinstance(item, TokenDelta):
        return _text_chunks(agent_id, watch.text.live(item.text))
    if isinstance(item, AgentSpeaking):
        return _text_chunks(agent_id, watch.text.spoken(item.text))
    if isinstance(item, ToolCallFrame | ToolResultFrame):
        chunk: TreeChunk = {
            "type": "tool-call" if isinstance(item, ToolCallFrame) else "tool-result",
            "agentId": agent_id,
            "toolCallId": item.call_id,
            "toolName": item.tool_name,
        }
        if isinstance(item, ToolCallFrame):
            chunk["args"] = item.arguments
        else:
            chunk.update(result=item.summary, isError=not item.success)
        return [chunk]
    if isinstance(item, Intervention):
        watch.comment = _comment(item)
        watch.latest = item
        if item.action == "modify":
            watch.modified = item.content
    elif isinstance(item, InteractionRequested):
        watch.asking = True
    elif isinstance(item, InteractionAnswered):
        watch.asking = False
    elif not isinstance(item, StatusChanged):
        return []
    watch.run = store.get_run(agent_id)
    state = {
        "status": agent_state(
            watch.run, action=watch.latest.action if watch.latest else "", asking=watch.asking
        ),
        "runStatus": watch.run.status.value,
        "parentId": watch.run.parent_id,
        "userContent": watch.modified or user_content(watch.run),
        "userComment": watch.comment,
        "intervention": _typed(watch.latest),
    }
    if isinstance(item, InteractionRequested):
        state["question"] = item.prompt
    return [{"type": "agent-state", "agentId": agent_id, "state": state}]


async def stream_tree(
    runtime: RuntimeHost, root_id: str, *, follow: bool = True
) -> AsyncIterator[TreeChunk]:
    """Merge the frames of ``root_id`` and every run below it into tree chunks, live. A new
    child is found when its parent records anything (its start is among the parent's frames:
    the data event that names it, or the tool result of a fork)."""
    store = runtime.store
    merged: asyncio.Queue[tuple[str, Frame | TokenDelta | None]] = asyncio.Queue()
    watches: dict[str, _Watch] = {}
    tasks: list[asyncio.Task[None]] = []

    async def pump(run_id: str) -> None:
        try:
            async for item in runtime.subscribe(run_id, follow=follow, deltas=True):
                await merged.put((run_id, item))
        finally:
            await merged.put((run_id, None))

    def discover(run_id: str) -> list[TreeChunk]:
        found = [store.get_run(run_id)] if run_id == root_id else []
        found += [r for r in store.list_runs(parent_id=run_id, limit=10_000)]
        new = []
        for run in sorted(found, key=lambda r: r.created_at):
            if run.id in watches:
                continue
            watches[run.id] = _Watch(run)
            tasks.append(asyncio.get_running_loop().create_task(pump(run.id)))
            new.append(run)
        return [
            {
                "type": "agent-state",
                "agentId": run.id,
                "state": {
                    "status": agent_state(run),
                    "runStatus": run.status.value,
                    "parentId": run.parent_id,
                    "userContent": user_content(run),
                    "userComment": "unchanged",
                    "intervention": None,
                },
            }
            for run in new
        ]

    ended: set[str] = set()
    try:
        for chunk in discover(root_id):
            yield chunk
        for run in descendants(store, root_id):
            for chunk in discover(run.parent_id or root_id):
                yield chunk
        while len(ended) < len(watches):
            run_id, item = await merged.get()
            if item is None:
                ended.add(run_id)
                continue
            for chunk in _chunks(watches[run_id], item, store):
                yield chunk
            if isinstance(item, DataEvent | ToolResultFrame | StatusChanged):
                for chunk in discover(run_id):
                    yield chunk
    finally:
        for task in tasks:
            task.cancel()
