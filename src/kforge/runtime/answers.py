"""Run an agent to its final answer without a person at hand (for MCP and other callers):
checkpoints are approved; any other question stops the run and says how to answer it."""

from __future__ import annotations

import json
from typing import Any

from kforge.errors import ValidationError
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus

__all__ = ["agent_args", "answer_text", "run_to_answer"]

_QUESTION_AGENTS = frozenset({"research", "router"})


def agent_args(agent_type: str, prompt: str, *, corpus: str) -> dict[str, Any]:
    """The start arguments of a built-in agent for a plain-text task."""
    if agent_type in _QUESTION_AGENTS:
        return {"question": prompt, "corpus": corpus}
    return {"goal": prompt}


def answer_text(run: RunRecord) -> str:
    """The most useful text of a finished run's result; an answer with citations ends with the
    Sources its markers name."""
    result = run.result or {}
    for key in ("report", "answer", "response", "response_text", "summary"):
        value = result.get(key)
        if isinstance(value, str) and value.strip():
            citations = result.get("citations") if key == "answer" else None
            if isinstance(citations, list) and citations:
                from kforge.rag.types import Citation

                listed = "\n".join(Citation.from_dict(c).label for c in citations)
                return f"{value}\n\nSources:\n{listed}"
            return value
    return json.dumps(result, ensure_ascii=False)


async def run_to_answer(
    runtime: Runtime, agent_type: str, prompt: str, *, corpus: str = "samples"
) -> str:
    if not prompt.strip():
        raise ValidationError("the task is empty")
    run = await runtime.run(agent_type, agent_args(agent_type, prompt, corpus=corpus))
    while run.status == RunStatus.AWAITING_USER:
        pending = run.pending_interaction or {}
        if pending.get("kind") != "checkpoint":
            return (
                f"[run {run.id} is waiting for a person: {pending.get('prompt', '')}; answer "
                f"with: kforge runs resume {run.id} --answer ...]"
            )
        await runtime.resume(run.id, "approve")
        run = await runtime.wait(run.id)
    if run.status != RunStatus.COMPLETED:
        detail = run.error or run.pause_reason or ""
        return f"[run {run.id} ended {run.status.value}: {detail}]"
    return answer_text(run)
