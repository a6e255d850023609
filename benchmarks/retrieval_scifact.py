"""SciFact retrieval benchmark: BM25, dense, hybrid (RRF) and agentic variants of kforge.rag.

Indexes the 5,183 SciFact abstracts (title + text, one chunk each) through ``Corpus`` on a
SQLite store (or on PostgreSQL: ``--db postgresql://...``), then ranks the claims of one split. BM25 constants were chosen on the train
split; report the test split. The agentic variant grades the top hits with a model, so it runs
on the first ``--agentic-limit`` queries only and says so in its label.

    python benchmarks/retrieval_scifact.py --split test --json scifact.json
    python benchmarks/retrieval_scifact.py --split test --variants lexical,agentic --model local:smollm2
    python benchmarks/retrieval_scifact.py --split train --embedder wordllama
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eval_metrics import ndcg_at_k, percentile, recall_at_k
from kforge.extras import extra_installed
from kforge.rag.agentic import RAGConfig, agentic_search
from kforge.rag.bm25 import BM25Params
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus
from kforge.rag.embedders import EMBEDDERS, make_embedder
from kforge.rag.fusion import reciprocal_rank_fusion
from kforge.rag.types import SearchHit, SourceDocument
from kforge.store.open import open_store
from kforge.store.postgres import is_postgres_url

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "eval" / "scifact"
PUBLISHED = {
    "bm25": {"ndcg_at_10": 0.665, "recall_at_100": 0.908},
    "dense_minilm": {"ndcg_at_10": 0.674},
}
LABELS = {
    "minilm": "all-MiniLM-L6-v2",
    "minilm-onnx": "all-MiniLM-L6-v2 int8 ONNX",
    "wordllama": "WordLlama l2_supercat 256",
}


def load(
    data: Path, split: str
) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, dict[str, int]]]:
    if not (data / "corpus.jsonl").is_file():
        sys.exit(
            f"SciFact data not found in {data}: pass --data DIR (corpus.jsonl, queries.jsonl, qrels/)"
        )
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with open(data / "queries.jsonl", encoding="utf-8") as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, f)}
    qrels: dict[str, dict[str, int]] = {}
    with open(data / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.split()
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    return docs, queries, qrels


def evaluate(
    name: str,
    search: Callable[[str], list[str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    build_s: float,
    **extra: Any,
) -> dict[str, Any]:
    ndcg, recall, latencies = [], [], []
    for qid in sorted(qrels, key=lambda q: int(q) if q.isdigit() else q):
        started = time.perf_counter()
        ranked = search(queries[qid])
        latencies.append((time.perf_counter() - started) * 1000)
        ndcg.append(ndcg_at_k(ranked, qrels[qid], 10))
        recall.append(recall_at_k(ranked, qrels[qid], 100))
    return {
        "variant": name,
        "queries": len(qrels),
        "ndcg_at_10": round(sum(ndcg) / len(ndcg), 4),
        "recall_at_100": round(sum(recall) / len(recall), 4),
        "query_p50_ms": round(percentile(latencies, 50), 2),
        "query_p95_ms": round(percentile(latencies, 95), 2),
        "index_build_s": round(build_s, 2),
        **extra,
    }


def ids(hits: Sequence[SearchHit]) -> list[str]:
    return [h.chunk.file for h in hits]


def weighted_hybrid(corpus: Corpus, query: str, dense_weight: float) -> list[str]:
    """BM25's and the dense top 100 fused by reciprocal rank, the dense ranking weighted."""
    lexical = ids(corpus.search(query, 100, mode="lexical"))
    dense = ids(corpus.search(query, 100, mode="dense"))
    fused = reciprocal_rank_fusion([lexical, dense], weights=[1.0, dense_weight], limit=100)
    return [doc for doc, _ in fused]


def agentic_ranking(corpus: Corpus, complete: Any, query: str, k: int) -> list[str]:
    """Hits graded relevant (across rewrites) first, then the rest of BM25's top 100."""
    result = asyncio.run(
        agentic_search(
            query,
            lambda q, n: corpus.search(q, n, mode="lexical"),
            complete,
            config=RAGConfig(k=k),
        )
    )
    first = [g.hit.chunk.file for g in result.relevant_results]
    rest = [d for d in ids(corpus.search(query, 100, mode="lexical")) if d not in first]
    return (first + rest)[:100]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="test", choices=["train", "test"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--variants", default="lexical,dense,hybrid",
        help="comma list of lexical, dense, hybrid, agentic (dense/hybrid skipped without the extra)",
    )  # fmt: skip
    parser.add_argument(
        "--embedder", default="minilm", choices=sorted(EMBEDDERS),
        help="vectors of the dense and hybrid variants: minilm (the 'dense' extra), minilm-onnx "
        "(the 'dense-onnx' extra) or wordllama (the 'dense-light' extra)",
    )  # fmt: skip
    parser.add_argument(
        "--dense-weights", default="",
        help="comma list of weights below 1 for the dense ranking in further hybrid variants "
        "(RRF with BM25 at weight 1), e.g. 0.5,0.3",
    )  # fmt: skip
    parser.add_argument("--model", default="local:smollm2", help="model for the agentic variant")
    parser.add_argument(
        "--agentic-limit", type=int, default=10, help="queries for the agentic variant"
    )
    parser.add_argument("--agentic-k", type=int, default=5, help="hits graded per agentic search")
    parser.add_argument(
        "--db",
        help="keep the index (and dense vectors) in this SQLite file or PostgreSQL database "
        "(a postgresql:// URL) and reuse it on later runs; build times then measure the reuse, "
        "and the JSON says so",
    )  # fmt: skip
    parser.add_argument("--k1", type=float, default=BM25Params().k1)
    parser.add_argument("--b", type=float, default=BM25Params().b)
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]

    docs, queries, qrels = load(args.data, args.split)
    results: list[dict[str, Any]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "scifact.db")
        store = open_store(db)
        notes.append(f"store: {'postgres' if is_postgres_url(db) else 'sqlite'}")
        params = BM25Params(args.k1, args.b)
        started = time.perf_counter()
        corpus = Corpus.open(store, "scifact", bm25=params)
        added = corpus.add_documents(
            (SourceDocument(d["_id"], d["text"], d["title"]) for d in docs),
            chunking=ChunkingOptions(max_chars=0),
            batch_size=1000,
        )
        lexical_build = time.perf_counter() - started
        if added < len(docs):
            notes.append(
                f"index reused from {db}: {len(docs) - added} abstracts were already indexed"
            )
        started = time.perf_counter()
        reopened = Corpus.open(store, "scifact", bm25=params)
        open_s = time.perf_counter() - started
        assert len(reopened) == len(docs)
        print(
            f"indexed {len(docs)} abstracts in {lexical_build:.1f} s; reopened in {open_s:.2f} s",
            file=sys.stderr,
        )

        if "lexical" in variants:
            results.append(
                evaluate("lexical (BM25)", lambda q: ids(reopened.search(q, 100, mode="lexical")),
                         queries, qrels, lexical_build, k1=params.k1, b=params.b,
                         index_open_s=round(open_s, 3))
            )  # fmt: skip
        wants_dense = {"dense", "hybrid"} & set(variants)
        choice = EMBEDDERS[args.embedder]
        label = LABELS[args.embedder]
        if wants_dense and not extra_installed(choice.extra):
            notes.append(
                f"dense and hybrid skipped: install the '{choice.extra}' extra for the "
                f"{args.embedder} embedder"
            )
        elif wants_dense:
            embedder = make_embedder(args.embedder)
            dense_corpus = Corpus.open(store, "scifact", bm25=params, embedder=embedder)
            started = time.perf_counter()
            embedded = dense_corpus.embed_missing()
            embed_s = time.perf_counter() - started
            if embedded < len(docs):
                notes.append(
                    f"dense vectors reused from {db}: {len(docs) - embedded} were already computed"
                )
            print(f"embedded {len(docs)} abstracts in {embed_s:.1f} s", file=sys.stderr)
            if "dense" in variants:
                results.append(
                    evaluate(f"dense ({label})", lambda q: ids(dense_corpus.search(q, 100, mode="dense")),
                             queries, qrels, embed_s)
                )  # fmt: skip
            if "hybrid" in variants:
                results.append(
                    evaluate(f"hybrid (BM25 + {label}, RRF k=60)",
                             lambda q: ids(dense_corpus.search(q, 100, mode="hybrid")),
                             queries, qrels, lexical_build + embed_s)
                )  # fmt: skip
            for weight in (float(w) for w in args.dense_weights.split(",") if w.strip()):
                results.append(
                    evaluate(f"hybrid (BM25 + {label} at weight {weight:g}, RRF k=60)",
                             lambda q, w=weight: weighted_hybrid(dense_corpus, q, w),
                             queries, qrels, lexical_build + embed_s, dense_weight=weight)
                )  # fmt: skip
        if "agentic" in variants:
            from kforge.llm import get_model

            model = get_model(args.model)
            subset_ids = sorted(qrels, key=lambda q: int(q) if q.isdigit() else q)[
                : args.agentic_limit
            ]
            subset = {q: qrels[q] for q in subset_ids}
            label = f"first {len(subset)} {args.split} queries"
            results.append(
                evaluate(f"lexical (BM25), {label}", lambda q: ids(reopened.search(q, 100, mode="lexical")),
                         queries, subset, lexical_build, subset=True)
            )  # fmt: skip
            results.append(
                evaluate(f"agentic (BM25 + {model.name} grading k={args.agentic_k}), {label}",
                         lambda q: agentic_ranking(reopened, model.complete, q, args.agentic_k),
                         queries, subset, lexical_build, subset=True, model=model.name)
            )  # fmt: skip
        store.close()

    print(f"\nSciFact {args.split} ({len(qrels)} queries, {len(docs)} documents)")
    print(f"{'variant':<62} {'nDCG@10':>8} {'R@100':>7} {'p50 ms':>8} {'p95 ms':>8} {'build s':>8}")
    for r in results:
        print(
            f"{r['variant'][:62]:<62} {r['ndcg_at_10']:>8.4f} {r['recall_at_100']:>7.4f} "
            f"{r['query_p50_ms']:>8.2f} {r['query_p95_ms']:>8.2f} {r['index_build_s']:>8.2f}"
        )
    print(
        f"published BM25: nDCG@10 {PUBLISHED['bm25']['ndcg_at_10']}, R@100 {PUBLISHED['bm25']['recall_at_100']}"
    )
    for note in notes:
        print(f"note: {note}")
    if args.json:
        payload = {
            "benchmark": "scifact",
            "split": args.split,
            "documents": len(docs),
            "queries": len(qrels),
            "variants": results,
            "published": PUBLISHED,
            "notes": notes,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
