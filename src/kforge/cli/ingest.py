"""``kforge ingest DIR``: index a folder of documents into a named corpus."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import DEFAULT_CORPUS, Corpus
from kforge.rag.ingest import IngestProgress

__all__ = ["register", "run_ingest"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="index a folder of documents (Markdown, text, HTML, PDF) for search",
        description=(
            "Index every Markdown, text, HTML and PDF file under DIR into a corpus kept in the "
            "database. Run it again after editing files: only changed files are read again, "
            "and deleted files are dropped."
        ),
    )
    parser.add_argument("dir", metavar="DIR", help="folder of documents")
    parser.add_argument(
        "--corpus",
        default=DEFAULT_CORPUS,
        metavar="NAME",
        help=f"corpus name (default: {DEFAULT_CORPUS})",
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
        help="also compute MiniLM vectors for hybrid search (needs the 'dense' extra)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run_ingest)


def _progress_printer(stream: Any) -> Any:
    interactive = bool(getattr(stream, "isatty", lambda: False)())

    def show(p: IngestProgress) -> None:
        if interactive:
            line = f"[{p.done}/{p.total}] {p.status:<9} {p.path}"
            print(
                f"\r\x1b[2K{line[:120]}",
                end="" if p.done < p.total else "\n",
                file=stream,
                flush=True,
            )
        elif p.done == p.total or p.done % 50 == 0:
            print(f"ingest: {p.done}/{p.total} files", file=stream, flush=True)

    return show


def run_ingest(args: argparse.Namespace) -> int:
    from kforge.store.sqlite import SQLiteStore

    try:
        options = ChunkingOptions(max_chars=args.max_chars)
    except ValueError as exc:
        print(f"kforge ingest: {exc}", file=sys.stderr)
        return 2
    embedder = None
    if args.dense:
        from kforge.rag.dense import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    store = SQLiteStore(getattr(args, "db", None))
    try:
        corpus = Corpus.open(store, args.corpus, embedder=embedder)
        report = corpus.ingest(args.dir, chunking=options, progress=_progress_printer(sys.stderr))
    finally:
        store.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.summary())
    return 0
