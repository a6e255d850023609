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
from typing import Any, ClassVar

from kforge.agents.build.arguments import BuildArgs
from kforge.agents.build.artifact import plan_records
from kforge.agents.build.context import BuildPhase, BuildPhaseContext
from kforge.agents.build.from_goal import GOAL_SHAPE, cannot_build, goal_shape, plan_program
from kforge.agents.build.making import CODING, MISSING_MODULE, MakingPhase
from kforge.agents.build.prompts import (
    SUMMARY_SYSTEM,
    GapNote,
    Grounding,
    usable_summary,
)
from kforge.agents.build.shapes import Shape, choose_shape, load_shape, shape_names
from kforge.agents.build.workspace import Workspace
from kforge.agents.common.cited import cited_text
from kforge.agents.common.naming import topic_name
from kforge.agents.decisions import decide as _decide
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
)
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import phase_prompt as library_prompt
from kforge.rag.grounded import AnswerStyle
from kforge.rag.textcheck import LoopWatch, key_terms

__all__ = ["BuildAgent"]

P = BuildPhase
DECISION = ModelSettings(temperature=0.1, max_tokens=400)
SUMMARY = ModelSettings(temperature=0.2, max_tokens=60)
DEFAULT_CONSTRAINTS = (
    "Only the Python standard library: the checks run in a sandbox with no network and no "
    "extra packages.",
    "Nothing is written outside the workspace.",
)


class BuildAgent(MakingPhase, ForgeAgent[BuildResult]):
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
        missing = MISSING_MODULE.search(gap)
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

    def result(self) -> BuildResult:
        rc = self.rc
        shape = self.shape if rc.shape else None
        return BuildResult(
            goal=self.goal,
            workspace=str(self.workspace.root),
            program=shape.title if shape else "",
            summary=rc.summary,
            plan=tuple(rc.plan),
            files=rc.files,
            concepts=tuple(rc.concepts),
            constraints=tuple(rc.constraints),
            sources=tuple(rc.sources),
            run_command=shape.run if shape else "",
            check_command=shape.check if shape else "",
            log=self._log() if shape else "",
            complete=bool(rc.plan) and all(s["status"] == "done" for s in rc.plan),
        )

    def summary(self) -> str:
        rc = self.rc
        done = sum(1 for s in rc.plan if s["status"] == "done")
        return (
            f"built {done} of {len(rc.plan)} steps, {len(rc.files)} files in {self.workspace.root}"
        )
