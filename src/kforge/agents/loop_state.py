"""What the ReAct loop remembers between steps, its JSON form, its result and its metrics.

Everything here is saved after each step, so the loop continues at the exact step after a pause
or a crash, in this process or another.
"""

from __future__ import annotations

from typing import Any, TypeVar

from kforge.agents.loop_config import DEFAULT_CONTEXT_TOKENS, LoopConfig
from kforge.engine.context import RunContext
from kforge.frames import AgentStatus
from kforge.llm.types import Usage
from kforge.memory.context import ContextWindow, GroundingSection
from kforge.memory.trajectory import TrajectoryMetrics

__all__ = ["LoopState"]

S = TypeVar("S", bound="LoopState")


class LoopState:
    """The loop's progress: counters, failures, observations, context window and outcome."""

    def __init__(
        self,
        goal: str,
        config: LoopConfig | None = None,
        *,
        memory_scope: str = "react",
        user_id: str = "default",
        preferences: dict[str, str] | None = None,
    ) -> None:
        self.goal = goal
        self.config = config or LoopConfig()
        self.memory_scope = memory_scope
        """The agent name reflections are kept under (with ``user_id``)."""
        self.user_id = user_id
        self.preferences = dict(preferences or {})
        self.iteration = 0
        """Decisions made so far (1-based once the first step started)."""
        self.failures: dict[str, int] = {}
        """Failures per action: a tool's name, ``respond`` (a failed answer check) or ``decision``."""
        self.failed_calls: list[str] = []
        """Canonical keys of the calls that failed in this run (never repeated as they were)."""
        self.retired: list[str] = []
        """Tools that used up their retries and are no longer offered."""
        self.tools_called: list[str] = []
        self.observations: list[str] = []
        self.reflection_ids: list[str] = []
        self.suggestion: dict[str, Any] | None = None
        """An alternative call proposed after a repeated error, shown in the next decision."""
        self.window: ContextWindow | None = None
        self.finished = False
        self.answer = ""
        self.goal_achieved = False
        self.stop_reason = ""
        """Empty when the goal was reached; else max_steps, max_time or max_retries."""
        self.elapsed_s = 0.0
        self.tokens = [0, 0]
        self.errors = 0

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
        """An ``agent.status`` frame: the loop entered ``phase`` (seed 001 Property 17)."""
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
        """Seed 001 §9's metrics: steps, efficiency against optimal steps, tokens, time, errors."""
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

    def result(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "answer": self.answer,
            "goal_achieved": self.goal_achieved,
            "finished": self.finished,
            "stop_reason": self.stop_reason,
            "iterations": self.iteration,
            "tools_called": list(self.tools_called),
            "reflections": list(self.reflection_ids),
            "metrics": self.metrics().to_dict(),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "config": self.config.to_dict(),
            "memory_scope": self.memory_scope,
            "user_id": self.user_id,
            "preferences": dict(self.preferences),
            "iteration": self.iteration,
            "failures": dict(self.failures),
            "failed_calls": list(self.failed_calls),
            "retired": list(self.retired),
            "tools_called": list(self.tools_called),
            "observations": list(self.observations),
            "reflection_ids": list(self.reflection_ids),
            "suggestion": self.suggestion,
            "window": self.window.to_dict() if self.window is not None else None,
            "finished": self.finished,
            "answer": self.answer,
            "goal_achieved": self.goal_achieved,
            "stop_reason": self.stop_reason,
            "elapsed_s": self.elapsed_s,
            "tokens": list(self.tokens),
            "errors": self.errors,
        }

    @classmethod
    def from_dict(cls: type[S], data: dict[str, Any]) -> S:
        state = cls(
            str(data["goal"]),
            LoopConfig.from_dict(data.get("config")),
            memory_scope=str(data.get("memory_scope", "react")),
            user_id=str(data.get("user_id", "default")),
            preferences={str(k): str(v) for k, v in (data.get("preferences") or {}).items()},
        )
        state.iteration = int(data.get("iteration", 0))
        state.failures = {str(k): int(v) for k, v in (data.get("failures") or {}).items()}
        state.failed_calls = [str(k) for k in data.get("failed_calls") or []]
        state.retired = [str(t) for t in data.get("retired") or []]
        state.tools_called = [str(t) for t in data.get("tools_called") or []]
        state.observations = [str(o) for o in data.get("observations") or []]
        state.reflection_ids = [str(r) for r in data.get("reflection_ids") or []]
        suggestion = data.get("suggestion")
        state.suggestion = dict(suggestion) if isinstance(suggestion, dict) else None
        window = data.get("window")
        state.window = ContextWindow.from_dict(window) if window else None
        state.finished = bool(data.get("finished", False))
        state.answer = str(data.get("answer", ""))
        state.goal_achieved = bool(data.get("goal_achieved", False))
        state.stop_reason = str(data.get("stop_reason", ""))
        state.elapsed_s = float(data.get("elapsed_s", 0.0))
        tokens = data.get("tokens") or [0, 0]
        state.tokens = [int(tokens[0]), int(tokens[1])]
        state.errors = int(data.get("errors", 0))
        return state
