from __future__ import annotations

import pytest

from kforge.errors import ConfigurationError, ValidationError
from kforge.rag import records
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus, drop_corpus, list_corpora
from kforge.rag.records import sources_namespace
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore
from tests.rag.helpers import HashEmbedder

DOCS = [
    SourceDocument("react", "Reasoning and acting interleave thoughts with tool calls.", "ReAct"),
    SourceDocument("rag", "Retrieval augmented generation grounds answers in passages.", "RAG"),
    SourceDocument("hitl", "Human approval gates destructive tool calls.", "Oversight"),
]


def test_add_documents_then_search_lexically() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    assert corpus.add_documents(DOCS) == 3
    hits = corpus.search("retrieval grounding passages", k=2, mode="lexical")
    assert hits[0].chunk.file == "rag" and hits[0].rank == 1 and hits[0].retriever == "bm25"
    assert hits[0].chunk.title == "RAG"
    assert corpus.search("no such words anywhere") == []
    assert corpus.add_documents(DOCS) == 0
    with pytest.raises(ValidationError, match="non-empty id"):
        corpus.add_documents([SourceDocument("", "x")])


def test_title_is_searchable() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(DOCS)
    assert corpus.search("oversight", mode="lexical")[0].chunk.file == "hitl"


def test_changed_document_replaces_its_chunks() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(DOCS)
    old_ids = {c.id for c in corpus.chunks() if c.file == "rag"}
    corpus.add_documents([SourceDocument("rag", "Vector search with embeddings.", "RAG")])
    new_ids = {c.id for c in corpus.chunks() if c.file == "rag"}
    assert old_ids.isdisjoint(new_ids)
    assert not corpus.search("grounds answers", mode="lexical")
    with pytest.raises(KeyError, match="has no chunk"):
        corpus.chunk(next(iter(old_ids)))


def test_reopen_restores_index_and_catalog() -> None:
    store = MemoryStore()
    Corpus.open(store, "t").add_documents(DOCS)
    again = Corpus.open(store, "t")
    assert len(again) == 3
    assert again.search("approval", mode="lexical")[0].chunk.file == "hitl"
    [meta] = list_corpora(store)
    assert meta["name"] == "t" and meta["chunks"] == 3 and meta["sources"] == 3


def test_a_stale_analyzer_version_is_recomputed_and_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore()
    Corpus.open(store, "t").add_documents(DOCS)
    doc = store.get_docs(sources_namespace("t"), ["doc:rag"])["doc:rag"]
    doc["analyzer"] = "old"
    doc["chunks"][0]["tf"] = {"bogus": 1}
    store.put_docs(sources_namespace("t"), {"doc:rag": doc})
    again = Corpus.open(store, "t")
    assert again.search("retrieval", mode="lexical")[0].chunk.file == "rag"
    assert not again.search("bogus", mode="lexical")
    saved = store.get_docs(sources_namespace("t"), ["doc:rag"])["doc:rag"]
    assert saved["analyzer"] == records.ANALYZER_VERSION


def test_drop_corpus_removes_everything() -> None:
    store = MemoryStore()
    Corpus.open(store, "t").add_documents(DOCS)
    drop_corpus(store, "t")
    assert list_corpora(store) == []
    assert len(Corpus.open(store, "t")) == 0


def test_bad_names_and_modes_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"corpus name '\.\./x' is not allowed"):
        Corpus.open(MemoryStore(), "../x")
    corpus = Corpus.open(MemoryStore(), "t")
    with pytest.raises(ConfigurationError, match="needs an embedder"):
        corpus.search("x", mode="hybrid")
    with pytest.raises(ConfigurationError, match="unknown search mode"):
        corpus.search("x", mode="fuzzy")  # type: ignore[arg-type]


def test_dense_vectors_persist_and_hybrid_fuses_both_rankings() -> None:
    store = MemoryStore()
    corpus = Corpus.open(store, "t", embedder=HashEmbedder())
    corpus.add_documents(DOCS)
    assert corpus.has_dense
    hybrid = corpus.search("human approval", k=3)
    assert hybrid[0].retriever == "hybrid" and hybrid[0].chunk.file == "hitl"
    dense = corpus.search("human approval", k=3, mode="dense")
    assert dense[0].chunk.file == "hitl" and dense[0].retriever == "dense"
    embedder = HashEmbedder()
    reopened = Corpus.open(store, "t", embedder=embedder)
    assert reopened.has_dense
    assert [h.chunk.id for h in reopened.search("human approval", k=3)] == [
        h.chunk.id for h in hybrid
    ]
    assert embedder.calls == 1  # only the query was embedded


def test_vectors_of_another_model_are_not_used() -> None:
    store = MemoryStore()
    Corpus.open(store, "t", embedder=HashEmbedder(64)).add_documents(DOCS)
    other = Corpus.open(store, "t", embedder=HashEmbedder(32))
    assert not other.has_dense
    assert other.embed_missing() == 3
    assert other.has_dense
    with pytest.raises(ConfigurationError, match="without an embedder"):
        Corpus.open(store, "t").embed_missing()


def test_chunking_options_change_forces_rechunking() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    long_doc = SourceDocument("long", " ".join(f"Sentence {i} is here." for i in range(200)))
    corpus.add_documents([long_doc], chunking=ChunkingOptions(max_chars=0))
    assert len(corpus) == 1
    assert corpus.add_documents([long_doc], chunking=ChunkingOptions(max_chars=500)) == 1
    assert len(corpus) > 1
