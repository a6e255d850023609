"""The values retrieval hands around: chunks with provenance, search hits and citations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Chunk", "Citation", "SearchHit", "SourceDocument"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of one source, with where it came from."""

    id: str
    """Stable while the source is unchanged; a changed source gets new chunk ids."""
    source: str
    """The source's key in the corpus: the file's absolute path, or ``doc:ID``."""
    file: str
    """The file's path relative to the ingested folder (POSIX), or the document id."""
    title: str
    """The document's title (first heading, HTML title, PDF title, or file name)."""
    heading: str
    """The heading path above the passage, e.g. ``Guide > Setup``; empty when there is none."""
    page: int | None
    """1-based PDF page, None for other formats."""
    start: int
    """Character offset of the passage in the source's extracted text."""
    end: int
    """Offset one past the passage's last character: ``text == extracted[start:end]``."""
    text: str
    index: int = 0
    """Position of the chunk within its source."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "file": self.file,
            "title": self.title,
            "heading": self.heading,
            "page": self.page,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "index": self.index,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        return cls(
            id=data["id"],
            source=data["source"],
            file=data["file"],
            title=data.get("title", ""),
            heading=data.get("heading", ""),
            page=data.get("page"),
            start=int(data["start"]),
            end=int(data["end"]),
            text=data["text"],
            index=int(data.get("index", 0)),
        )

    @property
    def location(self) -> str:
        """Human-readable place in the file: ``§ Heading, p. 3, chars 120-480``."""
        parts = []
        if self.heading:
            parts.append(f"§ {self.heading}")
        if self.page is not None:
            parts.append(f"p. {self.page}")
        parts.append(f"chars {self.start}-{self.end}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: a chunk, its rank (1 = best) and the score that ranked it."""

    chunk: Chunk
    score: float
    rank: int
    retriever: str = "bm25"
    """Which ranking produced ``score``: ``bm25``, ``dense`` or ``hybrid`` (reciprocal rank)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk": self.chunk.to_dict(),
            "score": self.score,
            "rank": self.rank,
            "retriever": self.retriever,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchHit:
        return cls(
            chunk=Chunk.from_dict(data["chunk"]),
            score=float(data["score"]),
            rank=int(data["rank"]),
            retriever=data.get("retriever", "bm25"),
        )


@dataclass(frozen=True, slots=True)
class Citation:
    """A reference to the exact passage an answer relies on."""

    number: int
    """The ``[n]`` marker used in the answer text."""
    chunk_id: str
    file: str
    title: str
    heading: str
    page: int | None
    start: int
    end: int
    quote: str
    """The start of the cited passage, for display."""

    @classmethod
    def from_chunk(cls, number: int, chunk: Chunk, *, quote_chars: int = 240) -> Citation:
        quote = " ".join(chunk.text.split())
        if len(quote) > quote_chars:
            quote = quote[: quote_chars - 1].rstrip() + "…"
        return cls(
            number=number,
            chunk_id=chunk.id,
            file=chunk.file,
            title=chunk.title,
            heading=chunk.heading,
            page=chunk.page,
            start=chunk.start,
            end=chunk.end,
            quote=quote,
        )

    @property
    def label(self) -> str:
        """``[2] guide.md § Setup, chars 120-480``."""
        where = [f"§ {self.heading}"] if self.heading else []
        if self.page is not None:
            where.append(f"p. {self.page}")
        where.append(f"chars {self.start}-{self.end}")
        return f"[{self.number}] {self.file} " + ", ".join(where)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "chunk_id": self.chunk_id,
            "file": self.file,
            "title": self.title,
            "heading": self.heading,
            "page": self.page,
            "start": self.start,
            "end": self.end,
            "quote": self.quote,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Citation:
        return cls(
            number=int(data["number"]),
            chunk_id=data["chunk_id"],
            file=data["file"],
            title=data.get("title", ""),
            heading=data.get("heading", ""),
            page=data.get("page"),
            start=int(data["start"]),
            end=int(data["end"]),
            quote=data.get("quote", ""),
        )


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A document handed to the corpus directly rather than read from a file."""

    id: str
    text: str
    title: str = ""
