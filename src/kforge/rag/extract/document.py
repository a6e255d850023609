"""What extraction produces (``ExtractedDocument`` with its sections, pages and text blocks),
the supported formats, and the helpers every format's extractor shares (titles, decoding)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

__all__ = [
    "EXTRACTION_VERSION",
    "FORMATS",
    "ExtractedDocument",
    "ExtractionError",
    "PageSpan",
    "Section",
    "TextBlock",
    "clean_title",
    "decode_text",
    "detect_text",
    "format_of",
    "include_directives_only",
    "layout_blocks",
    "plain_name",
    "title_from_filename",
]

EXTRACTION_VERSION = "extract-v13"
"""Names what extraction produces; a source extracted by another version is extracted again by
``kforge ingest``, and a corpus holding such sources says so when opened."""

FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".info": "info",
}
"""File suffix (lower case) to format name; other files are skipped but for manual pages
(``ls.1``, ``curl_easy_setopt.3``), the parts of a split Info manual (``gnupg.info-1``),
plain-text files named in capitals without a suffix (``README``, ``FAQ``, ``KNOWN_BUGS``) and
any of these compressed with gzip (``FAQ.gz``, ``HSTS.md.gz``: Debian compresses the larger
files under ``/usr/share/doc``)."""

SUPPORTED = (
    f"{', '.join(sorted(FORMATS))}, a split Info manual's parts (.info-1, .info-2, ...), "
    "manual pages (.1 to .9), README-style names in capitals (README, FAQ), and any of these "
    "compressed with gzip (.gz)"
)
"""What ``format_of`` takes, for messages that say what is read."""

_MAN_SUFFIX = re.compile(r"^\.[1-9][a-z]{0,10}$|^\.man$")
_INFO_PART = re.compile(r"^\.info-[0-9]{1,3}$")
_CAPITALS_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)*$")


class ExtractionError(Exception):
    """The file cannot be read as its format; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Section:
    start: int
    """Offset where the heading begins."""
    body_start: int
    """Offset just after the heading line."""
    level: int
    heading: str
    """The heading path, e.g. ``Guide > Setup``."""


@dataclass(frozen=True, slots=True)
class PageSpan:
    start: int
    end: int
    number: int
    """1-based page number."""


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    text: str
    title: str
    format: str
    sections: tuple[Section, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    body_start: int = 0
    """Offset where indexable content begins (after front matter)."""
    extra: dict[str, str] = field(default_factory=dict)
    code: tuple[tuple[int, int], ...] = ()
    """Start and end offsets of code blocks, which chunking splits only at line ends."""


@dataclass(slots=True)
class TextBlock:
    """One unit of rendered text, before it is laid out (HTML and AsciiDoc are rendered so)."""

    kind: str
    """``p`` paragraph, ``line`` (a list item, table row or definition entry), ``pre`` (code,
    verbatim) or ``h`` (a heading of ``level``)."""
    text: str
    level: int = 0


_INCLUDE_DIRECTIVE = re.compile(
    r"""[ \t]*(?:\{![ \t]*[^!\s][^!\n]*?[ \t]*!\}|-{2}8<-{2}[ \t]+(["'])[^"'\n]+\1)[ \t]*"""
)


def include_directives_only(code: str) -> bool:
    """Whether a code block holds only file inclusions a build left unprocessed: a MkDocs
    page built without its include extension shows ``{!../docs_src/app/tutorial001.py!}``
    (markdown-include) or ``--8<-- "example.py"`` (snippets) where the code should be. Such a
    block says nothing a reader can use, so extraction leaves it out."""
    lines = [line for line in code.splitlines() if line.strip()]
    return bool(lines) and all(_INCLUDE_DIRECTIVE.fullmatch(line) for line in lines)


def layout_blocks(
    blocks: list[TextBlock],
) -> tuple[str, tuple[Section, ...], tuple[tuple[int, int], ...]]:
    """The text of ``blocks``, its sections and its code spans: a blank line between blocks,
    a single newline between consecutive lines (so a list or a table is one paragraph of
    one-line units)."""
    parts: list[str] = []
    length = 0
    sections: list[Section] = []
    code: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    previous = ""
    for block in blocks:
        if parts:
            sep = "\n" if block.kind == previous == "line" else "\n\n"
            parts.append(sep)
            length += len(sep)
        if block.kind == "h":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text))
            path = " > ".join(h for _, h in stack)
            sections.append(Section(length, length + len(block.text), block.level, path))
        elif block.kind == "pre":
            code.append((length, length + len(block.text)))
        parts.append(block.text)
        length += len(block.text)
        previous = block.kind
    return "".join(parts), tuple(sections), tuple(code)


def plain_name(path: str | PurePath) -> PurePath:
    """The file's path without a ``.gz`` suffix: the name it has uncompressed."""
    path = PurePath(path)
    return path.with_suffix("") if path.suffix.lower() == ".gz" else path


def format_of(path: str | PurePath) -> str | None:
    """The format name for a file name (compressed with gzip or not), or None when it is not
    read: see ``FORMATS``."""
    name = plain_name(path)
    suffix = name.suffix.lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    if _MAN_SUFFIX.match(suffix):
        return "man"
    if _INFO_PART.match(suffix):
        return "info"
    if not suffix and _CAPITALS_NAME.match(name.name):
        return "text"
    return None


_TEXINFO_SECTION = re.compile(r"^.{2,}?:\s+(?:[0-9]+|[A-Z])(?:\.[0-9]+)*\.?\s+(\S.*)$")
_SITE_SEPARATOR = re.compile(r"\s+[|\u2014\u2013]\s+|\s+-{1,2}\s+")
_VERSION = re.compile(r"\bv?\d+\.\d+")
_TRAILING_PARENS = re.compile(r"^(.{3,}?)\s+\([^()]*(?:\([^()]*\)[^()]*)*\)$")
_SUBTITLE_COLON = re.compile(r"^([^:]{2,}?):\s+\S")


def clean_title(title: str) -> str:
    """The name of a document without its subtitle or the manual or site it belongs to.

    "GNU gettext utilities: 10. Producing Binary MO Files" (a Texinfo page) gives "Producing
    Binary MO Files"; "os | Node.js v18.20.4 Documentation" gives "os"; "The Closure API
    (libffi: the portable foreign function interface library)" gives "The Closure API".
    """
    text = " ".join(title.split())
    texinfo = _TEXINFO_SECTION.match(text)
    if texinfo:
        return texinfo.group(1)
    head, *rest = _SITE_SEPARATOR.split(text, maxsplit=1)
    tail = _SITE_SEPARATOR.split(rest[0], maxsplit=1)[0] if rest else ""
    if (
        _VERSION.search(head.split()[-1] if head.split() else "")
        and tail
        and not _VERSION.search(tail)
        and any(map(str.isalpha, tail))
    ):
        text = tail  # "HAProxy version 2.6.12 - Configuration Manual": the product, then the page
    elif any(c.isalnum() for c in head):
        text = head
    parens = _TRAILING_PARENS.match(text)
    if parens:
        text = parens.group(1)
    colon = _SUBTITLE_COLON.match(text)
    if colon and any(c.isalnum() for c in colon.group(1)):
        text = colon.group(1)
    return text.strip()


def title_from_filename(path: str | PurePath) -> str:
    stem = plain_name(path).stem
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else stem


def decode_text(data: bytes) -> str:
    """Decode text: UTF-8 (a leading BOM is dropped), else its detected encoding (see
    ``detect_text``); binary content is refused."""
    return detect_text(data)[0]


def detect_text(data: bytes) -> tuple[str, str]:
    """The text and the encoding it was read with: ``utf-8``, ``utf-16`` after its BOM, else
    cp1252, else Latin-1. A fixed order, not a detector: the same bytes read the same on every
    machine (statistical detection misreads short Western text, e.g. as UTF-16 CJK)."""
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[2:].decode(codec), "utf-16"
            except UnicodeDecodeError:
                break
    if b"\x00" in data[:8192]:
        raise ExtractionError(
            f"binary content (NUL bytes) where text was expected; kforge reads {SUPPORTED}"
        )
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"
