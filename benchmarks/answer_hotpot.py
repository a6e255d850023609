"""The HotpotQA part of the answer-quality benchmark: the distractor sample (each question's 10
paragraphs as its corpus, one chunk per paragraph) answered by the router, scored by answer
EM/F1 on the short answer line and by sentence-level supporting facts, beside the paper's
published baseline and, on request, a BM25 sentence ranker (the floor)."""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from answer_runs import (
    ask_arguments,
    citation_list,
    fmt,
    progress,
    run_router,
    seconds_summary,
)
from answer_scoring import MAP_OVERLAP, content_words, short_answer, split_sentences
from eval_metrics import exact_match, token_f1
from kforge import Runtime
from kforge.rag import ChunkingOptions, SourceDocument

__all__ = [
    "HOTPOT",
    "PUBLISHED",
    "bm25_floor",
    "bm25_top_sentences",
    "gold_facts",
    "half_of",
    "hotpot_row",
    "map_to_context",
    "paragraphs_of",
    "predicted_facts",
    "print_hotpot",
    "run_hotpot",
    "supporting_fact_scores",
]

HOTPOT = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "eval"
    / "hotpotqa"
    / "hotpot_distractor_sample.jsonl"
)
PUBLISHED = {
    "source": "Yang et al. 2018, HotpotQA distractor baseline (dev)",
    "answer_em": 44.4,
    "answer_f1": 58.3,
    "sp_f1": 66.7,
}


def map_to_context(sentence: str, context: Sequence[str]) -> int | None:
    """Index of the context sentence ``sentence`` comes from, or None below the overlap bar."""
    wanted = set(content_words(sentence))
    if not wanted:
        return None
    best: tuple[float, float, int] | None = None
    for index, candidate in enumerate(context):
        have = set(content_words(candidate))
        common = len(wanted & have)
        key = (common / len(wanted), common / len(have) if have else 0.0, -index)
        if best is None or key > best:
            best = key
    if best is None or best[0] < MAP_OVERLAP:
        return None
    return -best[2]


def supporting_fact_scores(
    predicted: set[tuple[str, int]], gold: set[tuple[str, int]]
) -> dict[str, float]:
    """HotpotQA's supporting-fact precision, recall, F1 and exact match for one question."""
    tp = len(predicted & gold)
    fp = len(predicted - gold)
    fn = len(gold - predicted)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "em": float(fp + fn == 0)}


def bm25_top_sentences(
    question: str,
    paragraphs: Sequence[tuple[str, Sequence[str]]],
    top: int = 2,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[tuple[str, int]]:
    """The ``top`` (title, sentence index) pairs by BM25 of the question over "title + sentence"
    (each sentence of each paragraph is a document; idf over this question's sentences)."""
    keys = [(title, i) for title, sentences in paragraphs for i in range(len(sentences))]
    docs = [
        content_words(f"{title} {sentence}")
        for title, sentences in paragraphs
        for sentence in sentences
    ]
    if not docs:
        return []
    average = sum(map(len, docs)) / len(docs) or 1.0
    df = Counter(term for doc in docs for term in set(doc))
    query = content_words(question)

    def score(doc: list[str]) -> float:
        tf = Counter(doc)
        total = 0.0
        for term in query:
            if tf[term]:
                idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
                norm = tf[term] + k1 * (1 - b + b * len(doc) / average)
                total += idf * tf[term] * (k1 + 1) / norm
        return total

    ranked = sorted(range(len(docs)), key=lambda i: (-score(docs[i]), i))
    return [keys[i] for i in ranked[:top]]


def half_of(items: list[dict[str, Any]], half: str) -> list[dict[str, Any]]:
    """The first or second half of the sample (the first gets the odd one), or all of it."""
    middle = (len(items) + 1) // 2
    return {"first": items[:middle], "second": items[middle:]}.get(half, items)


def paragraphs_of(item: dict[str, Any]) -> list[tuple[str, list[str]]]:
    context = item["context"]
    return list(zip(context["title"], context["sentences"], strict=True))


def gold_facts(item: dict[str, Any]) -> set[tuple[str, int]]:
    facts = item["supporting_facts"]
    return set(zip(facts["title"], facts["sent_id"], strict=True))


def predicted_facts(
    answer: str, citations: list[dict[str, Any]], paragraphs: list[tuple[str, list[str]]]
) -> set[tuple[str, int]]:
    """(title, sentence index) of the context sentences the answer's cited sentences come from."""
    by_number: dict[int, tuple[str, list[str]]] = {}
    for c in citations:
        match = re.fullmatch(r"p(\d+)", str(c.get("file", "")))
        if match and int(match.group(1)) < len(paragraphs) and isinstance(c.get("number"), int):
            by_number[c["number"]] = paragraphs[int(match.group(1))]
    facts = set()
    for sentence in split_sentences(answer):
        for number in sentence.markers:
            if number in by_number:
                title, context = by_number[number]
                index = map_to_context(sentence.text, context)
                if index is not None:
                    facts.add((title, index))
    return facts


def hotpot_row(item: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": item["id"],
        "question": item["question"],
        "gold": item["answer"],
        "sp_gold": sorted(gold_facts(item)),
        "seconds": round(outcome["seconds"], 2),
    }
    zero = {"em": 0.0, "f1": 0.0, "sp_precision": 0.0, "sp_recall": 0.0, "sp_f1": 0.0, "sp_em": 0.0}
    if "error" in outcome:
        return {**row, **zero, "status": "failed", "error": outcome["error"]}
    result = outcome["result"]
    answer = str(result.get("answer", ""))
    given = result.get("short_answer")
    use_short = isinstance(given, str) and bool(given.strip())
    prediction = short_answer(result)
    citations = citation_list(result)
    predicted = predicted_facts(answer, citations, paragraphs_of(item))
    sp = supporting_fact_scores(predicted, gold_facts(item))
    return {
        **row,
        "status": "completed",
        "answer": answer,
        "prediction": prediction,
        "prediction_from": "short_answer" if use_short else "first paragraph",
        "out_of_scope": result.get("out_of_scope"),
        "cited": [c.get("title") for c in citations],
        "sp_predicted": sorted(predicted),
        "em": exact_match(prediction, item["answer"]),
        "f1": round(token_f1(prediction, item["answer"]), 4),
        "sp_precision": round(sp["precision"], 4),
        "sp_recall": round(sp["recall"], 4),
        "sp_f1": round(sp["f1"], 4),
        "sp_em": sp["em"],
    }


def mean_pct(rows: list[dict[str, Any]], key: str) -> float | None:
    return round(100 * sum(r[key] for r in rows) / len(rows), 2) if rows else None


def bm25_floor(items: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [
        supporting_fact_scores(
            set(bm25_top_sentences(item["question"], paragraphs_of(item))), gold_facts(item)
        )
        for item in items
    ]
    rows = [{f"sp_{k}": v for k, v in s.items()} for s in scores]
    return {
        "method": "BM25 over title + sentence, top 2 sentences",
        "questions": len(items),
        **{k: mean_pct(rows, k) for k in ("sp_precision", "sp_recall", "sp_f1", "sp_em")},
    }


async def run_hotpot(
    rt: Runtime, items: list[dict[str, Any]], opts: argparse.Namespace
) -> dict[str, Any]:
    rows = []
    for n, item in enumerate(items, 1):
        name = f"hotpot-{n}"
        corpus = rt.services.corpus(name)
        corpus.add_documents(
            [
                SourceDocument(f"p{i}", "".join(sentences).strip(), title)
                for i, (title, sentences) in enumerate(paragraphs_of(item))
            ],
            chunking=ChunkingOptions(max_chars=0),
        )
        if len(corpus) != len(item["context"]["title"]):
            progress(f"[hotpotqa {n}] {len(corpus)} chunks for 10 paragraphs: mapping may be off")
        outcome = await run_router(
            rt, ask_arguments(item["question"], name, opts.answer), opts.timeout
        )
        row = hotpot_row(item, outcome)
        rows.append(row)
        if row["status"] == "failed":
            progress(f"[hotpotqa {n}/{len(items)}] FAILED {row['error'][:160]}")
        else:
            progress(
                f"[hotpotqa {n}/{len(items)}] {row['seconds']:.1f} s, F1 {row['f1']:.2f}, "
                f"SP F1 {row['sp_f1']:.2f}, {row['prediction'][:50]!r} vs {row['gold'][:30]!r}"
            )
    totals = {
        "questions": len(rows),
        "completed": sum(r["status"] == "completed" for r in rows),
        "failed": sum(r["status"] == "failed" for r in rows),
        "out_of_scope": sum(bool(r.get("out_of_scope")) for r in rows),
        **{f"answer_{k}": mean_pct(rows, k) for k in ("em", "f1")},
        **{k: mean_pct(rows, k) for k in ("sp_precision", "sp_recall", "sp_f1", "sp_em")},
        **seconds_summary(rows),
    }
    return {"totals": totals, "rows": rows}


def print_hotpot(section: dict[str, Any], label: str) -> None:
    half = section.get("half", "all")
    print(
        f"\nHotpotQA distractor sample ({section.get('questions', 0)} questions, half: {half}), "
        "percent; answer EM/F1 on the short answer line"
    )
    print(f"{'system':<44} {'ans EM':>7} {'ans F1':>7} {'SP P':>6} {'SP R':>6} {'SP F1':>6}")
    rows = []
    if "answers" in section:
        t = section["answers"]["totals"]
        rows.append(
            (
                f"router, {label}",
                t["answer_em"],
                t["answer_f1"],
                t["sp_precision"],
                t["sp_recall"],
                t["sp_f1"],
            )
        )
    if "bm25_floor" in section:
        b = section["bm25_floor"]
        rows.append(
            (
                "BM25 top-2 sentences (floor)",
                None,
                None,
                b["sp_precision"],
                b["sp_recall"],
                b["sp_f1"],
            )
        )
    p = section["published"]
    rows.append(
        (
            "Yang et al. 2018 baseline (published)",
            p["answer_em"],
            p["answer_f1"],
            None,
            None,
            p["sp_f1"],
        )
    )
    for name, *values in rows:
        print(
            f"{name:<44} "
            + " ".join(f"{fmt(v):>{w}}" for v, w in zip(values, (7, 7, 6, 6, 6), strict=True))
        )
    if "answers" in section:
        t = section["answers"]["totals"]
        print(
            f"completed {t['completed']}, failed {t['failed']}, out of scope {t['out_of_scope']}; "
            f"answer seconds median {fmt(t['seconds_median'])} / p90 {fmt(t['seconds_p90'])}"
        )
