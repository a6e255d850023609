"""Question sets over real documentation (Debian doc packages, see ``docsets.py``), answered the
way a user runs kforge: the folder indexed once with ``kforge ingest``, then a new
``kforge ask --corpus NAME "…"`` process per question (its exit code and wall time); then the
same questions in-process for the structured result (citations, short answer, refusal), scored
by the key-fact rule of ``answer_scoring.py``.

Each question file (``benchmarks/data/*_questions.jsonl``) holds one question a line: ``id``,
``question``, ``type``, ``answerable``, ``key_fact`` (null when unanswerable), ``source``
(``file`` and ``section`` where the fact is stated), ``quote`` (the stating sentence, copied
from the file; for a comparison stated in two sentences, a list of both) and, for an
unanswerable question, ``absent`` (why the set cannot answer it) and ``absent_terms`` (words
that occur nowhere in the set).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from answer_runs import (
    ask_arguments,
    chunk_texts,
    citation_list,
    print_metrics,
    progress,
    run_router,
)
from answer_scoring import (
    KeyFact,
    is_refusal,
    quoted_sentences,
    score_sentences,
    short_answer,
    states_key_fact,
    strip_markers,
)
from kforge import Runtime
from kforge.rag.idioms import plain_words
from kforge.rag.rerank import POOL, search_units

__all__ = [
    "QUESTION_SETS",
    "QUESTION_TYPES",
    "cli_ask",
    "cli_ingest",
    "cli_pass",
    "docset_path",
    "docset_totals",
    "document_text",
    "load_questions",
    "print_docset",
    "quotes_of",
    "run_docset",
    "score_docset_row",
    "sections",
]

DATA = Path(__file__).resolve().parent / "data"
QUESTION_SETS = {
    "nodejs": DATA / "nodejs_questions.jsonl",
    "gettext": DATA / "gettext_questions.jsonl",
    "sqlite": DATA / "sqlite_questions.jsonl",
    "flask": DATA / "flask_questions.jsonl",
    "click": DATA / "click_questions.jsonl",
    "jinja": DATA / "jinja_questions.jsonl",
    "pytest": DATA / "pytest_questions.jsonl",
    "scrapy": DATA / "scrapy_questions.jsonl",
    "postgresql": DATA / "postgresql_questions.jsonl",
    "sphinx": DATA / "sphinx_questions.jsonl",
    "borgbackup": DATA / "borgbackup_questions.jsonl",
    "mypy": DATA / "mypy_questions.jsonl",
    "django": DATA / "django_questions.jsonl",
    "celery": DATA / "celery_questions.jsonl",
    "psycopg": DATA / "psycopg_questions.jsonl",
    "aiohttp": DATA / "aiohttp_questions.jsonl",
    "snakemake": DATA / "snakemake_questions.jsonl",
    "doxygen": DATA / "doxygen_questions.jsonl",
    "diffutils": DATA / "diffutils_questions.jsonl",
    "hypothesis": DATA / "hypothesis_questions.jsonl",
    "apache": DATA / "apache_questions.jsonl",
    "attrs": DATA / "attrs_questions.jsonl",
    "requests": DATA / "requests_questions.jsonl",
    "werkzeug": DATA / "werkzeug_questions.jsonl",
    "cmd2": DATA / "cmd2_questions.jsonl",
    "doit": DATA / "doit_questions.jsonl",
    "factoryboy": DATA / "factoryboy_questions.jsonl",
}
QUESTION_TYPES = frozenset(
    {"definition", "procedure", "quantity", "yes_no", "comparison", "reason", "who_when_where"}
)
_HIDDEN = re.compile(r"(?is)<(script|style)\b[^>]*>.*?</\1\s*>")
_HTML_HEADING = re.compile(r"(?is)<h([1-6])\b[^>]*>(.*?)</h\1\s*>")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
_SOURCES = re.compile(r"\n\s*\nSources:\n")


def load_questions(path: Path) -> list[dict[str, Any]]:
    """The questions of ``path``, each checked against the schema (ValueError naming the line)."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        where = f"{path.name}:{number}"
        for key in ("id", "question", "type", "answerable"):
            if key not in item:
                raise ValueError(f"{where}: missing {key!r}")
        if item["type"] not in QUESTION_TYPES:
            raise ValueError(
                f"{where}: type {item['type']!r} is not one of {sorted(QUESTION_TYPES)}"
            )
        if item["answerable"]:
            fact = KeyFact.from_json(item.get("key_fact") or {})
            if fact.empty:
                raise ValueError(f"{where}: an answerable question needs a key_fact")
            source = item.get("source") or {}
            if not (source.get("file") and source.get("section") and quotes_of(item)):
                raise ValueError(
                    f"{where}: an answerable question needs source.file, .section, quote"
                )
        elif item.get("key_fact") is not None or not item.get("absent"):
            raise ValueError(
                f"{where}: an unanswerable question has key_fact null and says 'absent'"
            )
        items.append(item)
    ids = [i["id"] for i in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path.name}: question ids repeat")
    return items


def quotes_of(item: Mapping[str, Any]) -> list[str]:
    """The item's quoted sentences (one, or the list of a comparison's two)."""
    quote = item.get("quote")
    return [quote] if isinstance(quote, str) else [str(q) for q in quote or []]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _html_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def document_text(path: Path) -> str:
    """A doc-set file's text as its quotes are copied from it: whitespace collapsed; for HTML,
    scripts, styles and tags removed and entities decoded."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".html", ".htm"):
        raw = _html_text(_HIDDEN.sub("", raw))
    return _flat(raw)


def sections(path: Path) -> list[tuple[str, str]]:
    """(heading, text) of each section of a Markdown or HTML file, in order; the text runs from
    the heading to the next heading of any level (text before the first heading: heading "")."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".html", ".htm"):
        raw = _HIDDEN.sub("", raw)
        marks = [
            (m.start(), m.end(), _flat(_html_text(m.group(2)))) for m in _HTML_HEADING.finditer(raw)
        ]
        body: Callable[[str], str] = _html_text
    else:
        marks = [(m.start(), m.end(), m.group(2).strip()) for m in _MD_HEADING.finditer(raw)]
        body = str
    out = [("", _flat(body(raw[: marks[0][0] if marks else len(raw)])))]
    for n, (_, end, heading) in enumerate(marks):
        stop = marks[n + 1][0] if n + 1 < len(marks) else len(raw)
        out.append((heading, _flat(body(raw[end:stop]))))
    return out


# -- running kforge as a user does ---------------------------------------------------------


def _kforge(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kforge", "--db", str(db), *args]


def cli_ingest(
    folder: Path, corpus: str, db: Path, *, embedder: str | None = None
) -> dict[str, Any]:
    """``kforge ingest FOLDER --corpus NAME`` once (with ``--embedder`` when one is given);
    RuntimeError with its output if it fails."""
    started = time.perf_counter()
    vectors = ["--embedder", embedder] if embedder else []
    done = subprocess.run(
        _kforge(db, "ingest", str(folder), "--corpus", corpus, *vectors),
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"kforge ingest {folder} exited {done.returncode}: {(done.stderr or done.stdout)[-800:]}"
        )
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    return {"seconds": round(seconds, 2), "summary": summary}


def _child_cpu_seconds() -> float:
    """User and system CPU time of this process's ended children: a process's own cost, which
    other work on the machine does not inflate as it does wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_ask(
    question: str, corpus: str, db: Path, *, model: str, answer: str | None, timeout: float
) -> dict[str, Any]:
    """One ``kforge ask --corpus NAME QUESTION`` process: exit code, seconds, printed answer."""
    args = ["ask", "--corpus", corpus, "--model", model]
    if answer:
        args += ["--answer", answer]
    started = time.perf_counter()
    before = _child_cpu_seconds()
    try:
        done = subprocess.run(
            [*_kforge(db, *args), question],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "exit": None,
            "seconds": round(time.perf_counter() - started, 3),
            "error": "timeout",
        }
    seconds = time.perf_counter() - started
    printed = _SOURCES.split(done.stdout, maxsplit=1)[0].strip()
    outcome: dict[str, Any] = {
        "exit": done.returncode,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(_child_cpu_seconds() - before, 3),
        "answer": printed,
    }
    if done.returncode != 0:
        outcome["error"] = (done.stderr or "").strip()[-800:]
    return outcome


# -- one doc set ------------------------------------------------------------------------------


def cli_pass(
    name: str, folder: Path, items: Sequence[dict[str, Any]], opts: argparse.Namespace
) -> dict[str, Any]:
    """``kforge ingest`` of ``folder`` once, then one ``kforge ask`` process per question."""
    db = opts.workdir / f"{name}.db"
    ingest = cli_ingest(folder, name, db, embedder=opts.embedder)
    progress(f"{name}: kforge ingest: {ingest['summary']} ({ingest['seconds']} s)")
    runs = []
    for n, item in enumerate(items, 1):
        run = cli_ask(
            item["question"], name, db, model=opts.model, answer=opts.answer, timeout=opts.timeout
        )
        runs.append(run)
        state = "ok" if run.get("exit") == 0 else f"EXIT {run.get('exit')}"
        progress(f"[{name} ask {n}/{len(items)}] {item['id']}: {state}, {run['seconds']:.2f} s")
    return {"db": db, "ingest": ingest, "runs": runs}


async def run_docset(
    name: str, items: list[dict[str, Any]], opts: argparse.Namespace
) -> dict[str, Any]:
    """A doc set's questions asked as a user does, then in-process, and scored."""
    folder = opts.folder or docset_path(name)
    cli = cli_pass(name, folder, items, opts)
    rt = Runtime(cli["db"], model=opts.model)
    rows = []
    try:
        corpus = rt.services.corpus(name)
        for n, (item, run) in enumerate(zip(items, cli["runs"], strict=True), 1):
            outcome = await run_router(
                rt, ask_arguments(item["question"], name, opts.answer), opts.timeout
            )
            texts = chunk_texts(corpus, citation_list(outcome.get("result") or {}))
            row = score_docset_row(item, run, outcome, texts)
            if item["answerable"]:
                row.update(key_passage_ranks(corpus, item))
            rows.append(row)
            verdict = _verdict(row)
            progress(f"[{name} {n}/{len(items)}] {item['id']}: {verdict}")
    finally:
        await rt.aclose()
    source = (
        (folder / ".complete").read_text().strip()
        if (folder / ".complete").is_file()
        else str(folder)
    )
    return {"docset": source, "ingest": cli["ingest"], "totals": docset_totals(rows), "rows": rows}


READ = 5
"""Passages an answer reads (``search_units``' k as the router asks it)."""


def _folded(text: str) -> str:
    return re.sub(r"\W+", " ", text).lower().strip()


def holds_quote(chunk_text: str, item: Mapping[str, Any]) -> bool:
    """True when a chunk holds the opening (60 characters, case and punctuation folded) of one
    of ``item``'s quotes: the passage that states the key fact."""
    folded = _folded(chunk_text)
    return any(q and q in folded for q in (_folded(q)[:60] for q in quotes_of(item)))


def key_passage_ranks(corpus: Any, item: Mapping[str, Any]) -> dict[str, int | None]:
    """Where the passage stating the key fact stands (0 = first, None = absent): among the
    search's ``POOL`` hits for the question, and among the ``READ`` passages the answer reads
    after reranking (``search_units``). Says at which step an answer that misses the key fact
    lost it: the search, the reranking, or the choice of sentences."""
    pool = corpus.search(plain_words(item["question"]), POOL)
    read = search_units(corpus, item["question"], READ)

    def rank(hits: Sequence[Any]) -> int | None:
        return next((n for n, h in enumerate(hits) if holds_quote(h.chunk.text, item)), None)

    return {"key_passage_searched": rank(pool), "key_passage_read": rank(read)}


def _verdict(row: Mapping[str, Any]) -> str:
    if row["crashed"]:
        return "CRASHED"
    if row["refused"]:
        return "refused"
    if not row["answerable"]:
        return "answered (should refuse)"
    return "key fact" if row["stated_key_fact"] else "no key fact"


def docset_path(name: str) -> Path:
    """The doc set's folder, fetched on first use (``docsets.py``)."""
    from docsets import docset_path as fetch

    return fetch(name)


# -- scoring -------------------------------------------------------------------------------


def score_docset_row(
    item: Mapping[str, Any],
    cli: Mapping[str, Any],
    inproc: Mapping[str, Any],
    chunk_texts: Mapping[int, str],
) -> dict[str, Any]:
    """One question's row: the in-process result scored, the CLI run's exit and seconds."""
    row: dict[str, Any] = {
        "id": item["id"],
        "question": item["question"],
        "type": item["type"],
        "answerable": item["answerable"],
        "cli_exit": cli.get("exit"),
        "seconds": cli.get("seconds"),
        "cpu_seconds": cli.get("cpu_seconds"),
        "seconds_in_process": round(inproc["seconds"], 3),
    }
    errors = [e for e in (cli.get("error"), inproc.get("error")) if e]
    row["crashed"] = bool(errors) or cli.get("exit") != 0
    if errors:
        row["error"] = " | ".join(str(e) for e in errors)
    if "error" in inproc:
        return {**row, "answer": cli.get("answer", ""), "refused": None, "stated_key_fact": False}
    result = inproc["result"]
    answer = str(result.get("answer", ""))
    refused = is_refusal(answer, result)
    short = "" if refused else short_answer(result)
    stated = None
    short_stated = None
    if item["answerable"]:
        fact = KeyFact.from_json(item["key_fact"])
        stated = states_key_fact(answer, fact, refused=refused)
        short_stated = states_key_fact(short, fact, refused=refused)
    found, pieces, not_found = (0, 0, []) if refused else quoted_sentences(answer, chunk_texts)
    scored = [s for s in ([] if refused else score_sentences(answer, chunk_texts)) if s.counted]
    citations = [c for c in result.get("citations") or [] if isinstance(c, dict)]
    row.update(
        answer=answer,
        short_answer=short,
        refused=refused,
        stated_key_fact=stated,
        short_answer_states_key_fact=short_stated,
        pieces=pieces,
        pieces_quoted=found,
        pieces_not_quoted=not_found,
        sentences=len(scored),
        sentences_supported=sum(s.status == "supported" for s in scored),
        cited_files=[Path(str(c.get("file", ""))).name for c in citations],
        expected_file=(item.get("source") or {}).get("file"),
        cli_same_answer=_flat(strip_markers(str(cli.get("answer", ""))))
        == _flat(strip_markers(answer)),
    )
    return row


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def docset_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    stated = sum(bool(r.get("stated_key_fact")) for r in answerable)
    pieces = sum(r.get("pieces", 0) for r in rows)
    quoted = sum(r.get("pieces_quoted", 0) for r in rows)
    by_type: dict[str, list[int]] = {}
    for r in answerable:
        tally = by_type.setdefault(r["type"], [0, 0])
        tally[0] += bool(r.get("stated_key_fact"))
        tally[1] += 1
    cli_seconds = [r["seconds"] for r in rows if r.get("seconds") is not None]
    read = [r.get("key_passage_read") for r in answerable]
    first = [r for r in answerable if r.get("key_passage_read") == 0]
    return {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "key_fact_stated": stated,
        "key_fact_share": _share(stated, len(answerable)),
        "short_answer_states_key_fact": sum(
            bool(r.get("short_answer_states_key_fact")) for r in answerable
        ),
        "key_fact_by_type": {t: f"{k}/{n}" for t, (k, n) in sorted(by_type.items())},
        "key_passage_searched": sum(r.get("key_passage_searched") is not None for r in answerable),
        "key_passage_read": sum(n is not None for n in read),
        "key_passage_first": len(first),
        "key_fact_when_passage_first": sum(bool(r.get("stated_key_fact")) for r in first),
        "right_refusals": sum(r.get("refused") is True for r in unanswerable),
        "wrong_refusals": sum(r.get("refused") is True for r in answerable),
        "crashes": sum(bool(r["crashed"]) for r in rows),
        "pieces": pieces,
        "pieces_quoted": quoted,
        "quoted_share": _share(quoted, pieces),
        "sentences": sum(r.get("sentences", 0) for r in rows),
        "sentences_supported": sum(r.get("sentences_supported", 0) for r in rows),
        "cli_same_answer": sum(bool(r.get("cli_same_answer")) for r in rows),
        "seconds_median": _median(cli_seconds),
        "seconds_max": round(max(cli_seconds), 3) if cli_seconds else None,
        "cpu_seconds_median": _median([r["cpu_seconds"] for r in rows if r.get("cpu_seconds")]),
        "seconds_in_process_median": _median([r["seconds_in_process"] for r in rows]),
    }


TARGETS = {"key_fact_share": 0.8, "crashes": 0, "quoted_share": 0.95, "seconds_median": 1.0}


def print_docset(name: str, section: Mapping[str, Any], label: str) -> None:
    t = section["totals"]

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.0f}%"

    lines = [
        (
            "answers stating the key fact",
            f"{t['key_fact_stated']} / {t['answerable']} ({pct(t['key_fact_share'])})",
            ">= 80%",
        ),
        (
            "  ... in the short answer line",
            f"{t['short_answer_states_key_fact']} / {t['answerable']}",
            "",
        ),
        (
            f"key passage in the search's {POOL} / read {READ} / first",
            f"{t.get('key_passage_searched', '-')} / {t.get('key_passage_read', '-')} / "
            f"{t.get('key_passage_first', '-')} of {t['answerable']}",
            "",
        ),
        (
            "  ... key fact stated when it is first",
            f"{t.get('key_fact_when_passage_first', '-')} / {t.get('key_passage_first', '-')}",
            "",
        ),
        ("right refusals (unanswerable)", f"{t['right_refusals']} / {t['unanswerable']}", "all"),
        ("wrong refusals (answerable)", f"{t['wrong_refusals']} / {t['answerable']}", "0"),
        ("crashes", t["crashes"], "0"),
        (
            "sentences found in a cited chunk",
            f"{t['pieces_quoted']} / {t['pieces']} ({pct(t['quoted_share'])})",
            ">= 95%",
        ),
        ("  ... >= 70% of words in them", f"{t['sentences_supported']} / {t['sentences']}", ""),
        ("kforge ask process, median s", f"{t['seconds_median']} (max {t['seconds_max']})", "<= 1"),
        ("  ... its CPU seconds, median", t["cpu_seconds_median"], ""),
        ("in-process run, median s", t["seconds_in_process_median"], ""),
        ("CLI printed the same answer", f"{t['cli_same_answer']} / {t['questions']}", ""),
    ]
    print_metrics(
        f"Answer quality on the {name} doc set ({section.get('docset', '')}): {label}", lines
    )
    print("key fact by type: " + ", ".join(f"{k} {v}" for k, v in t["key_fact_by_type"].items()))
