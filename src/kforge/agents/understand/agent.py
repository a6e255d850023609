"""The Understand agent, a phase graph: CALIBRATE → DIAGNOSE → TEACH (one objective per pass)
→ COMPLETE.

CALIBRATE asks the learner a few questions and builds a knowledge state, which the learner
confirms at a blocking checkpoint. DIAGNOSE derives learning objectives, prerequisites first,
from the documents. TEACH explains one objective from the documents (cited, through the checked
grounded path), asks a check question and grades the answer; an informational checkpoint shows
each objective's summary. Backward: DIAGNOSE → CALIBRATE when the answers contradict the
knowledge state (``calibration_was_inaccurate``); TEACH → CALIBRATE when an answer shows a
missing prerequisite (``fundamental_prerequisite_gap``); TEACH → DIAGNOSE when a check fails
(``check_question_failed``), which adds a remedial objective before the check is asked again.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar

from kforge.agents.common.naming import overlaps, slug, topic_name
from kforge.agents.common.writing import question_from_title
from kforge.agents.decisions import decide
from kforge.agents.results import AgentResult, UnderstandReport
from kforge.agents.understand.arguments import UnderstandArgs
from kforge.agents.understand.calibrating import CalibratingPhase
from kforge.agents.understand.context import UnderstandPhase, UnderstandPhaseContext
from kforge.agents.understand.learner import (
    LEVELS,
)
from kforge.agents.understand.prompts import (
    DECISION,
    REMEDIAL_PROMPT,
    Diagnosis,
    Remedial,
)
from kforge.agents.understand.record import render_record
from kforge.agents.understand.teaching import TeachingPhase
from kforge.agents.understand.topics import subjects_of
from kforge.engine.agent import ForgeAgent
from kforge.engine.arguments import parse_arguments
from kforge.engine.phases import Checkpoint, PhaseGraph, PhaseTransition
from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError
from kforge.frames import AgentSpeaking, CheckpointKind, DataEvent
from kforge.llm.base import answer_style
from kforge.llm.types import Message
from kforge.prompts import phase_prompt as library_prompt
from kforge.rag.grounded import AnswerStyle

__all__ = ["UnderstandAgent"]

P = UnderstandPhase


class UnderstandAgent(CalibratingPhase, TeachingPhase, ForgeAgent[UnderstandReport]):
    agent_type = "understand"
    result_type: ClassVar[type[AgentResult]] = UnderstandReport
    context_class = UnderstandPhaseContext
    graph = PhaseGraph(
        UnderstandPhase,
        [
            PhaseTransition(P.CALIBRATE, P.DIAGNOSE, "knowledge_state_confirmed"),
            PhaseTransition(
                P.DIAGNOSE, P.CALIBRATE, "calibration_was_inaccurate", is_backward=True
            ),
            PhaseTransition(P.DIAGNOSE, P.TEACH, "objectives_ready"),
            PhaseTransition(P.DIAGNOSE, P.COMPLETE, "nothing_to_teach"),
            PhaseTransition(
                P.TEACH, P.CALIBRATE, "fundamental_prerequisite_gap", is_backward=True, priority=1
            ),
            PhaseTransition(P.TEACH, P.DIAGNOSE, "check_question_failed", is_backward=True),
            PhaseTransition(P.TEACH, P.COMPLETE, "objectives_complete"),
        ],
        initial=P.CALIBRATE,
        complete=P.COMPLETE,
        checkpoints=[
            Checkpoint(
                P.CALIBRATE, CheckpointKind.BLOCKING, "Is this what you know about the topic?"
            ),
            Checkpoint(P.TEACH, CheckpointKind.INFORMATIONAL, "Objective summary"),
        ],
    )

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self._configure()

    def restore_state(self, state: dict[str, Any]) -> None:
        super().restore_state(state)
        self._configure()  # the run's own arguments, whatever the agent was built with

    def _configure(self) -> None:
        self.params = parse_arguments(UnderstandArgs, self.args, agent=self.agent_type)
        self.topic = " ".join(self.params.topic.split())
        if not self.topic:
            raise ValidationError("the understand agent needs a non-empty 'topic'")
        self.search = {
            "question": self.topic,
            "corpus": self.params.corpus,
            "k": self.params.k,
            "max_rewrites": self.params.max_rewrites,
            "passages_per_answer": self.params.passages_per_answer,
        }

    @property
    def rc(self) -> UnderstandPhaseContext:
        assert isinstance(self.phase_context, UnderstandPhaseContext)
        return self.phase_context

    def _style(self, ctx: RunContext) -> AnswerStyle:
        return self.params.answer or answer_style(ctx.model)

    # -- prompts ---------------------------------------------------------------------------

    def phase_prompt(self, phase: enum.Enum) -> str:
        return self.family_prompt("understand", phase, **self._prompt_values(phase))

    def initial_prompt(self, phase: enum.Enum) -> str:
        return library_prompt("understand", phase.value, **self._prompt_values(phase))

    def _prompt_values(self, phase: enum.Enum) -> dict[str, Any]:
        rc = self.rc
        if phase == P.CALIBRATE:
            return {"topic": self.topic, "background": self.params.background}
        if phase == P.DIAGNOSE:
            return {
                "topic": self.topic,
                "knowledge_state": rc.knowledge or {"known": [], "unknown": []},
                "answers": [
                    f"{q['text']} — {q['answer']}" for q in rc.questions if q.get("answer")
                ],
            }
        current = rc.objective(rc.current) or {}
        return {
            "objective": current.get("text") or self.topic,
            "level": self._level(str(current.get("concept", ""))),
            "misconceptions": [current["misconception"]] if current.get("misconception") else [],
        }

    def phase_work_summary(self, phase: enum.Enum) -> str:
        rc = self.rc
        if phase == P.CALIBRATE:
            state = rc.knowledge or {}
            lines = [f"- {level}: {', '.join(state.get(level, [])) or '-'}" for level in LEVELS]
            return "\n".join([*lines, f"- questions answered: {len(rc.questions)}"])
        return (
            "\n".join(f"- {o['text']} ({o['status']})" for o in rc.objectives)
            or "(no objectives yet)"
        )

    def _level(self, concept: str) -> str:
        for level in LEVELS:
            if concept and concept in (self.rc.knowledge or {}).get(level, []):
                return level
        return "new to the topic" if not self.rc.knowledge.get("known") else "some background"

    # -- phases ----------------------------------------------------------------------------

    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        if phase == P.CALIBRATE:
            return await self._calibrate(ctx)
        if phase == P.DIAGNOSE:
            return await self._diagnose(ctx)
        if phase == P.TEACH:
            return await self._teach(ctx)
        return True

    # CALIBRATE: prepare questions for this visit, ask one per step, then assess

    async def _diagnose(self, ctx: RunContext) -> bool:
        rc = self.rc
        if rc.objectives and (rc.gaps or rc.failed):
            await self._diagnose_again(ctx)
            return True
        reply: Diagnosis | None = None
        if self._style(ctx) == "generative":  # a small model's objectives echo its input
            reply = await decide(
                ctx,
                [
                    Message.system(self.phase_prompt(P.DIAGNOSE)),
                    Message.user(f"Topic: {self.topic}"),
                ],
                DECISION,
                Diagnosis,
                "diagnose",
            )
        if (
            reply is not None
            and not reply.calibration_accurate
            and reply.calibration_issue.strip()
            and self._may_backtrack("calibration_was_inaccurate")
            and not rc.objectives
        ):
            issue = " ".join(reply.calibration_issue.split())
            rc.recalibrate = issue
            self._count("calibration_was_inaccurate", issue)
            return True
        if rc.objectives:
            return True  # back after recalibrating with objectives in place: nothing to redo
        known = {c.lower() for c in rc.knowledge.get("known", [])}
        for item in reply.objectives if reply else []:
            concept = topic_name(item.concept)
            text = " ".join(item.objective.split())
            if concept and concept.lower() not in known and len(text.split()) >= 3:
                prerequisites = [p for p in (topic_name(x) for x in item.prerequisites) if p]
                self._add_objective(ctx, concept, text, prerequisites, item.misconception)
        subjects = await subjects_of(ctx, self.params.corpus, self.topic)
        if not rc.objectives:
            # what the learner does not know yet first, then the passages' order
            wanted = [
                c.lower()
                for c in [*rc.knowledge.get("unknown", []), *rc.knowledge.get("partial", [])]
            ]
            ordered = sorted(
                subjects,
                key=lambda s: (
                    wanted.index(s.concept.lower()) if s.concept.lower() in wanted else len(wanted)
                ),
            )
            for subject in [s for s in ordered if s.concept.lower() not in known]:
                if len(rc.objectives) >= self.params.max_objectives:
                    break
                added = self._add_objective(
                    ctx, subject.concept, question_from_title(subject.concept), [], ""
                )
                if added is not None:
                    added["document"] = subject.files[0]  # the document it is drawn from
                    added["files"] = list(subject.files)
        else:
            for objective in rc.objectives:
                match = next(
                    (s for s in subjects if overlaps(objective["concept"], [s.concept])), None
                )
                if match is not None:
                    objective["files"] = list(match.files)
        if not rc.objectives and not subjects:
            self._nothing_to_teach()
        rc.objectives = rc.objectives[: self.params.max_objectives]
        rc.diagnosed = True
        ctx.emit(AgentSpeaking(text=f"{len(rc.objectives)} learning objectives for {self.topic}."))
        return True

    def _nothing_to_teach(self) -> None:
        raise ValidationError(
            f"I found nothing to teach about {self.topic} in these documents; index documents "
            "that speak of it (--docs DIR) or name the topic in their words"
        )

    async def _diagnose_again(self, ctx: RunContext) -> None:
        rc = self.rc
        for gap in rc.gaps:
            before = rc.objective(rc.current)
            added = self._add_objective(ctx, gap, question_from_title(gap), [], "", before=before)
            if before is not None and added is not None:
                before["prerequisites"].append(gap)
                if before["status"] == "gap":
                    before["status"] = "pending"
        rc.gaps = []
        for objective_id in rc.failed:
            failed = rc.objective(objective_id)
            if failed is None:
                continue
            text = f"Review: {failed['question']}"
            if self._style(ctx) == "generative":
                reply = await decide(
                    ctx,
                    [
                        Message.system(self.phase_prompt(P.DIAGNOSE)),
                        Message.user(
                            f"{REMEDIAL_PROMPT}\nObjective: {failed['text']}\n"
                            f"Check question: {failed['check_question']}\n"
                            f"Learner's answer: {failed['answer']}\nFeedback: {failed['feedback']}"
                        ),
                    ],
                    DECISION,
                    Remedial,
                    "diagnose.remedial",
                )
                if reply is not None and len(reply.objective.split()) >= 3:
                    text = " ".join(reply.objective.split())
            added = self._add_objective(
                ctx,
                failed["concept"],
                text,
                [],
                failed.get("feedback", ""),
                before=failed,
                question=failed["question"],
            )
            if added is not None:
                added["remedial_for"] = failed["id"]
                if failed.get("document"):
                    added["document"] = failed["document"]
                    added["files"] = list(failed.get("files") or [failed["document"]])
            failed["status"] = "reviewing"  # the review's check decides it: not asked twice
        rc.failed = []

    def _add_objective(
        self,
        ctx: RunContext,
        concept: str,
        text: str,
        prerequisites: list[str],
        misconception: str,
        *,
        before: dict[str, Any] | None = None,
        question: str = "",
    ) -> dict[str, Any] | None:
        """``question`` (default: ``text``) is what the check question asks about."""
        rc = self.rc
        if not text or any(o["text"].lower() == text.lower() for o in rc.objectives):
            return None
        record: dict[str, Any] = {
            "id": slug(concept, {o["id"] for o in rc.objectives}, "o-"),
            "concept": concept,
            "text": text,
            "prerequisites": prerequisites,
            "misconception": " ".join(str(misconception).split()),
            "question": question or text,
            "status": "pending",
            "attempts": 0,
            "explanation": [],
            "source_ids": [],
            "check_question": "",
            "answer": None,
            "feedback": "",
            "remedial_for": "",
        }
        index = rc.objectives.index(before) if before in rc.objectives else len(rc.objectives)
        rc.objectives.insert(index, record)
        ctx.emit(
            DataEvent(
                name="objective.added",
                payload={k: record[k] for k in ("id", "concept", "text", "prerequisites")},
            )
        )
        return record

    # TEACH: explain (one step), then ask and grade (the next)

    def _count(self, trigger: str, detail: str) -> None:
        self.rc.backtracks[trigger] = self.rc.backtracks.get(trigger, 0) + 1
        self.rc.backward_trigger_detail = detail

    def _may_backtrack(self, trigger: str) -> bool:
        return self.rc.backtracks.get(trigger, 0) < self.params.max_backtracks

    def _numbered(self, source_ids: list[str]) -> list[tuple[int, dict[str, Any]]]:
        order = {s["id"]: n for n, s in enumerate(self.rc.sources, 1)}
        return [(order[i], s) for i in source_ids for s in self.rc.sources if s["id"] == i]

    def _explanation_text(self, objective: dict[str, Any]) -> str:
        order = {s["id"]: n for n, s in enumerate(self.rc.sources, 1)}
        parts = []
        for segment in objective["explanation"]:
            text = segment["text"].rstrip()
            mark = f" [{order[segment['source_id']]}]" if segment["source_id"] in order else ""
            end = text[-1] if text and text[-1] in ".!?" else ""
            parts.append(f"{text[: len(text) - len(end)]}{mark}{end}")
        return " ".join(parts)

    # -- transitions and checkpoints -------------------------------------------------------

    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        rc = self.rc
        match transition.condition:
            case "knowledge_state_confirmed":
                return rc.calibrated
            case "calibration_was_inaccurate":
                return bool(rc.recalibrate)
            case "objectives_ready":
                return bool(rc.to_teach())
            case "nothing_to_teach":
                return rc.diagnosed and not rc.to_teach()
            case "fundamental_prerequisite_gap":
                return bool(rc.gaps)
            case "check_question_failed":
                return bool(rc.failed)
            case "objectives_complete":
                return not rc.to_teach()
        return False

    def checkpoint_payload(self, checkpoint: Checkpoint) -> dict[str, Any]:
        rc = self.rc
        if checkpoint.after == P.CALIBRATE:
            return {"topic": self.topic, "knowledge": dict(rc.knowledge)}
        objective = rc.objective(rc.last_graded) or {}
        return {
            "objective": objective.get("text", ""),
            "status": objective.get("status", ""),
            "feedback": objective.get("feedback", ""),
            "remaining": len(rc.to_teach()),
        }

    def modify_keys(self, phase: enum.Enum) -> dict[str, str]:
        if phase != P.CALIBRATE:
            return {}
        return {
            "known": 'concepts you know well: ["...", ...]',
            "partial": 'concepts you partly know: ["...", ...]',
            "unknown": 'concepts that are new to you: ["...", ...]',
            "misconceptions": 'replace the misconceptions: ["...", ...]',
            "goal": "what you want to be able to do",
        }

    def apply_modifications(self, phase: enum.Enum, modifications: dict[str, Any]) -> None:
        if phase != P.CALIBRATE:
            return
        state = self.rc.knowledge
        for level in LEVELS:
            for name in modifications.get(level) or []:
                name = " ".join(str(name).split())
                for other in LEVELS:
                    state.setdefault(other, [])
                    if name in state[other]:
                        state[other].remove(name)
                if name:
                    state[level].append(name)
        if "misconceptions" in modifications:
            state["misconceptions"] = [str(m) for m in modifications["misconceptions"] or []]
        if str(modifications.get("goal") or "").strip():
            state["goal"] = " ".join(str(modifications["goal"]).split())

    # -- results ---------------------------------------------------------------------------

    def get_mode_data(self) -> dict[str, Any]:
        return {"topic": self.topic}

    def result(self) -> UnderstandReport:
        rc = self.rc
        return UnderstandReport(
            topic=self.topic,
            report=render_record(self.topic, rc),
            knowledge=rc.knowledge,
            objectives=tuple(rc.objectives),
            questions=tuple(rc.questions),
            sources=tuple(rc.sources),
        )

    def summary(self) -> str:
        rc = self.rc
        passed = sum(1 for o in rc.objectives if o["status"] == "passed")
        return f"{passed} of {len(rc.objectives)} learning objectives understood"
