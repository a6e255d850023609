"""Bring a corpus in line with a folder: add new files, re-read changed ones, drop deleted ones."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kforge.rag.analyze import ANALYZER_VERSION
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.extract import (
    EXTRACTION_VERSION,
    SUPPORTED,
    ExtractedDocument,
    ExtractionError,
    extract,
    plain_name,
)
from kforge.rag.records import build_source
from kforge.rag.scan import ScannedFile, SkippedFile, scan_folder

if TYPE_CHECKING:
    from kforge.rag.dense import Embedder
    from kforge.rag.records import SourceRecord

__all__ = [
    "INDEX_PAGE",
    "MODULE_LISTING",
    "SAME_DOCUMENT_OVERLAP",
    "IndexedSummary",
    "IngestProgress",
    "IngestReport",
    "IngestTarget",
    "ingest_folder",
    "is_index_page",
    "is_module_listing",
    "pick_source",
    "word_overlap",
]

SAME_DOCUMENT_OVERLAP = 0.8
"""Two files of one stem are one document when this share of the smaller one's distinct words
is in the other (a manual page and the HTML generated from it share almost all)."""
_FORMAT_PREFERENCE = ("asciidoc", "markdown", "html", "info", "man", "text", "pdf")
"""Which format of one document is indexed: the source with structure before what was generated
from it, unless the generated one is markedly more complete (see ``pick_source``)."""
_COMPLETE_ENOUGH = 0.85
_WORD = re.compile(r"[^\W_]{3,}")


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """Reported after each file: ``done`` of ``total`` files handled so far."""

    done: int
    total: int
    path: str
    status: str
    """``added``, ``updated``, ``unchanged``, ``skipped`` or ``duplicate`` (the same document
    is indexed from another format of it)."""


@dataclass(slots=True)
class IngestReport:
    root: str
    corpus: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    duplicates: list[SkippedFile] = field(default_factory=list)
    """Files left out because the same document is indexed from another format of it."""
    warnings: list[SkippedFile] = field(default_factory=list)
    """Files indexed with a caveat, e.g. text that was not UTF-8 and was decoded as cp1252."""
    chunks: int = 0
    """Chunks the corpus holds for this folder after the ingest."""
    seconds: float = 0.0

    def summary(self) -> str:
        """A few lines for people: counts, then each distinct skip reason with its files."""
        lines = [
            f"corpus '{self.corpus}' from {self.root}: {len(self.added)} added, "
            f"{len(self.updated)} updated, {len(self.unchanged)} unchanged, "
            f"{len(self.removed)} removed, {len(self.skipped)} skipped, "
            f"{len(self.duplicates)} duplicates; {self.chunks} chunks ({self.seconds:.1f} s)"
        ]
        by_reason = Counter(s.reason for s in self.skipped)
        for reason, count in by_reason.most_common():
            files = [s.path for s in self.skipped if s.reason == reason]
            shown = ", ".join(files[:3]) + (f" and {count - 3} more" if count > 3 else "")
            lines.append(f"  skipped {shown}: {reason}")
        if any(s.reason.startswith("unsupported format") for s in self.skipped):
            lines.append(f"  (kforge reads {SUPPORTED})")
        if self.duplicates:
            shown = ", ".join(d.path for d in self.duplicates[:3])
            more = len(self.duplicates) - 3
            lines.append(
                f"  not indexed twice: {shown}{f' and {more} more' if more > 0 else ''} "
                "(the same document in another format is indexed instead)"
            )
        lines += [f"  warning: {w.path}: {w.reason}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "corpus": self.corpus,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "duplicates": [{"path": d.path, "reason": d.reason} for d in self.duplicates],
            "warnings": [{"path": w.path, "reason": w.reason} for w in self.warnings],
            "chunks": self.chunks,
            "seconds": round(self.seconds, 3),
        }


def _read_inside(path: os.PathLike[str], root: str) -> bytes:
    """Read a file after checking again that it still resolves inside ``root``."""
    real = os.path.realpath(path)
    if os.path.commonpath([real, root]) != root:
        raise ExtractionError("symbolic link pointing outside the folder: refused")
    with open(real, "rb") as handle:
        return handle.read()


def word_overlap(a: str, b: str) -> float:
    """Share of the smaller text's distinct words (3+ letters, any case) found in the other."""
    words_a = {w.lower() for w in _WORD.findall(a)}
    words_b = {w.lower() for w in _WORD.findall(b)}
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / min(len(words_a), len(words_b))


def pick_source(documents: dict[str, ExtractedDocument]) -> tuple[str, list[str]]:
    """Of files holding one stem's documents, the one to index and those that are the same
    document (by ``word_overlap``) and so are left out.

    The source with structure (AsciiDoc, Markdown) is preferred over HTML generated from it,
    unless the other holds markedly more words (HTML built with the source's ``include::``
    files resolved): the more complete text wins then.
    """

    def size(rel: str) -> int:
        return len(set(_WORD.findall(documents[rel].text.lower())))

    def rank(rel: str) -> int:
        fmt = documents[rel].format
        return (
            _FORMAT_PREFERENCE.index(fmt) if fmt in _FORMAT_PREFERENCE else len(_FORMAT_PREFERENCE)
        )

    built = [rel for rel in documents if not _SPHINX_SOURCE.match(rel)]
    if built and len(built) < len(documents):
        # a Sphinx build's copy of a page's source is that page, unrendered (its directives
        # and markup as typed): the page is indexed, whatever the copy's words
        copies = [rel for rel in documents if rel not in built]
        if len(built) == 1:
            return built[0], copies
        best, same = pick_source({rel: documents[rel] for rel in built})
        return best, sorted([*same, *copies])
    largest = max(size(rel) for rel in documents)
    complete = [rel for rel in documents if size(rel) >= _COMPLETE_ENOUGH * largest]
    best = min(complete, key=lambda rel: (rank(rel), rel))
    same = [
        rel
        for rel in sorted(documents)
        if rel != best
        and word_overlap(documents[rel].text, documents[best].text) >= SAME_DOCUMENT_OVERLAP
    ]
    return best, same


def _extract_file(rel: str, data: bytes) -> ExtractedDocument | str:
    """The extracted document, or the reason the file cannot be read."""
    try:
        return extract(rel, data)
    except ExtractionError as exc:
        return str(exc)
    except Exception as exc:  # a reader bug on one odd file must not stop the whole ingest
        return f"could not be read ({type(exc).__name__}: {exc})"


def _stem_groups(files: list[ScannedFile]) -> dict[str, list[ScannedFile]]:
    """Files sharing a folder and a stem (``git-add.txt``, ``git-add.html``), by each member.
    A Sphinx build's copy of a page's source counts as in the page's folder:
    ``_sources/command/add_library.rst.txt`` beside ``command/add_library.html``."""
    by_stem: dict[tuple[str, str], list[ScannedFile]] = {}
    for found in files:
        folder, _, name = found.relative.rpartition("/")
        source = _SPHINX_SOURCE.match(found.relative)
        if source:
            folder, _, name = (source.group(1) + source.group(2)).rpartition("/")
            name = name + ".txt"
        name = plain_name(name).name
        stem = name if _INFO_PART.match(name) else name.rsplit(".", 1)[0]
        by_stem.setdefault((folder, stem.lower()), []).append(found)
    return {f.relative: group for group in by_stem.values() if len(group) > 1 for f in group}


_INFO_PART = re.compile(r".+\.info-[0-9]+$")
"""One part of an Info manual split in several files (``gnupg.info-1``, ``gnupg.info-2``): not
another format of the same document as its sibling parts."""
_SPHINX_SOURCE = re.compile(r"^(|.*/)_sources/(.+?)(?:\.rst|\.md|\.txt)?\.txt$")
"""A page's source as Sphinx copies it beside the built HTML, and the path it has there."""


_SPHINX_MODULE_PAGE = re.compile(r"^(|.*/)_modules/.+\.html?$")
_MODULE_LISTING_MARKS = (
    b"viewcode-block",
    b"<h1>Source code for ",
    b"<h1>All modules for which code is available</h1>",
)
MODULE_LISTING = (
    "a Sphinx build's highlighted copy of a module's source code (viewcode), not documentation"
)


def is_module_listing(rel: str, data: bytes) -> bool:
    """Whether ``rel`` is a page Sphinx's ``viewcode`` extension writes under ``_modules/``: a
    module's source code, highlighted, or the list of those pages. Its docstrings are the
    documentation pages' text again, as typed (``:arg float timeout:``), beside the code."""
    return bool(_SPHINX_MODULE_PAGE.match(rel)) and any(m in data for m in _MODULE_LISTING_MARKS)


_SPHINX_INDEX_PAGE = re.compile(r"^(|.*/)(?:genindex(?:-[\w-]+)?|py-modindex|search)\.html?$")
_INDEX_PAGE_MARKS = (b'class="indextable', b'class="genindextable', b"searchindex.js")
INDEX_PAGE = "a Sphinx build's generated index or search page, not documentation"


def is_index_page(rel: str, data: bytes) -> bool:
    """Whether ``rel`` is the general index, module index or search page a Sphinx build writes
    (``genindex.html``, ``py-modindex.html``, ``search.html``): names in alphabetical runs
    ("--capture command line option --color command line option ..."), matching every
    question that names one, and saying nothing of them."""
    return bool(_SPHINX_INDEX_PAGE.match(rel)) and any(m in data for m in _INDEX_PAGE_MARKS)


class IndexedSummary(Protocol):
    """What ingestion reads of a source already in the corpus."""

    @property
    def key(self) -> str: ...

    @property
    def root(self) -> str: ...

    @property
    def chunks(self) -> int: ...


class IngestTarget(Protocol):
    """What ``ingest_folder`` needs of a corpus; ``kforge.rag.corpus.Corpus`` is one."""

    name: str
    embedder: Embedder | None

    def sources(self) -> Sequence[IndexedSummary]: ...

    def source_record(self, key: str) -> SourceRecord | None: ...

    def save_sources(self, records: Sequence[SourceRecord]) -> None: ...

    def remove_sources(self, keys: Iterable[str]) -> None: ...

    def embed_missing(self) -> int: ...

    def touch(self, *, root: str | None = None) -> None: ...


class _Ingest:
    """One pass of ``ingest_folder``: what each file becomes, written as it goes."""

    def __init__(
        self, corpus: IngestTarget, root: str, options: ChunkingOptions, report: IngestReport
    ):
        self.corpus = corpus
        self.root = root
        self.options = options
        self.report = report
        self.kept: set[str] = set()
        self.decided: dict[str, str] = {}
        """Status of files already handled with the others of their stem."""

    def key(self, found: ScannedFile) -> str:
        return (Path(self.root) / found.relative).as_posix()

    def read(self, found: ScannedFile) -> bytes | None:
        try:
            data = _read_inside(found.path, self.root)
        except (OSError, ExtractionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.report.skipped.append(SkippedFile(found.relative, f"unreadable ({reason})"))
            return None
        if is_module_listing(found.relative, data):
            self.report.skipped.append(SkippedFile(found.relative, MODULE_LISTING))
            return None
        if is_index_page(found.relative, data):
            self.report.skipped.append(SkippedFile(found.relative, INDEX_PAGE))
            return None
        return data

    def current(self, found: ScannedFile, sha: str, duplicates: dict[str, str]) -> bool:
        """Whether the stored record of ``found`` is up to date; marks it kept if so."""
        old = self.corpus.source_record(self.key(found))
        if (
            old is None
            or old.sha256 != sha
            or old.chunking != self.options.key
            or old.analyzer != ANALYZER_VERSION
            or old.extraction != EXTRACTION_VERSION
            or old.duplicates != duplicates
        ):
            return False
        self.report.unchanged.append(found.relative)
        self.kept.add(self.key(found))
        return True

    def save(
        self,
        found: ScannedFile,
        data: bytes,
        document: ExtractedDocument | str,
        duplicates: dict[str, str],
    ) -> str:
        if isinstance(document, str):
            self.report.skipped.append(SkippedFile(found.relative, document))
            return "skipped"
        key = self.key(found)
        record = build_source(
            key=key,
            root=self.root,
            file=found.relative,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            document=document,
            options=self.options,
        )
        if not record.chunks:
            self.report.skipped.append(SkippedFile(found.relative, "no text found"))
            return "skipped"
        record.duplicates = duplicates
        encoding = document.extra.get("encoding")
        if encoding:
            self.report.warnings.append(
                SkippedFile(
                    found.relative,
                    f"not UTF-8; read as {encoding} (convert it to UTF-8 if a character looks "
                    "wrong)",
                )
            )
        old = self.corpus.source_record(key)
        self.corpus.save_sources([record])
        (self.report.added if old is None else self.report.updated).append(found.relative)
        self.kept.add(key)
        return "added" if old is None else "updated"

    def single(self, found: ScannedFile) -> str:
        data = self.read(found)
        if data is None:
            return "skipped"
        if self.current(found, hashlib.sha256(data).hexdigest(), {}):
            return "unchanged"
        return self.save(found, data, _extract_file(found.relative, data), {})

    def group(self, members: list[ScannedFile]) -> None:
        """Files of one stem: the same document is indexed once, from the best of them."""
        contents = {m.relative: (m, data) for m in members if (data := self.read(m)) is not None}
        for m in members:
            self.decided.setdefault(m.relative, "skipped")
        shas = {rel: hashlib.sha256(data).hexdigest() for rel, (_, data) in contents.items()}
        for rel, (found, _) in contents.items():
            old = self.corpus.source_record(self.key(found))
            if old is None or not old.duplicates or set(old.duplicates) - set(shas):
                continue
            if self.current(found, shas[rel], {d: shas[d] for d in old.duplicates}):
                self.decided[rel] = "unchanged"
                for other in old.duplicates:
                    self.duplicate(other, rel)
                self.rest(contents, {rel, *old.duplicates})
                return
        documents = {rel: _extract_file(rel, data) for rel, (_, data) in contents.items()}
        readable = {r: d for r, d in documents.items() if not isinstance(d, str)}
        done: set[str] = set()
        if len(readable) > 1:
            best, same = pick_source(readable)
            if same:
                found, data = contents[best]
                duplicates = {d: shas[d] for d in same}
                if self.current(found, shas[best], duplicates):
                    self.decided[best] = "unchanged"
                else:
                    self.decided[best] = self.save(found, data, readable[best], duplicates)
                for other in same:
                    self.duplicate(other, best)
                done = {best, *same}
        for rel, (found, data) in contents.items():
            if rel not in done:
                if self.current(found, shas[rel], {}):
                    self.decided[rel] = "unchanged"
                else:
                    self.decided[rel] = self.save(found, data, documents[rel], {})

    def rest(self, contents: dict[str, tuple[ScannedFile, bytes]], done: set[str]) -> None:
        for rel, (found, _) in contents.items():
            if rel not in done:
                self.decided[rel] = self.single(found)

    def duplicate(self, rel: str, kept: str) -> None:
        self.decided[rel] = "duplicate"
        self.report.duplicates.append(SkippedFile(rel, f"the same document as {kept}"))


def ingest_folder(
    corpus: IngestTarget,
    folder: str | os.PathLike[str],
    *,
    chunking: ChunkingOptions | None = None,
    progress: Callable[[IngestProgress], None] | None = None,
) -> IngestReport:
    """Index every supported file under ``folder`` into ``corpus``.

    A file whose content hash, extraction, chunking and analyzer are unchanged is not read
    again. A document present in several formats (same folder and stem, same text; a Sphinx
    build's ``_sources`` copy beside its page) is indexed once, from the best of them (see
    ``pick_source``); the others are listed in ``duplicates``. Files that vanished are
    removed; files that cannot be read are reported in ``skipped`` (and any earlier version of
    them is removed), never raised. Each file is
    written on its own, so an interrupted ingest keeps what it finished.
    """
    started = time.perf_counter()
    options = chunking or ChunkingOptions()
    scan = scan_folder(folder)
    root = str(scan.root)
    report = IngestReport(root=root, corpus=corpus.name, skipped=list(scan.skipped))
    previous = {s.key for s in corpus.sources() if s.root == root}
    run = _Ingest(corpus, root, options, report)
    groups = _stem_groups(scan.files)
    total = len(scan.files)
    for done, found in enumerate(scan.files, start=1):
        if found.relative not in run.decided:
            if found.relative in groups:
                run.group(groups[found.relative])
            else:
                run.decided[found.relative] = run.single(found)
        if progress is not None:
            progress(IngestProgress(done, total, found.relative, run.decided[found.relative]))
    gone = sorted(previous - run.kept)
    skipped_paths = {s.path for s in report.skipped}
    for key in gone:
        record = corpus.source_record(key)
        if record is None:
            continue
        if record.file in skipped_paths:
            report.skipped = [
                SkippedFile(s.path, f"{s.reason}; its earlier version was dropped from the index")
                if s.path == record.file
                else s
                for s in report.skipped
            ]
        elif record.file not in {d.path for d in report.duplicates}:
            report.removed.append(record.file)
    corpus.remove_sources(gone)
    if corpus.embedder is not None:
        corpus.embed_missing()
    corpus.touch(root=root)
    report.chunks = sum(s.chunks for s in corpus.sources() if s.root == root)
    report.skipped.sort(key=lambda s: s.path)
    report.duplicates.sort(key=lambda s: s.path)
    report.seconds = time.perf_counter() - started
    return report
