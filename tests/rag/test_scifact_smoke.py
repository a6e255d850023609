"""A quick check of BM25 quality on SciFact train queries (the full benchmark is in benchmarks/)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from eval_metrics import ndcg_at_k, recall_at_k

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "eval" / "scifact"

pytestmark = pytest.mark.skipif(
    not (SCIFACT / "corpus.jsonl").is_file(),
    reason=f"SciFact data not found at {SCIFACT} (the shared/ folder beside the repository)",
)


def test_bm25_ranks_scifact_train_claims_well() -> None:
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, f)}
    qrels: dict[str, dict[str, int]] = {}
    with open(SCIFACT / "qrels" / "train.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.split()
            qrels.setdefault(qid, {})[did] = int(score)
    corpus = Corpus.open(MemoryStore(), "scifact")
    corpus.add_documents(
        (SourceDocument(d["_id"], d["text"], d["title"]) for d in docs),
        chunking=ChunkingOptions(max_chars=0),
    )
    assert len(corpus) == len(docs)
    sample = sorted(qrels)[:150]
    ndcg = recall = 0.0
    for qid in sample:
        ranked = [h.chunk.file for h in corpus.search(queries[qid], k=100, mode="lexical")]
        ndcg += ndcg_at_k(ranked, qrels[qid], 10)
        recall += recall_at_k(ranked, qrels[qid], 100)
    assert ndcg / len(sample) > 0.62
    assert recall / len(sample) > 0.85
