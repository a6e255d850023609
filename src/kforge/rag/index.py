"""How a corpus lives in the store's passage index (``kforge.store.passages``): a source's
metadata, its chunks as passages with their analyzed terms, and the cheap statistics other
modules read (passage count, characters, document frequencies) without loading the corpus."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kforge.rag.analyze import ANALYZER_VERSION, term_frequencies, tokenize
from kforge.rag.records import SourceRecord, index_text, sources_namespace
from kforge.rag.types import Chunk
from kforge.store.passages import IndexedPassage, IndexedSource

if TYPE_CHECKING:
    from kforge.rag.bm25 import BM25Params
    from kforge.store.passages import PassageStore

__all__ = [
    "INDEX_LAYOUT",
    "CorpusIndexStatistics",
    "Rankings",
    "indexed_source",
    "record_from_index",
    "record_meta",
    "reindex",
    "text_words",
    "title_word",
    "upgrade_legacy_sources",
    "whole_title",
]

INDEX_LAYOUT = 1
"""Written into a corpus's ``rag/corpora`` record once its sources live in the passage index;
a record without it was written by a kforge that kept whole sources as documents."""

_META_FIELDS = (
    "key",
    "root",
    "file",
    "format",
    "sha256",
    "size",
    "title",
    "chunking",
    "analyzer",
    "ingested_at",
    "extraction",
    "duplicates",
    "full_title",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CorpusIndexStatistics:
    """Counts of a whole corpus read from its index, costing one row each: what a ranking
    needs (how many passages, how much text, how many passages hold a term) without reading
    the passages themselves."""

    passages: int
    """Chunks in the corpus."""
    chars: int
    """Characters of all chunk texts together."""
    terms: int
    """Analyzed terms of all chunks together (their lengths for BM25)."""
    document_frequency: Callable[[str], int]
    """``document_frequency(term)``: how many chunks hold the analyzed ``term`` (one indexed
    lookup per call; pass a term as ``kforge.rag.analyze.analyze`` produces it)."""
    document_frequencies: Callable[[Iterable[str]], dict[str, int]]
    """The same for many terms in one lookup: ``{term: chunks holding it}``."""

    @property
    def average_chars(self) -> float:
        return self.chars / self.passages if self.passages else 0.0


class Rankings:
    """Recent lexical rankings of a corpus by terms and BM25 parameters, each kept with the
    index version (``PassageIndex.index_version``) it was made under and reused only while that
    version holds; the oldest go past ``keep``.

    A search reads at least ``depth`` passages deep: one answer searches the question for a
    few passages (the guardrail's evidence) and then for the pool it reranks
    (``kforge.rag.rerank.POOL``), and the best few are the head of the deeper ranking, so the
    second search costs nothing."""

    def __init__(self, keep: int = 32, depth: int = 40) -> None:
        self.keep = keep
        self.depth = depth
        self._kept: dict[Any, tuple[str, int, list[tuple[str, float]]]] = {}

    def search(
        self, store: PassageStore, name: str, terms: list[str], k: int, bm25: BM25Params
    ) -> list[tuple[str, float]]:
        """The head of ``store.search_passages`` of ``terms``, ``k`` long: of a ranking kept
        from before when one as deep is."""
        key = (tuple(terms), bm25.k1, bm25.b)
        kept = self._kept.get(key)
        # a ranking shorter than it was asked to be holds every passage with a term; with none
        # that could serve, the version comes with the search (one read fewer)
        if (
            kept is not None
            and (k <= kept[1] or len(kept[2]) < kept[1])
            and kept[0] == store.index_version(name)
        ):
            return kept[2][:k]
        deep = max(k, self.depth)
        version, ranked = store.search_versioned(name, terms, deep, k1=bm25.k1, b=bm25.b)
        if version:  # a store that cannot tell when its index changes keeps nothing
            self._kept.pop(key, None)
            self._kept[key] = (version, deep, list(ranked))
            while len(self._kept) > self.keep:
                del self._kept[next(iter(self._kept))]
        return ranked[:k]


_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")
"""A trailing "(1945 film)", which ``compose.mentions_title`` does not require in a text."""


_TITLE_WORDS = 4
"""How many of a title's first words find it: enough that a corpus of many titles yields few
candidates for a text (two common words open many titles), few enough to look up cheaply."""


def whole_title(title: str) -> str:
    """``title``'s words as ``tokenize`` gives them, without a trailing disambiguation
    ("git-fetch(1)" -> "git fetch")."""
    return " ".join(tokenize(_DISAMBIGUATION.sub("", title)))


def title_word(title: str) -> str:
    """The first words of ``title`` (without a trailing disambiguation) as ``tokenize`` gives
    them, up to ``_TITLE_WORDS``: a text that names the title (``compose.mentions_title``)
    holds them side by side, so it finds the source among its ``text_words``."""
    words = tokenize(_DISAMBIGUATION.sub("", title))
    return " ".join(words[:_TITLE_WORDS])


def text_words(text: str) -> set[str]:
    """Every run of 1 to ``_TITLE_WORDS`` adjacent words of ``text``: what ``title_word`` is
    looked up in."""
    words = tokenize(text)
    return {
        " ".join(words[start : start + size])
        for size in range(1, _TITLE_WORDS + 1)
        for start in range(len(words) - size + 1)
    }


def record_meta(record: SourceRecord) -> dict[str, Any]:
    """What the index keeps about a source besides its chunks."""
    meta = {name: getattr(record, name) for name in _META_FIELDS}
    meta["chunks"] = len(record.chunks)
    return meta


def indexed_source(record: SourceRecord) -> IndexedSource:
    """``record`` as the store indexes it (terms computed now if the record has none)."""
    terms = record.terms
    if len(terms) != len(record.chunks):
        terms = [term_frequencies(index_text(c)) for c in record.chunks]
    return IndexedSource(
        key=record.key,
        meta=record_meta(record),
        title_word=title_word(record.title),
        passages=[
            IndexedPassage(id=c.id, terms=tf, data=c.to_dict(), chars=len(c.text))
            for c, tf in zip(record.chunks, terms, strict=True)
        ],
    )


def record_from_index(meta: dict[str, Any], passages: Sequence[dict[str, Any]]) -> SourceRecord:
    """The record of a source read back from the index (its terms are not read: they stay in
    the index; ``indexed_source`` recomputes them if the record is written again)."""
    fields = {name: meta[name] for name in _META_FIELDS if name in meta}
    fields["duplicates"] = dict(fields.get("duplicates") or {})
    record = SourceRecord(**fields)
    record.chunks = [Chunk.from_dict(p) for p in passages]
    return record


def upgrade_legacy_sources(store: PassageStore, name: str, *, batch: int = 256) -> int:
    """Move a corpus kept as whole-source documents (``rag/NAME/sources``) into the passage
    index, once; returns how many sources moved (0 when there were none)."""
    namespace = sources_namespace(name)
    docs = store.get_docs(namespace)
    records = [SourceRecord.from_doc(doc) for doc in docs.values()]
    for start in range(0, len(records), batch):
        store.put_sources(name, [indexed_source(r) for r in records[start : start + batch]])
    if docs:
        store.delete_docs(namespace)
    return len(records)


def reindex(store: PassageStore, name: str, *, batch: int = 256) -> int:
    """Analyze every chunk again (after ``ANALYZER_VERSION`` changed) and rewrite the index;
    returns how many sources were rewritten."""
    metas = store.index_sources(name)
    keys = list(metas)
    for start in range(0, len(keys), batch):
        records = []
        for key in keys[start : start + batch]:
            record = record_from_index(metas[key], store.source_passages(name, key))
            record.analyzer = ANALYZER_VERSION
            records.append(record)
        store.put_sources(name, [indexed_source(r) for r in records])
    return len(keys)
