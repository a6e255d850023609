"""The Understand agent's CALIBRATE phase: a few questions find what the learner knows of the
topic already; their answers are assessed into known, partial and unknown concepts."""

from __future__ import annotations

from kforge.agents.common.naming import clean_question, slug, topic_name
from kforge.agents.common.writing import usable_frontier_question
from kforge.agents.decisions import decide
from kforge.agents.understand.context import UnderstandPhase
from kforge.agents.understand.host import UnderstandHost
from kforge.agents.understand.learner import (
    LEVELS,
    assess_answers,
    merge_assessment,
)
from kforge.agents.understand.prompts import (
    ASSESS_PROMPT,
    DECISION,
    Assessment,
    Calibration,
)
from kforge.agents.understand.topics import subjects_of
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent
from kforge.llm.types import Message

__all__ = ["CalibratingPhase"]

P = UnderstandPhase


class CalibratingPhase(UnderstandHost):
    """The CALIBRATE phase's work, part of ``UnderstandAgent``."""

    async def _calibrate(self, ctx: RunContext) -> bool:
        rc = self.rc
        visit = rc.phase_visits.get(P.CALIBRATE.value, 1)
        if rc.backward_trigger == "user_modification" and self.is_reentry(P.CALIBRATE):
            rc.calibrated = True
            return True  # the learner corrected the state; show it again at the checkpoint
        if rc.prepared_visit != visit:
            rc.prepared_visit = visit
            rc.calibrated = False
            if visit == 1:
                await self._first_questions(ctx)
            else:
                self._follow_up_questions(ctx)
        pending = rc.unanswered()
        if pending:
            question = pending[0]
            answer = await ctx.ask(
                question["text"],
                kind="question",
                payload={"topic": self.topic, "purpose": question["purpose"]},
            )
            question["answer"] = " ".join(str(answer.get("text", "")).split())
            ctx.emit(
                DataEvent(
                    name="calibration.answered",
                    payload={"question": question["text"], "purpose": question["purpose"]},
                )
            )
            if len(pending) > 1:
                return False
        await self._assess(ctx)
        rc.calibrated = True
        return True

    async def _first_questions(self, ctx: RunContext) -> None:
        rc = self.rc
        subjects = await subjects_of(ctx, self.params.corpus, self.topic)
        if not subjects:  # said before the learner is asked anything
            self._nothing_to_teach()
        reply: Calibration | None = None
        if self._style(ctx) == "generative":  # a small model names no usable concept
            reply = await decide(
                ctx,
                [
                    Message.system(self.phase_prompt(P.CALIBRATE)),
                    Message.user(f"Topic: {self.topic}"),
                ],
                DECISION,
                Calibration,
                "calibrate",
            )
        concepts = [n for n in (topic_name(c.name) for c in (reply.concepts if reply else [])) if n]
        if len(concepts) < 2:
            concepts += [s.concept for s in subjects if s.concept not in concepts]
        concepts = concepts[:2]
        self._add_question(ctx, f"What do you already know about {self.topic}?", "background")
        if self.params.background:
            rc.questions[-1]["answer"] = self.params.background
        self._add_question(
            ctx, f"What do you want to be able to do once you understand {self.topic}?", "goal"
        )
        proposed = [
            q
            for q in (clean_question(t) for t in (reply.check_questions if reply else []))
            if q and usable_frontier_question(q, self.initial_prompt(P.CALIBRATE))
        ]
        for concept in concepts:
            mentions = [q for q in proposed if concept.lower() in q.lower()]
            text = (
                mentions[0]
                if mentions
                else (
                    f"In a sentence or two, what do you understand by {concept.lower()}? "
                    "(Say 'not sure' if you don't know.)"
                )
            )
            self._add_question(ctx, text, "concept", concept)

    def _follow_up_questions(self, ctx: RunContext) -> None:
        """Re-entry: ask only about what sent us back."""
        rc = self.rc
        for gap in rc.gaps:
            self._add_question(
                ctx,
                f"Before we go on: what do you know about {gap.lower()}? "
                "(A sentence, or 'not sure'.)",
                "concept",
                gap,
            )
        if rc.recalibrate:
            self._add_question(
                ctx,
                f"I may have misjudged what you know ({rc.recalibrate}). Which parts of "
                f"{self.topic} are you comfortable with, and which are new to you?",
                "follow_up",
            )
            rc.recalibrate = ""
        trigger = rc.backward_trigger or ""
        if not rc.unanswered() and trigger not in ("", "user_modification"):
            # rejected at the checkpoint: the reason is the learner's own correction
            self._add_question(ctx, "What did the knowledge state get wrong?", "follow_up")
            rc.questions[-1]["answer"] = trigger

    def _add_question(self, ctx: RunContext, text: str, purpose: str, concept: str = "") -> None:
        record = {
            "id": slug(text, {q["id"] for q in self.rc.questions}, "k-"),
            "text": text,
            "purpose": purpose,
            "concept": concept,
            "answer": None,
        }
        self.rc.questions.append(record)
        ctx.emit(
            DataEvent(
                name="calibration.question",
                payload={k: record[k] for k in ("id", "text", "purpose")},
            )
        )

    async def _assess(self, ctx: RunContext) -> None:
        rc = self.rc
        concepts = list(
            dict.fromkeys(
                [q["concept"] for q in rc.questions if q.get("concept")]
                + [c for level in LEVELS for c in rc.knowledge.get(level, [])]
            )
        )
        state = assess_answers(concepts, rc.questions, rc.knowledge)
        if self._style(ctx) == "generative":
            answers = "\n".join(f"Q: {q['text']}\nA: {q['answer']}" for q in rc.questions)
            reply = await decide(
                ctx,
                [
                    Message.system(ASSESS_PROMPT),
                    Message.user(
                        f"Topic: {self.topic}\nConcepts: {', '.join(concepts)}\n\n{answers}"
                    ),
                ],
                DECISION,
                Assessment,
                "calibrate.assess",
            )
            if reply is not None:
                state = merge_assessment(state, reply)
        rc.knowledge = state
        ctx.emit(DataEvent(name="knowledge.assessed", payload=dict(state)))

    # DIAGNOSE: objectives on the first visit; on re-entry only what sent us back
