"""Corpora of growing size on SQLite and PostgreSQL: ingest rate, database size, ``kforge ask``
end to end, in-process search latency and peak memory, beside bm25s (and tantivy) on the same
chunks.

    python benchmarks/corpus_scale.py --json corpus_scale.json
    python benchmarks/corpus_scale.py --sizes 5183,50000 --stores sqlite --side-path DIR

Each corpus holds one chunk per document: SciFact's 5,183 abstracts (title + text), then
generated documents up to each size. A generated document copies the shape of a SciFact
abstract picked at random (its number of sentences); each of its sentences is a SciFact
sentence picked at random with its words shuffled, and its title is a SciFact title with its
words shuffled (seeded, so every run builds the same text). The vocabulary and term
frequencies stay SciFact's while no generated document repeats an abstract. The corpus grows
in place: the 50k corpus is the 5k one plus generated documents, and so on.

At each size: documents ingested per second (of that step), database bytes, ``kforge ask`` on
five SciFact test claims as a new process each (start to answer, median, and the peak RSS of
each), search of the 300 test claims in this process (top 10, p50/p95) and nDCG@10 on them
(past 5k the generated documents are distractors). ``kforge ask`` runs from compiled bytecode,
as an installed package does (the benchmark compiles ``src`` first: with
``PYTHONDONTWRITEBYTECODE`` set, each process would compile every module again). bm25s and
tantivy index the same chunks in
their own process (``benchmarks/_corpus_scale_side.py``; ``--side-path`` is where they are
installed, never a dependency of kforge).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from eval_metrics import ndcg_at_k, percentile
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.corpus import Corpus
from kforge.rag.types import SourceDocument
from kforge.store.open import open_store

__all__ = ["generated_documents", "main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
CORPUS = "scale"


def load_scifact(
    data: Path,
) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, dict[str, int]]]:
    with (data / "corpus.jsonl").open(encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with (data / "queries.jsonl").open(encoding="utf-8") as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, f)}
    qrels: dict[str, dict[str, int]] = {}
    with (data / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.split()
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    return docs, {q: queries[q] for q in qrels}, qrels


def generated_documents(
    docs: Sequence[dict[str, Any]], start: int, count: int, seed: int = 28
) -> Iterator[SourceDocument]:
    """Documents ``start`` .. ``start + count - 1`` of the generated sequence (see the module
    docstring); the same numbers give the same documents."""
    sentences = [s for d in docs for s in _SENTENCE.split(d["text"]) if s.strip()]
    shapes = [max(1, len(_SENTENCE.split(d["text"]))) for d in docs]
    titles = [d["title"] for d in docs]
    for number in range(start, start + count):
        rng = random.Random(f"{seed}:{number}")
        text = []
        for _ in range(rng.choice(shapes)):
            words = rng.choice(sentences).split()
            rng.shuffle(words)
            text.append(" ".join(words))
        title = rng.choice(titles).split()
        rng.shuffle(title)
        yield SourceDocument(f"gen{number}", " ".join(text), " ".join(title))


def _database_bytes(target: str) -> int:
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            return int(row[0]) if row else 0
    import sqlite3

    with sqlite3.connect(target) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(os.path.getsize(p) for p in (target, f"{target}-wal") if os.path.exists(p))


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str, str, int]:
    """Run ``command`` under GNU time: wall seconds, peak RSS (MB), stdout, stderr, exit code.

    GNU time is a small process: the command's peak RSS starts from its own, not from this
    process's (Linux keeps a process's high-water mark across fork and exec).
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", report.name, *command],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        seconds, kilobytes = report.read().split()[-2:]
    return float(seconds), int(kilobytes) / 1024, done.stdout, done.stderr, done.returncode


def _ask(target: str, question: str) -> tuple[float, float, str]:
    """Seconds from starting ``kforge ask`` to its exit, its peak RSS (MB) and its output (or
    its error, when it failed: ``"failed: ..."``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("KFORGE_DB", None)
    command = [str(Path(sys.executable).parent / "kforge"), "ask", "--db", target, "--corpus",
               CORPUS, question]  # fmt: skip
    seconds, rss, stdout, stderr, code = _timed(command, env)
    if code != 0:
        return seconds, rss, f"failed ({code}): {stderr.strip().splitlines()[-1]}"
    return seconds, rss, stdout


def _side(library: str, side_path: Path, chunks: Path, queries: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(side_path), str(ROOT / "src")])}
    command = [sys.executable, str(HERE / "_corpus_scale_side.py"), library, str(chunks),
               str(queries)]  # fmt: skip
    _, rss, stdout, stderr, code = _timed(command, env)
    if code != 0:
        return {"error": stderr.strip().splitlines()[-1] if stderr.strip() else "failed"}
    result: dict[str, Any] = json.loads(stdout)
    result["peak_rss_mb"] = round(rss)
    return result


def measure(
    target: str, queries: dict[str, str], qrels: dict[str, dict[str, int]], asks: Sequence[str]
) -> dict[str, Any]:
    store = open_store(target)
    try:
        started = time.perf_counter()
        corpus = Corpus.open(store, CORPUS)
        open_ms = (time.perf_counter() - started) * 1000
        latencies, scores = [], []
        for qid, text in queries.items():
            started = time.perf_counter()
            hits = corpus.search(text, 10, mode="lexical")
            latencies.append((time.perf_counter() - started) * 1000)
            scores.append(ndcg_at_k([h.chunk.file for h in hits], qrels[qid], 10))
    finally:
        store.close()
    runs = [_ask(target, question) for question in asks] or [(0.0, 0.0, "")]
    return {
        "open_ms": round(open_ms, 2),
        "search_p50_ms": round(percentile(latencies, 50), 2),
        "search_p95_ms": round(percentile(latencies, 95), 2),
        "ndcg_at_10": round(sum(scores) / len(scores), 4),
        "ask_median_s": round(statistics.median(r[0] for r in runs), 2),
        "ask_s": [round(r[0], 2) for r in runs],
        "ask_peak_rss_mb": [round(r[1]) for r in runs],
        "ask_failures": [r[2] for r in runs if r[2].startswith("failed")],
        "database_bytes": _database_bytes(target),
    }


def _postgres_database(server: str, name: str = "") -> str:
    """A database on ``server``: ``name`` (created when missing, kept as it is when there), or a
    new one."""
    import psycopg

    if name and not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise SystemExit(f"--postgres-database: {name!r} is not a plain lower-case name")
    name = name or f"scale_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as conn:
        found = conn.execute("SELECT FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found is None:
            conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(server)._replace(path=f"/{name}"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "scifact")
    parser.add_argument("--sizes", default="5183,50000,500000", help="chunks, ascending")
    parser.add_argument("--stores", default="sqlite,postgres", help="sqlite, postgres or both")
    parser.add_argument("--postgres", default=os.environ.get("KFORGE_DB", ""),
                        help="a postgresql:// URL of a server to create databases on "
                        "(default KFORGE_DB; scripts/postgres start runs one)")  # fmt: skip
    parser.add_argument("--side-path", type=Path, help="where bm25s (and tantivy) are installed")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the SQLite database in this folder")
    parser.add_argument("--postgres-database", default="",
                        help="use (and keep) this database on the --postgres server, creating it "
                        "when missing; documents it already holds are not ingested again, so "
                        "a later run measures the same corpus")  # fmt: skip
    parser.add_argument("--no-ask", action="store_true", help="leave out `kforge ask`")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    docs, queries, qrels = load_scifact(args.data)
    asks = list(queries.values())[:5]
    results: list[dict[str, Any]] = []
    notes: list[str] = []
    head: dict[str, Any] = {
        "benchmark": "corpus-scale",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": {
            "system": f"{platform.system()} {platform.release()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
        },
    }

    def record(row: dict[str, Any]) -> None:
        """Keep ``row`` with the load average when it was measured (other work on the machine
        slows every figure), and write what is measured so far (a long run stopped early keeps
        it)."""
        row["load_average"] = [round(v, 2) for v in os.getloadavg()]
        results.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        if args.json:
            args.json.write_text(json.dumps({**head, "results": results, "notes": notes}, indent=2))

    with tempfile.TemporaryDirectory() as tmp:
        targets: dict[str, str] = {}
        for store_name in [s.strip() for s in args.stores.split(",") if s.strip()]:
            if store_name == "postgres" and not args.postgres.startswith("postgresql://"):
                notes.append("postgres skipped: no --postgres URL (scripts/postgres start)")
            elif store_name == "postgres":
                targets[store_name] = _postgres_database(args.postgres, args.postgres_database)
            else:
                targets[store_name] = str((args.keep or Path(tmp)) / "scale.db")
        have = 0
        for size in sizes:
            for store_name, target in targets.items():
                store = open_store(target)
                corpus = Corpus.open(store, CORPUS)
                # a kept database may hold documents of an earlier run: only the rest come in
                start = max(have, len(corpus))
                started = time.perf_counter()
                added = corpus.add_documents(
                    _chain(docs, start, size), chunking=ChunkingOptions(max_chars=0),
                    batch_size=1000,
                ) if start < size else 0  # fmt: skip
                ingest_s = time.perf_counter() - started
                chunks = len(corpus)
                store.close()
                record(
                    {
                        "store": store_name,
                        "chunks": chunks,
                        "ingested_documents": added,
                        "ingest_docs_per_s": round(added / ingest_s, 1) if added else None,
                        **measure(target, queries, qrels, [] if args.no_ask else asks),
                    }
                )
            have = size
            if args.side_path:
                chunks_file = Path(tmp) / f"chunks-{size}.jsonl"
                with chunks_file.open("w", encoding="utf-8") as out:
                    for doc in _chain(docs, 0, size):
                        text = f"{doc.title}\n{doc.text}"
                        out.write(json.dumps({"id": doc.id, "text": text}) + "\n")
                queries_file = Path(tmp) / "queries.json"
                queries_file.write_text(json.dumps({"queries": queries, "qrels": qrels}))
                for library in ("bm25s", "tantivy"):
                    side = _side(library, args.side_path, chunks_file, queries_file)
                    record({"store": library, "chunks": size, **side})
                chunks_file.unlink()
    notes.append(
        f"this process's peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB"
    )
    _print_table(results)
    machine = head["machine"]
    print(f"code {head['commit'] or '(not a git checkout)'}, {machine['cpus']} cores, load "
          f"average at start {machine['load_average_at_start'][0]}")  # fmt: skip
    for note in notes:
        print(f"note: {note}")
    if args.json:
        args.json.write_text(json.dumps({**head, "results": results, "notes": notes}, indent=2))
        print(f"wrote {args.json}")
    return 0


def _commit() -> str:
    """The commit measured (``-modified`` when the tree differs from it), "" outside git."""
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty=-modified"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else ""


def _chain(docs: Sequence[dict[str, Any]], start: int, end: int) -> Iterator[SourceDocument]:
    """Documents ``start`` .. ``end - 1`` of SciFact followed by the generated ones."""
    for d in docs[start:end]:
        yield SourceDocument(d["_id"], d["text"], d["title"])
    first = max(start, len(docs))
    if end > first:
        yield from generated_documents(docs, first - len(docs), end - first)


def _print_table(results: Sequence[dict[str, Any]]) -> None:
    header = (f"{'store':<9} {'chunks':>8} {'docs/s':>8} {'DB MB':>8} {'ask s':>6} "
              f"{'ask RSS MB':>11} {'p50 ms':>7} {'p95 ms':>7} {'nDCG@10':>8}")  # fmt: skip
    print(header)
    for r in results:
        if "error" in r:
            print(f"{r['store']:<9} {r['chunks']:>8} error: {r['error']}")
            continue
        if r["store"] in ("bm25s", "tantivy"):
            print(f"{r['store']:<9} {r['chunks']:>8} {'':>8} {'':>8} {'':>6} "
                  f"{r['peak_rss_mb']:>11} {r['search_p50_ms']:>7} {r['search_p95_ms']:>7} "
                  f"{r['ndcg_at_10']:>8}  (index {r['index_s']} s)")  # fmt: skip
            continue
        rss = max(r["ask_peak_rss_mb"])
        print(f"{r['store']:<9} {r['chunks']:>8} {r['ingest_docs_per_s'] or '-':>8} "
              f"{r['database_bytes'] / 1e6:>8.1f} {r['ask_median_s']:>6} {rss:>11} "
              f"{r['search_p50_ms']:>7} {r['search_p95_ms']:>7} {r['ndcg_at_10']:>8}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
