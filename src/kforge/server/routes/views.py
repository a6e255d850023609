"""What the web UI draws beyond frames: an agent's phase graph, a run's steps, the state after
any step with the changes that step made, and the prompt of any model call."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from kforge.engine.phases import PhaseGraph
from kforge.errors import InvalidRunStateError
from kforge.runtime.history import call_prompt, step_seqs, step_state
from kforge.server.problems import Problem
from kforge.server.sse import checked_seq
from kforge.server.state import ServerState, server_state

__all__ = ["graph_json", "router"]

router = APIRouter(tags=["runs"])
State = Annotated[ServerState, Depends(server_state)]


def graph_json(graph: PhaseGraph | None) -> dict[str, Any]:
    """The graph's phases (in declaration order), transitions and checkpoints; all empty for an
    agent without phases (its runs are a sequence of steps)."""
    if graph is None:
        return {
            "phases": [],
            "initial": None,
            "complete": None,
            "transitions": [],
            "checkpoints": [],
        }
    return {
        "phases": [str(p.value) for p in graph.phases],
        "initial": str(graph.initial.value),
        "complete": str(graph.complete.value),
        "transitions": [
            {
                "from": str(t.from_phase.value),
                "to": str(t.to_phase.value),
                "condition": t.condition,
                "is_backward": t.is_backward,
                "priority": t.priority,
            }
            for t in graph.transitions
        ],
        "checkpoints": [
            {"after": str(c.after.value), "kind": c.kind.value, "message": c.message}
            for c in graph.checkpoints.values()
        ],
    }


@router.get("/agents/{agent}/graph", tags=["server"], summary="An agent type's phase graph")
async def agent_graph(agent: str, state: State) -> dict[str, Any]:
    registry = state.runtime.registry
    factory = registry.factory(agent)
    if factory is None:
        known = ", ".join(registry.names()) or "none"
        raise Problem(404, "unknown-agent", f"unknown agent '{agent}'; use one of: {known}")
    graph = getattr(factory, "graph", None)
    return {"agent": agent, **graph_json(graph if isinstance(graph, PhaseGraph) else None)}


@router.get("/runs/{run_id}/steps", summary="A run's committed steps and the seq each ends at")
async def run_steps(run_id: str, state: State) -> dict[str, Any]:
    state.runtime.get_run(run_id)
    steps = step_seqs(state.runtime.store, run_id)
    return {"steps": [{"step": step, "seq": seq} for step, seq in steps]}


@router.get(
    "/runs/{run_id}/state",
    summary="The run's state after the step that committed a frame, and that step's changes",
)
async def run_state(
    run_id: str, state: State, seq: Annotated[int, Query(ge=1)] = 1
) -> dict[str, Any]:
    run = state.runtime.get_run(run_id)
    seq = checked_seq(seq, "seq")
    if seq > run.last_seq:
        raise Problem(
            422,
            "invalid-seq",
            f"seq {seq} is past the run's last frame (seq {run.last_seq}); choose a seq from "
            "GET /runs/{id}/frames",
        )
    view = step_state(state.runtime.store, run_id, seq)
    return {
        "run_id": run_id,
        "asked_seq": seq,
        "step": view.step,
        "first_seq": view.first_seq,
        "seq": view.seq,
        "state": view.state,
        "changes": [c.to_dict() for c in view.changes],
    }


@router.get(
    "/runs/{run_id}/calls/{seq}/prompt",
    summary="The messages the model call recorded by frame seq was sent, rebuilt from the deltas",
)
async def run_call_prompt(run_id: str, seq: int, state: State) -> dict[str, Any]:
    run = state.runtime.get_run(run_id)
    seq = checked_seq(seq, "seq")
    if not 1 <= seq <= run.last_seq:
        raise Problem(
            404,
            "frame-not-found",
            f"run '{run_id}' has no frame {seq} (its frames are 1 to {run.last_seq}); choose the "
            "seq of a 'model.call' frame from GET /runs/{id}/frames",
        )
    try:
        prompt = call_prompt(state.runtime.store, run_id, seq)
    except InvalidRunStateError as exc:
        raise Problem(422, "not-a-model-call", str(exc)) from exc
    call = prompt.call
    return {
        "run_id": run_id,
        "seq": seq,
        "purpose": call.purpose,
        "model": call.model,
        "recorded": prompt.recorded,
        "base_seq": call.prompt_base if prompt.recorded else None,
        "messages": [
            {**m.to_dict(), "fresh": fresh}
            for m, fresh in zip(prompt.messages, prompt.fresh, strict=True)
        ],
    }
