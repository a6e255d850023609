"""Render the benchmark tables of docs/benchmarks.md and README.md from the result files.

Each benchmark's result JSON is kept in ``benchmarks/results/NAME.json``, holding the date and
the machine it ran on. A table in a Markdown file sits between marker comments::

    <!-- table:NAME -->
    ... (written by this script) ...
    <!-- /table -->

and this script rewrites what is between them from ``results/NAME.json`` (``summary`` is one
row per result file present). So a figure in the documentation is always the render of a kept
measurement; ``tests/benchmarks/test_render_tables.py`` checks that the committed files equal
the render.

    python benchmarks/render_tables.py                      # rewrite the tables
    python benchmarks/render_tables.py --check              # exit 1 if a table is out of date
    python benchmarks/render_tables.py add NAME out.json    # keep a run's JSON, then render
    python benchmarks/render_tables.py add-docsets COMMIT click.json="held out" ...

``add`` copies a benchmark's JSON into ``results/NAME.json``; a JSON without a ``date`` gets
the time the benchmark wrote the file (its modification time), marked as such, and one without
a ``machine`` gets this machine's with ``--this-machine`` (only true when it ran here).

To render a new benchmark: add a function ``NAME(report) -> str`` to ``RENDERERS`` (and to
``SUMMARIES`` for a row of the README's summary), put a ``table:NAME`` marker pair where the
table goes, drop its JSON in ``results/`` and run the script.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["RENDERERS", "SUMMARIES", "add_docsets", "load_results", "main", "render_text"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TARGETS = (ROOT / "docs" / "benchmarks.md", ROOT / "README.md")
MARKED = re.compile(r"(<!-- table:([\w-]+) -->\n)(.*?)(<!-- /table -->)", re.DOTALL)

Report = dict[str, Any]
_TIMES = "\N{MULTIPLICATION SIGN}"


def _num(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "\N{EN DASH}"
    return f"{value:,.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def provenance(report: Report) -> str:
    """The line under a table: when, on what, under which load."""
    m = report["machine"]
    what = ", ".join(
        str(part)
        for part in (
            m.get("system"),
            m.get("cpu"),
            f"{m['cpus']} CPUs" if m.get("cpus") else None,
            f"Python {m['python']}" if m.get("python") else None,
            f"load average {m['load_average_at_start'][0]} at the start"
            if m.get("load_average_at_start")
            else None,
        )
        if part
    )
    date = str(report["date"])
    if report.get("date_source"):
        date += f" ({report['date_source']})"
    return f"_Measured {date} on {what}._\n"


def server_load(report: Report) -> str:
    modes = [m for m in ("paced", "capacity") if m in report]
    runs = {m: report[m] for m in modes}

    def row(label: str, cell: Callable[[Report], str]) -> list[str]:
        return [label, *(cell(runs[m]) for m in modes)]

    def pair(key: str) -> Callable[[Report], str]:
        return lambda r: f"{_num(r[key]['p50'])} / {_num(r[key]['p99'])} ms"

    header = ["measure"] + [
        f"paced: a frame every {runs[m]['interval_s'] * 1000:g} ms per run"
        if m == "paced"
        else "capacity: frames as fast as the runs commit"
        for m in modes
    ]
    storm = "reconnect storm"
    rows = [
        row("runs \N{MULTIPLICATION SIGN} frames each, subscribers", lambda r: (
            f"{r['runs']} \N{MULTIPLICATION SIGN} {r['steps_per_run']}, {r['subscribers']}")),
        row("events delivered", lambda r: f"{_num(r['events_delivered'], 0)} in "
            f"{_num(r['seconds'])} s"),
        row("events delivered a second", lambda r: _num(r["events_per_s"], 0)),
        row("frames committed a second (all runs)", lambda r: _num(r["frames_committed_per_s"])),
        row("latency p50 / p99, every frame (replayed ones included)", pair("latency_ms")),
        row("... of which replayed from the store (count)", lambda r: (
            f"{_num(r['replayed_events_timed'], 0)}")),
        row("latency p50 / p99 of replayed frames", pair("latency_replayed_ms")),
        row("latency p50 / p99, steady state (live, all connected, before the storm)",
            pair("latency_before_storm_ms")),
        row("server RSS peak", lambda r: f"{_num(r['server_rss_mb_peak'])} MB"),
        row("server / client CPU s", lambda r: f"{r['server_cpu_s']} / {r['client_cpu_s']}"),
        row("load average (1 min) at the end", lambda r: f"{r['load_average_1m']}"),
        row(f"{storm}: connections, frames lost / received twice", lambda r: (
            f"{r['reconnect_storm']['connections']}, {r['reconnect_storm']['lost']} / "
            f"{r['reconnect_storm']['duplicated']}")),
    ]  # fmt: skip
    return _table(header, rows) + "\n" + provenance(report)


def mcp_conformance(report: Report) -> str:
    suites: dict[str, dict[str, int]] = {}
    for outcome in report["scenarios"].values():
        s = suites.setdefault(outcome["suite"], dict.fromkeys(("n", "ok", "bad", "checks", "w"), 0))
        s["n"] += 1
        s["ok"] += outcome["status"] == "passed"
        s["bad"] += outcome["status"] == "failed"
        s["checks"] += outcome["checks"]
        s["w"] += len(outcome["warnings"])
    rows = [
        [suite, str(s["n"]), str(s["ok"]), str(s["bad"]), str(s["checks"]), str(s["w"]),
         str(report.get("exit_codes", {}).get(suite, "\N{EN DASH}"))]
        for suite, s in suites.items()
    ]  # fmt: skip
    missing = report.get("missing", [])
    rows.append(["listed but wrote no results", str(len(missing)), "", "", "", "", ""])
    header = ["suite", "scenarios", "passed", "failed", "checks", "warnings", "suite exit code"]
    note = f"`{report['package']}` on Node {report['node']}. "
    return _table(header, rows) + "\n" + note + provenance(report)


def answer_quality_samples(report: Report) -> str:
    t = report["samples"]["totals"]
    targets = report.get("targets", {})
    answered = t["completed"]
    rows = [
        ["questions (completed / failed)", f"{t['questions']} ({t['completed']} / {t['failed']})",
         ""],
        ["answers stating the key fact", f"{t['key_fact_stated']} of {t['with_key_fact']}",
         "≥ 80 %"],
        ["answer pieces found verbatim in a chunk they cite",
         f"{t['pieces_quoted']} / {t['pieces']}", "≥ 95 %"],
        ["sentences sharing ≥ 70 % of their content words with their cited chunks",
         f"{t['sentences_supported']} / {t['sentences']} ({t['supported_share'] * 100:.1f} %)",
         f"≥ {targets.get('supported_share', 0.9) * 100:g} %"],
        ["expected document cited in the text", f"{t['expected_cited_in_text']} of {answered}",
         "≥ 9 of 10"],
        ["degenerate answers / prompt echo", f"{t['degenerate']} / {t['echo']}", "0 / 0"],
        ["markers naming nothing", str(t["markers_naming_nothing"]), "0"],
        ["refusals of answerable questions", str(t["refused"]), "0"],
        ["seconds per answer (the run in-process), median / p90",
         f"{t['seconds_median']} / {t['seconds_p90']}", "≤ 3 (median)"],
    ]  # fmt: skip
    path = f"`--answer {report['answer']}`" if report.get("answer") else "its default"
    note = f"Model `{report['model']}`, answer path: {path}. "
    return _table(["samples", "value", "target"], rows) + "\n" + note + provenance(report)


def _passage_stages(totals: dict[str, Any]) -> str:
    if "key_passage_searched" not in totals:
        return "-"  # a run before the benchmark located the passage
    return (
        f"{totals['key_passage_searched']} / {totals['key_passage_read']} / "
        f"{totals['key_passage_first']}"
    )


def _first_stated(totals: dict[str, Any]) -> str:
    if "key_fact_when_passage_first" not in totals:
        return "-"
    return f"{totals['key_fact_when_passage_first']} / {totals['key_passage_first']}"


def answer_quality_docsets(report: Report) -> str:
    """One column per documentation set: what each set was to the code measured (held out,
    or what the answer rules were designed on) beside its figures."""
    sets = report["sets"]
    header = ["", *(f"{s['name']} ({s['totals']['answerable']} + {s['totals']['unanswerable']})"
                    for s in sets), "target"]  # fmt: skip

    def row(label: str, cell: Callable[[dict[str, Any]], str], target: str) -> list[str]:
        return [label, *(cell(s) for s in sets), target]

    def share(t: dict[str, Any]) -> str:
        return f"{t['key_fact_stated']} / {t['answerable']} ({t['key_fact_share'] * 100:.0f} %)"

    rows = [
        row("what the set is to this code", lambda s: s["role"], ""),
        row("answers stating the key fact", lambda s: share(s["totals"]), "≥ 80 %"),
        row("... in the short answer line", lambda s: f"{s['totals']['short_answer_states_key_fact']}", ""),
        row("passage stating it: in the search's 40 / among the 5 read / read first",
            lambda s: _passage_stages(s["totals"]), ""),
        row("... key fact stated when that passage is read first",
            lambda s: _first_stated(s["totals"]), ""),
        row("unanswerable questions refused (right)",
            lambda s: f"{s['totals']['right_refusals']} / {s['totals']['unanswerable']}", "all"),
        row("answerable questions refused (wrong)", lambda s: str(s["totals"]["wrong_refusals"]), "0"),
        row("crashes", lambda s: str(s["totals"]["crashes"]), "0"),
        row("answer pieces found in a chunk they cite",
            lambda s: f"{s['totals']['pieces_quoted']} / {s['totals']['pieces']}", "≥ 95 %"),
        row("`kforge ask` process, median wall s (CPU s)",
            lambda s: f"{s['totals']['seconds_median']} ({s['totals']['cpu_seconds_median']})", "≤ 1"),
        row("load average at the start", lambda s: str(s["load_average_at_start"][0]), ""),
    ]  # fmt: skip
    by_type = "; ".join(
        f"{s['name']}: " + ", ".join(f"{k} {v}" for k, v in s["totals"]["key_fact_by_type"].items())
        for s in sets
    )
    note = (
        f"Model `{report['model']}` (extractive path: no model call), main at "
        f"`{report['commit']}`. Key fact by question type: {by_type}. "
    )
    return _table(header, rows) + "\n" + note + provenance(report)


def answer_quality_hotpotqa(report: Report) -> str:
    """Answer EM/F1 on the short answer line and supporting-fact figures of a full run on the
    HotpotQA sample, the BM25 floor when it was run, beside the paper's trained baseline, each
    row saying what its questions are (the answer rules were designed on every question of the
    sample: there is no held-out split)."""
    h = report["hotpotqa"]
    t = h["answers"]["totals"]
    p = h["published"]
    n = t["questions"]
    ours = f"{n}-question sample; the answer rules were designed on all {n} (no held-out split)"
    rows = [
        [f"router, `{report['model']}`, extractive (no model call)", ours, _num(t["answer_em"]),
         _num(t["answer_f1"]), _num(t["sp_precision"]), _num(t["sp_recall"]), _num(t["sp_f1"])],
    ]  # fmt: skip
    if "bm25_floor" in h:
        b = h["bm25_floor"]
        rows.append(["BM25 top-2 sentences (the floor)", f"the same {b['questions']} questions",
                     "", "", _num(b["sp_precision"]), _num(b["sp_recall"]), _num(b["sp_f1"])])  # fmt: skip
    rows.append([f"{p['source']}: a trained model", "the full dev set (7,405 questions), unseen",
                 _num(p["answer_em"]), _num(p["answer_f1"]), "", "", _num(p["sp_f1"])])  # fmt: skip
    header = ["HotpotQA distractor (%)", "questions", "answer EM", "answer F1", "SP P", "SP R",
              "SP F1"]  # fmt: skip
    note = (
        f"Answer EM/F1 on the answer's short line; {t['completed']} completed, {t['failed']} "
        f"failed; seconds per answer in-process, median {t['seconds_median']} / p90 "
        f"{t['seconds_p90']}. Not like for like: a {n}-question sample the rules were tuned on, "
        f"against a trained model on the whole dev set. "
    )
    return _table(header, rows) + "\n" + note + provenance(report)


def runtime_vs_langgraph(report: Report) -> str:
    """Every row the script measures, the unflattering ones beside the others: both SQLite
    synchronous levels, every K the run measured (10, 50 and 200 by default), LangGraph's async
    durability, its DeltaChannel storage and its graph without any checkpointer."""
    r = report
    ks = r["settings"]["k"]

    def pair(ours: float, theirs: float, digits: int = 0) -> list[str]:
        return [_num(ours, digits), _num(theirs, digits), f"{ours / theirs:.3f}"]

    rows = []
    for level in ("normal", "full"):
        for k in ks:
            ours = r[f"kforge_us_per_step_{level}_k{k}"]
            rows.append(
                [
                    f"µs per committed step, {level.upper()}, K={k}, vs SqliteSaver (sync)",
                    *pair(ours, r[f"langgraph_us_per_step_{level}_k{k}"]),
                ]
            )
            rows.append(
                [
                    "... vs SqliteSaver with durability=async",
                    *pair(ours, r[f"langgraph_async_us_per_step_{level}_k{k}"]),
                ]
            )
            rows.append(
                [
                    f"CPU µs per step, {level.upper()}, K={k} (all threads)",
                    *pair(
                        r[f"kforge_cpu_us_per_step_{level}_k{k}"],
                        r[f"langgraph_cpu_us_per_step_{level}_k{k}"],
                    ),
                ]
            )
    for k in ks:
        rows.append(
            [
                f"µs per step, NORMAL, K={k}, vs LangGraph with no checkpointer (durable nothing)",
                *pair(
                    r[f"kforge_us_per_step_normal_k{k}"],
                    r[f"langgraph_no_checkpointer_us_per_step_k{k}"],
                ),
            ]
        )
        rows.append(
            [
                f"CPU µs per step, K={k}, vs LangGraph with no checkpointer",
                *pair(
                    r[f"kforge_cpu_us_per_step_normal_k{k}"],
                    r[f"langgraph_no_checkpointer_cpu_us_per_step_k{k}"],
                ),
            ]
        )
    for k in ks:
        rows.append(
            [
                f"database bytes after K={k}, vs SqliteSaver",
                *pair(r[f"kforge_bytes_k{k}"], r[f"langgraph_bytes_k{k}"]),
            ]
        )
        rows.append(
            [
                "... vs LangGraph's DeltaChannel (beta)",
                *pair(r[f"kforge_bytes_k{k}"], r[f"langgraph_delta_channel_bytes_k{k}"]),
            ]
        )
    rows += [
        ["resume until the next step is committed, ms, NORMAL",
         *pair(r["kforge_resume_ms_normal"], r["langgraph_resume_ms_normal"], 2)],
        ["... FULL", *pair(r["kforge_resume_ms_full"], r["langgraph_resume_ms_full"], 2)],
        ["... including opening the database",
         *pair(r["kforge_resume_cold_ms"], r["langgraph_resume_cold_ms"], 2)],
        ["`from kforge import Runtime` vs `from langgraph.graph import StateGraph`, s",
         *pair(r["kforge_runtime_import_s"], r["langgraph_import_s"], 3)],
        ["`import kforge` alone (lazy), s", _num(r["kforge_import_s"], 3), "", ""],
    ]  # fmt: skip
    targets = "; ".join(
        f"{name} {t['value']:.3f} (≤ {t['limit']:.3g}: {'met' if t['pass'] else 'missed'})"
        for name, t in r["targets"].items()
    )
    versions = r["settings"].get("langgraph_versions", {})
    note = (
        f"LangGraph {versions.get('langgraph', '?')} with langgraph-checkpoint-sqlite "
        f"{versions.get('langgraph-checkpoint-sqlite', '?')}, durability='sync' unless said; "
        f"both on a file database in WAL mode; medians of {r['settings']['repeat']} rounds. "
        f"Targets (ratio = kforge / LangGraph): {targets}. "
    )
    return _table(["metric", "kforge", "LangGraph", "ratio"], rows) + "\n" + note + provenance(r)


def tree(report: Report) -> str:
    """kforge's trees beside all three LangGraph setups at each N, the ratio against the
    fastest of them."""
    setups = (("shared", "one shared connection"), ("per_thread", "a connection per thread"),
              ("async", "the async saver on one loop"))  # fmt: skip
    rows = []
    for row in report["rows"]:
        k = row["kforge"]
        agents = f"{row['n']} ({k['agents']})"
        rows.append(
            [
                agents,
                "kforge",
                _num(k["steps_per_s"], 0),
                _num(k["steps_per_cpu_s"], 0),
                _num(k["peak_rss_mb"]),
                _num(k["kb_per_agent"]),
                f"{row['speedup']:.2f}{_TIMES}",
            ]
        )
        for key, label in setups:
            lg = row[f"langgraph_{key}"]
            fastest = " (fastest)" if row["langgraph_setup"] == key else ""
            rows.append(
                [
                    agents,
                    f"LangGraph, {label}{fastest}",
                    _num(lg["steps_per_s"], 0),
                    _num(lg["steps_per_cpu_s"], 0),
                    _num(lg["peak_rss_mb"]),
                    _num(lg["kb_per_agent"]),
                    "",
                ]
            )
    t = report["target"]
    shape = report["tree"]
    note = (
        f"Trees of {shape['agents_per_tree']} agents (fan-out {shape['fanout']}, depth "
        f"{shape['depth']}); LangGraph {report['rows'][0]['langgraph_version']}; the ratio is "
        f"kforge's steps/s over the fastest LangGraph setup at that N (target "
        f"≥ {t['kforge_steps_per_s_vs_fastest_langgraph_setup_at_every_n']:g}{_TIMES} at every N: "
        f"{'met' if t['met'] else 'missed'}); each side's best of its rounds, the side that "
        f"runs first alternating. "
    )
    header = ["N trees (agents)", "side", "steps/s", "steps per CPU-s", "peak RSS MB",
              "KB per agent", "kforge / fastest LangGraph"]  # fmt: skip
    faults = "\n" + tree_faults(report["faults"]) if "faults" in report else ""
    return _table(header, rows) + "\n" + note + provenance(report) + faults


def tree_faults(faults: Report) -> str:
    """tree.py's second scenario: the trees steered, killed and resumed, on each side."""
    rows = []
    for row in faults["rows"]:
        for side, m in row.items():
            if side == "n":
                continue
            steered = [str(m.get(k, "\N{EN DASH}")) for k in ("accepted", "lost", "applied_twice")]
            label = "kforge" if side == "kforge" else f"LangGraph, {m['setup']}"
            rows.append([str(row["n"]), label, str(m["steps_before_kill"]), str(m["steps"]),
                         str(m["steps_reexecuted"]), _num(m["wall_s"], 2),
                         _num(m["resume_wall_s"], 2), *steered])  # fmt: skip
    header = ["N trees", "side", "steps at the kill", "steps", "run again", "wall s",
              "resume s", "interventions applied", "lost", "applied twice"]  # fmt: skip
    return _table(header, rows) + "\n" + "; ".join(faults["notes"]) + ".\n"


def _worker_counts(r: Report) -> list[int]:
    """The ``kforge worker`` counts a PostgreSQL run measured throughput at."""
    return sorted(
        int(key.removeprefix("kforge_workers").removesuffix("_runs_per_s"))
        for key in r
        if key.startswith("kforge_workers") and key.endswith("_runs_per_s")
    )


def postgres_vs_langgraph(report: Report) -> str:
    """Both ``synchronous_commit`` levels, resume warm and cold (a new process's first resume),
    then the throughput of ``kforge worker`` processes."""
    r = report
    limits = r["targets"]

    def row(label: str, key: str, digits: int, target: str | None = None) -> list[str]:
        ours, theirs = r[f"kforge_{key}"], r.get(f"langgraph_{key}")
        ratio = f"{ours / theirs:.3f}" if theirs else ""
        goal = ""
        if target in limits:
            t = limits[target]
            goal = f"≤ {t['limit']:.3g} ({'met' if t['pass'] else 'missed'})"
        return [label, _num(ours, digits), _num(theirs, digits), ratio, goal]

    k = r["settings"]["k"]
    rows = [
        row("µs per step, commits waiting for the WAL flush", "us_per_step", 0, "us_per_step"),
        row("... `synchronous_commit=off`", "us_per_step_async_commit", 0),
        row(f"database bytes after K={k}", "bytes", 0, "bytes"),
        row(f"bytes per step (K={k // 2} to {k})", "bytes_per_step", 0),
        row("resume until the next step is committed, ms (warm)", "resume_ms", 2, "resume"),
        row("... cold: a new process's first resume", "resume_cold_ms", 2, "resume_cold"),
        *(
            [
                row(
                    "... cold: a new process's first resume, its connection opened (and "
                    "warmed, for kforge, as `kforge worker` does) before the clock starts",
                    "resume_worker_ms",
                    2,
                    "resume_worker",
                )
            ]
            if "kforge_resume_worker_ms" in r
            else []
        ),
        row("... warm, `synchronous_commit=off`", "resume_ms_async_commit", 2),
    ]
    table = _table(["metric", "kforge", "LangGraph", "ratio", "target"], rows)
    counts = _worker_counts(r)
    workers = [
        [
            str(n),
            _num(r[f"kforge_workers{n}_runs_per_s"]),
            _num(r[f"kforge_workers{n}_median_latency_ms"], 0),
            _num(r[f"kforge_workers{n}_p95_latency_ms"], 0),
        ]
        for n in counts
    ]
    plain = all(f"dbos_workers{n}_runs_per_s" in r for n in counts)
    for n, line in zip(counts, workers, strict=True) if plain else ():
        ours, theirs = r[f"kforge_workers{n}_runs_per_s"], r[f"dbos_workers{n}_runs_per_s"]
        per_core = (
            r[f"kforge_workers{n}_runs_per_s_per_core"],
            r[f"dbos_workers{n}_runs_per_s_per_core"],
        )
        line += [_num(per_core[0]), _num(theirs), _num(per_core[1]), f"{ours / theirs:.3f}"]
    s = r["settings"]
    versions = s.get("langgraph_versions") or {}
    note = (
        f"LangGraph {versions.get('langgraph', '?')} with PostgresSaver, durability='sync'; "
        f"K = {k} steps; resume: median of {s['resume_samples']}"
        + (f"; median of {s['repeat']} rounds, alternating sides" if s.get("repeat") else "")
        + f"; throughput: {s['runs']} runs "
        f"of {s['run_k']} steps through the dbos executor, {s['concurrency_per_worker']} "
        "stretches per worker. "
    )
    header = ["workers", "runs/s", "median run latency ms", "p95 run latency ms"]
    if plain:
        header += ["runs/s per core", "plain DBOS workflow runs/s", "per core", "kforge / DBOS"]
    return table + "\n" + _table(header, workers) + "\n" + note + provenance(r)


def corpus_scale(report: Report) -> str:
    """Every row of one ``corpus_scale.py`` run: both stores at each size and bm25s and
    tantivy beside them on the same chunks, each row with the load it was measured at."""
    names = {"sqlite": "kforge, SQLite", "postgres": "kforge, PostgreSQL"}
    rows = []
    for r in report["results"]:
        name = names.get(r["store"], r["store"])
        first = [
            f"{name} ({r['later_run']})" if r.get("later_run") else name,
            _num(r["chunks"], 0),
            _num(r["load_average"][0]),
        ]
        if "error" in r:
            rows.append([*first, f"failed: {r['error']}", *[""] * 5])
        elif r["store"] not in names:
            rows.append([*first, f"index {_num(r['index_s'])} s", "\N{EN DASH}", "\N{EN DASH}",
                         _num(r["peak_rss_mb"], 0), f"{r['search_p50_ms']} / {r['search_p95_ms']}",
                         f"{r['ndcg_at_10']:.3f}"])  # fmt: skip
        else:
            rss = sorted(r["ask_peak_rss_mb"])
            rows.append([*first, _num(r["ingest_docs_per_s"], 0),
                         _num(r["database_bytes"] / 1e6, 0), f"{r['ask_median_s']:.2f}",
                         f"{rss[0]}\N{EN DASH}{rss[-1]}" if rss[0] != rss[-1] else str(rss[0]),
                         f"{r['search_p50_ms']} / {r['search_p95_ms']}",
                         f"{r['ndcg_at_10']:.3f}"])  # fmt: skip
    header = ["", "chunks", "load", "ingest docs/s (that step)", "database MB",
              "`kforge ask` median s", "peak RSS MB", "search p50 / p95 ms", "nDCG@10"]  # fmt: skip
    largest = max(r["chunks"] for r in report["results"])
    postgres = [r for r in report["results"] if r["store"] == "postgres" and "error" not in r]
    at_largest = [r["search_p95_ms"] for r in postgres if r["chunks"] == largest]
    # the latest row of a size is the figure that counts (a later run's row comes last)
    target = (
        f"PostgreSQL search p95 at {_num(largest, 0)} chunks: {at_largest[-1]} ms (target "
        f"\N{LESS-THAN OR EQUAL TO} 50 ms: {'met' if at_largest[-1] <= 50 else 'missed'}). "
        if at_largest and largest >= 500_000
        else "The run stopped before 500,000 chunks (the size the targets name). "
    )
    note = (
        f"Load is the 1-minute load average when the row was measured (every time moves with "
        f"it); peak RSS is `kforge ask`'s (lowest\N{EN DASH}highest of its runs) for kforge, "
        f"the whole library process's for bm25s and tantivy. {target}"
        + (f"Code at {report['commit']}. " if report.get("commit") else "")
    )
    return _table(header, rows) + "\n" + note + provenance(report)


def ingest_quality(report: Report) -> str:
    """Every set the latest ``ingest_quality.py`` run measured, each figure as before → after
    when the run was kept with a before run (``--before``), the latest run's alone otherwise."""
    runs = report["runs"]
    label = list(runs)[-1]
    after = runs[label]
    before = runs.get("before", {}) if label != "before" else {}
    arrow = " \N{RIGHTWARDS ARROW} "

    def cell(name: str, key: str, show: Callable[[Any], str]) -> str:
        now = show(after[name][key])
        if name not in before:
            return now
        return show(before[name][key]) + arrow + now

    def share(value: float) -> str:
        return f"{100 * value:.1f} %"

    columns = (
        ("chunks", "chunks", str),
        ("boilerplate chunks", "boilerplate_share", share),
        ("furniture lines", "furniture_line_share", share),
        ("pages indexed twice", "indexed_twice", str),
        ("ingest s", "ingest_seconds", lambda v: _num(v)),
        ("peak RSS MiB", "peak_rss_mib", lambda v: _num(v, 0)),
    )
    rows = [[name, *(cell(name, key, show) for _, key, show in columns)] for name in after]
    shown = f"before{arrow}{label}" if before else label
    header = [f"set ({shown})", *(title for title, _, _ in columns)]
    note = (
        "One run of each, every set ingested into a fresh SQLite corpus in a process of its "
        "own (its peak RSS); the same furniture rule counts every run. "
    )
    if report.get("load_average_at_end"):
        note += f"Load average {report['load_average_at_end'][0]} at the end. "
    return _table(header, rows) + "\n" + note + provenance(report)


RENDERERS: dict[str, Callable[[Report], str]] = {
    "corpus_scale": corpus_scale,
    "tree": tree,
    "runtime_vs_langgraph": runtime_vs_langgraph,
    "postgres_vs_langgraph": postgres_vs_langgraph,
    "server_load": server_load,
    "mcp_conformance": mcp_conformance,
    "answer_quality_samples": answer_quality_samples,
    "answer_quality_docsets": answer_quality_docsets,
    "answer_quality_hotpotqa": answer_quality_hotpotqa,
    "ingest_quality": ingest_quality,
}


def _summary_server_load(r: Report) -> str:
    c = r.get("capacity") or r["paced"]
    return (
        f"capacity run: {_num(c['events_per_s'], 0)} events/s to {c['subscribers']} SSE "
        f"subscribers, p99 {_num(c['latency_ms']['p99'], 0)} ms counting replayed frames "
        f"(load average {c['load_average_1m']} on {r['machine']['cpus']} CPUs), "
        f"{c['reconnect_storm']['lost']} frames lost in a reconnect storm"
    )


def _summary_mcp(r: Report) -> str:
    passed = sum(o["status"] == "passed" for o in r["scenarios"].values())
    return (
        f"{passed} of {len(r['scenarios']) + len(r.get('missing', []))} server scenarios of "
        f"`{r['package']}` pass"
    )


def _summary_answers(r: Report) -> str:
    t = r["samples"]["totals"]
    return (
        f"sample documents, `{r['model']}`: key fact stated in {t['key_fact_stated']} of "
        f"{t['with_key_fact']} answers"
    )


def _summary_docsets(r: Report) -> str:
    held = [s for s in r["sets"] if s["role"].startswith("held out")]
    parts = [f"{s['name']} {s['totals']['key_fact_stated']} of {s['totals']['answerable']}"
             for s in held]  # fmt: skip
    return (
        f"documentation nobody here wrote, held-out questions, `{r['model']}`: key fact stated "
        f"in {', '.join(parts)}; every unanswerable question refused"
        if all(s["totals"]["right_refusals"] == s["totals"]["unanswerable"] for s in held)
        else f"held-out questions: key fact stated in {', '.join(parts)}"
    )


def _summary_hotpot(r: Report) -> str:
    t, p = r["hotpotqa"]["answers"]["totals"], r["hotpotqa"]["published"]
    return (
        f"HotpotQA, {t['questions']} questions the rules were designed on, `{r['model']}`: "
        f"answer EM / F1 {_num(t['answer_em'])} / {_num(t['answer_f1'])}, supporting-fact F1 "
        f"{_num(t['sp_f1'])} (a trained model on the full dev set: {_num(p['answer_em'])} / "
        f"{_num(p['answer_f1'])}, {_num(p['sp_f1'])})"
    )


def _summary_runtime(r: Report) -> str:
    return (
        f"a committed step {_num(r['kforge_us_per_step'], 0)} µs vs LangGraph + SqliteSaver "
        f"{_num(r['langgraph_us_per_step'], 0)} µs (ratio {r['ratio_us_per_step']:.3f}) and vs "
        f"LangGraph with no checkpointer {_num(r['langgraph_no_checkpointer_us_per_step'], 0)} µs; "
        f"resume {r['kforge_resume_ms']:.2f} vs {r['langgraph_resume_ms']:.2f} ms; database "
        f"{r['ratio_bytes']:.3f} of LangGraph's"
    )


def _summary_postgres(r: Report) -> str:
    counts = _worker_counts(r)
    load = r["machine"].get("load_average_at_start")
    return (
        f"a committed step {_num(r['kforge_us_per_step'], 0)} µs vs LangGraph + PostgresSaver "
        f"{_num(r['langgraph_us_per_step'], 0)} µs (ratio {r['kforge_us_per_step'] / r['langgraph_us_per_step']:.3f}); resume "
        f"warm {r['kforge_resume_ms']:.2f} vs {r['langgraph_resume_ms']:.2f} ms, cold (a new "
        f"process's first) {r['kforge_resume_cold_ms']:.2f} vs "
        f"{r['langgraph_resume_cold_ms']:.2f} ms"
        + (
            f", a worker's first {r['kforge_resume_worker_ms']:.2f} vs "
            f"{r['langgraph_resume_worker_ms']:.2f} ms"
            if "kforge_resume_worker_ms" in r
            else ""
        )
        + "; "
        + " / ".join(_num(r[f"kforge_workers{n}_runs_per_s"], 0) for n in counts)
        + f" runs/s with {' / '.join(map(str, counts))} workers"
        + (f" (load average {load[0]} at the start)" if load else "")
    )


def _summary_tree(r: Report) -> str:
    ratios = ", ".join(f"{row['speedup']:.1f}{_TIMES} at N={row['n']}" for row in r["rows"])
    return f"agent trees, steps/s over LangGraph's fastest of three setups: {ratios}"


def _summary_corpus_scale(r: Report) -> str:
    rows = [row for row in r["results"] if "error" not in row]
    largest = max(row["chunks"] for row in rows)
    top = {row["store"]: row for row in rows if row["chunks"] == largest}
    parts = [
        f"{label} search p95 {top[name]['search_p95_ms']} ms (load {top[name]['load_average'][0]})"
        for name, label in (("postgres", "PostgreSQL"), ("sqlite", "SQLite"))
        if name in top
    ]
    return f"{_num(largest, 0)} chunks: " + ", ".join(parts)


SUMMARIES: dict[str, tuple[str, Callable[[Report], str]]] = {
    "corpus_scale": ("Corpora at scale", _summary_corpus_scale),
    "tree": ("Agent trees vs LangGraph", _summary_tree),
    "runtime_vs_langgraph": ("Durable steps vs LangGraph (SQLite)", _summary_runtime),
    "postgres_vs_langgraph": ("Durable steps vs LangGraph (PostgreSQL)", _summary_postgres),
    "server_load": ("Server load", _summary_server_load),
    "mcp_conformance": ("MCP conformance", _summary_mcp),
    "answer_quality_samples": ("Answer quality", _summary_answers),
    "answer_quality_docsets": ("Answers on documentation", _summary_docsets),
    "answer_quality_hotpotqa": ("Multi-hop questions (HotpotQA sample)", _summary_hotpot),
}


def summary(results: dict[str, Report]) -> str:
    rows = [
        [label, describe(results[name]), f"{str(results[name]['date'])[:10]}, "
         f"{results[name]['machine'].get('cpus', '?')} CPUs"]
        for name, (label, describe) in SUMMARIES.items()
        if name in results
    ]  # fmt: skip
    return _table(["benchmark", "result", "measured"], rows)


def load_results(folder: Path = RESULTS) -> dict[str, Report]:
    """Every result file, checked for the date and machine a table must name."""
    results = {}
    for path in sorted(folder.glob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        for key in ("date", "machine"):
            if not report.get(key):
                raise SystemExit(
                    f"{path} has no {key!r}: keep it with `render_tables.py add {path.stem} FILE`"
                    f", which records when the benchmark wrote it"
                )
        results[path.stem] = report
    return results


def render_text(text: str, results: dict[str, Report], where: str = "") -> str:
    """``text`` with every marked table rendered from ``results``."""

    def table(found: re.Match[str]) -> str:
        name = found.group(2)
        if name == "summary":
            body = summary(results)
        elif name not in RENDERERS:
            raise SystemExit(f"{where}: no renderer for table {name!r}; add one to RENDERERS")
        elif name not in results:
            raise SystemExit(
                f"{where}: table {name!r} has no result file: run the benchmark and keep its "
                f"JSON with `render_tables.py add {name} FILE`"
            )
        else:
            body = RENDERERS[name](results[name])
        return f"{found.group(1)}{body}{found.group(4)}"

    return MARKED.sub(table, text)


def this_machine() -> dict[str, Any]:
    import os
    import platform

    return {
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpus": os.cpu_count(),
    }


def add(name: str, source: Path, folder: Path = RESULTS, *, here: bool = False) -> Path:
    """Keep ``source`` as ``folder/NAME.json``; a JSON without a date gets the time the
    benchmark wrote it, and one without a machine this one when ``here`` says it ran here."""
    report = json.loads(source.read_text(encoding="utf-8"))
    if not report.get("date"):
        written = datetime.fromtimestamp(source.stat().st_mtime, UTC)
        report["date"] = written.isoformat(timespec="seconds")
        report["date_source"] = "when the benchmark wrote its JSON"
    if not report.get("machine"):
        if not here:
            raise SystemExit(
                f"{source} names no machine: if it ran on this machine, add --this-machine"
            )
        report["machine"] = this_machine()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.json"
    target.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def add_docsets(commit: str, runs: list[tuple[Path, str]], folder: Path = RESULTS) -> Path:
    """Keep ``answer_quality.py --set NAME`` runs as one ``answer_quality_docsets.json``: each
    set's totals, the date its JSON was written, its load and ``role`` (what the set is to the
    code measured: held out, or designed on)."""
    sets, dates, machine = [], [], None
    for source, role in runs:
        report = json.loads(source.read_text(encoding="utf-8"))
        names = [k for k, v in report.items() if isinstance(v, dict) and "totals" in v]
        if len(names) != 1:
            raise SystemExit(f"{source}: not the JSON of one doc set's answer_quality.py run")
        name = names[0]
        written = datetime.fromtimestamp(source.stat().st_mtime, UTC).isoformat(timespec="seconds")
        machine = machine or dict(report["machine"])
        dates.append(written)
        sets.append({"name": name, "role": role, "docset": report[name].get("docset"),
                     "date": written,
                     "load_average_at_start": report["machine"].get("load_average_at_start"),
                     "totals": report[name]["totals"]})  # fmt: skip
    if not sets or machine is None:
        raise SystemExit("give at least one run as FILE=ROLE")
    machine["load_average_at_start"] = sets[0]["load_average_at_start"]
    kept = {
        "benchmark": "answer-quality-docsets", "model": json.loads(
            runs[0][0].read_text(encoding="utf-8"))["model"], "answer": None, "commit": commit,
        "date": max(dates), "date_source": "when the last set's run wrote its JSON",
        "machine": machine, "sets": sets,
    }  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "answer_quality_docsets.json"
    target.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report out-of-date tables")
    sub = parser.add_subparsers(dest="command")
    keep = sub.add_parser("add", help="keep a benchmark's JSON as results/NAME.json, then render")
    keep.add_argument("name", help=f"the table's name: {', '.join(RENDERERS)}")
    keep.add_argument("file", type=Path, help="the JSON the benchmark wrote")
    keep.add_argument(
        "--this-machine", action="store_true",
        help="the benchmark ran on this machine: record it when the JSON names none",
    )  # fmt: skip
    docsets = sub.add_parser(
        "add-docsets", help="keep answer_quality.py doc-set runs as one table, then render"
    )
    docsets.add_argument("commit", help="the commit the runs measured")
    docsets.add_argument(
        "runs", nargs="+", metavar="FILE=ROLE",
        help="a run's JSON and what the set is to that code ('held out (never read)', ...)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "add":
        print(f"kept {add(args.name, args.file, here=args.this_machine)}")
    if args.command == "add-docsets":
        runs = [(Path(f), role) for f, _, role in (r.partition("=") for r in args.runs)]
        print(f"kept {add_docsets(args.commit, runs)}")
    results = load_results()
    stale = []
    for target in TARGETS:
        text = target.read_text(encoding="utf-8")
        rendered = render_text(text, results, str(target.relative_to(ROOT)))
        if rendered != text:
            stale.append(target.relative_to(ROOT))
            if not args.check:
                target.write_text(rendered, encoding="utf-8")
    verb = "out of date" if args.check else "rendered"
    for path in stale:
        print(f"{verb}: {path}", file=sys.stderr if args.check else sys.stdout)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
