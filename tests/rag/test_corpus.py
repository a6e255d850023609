from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.router.grading import front_page
from kforge.errors import ConfigurationError, ValidationError
from kforge.rag import records
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus, drop_corpus, list_corpora
from kforge.rag.extract import ExtractedDocument
from kforge.rag.focus import CorpusStatistics
from kforge.rag.index import INDEX_LAYOUT
from kforge.rag.records import sources_namespace
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore
from kforge.store.sqlite import SQLiteStore
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


def _legacy_store() -> MemoryStore:
    """A corpus as a kforge that kept whole sources as documents wrote it."""
    store = MemoryStore()
    source = records.build_source(
        key="doc:rag",
        root="",
        file="rag",
        sha256="0" * 64,
        size=10,
        document=ExtractedDocument(DOCS[1].text, "RAG", "text"),
        options=ChunkingOptions(),
    )
    doc = source.to_doc()
    doc["analyzer"] = "old"
    doc["chunks"][0]["tf"] = {"bogus": 1}
    store.put_docs(sources_namespace("t"), {"doc:rag": doc})
    store.put_docs(records.CORPORA_NAMESPACE, {"t": {"name": "t", "sources": 1, "chunks": 1}})
    return store


def test_a_corpus_kept_as_documents_moves_into_the_index_once() -> None:
    store = _legacy_store()
    corpus = Corpus.open(store, "t")
    assert corpus.search("retrieval", mode="lexical")[0].chunk.file == "rag"
    assert not corpus.search("bogus", mode="lexical")
    assert store.get_docs(sources_namespace("t")) == {}
    [meta] = list_corpora(store)
    assert meta["index"] == INDEX_LAYOUT and meta["chunks"] == 1
    assert len(Corpus.open(store, "t")) == 1


def test_a_changed_analyzer_analyzes_the_index_again(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore()
    Corpus.open(store, "t").add_documents(DOCS)
    monkeypatch.setattr("kforge.rag.corpus.ANALYZER_VERSION", "next")
    monkeypatch.setattr("kforge.rag.index.ANALYZER_VERSION", "next")
    monkeypatch.setattr("kforge.rag.index.term_frequencies", lambda text: {"marker": 1})
    again = Corpus.open(store, "t")
    assert len(again.search("marker", k=5, mode="lexical")) == 3
    assert list_corpora(store)[0]["analyzer"] == "next"


def test_statistics_come_from_the_index() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(DOCS)
    stats = corpus.statistics()
    assert stats.passages == 3
    assert stats.chars == sum(len(c.text) for c in corpus.chunks())
    assert stats.document_frequency("tool") == 2 and stats.document_frequency("zebra") == 0
    assert stats.document_frequencies(["tool", "approv"]) == {"tool": 2, "approv": 1}


def test_linked_chunks_reads_only_sources_whose_title_the_text_names() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(
        [*DOCS, SourceDocument("st", "Shirley Temple was an actress.", "Shirley Temple")]
    )
    text = "She starred with Shirley Temple, and the Oversight board mattered."
    assert [c.file for c in corpus.linked_chunks(text)] == ["hitl", "st"]
    assert [c.file for c in corpus.linked_chunks(text, exclude=["doc:st"])] == ["hitl"]
    assert corpus.linked_chunks("Shirley alone") == []


def test_a_title_naming_what_every_page_names_is_no_link_in_a_manual() -> None:
    # a manual of 40 pages, each naming its tool; its front page is titled by the tool
    topics = ["locks", "rules", "clusters", "wildcards", "conda", "reports", "profiles", "dags"]
    pages = [
        SourceDocument(
            f"p{n}",
            f"Frobnicator handles {topic} in its own way, page {n}. " + "Some words here. " * 70,
            f"{topic.title()} {n}",
        )
        for n, topic in enumerate(topics * 5)
    ]
    front = SourceDocument("index", "Frobnicator is a workflow tool.", "Frobnicator")
    manual = Corpus.open(MemoryStore(), "manual")
    manual.add_documents([*pages, front])
    question = "My Frobnicator run says the directory is locked. How do I clear the lock?"
    assert [c.file for c in manual.linked_chunks(question)] == ["index"]
    assert manual.linked_chunks(question, skip=front_page(CorpusStatistics.of(manual))) == []
    # among a few passages (a question's own paragraphs) the name still links its page
    few = Corpus.open(MemoryStore(), "few")
    few.add_documents([*pages[:3], front])
    assert [
        c.file for c in few.linked_chunks(question, skip=front_page(CorpusStatistics.of(few)))
    ] == ["index"]


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


def test_a_corpus_in_a_sqlite_file_is_searched_where_it_is_stored(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    Corpus.open(store, "t").add_documents(DOCS)
    store.close()
    again = SQLiteStore(tmp_path / "k.db")
    corpus = Corpus.open(again, "t")
    [hit] = corpus.search("approval", k=1, mode="lexical")
    assert hit.chunk.file == "hitl" and corpus.chunk(hit.chunk.id) == hit.chunk
    assert corpus.statistics().document_frequency("approv") == 1
    assert [s.file for s in corpus.sources()] == ["hitl", "rag", "react"]
    corpus.remove_sources(["doc:hitl"])
    assert not corpus.search("approval", mode="lexical") and len(corpus) == 2
    again.close()


class _CountingStore(MemoryStore):
    """Records the reads that take a whole corpus."""

    def __init__(self) -> None:
        super().__init__()
        self.whole: list[str] = []

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        if keys is None:
            self.whole.append("index_sources")
        return super().index_sources(index, keys)

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        if key is None:
            self.whole.append("source_passages")
        return super().source_passages(index, key)

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        if keys is None:
            self.whole.append(f"get_docs {namespace}")
        return super().get_docs(namespace, keys)


def test_opening_and_asking_read_no_whole_corpus() -> None:
    store = _CountingStore()
    Corpus.open(store, "t").add_documents(DOCS)
    store.whole.clear()
    corpus = Corpus.open(store, "t")
    assert len(corpus) == 3
    [hit] = corpus.search("approval", k=1)
    assert corpus.chunk(hit.chunk.id).file == "hitl"
    assert corpus.linked_chunks("the ReAct paper", exclude=["doc:hitl"])[0].file == "react"
    assert corpus.statistics().document_frequency("approv") == 1
    assert store.whole == []


def test_a_title_with_a_disambiguation_is_found_by_its_core() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents([SourceDocument("m", "A small planet.", "Mercury (planet)"), *DOCS])
    assert [c.file for c in corpus.linked_chunks("The closest to the Sun is Mercury.")] == ["m"]


def test_a_long_title_is_found_by_its_first_four_words() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(
        [
            SourceDocument("l", "Text.", "The Quick Brown Fox Jumps"),
            SourceDocument("o", "x", "The Quick"),
        ]
    )
    found = corpus.linked_chunks("We read The Quick Brown Fox Jumps today.", limit=5)
    assert [c.file for c in found] == ["l", "o"]


def test_alike_searches_reuse_a_ranking_until_the_index_changes_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    corpus = Corpus.open(store, "t")
    corpus.add_documents(DOCS)
    searched: list[list[str]] = []
    versions: list[str] = []
    real, real_version = store.search_versioned, store.index_version

    def counted(index: str, terms: list[str], k: int, **kw: float) -> tuple[str, Any]:
        searched.append(terms)
        return real(index, terms, k, **kw)

    def version(index: str) -> str:
        versions.append(index)
        return real_version(index)

    monkeypatch.setattr(store, "search_versioned", counted)
    monkeypatch.setattr(store, "index_version", version)
    first = corpus.search("approval of tools", k=2, mode="lexical")
    assert versions == []  # the version came with the search: no read of its own
    assert corpus.search("Approval, of the tools?", k=2, mode="lexical") == first  # same terms
    assert searched == [["approv", "tool"]] and versions == ["t"]
    other = SQLiteStore(tmp_path / "k.db")  # another process writes the corpus
    Corpus.open(other, "t").add_documents([SourceDocument("more", "Approval of tools.", "More")])
    other.close()
    assert "more" in [h.chunk.file for h in corpus.search("approval of tools", k=3)]
    corpus.remove_sources(["doc:more"])  # and this one
    assert "more" not in [h.chunk.file for h in corpus.search("approval of tools", k=3)]
    assert len(searched) == 3
    store.close()


def test_a_question_searched_for_a_few_passages_then_for_a_pool_is_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One answer searches the question for its guardrail's few passages, then for the pool
    it reranks: the few are the head of the pool, so the index is searched once."""
    from kforge.rag.rerank import POOL

    store = MemoryStore()
    corpus = Corpus.open(store, "t")
    corpus.add_documents(
        SourceDocument(f"d{i}", f"tool approval {'tool ' * (i % 7)}gate {i}", f"T{i}")
        for i in range(2 * POOL)
    )
    searched: list[int] = []
    real = store.search_versioned

    def counted(index: str, terms: list[str], k: int, **kw: float) -> tuple[str, Any]:
        searched.append(k)
        return real(index, terms, k, **kw)

    monkeypatch.setattr(store, "search_versioned", counted)
    few = corpus.search("tool approval", k=5, mode="lexical")
    pool = corpus.search("tool approval", k=POOL, mode="lexical")
    assert len(searched) == 1
    assert len(pool) == POOL
    assert [h.chunk.id for h in pool[:5]] == [h.chunk.id for h in few]
    assert corpus.search("tool approval", k=POOL + 1, mode="lexical")[:POOL] == pool
    assert searched == [POOL, POOL + 1]  # deeper than any kept ranking: searched again


def test_adding_documents_to_a_corpus_reads_none_of_its_sources_records(tmp_path: Path) -> None:
    store = _CountingStore()
    (tmp_path / "guide.md").write_text("# Guide\n\nCheckpoints let a person approve a step.\n")
    Corpus.open(store, "t").ingest(tmp_path)
    corpus = Corpus.open(store, "t")
    store.whole.clear()
    assert corpus.add_documents(DOCS) == 3
    assert corpus.add_documents([SourceDocument("extra", "One more passage.", "Extra")]) == 1
    assert store.whole == []
    [meta] = list_corpora(store)
    assert meta["sources"] == 5 and meta["chunks"] == 5
    assert meta["roots"] == [str(tmp_path.resolve())] and meta["extractions"]
    store.whole.clear()
    corpus.remove_sources(["doc:extra"])
    corpus.touch()
    assert store.whole == [] and list_corpora(store)[0]["sources"] == 4


def test_documents_added_keep_the_roots_another_process_ingested(tmp_path: Path) -> None:
    store = MemoryStore()
    adding = Corpus.open(store, "t")
    adding.add_documents(DOCS[:1])
    (tmp_path / "guide.md").write_text("# Guide\n\nCheckpoints let a person approve a step.\n")
    Corpus.open(store, "t").ingest(tmp_path)  # another process, after this one opened it
    adding.add_documents(DOCS[1:])
    [meta] = list_corpora(store)
    assert meta["sources"] == 4 and meta["roots"] == [str(tmp_path.resolve())]
    # removing the folder's file drops its root
    again = Corpus.open(store, "t")
    again.remove_sources([s.key for s in again.sources() if s.root])
    again.touch()
    assert list_corpora(store)[0]["roots"] == [] and list_corpora(store)[0]["sources"] == 3
