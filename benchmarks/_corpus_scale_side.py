"""The other libraries of ``corpus_scale.py``, run in their own process so that their memory
is measured apart: bm25s (and tantivy when importable) over the same chunks, the same queries.

    python benchmarks/_corpus_scale_side.py bm25s CHUNKS.jsonl QUERIES.json

CHUNKS.jsonl holds ``{"id", "text"}`` per line; QUERIES.json is ``{"queries": {id: text},
"qrels": {id: {doc: grade}}}``. Prints one JSON object: index seconds, search p50/p95 ms
(top 10), nDCG@10 on the qrels (``corpus_scale.py`` measures its peak RSS).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval_metrics import ndcg_at_k, percentile

__all__ = ["main"]


def _bm25s(ids: list[str], texts: list[str]) -> Callable[[str], list[str]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)  # fmt: skip

    def search(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(tokens, k=min(10, len(ids)), show_progress=False)
        return [ids[int(i)] for i in found[0]]

    return search


def _tantivy(ids: list[str], texts: list[str]) -> Callable[[str], list[str]]:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=200_000_000)
    for doc_id, text in zip(ids, texts, strict=True):
        writer.add_document(tantivy.Document(id=doc_id, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()

    def search(query: str) -> list[str]:
        words = " ".join("".join(ch if ch.isalnum() else " " for ch in query).split())
        parsed = index.parse_query(words, ["text"])
        hits = searcher.search(parsed, 10).hits
        return [str(searcher.doc(address)["id"][0]) for _, address in hits]

    return search


def main(argv: list[str]) -> int:
    library, chunks_path, queries_path = argv
    ids, texts = [], []
    with Path(chunks_path).open() as lines:
        for line in lines:
            row = json.loads(line)
            ids.append(row["id"])
            texts.append(row["text"])
    wanted: dict[str, Any] = json.loads(Path(queries_path).read_text())
    started = time.perf_counter()
    search = {"bm25s": _bm25s, "tantivy": _tantivy}[library](ids, texts)
    index_s = time.perf_counter() - started
    times, scores = [], []
    for qid, text in wanted["queries"].items():
        started = time.perf_counter()
        ranked = search(text)
        times.append((time.perf_counter() - started) * 1000)
        scores.append(ndcg_at_k(ranked, wanted["qrels"][qid], 10))
    print(
        json.dumps(
            {
                "index_s": round(index_s, 2),
                "search_p50_ms": round(percentile(times, 50), 2),
                "search_p95_ms": round(percentile(times, 95), 2),
                "ndcg_at_10": round(sum(scores) / len(scores), 4),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
