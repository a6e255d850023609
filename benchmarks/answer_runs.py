"""What the answer-quality benchmark's parts share: running the router as ``kforge ask`` does,
reading the chunks an answer cites, kforge's prompt text (for echo), seconds and the machine."""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from typing import Any

from answer_scoring import words
from eval_metrics import percentile
from kforge import Runtime

__all__ = [
    "ask_arguments",
    "chunk_texts",
    "citation_list",
    "fmt",
    "machine",
    "print_metrics",
    "progress",
    "prompt_texts",
    "run_router",
    "seconds_summary",
]


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ask_arguments(question: str, corpus: str, answer: str | None) -> dict[str, Any]:
    """The router's arguments as ``kforge ask`` builds them with its default options."""
    try:
        from kforge.cli.ask import add_router_options, router_args

        parser = argparse.ArgumentParser()
        add_router_options(parser)
        args = router_args(parser.parse_args([]), question, corpus, [])
    except (ImportError, AttributeError, TypeError, SystemExit):  # the CLI changed shape
        args = {"question": question, "corpus": corpus, "history": [], "web_search": False}
    if answer is not None:  # only when asked for: older agents do not know the argument
        args["answer"] = answer
    return args


async def run_router(rt: Runtime, args: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One router run: its result, or ``error``; ``seconds`` of wall time either way."""
    started = time.perf_counter()
    try:
        run_id = await rt.start("router", args)
        try:
            record = await asyncio.wait_for(rt.wait(run_id), timeout)
        except TimeoutError:
            await rt.cancel(run_id, f"benchmark timeout after {timeout:g} s")
            raise
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    if record.status.value != "completed":
        detail = record.error or record.pause_reason or ""
        return {"error": f"run {record.status.value}: {detail}".strip(), "seconds": seconds}
    return {"result": record.result or {}, "seconds": seconds}


def citation_list(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in result.get("citations") or [] if isinstance(c, dict)]


def chunk_texts(corpus: Any, citations: list[dict[str, Any]]) -> dict[int, str]:
    """Full text of each cited chunk by citation number (the citation's own text when the
    corpus no longer has the chunk)."""
    texts = {}
    for c in citations:
        try:
            number = int(c["number"])
        except (KeyError, TypeError, ValueError):
            continue
        try:
            texts[number] = corpus.chunk(str(c.get("chunk_id"))).text
        except KeyError:
            texts[number] = str(c.get("text") or c.get("snippet") or c.get("quote") or "")
    return texts


def seconds_summary(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    values = [r["seconds"] for r in rows if r.get("seconds") is not None]
    if not values:
        return {"seconds_median": None, "seconds_p90": None}
    return {
        "seconds_median": round(statistics.median(values), 2),
        "seconds_p90": round(percentile(values, 90), 2),
    }


def fmt(value: Any, suffix: str = "") -> str:
    return "-" if value is None else f"{value}{suffix}"


def print_metrics(title: str, lines: list[tuple[str, Any, str]], width: int = 36) -> None:
    """A titled table of (metric, value, target) lines on stdout."""
    print(f"\n{title}")
    print(f"{'metric':<{width}} {'value':<28} target")
    for metric, value, target in lines:
        print(f"{metric:<{width}} {value!s:<28} {target}")


_NAME_OF_PROMPT = re.compile(r"SYSTEM|PROMPT|INSTRUCTION|TEMPLATE|TASK|RULES|SHORT_ANSWER")


def prompt_texts() -> list[str]:
    """kforge's prompt text: template bodies and module-level prompt strings (any module that
    imports; a name mentioning SYSTEM, PROMPT, INSTRUCTION, TEMPLATE, TASK or RULES)."""
    import importlib
    import pkgutil
    from importlib import resources

    import kforge

    texts = []
    try:
        for entry in resources.files("kforge.prompts").joinpath("templates").iterdir():
            if entry.name.endswith(".prompt"):
                body = entry.read_text(encoding="utf-8").split("---", 2)[-1]
                texts.append(re.sub(r"\{\{[^}]*\}\}|</?[a-z_]+[^>]*>", "\n", body))
    except (ImportError, OSError) as exc:
        progress(f"prompt templates not readable ({exc}); echo is checked on strings only")
    for info in pkgutil.walk_packages(kforge.__path__, "kforge."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # an optional extra is missing: its prompts cannot reach the model
            continue
        for name, value in vars(module).items():
            if (
                isinstance(value, str)
                and name.isupper()
                and _NAME_OF_PROMPT.search(name)
                and len(words(value)) >= 8
            ):
                texts.append(value)
    return list(dict.fromkeys(texts))


def machine() -> dict[str, Any]:
    """Where the figures come from: seconds depend on the cores and on what else runs."""
    import os
    import platform

    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
