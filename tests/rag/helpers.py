"""Test helpers for kforge.rag: a hand-written PDF, a hashing embedder, a fake model callable."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec
from kforge.rag.compose import compose_extractive
from kforge.rag.corpus import Corpus
from kforge.rag.rerank import search_units
from kforge.rag.short_answer import short_answer
from kforge.rag.types import Chunk, SearchHit, SourceDocument
from kforge.store.memory import MemoryStore

__all__ = [
    "FakeComplete",
    "HashEmbedder",
    "api_pages",
    "asked_over",
    "make_hit",
    "make_pdf",
    "page_chunk",
]


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: Sequence[Sequence[str]], *, title: str | None = None) -> bytes:
    """A valid PDF with one Helvetica text line per entry of each page."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_id = 3 + 2 * n_pages
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, lines in enumerate(pages):
        content_id = 4 + 2 * i
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            ops.append(f"({_pdf_string(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    info_id = None
    if title is not None:
        objects.append(f"<< /Title ({_pdf_string(title)}) >>".encode("latin-1"))
        info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    if info_id is not None:
        trailer += f" /Info {info_id} 0 R"
    out += f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class HashEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words get similar vectors."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0

    @property
    def name(self) -> str:
        return f"hash-{self.dim}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vec = [0.0] * self.dim
            for word in re.findall(r"\w+", text.lower()):
                vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out


class FakeComplete:
    """A ``complete`` callable that answers from a list of replies or raises queued errors.

    A dict reply is structured output; a str is text; an exception instance is raised.
    """

    def __init__(self, replies: Sequence[Any]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[Message], dict[str, Any] | None]] = []

    async def __call__(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        self.calls.append((list(messages), output_schema))
        if not self.replies:
            raise AssertionError(f"unexpected model call #{len(self.calls)}")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, dict):
            return ModelResponse(text="", parsed=reply)
        return ModelResponse(text=str(reply))


def page_chunk(i: int, text: str, title: str, heading: str = "") -> Chunk:
    """Passage ``i`` of a page ``page{i}.html``: the whole text, under ``title`` and ``heading``."""
    return Chunk(
        id=f"c{i}",
        source=f"page{i}.html",
        file=f"page{i}.html",
        title=title,
        heading=heading,
        page=None,
        start=0,
        end=len(text),
        text=text,
    )


def make_hit(n: int, text: str = "", *, file: str = "doc.md") -> SearchHit:
    chunk = Chunk(
        id=f"c{n}",
        source=f"/docs/{file}",
        file=file,
        title="Doc",
        heading=f"Doc > Part {n}",
        page=None,
        start=n * 100,
        end=n * 100 + len(text or f"passage {n}"),
        text=text or f"passage {n}",
        index=n,
    )
    return SearchHit(chunk, 1.0 / (n + 1), n + 1)


def asked_over(
    pages: list[SourceDocument], question: str, k: int = 3
) -> tuple[list[str], list[str], str | None]:
    """``question`` asked over ``pages`` indexed in a new corpus: the files searched first,
    the answer's units and its short line."""
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(pages)
    chunks = [h.chunk for h in search_units(corpus, question, k)]
    segments = compose_extractive(question, chunks)
    line = short_answer(question, segments, chunks)
    return [c.file for c in chunks], [s.text for s in segments], line.answer if line else None


def api_pages(name: str, count: int = 40) -> list[SourceDocument]:
    """``count`` API pages of a library ``name``, each naming it three times: a corpus where
    every page names the product, so the question's own words rank none first."""
    return [
        SourceDocument(
            f"api{i}.html",
            f"{name}.part{i}\n\n{name}.part{i}.convert(value): Convert a value with {name}. "
            f"{name.capitalize()} calls part {i} for every {name} string.",
            f"{name}.part{i} Module",
        )
        for i in range(count)
    ]
