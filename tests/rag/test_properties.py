"""The rules of agentic retrieval, checked for many generated cases (hypothesis)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ModelOutputError, ModelUnavailableError
from kforge.rag.agentic import RAGConfig, agentic_search
from kforge.rag.grading import grade_results
from kforge.rag.rewrite import normalize_query, rewrite_query
from kforge.rag.types import SearchHit
from tests.rag.helpers import FakeComplete, make_hit

_grade = st.one_of(
    st.builds(
        lambda rel, conf, why: {"relevance": rel, "confidence": conf, "reasoning": why},
        st.sampled_from(["relevant", "not_relevant"]),
        st.floats(0, 1),
        st.text(max_size=30),
    ),
    st.just(ModelOutputError("garbled")),
    st.just(ModelUnavailableError("timeout")),
)
_query = st.text(min_size=1, max_size=40)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 6), replies=st.lists(_grade, min_size=12, max_size=12), query=_query)
def test_every_result_gets_a_grade(n: int, replies: list[Any], query: str) -> None:
    """For any set of search results, grading assigns each result a relevance grade
    ('relevant' or 'not_relevant')."""
    hits = [make_hit(i) for i in range(n)]
    graded = _run(grade_results(query, hits, FakeComplete(replies)))
    assert [g.hit for g in graded] == hits
    for g in graded:
        assert g.relevance in ("relevant", "not_relevant")
        assert 0.0 <= g.confidence <= 1.0


_rewrite_reply = st.one_of(
    st.builds(lambda q: {"query": q}, st.text(min_size=1, max_size=40)),
    st.just(ModelUnavailableError("down")),
)


@settings(max_examples=100, deadline=None)
@given(original=_query, reply=_rewrite_reply, echo=st.booleans())
def test_rewrites_differ_from_the_original(original: str, reply: Any, echo: bool) -> None:
    """For any search whose results are mostly graded 'not_relevant', the rewritten query
    differs from the original."""
    if echo:
        reply = {"query": f"  {original.upper()}  "}
    rewritten = _run(rewrite_query(original, [], FakeComplete([reply])))
    assert normalize_query(rewritten) != normalize_query(original)


@settings(max_examples=100, deadline=None)
@given(
    relevant_counts=st.lists(st.integers(0, 4), min_size=3, max_size=3),
    k=st.integers(1, 4),
    rewrite=st.text(max_size=20),
)
def test_majority_irrelevant_searches_are_rewritten(
    relevant_counts: list[int], k: int, rewrite: str
) -> None:
    """In the loop: a search whose majority is not relevant is followed by a search with a new query, at most twice."""
    queries: list[str] = []
    replies: list[Any] = []
    for attempt, relevant in enumerate(relevant_counts):
        relevant = min(relevant, k)
        replies += [{"relevance": "relevant", "confidence": 1, "reasoning": ""}] * relevant
        replies += [{"relevance": "not_relevant", "confidence": 1, "reasoning": ""}] * (
            k - relevant
        )
        if relevant / k < 0.5 and attempt < 2:
            replies.append({"query": rewrite or "x"})

    def search(query: str, size: int) -> list[SearchHit]:
        queries.append(query)
        # each passage holds half of the question's focus, so the model's verdicts stand
        return [make_hit(n := len(queries) * 10 + i, f"original passage {n}") for i in range(size)]

    fake = FakeComplete(replies)
    result = _run(agentic_search("original query", search, fake, config=RAGConfig(k=k)))
    assert len(queries) <= 3
    assert queries == list(result.query_history)
    for i, attempt in enumerate(result.attempts[:-1]):
        assert attempt.relevant_share < 0.5
        assert normalize_query(queries[i + 1]) not in {normalize_query(q) for q in queries[: i + 1]}
    last = result.attempts[-1]
    assert last.relevant_share >= 0.5 or len(queries) == 3
