"""``/runs``: start, list, read, stream, answer, resume, fork, cancel and delete runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from sse_starlette import EventSourceResponse

from kforge import jsoncodec
from kforge.engine.limits import RunLimits
from kforge.errors import InvalidRunStateError, StateCorruptionError
from kforge.runtime.runtime import Runtime
from kforge.server.problems import Problem
from kforge.server.schemas import (
    AnswerBody,
    CancelBody,
    ForkBody,
    LimitsBody,
    StartRunBody,
    frame_json,
    run_json,
)
from kforge.server.sse import checked_seq, last_event_seq, run_event_stream
from kforge.server.state import ServerState, server_state
from kforge.store.base import RunLog, RunRecord, RunStatus

__all__ = ["router"]

router = APIRouter(tags=["runs"])
State = Annotated[ServerState, Depends(server_state)]


def _limits(runtime: Runtime, body: LimitsBody | None, base: dict[str, Any] | None) -> RunLimits:
    chosen = {k: v for k, v in (body.model_dump() if body else {}).items() if v is not None}
    return jsoncodec.convert(
        {**(base or jsoncodec.to_builtins(runtime.default_limits)), **chosen}, RunLimits
    )


@router.post("/runs", status_code=201, summary="Start a run of a registered agent")
async def start_run(body: StartRunBody, state: State, response: Response) -> dict[str, Any]:
    runtime = state.runtime
    if body.agent not in runtime.registry:
        known = ", ".join(runtime.registry.names()) or "none"
        raise Problem(
            422,
            "unknown-agent",
            f"unknown agent '{body.agent}'; use one of: {known} (GET /agents lists them)",
        )
    limits = _limits(runtime, body.limits, None)
    run_id = await runtime.start(body.agent, body.args, limits=limits, session_id=body.session_id)
    response.headers["Location"] = f"/runs/{run_id}"
    return run_json(runtime.get_run(run_id), runtime.registry)


@router.get("/runs", summary="List runs, newest first")
async def list_runs(
    state: State,
    status: Annotated[RunStatus | None, Query()] = None,
    agent: Annotated[str | None, Query(max_length=100)] = None,
    parent_id: Annotated[str | None, Query(max_length=200)] = None,
    session_id: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
) -> dict[str, Any]:
    store = state.runtime.store
    wanted = offset + limit + 1
    fetch = wanted if agent is None else max(wanted * 4, 1000)
    damaged: list[dict[str, Any]] = []
    try:
        runs = store.list_runs(
            status=status, parent_id=parent_id, session_id=session_id, limit=fetch
        )
    except StateCorruptionError:
        runs, damaged = _list_around_damage(store, status, parent_id, session_id)
    if agent is not None:
        runs = [r for r in runs if r.agent_type == agent]
    page = runs[offset : offset + limit]
    more = len(runs) > offset + limit
    shown = [run_json(r, state.runtime.registry) for r in page] + (damaged if offset == 0 else [])
    return {"runs": shown, "next_offset": offset + limit if more else None}


_DAMAGE_SCAN = 10_000


def _list_around_damage(
    store: RunLog,
    status: RunStatus | None,
    parent_id: str | None,
    session_id: str | None,
) -> tuple[list[RunRecord], list[dict[str, Any]]]:
    """The runs a listing asks for, read one by one because one of them cannot be read, newest
    first; and an entry marking each that cannot (so the others still show)."""
    runs: list[RunRecord] = []
    damaged: list[dict[str, Any]] = []
    for run_id in store.run_ids_with_prefix("", limit=_DAMAGE_SCAN):
        try:
            run = store.get_run(run_id)
        except StateCorruptionError as exc:
            damaged.append(
                {
                    "id": run_id,
                    "agent": "?",
                    "status": "unreadable",
                    "unreadable": ["record"],
                    "error": str(exc),
                }
            )
            continue
        if (
            (status is None or run.status == status)
            and (parent_id is None or run.parent_id == parent_id)
            and (session_id is None or run.session_id == session_id)
        ):
            runs.append(run)
    runs.sort(key=lambda r: r.created_at, reverse=True)
    return runs, damaged


@router.get("/runs/{run_id}", summary="A run's record: status, pending question, result")
async def get_run(run_id: str, state: State) -> dict[str, Any]:
    return run_json(state.runtime.get_run(run_id), state.runtime.registry)


@router.get("/runs/{run_id}/frames", summary="A page of a run's frames after a seq")
async def get_frames(
    run_id: str,
    state: State,
    after_seq: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> dict[str, Any]:
    run = state.runtime.get_run(run_id)
    after_seq = checked_seq(after_seq, "after_seq")
    frames = state.runtime.store.read_frames(run_id, after_seq=after_seq, limit=limit)
    last = frames[-1].seq if frames else after_seq
    return {
        "frames": [frame_json(f) for f in frames],
        "last_seq": run.last_seq,
        "next_after_seq": last if last < run.last_seq else None,
    }


@router.get(
    "/runs/{run_id}/stream",
    summary="A run's frames as Server-Sent Events, live until it ends",
    description="Each event's id is the frame's seq and its name the frame type; reconnect "
    "with the Last-Event-ID header (browsers do it themselves) to continue with nothing lost "
    "or repeated. With deltas=true, model text also streams as 'agent.token' events (no id). "
    "A 'status' event (no id) comes first and on every change of the run's status, step "
    "count or question (a pause at a limit, a wait for an answer, each step). "
    "The stream ends with an 'end' event once the run is completed, failed, cancelled or "
    "deleted; it stays open while the run waits for an answer.",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def stream_run(
    run_id: str,
    request: Request,
    state: State,
    after_seq: Annotated[int, Query(ge=0)] = 0,
    deltas: bool = False,
    last_event_id: Annotated[str | None, Header(include_in_schema=True)] = None,
) -> EventSourceResponse:
    state.runtime.get_run(run_id)
    after_seq = last_event_seq(request, checked_seq(after_seq, "after_seq"))
    return run_event_stream(state, request, run_id, after_seq, deltas=deltas)


@router.post("/runs/{run_id}/answer", summary="Answer the question or checkpoint a run waits on")
async def answer_run(run_id: str, body: AnswerBody, state: State) -> dict[str, Any]:
    runtime = state.runtime
    run = runtime.get_run(run_id)
    pending = run.pending_interaction
    if run.status != RunStatus.AWAITING_USER or not pending:
        raise InvalidRunStateError(
            f"run '{run_id}' is {run.status.value}, not waiting for an answer; "
            "GET /runs/{id} shows what it is doing"
        )
    if body.interaction_id is not None and body.interaction_id != pending.get("interaction_id"):
        raise Problem(
            409,
            "stale-interaction",
            f"interaction '{body.interaction_id}' is no longer pending; the run now asks "
            f"{pending.get('prompt')!r} (interaction '{pending.get('interaction_id')}')",
        )
    options = list(pending.get("options") or [])
    if body.action is not None and options and body.action not in options:
        raise Problem(
            422,
            "invalid-answer",
            f"this question accepts {', '.join(options)}; '{body.action}' is not one of them",
        )
    await runtime.resume(run_id, body.to_answer())
    return run_json(runtime.get_run(run_id), runtime.registry)


@router.post("/runs/{run_id}/resume", summary="Continue a paused or interrupted run")
async def resume_run(run_id: str, state: State, body: LimitsBody | None = None) -> dict[str, Any]:
    runtime = state.runtime
    run = runtime.get_run(run_id)
    if run.status == RunStatus.AWAITING_USER:
        raise InvalidRunStateError(
            f"run '{run_id}' waits for an answer; POST it to /runs/{run_id}/answer"
        )
    limits = _limits(runtime, body, run.input.get("limits")) if body else None
    await runtime.resume(run_id, limits=limits)
    return run_json(runtime.get_run(run_id), runtime.registry)


@router.post("/runs/{run_id}/fork", status_code=201, summary="A new run sharing frames up to a seq")
async def fork_run(
    run_id: str, state: State, response: Response, body: ForkBody | None = None
) -> dict[str, Any]:
    runtime = state.runtime
    source = runtime.get_run(run_id)
    at = body.at_seq if body else None
    if at is not None and at > source.last_seq:
        raise Problem(
            422,
            "invalid-seq",
            f"at_seq {at} is past the run's last frame (seq {source.last_seq}); choose a seq "
            "from GET /runs/{id}/frames",
        )
    new_id = await runtime.fork(run_id, at_seq=at)
    response.headers["Location"] = f"/runs/{new_id}"
    return run_json(runtime.get_run(new_id), runtime.registry)


@router.post("/runs/{run_id}/cancel", summary="Stop a run for good")
async def cancel_run(run_id: str, state: State, body: CancelBody | None = None) -> dict[str, Any]:
    runtime = state.runtime
    await runtime.cancel(run_id, reason=(body or CancelBody()).reason)
    return run_json(runtime.get_run(run_id), runtime.registry)


@router.delete("/runs/{run_id}", summary="Mark a run (and the runs below it) deleted")
async def delete(run_id: str, state: State) -> dict[str, Any]:
    """Through ``Runtime.delete``: a run executing here is stopped first; one another process
    executes is deleted at its next step (``applied: next_step``); finished runs too."""
    applied = await state.runtime.delete(run_id)
    return {**run_json(state.runtime.get_run(run_id), state.runtime.registry), "applied": applied}
