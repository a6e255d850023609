"""A named, persistent collection of chunks with lexical and optional dense search."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kforge.errors import ConfigurationError, ValidationError
from kforge.rag.analyze import ANALYZER_VERSION, analyze
from kforge.rag.bm25 import BM25Index, BM25Params
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.dense import DenseIndex, Embedder, decode_vector, encode_vector
from kforge.rag.extract import EXTRACTION_VERSION, ExtractedDocument
from kforge.rag.fusion import reciprocal_rank_fusion
from kforge.rag.records import (
    CORPORA_NAMESPACE,
    SourceRecord,
    build_source,
    index_text,
    sources_namespace,
    vectors_namespace,
)
from kforge.rag.types import Chunk, SearchHit, SourceDocument

if TYPE_CHECKING:
    import os

    from kforge.rag.ingest import IngestProgress, IngestReport
    from kforge.store.base import Store

__all__ = ["DEFAULT_CORPUS", "Corpus", "SearchMode", "SourceInfo", "drop_corpus", "list_corpora"]

DEFAULT_CORPUS = "default"
SearchMode = Literal["auto", "lexical", "dense", "hybrid"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_log = logging.getLogger(__name__)
_warned_stale: set[tuple[int, str]] = set()
"""(store, corpus) pairs already told about stale extraction: the warning is given once."""


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What the corpus holds about one source, without its chunks."""

    key: str
    root: str
    file: str
    format: str
    title: str
    sha256: str
    size: int
    chunks: int
    ingested_at: str


def _check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ConfigurationError(
            f"corpus name '{name}' is not allowed: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def list_corpora(store: Store) -> list[dict[str, Any]]:
    """The corpora kept in ``store``: name, roots, counts and timestamps."""
    return sorted(store.get_docs(CORPORA_NAMESPACE).values(), key=lambda d: str(d.get("name")))


def drop_corpus(store: Store, name: str) -> None:
    """Delete a corpus and everything indexed in it."""
    _check_name(name)
    store.delete_docs(sources_namespace(name))
    store.delete_docs(vectors_namespace(name))
    store.delete_docs(CORPORA_NAMESPACE, [name])


class Corpus:
    """Chunks of many sources, searchable by BM25 and, with an embedder, by vectors.

    Open one with ``Corpus.open(store, name)``; everything it indexes is written through the
    store's document API at once, so a reopened corpus finds it again.
    """

    def __init__(
        self,
        store: Store,
        name: str,
        *,
        embedder: Embedder | None = None,
        bm25: BM25Params | None = None,
    ) -> None:
        self.store = store
        self.name = _check_name(name)
        self.embedder = embedder
        self._sources: dict[str, SourceRecord] = {}
        self._chunks: dict[str, Chunk] = {}
        self._bm25 = BM25Index(bm25)
        self._dense = DenseIndex()
        self._meta: dict[str, Any] = {}
        self._stale_checked = False

    @classmethod
    def open(
        cls,
        store: Store,
        name: str = DEFAULT_CORPUS,
        *,
        embedder: Embedder | None = None,
        bm25: BM25Params | None = None,
    ) -> Corpus:
        """Load the corpus ``name`` from ``store`` (empty if it does not exist yet).

        When some of its files were extracted by an older kforge, its first search logs a
        warning (once per corpus and process) naming the ``kforge ingest`` command that
        upgrades them; an ingest before that search upgrades them silently.
        """
        corpus = cls(store, name, embedder=embedder, bm25=bm25)
        corpus._load()
        return corpus

    # -- loading and writing --------------------------------------------------------------

    def _load(self) -> None:
        docs = self.store.get_docs(sources_namespace(self.name))
        stale: list[SourceRecord] = []
        for doc in docs.values():
            record = SourceRecord.from_doc(doc)
            if doc.get("analyzer") != ANALYZER_VERSION:
                stale.append(record)
            self._index_record(record)
        if stale:
            self.store.put_docs(sources_namespace(self.name), {r.key: r.to_doc() for r in stale})
        self._meta = self.store.get_docs(CORPORA_NAMESPACE, [self.name]).get(self.name, {})
        if self.embedder is not None:
            self._load_vectors()

    def stale_extraction(self) -> list[SourceInfo]:
        """Ingested files whose text an older extraction produced (navigation, markup and
        duplicates may be indexed); ``kforge ingest`` on their folder extracts them again."""
        stale = {
            r.key for r in self._sources.values() if r.root and r.extraction != EXTRACTION_VERSION
        }
        return [s for s in self.sources() if s.key in stale]

    def stale_warning(self) -> str:
        """What to tell a person about sources extracted by an older kforge ("" if none)."""
        stale = self.stale_extraction()
        if not stale:
            return ""
        folders = sorted({s.root for s in stale})
        commands = "; ".join(f"kforge ingest {folder} --corpus {self.name}" for folder in folders)
        return (
            f"corpus '{self.name}': {len(stale)} of its documents were extracted by an older "
            "version of kforge, so page navigation or markup may show in answers; to upgrade, "
            f"run: {commands}"
        )

    def _warn_stale_extraction(self) -> None:
        stale = self.stale_extraction()
        marker = (id(self.store), self.name)
        if not stale or marker in _warned_stale:
            return
        _warned_stale.add(marker)
        _log.warning("%s", self.stale_warning())

    def _load_vectors(self) -> None:
        assert self.embedder is not None
        for key, doc in self.store.get_docs(vectors_namespace(self.name)).items():
            record = self._sources.get(key)
            if record is None or doc.get("sha256") != record.sha256:
                continue
            if doc.get("model") != self.embedder.name:
                continue
            vectors = doc.get("vectors") or {}
            for chunk in record.chunks:
                if chunk.id in vectors:
                    self._dense.add(chunk.id, decode_vector(vectors[chunk.id]))

    def _index_record(self, record: SourceRecord) -> None:
        self._unindex(record.key)
        self._sources[record.key] = record
        for chunk, tf in zip(record.chunks, record.terms, strict=True):
            self._chunks[chunk.id] = chunk
            self._bm25.add(chunk.id, tf)

    def _unindex(self, key: str) -> None:
        old = self._sources.pop(key, None)
        if old is None:
            return
        for chunk in old.chunks:
            self._chunks.pop(chunk.id, None)
            self._bm25.remove(chunk.id)
            self._dense.remove(chunk.id)

    def _embed_records(self, records: Sequence[SourceRecord]) -> dict[str, dict[str, Any]]:
        """Embed the chunks of ``records``; returns the vector documents to store."""
        assert self.embedder is not None
        chunks = [c for r in records for c in r.chunks]
        vectors = self.embedder.embed([index_text(c) for c in chunks])
        by_chunk = dict(zip((c.id for c in chunks), vectors, strict=True))
        docs: dict[str, dict[str, Any]] = {}
        for record in records:
            encoded = {c.id: encode_vector(by_chunk[c.id]) for c in record.chunks}
            docs[record.key] = {
                "sha256": record.sha256,
                "model": self.embedder.name,
                "vectors": encoded,
            }
            for c in record.chunks:
                self._dense.add(c.id, by_chunk[c.id])
        return docs

    def save_sources(self, records: Sequence[SourceRecord]) -> None:
        """Index ``records`` and write them (and their vectors, with an embedder) to the store."""
        if not records:
            return
        self.store.put_docs(sources_namespace(self.name), {r.key: r.to_doc() for r in records})
        for record in records:
            self._index_record(record)
        if self.embedder is not None:
            self.store.put_docs(vectors_namespace(self.name), self._embed_records(records))

    def remove_sources(self, keys: Iterable[str]) -> None:
        """Forget sources by key (unknown keys are ignored)."""
        keys = [k for k in keys if k in self._sources]
        if not keys:
            return
        self.store.delete_docs(sources_namespace(self.name), keys)
        self.store.delete_docs(vectors_namespace(self.name), keys)
        for key in keys:
            self._unindex(key)

    def touch(self, *, root: str | None = None) -> None:
        """Record counts, roots and the time of the last change in ``rag/corpora``."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        roots = set(self._meta.get("roots", ()))
        if root:
            roots.add(root)
        roots &= {r.root for r in self._sources.values()} | ({root} if root else set())
        self._meta = {
            "name": self.name,
            "created_at": self._meta.get("created_at", now),
            "updated_at": now,
            "roots": sorted(roots),
            "sources": len(self._sources),
            "chunks": len(self._chunks),
        }
        self.store.put_docs(CORPORA_NAMESPACE, {self.name: self._meta})

    def embed_missing(self) -> int:
        """Embed every chunk that has no vector yet (e.g. after adding an embedder)."""
        if self.embedder is None:
            raise ConfigurationError(
                f"corpus '{self.name}' was opened without an embedder; open it with "
                "embedder=MiniLMEmbedder() to compute dense vectors"
            )
        records = [
            r for r in self._sources.values() if any(c.id not in self._dense for c in r.chunks)
        ]
        if records:
            self.store.put_docs(vectors_namespace(self.name), self._embed_records(records))
        return sum(len(r.chunks) for r in records)

    # -- adding ---------------------------------------------------------------------------

    def ingest(
        self,
        folder: str | os.PathLike[str],
        *,
        chunking: ChunkingOptions | None = None,
        progress: Callable[[IngestProgress], None] | None = None,
    ) -> IngestReport:
        """Bring the corpus in line with ``folder``: see ``kforge.rag.ingest.ingest_folder``."""
        from kforge.rag.ingest import ingest_folder

        return ingest_folder(self, folder, chunking=chunking, progress=progress)

    def add_documents(
        self,
        documents: Iterable[SourceDocument],
        *,
        chunking: ChunkingOptions | None = None,
        batch_size: int = 256,
    ) -> int:
        """Index documents given as text (key ``doc:ID``); returns how many were new or changed."""
        options = chunking or ChunkingOptions()
        changed = 0
        batch: list[SourceRecord] = []
        for doc in documents:
            if not doc.id:
                raise ValidationError("a SourceDocument needs a non-empty id")
            key = f"doc:{doc.id}"
            sha = hashlib.sha256(f"{doc.title}\0{doc.text}".encode()).hexdigest()
            old = self._sources.get(key)
            if old is not None and old.sha256 == sha and old.chunking == options.key:
                continue
            extracted = ExtractedDocument(doc.text, doc.title or doc.id, "text")
            batch.append(
                build_source(
                    key=key,
                    root="",
                    file=doc.id,
                    sha256=sha,
                    size=len(doc.text),
                    document=extracted,
                    options=options,
                )
            )
            if len(batch) >= batch_size:
                self.save_sources(batch)
                changed += len(batch)
                batch = []
        self.save_sources(batch)
        changed += len(batch)
        if changed:
            self.touch()
        return changed

    # -- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def has_dense(self) -> bool:
        """True when an embedder is set and at least one chunk has a vector."""
        return self.embedder is not None and len(self._dense) > 0

    def sources(self) -> list[SourceInfo]:
        return sorted(
            (
                SourceInfo(
                    r.key,
                    r.root,
                    r.file,
                    r.format,
                    r.title,
                    r.sha256,
                    r.size,
                    len(r.chunks),
                    r.ingested_at,
                )
                for r in self._sources.values()
            ),
            key=lambda s: (s.root, s.file),
        )

    def source_record(self, key: str) -> SourceRecord | None:
        return self._sources.get(key)

    def chunk(self, chunk_id: str) -> Chunk:
        """The chunk with ``chunk_id``; raises KeyError naming the corpus when it is unknown."""
        try:
            return self._chunks[chunk_id]
        except KeyError:
            raise KeyError(
                f"corpus '{self.name}' has no chunk '{chunk_id}' (its source may have changed; "
                "search again)"
            ) from None

    def chunks(self) -> list[Chunk]:
        return [c for r in self._sources.values() for c in r.chunks]

    def linked_chunks(
        self, text: str, *, exclude: Iterable[str] = (), limit: int = 2
    ) -> list[Chunk]:
        """The opening chunk of each source whose title ``text`` names (a second hop: a passage
        that names "Shirley Temple" leads to the document about her), at most ``limit``,
        skipping the sources in ``exclude``."""
        from kforge.rag.compose import mentions_title

        skip = set(exclude)
        found: list[Chunk] = []
        for record in self._sources.values():
            if record.key in skip or not record.chunks or len(record.title.strip()) < 4:
                continue
            if mentions_title(text, record.title):
                found.append(record.chunks[0])
                if len(found) >= limit:
                    break
        return found

    def search(
        self, query: str, k: int = 5, *, mode: SearchMode = "auto", candidates: int = 100
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query``, best first.

        ``lexical`` is BM25; ``dense`` is cosine similarity of MiniLM vectors; ``hybrid`` fuses
        the top ``candidates`` of both by reciprocal rank; ``auto`` is hybrid when vectors exist,
        else lexical.
        """
        if k <= 0:
            return []
        if not self._stale_checked:
            self._stale_checked = True
            self._warn_stale_extraction()
        if mode == "auto":
            mode = "hybrid" if self.has_dense else "lexical"
        if mode == "lexical":
            ranked = self._bm25.search(analyze(query), k)
        elif mode in ("dense", "hybrid"):
            if self.embedder is None:
                raise ConfigurationError(
                    f"search mode '{mode}' needs an embedder: open the corpus with "
                    "embedder=MiniLMEmbedder() (needs the 'dense' extra), or use mode='lexical'"
                )
            vector = self.embedder.embed([query])[0]
            dense = self._dense.search(vector, max(k, candidates))
            if mode == "dense":
                ranked = dense[:k]
            else:
                lexical = self._bm25.search(analyze(query), max(k, candidates))
                ranked = reciprocal_rank_fusion(
                    [[d for d, _ in lexical], [d for d, _ in dense]], limit=k
                )
        else:
            raise ConfigurationError(
                f"unknown search mode '{mode}'; use auto, lexical, dense or hybrid"
            )
        retriever = {"lexical": "bm25"}.get(mode, mode)
        return [
            SearchHit(self._chunks[doc_id], score, rank, retriever)
            for rank, (doc_id, score) in enumerate(ranked, start=1)
        ]

    def roots(self) -> list[Path]:
        return [Path(r) for r in sorted({r.root for r in self._sources.values() if r.root})]
