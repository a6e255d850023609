"""``kforge corpora``: list, show and remove corpora; and which corpus a command reads.

A folder given with ``--docs`` is indexed into the corpus made from that folder (see
``kforge.rag.catalog``); ``--corpus NAME`` alone reads that corpus as it is; with neither, the
sample documents shipped with kforge are used.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from kforge.errors import ConfigurationError
from kforge.rag.catalog import corpus_info, folder_corpus_name
from kforge.rag.corpus import Corpus, drop_corpus, list_corpora
from kforge.rag.samples import SAMPLE_CORPUS, sample_corpus_path
from kforge.store.passages import PassageStore

__all__ = ["choose_corpus", "index_folder", "register", "require_corpus"]


def register(subparsers: Any) -> None:
    corpora = subparsers.add_parser(
        "corpora",
        help="list, show and remove the corpora kept in the database",
        description="Corpora are the indexed document collections in the database. Each folder "
        "gets its own corpus, named after it ('docs', then 'docs-2' for another folder called "
        "'docs'); 'samples' holds the documents shipped with kforge.",
    )
    sub = corpora.add_subparsers(
        dest="corpora_command", metavar="SUBCOMMAND", required=True, help="what to do"
    )
    p = sub.add_parser("list", help="every corpus with its folder and counts")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("show", help="a corpus's folder, counts and documents")
    p.add_argument("name", metavar="NAME", help="corpus name (see: kforge corpora list)")
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("remove", help="delete a corpus and its index (the files stay)")
    p.add_argument("name", metavar="NAME", help="corpus name (see: kforge corpora list)")
    p.set_defaults(func=cmd_remove)


def require_corpus(
    store: PassageStore,
    name: str,
    args: argparse.Namespace | None = None,
    *,
    to_remove: bool = False,
) -> dict[str, Any]:
    """The corpus record of ``name``; a ConfigurationError listing the corpora when unknown
    (suggesting to index a folder into it, unless it was named ``to_remove``)."""
    from kforge.cli._common import command_hint

    info = corpus_info(store, name)
    if info is None:
        known = ", ".join(str(c.get("name")) for c in list_corpora(store)) or "none yet"
        if to_remove:
            raise ConfigurationError(
                f"no corpus named '{name}', so nothing was removed (corpora: {known})"
            )
        ingest = command_hint(args or argparse.Namespace(), f"ingest DIR --corpus {name}")
        raise ConfigurationError(
            f"no corpus named '{name}' (corpora: {known}); index a folder into it with: {ingest}"
        )
    return info


def index_folder(store: PassageStore, corpus: Corpus, folder: Path, out: TextIO) -> None:
    """Bring ``corpus`` in line with ``folder``; an error when the folder holds no documents."""
    from kforge.cli.ingest import progress_printer

    if not folder.is_dir():
        raise ConfigurationError(f"--docs {folder}: not a folder")
    report = corpus.ingest(folder, progress=progress_printer(out, quiet=True))
    print(report.summary(), file=out, flush=True)
    if report.chunks == 0:
        if not corpus.sources():
            drop_corpus(store, corpus.name)
        from kforge.rag.extract.document import SUPPORTED

        raise ConfigurationError(f"no readable documents in {folder} (kforge reads {SUPPORTED})")


def choose_corpus(
    rt: Any, args: argparse.Namespace, out: TextIO, *, remembered: str | None = None
) -> str:
    """The corpus a command reads: ``--docs`` (indexed first), else ``--corpus`` as it is, else
    ``remembered`` (a session's), else the samples. Returns its name."""
    store: PassageStore = rt.store
    docs, name = getattr(args, "docs", None), getattr(args, "corpus", None)
    if docs:
        folder = Path(docs)
        if not folder.is_dir():
            raise ConfigurationError(f"--docs {folder}: not a folder")
        name = name or folder_corpus_name(store, folder)
        index_folder(store, rt.services.corpus(name), folder, out)
        return str(name)
    if name and not (name == SAMPLE_CORPUS and corpus_info(store, name) is None):
        require_corpus(store, name, args)
        return str(name)
    if remembered and not name and corpus_info(store, remembered) is not None:
        return remembered
    samples = rt.services.corpus(SAMPLE_CORPUS)
    folder = sample_corpus_path()
    index_folder(store, samples, folder, out)
    # an upgrade or a new virtualenv moves the package: keep only the samples found here
    here = str(folder.resolve())
    elsewhere = [s.key for s in samples.sources() if s.root != here]
    if elsewhere:
        samples.remove_sources(elsewhere)
        samples.touch(root=here)
    return SAMPLE_CORPUS


def cmd_list(args: argparse.Namespace) -> int:
    from kforge.cli._common import command_hint, open_store

    corpora = list_corpora(open_store(args))
    if not corpora:
        print(f"no corpora yet; index a folder with: {command_hint(args, 'ingest DIR')}")
        return 0
    print(f"{'NAME':<24} {'SOURCES':>7} {'CHUNKS':>7}  {'UPDATED (UTC)':<19}  FOLDER")
    for c in corpora:
        roots = ", ".join(c.get("roots") or []) or "-"
        updated = str(c.get("updated_at", ""))[:19].replace("T", " ")
        print(
            f"{c.get('name', ''):<24} {c.get('sources', 0):>7} {c.get('chunks', 0):>7}  "
            f"{updated:<19}  {roots}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from kforge.cli._common import open_store

    store = open_store(args)
    info = require_corpus(store, args.name, args)
    print(f"corpus     {args.name}")
    for root in info.get("roots") or []:
        print(f"folder     {root}")
    print(f"sources    {info.get('sources', 0)}")
    print(f"chunks     {info.get('chunks', 0)}")
    print(f"created    {info.get('created_at', '')}  updated {info.get('updated_at', '')}")
    corpus = Corpus.open(store, args.name)
    stale = corpus.stale_warning()
    if stale:
        print(f"warning    {stale}")
    for source in corpus.sources():
        print(f"  {source.file}  ({source.format}, {source.chunks} chunks)  {source.title}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from kforge.cli._common import open_store

    store = open_store(args)
    info = require_corpus(store, args.name, args, to_remove=True)
    drop_corpus(store, args.name)
    print(f"removed corpus '{args.name}' ({info.get('sources', 0)} sources; the files stay)")
    return 0
