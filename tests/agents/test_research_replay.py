"""A research step re-executed after a crash sees the search hits it recorded, not today's."""

from __future__ import annotations

from typing import Any

from kforge.agents.common.evidence import HITS_EVENT, gather_evidence
from kforge.agents.research.planning import PASSAGES_EVENT
from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.frames import DataEvent, Frame
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.rag.types import Chunk, SearchHit


def _hit(chunk_id: str, text: str, rank: int) -> SearchHit:
    chunk = Chunk(
        id=chunk_id,
        source=f"/docs/{chunk_id}.md",
        file=f"{chunk_id}.md",
        title=chunk_id,
        heading="",
        page=None,
        start=0,
        end=len(text),
        text=text,
    )
    return SearchHit(chunk, 1.0 / rank, rank)


class Corpus:
    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.searches = 0

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        self.searches += 1
        return self.hits[:k]

    def __len__(self) -> int:
        return 0  # no index to weigh terms by: every focus term weighs the same


class Corpora:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus

    def open(self, name: str) -> Corpus:
        return self.corpus


def grade(messages: list[Message], info: CallInfo) -> Any:
    return {"relevance": "relevant", "confidence": 0.8, "reasoning": "on topic"}


def _context(corpus: Corpus, log: list[Frame], journal: list[Frame] | None = None) -> RunContext:
    ctx = RunContext(
        run_id="r",
        agent_type="research",
        model=FunctionModel(grade),
        limits=RunLimits(),
        next_seq=1,
        flush=log.extend,
        services=Services(corpora=Corpora(corpus)),
    )
    ctx.begin_step(1, journal or [])
    return ctx


async def test_replayed_step_uses_the_recorded_hits_even_after_a_reingest() -> None:
    before = Corpus([_hit("a", "Checkpoints let a person approve a plan.", 1)])
    recorded: list[Frame] = []
    first = _context(before, recorded)
    evidence = await gather_evidence(first, "How do checkpoints work?", {"k": 3})
    recorded += first.take_pending()
    assert [p.chunk_id for p in evidence.passages] == ["a"]
    hits_frames = [f for f in recorded if isinstance(f, DataEvent) and f.name == HITS_EVENT]
    assert hits_frames and hits_frames[0].payload["hits"][0]["chunk"]["text"].startswith("Check")

    after = Corpus([_hit("b", "Something else entirely, ingested later.", 1)])
    written: list[Frame] = []
    again = _context(after, written, recorded)
    replayed = await gather_evidence(again, "How do checkpoints work?", {"k": 3})
    assert after.searches == 0  # the corpus was not asked again
    assert replayed == evidence
    assert written + again.take_pending() == []  # every frame came from the log


async def test_a_step_without_recorded_hits_searches_the_corpus() -> None:
    corpus = Corpus([_hit("a", "Checkpoints let a person approve a plan.", 1)])
    ctx = _context(corpus, [])
    await gather_evidence(ctx, "checkpoints", {"k": 3})
    assert corpus.searches == 1


def test_recorded_hits_read_as_a_count_and_files_in_timelines() -> None:
    from kforge.explain import describe_frame

    hit = _hit("a", "Checkpoints let a person approve a plan.", 1)
    frame = DataEvent(name=HITS_EVENT, payload={"query": "checkpoints", "hits": [hit.to_dict()]})
    assert describe_frame(frame) == ("data", "rag.hits: 1 hit for 'checkpoints': a.md")
    other = _hit("b", "More.", 2).to_dict()
    three = DataEvent(name=HITS_EVENT, payload={"hits": [hit.to_dict(), other, hit.to_dict()]})
    assert describe_frame(three) == ("data", "rag.hits: 3 hits: a.md (2), b.md")


async def test_research_without_a_corpus_name_searches_the_default_corpus() -> None:
    from kforge.rag.corpus import DEFAULT_CORPUS

    opened: list[str] = []

    class Named:
        def open(self, name: str) -> Corpus:  # type: ignore[return]
            opened.append(name)
            return Corpus([])

    ctx = RunContext(
        run_id="r",
        agent_type="research",
        model=FunctionModel(grade),
        limits=RunLimits(),
        next_seq=1,
        flush=[].extend,
        services=Services(corpora=Named()),  # type: ignore[arg-type]
    )
    ctx.begin_step(1)
    await gather_evidence(ctx, "checkpoints", {"k": 3})
    assert opened == [DEFAULT_CORPUS]


def _thin_breakdown(messages: list[Message], info: CallInfo) -> Any:
    return {"categories": [{"name": "Agents", "questions": ["How do agents work?"]}]}


async def _decompose(corpus: Corpus, journal: list[Frame]) -> tuple[Any, list[Frame]]:
    from kforge.agents.research import ResearchAgent
    from kforge.engine.run_context import Suspended

    agent = ResearchAgent({"question": "How do agents keep memory?", "corpus": "docs"})
    committed: list[Frame] = []
    ctx = RunContext(
        run_id="r",
        agent_type="research",
        model=FunctionModel(_thin_breakdown),
        limits=RunLimits(),
        next_seq=1,
        flush=committed.extend,
        services=Services(corpora=Corpora(corpus)),
    )
    ctx.begin_step(1, journal)
    try:
        await agent.step(ctx)
    except Suspended:
        pass
    return [c["name"] for c in agent.rc.categories], committed + ctx.take_pending()


async def test_a_re_executed_breakdown_takes_its_sub_questions_from_the_recorded_passages() -> None:
    before = Corpus(
        [
            _hit("Memory Systems", "Agents keep memory.", 1),
            _hit("Approval Workflows", "People approve plans.", 2),
        ]
    )
    categories, frames = await _decompose(before, [])
    assert categories == ["Agents keep memory", "Agents", "Memory Systems"]
    (passages,) = [f for f in frames if isinstance(f, DataEvent) and f.name == PASSAGES_EVENT]
    assert [h["title"] for h in passages.payload["whole"]] == [
        "Memory Systems",
        "Approval Workflows",
    ]

    after = Corpus([_hit("Something Else Entirely", "Ingested later.", 1)])
    replayed, _ = await _decompose(after, frames)
    assert replayed == categories and after.searches == 0
