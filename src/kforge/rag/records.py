"""A corpus's sources as records (a file or an added document with its chunks and terms),
and the store documents a corpus keeps beside its passage index (``kforge.rag.index``).

Namespaces (``NAME`` is the corpus name):

- ``rag/corpora``: one document per corpus (roots, counts, timestamps, index layout);
- ``rag/NAME/vectors``: optional dense vectors per source, tagged with the source hash;
- ``rag/NAME/sources``: where an older kforge kept one document per source with its chunks
  (``to_doc``/``from_doc``); opening such a corpus moves it into the passage index.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kforge.rag.analyze import ANALYZER_VERSION, term_frequencies
from kforge.rag.chunking import ChunkingOptions, chunk_document
from kforge.rag.extract import EXTRACTION_VERSION, ExtractedDocument
from kforge.rag.types import Chunk

__all__ = [
    "CORPORA_NAMESPACE",
    "SourceInfo",
    "SourceRecord",
    "build_source",
    "index_text",
    "sources_namespace",
    "vectors_namespace",
]

CORPORA_NAMESPACE = "rag/corpora"


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

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> SourceInfo:
        """The info of a source's index record (``meta``)."""
        return cls(
            str(meta["key"]),
            str(meta.get("root", "")),
            str(meta["file"]),
            str(meta.get("format", "text")),
            str(meta.get("title", "")),
            str(meta["sha256"]),
            int(meta.get("size", 0)),
            int(meta.get("chunks", 0)),
            str(meta.get("ingested_at", "")),
        )


def sources_namespace(corpus: str) -> str:
    return f"rag/{corpus}/sources"


def vectors_namespace(corpus: str) -> str:
    return f"rag/{corpus}/vectors"


def index_text(chunk: Chunk) -> str:
    """What lexical and dense search see: title and heading path, then the passage."""
    if chunk.heading.startswith(chunk.title):
        prefix = chunk.heading
    else:
        prefix = f"{chunk.title}\n{chunk.heading}" if chunk.heading else chunk.title
    return f"{prefix}\n{chunk.text}" if prefix else chunk.text


@dataclass(slots=True)
class SourceRecord:
    """One ingested file (or added document) with its chunks and their index terms."""

    key: str
    root: str
    """The ingested folder (absolute), or empty for documents added directly."""
    file: str
    format: str
    sha256: str
    size: int
    title: str
    chunking: str
    analyzer: str
    ingested_at: str
    extraction: str = EXTRACTION_VERSION
    """The ``EXTRACTION_VERSION`` that produced the text; "" for records written before it."""
    duplicates: dict[str, str] = field(default_factory=dict)
    """Files of the same document in other formats, left out for this one: path to sha256."""
    full_title: str = ""
    """The title as the document gives it, when ``title`` dropped a subtitle or site name."""
    chunks: list[Chunk] = field(default_factory=list)
    terms: list[dict[str, int]] = field(default_factory=list)
    """Term frequencies of each chunk's ``index_text``, so opening a corpus needs no analysis."""

    def to_doc(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "root": self.root,
            "file": self.file,
            "format": self.format,
            "sha256": self.sha256,
            "size": self.size,
            "title": self.title,
            "chunking": self.chunking,
            "analyzer": self.analyzer,
            "ingested_at": self.ingested_at,
            "extraction": self.extraction,
            "duplicates": self.duplicates,
            "full_title": self.full_title,
            "chunks": [
                {
                    "id": c.id,
                    "heading": c.heading,
                    "page": c.page,
                    "start": c.start,
                    "end": c.end,
                    "text": c.text,
                    "tf": tf,
                }
                for c, tf in zip(self.chunks, self.terms, strict=True)
            ],
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> SourceRecord:
        """Rebuild a record; terms are recomputed when the analyzer has changed since."""
        record = cls(
            key=doc["key"],
            root=doc.get("root", ""),
            file=doc["file"],
            format=doc.get("format", "text"),
            sha256=doc["sha256"],
            size=int(doc.get("size", 0)),
            title=doc.get("title", ""),
            chunking=doc.get("chunking", ""),
            analyzer=doc.get("analyzer", ""),
            ingested_at=doc.get("ingested_at", ""),
            extraction=doc.get("extraction", ""),
            duplicates=dict(doc.get("duplicates") or {}),
            full_title=doc.get("full_title", ""),
        )
        fresh = record.analyzer == ANALYZER_VERSION
        for index, raw in enumerate(doc.get("chunks", ())):
            chunk = Chunk(
                id=raw["id"],
                source=record.key,
                file=record.file,
                title=record.title,
                heading=raw.get("heading", ""),
                page=raw.get("page"),
                start=int(raw["start"]),
                end=int(raw["end"]),
                text=raw["text"],
                index=index,
            )
            record.chunks.append(chunk)
            tf = raw.get("tf")
            record.terms.append(
                dict(tf) if fresh and tf is not None else term_frequencies(index_text(chunk))
            )
        record.analyzer = ANALYZER_VERSION
        return record


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def build_source(
    *,
    key: str,
    root: str,
    file: str,
    sha256: str,
    size: int,
    document: ExtractedDocument,
    options: ChunkingOptions,
) -> SourceRecord:
    """Chunk ``document`` and compute every chunk's index terms."""
    record = SourceRecord(
        key=key,
        root=root,
        file=file,
        format=document.format,
        sha256=sha256,
        size=size,
        title=document.title,
        chunking=options.key,
        analyzer=ANALYZER_VERSION,
        ingested_at=_now(),
        extraction=EXTRACTION_VERSION,
        full_title=document.extra.get("full_title", ""),
    )
    prefix = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
    for index, span in enumerate(chunk_document(document, options)):
        chunk = Chunk(
            id=f"{prefix}-{sha256[:8]}-{index}",
            source=key,
            file=file,
            title=document.title,
            heading=span.heading,
            page=span.page,
            start=span.start,
            end=span.end,
            text=document.text[span.start : span.end],
            index=index,
        )
        record.chunks.append(chunk)
        record.terms.append(term_frequencies(index_text(chunk)))
    return record
