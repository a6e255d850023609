"""The Research agent's ANSWER phase: one question per step, answered from the documents with
its sources recorded, or from the model alone (said so) when they hold nothing on it; a new
category the answer reveals sends the run back to DECOMPOSE."""

from __future__ import annotations

from typing import Any

from kforge.agents.common.evidence import gather_evidence, source_record
from kforge.agents.common.writing import (
    Written,
    write_grounded,
)
from kforge.agents.decisions import decide as _decide
from kforge.agents.research.host import ResearchHost
from kforge.agents.research.prompts import (
    DECISION,
    DISCOVERY_PROMPT,
    WRITING,
    Discovery,
)
from kforge.agents.research.question_tree import ResearchPhase
from kforge.engine.run_context import RunContext
from kforge.frames import AgentThinking, DataEvent
from kforge.llm.types import Message

__all__ = ["AnsweringPhase"]

P = ResearchPhase


class AnsweringPhase(ResearchHost):
    """The ANSWER phase's work, part of ``ResearchAgent``."""

    async def _answer_next(self, ctx: RunContext) -> bool:
        rc = self.rc
        pending = rc.unanswered()
        if not pending:
            return True
        question = pending[0]
        ctx.emit(AgentThinking(message=f"Answering: {question['text']}"))
        style = self._style(ctx)
        evidence = await gather_evidence(
            ctx,
            question["text"],
            self.params,
            lexical=style == "extractive",
            weighed=True,
            documents=rc.documents,
        )
        passages = [p.as_chunk() for p in evidence.passages]
        if passages:
            written = await write_grounded(
                ctx,
                question["text"],
                passages,
                style=style,
                purpose="answer",
                settings=WRITING,
                system=self.initial_prompt(P.ANSWER),
                exclude=self._said(),
            )
        else:
            written = Written([], "none", "no relevant passages")
        source_ids: list[str] = []
        segments: list[dict[str, Any]] = []
        for segment in written.segments:
            record = source_record(
                evidence.passages[segment["source"]], {s["id"] for s in rc.sources}
            )
            existing = next((s for s in rc.sources if s["chunk_id"] == record["chunk_id"]), None)
            if existing is None:
                rc.sources.append(record)
                ctx.emit(DataEvent(name="source.found", payload=dict(record)))
                existing = record
            if existing["id"] not in source_ids:
                source_ids.append(existing["id"])
            segments.append({"text": segment["text"], "source_id": existing["id"]})
        text = written.text or (
            "No passage in the documents answers this question."
            if style == "extractive" or not evidence.fallback
            else await self._model_only(ctx, question["text"])
        )
        rc.answers[question["id"]] = {
            "text": text,
            "segments": segments,
            "source_ids": source_ids,
            "fallback": not segments,
            "disclaimer": evidence.disclaimer if not segments else None,
            "queries": list(evidence.queries),
            "path": written.path,
        }
        rc.answered_questions.append(question["id"])
        ctx.emit(
            DataEvent(
                name="answer.added",
                payload={
                    "question_id": question["id"],
                    "sources": source_ids,
                    "fallback": not segments,
                    "path": written.path,
                },
            )
        )
        if self._may_backtrack("new_category_discovered"):
            categories = ", ".join(c["name"] for c in rc.categories)
            discovery = await _decide(
                ctx,
                [
                    Message.system(DISCOVERY_PROMPT),
                    Message.user(
                        f"Categories: {categories}\nQuestion: {question['text']}\n"
                        f"Answer: {text[:600]}"
                    ),
                ],
                DECISION,
                Discovery,
                "answer.discover",
            )
            new_category = await self._discovered(ctx, discovery.new_category if discovery else "")
            if new_category:
                rc.discovered_categories.append(new_category)
                rc.backtracks["new_category_discovered"] = (
                    rc.backtracks.get("new_category_discovered", 0) + 1
                )
                rc.backward_trigger_detail = (
                    f"answering '{question['text']}' revealed '{new_category}'"
                )
                ctx.emit(DataEvent(name="category.discovered", payload={"name": new_category}))
                return True
        return not rc.unanswered()
