"""HotpotQA (distractor) sample: retrieval of gold paragraphs and end-to-end answers.

Each question's 10 context paragraphs form its own corpus. Reports the share of gold
supporting paragraphs among the top 2 and top 5 hits (BM25, and hybrid when the dense extra is
installed), then answers every question and scores the answers by exact match and token F1
(HotpotQA's normalization): ``agentic`` runs the router agent, what ``kforge ask`` runs
(searches, grading, a cited answer; its short answer line is scored), ``direct`` gives the
top-k passages straight to the model.

    python benchmarks/hotpotqa.py --json hotpot.json --limit 50
    python benchmarks/hotpotqa.py --json hotpot.json --model openai:gpt-4o-mini --answer direct
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from answer_runs import ask_arguments
from eval_metrics import exact_match, recall_at_k, token_f1
from kforge import Runtime
from kforge.agents.common.answer import FALLBACK_NOTE
from kforge.agents.results import CitedAnswer
from kforge.frames import ModelCall
from kforge.llm.base import Model
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus
from kforge.rag.dense import Embedder, MiniLMEmbedder, dense_available
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "eval"
    / "hotpotqa"
    / "hotpot_distractor_sample.jsonl"
)
SHORT_ANSWER = (
    "Reply with the answer only: a short phrase such as a name, a date, a number, or yes or no. "
    "No explanation and no full sentence."
)
ANSWER_SETTINGS = ModelSettings(temperature=0.0, max_tokens=32)


class CountingComplete:
    """Wraps a model's ``complete`` to count calls."""

    def __init__(self, complete: Any) -> None:
        self._complete = complete
        self.calls = 0

    async def __call__(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        self.calls += 1
        return await self._complete(messages, settings, tools=tools, output_schema=output_schema)  # type: ignore[no-any-return]


def short_answer(text: str) -> str:
    """The first line of a reply that is not a lead-in ("The answer is:"), without citation
    markers, quotes or a closing period."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = next((ln for ln in lines if not ln.endswith(":")), lines[0] if lines else "")
    line = re.sub(r"\[\d+(?:,\s*\d+)*\]", "", line)
    line = re.sub(r"^(answer|the answer is)\s*:?\s*", "", line.strip(), flags=re.I)
    return line.strip().strip('"').rstrip(".").strip()


def add_paragraphs(corpus: Corpus, item: dict[str, Any]) -> Corpus:
    context = item["context"]
    corpus.add_documents(
        [
            SourceDocument(str(i), "".join(sentences).strip(), title)
            for i, (title, sentences) in enumerate(
                zip(context["title"], context["sentences"], strict=True)
            )
        ],
        chunking=ChunkingOptions(max_chars=0),
    )
    return corpus


def build_corpus(item: dict[str, Any], embedder: Embedder | None) -> Corpus:
    return add_paragraphs(Corpus.open(MemoryStore(), "hotpot", embedder=embedder), item)


async def router_answer(model: Model, item: dict[str, Any], k: int) -> tuple[CitedAnswer, int]:
    """The router agent's answer over the question's paragraphs (``kforge ask``'s arguments,
    with ``-k``), and how many model calls it made."""
    rt = Runtime(MemoryStore(), model=model)
    try:
        add_paragraphs(rt.services.corpus("hotpot"), item)
        args = {**ask_arguments(item["question"], "hotpot", None), "k": k}
        run = await rt.run("router", args)
        if run.result is None:
            raise RuntimeError(f"run {run.id} ended {run.status.value}: {run.error}")
        calls = sum(isinstance(f, ModelCall) for f in rt.frames(run.id))
        return CitedAnswer.load(run.result), calls
    finally:
        await rt.aclose()


async def direct_answer(question: str, corpus: Corpus, complete: Any, k: int) -> str:
    hits = corpus.search(question, k, mode="lexical")
    sources = "\n\n".join(f"[{i}] {h.chunk.title}: {h.chunk.text}" for i, h in enumerate(hits, 1))
    response = await complete(
        [Message.system(f"Answer the question from the passages. {SHORT_ANSWER}"),
         Message.user(f"Passages:\n\n{sources}\n\nQuestion: {question}")],
        ANSWER_SETTINGS,
    )  # fmt: skip
    return str(response.text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--model", default="local:smollm2", help="model that grades and answers")
    parser.add_argument(
        "--limit", type=int, default=100, help="questions to run (default: all 100)"
    )
    parser.add_argument("--k", type=int, default=5, help="passages retrieved and graded per search")
    parser.add_argument("--answer", choices=["agentic", "direct", "none"], default="agentic",
                        help="agentic: the router agent (kforge ask); direct: top-k passages straight to the model")  # fmt: skip
    parser.add_argument("--no-dense", action="store_true", help="skip the hybrid retrieval figures")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        sys.exit(f"HotpotQA sample not found at {args.data}: pass --data FILE")
    with open(args.data, encoding="utf-8") as f:
        items = [json.loads(line) for line in f][: args.limit]

    embedder = MiniLMEmbedder() if dense_available() and not args.no_dense else None
    model = None
    if args.answer != "none":
        from kforge.llm import get_model

        model = get_model(args.model)
    recall: dict[str, list[float]] = {
        "lexical@2": [],
        "lexical@5": [],
        "hybrid@2": [],
        "hybrid@5": [],
    }
    em, f1, calls, seconds, fallbacks = [], [], [], [], 0
    rows = []
    for n, item in enumerate(items, 1):
        corpus = build_corpus(item, embedder)
        gold = set(item["supporting_facts"]["title"])
        modes = ["lexical"] + (["hybrid"] if embedder is not None else [])
        for mode in modes:
            ranked = [h.chunk.title for h in corpus.search(item["question"], 5, mode=mode)]
            recall[f"{mode}@2"].append(recall_at_k(ranked, gold, 2))
            recall[f"{mode}@5"].append(recall_at_k(ranked, gold, 5))
        row: dict[str, Any] = {
            "id": item["id"],
            "question": item["question"],
            "gold": item["answer"],
        }
        if model is not None:
            counter = CountingComplete(model.complete)
            started = time.perf_counter()
            if args.answer == "agentic":
                answer, model_calls = asyncio.run(router_answer(model, item, args.k))
                # a model-only answer opens with the note that says so: its reply is scored
                raw = answer.short_answer or answer.answer.removeprefix(FALLBACK_NOTE)
                fallbacks += answer.fallback
                row["fallback"] = answer.fallback
                row["cited"] = [c.title for c in answer.citations]
            else:
                raw = asyncio.run(direct_answer(item["question"], corpus, counter, args.k))
                model_calls = counter.calls
            seconds.append(time.perf_counter() - started)
            prediction = short_answer(raw)
            em.append(exact_match(prediction, item["answer"]))
            f1.append(token_f1(prediction, item["answer"]))
            calls.append(model_calls)
            row.update(
                prediction=prediction, em=em[-1], f1=round(f1[-1], 3), model_calls=model_calls
            )
            print(f"[{n}/{len(items)}] EM {sum(em) / len(em):.3f} F1 {sum(f1) / len(f1):.3f}  "
                  f"{prediction[:40]!r} vs {item['answer'][:40]!r}", file=sys.stderr, flush=True)  # fmt: skip
        rows.append(row)

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    result: dict[str, Any] = {
        "benchmark": "hotpotqa-distractor-sample",
        "questions": len(items),
        "retrieval": {
            "lexical": {
                "recall_at_2": mean(recall["lexical@2"]),
                "recall_at_5": mean(recall["lexical@5"]),
            },
            "hybrid": {
                "recall_at_2": mean(recall["hybrid@2"]),
                "recall_at_5": mean(recall["hybrid@5"]),
            }
            if embedder is not None
            else None,
        },
    }
    if model is not None:
        result["answers"] = {
            "model": model.name,
            "pipeline": args.answer,
            "k": args.k,
            "exact_match": mean(em),
            "f1": mean(f1),
            "fallback_rate": round(fallbacks / len(items), 4) if args.answer == "agentic" else None,
            "model_calls_per_question": mean([float(c) for c in calls]),
            "seconds_per_question": mean(seconds),
        }
    result["rows"] = rows

    print(f"\nHotpotQA distractor sample: {len(items)} questions, 10 paragraphs each")
    print(f"{'retriever':<10} {'recall@2':>9} {'recall@5':>9}")
    for name, figures in result["retrieval"].items():
        if figures:
            print(f"{name:<10} {figures['recall_at_2']:>9.4f} {figures['recall_at_5']:>9.4f}")
    if model is not None:
        a = result["answers"]
        print(f"answers ({a['pipeline']}, {a['model']}): EM {a['exact_match']:.4f}  F1 {a['f1']:.4f}  "
              f"{a['model_calls_per_question']:.1f} model calls and {a['seconds_per_question']:.1f} s per question")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
