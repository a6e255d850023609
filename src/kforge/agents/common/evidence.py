"""Evidence for one question (of a research, a tree or an explaining agent): agentic retrieval over the run's corpus (search, grade,
rewrite, fall back), reduced to the passages graded relevant — the only ones an answer cites.

Passages answer in the order of the share of the question's focus they hold. With ``weighed``
(a question in the user's words or one of its parts), that focus is weighed in the corpus (a
rare term counts for more than "agents") and, when the focus grades with no model call, the
search looks further down the ranking (``LEXICAL_HITS``), so the passage that holds the focus
best is found even where the ranker puts it fifth."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Protocol

from pydantic import Field

from kforge import jsoncodec
from kforge.engine.arguments import parse_arguments
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent
from kforge.llm.types import ModelSettings
from kforge.rag.types import Chunk

__all__ = [
    "FOCUS_EVENT",
    "HITS_EVENT",
    "LEXICAL_HITS",
    "Evidence",
    "EvidenceArgs",
    "EvidenceSettings",
    "Passage",
    "gather_evidence",
    "source_record",
]

HITS_EVENT = "rag.hits"
"""The data event that records each corpus search's hits (chunks in full)."""
FOCUS_EVENT = "rag.focus"
"""The data event that records a question's focus in the corpus."""
LEXICAL_HITS = 8
"""Hits graded per search when the focus grades them (it costs no model call)."""
GRADING = ModelSettings(temperature=0.0, max_tokens=120)
REWRITING = ModelSettings(temperature=0.2, max_tokens=60)


class EvidenceSettings(Protocol):
    """What a search for evidence reads of an agent's arguments (``ResearchArgs`` has it all)."""

    @property
    def question(self) -> str:
        """The run's overall question: the context passages are graded in."""
        ...

    @property
    def corpus(self) -> str | None: ...

    @property
    def k(self) -> int: ...

    @property
    def max_rewrites(self) -> int: ...

    @property
    def passages_per_answer(self) -> int: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceArgs:
    """``EvidenceSettings`` read from a mapping of arguments (other names are ignored)."""

    question: str = ""
    corpus: str | None = None
    """The document collection (default: ``kforge.rag.DEFAULT_CORPUS``)."""
    k: Annotated[int, Field(ge=1)] = 3
    """Passages retrieved and graded per search."""
    max_rewrites: Annotated[int, Field(ge=0)] = 1
    """Query rewrites when most passages are irrelevant."""
    passages_per_answer: Annotated[int, Field(ge=1)] = 3
    """Relevant passages kept for one answer."""


@dataclass(frozen=True, slots=True)
class Passage:
    chunk_id: str
    file: str
    location: str
    heading: str
    page: int | None
    start: int
    end: int
    text: str
    confidence: float
    title: str = ""

    def as_chunk(self) -> Chunk:
        return Chunk(
            id=self.chunk_id,
            source=self.file,
            file=self.file,
            title=self.title,
            heading=self.heading,
            page=self.page,
            start=self.start,
            end=self.end,
            text=self.text,
        )


@dataclass(frozen=True, slots=True)
class Evidence:
    passages: tuple[Passage, ...]
    queries: tuple[str, ...]
    fallback: bool
    disclaimer: str | None


def source_record(passage: Passage, taken: set[str]) -> dict[str, Any]:
    number = len(taken) + 1
    while f"s{number}" in taken:
        number += 1
    snippet = " ".join(passage.text.split())
    return {
        "id": f"s{number}",
        "chunk_id": passage.chunk_id,
        "file": passage.file,
        "location": passage.location,
        "heading": passage.heading,
        "page": passage.page,
        "start": passage.start,
        "end": passage.end,
        "snippet": snippet[:240],
        "text": passage.text,
    }


async def gather_evidence(
    ctx: RunContext,
    question: str,
    args: EvidenceSettings | Mapping[str, Any],
    *,
    lexical: bool = False,
    files: Collection[str] = (),
    weighed: bool = False,
    documents: Collection[str] = (),
) -> Evidence:
    """Search the corpus named in ``args.corpus`` for ``question`` with grading and rewrites
    (graded by the question's key terms, with no model call, when ``lexical``); with
    ``files``, only passages of those documents are found; with ``weighed``, the focus is
    weighed in the corpus and a lexical search looks further (see the module docstring).
    ``documents`` (the ones most relevant to the run's question) are also searched on their
    own, so their passages are graded even where the ranker puts others first; of passages
    holding as much of the focus, theirs come first.

    Every model call goes through ``ctx.complete``, so a resumed step replays them.
    """
    from kforge.rag.agentic import RAGConfig, agentic_search
    from kforge.rag.focus import CorpusStatistics, Focus, question_focus
    from kforge.rag.types import SearchHit

    if isinstance(args, Mapping):
        args = parse_arguments(EvidenceArgs, args, agent="research")
    corpus = ctx.corpus(args.corpus)

    def read_focus() -> dict[str, Any]:
        statistics = CorpusStatistics.of(corpus) if len(corpus) else None
        return {"focus": jsoncodec.to_builtins(question_focus(question, statistics))}

    focus: Focus | None = None
    if weighed:
        focus = jsoncodec.convert((await ctx.step(FOCUS_EVENT, read_focus))["focus"], Focus)
    config = RAGConfig(
        k=max(args.k, LEXICAL_HITS) if lexical and weighed else args.k,
        max_rewrites=args.max_rewrites,
        grade_settings=GRADING,
        rewrite_settings=REWRITING,
        lexical=lexical,
    )

    def on_status(event: str, details: dict[str, Any]) -> None:
        ctx.emit(DataEvent(name=f"rag.{event}", payload=_compact(details)))

    def searching(within: Collection[str]) -> Callable[[str, int], Awaitable[list[SearchHit]]]:
        async def search(query: str, k: int) -> list[SearchHit]:
            # Recorded, so a step re-executed after a crash grades and cites exactly what it
            # saw the first time, even if the corpus was re-ingested in between.
            def hits() -> dict[str, Any]:
                found = corpus.search(query, max(k, 100) if within else k)
                if within:
                    found = [h for h in found if h.chunk.file in within][:k]
                return {"query": query[:300], "hits": [hit.to_dict() for hit in found]}

            payload = await ctx.step(HITS_EVENT, hits)
            return [SearchHit.from_dict(hit) for hit in payload.get("hits", [])]

        return search

    result = await agentic_search(
        question,
        searching(files),
        ctx.complete,
        context=args.question,
        config=config,
        on_status=on_status,
        focus=focus,
    )
    graded = {g.hit.chunk.id: g for g in result.relevant_results}
    if documents and not files:
        inside = await agentic_search(
            question,
            searching(documents),
            ctx.complete,
            context=args.question,
            config=replace(config, max_rewrites=0),
            on_status=on_status,
            focus=focus,
        )
        graded |= {
            g.hit.chunk.id: g for g in inside.relevant_results if g.hit.chunk.id not in graded
        }
    keep = args.passages_per_answer
    ranked = sorted(
        graded.values(), key=lambda g: (-g.confidence, g.hit.chunk.file not in documents)
    )[:keep]
    passages = tuple(
        Passage(
            chunk_id=g.hit.chunk.id,
            file=g.hit.chunk.file,
            location=g.hit.chunk.location,
            heading=g.hit.chunk.heading,
            page=g.hit.chunk.page,
            start=g.hit.chunk.start,
            end=g.hit.chunk.end,
            text=g.hit.chunk.text,
            confidence=g.confidence,
            title=g.hit.chunk.title,
        )
        for g in ranked
    )
    return Evidence(
        passages=passages,
        queries=tuple(result.query_history),
        fallback=not passages,
        disclaimer=result.disclaimer if not passages else None,
    )


def _compact(details: dict[str, Any]) -> dict[str, Any]:
    """Frame payloads stay small: long strings are cut, nested hits reduced to their ids."""
    out: dict[str, Any] = {}
    for key, value in details.items():
        if isinstance(value, str):
            out[key] = value[:300]
        elif isinstance(value, int | float | bool) or value is None:
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [
                v if isinstance(v, str | int | float | bool) else str(v)[:120] for v in value
            ][:10]
        else:
            out[key] = str(value)[:300]
    return out
