"""Seed 004's agent tree over runs and their child runs: the tree, one agent, interventions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from sse_starlette import EventSourceResponse

from kforge.server.interventions import delete_run, descendants, record_intervention
from kforge.server.schemas import InterveneBody, frame_json, run_json
from kforge.server.state import ServerState, server_state
from kforge.server.tree_stream import tree_event_stream
from kforge.store.base import RunRecord

__all__ = ["router"]

router = APIRouter(tags=["agent tree"])
State = Annotated[ServerState, Depends(server_state)]


def _user_content(run: RunRecord) -> str:
    args = run.input.get("args", {})
    for key in ("goal", "question", "prompt", "task"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return ""


def _node(run: RunRecord, children: list[str]) -> dict[str, Any]:
    return {
        "agentId": run.id,
        "parentId": run.parent_id,
        "agent": run.agent_type,
        "status": run.status.value,
        "userContent": _user_content(run),
        "subagents": children,
        "steps": run.iteration,
        "last_seq": run.last_seq,
        "pending_interaction": run.pending_interaction,
        "created_at": run.created_at.isoformat(),
        "updated_at": run.updated_at.isoformat(),
    }


def _tree(state: ServerState, roots: list[RunRecord]) -> dict[str, dict[str, Any]]:
    runs = {r.id: r for r in roots}
    for root in roots:
        runs.update({r.id: r for r in descendants(state.runtime, root.id)})
    children: dict[str, list[str]] = {i: [] for i in runs}
    for run in sorted(runs.values(), key=lambda r: r.created_at):
        if run.parent_id in children:
            children[run.parent_id].append(run.id)
    return {i: _node(run, children[i]) for i, run in runs.items()}


@router.get("/agent/tree", summary="Agents (runs) with their subagents, as a flat map by id")
async def agent_tree(
    state: State,
    root: Annotated[str | None, Query(max_length=200, description="Only this run's tree")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    runtime = state.runtime
    if root is not None:
        roots = [runtime.get_run(root)]
    else:
        roots = [r for r in runtime.store.list_runs(limit=limit * 4) if r.parent_id is None][:limit]
    return {"agents": _tree(state, roots), "roots": [r.id for r in roots]}


@router.get(
    "/agent/stream",
    summary="The frames of a run and every run below it, merged, as Server-Sent Events",
    description="Each event's data is a frame (with its run_id); its id is a cursor of the "
    "last seq received per run, so reconnecting with Last-Event-ID resumes every run of the "
    "tree. Ends with an 'end' event once every run of the tree has ended.",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def agent_stream(
    request: Request,
    state: State,
    root: Annotated[str, Query(max_length=200, description="The tree's top run")],
    deltas: bool = False,
) -> EventSourceResponse:
    return tree_event_stream(state, request, root, deltas=deltas)


@router.get("/agent/{agent_id}", summary="One agent: its record, subagents and frames")
async def agent(
    agent_id: str, state: State, frames: Annotated[int, Query(ge=0, le=5000)] = 500
) -> dict[str, Any]:
    runtime = state.runtime
    run = runtime.get_run(agent_id)
    children = [c.id for c in runtime.store.list_runs(parent_id=agent_id, limit=1000)]
    return {
        **_node(run, children),
        "run": run_json(run),
        "frames": [frame_json(f) for f in runtime.store.read_frames(agent_id, limit=frames)],
    }


@router.post("/agent/{agent_id}/intervene", summary="Delete, modify or comment on an agent")
async def intervene(agent_id: str, body: InterveneBody, state: State) -> dict[str, Any]:
    runtime = state.runtime
    if body.action == "delete":
        run = await delete_run(runtime, agent_id, reason=body.content or "deleted by user")
        return {"success": True, "agent": _node(run, [])}
    frame = record_intervention(runtime, agent_id, body.action, body.content)
    return {"success": True, "seq": frame.seq, "agent": _node(runtime.get_run(agent_id), [])}
