from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kforge.errors import ModelUnavailableError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.agentic import RAGConfig, agentic_search
from kforge.rag.corpus import Corpus
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.rag.types import SearchHit, SourceDocument
from kforge.store.memory import MemoryStore
from tests.rag.helpers import FakeComplete, make_hit

REL = {"relevance": "relevant", "confidence": 0.9, "reasoning": "answers it"}
NOT = {"relevance": "not_relevant", "confidence": 0.8, "reasoning": "off topic"}


class Searches:
    """A search function that records its queries and returns fixed hits per call."""

    def __init__(self, batches: Sequence[Sequence[SearchHit] | Exception]) -> None:
        self.batches = list(batches)
        self.queries: list[str] = []

    def __call__(self, query: str, k: int) -> list[SearchHit]:
        self.queries.append(query)
        batch = self.batches.pop(0)
        if isinstance(batch, Exception):
            raise batch
        return list(batch)[:k]


def _hits(start: int, n: int = 4, text: str = "passage") -> list[SearchHit]:
    return [make_hit(i, f"{text} {i}") for i in range(start, start + n)]


async def test_enough_relevant_results_need_no_rewrite() -> None:
    search = Searches([_hits(0)])
    events: list[tuple[str, dict[str, Any]]] = []
    with ScriptedModel([REL, REL, NOT, NOT]) as model:
        result = await agentic_search(
            "q", search, model.complete, config=RAGConfig(k=4),
            on_status=lambda e, d: events.append((e, d)),
        )  # fmt: skip
    assert [g.hit.chunk.id for g in result.relevant_results] == ["c0", "c1"]
    assert result.query_history == ("q",) and not result.fallback_used
    assert result.disclaimer is None
    assert [e for e, _ in events] == ["search", "graded"]
    assert [c.chunk_id for c in result.citations()] == ["c0", "c1"]


async def test_mostly_irrelevant_results_trigger_a_rewrite() -> None:
    # the passages hold half of the question's focus: the model's verdicts stand
    search = Searches([_hits(0, text="a first passage"), _hits(10, text="the first passage")])
    with ScriptedModel(
        [NOT, NOT, NOT, REL, {"query": "better words"}, REL, REL, NOT, NOT]
    ) as model:
        result = await agentic_search("first try", search, model.complete, config=RAGConfig(k=4))
    assert search.queries == ["first try", "better words"]
    assert result.query_history == ("first try", "better words")
    assert [g.hit.chunk.id for g in result.relevant_results] == ["c3", "c10", "c11"]
    assert [len(a.graded) for a in result.attempts] == [4, 4]


async def test_nothing_relevant_after_two_rewrites_falls_back_with_a_disclaimer() -> None:
    search = Searches([_hits(0, 2), _hits(10, 2), _hits(20, 2)])
    with ScriptedModel(
        [NOT, NOT, {"query": "second"}, NOT, NOT, {"query": "third"}, NOT, NOT]
    ) as model:
        result = await agentic_search("first", search, model.complete, config=RAGConfig(k=2))
    assert search.queries == ["first", "second", "third"]
    assert result.fallback_used and result.relevant_results == ()
    assert result.disclaimer is not None and "Not grounded in your documents" in result.disclaimer
    assert "'first'; 'second'; 'third'" in result.disclaimer
    assert result.citations() == []


async def test_some_relevant_results_are_kept_after_the_last_rewrite() -> None:
    search = Searches([_hits(0, 3), _hits(10, 3), _hits(20, 3)])
    script = [NOT, NOT, REL, {"query": "b"}, NOT, NOT, NOT, {"query": "c"}, NOT, NOT, NOT]
    with ScriptedModel(script) as model:
        result = await agentic_search("a", search, model.complete, config=RAGConfig(k=3))
    assert result.rewrites == 2 and not result.fallback_used
    assert [g.hit.chunk.id for g in result.relevant_results] == ["c2"]


async def test_failing_search_is_retried_once_then_falls_back() -> None:
    boom = RuntimeError("index offline")
    search = Searches([boom, boom])
    result = await agentic_search("q", search, FakeComplete([]))
    assert search.queries == ["q", "q"]
    assert result.fallback_used
    assert result.disclaimer is not None and "index offline" in result.disclaimer


async def test_one_search_failure_is_absorbed_by_the_retry() -> None:
    search = Searches([RuntimeError("blip"), _hits(0, 1)])
    result = await agentic_search("q", search, FakeComplete([REL]), config=RAGConfig(k=1))
    assert [g.hit.chunk.id for g in result.relevant_results] == ["c0"]


async def test_grading_outage_returns_unverified_results() -> None:
    down = ModelUnavailableError("model timed out")
    result = await agentic_search(
        "q", Searches([_hits(0, 2)]), FakeComplete([down] * 4), config=RAGConfig(k=2)
    )
    assert result.relevant_results == () and not result.fallback_used
    assert [h.chunk.id for h in result.unverified_results] == ["c0", "c1"]
    assert result.disclaimer is not None and "could not be checked" in result.disclaimer


async def test_async_search_functions_work() -> None:
    async def search(query: str, k: int) -> list[SearchHit]:
        return _hits(0, k)

    result = await agentic_search("q", search, FakeComplete([REL]), config=RAGConfig(k=1))
    assert len(result.relevant_results) == 1


async def test_over_a_real_corpus() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(
        [
            SourceDocument("a", "Checkpoints let durable runs resume after a crash.", "Durability"),
            SourceDocument("b", "Gardening in spring needs compost.", "Garden"),
        ]
    )
    with ScriptedModel([REL]) as model:
        result = await agentic_search(
            "how do runs resume after a crash", corpus.search, model.complete, config=RAGConfig(k=2)
        )
    [only] = result.relevant_results
    assert only.hit.chunk.file == "a"


async def test_passages_without_the_question_focus_are_not_relevant_whatever_the_model_says() -> (
    None
):
    corpus = Corpus.open(MemoryStore(), "path")
    corpus.add_documents(
        [
            SourceDocument(
                "normalize",
                "Normalizing a path resolves '..' segments, but it is not safe for mitigating "
                "path traversals: check the result against an allowed root.",
                "path.normalize",
            ),
            SourceDocument("join", "path.join() joins path segments with the separator.", "join"),
        ]
    )
    question = "Is libffi thread safe?"
    focus = question_focus(question, CorpusStatistics.of(corpus))
    with ScriptedModel([REL, {"query": "libffi threads"}]) as model:
        result = await agentic_search(
            question,
            corpus.search,
            model.complete,
            config=RAGConfig(k=2, max_rewrites=1),
            focus=focus,
        )
    # "safe" is all the documents hold of it: libffi and thread are never named
    assert result.relevant_results == () and result.fallback_used
    graded = [g for a in result.attempts for g in a.graded]
    assert all("question's focus" in g.reasoning for g in graded)


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="relevance_threshold"):
        RAGConfig(relevance_threshold=2)
    with pytest.raises(ValueError, match="max_rewrites"):
        RAGConfig(max_rewrites=-1)
