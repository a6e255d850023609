"""The ``python`` tool: run Python code in the sandbox; ``fork``/``wait`` reach child agents.

Inside the code, ``fork(prompt)`` starts a child agent and returns a handle, ``wait(handle)``
returns its answer. Both are served by ``context.services.agents``, an ``AgentSpawner`` (async
``fork(prompt: str) -> str`` and ``wait(handle: str) -> str``) supplied by the runtime.
"""

from __future__ import annotations

from typing import Any

from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.builtin.sandbox import SandboxLimits, SandboxOutcome, run_sandboxed
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import AgentSpawner, ToolContext

__all__ = ["AgentSpawner", "PythonTool"]


class PythonTool(Tool):
    """Runs code in a separate limited process; needs approval by default (destructive)."""

    def __init__(
        self, limits: SandboxLimits | None = None, *, workspace: str | None = None
    ) -> None:
        self.limits = limits or SandboxLimits()
        self.workspace = workspace
        """A folder the code runs in and may change (kept); None: a new temporary one each run."""
        # The sandbox enforces its own wall time (excluding fork/wait); this outer bound only
        # guards against a child agent that never finishes.
        self.timeout_s = max(self.limits.wall_s * 4, 3600.0)

    @property
    def name(self) -> str:
        return "python"

    @property
    def description(self) -> str:
        where = (
            "its working folder (the workspace, kept between runs)"
            if self.workspace
            else "its own temporary working directory"
        )
        return (
            "Run Python code in an isolated sandbox and return its output. The value of the "
            "last expression is returned; print() output is captured. No network, no new "
            f"processes; it can read and write files only in {where} "
            "(plus read Python's standard library and installed packages), nothing "
            "else of the machine or the user; limited CPU "
            f"({self.limits.cpu_s} s), memory ({self.limits.memory_mb} MB) and time "
            f"({self.limits.wall_s:g} s). fork(prompt) starts a child agent and returns a "
            "handle; wait(handle) returns that agent's answer."
        )

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 1, "description": "Python 3 source."}
            },
            "required": ["code"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Run Python code",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        )

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        agents = context.services.agents if context else None

        async def rpc(op: str, args: dict[str, Any]) -> Any:
            if agents is None:
                raise RuntimeError(
                    f"{op}() is not available: this run offers no child agents "
                    "(ToolContext.services.agents); do the work in this code instead"
                )
            if op == "fork":
                return await agents.fork(str(args.get("prompt", "")))
            if op == "wait":
                return await agents.wait(str(args.get("handle", "")))
            raise RuntimeError(f"unknown request '{op}'")

        outcome = await run_sandboxed(
            str(arguments["code"]), self.limits, rpc, workdir=self.workspace
        )
        return _result(outcome)


def _result(outcome: SandboxOutcome) -> ToolResult:
    details = {
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
        "result": outcome.result,
        "files": list(outcome.files),
        "isolation": list(outcome.isolation),
    }
    if not outcome.ok:
        shown = outcome.traceback.strip() if outcome.error_kind == "exception" else ""
        output = _output(outcome)
        message = outcome.error or "the code failed"
        message += f"\n{shown}" if shown else ""
        message += f"\n{output}" if output else ""
        return ToolResult.error(message, kind=outcome.error_kind or "exception", details=details)
    text = _output(outcome)
    if outcome.result is not None:
        text = f"{text}\n{outcome.result}" if text else outcome.result
    return ToolResult.success(text or "(no output)", details)


def _output(outcome: SandboxOutcome) -> str:
    parts = [outcome.stdout.rstrip()]
    if outcome.stderr.strip():
        parts.append(f"[stderr]\n{outcome.stderr.rstrip()}")
    return "\n".join(p for p in parts if p)
