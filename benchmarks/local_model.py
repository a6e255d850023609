"""Tokens per second of the bundled local model: through kforge's local provider versus raw
llama-cpp-python, on the same prompt and the same loaded weights, in the same run.

    python benchmarks/local_model.py --json results.json

Four variants run interleaved for several rounds: free text and JSON-Schema-constrained output,
each through ``kforge`` (``LocalModel.complete``) and through llama-cpp-python's own
``create_chat_completion`` (for constrained output: ``response_format`` with the schema, the way
llama-cpp-python documents it). A fifth variant passes kforge's grammar to llama-cpp-python, to
separate the grammar from the decoding loop. Each timed call follows an untimed call of the
same variant, so no variant pays for the one before it. Target: kforge >= 0.9x raw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kforge.llm.local import LocalModel
from kforge.llm.local.grammar import schema_to_gbnf
from kforge.llm.types import Message, ModelSettings

TEXT_PROMPT = (
    "Write a long, detailed story about a lighthouse keeper who finds a message in a bottle."
)
JSON_PROMPT = "Plan a one-week trip to Japan for two people who love food and old temples."
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 80},
        "days": {
            "type": "array",
            "minItems": 2,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 40},
                    "activities": {
                        "type": "array",
                        "maxItems": 4,
                        "items": {"type": "string", "maxLength": 60},
                    },
                    "budget_usd": {"type": "integer", "minimum": 0},
                },
                "required": ["city", "activities", "budget_usd"],
            },
        },
    },
    "required": ["title", "days"],
}
CONSTRAINED_MAX_TOKENS = 640
"""Room for the longest plan the schema allows, so every constrained call completes."""

Timed = Callable[[], Awaitable[int]]


async def measure(run: Timed) -> tuple[int, float]:
    started = time.perf_counter()
    tokens = await run()
    return tokens, time.perf_counter() - started


def variants(model: LocalModel, max_tokens: int) -> dict[str, Timed]:
    llm = model.runtime.llm
    from llama_cpp.llama_grammar import LlamaGrammar

    same_grammar = LlamaGrammar.from_string(schema_to_gbnf(PLAN_SCHEMA), verbose=False)
    settings = ModelSettings(max_tokens=max_tokens, temperature=0)
    json_settings = ModelSettings(max_tokens=CONSTRAINED_MAX_TOKENS, temperature=0)

    async def ours() -> int:
        response = await model.complete([Message.user(TEXT_PROMPT)], settings)
        return response.usage.output_tokens

    async def ours_constrained() -> int:
        response = await model.complete(
            [Message.user(JSON_PROMPT)], json_settings, output_schema=PLAN_SCHEMA
        )
        return response.usage.output_tokens

    def raw_call(prompt: str, tokens: int, **extra: Any) -> Timed:
        async def call() -> int:
            out = llm.create_chat_completion(
                [{"role": "user", "content": prompt}], max_tokens=tokens, temperature=0, **extra
            )
            return int(out["usage"]["completion_tokens"])

        return call

    return {
        "raw": raw_call(TEXT_PROMPT, max_tokens),
        "kforge": ours,
        "raw_constrained": raw_call(
            JSON_PROMPT,
            CONSTRAINED_MAX_TOKENS,
            response_format={"type": "json_object", "schema": PLAN_SCHEMA},
        ),
        "kforge_constrained": ours_constrained,
        "raw_same_grammar": raw_call(JSON_PROMPT, CONSTRAINED_MAX_TOKENS, grammar=same_grammar),
    }


async def bench(rounds: int, max_tokens: int) -> dict[str, Any]:
    model = LocalModel()
    runs = variants(model, max_tokens)
    for run in runs.values():  # warm up: page in the weights, fill the prompt cache
        await run()
    samples: dict[str, list[tuple[int, float]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            # An untimed call first: llama-cpp-python's first call after a grammar-constrained
            # one is several times slower, and that would depend on the order of the variants.
            await run()
            samples[name].append(await measure(run))
    rates: dict[str, float] = {}
    for name, pairs in samples.items():
        tokens = sum(t for t, _ in pairs)
        seconds = sum(s for _, s in pairs)
        rates[name] = tokens / seconds if seconds else 0.0
    return {
        "kforge_tokens_per_s": round(rates["kforge"], 1),
        "raw_tokens_per_s": round(rates["raw"], 1),
        "kforge_constrained_tokens_per_s": round(rates["kforge_constrained"], 1),
        "raw_constrained_tokens_per_s": round(rates["raw_constrained"], 1),
        "raw_same_grammar_tokens_per_s": round(rates["raw_same_grammar"], 1),
        "ratio": round(rates["kforge"] / rates["raw"], 3) if rates["raw"] else None,
        "constrained_ratio": round(rates["kforge_constrained"] / rates["raw_constrained"], 3)
        if rates["raw_constrained"]
        else None,
        "tokens_per_call": {k: statistics.median(t for t, _ in v) for k, v in samples.items()},
        "seconds_per_call": {
            k: round(statistics.median(s for _, s in v), 3) for k, v in samples.items()
        },
        "rounds": rounds,
        "max_tokens": max_tokens,
        "model": model.name,
        "n_threads": int(model.runtime.llm.n_threads),
        "cpu_count": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg")
        else None,
        "python": platform.python_version(),
    }


def table(result: dict[str, Any]) -> str:
    rows = [
        ("free text", result["kforge_tokens_per_s"], result["raw_tokens_per_s"], result["ratio"]),
        (
            "JSON schema",
            result["kforge_constrained_tokens_per_s"],
            result["raw_constrained_tokens_per_s"],
            result["constrained_ratio"],
        ),
    ]
    lines = [f"{'output':<12} {'kforge tok/s':>13} {'raw tok/s':>10} {'kforge/raw':>11}"]
    for label, ours, raw, ratio in rows:
        lines.append(f"{label:<12} {ours:>13.1f} {raw:>10.1f} {ratio:>10.2f}x")
    lines.append(
        f"(raw llama-cpp-python given kforge's grammar: {result['raw_same_grammar_tokens_per_s']:.1f} tok/s; "
        f"{result['rounds']} rounds, max {result['max_tokens']} tokens, {result['n_threads']} thread(s))"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results here as JSON")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--max-tokens", type=int, default=192, help="tokens per call (default 192)")
    args = parser.parse_args(argv)
    result = asyncio.run(bench(args.rounds, args.max_tokens))
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
