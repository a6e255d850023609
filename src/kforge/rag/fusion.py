"""Reciprocal rank fusion: merge rankings by ``sum(1 / (k + rank))`` (Cormack et al., 2009)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RRF_K", "reciprocal_rank_fusion"]

RRF_K = 60
"""The constant from the original paper; it damps the weight of the very top ranks."""


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists (best first) into one, best first, ties broken by id.

    An id missing from a ranking gets nothing from it; an id repeated within one ranking
    counts at its best rank only.
    """
    if k < 0:
        raise ValueError(f"reciprocal rank fusion k must be >= 0 (got {k})")
    if weights is not None and len(weights) != len(rankings):
        raise ValueError(
            f"reciprocal rank fusion got {len(weights)} weights for {len(rankings)} rankings"
        )
    scores: dict[str, float] = {}
    for i, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[i]
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
    fused = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return fused if limit is None else fused[:limit]
