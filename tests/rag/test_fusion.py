from __future__ import annotations

import pytest

from kforge.rag.fusion import reciprocal_rank_fusion


def test_fusion_sums_reciprocal_ranks() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]], k=60))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)


def test_item_found_by_both_rankings_wins() -> None:
    ranked = [d for d, _ in reciprocal_rank_fusion([["a", "b"], ["c", "b"]])]
    assert ranked == ["b", "a", "c"]


def test_duplicates_count_at_best_rank_and_limit_applies() -> None:
    fused = reciprocal_rank_fusion([["a", "a", "b"]], k=0, limit=1)
    assert fused == [("a", 1.0)]


def test_weights_and_validation() -> None:
    fused = dict(reciprocal_rank_fusion([["a"], ["b"]], k=0, weights=[2.0, 1.0]))
    assert fused == {"a": 2.0, "b": 1.0}
    with pytest.raises(ValueError, match="2 weights for 1 rankings"):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="k must be >= 0"):
        reciprocal_rank_fusion([["a"]], k=-1)
