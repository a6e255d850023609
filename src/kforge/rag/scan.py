"""Find the files to ingest under a folder without ever leaving it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kforge.errors import ConfigurationError
from kforge.rag.extract import format_of, plain_name

__all__ = [
    "MAX_FILE_BYTES",
    "FolderScan",
    "ScannedFile",
    "SkippedFile",
    "resolve_root",
    "scan_folder",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Files larger than this are skipped."""


@dataclass(frozen=True, slots=True)
class ScannedFile:
    path: Path
    """Absolute, resolved path: always inside the root."""
    relative: str
    """POSIX path relative to the root, as shown to people."""
    format: str


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    """Relative to the root."""
    reason: str


@dataclass(slots=True)
class FolderScan:
    root: Path
    files: list[ScannedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def resolve_root(folder: str | os.PathLike[str]) -> Path:
    """The folder as an absolute real path; raises ConfigurationError when it is not a folder."""
    path = Path(folder).expanduser()
    try:
        root = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ConfigurationError(
            f"cannot ingest '{folder}': no such folder; give the path of a folder of documents"
        ) from None
    if not root.is_dir():
        raise ConfigurationError(
            f"cannot ingest '{folder}': not a folder; give the folder that holds the documents"
        )
    return root


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def scan_folder(folder: str | os.PathLike[str]) -> FolderScan:
    """Every supported file under ``folder``, sorted; what cannot be taken is listed with why.

    Hidden files and folders (name starting with ``.``) are ignored silently. Symbolic links
    are followed only when their target is inside the folder; links to folders are not
    followed (their files are reached through the real folder, if it is inside).
    """
    root = resolve_root(folder)
    scan = FolderScan(root)

    def on_error(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else root
        rel = where.relative_to(root).as_posix() if _inside(where, root) else str(where)
        scan.skipped.append(SkippedFile(rel or ".", f"folder unreadable ({exc.strerror or exc})"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=False):
        here = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            sub = here / name
            if sub.is_symlink():
                scan.skipped.append(
                    SkippedFile(
                        sub.relative_to(root).as_posix(), "symbolic link to a folder: not followed"
                    )
                )
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            _consider(here / name, root, scan)
    scan.files.sort(key=lambda f: f.relative)
    scan.skipped.sort(key=lambda s: s.path)
    return scan


def _consider(path: Path, root: Path, scan: FolderScan) -> None:
    rel = path.relative_to(root).as_posix()
    fmt = format_of(path)
    if fmt is None:
        inner = plain_name(path)
        what = f"unsupported format '{inner.suffix or '(none)'}'"
        if inner != path:
            what += " in a gzip file"
        scan.skipped.append(SkippedFile(rel, what))  # the summary lists what is read, once
        return
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        scan.skipped.append(SkippedFile(rel, "broken symbolic link"))
        return
    if not _inside(real, root):
        scan.skipped.append(SkippedFile(rel, "symbolic link pointing outside the folder: refused"))
        return
    try:
        info = real.stat()
    except OSError as exc:
        scan.skipped.append(SkippedFile(rel, f"unreadable ({exc.strerror or exc})"))
        return
    if not path.is_file():
        scan.skipped.append(SkippedFile(rel, "not a regular file"))
        return
    if info.st_size > MAX_FILE_BYTES:
        scan.skipped.append(
            SkippedFile(
                rel,
                f"too large ({info.st_size // 1_048_576} MiB; the limit is "
                f"{MAX_FILE_BYTES // 1_048_576} MiB)",
            )
        )
        return
    scan.files.append(ScannedFile(real, rel, fmt))
