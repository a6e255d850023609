"""The ``react`` agent: one goal, a few tools, the bounded ReAct loop run as a durable step agent.

Args: ``goal`` (required); ``tools``, tool names looked up in ``ctx.services.tools`` (a
``ToolRegistry`` or a list of tools) and then among the built-in tools; ``max_steps`` (5),
``max_retries`` (3), ``max_time_s``, ``context_tokens``, ``decision_mode`` (``structured`` or
``native``), ``allow_ask``, ``optimal_steps``, ``max_tokens``, ``temperature``; ``user_id``
(whose episodic memory to use) and ``preferences`` (kept in the grounding section).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kforge.agents.loop import ReactLoop
from kforge.agents.loop.config import LoopConfig
from kforge.agents.results import AgentResult, ReactResult
from kforge.engine.agent import StepOutcome
from kforge.engine.arguments import parse_arguments
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.errors import ConfigurationError, ValidationError
from kforge.frames import Frame
from kforge.memory.trajectory import TrajectoryLog
from kforge.tools.base import Tool
from kforge.tools.registry import ToolRegistry

__all__ = [
    "TOOLS_SERVICE",
    "ReactAgent",
    "ReactArgs",
    "builtin_tools",
    "resolve_tools",
    "service_tools",
    "trajectory_of",
]

TOOLS_SERVICE = "tools"
"""Former ``ctx.services`` key of the tools agents may use: now ``Services.tools``."""


def builtin_tools() -> list[Tool]:
    """The built-in tools that need no account (web, explanation, OCR, Python)."""
    from kforge.tools.builtin import default_tools

    return default_tools()


def service_tools(services: Services) -> list[Tool]:
    """The tools the run was given in ``Services.tools``."""
    return services.tool_list()


def resolve_tools(
    services: Services, names: Sequence[str] | None, *, agent: str = "react"
) -> ToolRegistry:
    """The tools called ``names``: the run's own first, then the built-ins. ``None`` means every
    tool the run was given (no built-ins). ``agent`` is the agent type errors name."""
    own = {t.name: t for t in service_tools(services)}
    if names is None:
        return ToolRegistry(own.values())
    chosen: list[Tool] = []
    builtins: dict[str, Tool] | None = None
    for name in names:
        tool = own.get(name)
        if tool is None:
            if builtins is None:
                builtins = {t.name: t for t in builtin_tools()}
            tool = builtins.get(name)
        if tool is None:
            known = sorted({*own, *(builtins or {})})
            raise ConfigurationError(
                f"{agent} agent: unknown tool '{name}'; available tools: "
                f"{', '.join(known) or 'none'}; give this process the application's tools "
                "(kforge.Services(tools=...), or --app MODULE / KFORGE_APP on the command line)"
            )
        chosen.append(tool)
    return ToolRegistry(chosen)


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise ValidationError(
            f"react agent: 'tools' must be a list of tool names (got {value!r:.100})"
        )
    return list(dict.fromkeys(value))


@dataclass(frozen=True, kw_only=True, slots=True)
class ReactArgs:
    """The react agent's own arguments; the loop's bounds are ``LoopConfig``'s."""

    goal: str = ""
    question: str = ""
    """Another name for ``goal``."""
    tools: list[str] | str | None = None
    """Tool names (a list, or one string separated by commas); none means every run tool."""
    memory_scope: str = "react"
    """The agent name reflections are kept under."""
    user_id: str = "default"
    """Whose episodic memory to use."""
    preferences: dict[str, str | int | float | bool] = field(default_factory=dict)
    """Kept in the grounding section of the context, never compacted."""


class ReactAgent:
    """The ReAct loop as a run: each runner step is one decide → act → observe iteration."""

    agent_type = "react"
    result_type: ClassVar[type[AgentResult]] = ReactResult

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args: dict[str, Any] = dict(args or {})
        parsed = parse_arguments(ReactArgs, self.args, agent=self.agent_type)
        goal = parsed.goal if "goal" in self.args else parsed.question
        if not goal.strip():
            raise ValidationError("the react agent needs a non-empty 'goal'")
        self.tool_names = _names(parsed.tools)
        self.loop = ReactLoop(
            goal.strip(),
            parse_arguments(LoopConfig, self.args, agent=self.agent_type),
            memory_scope=parsed.memory_scope or self.agent_type,
            user_id=parsed.user_id or "default",
            preferences={k: str(v) for k, v in parsed.preferences.items()},
        )
        self._tools: ToolRegistry | None = None

    async def step(self, ctx: RunContext) -> StepOutcome[ReactResult]:
        if self._tools is None:
            self._tools = resolve_tools(ctx.services, self.tool_names)
        finished = await self.loop.step(ctx, self._tools)
        if not finished:
            return StepOutcome()
        state = self.loop.state
        summary = (
            f"answered in {state.iteration} step(s)"
            if state.goal_achieved
            else f"stopped ({state.stop_reason or 'goal not reached'}) after {state.iteration} step(s)"
        )
        return StepOutcome(True, self.loop.result(), summary)

    def get_state(self) -> dict[str, Any]:
        return {"args": self.args, "loop": self.loop.to_dict()}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.args = dict(state.get("args", self.args))
        self.tool_names = _names(self.args.get("tools"))
        self.loop = ReactLoop.restore(state["loop"])

    def partial_result(self) -> ReactResult:
        return self.loop.result()


def trajectory_of(frames: Iterable[Frame], *, optimal_steps: int | None = None) -> TrajectoryLog:
    """The trajectory log of a run (its steps, tool calls, tokens, errors and efficiency) from its
    frames; ``.to_json()`` exports it."""
    return TrajectoryLog.from_frames(frames, optimal_steps=optimal_steps)
