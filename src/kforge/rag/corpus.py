"""A named, persistent collection of chunks with lexical and optional dense search."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kforge.errors import ConfigurationError, ValidationError
from kforge.rag.analyze import ANALYZER_VERSION, analyze, tokenize
from kforge.rag.bm25 import BM25Params
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.dense import Embedder
from kforge.rag.extract import EXTRACTION_VERSION, ExtractedDocument
from kforge.rag.fusion import reciprocal_rank_fusion
from kforge.rag.index import (
    INDEX_LAYOUT,
    CorpusIndexStatistics,
    Rankings,
    indexed_source,
    record_from_index,
    reindex,
    text_words,
    upgrade_legacy_sources,
    whole_title,
)
from kforge.rag.records import (
    CORPORA_NAMESPACE,
    SourceInfo,
    SourceRecord,
    build_source,
    sources_namespace,
    vectors_namespace,
)
from kforge.rag.types import Chunk, SearchHit, SourceDocument
from kforge.rag.vectors import CorpusVectors

if TYPE_CHECKING:
    import os

    from kforge.rag.ingest import IngestProgress, IngestReport
    from kforge.store.passages import PassageStore

__all__ = ["DEFAULT_CORPUS", "Corpus", "SearchMode", "SourceInfo", "drop_corpus", "list_corpora"]

DEFAULT_CORPUS = "default"
SearchMode = Literal["auto", "lexical", "dense", "hybrid"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_log = logging.getLogger(__name__)
_warned_stale: set[tuple[int, str]] = set()
"""(store, corpus) pairs already told about stale extraction: the warning is given once."""


def _check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ConfigurationError(
            f"corpus name '{name}' is not allowed: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def list_corpora(store: PassageStore) -> list[dict[str, Any]]:
    """The corpora kept in ``store``: name, roots, counts and timestamps."""
    return sorted(store.get_docs(CORPORA_NAMESPACE).values(), key=lambda d: str(d.get("name")))


def drop_corpus(store: PassageStore, name: str) -> None:
    """Delete a corpus and everything indexed in it."""
    _check_name(name)
    store.delete_sources(name)
    store.delete_docs(sources_namespace(name))
    store.delete_docs(vectors_namespace(name))
    store.delete_docs(CORPORA_NAMESPACE, [name])


class Corpus:
    """Chunks of many sources, searchable by BM25 and, with an embedder, by vectors.

    Open one with ``Corpus.open(store, name)``: the chunks and their BM25 postings live in the
    store's passage index (``kforge.store.passages``) and are searched there, so opening reads
    one record and a search reads the postings of its terms and the chunks it returns.
    Dense vectors (with an embedder) stay documents beside the index, read when the corpus
    opens (``kforge.rag.vectors``).
    """

    def __init__(
        self,
        store: PassageStore,
        name: str,
        *,
        embedder: Embedder | None = None,
        bm25: BM25Params | None = None,
    ) -> None:
        self.store = store
        self.name = _check_name(name)
        self.embedder = embedder
        self.bm25 = bm25 or BM25Params()
        self._vectors = CorpusVectors(store, self.name)
        self._rankings = Rankings()
        self._meta: dict[str, Any] = {}
        self._stale_checked = False
        self._written = False
        """Sources were written or removed since the last ``touch``."""
        self._files_changed = False
        """A file's source (one with a root) was written or removed since the last ``touch``:
        the corpus's roots and extractions must be read again."""

    @classmethod
    def open(
        cls,
        store: PassageStore,
        name: str = DEFAULT_CORPUS,
        *,
        embedder: Embedder | None = None,
        bm25: BM25Params | None = None,
    ) -> Corpus:
        """The corpus ``name`` in ``store`` (empty if it does not exist yet); reads its record.

        A corpus written by a kforge that kept whole sources as documents moves into the
        passage index here, once; one indexed by an older analyzer is analyzed again, once.
        When some of its files were extracted by an older kforge, its first search logs a
        warning (once per corpus and process) naming the ``kforge ingest`` command that
        upgrades them; an ingest before that search upgrades them silently.
        """
        corpus = cls(store, name, embedder=embedder, bm25=bm25)
        corpus._load()
        return corpus

    # -- loading and writing --------------------------------------------------------------

    def _load(self) -> None:
        self._meta = self.store.get_docs(CORPORA_NAMESPACE, [self.name]).get(self.name, {})
        if self._meta.get("index") != INDEX_LAYOUT:
            if upgrade_legacy_sources(self.store, self.name) or self._meta:
                self.touch()
        elif self._meta.get("analyzer") != ANALYZER_VERSION:
            reindex(self.store, self.name)
            self.touch()
        if self.embedder is not None:
            self._vectors.load(self.embedder)

    def stale_extraction(self) -> list[SourceInfo]:
        """Ingested files whose text an older extraction produced (navigation, markup and
        duplicates may be indexed); ``kforge ingest`` on their folder extracts them again."""
        return [
            SourceInfo.from_meta(meta)
            for meta in self.store.index_sources(self.name).values()
            if meta.get("root") and meta.get("extraction") != EXTRACTION_VERSION
        ]

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
        marker = (id(self.store), self.name)
        # the corpus record lists the extractions its files came from: no need to read them
        if marker in _warned_stale or set(self._meta.get("extractions", ())) <= {
            EXTRACTION_VERSION
        }:
            return
        stale = self.stale_extraction()
        if not stale:
            return
        _warned_stale.add(marker)
        _log.warning("%s", self.stale_warning())

    def save_sources(self, records: Sequence[SourceRecord]) -> None:
        """Index ``records`` (replacing earlier versions) with their chunks and postings in one
        transaction, and their vectors, with an embedder."""
        if not records:
            return
        self._vectors.forget([r.key for r in records])
        self.store.put_sources(self.name, [indexed_source(r) for r in records])
        self._written = True
        self._files_changed = self._files_changed or any(r.root for r in records)
        if self.embedder is not None:
            self._vectors.save(records, self.embedder)

    def remove_sources(self, keys: Iterable[str]) -> None:
        """Forget sources by key (unknown keys are ignored)."""
        metas = self.store.index_sources(self.name, list(keys))
        if not metas:
            return
        keys = list(metas)
        self._files_changed = self._files_changed or any(m.get("root") for m in metas.values())
        self._vectors.forget(keys)
        self.store.delete_sources(self.name, keys)
        self._vectors.delete(keys)
        self._written = True

    def touch(self, *, root: str | None = None) -> None:
        """Record counts, roots, the extractions and analyzer in use and the time of the last
        change in ``rag/corpora``. After an ingest of files this reads every source's record;
        after documents given as text (``add_documents``) it counts the sources in the store
        and keeps the roots and extractions recorded, so adding one document to a large corpus
        costs nothing in proportion to its size."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        if root is None and not self._files_changed and self._touch_counted(now):
            return
        self._files_changed = False
        metas = self.store.index_sources(self.name).values()
        # the embedder of its vectors, for searches to open it with (kforge ask, hybrid)
        model = (
            self.embedder.name if self.embedder and self._vectors else self._meta.get("embedder")
        )
        roots = set(self._meta.get("roots", ()))
        if root:
            roots.add(root)
        roots &= {str(m.get("root", "")) for m in metas} | ({root} if root else set())
        self._meta = {
            "name": self.name,
            "created_at": self._meta.get("created_at", now),
            "updated_at": now,
            "roots": sorted(roots),
            "sources": len(metas),
            "chunks": self.store.index_statistics(self.name).passages,
            "index": INDEX_LAYOUT,
            "analyzer": ANALYZER_VERSION,
            "extractions": sorted({str(m.get("extraction", "")) for m in metas if m.get("root")}),
            **({"embedder": model} if model else {}),
        }
        self.store.put_docs(CORPORA_NAMESPACE, {self.name: self._meta})
        if self._written:
            self._written = False
            self.store.settle_index()

    def _touch_counted(self, now: str) -> bool:
        """``touch`` with the sources counted in the store and the roots and extractions of
        the corpus's record as stored now (another process may have ingested a folder since
        this one read it); False when the store cannot count or there is no such record."""
        count = getattr(self.store, "count_sources", None)
        stored = self.store.get_docs(CORPORA_NAMESPACE, [self.name]).get(self.name)
        if count is None or not stored or stored.get("index") != INDEX_LAYOUT:
            return False
        model = self.embedder.name if self.embedder and self._vectors else stored.get("embedder")
        self._meta = {
            **stored,
            "updated_at": now,
            "sources": int(count(self.name)),
            "chunks": self.store.index_statistics(self.name).passages,
            "analyzer": ANALYZER_VERSION,
            **({"embedder": model} if model else {}),
        }
        self.store.put_docs(CORPORA_NAMESPACE, {self.name: self._meta})
        if self._written:
            self._written = False
            self.store.settle_index()
        return True

    def embed_missing(self) -> int:
        """Embed every chunk that has no vector yet (e.g. after adding an embedder)."""
        if self.embedder is None:
            raise ConfigurationError(
                f"corpus '{self.name}' was opened without an embedder; open it with "
                "embedder=MiniLMEmbedder() to compute dense vectors"
            )
        return self._vectors.save_missing(self.embedder)

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
        pending: dict[str, tuple[str, SourceDocument]] = {}

        def flush() -> int:
            stored = self.store.index_sources(self.name, list(pending))
            batch = [
                build_source(
                    key=key,
                    root="",
                    file=doc.id,
                    sha256=sha,
                    size=len(doc.text),
                    document=ExtractedDocument(doc.text, doc.title or doc.id, "text"),
                    options=options,
                )
                for key, (sha, doc) in pending.items()
                if stored.get(key, {}).get("sha256") != sha
                or stored[key].get("chunking") != options.key
            ]
            self.save_sources(batch)
            pending.clear()
            return len(batch)

        for doc in documents:
            if not doc.id:
                raise ValidationError("a SourceDocument needs a non-empty id")
            sha = hashlib.sha256(f"{doc.title}\0{doc.text}".encode()).hexdigest()
            pending[f"doc:{doc.id}"] = (sha, doc)
            if len(pending) >= batch_size:
                changed += flush()
        changed += flush()
        if changed:
            self.touch()
        return changed

    # -- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.store.index_statistics(self.name).passages

    @property
    def has_dense(self) -> bool:
        """True when an embedder is set and at least one chunk has a vector."""
        return self.embedder is not None and len(self._vectors) > 0

    def similarities(self, query: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """The cosine similarity of ``query``'s vector to each of ``chunk_ids`` that has one;
        empty when the corpus has no vectors (``has_dense``)."""
        if not self.has_dense or not chunk_ids:
            return {}
        assert self.embedder is not None  # has_dense
        return self._vectors.similarities(self.embedder.embed([query])[0], chunk_ids)

    def statistics(self) -> CorpusIndexStatistics:
        """Passage count, total characters and a ``document_frequency(term)`` backed by the
        index: reading them costs one row, each frequency one indexed lookup."""
        counts = self.store.index_statistics(self.name)

        def document_frequency(term: str) -> int:
            return self.store.document_frequencies(self.name, [term])[term]

        def document_frequencies(terms: Iterable[str]) -> dict[str, int]:
            return self.store.document_frequencies(self.name, terms)

        return CorpusIndexStatistics(
            passages=counts.passages,
            chars=counts.chars,
            terms=counts.terms,
            document_frequency=document_frequency,
            document_frequencies=document_frequencies,
        )

    def sources(self) -> list[SourceInfo]:
        """Every source (reads each one's record, not its chunks)."""
        infos = (
            SourceInfo.from_meta(meta) for meta in self.store.index_sources(self.name).values()
        )
        return sorted(infos, key=lambda s: (s.root, s.file))

    def source_record(self, key: str) -> SourceRecord | None:
        meta = self.store.index_sources(self.name, [key]).get(key)
        if meta is None:
            return None
        return record_from_index(meta, self.store.source_passages(self.name, key))

    def chunk(self, chunk_id: str) -> Chunk:
        """The chunk with ``chunk_id``; raises KeyError naming the corpus when it is unknown."""
        data = self.store.read_passages(self.name, [chunk_id]).get(chunk_id)
        if data is None:
            raise KeyError(
                f"corpus '{self.name}' has no chunk '{chunk_id}' (its source may have changed; "
                "search again)"
            )
        return Chunk.from_dict(data)

    def chunks(self) -> list[Chunk]:
        """Every chunk of every source: reads the whole corpus (searching never needs it)."""
        return [Chunk.from_dict(d) for d in self.store.source_passages(self.name)]

    def linked_chunks(
        self,
        text: str,
        *,
        exclude: Iterable[str] = (),
        limit: int = 2,
        skip: Callable[[str], bool] | None = None,
    ) -> list[Chunk]:
        """The opening chunk of each source whose title ``text`` names (a second hop: a passage
        that names "Shirley Temple" leads to the document about her), at most ``limit``,
        skipping the sources in ``exclude`` and those whose title ``skip`` is true of. Only sources whose title's first words (up to
        four) stand side by side in ``text`` are read."""
        from kforge.rag.hops import mentions_title

        excluded = set(exclude)
        keys = [
            k
            for k in self.store.sources_by_title_word(self.name, text_words(text))
            if k not in excluded
        ]
        found: list[Chunk] = []
        for key, meta in self.store.index_sources(self.name, keys).items():
            title = str(meta.get("title", ""))
            if not meta.get("chunks") or len(title.strip()) < 4:
                continue
            if mentions_title(text, title) and not (skip and skip(title)):
                found.append(Chunk.from_dict(self.store.source_passages(self.name, key)[0]))
                if len(found) >= limit:
                    break
        return found

    def titled_chunks(self, names: Iterable[str], *, limit: int = 2) -> list[Chunk]:
        """The opening chunk of each source whose whole title is one of ``names`` (compared
        as ``tokenize`` gives words, without a trailing "(1)": "Spiders" for "spiders",
        "git-fetch(1)" for "git fetch"), at most ``limit``: the page a documentation set gives
        to a thing."""
        wanted = {" ".join(tokenize(n)) for n in names} - {""}
        found: list[Chunk] = []
        keys = self.store.sources_by_title_word(self.name, wanted)
        for key, meta in self.store.index_sources(self.name, keys).items():
            if whole_title(str(meta.get("title", ""))) in wanted and meta.get("chunks"):
                found.append(Chunk.from_dict(self.store.source_passages(self.name, key)[0]))
                if len(found) >= limit:
                    break
        return found

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        mode: SearchMode = "auto",
        candidates: int = 100,
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
            ranked = self._lexical(query, k)
        elif mode in ("dense", "hybrid"):
            if self.embedder is None:
                raise ConfigurationError(
                    f"search mode '{mode}' needs an embedder: open the corpus with "
                    "embedder=MiniLMEmbedder() (needs the 'dense' extra), or use mode='lexical'"
                )
            vector = self.embedder.embed([query])[0]
            dense = self._vectors.search(vector, max(k, candidates))
            if mode == "dense":
                ranked = dense[:k]
            else:
                lexical = self._lexical(query, max(k, candidates))
                ranked = reciprocal_rank_fusion(
                    [[d for d, _ in lexical], [d for d, _ in dense]], limit=k
                )
        else:
            raise ConfigurationError(
                f"unknown search mode '{mode}'; use auto, lexical, dense or hybrid"
            )
        retriever = {"lexical": "bm25"}.get(mode, mode)
        found = self.store.read_passages(self.name, [doc_id for doc_id, _ in ranked])
        return [
            SearchHit(Chunk.from_dict(found[doc_id]), score, rank, retriever)
            for rank, (doc_id, score) in enumerate(
                ((d, s) for d, s in ranked if d in found), start=1
            )
        ]

    def _lexical(self, query: str, k: int) -> list[tuple[str, float]]:
        # one answer searches alike terms several times (the guardrail's evidence, retrieval)
        return self._rankings.search(self.store, self.name, analyze(query), k, self.bm25)

    def roots(self) -> list[Path]:
        metas = self.store.index_sources(self.name).values()
        return [Path(r) for r in sorted({str(m["root"]) for m in metas if m.get("root")})]
