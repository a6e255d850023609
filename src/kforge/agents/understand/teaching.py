"""The Understand agent's TEACH phase: one objective per step, explained from the documents
(cited), then checked with a question whose answer is graded; a failed check is taught again
within limits."""

from __future__ import annotations

from typing import Any

from kforge.agents.common.cited import cited_text
from kforge.agents.common.naming import clean_question, topic_name
from kforge.agents.common.writing import usable_frontier_question
from kforge.agents.decisions import decide
from kforge.agents.understand.context import UnderstandPhase
from kforge.agents.understand.host import UnderstandHost
from kforge.agents.understand.learner import (
    grade_answer,
    is_unsure,
)
from kforge.agents.understand.prompts import (
    CHECK_PROMPT,
    DECISION,
    GRADE_PROMPT,
    CheckQuestion,
    Grade,
)
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent
from kforge.llm.types import Message

__all__ = ["TeachingPhase"]

P = UnderstandPhase


class TeachingPhase(UnderstandHost):
    """The TEACH phase's work, part of ``UnderstandAgent``."""

    async def _teach(self, ctx: RunContext) -> bool:
        rc = self.rc
        todo = rc.to_teach()
        if not todo:
            return True
        objective = todo[0]
        rc.current = objective["id"]
        if objective["status"] == "pending":
            await self._explain(ctx, objective)
            return False
        answer = await ctx.ask(
            objective["check_question"],
            kind="question",
            payload={
                "topic": self.topic,
                "objective": objective["text"],
                "explanation": self._explanation_text(objective),
                "sources": [
                    f"[{n}] {s['file']} ({s['location']})"
                    for n, s in self._numbered(objective["source_ids"])
                ],
            },
        )
        objective["answer"] = " ".join(str(answer.get("text", "")).split())
        await self._grade(ctx, objective)
        rc.last_graded = objective["id"]
        return True

    async def _explain(self, ctx: RunContext, objective: dict[str, Any]) -> None:
        rc = self.rc
        said = {s["text"] for o in rc.objectives for s in o["explanation"]}
        cited = await cited_text(
            ctx,
            objective["text"],
            self.search,
            rc.sources,
            style=self._style(ctx),
            purpose="teach",
            system=self.phase_prompt(P.TEACH),
            exclude=said,
            files=objective.get("files") or (),
        )
        for record in cited.new_sources:
            rc.sources.append(record)
            ctx.emit(DataEvent(name="source.found", payload=dict(record)))
        objective["attempts"] += 1
        if cited.segments:
            objective["explanation"] = cited.segments
            objective["source_ids"] = cited.source_ids
        elif not objective["explanation"]:
            objective["explanation"] = [
                {
                    "text": f"The documents do not explain {objective['concept'].lower()}; "
                    "look for a source on it before going on.",
                    "source_id": "",
                }
            ]
        question = f"In your own words: {_lower_first(objective['question'])}"
        if not question.endswith("?"):
            question = question.rstrip(".") + "?"
        if self._style(ctx) == "generative" and cited.segments:
            reply = await decide(
                ctx,
                [
                    Message.system(CHECK_PROMPT),
                    Message.user(f"Objective: {objective['text']}\nExplanation: {cited.text}"),
                ],
                DECISION,
                CheckQuestion,
                "teach.check_question",
            )
            proposed = clean_question(reply.question) if reply else ""
            if proposed and usable_frontier_question(proposed, CHECK_PROMPT):
                question = proposed
        objective["check_question"] = question
        objective["status"] = "explained"
        ctx.emit(
            DataEvent(
                name="objective.explained",
                payload={
                    "id": objective["id"],
                    "sources": objective["source_ids"],
                    "path": cited.path,
                    "check_question": question,
                },
            )
        )

    async def _grade(self, ctx: RunContext, objective: dict[str, Any]) -> None:
        rc = self.rc
        explanation = " ".join(s["text"] for s in objective["explanation"])
        read = [str(s.get("text", "")) for s in rc.sources if s["id"] in objective["source_ids"]]
        understood, feedback = grade_answer(
            objective["answer"], explanation, objective["check_question"], read
        )
        missing = ""
        if self._style(ctx) == "generative" and not is_unsure(objective["answer"]):
            reply = await decide(
                ctx,
                [
                    Message.system(GRADE_PROMPT),
                    Message.user(
                        f"Explanation: {explanation}\nCheck question: "
                        f"{objective['check_question']}\nLearner's answer: {objective['answer']}"
                    ),
                ],
                DECISION,
                Grade,
                "teach.grade",
            )
            if reply is not None:
                understood = reply.understood
                feedback = " ".join(reply.feedback.split()) or feedback
                missing = topic_name(reply.missing_prerequisite)
        objective["feedback"] = feedback
        reviewed = rc.objective(objective["remedial_for"]) if objective["remedial_for"] else None
        if reviewed is not None and reviewed["status"] == "reviewing":
            reviewed["status"] = "passed" if understood else "open"
        known = {c.lower() for c in rc.knowledge.get("known", [])}
        if understood:
            objective["status"] = "passed"
        elif (
            missing
            and missing.lower() not in known
            and missing.lower() != objective["concept"].lower()
            and self._may_backtrack("fundamental_prerequisite_gap")
        ):
            objective["status"] = "gap"
            rc.gaps.append(missing)
            self._count(
                "fundamental_prerequisite_gap",
                f"the answer to '{objective['check_question']}' shows '{missing}' is missing",
            )
        elif self._may_backtrack("check_question_failed") and not objective["remedial_for"]:
            objective["status"] = "failed"
            rc.failed.append(objective["id"])
            self._count(
                "check_question_failed", f"the check of '{objective['text']}' was not passed"
            )
        else:
            objective["status"] = "open"  # not understood yet; left for the learner to revisit
        ctx.emit(
            DataEvent(
                name="check.graded",
                payload={
                    "id": objective["id"],
                    "understood": understood,
                    "status": objective["status"],
                    "feedback": feedback,
                },
            )
        )


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
