from __future__ import annotations

import math

import pytest

from kforge.rag.bm25 import BM25Index, BM25Params


def _index(params: BM25Params | None = None) -> BM25Index:
    idx = BM25Index(params)
    idx.add("d1", {"cat": 2, "sat": 1})
    idx.add("d2", {"dog": 1, "sat": 1, "mat": 1})
    idx.add("d3", {"cat": 1, "dog": 1, "run": 3, "fast": 2})
    return idx


def test_score_matches_the_formula_by_hand() -> None:
    k1, b = 1.2, 0.75
    idx = _index(BM25Params(k1, b))
    n, avg = 3, (3 + 3 + 7) / 3
    idf_cat = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    expected_d1 = idf_cat * 2 * (k1 + 1) / (2 + k1 * (1 - b + b * 3 / avg))
    expected_d3 = idf_cat * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 7 / avg))
    scores = idx.scores(["cat"])
    assert scores == pytest.approx({"d1": expected_d1, "d3": expected_d3})


def test_search_ranks_best_first_and_breaks_ties_by_id() -> None:
    idx = _index()
    assert [d for d, _ in idx.search(["cat"], 10)] == ["d1", "d3"]
    tied = BM25Index()
    tied.add("b", {"x": 1})
    tied.add("a", {"x": 1})
    assert [d for d, _ in tied.search(["x"], 10)] == ["a", "b"]


def test_rarer_terms_weigh_more() -> None:
    idx = _index()
    assert idx.idf("run") > idx.idf("sat")


def test_repeated_query_term_counts_twice() -> None:
    idx = _index()
    assert idx.scores(["cat", "cat"])["d1"] == pytest.approx(2 * idx.scores(["cat"])["d1"])


def test_unknown_terms_and_empty_queries_find_nothing() -> None:
    idx = _index()
    assert idx.search(["zebra"], 5) == []
    assert idx.search([], 5) == []
    assert idx.search(["cat"], 0) == []


def test_remove_and_replace_update_statistics() -> None:
    idx = _index()
    idx.remove("d1")
    assert "d1" not in idx and len(idx) == 2
    assert idx.document_frequency("cat") == 1
    idx.add("d3", {"cat": 5})
    assert len(idx) == 2
    assert idx.document_frequency("run") == 0
    assert idx.search(["cat"], 5)[0][0] == "d3"
    idx.remove("missing")


def test_length_normalization_prefers_shorter_documents_at_b_1() -> None:
    idx = BM25Index(BM25Params(k1=1.2, b=1.0))
    idx.add("short", {"agent": 1})
    idx.add("long", {"agent": 1, "other": 20})
    assert [d for d, _ in idx.search(["agent"], 2)] == ["short", "long"]


def test_invalid_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="b must be between 0 and 1"):
        BM25Params(b=1.5)
    with pytest.raises(ValueError, match="k1 must be >= 0"):
        BM25Params(k1=-1)
