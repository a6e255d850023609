"""Where a lexical search's time goes on a PostgreSQL corpus: for each SciFact test claim, the
search repeated (medians), its wall time, this process's CPU time, the server's CPU time (the
backends' run time, from ``/proc``), bytes of postings fetched, and the client's time split
into waiting for SQL, decoding records, summing shares with numpy and picking the top.

    python benchmarks/search_profile.py --db postgresql://.../scale --corpus scale
    python benchmarks/search_profile.py --db URL --repeat 5 --json profile.json

A corpus is built once and kept with ``corpus_scale.py --postgres-database NAME``. Wall times
move with the machine's load; CPU times and bytes hardly do (the load average is printed).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from corpus_scale import load_scifact
from eval_metrics import ndcg_at_k, percentile
from kforge.rag.corpus import Corpus
from kforge.store.open import open_store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CATEGORIES = ("sql", "decode", "sum", "top", "other")


class Clock:
    """Exclusive time per category: entering a wrapped function charges what passed so far to
    the category running, so nested calls are not counted twice."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(CATEGORIES, 0.0)
        self.bytes = 0
        self.statements = 0
        self._stack = ["other"]
        self._at = time.perf_counter()

    def reset(self) -> None:
        self.spent = dict.fromkeys(CATEGORIES, 0.0)
        self.bytes = self.statements = 0
        self._stack = ["other"]
        self._at = time.perf_counter()

    def enter(self, category: str) -> None:
        now = time.perf_counter()
        self.spent[self._stack[-1]] += now - self._at
        self._stack.append(category)
        self._at = now

    def leave(self) -> None:
        now = time.perf_counter()
        self.spent[self._stack.pop()] += now - self._at
        self._at = now


CLOCK = Clock()


def _rows_bytes(rows: Sequence[Any]) -> int:
    return sum(len(v) for row in rows for v in row if isinstance(v, bytes | memoryview))


def _timed(category: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        CLOCK.enter(category)
        try:
            return function(*args, **kwargs)
        finally:
            CLOCK.leave()

    return wrapper


def _timed_iterator(category: str, function: Callable[..., Iterator[Any]]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        inner = function(*args, **kwargs)
        while True:
            CLOCK.enter(category)
            try:
                item = next(inner)
            except StopIteration:
                return
            finally:
                CLOCK.leave()
            if category == "sql":
                CLOCK.bytes += _rows_bytes([item])
            yield item

    return wrapper


def instrument() -> None:
    """Wrap the search's steps in ``CLOCK``'s categories."""
    import psycopg

    from kforge.store import postgres_lists, postgres_search, postgres_sums

    execute = psycopg.Cursor.execute

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        CLOCK.statements += 1
        return _timed("sql", execute)(self, *args, **kwargs)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    for name in ("fetchall", "fetchone"):
        fetch = getattr(psycopg.Cursor, name)

        def counted_fetch(self: Any, *args: Any, _fetch: Any = fetch, **kwargs: Any) -> Any:
            found = _timed("sql", _fetch)(self, *args, **kwargs)
            CLOCK.bytes += _rows_bytes(found if isinstance(found, list) else [found or ()])
            return found

        setattr(psycopg.Cursor, name, counted_fetch)
    stream = psycopg.Cursor.stream

    def counted_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        CLOCK.statements += 1
        return _timed_iterator("sql", stream)(self, *args, **kwargs)

    psycopg.Cursor.stream = counted_stream  # type: ignore[method-assign]
    postgres_lists.TermList.records = _timed(  # type: ignore[method-assign]
        "decode", postgres_lists.TermList.records
    )
    for module in (postgres_search, postgres_sums, postgres_lists):
        for name in ("shares", "add_shares"):
            if hasattr(module, name):
                setattr(module, name, _timed("sum", getattr(module, name)))
    for cls in (postgres_sums._Sparse, postgres_sums._Dense):
        for name in ("add", "kept"):
            setattr(cls, name, _timed("sum", cls.__dict__.get(name, getattr(cls, name))))
    for name in ("kth_highest", "ordered_best"):  # as postgres_search looks them up
        setattr(postgres_search, name, _timed("top", getattr(postgres_search, name)))


def _server_ns(pids: Sequence[int]) -> int:
    """Nanoseconds the backends ``pids`` ran on a CPU (``/proc/PID/schedstat``)."""
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def _backends(target: str) -> list[int]:
    import psycopg

    query = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s"
    with psycopg.connect(target) as conn:
        me = conn.info.backend_pid
        return [int(pid) for (pid,) in conn.execute(query, (me,)).fetchall()]


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=os.environ.get("KFORGE_DB", ""), help="postgresql:// URL")
    parser.add_argument("--corpus", default="scale")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "scifact")
    parser.add_argument("--repeat", type=int, default=3, help="searches of each claim")
    parser.add_argument("--slowest", type=float, default=0.05,
                        help="share of the claims (by median wall time) broken down")  # fmt: skip
    parser.add_argument("--cache-bytes", type=int, default=-1,
                        help="the store's block cache budget (default: the store's own; 0 "
                        "keeps no blocks between searches)")  # fmt: skip
    parser.add_argument("--no-breakdown", action="store_true",
                        help="time without the breakdown's wrappers")  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.no_breakdown:
        instrument()
    _, queries, qrels = load_scifact(args.data)
    store = open_store(args.db)
    if args.cache_bytes >= 0:
        store.passages.block_cache.budget = args.cache_bytes  # type: ignore[attr-defined]
    corpus = Corpus.open(store, args.corpus)
    corpus.search("warm up", 10, mode="lexical")
    pids = _backends(args.db)
    load_start = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    ndcg = []
    for qid, text in queries.items():
        runs = []
        for _ in range(args.repeat):
            corpus._rankings._kept.clear()  # each repeat searches the store again
            CLOCK.reset()
            server = _server_ns(pids)
            cpu = time.thread_time_ns()
            started = time.perf_counter()
            hits = corpus.search(text, 10, mode="lexical")
            wall = time.perf_counter() - started
            cpu = time.thread_time_ns() - cpu
            server = _server_ns(pids) - server
            runs.append(
                {
                    "wall": wall * 1000,
                    "cpu": cpu / 1e6,
                    "server": server / 1e6,
                    "bytes": CLOCK.bytes,
                    "statements": CLOCK.statements,
                    **{k: v * 1000 for k, v in CLOCK.spent.items()},
                }
            )
        ndcg.append(ndcg_at_k([h.chunk.file for h in hits], qrels[qid], 10))
        row = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        row["id"], row["terms"] = qid, len(set(text.split()))
        rows.append(row)
    store.close()
    load_end = os.getloadavg()[0]
    walls = [r["wall"] for r in rows]
    slowest = sorted(rows, key=lambda r: -r["wall"])[: max(1, round(len(rows) * args.slowest))]
    keys = ["wall", "cpu", "server", "bytes", "statements", *CATEGORIES]

    def means(group: Sequence[dict[str, Any]]) -> dict[str, float]:
        return {k: sum(r[k] for r in group) / len(group) for k in keys}

    summary = {
        "queries": len(rows),
        "repeat": args.repeat,
        "p50_ms": round(percentile(walls, 50), 2),
        "p95_ms": round(percentile(walls, 95), 2),
        "ndcg_at_10": round(sum(ndcg) / len(ndcg), 4),
        "cpu_p50_ms": round(percentile([r["cpu"] for r in rows], 50), 2),
        "cpu_p95_ms": round(percentile([r["cpu"] for r in rows], 95), 2),
        "cpu_plus_server_p95_ms": round(percentile([r["cpu"] + r["server"] for r in rows], 95), 2),
        "bytes_mean": round(sum(r["bytes"] for r in rows) / len(rows)),
        "bytes_p95": round(percentile([r["bytes"] for r in rows], 95)),
        "all_mean": {k: round(v, 3) for k, v in means(rows).items()},
        "slowest_mean": {k: round(v, 3) for k, v in means(slowest).items()},
        "slowest": [_rounded(r) for r in slowest],
        "load_average": [round(load_start, 2), round(load_end, 2)],
    }
    print(f"p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms (wall, median of "
          f"{args.repeat}); CPU p50 {summary['cpu_p50_ms']} p95 {summary['cpu_p95_ms']} ms; "
          f"CPU + server p95 {summary['cpu_plus_server_p95_ms']} ms; nDCG@10 "
          f"{summary['ndcg_at_10']}; bytes/query mean {summary['bytes_mean']} p95 "
          f"{summary['bytes_p95']}; load {load_start:.2f} -> {load_end:.2f}")  # fmt: skip
    print(f"{'':>10} " + " ".join(f"{k:>10}" for k in keys))
    for label, group in (("all", rows), ("slowest", slowest)):
        m = means(group)
        print(f"{label:>10} " + " ".join(f"{m[k]:>10.2f}" for k in keys))
    for r in slowest:
        print(
            f"{r['id']:>10} " + " ".join(f"{r[k]:>10.2f}" for k in keys) + f"  {r['terms']} words"
        )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
