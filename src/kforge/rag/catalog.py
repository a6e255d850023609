"""The corpora of a passage store: ``Corpora`` opens them by name, once per process, and a
folder's corpus is found by the resolved folder it was made from, named after it readably
(``docs``, ``docs-2`` for a second folder also called ``docs``)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kforge.rag.records import CORPORA_NAMESPACE
from kforge.rag.samples import SAMPLE_CORPUS
from kforge.store.passages import PassageStore

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus
    from kforge.store.documents import DocumentStore

__all__ = ["Corpora", "corpora_in", "corpus_info", "folder_corpus_name", "name_from_folder"]


class Corpora:
    """Opens the document corpora kept in ``store``, once per process (``CorpusSource``)."""

    def __init__(self, store: PassageStore) -> None:
        self.store = store
        """Where the corpora are kept."""
        self._open: dict[str, Corpus] = {}

    def open(self, name: str) -> Corpus:
        corpus = self._open.get(name)
        if corpus is None:
            from kforge.rag.corpus import Corpus
            from kforge.rag.embedders import recorded_embedder

            # a corpus ingested with vectors is searched hybrid (BM25 fused with them)
            embedder = recorded_embedder(self.store, name)
            corpus = Corpus.open(self.store, name, embedder=embedder)
            self._open[name] = corpus
        return corpus

    def forget(self, name: str) -> None:
        """Drop a cached corpus so the next ``open`` reloads it (after an ingest elsewhere)."""
        self._open.pop(name, None)


def corpora_in(store: object) -> Corpora | None:
    """The corpora of ``store`` when it is also a passage store (as every built-in store is),
    else None: a run log of one's own holds no corpora."""
    return Corpora(store) if isinstance(store, PassageStore) else None


def name_from_folder(folder: str | os.PathLike[str]) -> str:
    """A readable corpus name from a folder's basename (``My Docs`` → ``My-Docs``)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(folder).resolve().name).strip("-.") or "docs"
    return name[:60]


def corpus_info(store: DocumentStore, name: str) -> dict[str, Any] | None:
    """What ``rag/corpora`` holds about corpus ``name`` (roots, counts, times), or None."""
    return store.get_docs(CORPORA_NAMESPACE, [name]).get(name)


def folder_corpus_name(
    store: DocumentStore, folder: str | os.PathLike[str], *, reserved: str | None = SAMPLE_CORPUS
) -> str:
    """The corpus made from ``folder``: the existing one whose only root it is, else a new name
    derived from its basename with a ``-2``, ``-3`` … suffix when another folder has that name.

    ``reserved`` (the samples' name) is never given to a folder that is not already its root.
    """
    root = str(Path(folder).resolve())
    corpora = store.get_docs(CORPORA_NAMESPACE)
    for name, meta in sorted(corpora.items()):
        if list(meta.get("roots") or []) == [root]:
            return name
    base = name_from_folder(folder)
    candidate, n = base, 1
    while candidate in corpora or candidate == reserved:
        n += 1
        candidate = f"{base}-{n}"
    return candidate
