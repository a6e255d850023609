"""The Build agent, a phase graph: GROUNDING → MAKING → COMPLETE.

GROUNDING chooses the program shape that fits the goal, grounds its concepts in the documents,
gathers constraints and proposes a plan of small steps with acceptance checks; a blocking
checkpoint lets the user approve, change or reject it. MAKING writes each step's files in the
workspace and runs the step's check in the sandboxed ``python`` tool confined to it; a failing
check is reflected on and retried within limits, then the step falls back to its known-good
shape; a check that reveals a missing concept (a module the sandbox does not have, or a gap the
model names) goes back to GROUNDING (``conceptual_gap_discovered``). One step writes and checks
one plan step.
"""

from __future__ import annotations

import enum
import re
from typing import Any, ClassVar

from kforge.agents.build.arguments import BuildArgs
from kforge.agents.build.artifact import plan_records, readme_text
from kforge.agents.build.context import BuildPhase, BuildPhaseContext
from kforge.agents.build.from_goal import GOAL_SHAPE, cannot_build, goal_shape, plan_program
from kforge.agents.build.log import render_log
from kforge.agents.build.prompts import (
    SUMMARY_SYSTEM,
    CodeReply,
    GapNote,
    Grounding,
    usable_summary,
)
from kforge.agents.build.shapes import Shape, choose_shape, load_shape, shape_names
from kforge.agents.build.workspace import Workspace
from kforge.agents.cited import cited_text
from kforge.agents.decisions import decide as _decide
from kforge.agents.research.question_tree import topic_name
from kforge.agents.results import AgentResult, BuildResult
from kforge.engine.agent import ForgeAgent
from kforge.engine.arguments import parse_arguments
from kforge.engine.phases import Checkpoint, PhaseGraph, PhaseTransition
from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError
from kforge.frames import (
    AgentSpeaking,
    AgentThinking,
    CheckpointKind,
    DataEvent,
    Reflection,
    new_id,
)
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import phase_prompt as library_prompt
from kforge.rag.grounded import AnswerStyle
from kforge.rag.textcheck import LoopWatch, key_terms
from kforge.tools.approval import ApprovalPolicy
from kforge.tools.builtin.python import PythonTool
from kforge.tools.execution import execute_tool

__all__ = ["BuildAgent"]

P = BuildPhase
DECISION = ModelSettings(temperature=0.1, max_tokens=400)
CODING = ModelSettings(temperature=0.1, max_tokens=2000)
SUMMARY = ModelSettings(temperature=0.2, max_tokens=60)
FILE_EVENT = "build.file.written"
"""Records each file written (path, sha256, bytes), so a re-executed step writes none again."""
DEFAULT_CONSTRAINTS = (
    "Only the Python standard library: the checks run in a sandbox with no network and no "
    "extra packages.",
    "Nothing is written outside the workspace.",
)
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


class BuildAgent(ForgeAgent):
    agent_type = "build"
    result_type: ClassVar[type[AgentResult]] = BuildResult
    context_class = BuildPhaseContext
    graph = PhaseGraph(
        BuildPhase,
        [
            PhaseTransition(P.GROUNDING, P.MAKING, "plan_ready"),
            PhaseTransition(P.MAKING, P.GROUNDING, "conceptual_gap_discovered", is_backward=True),
            PhaseTransition(P.MAKING, P.COMPLETE, "artifact_checked"),
        ],
        initial=P.GROUNDING,
        complete=P.COMPLETE,
        checkpoints=[
            Checkpoint(P.GROUNDING, CheckpointKind.BLOCKING, "Proceed with this plan?"),
        ],
    )

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self._configure()

    def restore_state(self, state: dict[str, Any]) -> None:
        super().restore_state(state)
        self._configure()  # the run's own arguments, whatever the agent was built with

    def _configure(self) -> None:
        self.params = parse_arguments(BuildArgs, self.args, agent=self.agent_type)
        self.goal = " ".join(self.params.goal.split())
        if not self.goal:
            raise ValidationError("the build agent needs a non-empty 'goal'")
        if not self.params.workspace.strip():
            raise ValidationError("the build agent needs a 'workspace' folder to write in")
        self.workspace = Workspace(self.params.workspace)
        self.search = {
            "question": self.goal,
            "corpus": self.params.corpus,
            "k": self.params.k,
            "max_rewrites": self.params.max_rewrites,
            "passages_per_answer": self.params.passages_per_answer,
        }

    @property
    def rc(self) -> BuildPhaseContext:
        assert isinstance(self.phase_context, BuildPhaseContext)
        return self.phase_context

    @property
    def shape(self) -> Shape:
        if self.rc.shape == GOAL_SHAPE:
            return goal_shape(self.rc.program, self.goal)
        return load_shape(self.rc.shape)

    # -- prompts ---------------------------------------------------------------------------

    def phase_prompt(self, phase: enum.Enum) -> str:
        return self.family_prompt("build", phase, **self._prompt_values(phase))

    def initial_prompt(self, phase: enum.Enum) -> str:
        return library_prompt("build", phase.value, **self._prompt_values(phase))

    def _prompt_values(self, phase: enum.Enum) -> dict[str, Any]:
        rc = self.rc
        if phase == P.GROUNDING:
            return {
                "project": self.goal,
                "shapes": [f"{n}: {load_shape(n).description}" for n in shape_names()],
                "concepts": [c["name"] for c in rc.concepts],
            }
        current = rc.pending()[0] if rc.pending() else None
        return {
            "project": self.goal,
            "plan": [f"{s['id']}: {s['title']} (accepts when {s['accept']})" for s in rc.plan]
            or ["(no plan yet)"],
            "step": current["title"] if current else "(none)",
            "constraints": rc.constraints,
            "done": [s["title"] for s in rc.plan if s["status"] == "done"],
        }

    def phase_work_summary(self, phase: enum.Enum) -> str:
        rc = self.rc
        if phase == P.GROUNDING:
            return "\n".join(
                [f"- shape: {rc.shape or '(none)'}"]
                + [f"- concept: {c['name']}" for c in rc.concepts]
                + [f"- constraint: {c}" for c in rc.constraints]
            )
        return "\n".join(f"- {s['title']}: {s['status']}" for s in rc.plan) or "(no steps)"

    # -- phases ----------------------------------------------------------------------------

    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        if phase == P.GROUNDING:
            return await self._ground(ctx)
        if phase == P.MAKING:
            return await self._make_next(ctx)
        return True

    def _style(self, ctx: RunContext) -> AnswerStyle:
        return self.params.answer or answer_style(ctx.model)

    async def _ground(self, ctx: RunContext) -> bool:
        rc = self.rc
        trigger = rc.backward_trigger if self.is_reentry(P.GROUNDING) else None
        if trigger == "user_modification":
            return True  # the person changed the plan; show it again at the checkpoint
        if rc.gap:
            await self._ground_gap(ctx)
            return True
        style = self._style(ctx)
        reply: Grounding | None = None
        if style == "generative":
            reply = await _decide(
                ctx,
                [
                    Message.system(self.phase_prompt(P.GROUNDING)),
                    Message.user(
                        f"Goal: {self.goal}" + (f"\nRejected because: {trigger}" if trigger else "")
                    ),
                ],
                DECISION,
                Grounding,
                "grounding",
            )
        preferred = reply.shape if reply else ""
        # a reason given with a rejection says what to build instead, when a shape does it
        known, fit = choose_shape(trigger, preferred) if trigger else (None, 0)
        if known is None:
            known, fit = choose_shape(self.goal, preferred)
        if known is None and style != "generative":
            raise ValidationError(cannot_build(self.goal, getattr(ctx.model, "name", "the model")))
        before = (rc.shape, rc.program)
        program = await plan_program(ctx, self.goal, trigger, CODING) if known is None else {}
        if not self.is_reentry(P.GROUNDING):  # a refused goal leaves no folder behind
            await self._claim_workspace(ctx)
        rc.shape, rc.fit, rc.program = (known.name if known else GOAL_SHAPE), fit, program
        shape = self.shape
        changed = (rc.shape, rc.program) != before
        ctx.emit(DataEvent(name="shape.chosen", payload={"shape": rc.shape, "fit": fit}))
        if known is None:
            ctx.emit(
                AgentThinking(
                    message="no known program does what the goal asks; the model writes it, "
                    f"checked by running `{shape.run}` for the lines the goal calls for"
                )
            )
        await self._summarize(ctx, reply)
        if changed or not rc.concepts:
            rc.concepts = []
            notes = [(c.name, c.explanation) for c in (reply.concepts if reply else [])]
            for name, explanation in [*shape.concepts, *notes]:
                await self._add_concept(ctx, name, explanation)
        for text in [
            *DEFAULT_CONSTRAINTS,
            *self.params.constraints,
            *(reply.constraints if reply else []),
        ]:
            self._add_constraint(ctx, text)
        if changed or not rc.plan:
            rc.plan = plan_records(shape)
            for step in rc.plan:
                ctx.emit(
                    DataEvent(
                        name="plan.step.added",
                        payload={k: step[k] for k in ("id", "title", "files", "accept")},
                    )
                )
        ctx.emit(
            AgentSpeaking(
                text=f"Plan: {shape.title}, {len(rc.plan)} steps, each with a check, in "
                f"{self.workspace.root}."
            )
        )
        return True

    async def _claim_workspace(self, ctx: RunContext) -> None:
        """The workspace must be new or empty when the run starts: the agent never writes over
        files it did not make."""

        def claim() -> dict[str, Any]:
            root = self.workspace.root
            if root.exists() and (not root.is_dir() or any(root.iterdir())):
                return {"path": str(root), "empty": False}
            root.mkdir(parents=True, exist_ok=True)
            return {"path": str(root), "empty": True}

        claimed = await ctx.step("build.workspace", claim)
        if not claimed.get("empty"):
            raise ValidationError(
                f"the workspace {claimed.get('path')} is not an empty folder; build in a new "
                "or empty one"
            )

    async def _summarize(self, ctx: RunContext, reply: Grounding | None) -> None:
        rc = self.rc
        shape = self.shape
        said = reply.summary if reply else ""
        if not said:
            response = await ctx.complete(
                [Message.system(SUMMARY_SYSTEM), Message.user(f"Program: {self.goal}")],
                SUMMARY,
                purpose="grounding.summary",
                watch=LoopWatch(),
            )
            said = response.text
        checked = usable_summary(
            said, self.goal, SUMMARY_SYSTEM, f"{shape.title}. {shape.description}"
        )
        rc.summary, rc.summary_origin = (
            (checked, "model") if checked else (shape.description, "template")
        )
        ctx.emit(DataEvent(name="summary.written", payload={"origin": rc.summary_origin}))

    async def _add_concept(self, ctx: RunContext, name: str, explanation: str) -> None:
        """A concept explained from the documents when they speak of it, else in the shape's
        (or the model's) words."""
        name = topic_name(name)
        if not name or any(c["name"].lower() == name.lower() for c in self.rc.concepts):
            return
        cited = await cited_text(
            ctx,
            name,
            self.search,
            self.rc.sources,
            style=self._style(ctx),
            purpose="grounding.concept",
            system=self.initial_prompt(P.GROUNDING),
            max_sentences=2,
        )
        # a sentence explains the concept only if it names all of it ("counting" in one
        # sentence and "dictionary" in another explain nothing)
        terms = set(key_terms(name))
        kept = [g for g in cited.segments if terms <= set(key_terms(g["text"]))]
        used = list(dict.fromkeys(g["source_id"] for g in kept))
        for record in cited.new_sources:
            if record["id"] in used:
                self.rc.sources.append(record)
                ctx.emit(DataEvent(name="source.found", payload=dict(record)))
        concept = {
            "name": name,
            "explanation": " ".join(g["text"] for g in kept) or " ".join(explanation.split()),
            "source_ids": used,
            "origin": "documents" if kept else "template",
        }
        self.rc.concepts.append(concept)
        ctx.emit(DataEvent(name="concept.added", payload=dict(concept)))

    def _add_constraint(self, ctx: RunContext, text: str) -> None:
        text = " ".join(str(text).split())
        if text and text not in self.rc.constraints:
            self.rc.constraints.append(text)
            ctx.emit(DataEvent(name="constraint.added", payload={"text": text}))

    async def _ground_gap(self, ctx: RunContext) -> None:
        """Re-entry: address only the gap MAKING found; the plan stays, its step is redone."""
        rc = self.rc
        gap, step = rc.gap, rc.step(rc.gap_step)
        note: GapNote | None = None
        if self._style(ctx) == "generative":
            note = await _decide(
                ctx,
                [Message.system(self.phase_prompt(P.GROUNDING)), Message.user(f"Gap: {gap}")],
                DECISION,
                GapNote,
                "grounding.gap",
            )
        missing = _MISSING_MODULE.search(gap)
        name = (
            note.concept.name if note else (f"Module {missing.group(1)}" if missing else gap[:60])
        )
        explanation = note.concept.explanation if note else gap
        await self._add_concept(ctx, name, explanation)
        if missing:
            self._add_constraint(
                ctx,
                f"Do not import '{missing.group(1)}': it is not available; use the standard "
                "library instead.",
            )
        if note and note.constraint.strip():
            self._add_constraint(ctx, note.constraint)
        if step is not None:
            step["status"], step["attempts"] = "pending", 0
        rc.gap, rc.gap_step = "", ""
        ctx.emit(AgentSpeaking(text=f"Grounded the gap: {gap[:160]}"))

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
        missing = _MISSING_MODULE.search(output)
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

    # -- transitions and checkpoints -------------------------------------------------------

    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        rc = self.rc
        match transition.condition:
            case "plan_ready":
                return bool(rc.plan) and not rc.gap
            case "conceptual_gap_discovered":
                return bool(rc.gap)
            case "artifact_checked":
                return rc.log_written
        return False

    def checkpoint_payload(self, checkpoint: Checkpoint) -> dict[str, Any]:
        rc = self.rc
        return {
            "goal": self.goal,
            "program": self.shape.title if rc.shape else "",
            "summary": rc.summary,
            "plan": [f"{s['title']} — check: {s['accept']}" for s in rc.plan],
            "concepts": [c["name"] for c in rc.concepts],
            "constraints": rc.constraints,
            "workspace": str(self.workspace.root),
        }

    def modify_keys(self, phase: enum.Enum) -> dict[str, str]:
        return {
            "shape": f"build another program shape: one of {', '.join(shape_names())}",
            "constraints": 'add constraints: ["...", ...]',
            "summary": "replace the one-sentence description used in the README",
        }

    def apply_modifications(self, phase: enum.Enum, modifications: dict[str, Any]) -> None:
        rc = self.rc
        if "shape" in modifications:
            shape = load_shape(str(modifications["shape"]))
            rc.shape, rc.fit, rc.program = shape.name, max(shape.score(self.goal), 1), {}
            rc.plan = plan_records(shape)
            rc.concepts = [
                {"name": n, "explanation": e, "source_ids": [], "origin": "template"}
                for n, e in shape.concepts
            ]
        for text in modifications.get("constraints") or []:
            if str(text).strip() and str(text) not in rc.constraints:
                rc.constraints.append(" ".join(str(text).split()))
        if str(modifications.get("summary") or "").strip():
            rc.summary, rc.summary_origin = " ".join(str(modifications["summary"]).split()), "user"

    # -- results ---------------------------------------------------------------------------

    def get_mode_data(self) -> dict[str, Any]:
        return {"goal": self.goal, "workspace": str(self.workspace.root)}

    def result(self) -> dict[str, Any]:
        rc = self.rc
        shape = self.shape if rc.shape else None
        return {
            "goal": self.goal,
            "workspace": str(self.workspace.root),
            "program": shape.title if shape else "",
            "summary": rc.summary,
            "plan": rc.plan,
            "files": rc.files,
            "concepts": rc.concepts,
            "constraints": rc.constraints,
            "sources": rc.sources,
            "run_command": shape.run if shape else "",
            "check_command": shape.check if shape else "",
            "log": self._log() if shape else "",
            "complete": bool(rc.plan) and all(s["status"] == "done" for s in rc.plan),
        }

    def summary(self) -> str:
        rc = self.rc
        done = sum(1 for s in rc.plan if s["status"] == "done")
        return (
            f"built {done} of {len(rc.plan)} steps, {len(rc.files)} files in {self.workspace.root}"
        )
