"""Which corpus holds a folder: a corpus is identified by the resolved folder it was made from,
and named after it readably (``docs``, ``docs-2`` for a second folder also called ``docs``)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kforge.rag.records import CORPORA_NAMESPACE
from kforge.rag.samples import SAMPLE_CORPUS

if TYPE_CHECKING:
    from kforge.store.base import Store

__all__ = ["corpus_info", "folder_corpus_name", "name_from_folder"]


def name_from_folder(folder: str | os.PathLike[str]) -> str:
    """A readable corpus name from a folder's basename (``My Docs`` → ``My-Docs``)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(folder).resolve().name).strip("-.") or "docs"
    return name[:60]


def corpus_info(store: Store, name: str) -> dict[str, Any] | None:
    """What ``rag/corpora`` holds about corpus ``name`` (roots, counts, times), or None."""
    return store.get_docs(CORPORA_NAMESPACE, [name]).get(name)


def folder_corpus_name(
    store: Store, folder: str | os.PathLike[str], *, reserved: str | None = SAMPLE_CORPUS
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
