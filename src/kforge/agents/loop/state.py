"""What the ReAct loop remembers between steps, its result and its metrics.

Everything here is saved after each step (``kforge.jsoncodec.to_builtins``, read back by
``convert``), so the loop continues at the exact step after a pause or a crash, in this process
or another.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from kforge.agents.loop.config import DEFAULT_CONTEXT_TOKENS, LoopConfig
from kforge.agents.results import ReactResult
from kforge.engine.run_context import RunContext
from kforge.frames import AgentStatus
from kforge.llm.types import Usage
from kforge.memory.trajectory import TrajectoryMetrics
from kforge.memory.window import ContextWindow, GroundingSection

__all__ = ["LoopState"]


@dataclass(eq=False)
class LoopState:
    """The loop's progress: counters, failures, observations, context window and outcome.

    Every field is saved after each step and restored by name.
    """

    goal: str
    config: LoopConfig = field(default=LoopConfig())
    _: KW_ONLY
    memory_scope: str = "react"
    """The agent name reflections are kept under (with ``user_id``)."""
    user_id: str = "default"
    preferences: dict[str, str] = field(default_factory=dict)
    iteration: int = field(default=0, init=False)
    """Decisions made so far (1-based once the first step started)."""
    failures: dict[str, int] = field(default_factory=dict, init=False)
    """Failures per action: a tool's name, ``respond`` (a failed answer check) or ``decision``."""
    failed_calls: list[str] = field(default_factory=list, init=False)
    """Canonical keys of the calls that failed in this run (never repeated as they were)."""
    retired: list[str] = field(default_factory=list, init=False)
    """Tools that used up their retries and are no longer offered."""
    tools_called: list[str] = field(default_factory=list, init=False)
    observations: list[str] = field(default_factory=list, init=False)
    reflection_ids: list[str] = field(default_factory=list, init=False)
    suggestion: dict[str, Any] | None = field(default=None, init=False)
    """An alternative call proposed after a repeated error, shown in the next decision."""
    window: ContextWindow | None = field(default=None, init=False)
    finished: bool = field(default=False, init=False)
    answer: str = field(default="", init=False)
    goal_achieved: bool = field(default=False, init=False)
    stop_reason: str = field(default="", init=False)
    """Empty when the goal was reached; else max_steps, max_time or max_retries."""
    elapsed_s: float = field(default=0.0, init=False)
    tokens: list[int] = field(default_factory=lambda: [0, 0], init=False)
    errors: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.preferences = {str(k): str(v) for k, v in (self.preferences or {}).items()}

    # -- small operations every part of the loop uses -------------------------------------

    def context_window(self, ctx: RunContext) -> ContextWindow:
        """The loop's context: created on first use with the goal, the preferences and the
        model's window size (``config.context_tokens`` first)."""
        if self.window is None:
            size = self.config.context_tokens or getattr(ctx.model, "context_window", None)
            grounding = GroundingSection(
                current_goal=self.goal, user_preferences=tuple(self.preferences.items())
            )
            self.window = ContextWindow(grounding, max_tokens=int(size or DEFAULT_CONTEXT_TOKENS))
            self.window.add("user", self.goal)
        return self.window

    def count_failure(self, key: str) -> int:
        self.failures[key] = self.failures.get(key, 0) + 1
        return self.failures[key]

    def emit_status(
        self, ctx: RunContext, phase: str, usage: Usage, *, tool: str | None = None
    ) -> None:
        """An ``agent.status`` frame: the loop entered ``phase``, with its step and tokens so far."""
        ctx.emit(
            AgentStatus(
                phase=phase,
                step_number=self.iteration,
                max_steps=self.config.max_steps,
                current_tool=tool,
                input_tokens=self.tokens[0] + usage.input_tokens,
                output_tokens=self.tokens[1] + usage.output_tokens,
            )
        )
        ctx.flush()  # a status is news: subscribers see it now, not when the step ends

    # -- outcome --------------------------------------------------------------------------

    def metrics(self) -> TrajectoryMetrics:
        """The trajectory's metrics: steps, efficiency against optimal steps, tokens, time, errors."""
        optimal = self.config.optimal_steps
        return TrajectoryMetrics(
            total_steps=self.iteration,
            input_tokens=self.tokens[0],
            output_tokens=self.tokens[1],
            duration_s=round(self.elapsed_s, 6),
            error_count=self.errors,
            optimal_steps=optimal,
            efficiency=optimal / self.iteration if optimal and self.iteration else None,
        )

    def result(self) -> ReactResult:
        return ReactResult(
            goal=self.goal,
            answer=self.answer,
            goal_achieved=self.goal_achieved,
            finished=self.finished,
            stop_reason=self.stop_reason,
            iterations=self.iteration,
            tools_called=tuple(self.tools_called),
            reflections=tuple(self.reflection_ids),
            metrics=self.metrics().to_dict(),
        )
