from __future__ import annotations

import re

from kforge.rag.corpus import Corpus
from kforge.rag.samples import sample_corpus_path
from kforge.store.memory import MemoryStore


def test_sample_corpus_has_30_to_40_substantive_documents() -> None:
    docs = sorted(sample_corpus_path().glob("*.md"))
    assert 30 <= len(docs) <= 40
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        words = len(text.split())
        assert 300 <= words <= 800, f"{doc.name} has {words} words"
        assert text.startswith("# "), f"{doc.name} must start with a title"
        assert len(re.findall(r"^## ", text, flags=re.M)) >= 2, f"{doc.name} needs sections"


def test_sample_corpus_ingests_cleanly_and_answers_with_provenance() -> None:
    corpus = Corpus.open(MemoryStore(), "samples")
    report = corpus.ingest(sample_corpus_path())
    assert report.skipped == [] and len(report.added) >= 30
    top = corpus.search("reciprocal rank fusion of BM25 and dense rankings", k=3)
    assert top[0].chunk.file == "hybrid-search-and-rrf.md"
    assert top[0].chunk.heading.startswith("Hybrid Search and Reciprocal Rank Fusion")
    text = (sample_corpus_path() / top[0].chunk.file).read_text(encoding="utf-8")
    assert text[top[0].chunk.start : top[0].chunk.end] == top[0].chunk.text


def test_sample_questions_find_the_right_documents() -> None:
    corpus = Corpus.open(MemoryStore(), "samples")
    corpus.ingest(sample_corpus_path())
    expectations = {
        "What is the ReAct pattern?": "react-pattern.md",
        "How does Reflexion store self-reflections in episodic memory?": "reflection-and-reflexion.md",
        "What happens when an agent hits its token budget?": "bounded-execution-and-limits.md",
        "What is an idempotency key?": "idempotency-and-side-effects.md",
        "indirect prompt injection in retrieved documents": "prompt-injection.md",
    }
    for question, expected in expectations.items():
        files = [h.chunk.file for h in corpus.search(question, k=3)]
        assert expected in files, f"{question!r} found {files}"
