"""The router agent's grading node: the passages found are graded against the question,
the relevant ones kept (with the documents they name by title), the others remembered as the
closest for "See also". When no passage of a search is relevant (graded without a model call),
its passages are graded again with the next search's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kforge.agents.conversation import Turn, format_history
from kforge.agents.router.state import RouterState
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent, Observation
from kforge.memory.compaction import journaled_complete
from kforge.rag.focus import LOUD_SILENCE, CorpusStatistics, Focus
from kforge.rag.grading import grade_results
from kforge.rag.grounded import AnswerStyle
from kforge.rag.question import read_question
from kforge.rag.types import Chunk, SearchHit

__all__ = ["GradingNode"]

_LINKED = 2
"""Documents named by title that one grading adds at most."""


class GradingNode:
    """The grading node's work, part of ``RouterAgent``."""

    if TYPE_CHECKING:  # what the agent provides
        state: RouterState
        question: str
        corpus_name: str | None
        turns: list[Turn]

        def _status(self, ctx: RunContext, step: str, tool: str | None = None) -> None: ...

        def _style(self, ctx: RunContext) -> AnswerStyle: ...

        def _focus(self) -> Focus: ...

        def _first_query(self) -> str: ...

        def _after_tool_round(self) -> str: ...

    async def _grade(self, ctx: RunContext) -> None:
        self._status(ctx, "grading")
        query = self.state.queries[-1] if self.state.queries else self.question
        hits = [SearchHit.from_dict(h) for h in self.state.hits]
        background = format_history(self.turns, max_turns=2)
        lexical = self._style(ctx) == "extractive"
        if lexical and not self.state.passages:
            hits = [*self._unheld(hits), *hits]
        # graded against what the user asked, not against the query that found them; the
        # search for one compared item, against the part of the question that names it
        focus = self._focus()
        if query in read_question(self._first_query()).options and focus.within(query).terms:
            focus = focus.within(query)
        graded = await grade_results(
            self._first_query(),
            hits,
            journaled_complete(ctx, "grading"),
            context=background,
            lexical=lexical,
            focus=focus,
        )
        relevant = [g for g in graded if g.relevant]  # in the search's order: the ranker ranks
        found = [(g.hit.chunk, g.reasoning) for g in relevant]
        self._keep_closest([g.hit.chunk for g in graded if not g.relevant])
        self.state.unheld = [] if relevant or not lexical else [g.hit.to_dict() for g in graded]
        if relevant and all(g.hit.retriever != "web" for g in relevant):
            found += await self._linked(ctx, [g.hit.chunk for g in relevant])
        for chunk, reasoning in found:
            record = {**chunk.to_dict(), "location": chunk.location}
            self.state.passages.append(record)
            ctx.emit(
                DataEvent(
                    name="source.found",
                    payload={
                        "file": record["file"],
                        "location": record["location"],
                        "chunk_id": record["id"],
                        "reasoning": reasoning,
                    },
                )
            )
        ctx.emit(
            Observation(
                content=f"{len(relevant)} of {len(graded)} passages are relevant to {query!r}",
                goal_achieved=bool(relevant),
                iteration=self.state.iteration,
            )
        )
        self.state.hits = []
        self.state.node = self._after_tool_round()

    def _unheld(self, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits of the earlier searches that ``hits`` lack, best first. Those searches
        found no relevant passage: the first asked in all the question's words, and its
        passages did not hold the focus between them; the next asks in fewer words, further
        down the ranking. Its passages may hold the focus with the question's other words (a
        user's "before" and "go"), while an earlier one says what is asked in the manual's
        words ("keeps an entry for 20 backup runs at most"): graded together, the earlier ones
        lead, as their search ranked them for the whole question."""
        new = {h.chunk.id for h in hits}
        earlier = [SearchHit.from_dict(h) for h in self.state.unheld]
        return [h for h in earlier if h.chunk.id not in new]

    def _keep_closest(self, chunks: list[Chunk]) -> None:
        known = [Chunk.from_dict(c) for c in self.state.closest]
        closest = self._focus().closest([*known, *chunks])
        self.state.closest = [c.to_dict() for c in closest]

    async def _linked(self, ctx: RunContext, relevant: list[Chunk]) -> list[tuple[Chunk, str]]:
        """Documents the question or the relevant passages name by title: the second hop of a
        question such as "what did the actress who played X do later?". Recorded, like every
        corpus read."""
        known = {p["source"] for p in self.state.passages} | {c.source for c in relevant}
        text = " ".join([self.question, *(c.text for c in relevant)])

        def linked() -> dict[str, Any]:
            corpus = ctx.corpus(self.corpus_name)
            skip = front_page(CorpusStatistics.of(corpus))  # a manual's front page
            chunks = corpus.linked_chunks(text, exclude=known, limit=_LINKED, skip=skip)
            return {"chunks": [c.to_dict() for c in chunks]}

        payload = await ctx.step("rag.linked", linked)
        chunks = [Chunk.from_dict(c) for c in payload.get("chunks", [])]
        return [(c, f"named by a relevant passage: {c.title}") for c in chunks]


def front_page(statistics: CorpusStatistics) -> Callable[[str], bool]:
    """Whether a title names what the whole corpus is about (``names_the_corpus``), in a corpus
    large enough (``LOUD_SILENCE``) for its word counts to say so. Every page of Snakemake's
    manual names Snakemake: its front page is no second hop. Among a question's own ten
    paragraphs no title is."""
    loud = statistics.silence >= LOUD_SILENCE
    return lambda title: loud and statistics.names_the_corpus(title)
