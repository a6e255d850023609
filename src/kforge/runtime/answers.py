"""Run an agent to its final answer without a terminal (for MCP and other callers): checkpoints
are approved, or returned as a question; any other question stops the run and says how to
answer it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kforge import jsoncodec
from kforge.agents.results import read_result
from kforge.engine.registry import AgentRegistry
from kforge.errors import ValidationError
from kforge.runtime.host import RuntimeHost
from kforge.store.base import RunRecord, RunStatus

__all__ = [
    "agent_args",
    "answer_and_continue",
    "answer_text",
    "question_text",
    "run_to_answer",
    "settle_run",
]

_QUESTION_AGENTS = frozenset({"research", "router"})
_HIDDEN_PAYLOAD = frozenset({"checkpoint_id", "phase", "modify_keys"})


def agent_args(agent_type: str, prompt: str, *, corpus: str) -> dict[str, Any]:
    """The start arguments of a built-in agent for a plain-text task."""
    if agent_type in _QUESTION_AGENTS:
        return {"question": prompt, "corpus": corpus}
    return {"goal": prompt}


def answer_text(run: RunRecord, registry: AgentRegistry | None = None) -> str:
    """A finished run's text, as its agent's declared result type says where it is (the whole
    result as JSON when it has none); an answer with citations ends with its Sources."""
    result = read_result(run, registry)
    if result.text.strip():
        return result.with_sources()
    return jsoncodec.dumps(run.result or {}, spaced=True)


async def run_to_answer(
    runtime: RuntimeHost,
    agent_type: str,
    prompt: str,
    *,
    corpus: str = "samples",
    approve_checkpoints: bool = True,
    hint: Callable[[str], str] | None = None,
) -> str:
    """Run an agent to its answer. A checkpoint is approved when ``approve_checkpoints``, else it
    is returned as a question (see ``settle_run``); ``hint`` turns ``runs resume ...`` into the
    command a person types (e.g. with ``--db``)."""
    if not prompt.strip():
        raise ValidationError("the task is empty")
    run = await runtime.run(agent_type, agent_args(agent_type, prompt, corpus=corpus))
    return await settle_run(runtime, run, approve_checkpoints=approve_checkpoints, hint=hint)


async def answer_and_continue(
    runtime: RuntimeHost,
    run_id: str,
    answer: Any,
    *,
    approve_checkpoints: bool = False,
    hint: Callable[[str], str] | None = None,
) -> str:
    """Answer the question a run waits on and run it on to its answer or its next question."""
    await runtime.resume(run_id, answer)
    run = await runtime.wait(run_id)
    return await settle_run(runtime, run, approve_checkpoints=approve_checkpoints, hint=hint)


async def settle_run(
    runtime: RuntimeHost,
    run: RunRecord,
    *,
    approve_checkpoints: bool = True,
    hint: Callable[[str], str] | None = None,
) -> str:
    """The answer of a run that has stopped; a question it waits on is returned as text saying
    what it asks, what may be answered and how."""
    command = hint or (lambda c: f"kforge {c}")
    while run.status == RunStatus.AWAITING_USER:
        pending = run.pending_interaction or {}
        if pending.get("kind") != "checkpoint" or not approve_checkpoints:
            return question_text(run, command)
        await runtime.resume(run.id, "approve")
        run = await runtime.wait(run.id)
    if run.status != RunStatus.COMPLETED:
        detail = run.error or run.pause_reason or ""
        return f"[run {run.id} ended {run.status.value}: {detail}]"
    return answer_text(run, runtime.registry)


def question_text(run: RunRecord, command: Callable[[str], str]) -> str:
    """A pending question for a caller without a terminal: what is asked, what to review, the
    options and the keys a 'modify' answer may carry, and how to answer."""
    pending = run.pending_interaction or {}
    payload = {k: v for k, v in (pending.get("payload") or {}).items() if k not in _HIDDEN_PAYLOAD}
    options = list(pending.get("options") or [])
    keys = (pending.get("payload") or {}).get("modify_keys")
    lines = [f"[run {run.id} is waiting for a person: {pending.get('prompt', '')}]"]
    if payload:
        lines.append("To review:\n" + jsoncodec.dumps(payload, indent=True)[:6000])
    if options:
        lines.append(f"Options: {', '.join(options)}.")
    if "modify" in options and isinstance(keys, dict) and keys:
        lines.append(
            'A modify answer is {"action": "modify", "modifications": {...}} with any of: '
            + "; ".join(f"{k}: {v}" for k, v in keys.items())
        )
    example = options[0] if options else "TEXT"
    lines.append(
        f"Answer with the answer_run tool (run_id {run.id!r}, answer {example!r}), or run: "
        + command(f"runs resume {run.id} --answer {example}")
    )
    return "\n".join(lines)
