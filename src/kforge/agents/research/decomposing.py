"""The Research agent's DECOMPOSE phase: the question broken into categories (from its own
parts where it names them, else from the documents and the model), each with questions to
answer; what the question does not say is refused with the reason recorded."""

from __future__ import annotations

from typing import Any

from kforge import jsoncodec
from kforge.agents.decisions import decide as _decide
from kforge.agents.research.decompose import Part
from kforge.agents.research.host import ResearchHost
from kforge.agents.research.planning import (
    CategoryCheck,
    check_category,
    foci,
    main_document,
    passage_parts,
    plan_parts,
)
from kforge.agents.research.prompts import (
    DECISION,
    ECHO_SOURCES,
    Breakdown,
    CategoryQuestions,
    new_category_request,
)
from kforge.agents.research.question_tree import ResearchPhase
from kforge.engine.run_context import RunContext
from kforge.frames import AgentSpeaking, DataEvent
from kforge.llm.types import Message

__all__ = ["DecomposingPhase"]

P = ResearchPhase


class DecomposingPhase(ResearchHost):
    """The DECOMPOSE phase's work, part of ``ResearchAgent``."""

    async def _decompose(self, ctx: RunContext) -> bool:
        rc = self.rc
        trigger = rc.backward_trigger if self.is_reentry(P.DECOMPOSE) else None
        if trigger == "user_modification":
            return True  # the person edited the tree; show it again at the checkpoint
        if rc.discovered_categories:
            for name in list(rc.discovered_categories):
                category = rc.add_category(name)
                ctx.emit(DataEvent(name="category.added", payload=dict(category)))
                proposed = await _decide(
                    ctx,
                    [
                        Message.system(self.phase_prompt(P.DECOMPOSE)),
                        Message.user(new_category_request(self.question, name)),
                    ],
                    DECISION,
                    CategoryQuestions,
                    "decompose.new_category",
                )
                for text in proposed.questions if proposed else []:
                    if self._about_question(f"{name} {text}"):
                        self._add_question(ctx, category, text)
                if not category["question_ids"]:
                    self._add_question(ctx, category, f"What about {name} for {self.question}")
            rc.discovered_categories = []
            return True
        if trigger is not None and rc.categories:
            # rejected at the checkpoint: start the tree again, guided by the reason
            rc.categories, rc.questions, rc.answered_questions, rc.answers = [], [], [], {}
            rc.synthesized_categories, rc.category_insights = [], {}
            rc.insight_segments, rc.insight_gaps = {}, {}
        parts, passages = await plan_parts(ctx, self.corpus_name, self.question, self.params.k)
        rc.focus = jsoncodec.to_builtins(foci(self.question, passages))
        rc.documents = [d for d in [main_document(self.question, passages)] if d]
        for part in parts:
            self._add_part(ctx, part)
        user = f"Research question: {self.question}"
        if trigger:
            user += f"\nThe previous breakdown was rejected because: {trigger}"
        breakdown = await _decide(
            ctx,
            [Message.system(self.phase_prompt(P.DECOMPOSE)), Message.user(user)],
            DECISION,
            Breakdown,
            "decompose",
        )
        for item in breakdown.categories if breakdown else []:
            check = await check_category(
                ctx,
                self.corpus_name,
                item.name,
                question=self.question,
                existing=[c["name"] for c in rc.categories],
                focus=self._foci(),
                questions=item.questions,
                instructions=[self.phase_prompt(P.DECOMPOSE), *ECHO_SOURCES],
            )
            if not check.accepted:
                self._refused(ctx, check)
                continue
            category = rc.add_category(check.name)
            ctx.emit(DataEvent(name="category.added", payload=dict(category)))
            for text in item.questions:
                if self._restates_question(text):
                    continue  # the parts ask the question itself
                if self._about_question(text):
                    self._add_question(ctx, category, text)
            if not category["question_ids"]:
                rc.categories.remove(category)
        for part in passage_parts(self.question, passages, [c["name"] for c in rc.categories]):
            self._add_part(ctx, part)
        if not rc.questions:
            category = rc.add_category(self.question.strip(" ?") or self.question)
            self._add_question(ctx, category, self.question)
        ctx.emit(
            AgentSpeaking(
                text=f"Planned {len(rc.questions)} questions in {len(rc.categories)} categories."
            )
        )
        return True

    def _add_part(self, ctx: RunContext, part: Part) -> None:
        category = self.rc.add_category(part.category)
        if not category["question_ids"]:
            ctx.emit(DataEvent(name="category.added", payload=dict(category)))
        self._add_question(ctx, category, part.question)
        if not category["question_ids"]:
            self.rc.categories.remove(category)

    def _refused(self, ctx: RunContext, check: CategoryCheck) -> None:
        if check.name:
            ctx.emit(
                DataEvent(
                    name="category.refused", payload={"name": check.name, "why": check.reason}
                )
            )

    def _add_question(self, ctx: RunContext, category: dict[str, Any], text: Any) -> None:
        question = self.rc.add_question(category, str(text))
        if question is not None:
            ctx.emit(DataEvent(name="question.added", payload=dict(question)))
