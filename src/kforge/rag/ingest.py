"""Bring a corpus in line with a folder: add new files, re-read changed ones, drop deleted ones."""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kforge.rag.analyze import ANALYZER_VERSION
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.extract import ExtractionError, extract
from kforge.rag.records import SourceRecord, build_source
from kforge.rag.scan import SkippedFile, scan_folder

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus

__all__ = ["IngestProgress", "IngestReport", "ingest_folder"]


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """Reported after each file: ``done`` of ``total`` files handled so far."""

    done: int
    total: int
    path: str
    status: str
    """``added``, ``updated``, ``unchanged`` or ``skipped``."""


@dataclass(slots=True)
class IngestReport:
    root: str
    corpus: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
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
            f"{len(self.removed)} removed, {len(self.skipped)} skipped; "
            f"{self.chunks} chunks ({self.seconds:.1f} s)"
        ]
        by_reason = Counter(s.reason for s in self.skipped)
        for reason, count in by_reason.most_common():
            files = [s.path for s in self.skipped if s.reason == reason]
            shown = ", ".join(files[:3]) + (f" and {count - 3} more" if count > 3 else "")
            lines.append(f"  skipped {shown}: {reason}")
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


def _load_record(
    key: str,
    root: str,
    rel: str,
    data: bytes,
    options: ChunkingOptions,
    warnings: list[SkippedFile] | None = None,
) -> SourceRecord | str:
    """A new record for the file, or the reason it cannot be read."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        document = extract(rel, data)
    except ExtractionError as exc:
        return str(exc)
    except Exception as exc:  # a reader bug on one odd file must not stop the whole ingest
        return f"could not be read ({type(exc).__name__}: {exc})"
    record = build_source(
        key=key, root=root, file=rel, sha256=sha, size=len(data), document=document, options=options
    )
    if not record.chunks:
        return "no text found"
    encoding = document.extra.get("encoding")
    if encoding and warnings is not None:
        warnings.append(
            SkippedFile(
                rel,
                f"not UTF-8; read as {encoding} (convert it to UTF-8 if a character looks wrong)",
            )
        )
    return record


def ingest_folder(
    corpus: Corpus,
    folder: str | os.PathLike[str],
    *,
    chunking: ChunkingOptions | None = None,
    progress: Callable[[IngestProgress], None] | None = None,
) -> IngestReport:
    """Index every supported file under ``folder`` into ``corpus``.

    A file whose content hash, chunking and analyzer are unchanged is not read again. Files
    that vanished are removed; files that cannot be read are reported in ``skipped`` (and any
    earlier version of them is removed), never raised. Each file is written on its own, so an
    interrupted ingest keeps what it finished.
    """
    started = time.perf_counter()
    options = chunking or ChunkingOptions()
    scan = scan_folder(folder)
    root = str(scan.root)
    report = IngestReport(root=root, corpus=corpus.name, skipped=list(scan.skipped))
    previous = {s.key for s in corpus.sources() if s.root == root}
    kept: set[str] = set()
    total = len(scan.files)
    for done, found in enumerate(scan.files, start=1):
        key = (scan.root / found.relative).as_posix()
        old = corpus.source_record(key)
        status = "skipped"
        try:
            data = _read_inside(found.path, root)
        except (OSError, ExtractionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            report.skipped.append(SkippedFile(found.relative, f"unreadable ({reason})"))
            data = None
        if data is not None:
            sha = hashlib.sha256(data).hexdigest()
            if (
                old is not None
                and old.sha256 == sha
                and old.chunking == options.key
                and old.analyzer == ANALYZER_VERSION
            ):
                status = "unchanged"
                report.unchanged.append(found.relative)
                kept.add(key)
            else:
                loaded = _load_record(key, root, found.relative, data, options, report.warnings)
                if isinstance(loaded, str):
                    report.skipped.append(SkippedFile(found.relative, loaded))
                else:
                    corpus.save_sources([loaded])
                    status = "added" if old is None else "updated"
                    (report.added if old is None else report.updated).append(found.relative)
                    kept.add(key)
        if progress is not None:
            progress(IngestProgress(done, total, found.relative, status))
    gone = sorted(previous - kept)
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
        else:
            report.removed.append(record.file)
    corpus.remove_sources(gone)
    if corpus.embedder is not None:
        corpus.embed_missing()
    corpus.touch(root=root)
    report.chunks = sum(s.chunks for s in corpus.sources() if s.root == root)
    report.skipped.sort(key=lambda s: s.path)
    report.seconds = time.perf_counter() - started
    return report
