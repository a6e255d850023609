"""The Research agent, a phase graph: DECOMPOSE → ANSWER → RISE_ABOVE → EXPAND → COMPLETE.

Backward transitions: ANSWER → DECOMPOSE when answering reveals a new category; RISE_ABOVE →
ANSWER when synthesis needs more answers; RISE_ABOVE → DECOMPOSE when synthesis reveals a
missing category. A blocking checkpoint after DECOMPOSE approves the question tree; an optional
one after ANSWER reviews coverage. One step answers one question or synthesises one category.
"""

from __future__ import annotations

import enum
import re
from typing import Any, ClassVar

from kforge import jsoncodec
from kforge.agents.common.answer import model_only_answer
from kforge.agents.common.naming import QUESTION_WORDS, clean_question, topic_name
from kforge.agents.common.writing import (
    frontier_from_headings,
    usable_frontier_question,
    write_grounded,
)
from kforge.agents.decisions import decide as _decide
from kforge.agents.research.answering import AnsweringPhase
from kforge.agents.research.arguments import ResearchArgs
from kforge.agents.research.decomposing import DecomposingPhase
from kforge.agents.research.planning import (
    about_question,
    check_category,
)
from kforge.agents.research.prompts import (
    DECISION,
    ECHO_SOURCES,
    GAPS_PROMPT,
    INITIAL_PROMPTS,
    WRITING,
    Expansion,
    Gaps,
)
from kforge.agents.research.question_tree import ResearchPhase, ResearchPhaseContext
from kforge.agents.research.report import render_report
from kforge.agents.results import AgentResult, ResearchReport
from kforge.engine.agent import ForgeAgent
from kforge.engine.arguments import parse_arguments
from kforge.engine.phases import Checkpoint, PhaseGraph, PhaseTransition
from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError
from kforge.frames import CheckpointKind, DataEvent
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.rag.candidates import find_candidates
from kforge.rag.focus import Focus, question_focus
from kforge.rag.grounded import AnswerStyle
from kforge.rag.question import read_question
from kforge.rag.textcheck import LoopWatch, key_terms
from kforge.rag.types import Chunk

__all__ = ["ResearchAgent"]

P = ResearchPhase


class ResearchAgent(DecomposingPhase, AnsweringPhase, ForgeAgent[ResearchReport]):
    agent_type = "research"
    result_type: ClassVar[type[AgentResult]] = ResearchReport
    context_class = ResearchPhaseContext
    graph = PhaseGraph(
        ResearchPhase,
        [
            PhaseTransition(P.DECOMPOSE, P.ANSWER, "question_tree_ready"),
            PhaseTransition(P.ANSWER, P.DECOMPOSE, "new_category_discovered", is_backward=True),
            PhaseTransition(P.ANSWER, P.RISE_ABOVE, "all_questions_answered"),
            PhaseTransition(
                P.RISE_ABOVE,
                P.DECOMPOSE,
                "synthesis_reveals_missing_category",
                is_backward=True,
                priority=1,
            ),
            PhaseTransition(
                P.RISE_ABOVE, P.ANSWER, "synthesis_requires_more_answers", is_backward=True
            ),
            PhaseTransition(P.RISE_ABOVE, P.EXPAND, "insights_complete"),
            PhaseTransition(P.EXPAND, P.COMPLETE, "frontier_mapped"),
        ],
        initial=P.DECOMPOSE,
        complete=P.COMPLETE,
        checkpoints=[
            Checkpoint(P.DECOMPOSE, CheckpointKind.BLOCKING, "Approve the question tree?"),
            Checkpoint(P.ANSWER, CheckpointKind.OPTIONAL, "Review the sources and coverage?"),
        ],
    )

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.params = parse_arguments(ResearchArgs, self.args, agent=self.agent_type)
        question = self.params.question.strip()
        if not question:
            raise ValidationError("the research agent needs a non-empty 'question'")
        self.question = question
        self.corpus_name = self.params.corpus or None
        self.max_backtracks = self.params.max_backtracks
        if self.params.review_answers is not None:
            self.args["optional_checkpoints"] = self.params.review_answers
            self.optional_checkpoints = self.params.review_answers

    @property
    def rc(self) -> ResearchPhaseContext:
        assert isinstance(self.phase_context, ResearchPhaseContext)
        return self.phase_context

    # -- prompts ---------------------------------------------------------------------------

    def initial_prompt(self, phase: enum.Enum) -> str:
        return INITIAL_PROMPTS.get(phase.value, "")

    def phase_work_summary(self, phase: enum.Enum) -> str:
        rc = self.rc
        if phase == P.DECOMPOSE:
            return (
                "\n".join(
                    f"- {c['name']}: "
                    + "; ".join(q["text"] for q in rc.questions if q["category_id"] == c["id"])
                    for c in rc.categories
                )
                or "(no categories yet)"
            )
        if phase == P.ANSWER:
            return f"{len(rc.answered_questions)} of {len(rc.questions)} questions answered"
        if phase == P.RISE_ABOVE:
            return (
                "\n".join(f"- {k}: {v[:120]}" for k, v in rc.category_insights.items()) or "(none)"
            )
        return "(none)"

    # -- phases ----------------------------------------------------------------------------

    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        if phase == P.DECOMPOSE:
            return await self._decompose(ctx)
        if phase == P.ANSWER:
            return await self._answer_next(ctx)
        if phase == P.RISE_ABOVE:
            return await self._synthesize_next(ctx)
        if phase == P.EXPAND:
            return await self._expand(ctx)
        return True

    async def _synthesize_next(self, ctx: RunContext) -> bool:
        rc = self.rc
        todo = [c for c in rc.categories if c["id"] not in rc.synthesized_categories]
        if not todo:
            return True
        category = todo[0]
        lines = []
        for qid in category["question_ids"]:
            q, a = rc.question(qid), rc.answers.get(qid)
            if q is not None and a is not None:
                lines.append(f"Q: {q['text']}\nA: {a['text'][:500]}")
        material = f"Research question: {self.question}\nCategory: {category['name']}\n\n" + (
            "\n\n".join(lines) or "(no answers)"
        )
        # The insight draws on the full passages the category's answers cite, leaving out
        # what the answers already say: what the sources add up to, not a repeat.
        cited = list(
            dict.fromkeys(
                sid
                for qid in category["question_ids"]
                for sid in (rc.answers.get(qid) or {}).get("source_ids", [])
            )
        )
        records = [r for r in (rc.source(sid) for sid in cited) if r is not None and r.get("text")]
        passages = [
            Chunk(
                id=r["chunk_id"],
                source=r["file"],
                file=r["file"],
                title=category["name"],
                heading=r.get("heading", ""),
                page=r.get("page"),
                start=r["start"],
                end=r["end"],
                text=r["text"],
            )
            for r in records
        ]
        insight_segments: list[dict[str, Any]] = []
        asked = f"{category['name']}: {self.question}"
        gap = "none of its answers cites a passage"
        if passages:
            written = await write_grounded(
                ctx,
                asked,
                passages,
                style=self._style(ctx),
                purpose="rise_above",
                settings=WRITING,
                system=self.initial_prompt(P.RISE_ABOVE),
                exclude=self._said(),
                max_sentences=2,
            )
            insight_segments = [
                {"text": g["text"], "source_id": records[g["source"]]["id"]}
                for g in written.segments
            ]
            quotable = find_candidates(read_question(asked), passages, self._said())
            gap = (
                "every sentence it could quote from the passages its answers cite is already "
                "said above"
                if not quotable
                else "nothing the passages its answers cite say was found to add to the answers"
            )
        insight = " ".join(g["text"] for g in insight_segments)
        rc.category_insights[category["id"]] = insight
        rc.insight_segments[category["id"]] = insight_segments
        if not insight:
            rc.insight_gaps[category["id"]] = gap  # said in the report, and in the frame
        rc.synthesized_categories.append(category["id"])
        payload = {"category_id": category["id"], "insight": insight}
        if not insight:
            payload["empty_because"] = gap
        ctx.emit(DataEvent(name="insight.added", payload=payload))
        if not (
            self._may_backtrack("synthesis_requires_more_answers")
            or self._may_backtrack("synthesis_reveals_missing_category")
        ):
            return len(todo) == 1
        gaps = await _decide(
            ctx,
            [Message.system(GAPS_PROMPT), Message.user(f"{material}\n\nInsight: {insight}")],
            DECISION,
            Gaps,
            "rise_above.gaps",
        )
        follow_up = gaps.follow_up_question if gaps else ""
        if (
            gaps
            and gaps.needs_more_answers
            and follow_up.strip()
            and not self._restates_question(follow_up)
            and self._about_question(follow_up)
            and self._may_backtrack("synthesis_requires_more_answers")
        ):
            added = rc.add_question(category, follow_up)
            if added is not None:
                ctx.emit(DataEvent(name="question.added", payload=dict(added)))
                rc.needs_more_answers = True
                rc.synthesized_categories.remove(category["id"])
                rc.backtracks["synthesis_requires_more_answers"] = (
                    rc.backtracks.get("synthesis_requires_more_answers", 0) + 1
                )
                rc.backward_trigger_detail = f"'{category['name']}' needs: {added['text']}"
                return True
        missing = ""
        if gaps and self._may_backtrack("synthesis_reveals_missing_category"):
            missing = await self._discovered(ctx, gaps.missing_category)
        if missing:
            rc.discovered_categories.append(missing)
            rc.backtracks["synthesis_reveals_missing_category"] = (
                rc.backtracks.get("synthesis_reveals_missing_category", 0) + 1
            )
            rc.backward_trigger_detail = f"synthesis of '{category['name']}' revealed '{missing}'"
            return True
        return len(todo) == 1

    async def _expand(self, ctx: RunContext) -> bool:
        rc = self.rc
        found = "\n".join(
            f"- {rc.category_name(k)}: {v[:200]}" for k, v in rc.category_insights.items()
        )
        expansion = await _decide(
            ctx,
            [
                Message.system(self.phase_prompt(P.EXPAND)),
                Message.user(f"Research question: {self.question}\nFound:\n{found or '(little)'}"),
            ],
            WRITING,
            Expansion,
            "expand",
        )
        seen = {q["text"].lower() for q in rc.questions}
        asked = [set(key_terms(q["text"])) for q in rc.questions]
        instructions = self.phase_prompt(P.EXPAND)
        for item in expansion.questions if expansion else []:
            text = clean_question(item.question)
            first = item.question.split()[0].lower() if item.question.split() else ""
            if not text or first not in QUESTION_WORDS or text.lower() in seen:
                continue  # a statement with "?" added is no question
            terms = set(key_terms(text))
            if not usable_frontier_question(text, instructions) or any(
                a and (a <= terms or terms <= a) for a in asked
            ):
                continue  # what the tree asked already, in other words
            seen.add(text.lower())
            # a reason is the model's own claim, not the documents': shown only from a model
            # that writes its answers, and only when it neither loops nor repeats a word
            why = " ".join(item.why.split()) if self._style(ctx) == "generative" else ""
            if why and (
                not usable_frontier_question(why + "?", instructions)
                or re.search(r"\b(\w+)\W+(?:\1\b\W*){2,}", why, re.IGNORECASE)
            ):
                why = ""
            record = {"question": text, "why": why}
            rc.adjacent_questions.append(record)
            ctx.emit(DataEvent(name="adjacent.added", payload=record))
        if len(rc.adjacent_questions) < 2:
            used = {s["file"] for s in rc.sources}

            def search() -> list[Chunk]:
                return [h.chunk for h in ctx.corpus(self.corpus_name).search(self.question, 12)]

            for record in await frontier_from_headings(
                ctx, search, used, seen, 4 - len(rc.adjacent_questions), self.question
            ):
                rc.adjacent_questions.append(record)
                ctx.emit(DataEvent(name="adjacent.added", payload=record))
        rc.expanded = True
        return True

    async def _discovered(self, ctx: RunContext, value: str) -> str:
        """A category found after the tree was approved, or "" when it is refused: not said
        by the question or the documents, a variant of a category, or already cited."""
        rc = self.rc
        if not topic_name(value):
            return ""
        check = await check_category(
            ctx,
            self.corpus_name,
            value,
            question=self.question,
            existing=[c["name"] for c in rc.categories] + rc.discovered_categories,
            focus=self._foci(),
            instructions=ECHO_SOURCES,
            cited={s["chunk_id"] for s in rc.sources},
        )
        if not check.accepted:
            self._refused(ctx, check)
            return ""
        return check.name

    def _foci(self) -> list[Focus]:
        """The focus of the question and of its parts, as read when the tree was planned."""
        return jsoncodec.convert(self.rc.focus, list[Focus]) or [question_focus(self.question)]

    def _restates_question(self, text: str) -> bool:
        """The model asked the research question again (its parts ask it already)."""
        return clean_question(text).lower() == clean_question(self.question).lower()

    def _about_question(self, text: str) -> bool:
        """A sub-question the model wrote is kept only when it is about the user's question
        (holds a share of its focus or of one of its parts'), not about a word they share."""
        return about_question(text, self._foci())

    def _said(self) -> set[str]:
        """Every sentence the report already holds, so that none is written twice."""
        rc = self.rc
        segments = [g for a in rc.answers.values() for g in a.get("segments", [])]
        segments += [g for gs in rc.insight_segments.values() for g in gs]
        return {str(g.get("text", "")) for g in segments}

    def _style(self, ctx: RunContext) -> AnswerStyle:
        return self.params.answer or answer_style(ctx.model)

    async def _model_only(self, ctx: RunContext, question: str) -> str:
        """A model that writes its own answers may answer from general knowledge (disclaimed)."""

        async def write(messages: list[Message], settings: ModelSettings) -> ModelResponse:
            return await ctx.complete(messages, settings, purpose="answer", watch=LoopWatch())

        written = await model_only_answer(question, write)
        return written.text or "No passage in the documents answers this question."

    def _may_backtrack(self, trigger: str) -> bool:
        return self.rc.backtracks.get(trigger, 0) < self.max_backtracks

    # -- transitions -----------------------------------------------------------------------

    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        rc = self.rc
        match transition.condition:
            case "question_tree_ready":
                return bool(rc.questions)
            case "new_category_discovered" | "synthesis_reveals_missing_category":
                return bool(rc.discovered_categories)
            case "all_questions_answered":
                return not rc.unanswered()
            case "synthesis_requires_more_answers":
                if rc.needs_more_answers:
                    rc.needs_more_answers = False
                    return True
                return False
            case "insights_complete":
                return all(c["id"] in rc.synthesized_categories for c in rc.categories)
            case "frontier_mapped":
                return rc.expanded
        return False

    # -- checkpoints -----------------------------------------------------------------------

    def checkpoint_payload(self, checkpoint: Checkpoint) -> dict[str, Any]:
        rc = self.rc
        if checkpoint.after == P.DECOMPOSE:
            return {
                "question": self.question,
                "categories": [
                    {
                        "name": c["name"],
                        "questions": rc.question_texts(c),
                    }
                    for c in rc.categories
                ],
            }
        return {
            "answered": len(rc.answered_questions),
            "sources": [f"{s['file']} ({s['location']})" for s in rc.sources],
        }

    def modify_keys(self, phase: enum.Enum) -> dict[str, str]:
        if phase != P.DECOMPOSE:
            return {}
        return {
            "categories": 'replace the tree: [{"name": "...", "questions": ["...", ...]}, ...]',
            "add_questions": 'add questions: [{"category": "...", "question": "..."}, ...]',
            "remove_questions": 'remove questions by text or id: ["...", ...]',
        }

    def apply_modifications(self, phase: enum.Enum, modifications: dict[str, Any]) -> None:
        """``{"categories": [{"name", "questions": [...]}]}`` replaces the tree;
        ``{"add_questions": [{"category", "question"}], "remove_questions": [text or id]}`` edits it."""
        if phase == P.DECOMPOSE:
            self.rc.edit_tree(modifications)

    # -- results ---------------------------------------------------------------------------

    def get_mode_data(self) -> dict[str, Any]:
        return {"question": self.question}

    def result(self) -> ResearchReport:
        rc = self.rc
        return ResearchReport(
            question=self.question,
            report=render_report(self.question, rc),
            categories=tuple(rc.categories),
            questions=tuple(rc.questions),
            answers=rc.answers,
            sources=tuple(rc.sources),
            insights=rc.category_insights,
            frontier=tuple(rc.adjacent_questions),
        )

    def summary(self) -> str:
        rc = self.rc
        return (
            f"answered {len(rc.answered_questions)} questions in {len(rc.categories)} "
            f"categories citing {len(rc.sources)} sources"
        )
