"""The embedders a corpus is ingested with, and hybrid search for a corpus that holds vectors."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from kforge.cli import main
from kforge.errors import ConfigurationError
from kforge.extras import extra_installed
from kforge.rag.catalog import Corpora
from kforge.rag.corpus import Corpus
from kforge.rag.embedders import EMBEDDERS, make_embedder
from kforge.store.sqlite import SQLiteStore

needs_wordllama = pytest.mark.skipif(
    not extra_installed("dense-light"),
    reason="the 'dense-light' extra (wordllama) is not installed: "
    "pip install 'knowledge-forge[dense-light]'",
)

DOCS = {
    "limits.md": "# Bounded execution\n\nEvery run has a step budget and a maximum number of "
    "iterations; at the limit it pauses.\n",
    "bread.md": "# Baking\n\nKnead the dough, let it rise for an hour, then bake it.\n",
    "checkpoints.md": "# Checkpoints\n\nEach step commits a snapshot so a crash resumes.\n",
}


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    return docs


def test_an_unknown_embedder_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="use one of minilm, minilm-onnx, wordllama"):
        make_embedder("glove")


@needs_wordllama
def test_wordllama_vectors_are_those_of_wordllama_itself() -> None:
    import numpy as np
    import wordllama
    from wordllama import WordLlama

    texts = [
        "how do I stop an agent from looping forever",
        "a step limit per run",
        "pain au levain",
    ]
    ours = np.asarray(make_embedder("wordllama").embed(texts))
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    assert ours.shape == (3, 256)
    assert np.allclose(ours, model.embed(texts, norm=True), atol=1e-5)


@needs_wordllama
def test_wordllama_puts_related_texts_closer_and_an_empty_text_nowhere() -> None:
    looping, limit, bread, empty = make_embedder("wordllama").embed(
        ["stop an agent from looping", "the step limit of an agent", "bake sourdough bread", ""]
    )
    assert math.isclose(sum(x * x for x in looping), 1.0, rel_tol=1e-5)
    related = sum(a * b for a, b in zip(looping, limit, strict=True))
    unrelated = sum(a * b for a, b in zip(looping, bread, strict=True))
    assert related > unrelated + 0.1
    assert not any(empty)


@needs_wordllama
def test_a_corpus_ingested_with_wordllama_is_searched_hybrid_where_agents_open_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, docs = tmp_path / "k.db", _folder(tmp_path)
    assert main(["--db", str(db), "ingest", str(docs), "--embedder", "wordllama"]) == 0
    assert "3 added" in capsys.readouterr().out
    assert main(["--db", str(db), "ingest", str(docs), "--corpus", "plain"]) == 0
    store = SQLiteStore(db)
    try:
        corpora = Corpora(store)
        hits = corpora.open("docs").search("how to stop an agent looping", 2)
        assert [h.retriever for h in hits] == ["hybrid", "hybrid"]
        assert hits[0].chunk.file == "limits.md"
        assert corpora.open("docs").embedder is not None
        assert corpora.open("plain").search("step budget", 1)[0].retriever == "bm25"
    finally:
        store.close()
    # editing a file and asking again through --docs embeds the new text with the same model
    (docs / "bread.md").write_text("# Baking\n\nBake the loaf for forty minutes.\n")
    store = SQLiteStore(db)
    try:
        corpus = Corpora(store).open("docs")
        assert corpus.ingest(docs).updated == ["bread.md"]
        reopened = Corpora(store).open("docs")
        assert reopened.search("bake the loaf", 1, mode="dense")[0].chunk.file == "bread.md"
    finally:
        store.close()


def test_choosing_an_embedder_whose_extra_is_missing_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("wordllama", "torch", "onnxruntime"):
        monkeypatch.setitem(sys.modules, module, None)  # as if no such extra were installed
    db, docs = tmp_path / "k.db", _folder(tmp_path)
    for choice in sorted(EMBEDDERS):
        assert main(["--db", str(db), "ingest", str(docs), "--embedder", choice]) == 1
        err = capsys.readouterr().err
        extra = EMBEDDERS[choice].extra
        assert f"pip install 'knowledge-forge[{extra}]'" in err, err
        assert "or ingest without --dense" in err
    assert not db.exists()  # nothing was indexed without the vectors asked for


class _Letters:
    """Vectors from letter counts, stored under the name another embedder would use."""

    def __init__(self, name: str) -> None:
        self.name = name

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = [[float(t.lower().count(c)) + 0.1 for c in "aeiourst"] for t in texts]
        return [[x / math.sqrt(sum(v * v for v in row)) for x in row] for row in rows]


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "some-other-model"])
def test_vectors_no_embedder_here_can_read_leave_searches_lexical_with_a_warning(
    tmp_path: Path,
    model: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # the 'dense' extra is not installed
    store = SQLiteStore(tmp_path / "k.db")
    try:
        Corpus.open(store, "docs", embedder=_Letters(model)).ingest(_folder(tmp_path))
        with caplog.at_level(logging.WARNING, logger="kforge.rag.embedders"):
            corpus = Corpora(store).open("docs")
        assert corpus.embedder is None
        assert corpus.search("step budget", 1)[0].retriever == "bm25"
        assert "searched lexically only" in caplog.text
    finally:
        store.close()
