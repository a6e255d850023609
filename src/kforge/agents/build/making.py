"""The Build agent's MAKING phase: each step writes its plan step's files in the workspace and
runs the step's check in the sandboxed ``python`` tool confined to it. A failing check is
reflected on and retried within limits, then falls back to the step's known-good shape; a check
that reveals a missing concept sends the run back to GROUNDING."""

from __future__ import annotations

import enum
import re
from typing import TYPE_CHECKING, Any

from kforge.agents.build.arguments import BuildArgs
from kforge.agents.build.artifact import readme_text
from kforge.agents.build.context import BuildPhase, BuildPhaseContext
from kforge.agents.build.log import render_log
from kforge.agents.build.prompts import CodeReply
from kforge.agents.build.shapes import Shape
from kforge.agents.build.workspace import Workspace
from kforge.agents.decisions import decide as _decide
from kforge.engine.run_context import RunContext
from kforge.frames import AgentSpeaking, DataEvent, Reflection, new_id
from kforge.llm.types import Message, ModelSettings
from kforge.rag.grounded import AnswerStyle
from kforge.tools.approval import ApprovalPolicy
from kforge.tools.builtin.python import PythonTool
from kforge.tools.execution import execute_tool

__all__ = ["CODING", "FILE_EVENT", "MISSING_MODULE", "MakingPhase"]

P = BuildPhase
CODING = ModelSettings(temperature=0.1, max_tokens=2000)
FILE_EVENT = "build.file.written"
"""Records each file written (path, sha256, bytes), so a re-executed step writes none again."""
MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
"""A check that failed for want of a module: a concept the plan is missing."""


class MakingPhase:
    """The MAKING phase's work, part of ``BuildAgent``."""

    if TYPE_CHECKING:  # what the agent provides
        goal: str
        params: BuildArgs
        workspace: Workspace

        @property
        def rc(self) -> BuildPhaseContext: ...

        @property
        def shape(self) -> Shape: ...

        def phase_prompt(self, phase: enum.Enum) -> str: ...

        def _style(self, ctx: RunContext) -> AnswerStyle: ...

    async def _make_next(self, ctx: RunContext) -> bool:
        rc = self.rc
        pending = rc.pending()
        if not pending:
            if not rc.log_written:
                await self._write(ctx, "BUILD_LOG.md", self._log(), step="log", origin="log")
                rc.log_written = True
            return True
        step = pending[0]
        shape_step = self.shape.step(step["id"])
        step["attempts"] += 1
        attempt = step["attempts"]
        use_model = (
            self._style(ctx) == "generative"
            and bool(shape_step.model_writes)
            and attempt <= self.params.max_retries + 1
            and step.get("origin") != "fallback"
        )
        shape = self.shape
        contents = {p: self._template(p) for p in shape_step.files if shape.has_template(p)}
        # a program written for the goal has no known-good file to fall back to
        fallback = all(shape.has_template(p) for p in shape_step.model_writes)
        origin = "template" if attempt == 1 else "fallback"
        if use_model and not fallback:
            origin = "model"
        by_model: set[str] = set()
        if use_model:
            reply = await self._code(ctx, step, shape_step.interface)
            if reply is not None and reply.conceptual_gap.strip() and self._may_backtrack():
                self._found_gap(ctx, step, reply.conceptual_gap.strip())
                step["attempts"] -= 1
                return True
            written = {f.path: f.content for f in (reply.files if reply else [])}
            if all(written.get(path, "").strip() for path in shape_step.model_writes):
                contents.update({path: written[path] for path in shape_step.model_writes})
                origin, by_model = "model", set(shape_step.model_writes)
        step["origin"] = origin
        for path, content in contents.items():
            made = "model" if path in by_model else "template" if origin == "model" else origin
            await self._write(ctx, path, content, step=step["id"], origin=made)
        ctx.flush()  # the files are durable before their check runs
        result = await execute_tool(
            ctx,
            PythonTool(workspace=str(self.workspace.root)),
            {"code": shape_step.check},
            reasoning=f"check '{step['title']}': {step['accept']}",
            policy=ApprovalPolicy.of(allow=["python"]),  # approved with the plan
        )
        ctx.flush()  # a recorded check is never run again, whatever happens next
        output = result.summary(600)
        ok = not result.is_error
        step["checks"].append({"attempt": attempt, "ok": ok, "origin": origin, "output": output})
        ctx.emit(
            DataEvent(
                name="check.passed" if ok else "check.failed",
                payload={"step": step["id"], "attempt": attempt, "origin": origin},
            )
        )
        if ok:
            step["status"] = "done"
            rc.failure = {}
            ctx.emit(AgentSpeaking(text=f"Step done: {step['title']}"))
            return False
        missing = MISSING_MODULE.search(output)
        if missing and origin == "model" and self._may_backtrack():
            self._found_gap(ctx, step, f"the check failed: No module named '{missing.group(1)}'")
            return True
        rc.failure = {"step": step["id"], "output": output}
        last_chance = origin != "model" or attempt > self.params.max_retries
        fix = (
            "the step's files could not pass their check"
            if origin != "model" or (last_chance and not fallback)
            else "fall back to the known-good shape of this step"
            if last_chance
            else "rewrite the files with the error in view"
        )
        ctx.emit(
            Reflection(
                reflection_id=new_id(),
                error_type="check_failed",
                failed_action={"step": step["id"], "attempt": attempt, "origin": origin},
                analysis=output.splitlines()[0] if output else "the check failed",
                suggested_fix=fix,
                repeated=attempt > 1,
            )
        )
        if origin != "model" or (last_chance and not fallback):
            step["status"] = "failed"
        elif last_chance:
            step["origin"] = "fallback"
        return False

    async def _code(
        self, ctx: RunContext, step: dict[str, Any], interface: str
    ) -> CodeReply | None:
        rc = self.rc
        user = [
            f"Step: {step['title']}",
            f"Files to write: {', '.join(self.shape.step(step['id']).model_writes)}",
        ]
        user += [f"Interface: {interface}", f"Acceptance check: {step['accept']}"]
        user += [f"Constraint: {c}" for c in rc.constraints]
        if rc.failure.get("step") == step["id"]:
            user.append(f"The previous attempt failed its check:\n{rc.failure['output']}")
        return await _decide(
            ctx,
            [Message.system(self.phase_prompt(P.MAKING)), Message.user("\n".join(user))],
            CODING,
            CodeReply,
            "making",
        )

    def _found_gap(self, ctx: RunContext, step: dict[str, Any], gap: str) -> None:
        rc = self.rc
        rc.gap, rc.gap_step = gap, step["id"]
        rc.backtracks["conceptual_gap_discovered"] = (
            rc.backtracks.get("conceptual_gap_discovered", 0) + 1
        )
        rc.backward_trigger_detail = f"step '{step['title']}': {gap}"
        ctx.emit(DataEvent(name="gap.found", payload={"step": step["id"], "gap": gap}))

    def _may_backtrack(self) -> bool:
        return self.rc.backtracks.get("conceptual_gap_discovered", 0) < self.params.max_backtracks

    def _template(self, path: str) -> str:
        if path != "README.md":
            return self.shape.template(path)
        failed = [s["title"] for s in self.rc.plan if s["status"] == "failed"]
        return readme_text(self.shape, goal=self.goal, summary=self.rc.summary, failed=failed)

    async def _write(
        self, ctx: RunContext, path: str, content: str, *, step: str, origin: str
    ) -> None:
        def write() -> dict[str, Any]:
            return {**self.workspace.write(path, content), "step": step, "origin": origin}

        record = await ctx.step(FILE_EVENT, write)
        self.rc.files[path] = {k: record[k] for k in ("sha256", "bytes", "step", "origin")}

    def _log(self) -> str:
        return render_log(self.goal, self.shape, self.rc, str(self.workspace.root))
