"""A run's context for driving agent and memory code directly, without a runtime."""

from __future__ import annotations

from collections.abc import Sequence

from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.frames import Frame
from kforge.llm.base import Model

__all__ = ["step_context"]


def step_context(
    model: Model,
    committed: list[Frame],
    *,
    step: int = 1,
    agent_type: str = "react",
    journal: Sequence[Frame] = (),
    services: Services | None = None,
) -> RunContext:
    """A context inside step ``step`` (replaying ``journal``); committed frames go to ``committed``."""
    ctx = RunContext(
        run_id="run-1",
        agent_type=agent_type,
        model=model,
        limits=RunLimits(),
        next_seq=1,
        flush=committed.extend,
        services=services,
    )
    ctx.begin_step(step, journal)
    return ctx
