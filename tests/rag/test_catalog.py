"""Corpus names derived from folders: one corpus per resolved folder, readable and unique."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.catalog import folder_corpus_name, name_from_folder
from kforge.rag.corpus import Corpus
from kforge.store import MemoryStore


def test_names_are_readable() -> None:
    assert name_from_folder("/x/My Docs") == "My-Docs"
    assert name_from_folder("/x/..hidden") == "hidden"
    assert name_from_folder("/x/___") == "___"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["docs", "notes", "samples", "My Docs"]), min_size=1, max_size=6))
def test_every_folder_gets_its_own_stable_name(basenames: list[str]) -> None:
    """For any folders, however their basenames collide: distinct folders get distinct names,
    the same folder always gets the same one, and no folder takes the samples' name."""
    store = MemoryStore()
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for i, base in enumerate(basenames):
            folder = Path(tmp) / str(i) / base
            folder.mkdir(parents=True)
            folders.append(folder)
            name = folder_corpus_name(store, folder)
            Corpus.open(store, name).touch(root=str(folder.resolve()))
        names = [folder_corpus_name(store, f) for f in folders]
    assert len(set(names)) == len(folders)
    assert "samples" not in names
    assert all(
        n == name_from_folder(f) or n.startswith(name_from_folder(f) + "-")
        for n, f in zip(names, folders, strict=True)
    )
