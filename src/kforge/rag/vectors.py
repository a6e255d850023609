"""A corpus's dense vectors: one document per source beside its passage index, tagged with the
source's sha256 and the embedder's name, held in memory while the corpus is open."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kforge.rag.dense import DenseIndex, Embedder, encode_vector
from kforge.rag.index import record_from_index
from kforge.rag.records import SourceRecord, index_text, vectors_namespace

if TYPE_CHECKING:
    from kforge.store.passages import PassageStore

__all__ = ["CorpusVectors"]


class CorpusVectors:
    """The vectors of one corpus's chunks. Kept as documents, not in the passage index:
    SQLite's vector extension needs a sqlite3 that loads extensions, and pgvector a server
    package, neither of which kforge may assume."""

    def __init__(self, store: PassageStore, corpus: str) -> None:
        self._store = store
        self._corpus = corpus
        self._namespace = vectors_namespace(corpus)
        self._index = DenseIndex()

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, chunk_id: str) -> bool:
        return chunk_id in self._index

    def load(self, embedder: Embedder) -> None:
        """Read the stored vectors ``embedder`` computed for the sources as they are now."""
        metas = self._store.index_sources(self._corpus)
        for key, doc in self._store.get_docs(self._namespace).items():
            meta = metas.get(key)
            if meta is None or doc.get("sha256") != meta.get("sha256"):
                continue
            if doc.get("model") != embedder.name:
                continue
            for chunk_id, vector in (doc.get("vectors") or {}).items():
                self._index.add_encoded(chunk_id, vector)

    def save(self, records: Sequence[SourceRecord], embedder: Embedder) -> None:
        """Embed the chunks of ``records`` and store their vectors, one document a source."""
        if not records:
            return
        chunks = [c for r in records for c in r.chunks]
        vectors = embedder.embed([index_text(c) for c in chunks])
        by_chunk = dict(zip((c.id for c in chunks), vectors, strict=True))
        docs: dict[str, dict[str, Any]] = {}
        for record in records:
            encoded = {c.id: encode_vector(by_chunk[c.id]) for c in record.chunks}
            docs[record.key] = {"sha256": record.sha256, "model": embedder.name, "vectors": encoded}
            for c in record.chunks:
                self._index.add(c.id, by_chunk[c.id])
        self._store.put_docs(self._namespace, docs)

    def save_missing(self, embedder: Embedder) -> int:
        """Embed every chunk that has no vector yet; returns how many chunks were embedded."""
        records = []
        for key, meta in self._store.index_sources(self._corpus).items():
            record = record_from_index(meta, self._store.source_passages(self._corpus, key))
            if any(c.id not in self._index for c in record.chunks):
                records.append(record)
        self.save(records, embedder)
        return sum(len(r.chunks) for r in records)

    def forget(self, keys: Sequence[str]) -> None:
        """Drop the vectors of sources ``keys`` from memory (before their passages go)."""
        if len(self._index):
            for data in (p for key in keys for p in self._store.source_passages(self._corpus, key)):
                self._index.remove(str(data["id"]))

    def delete(self, keys: Sequence[str]) -> None:
        """Delete the stored vectors of sources ``keys``."""
        self._store.delete_docs(self._namespace, keys)

    def search(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The ``k`` chunks nearest ``vector`` by cosine similarity, best first."""
        return self._index.search(vector, k)

    def similarities(self, vector: Sequence[float], chunk_ids: Sequence[str]) -> dict[str, float]:
        """The cosine similarity of ``vector`` to each of ``chunk_ids`` that has a vector."""
        return self._index.similarities(vector, chunk_ids)
