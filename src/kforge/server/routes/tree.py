"""The agent tree over runs and their child runs: the tree, one agent, interventions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from sse_starlette import EventSourceResponse

from kforge.errors import ValidationError
from kforge.server.jsonshape import SHOWN_DEPTH, clipped, json_depth
from kforge.server.problems import Problem
from kforge.server.schemas import InterveneBody, run_json
from kforge.server.state import ServerState, server_state
from kforge.server.tree_stream import tree_event_stream
from kforge.store.base import RunRecord

__all__ = ["router"]

router = APIRouter(tags=["agent tree"])
State = Annotated[ServerState, Depends(server_state)]


def _tree(state: ServerState, roots: list[RunRecord]) -> dict[str, dict[str, Any]]:
    agents: dict[str, dict[str, Any]] = {}
    for root in roots:
        agents.update(state.runtime.agent_tree(root.id))
    return {agent_id: _shown(node) for agent_id, node in agents.items()}


def _shown(node: dict[str, Any]) -> dict[str, Any]:
    """The node, with a stored value too deep for a response cut (see ``run_json``)."""
    if json_depth(node, stop=SHOWN_DEPTH) <= SHOWN_DEPTH:
        return node
    return {**clipped(node)[0], "unreadable": True}


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
    "tree. Ends with an 'end' event once every run of the tree has ended. With deltas=true, "
    "what agents say also streams as 'text-delta' events ({type, agentId, textDelta}): model "
    "text as it is written, then the rest of the recorded answer in pieces; joined, an agent's "
    "pieces are its answer, and a stream resumed with Last-Event-ID repeats none.",
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


@router.get("/agent/{agent_id}", summary="One agent: its record, subagents, state and frames")
async def agent(
    agent_id: str, state: State, frames: Annotated[int, Query(ge=0, le=5000)] = 500
) -> dict[str, Any]:
    runtime = state.runtime
    run = runtime.get_run(agent_id)
    node = runtime.get_agent(agent_id)
    history = node.pop("history")
    shown = [_shown(f) for f in history[:frames]]
    return {**_shown(node), "run": run_json(run, runtime.registry), "frames": shown}


@router.post("/agent/{agent_id}/intervene", summary="Delete, modify or comment on an agent")
async def intervene(agent_id: str, body: InterveneBody, state: State) -> dict[str, Any]:
    """An intervention: ``delete`` stops the agent and its subagents at their next
    step, ``modify`` gives it new instructions, ``comment`` an annotation it reads next."""
    runtime = state.runtime
    try:
        # typed: the action is the body's, never read from the content's words
        intervention = body.intervention()
    except ValidationError as exc:  # a modify or a comment without its text
        raise Problem(422, "invalid-intervention", str(exc)) from exc
    outcome = await runtime.intervene(agent_id, intervention)
    node = runtime.agent_tree(agent_id)[agent_id]
    return {"success": True, **outcome, "agent": node}
