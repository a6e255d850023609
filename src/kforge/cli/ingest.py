"""``kforge ingest DIR``: index a folder of documents into a named corpus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kforge import jsoncodec
from kforge.cli._common import UsageError
from kforge.errors import ConfigurationError, MissingExtraError
from kforge.rag.catalog import folder_corpus_name
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus, drop_corpus
from kforge.rag.embedders import EMBEDDERS, make_embedder
from kforge.rag.ingest import IngestProgress

__all__ = ["progress_line", "progress_printer", "register", "run_ingest"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help=(
            "index a folder of documents (Markdown, text, AsciiDoc, HTML, PDF, man pages, Info "
            "manuals) for search"
        ),
        description=(
            "Index every Markdown, text, AsciiDoc, HTML, PDF, manual page (.1 to .9) and GNU "
            "Info manual (.info, and the parts of a split one: .info-1, .info-2) under DIR into "
            "a corpus kept in the database, with text files named in capitals (README, FAQ) "
            "and any of these compressed with gzip (HSTS.md.gz, ls.1.gz, grep.info.gz: as "
            "Debian ships /usr/share/doc, /usr/share/man and /usr/share/info). Run it again "
            "after editing files: only changed files are read again, deleted files are "
            "dropped, and files extracted by an older kforge are extracted again. A document "
            "present in several formats (git-add.txt and git-add.html) is indexed once. A "
            "Sphinx build's _sources copies are left out beside the pages built from them, and "
            "so are its _modules pages (a module's source code, highlighted, whose docstrings "
            "the pages already give) and its generated index and search pages (genindex.html, "
            "py-modindex.html, search.html)."
        ),
    )
    parser.add_argument("dir", metavar="DIR", help="folder of documents")
    parser.add_argument(
        "--corpus",
        metavar="NAME",
        help="corpus to index into (default: the folder's own corpus, named after the folder; "
        "a second folder with the same name gets 'NAME-2')",
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=ChunkingOptions().max_chars,
        metavar="N",
        help="longest passage in characters (default: %(default)s; 0 keeps sections whole)",
    )
    parser.add_argument(
        "--dense",
        action="store_true",
        help="also compute vectors: kforge ask then reorders the passages BM25 finds by their "
        "similarity to the question (MiniLM unless --embedder says otherwise)",
    )
    parser.add_argument(
        "--embedder",
        choices=sorted(EMBEDDERS),
        help="the vectors --dense computes (implies --dense): minilm (the 'dense' extra, PyTorch), "
        "minilm-onnx (the 'dense-onnx' extra: the same model on ONNX Runtime, no PyTorch) or "
        "wordllama (the 'dense-light' extra, no PyTorch)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run_ingest)


def progress_line(p: IngestProgress, width: int = 24) -> str:
    """``[#######.........]  12/36 added    notes/a.md``: one line of the terminal progress bar."""
    filled = width * p.done // max(p.total, 1)
    bar = "#" * filled + "." * (width - filled)
    digits = len(str(p.total))
    return f"[{bar}] {p.done:>{digits}}/{p.total} {p.status:<9} {p.path}"


_LOG_EVERY = 500
"""Off a terminal (a log, a pipe), a progress line only every this many files: a small
folder's summary line says it all."""


def progress_printer(stream: Any, *, quiet: bool = False) -> Any:
    """A progress callback: a bar on a terminal, else a line every 500 files of a folder
    that has more (none if ``quiet``)."""
    interactive = bool(getattr(stream, "isatty", lambda: False)())

    def show(p: IngestProgress) -> None:
        if quiet and not interactive:
            return
        if interactive:
            print(
                f"\r\x1b[2K{progress_line(p)[:120]}",
                end="" if p.done < p.total else "\n",
                file=stream,
                flush=True,
            )
        elif p.done % _LOG_EVERY == 0 and p.done < p.total:
            print(f"ingest: {p.done}/{p.total} files", file=stream, flush=True)

    return show


def run_ingest(args: argparse.Namespace) -> int:
    from kforge.store.open import open_store

    try:
        options = ChunkingOptions(max_chars=args.max_chars)
    except ValueError as exc:
        raise UsageError(f"--max-chars: {exc}") from None
    folder = Path(args.dir)
    embedder = None
    if args.dense or args.embedder:
        choice = args.embedder or "minilm"
        try:
            embedder = make_embedder(choice)
        except MissingExtraError:
            extra = EMBEDDERS[choice].extra
            raise ConfigurationError(
                f"--dense with the {choice} embedder needs the optional extra '{extra}': "
                f"pip install 'knowledge-forge[{extra}]'; or ingest without --dense (lexical "
                "search only)"
            ) from None
    store = open_store(getattr(args, "db", None))
    try:
        name = args.corpus or folder_corpus_name(store, folder)
        corpus = Corpus.open(store, name, embedder=embedder)
        report = corpus.ingest(folder, chunking=options, progress=progress_printer(sys.stderr))
        empty = report.chunks == 0
        if empty and not corpus.sources():
            drop_corpus(store, name)
    finally:
        store.close()
    if empty:  # said before any summary, which would read as a success
        from kforge.rag.extract.document import SUPPORTED

        raise ConfigurationError(
            f"no readable documents in {folder} (kforge reads {SUPPORTED}); nothing was indexed"
        )
    if args.json:
        print(jsoncodec.dumps(report.to_dict(), indent=True))
    else:
        print(report.summary())
    return 0
