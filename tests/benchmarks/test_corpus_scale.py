"""benchmarks/corpus_scale.py and benchmarks/search_profile.py on a tiny SciFact-shaped data
set against the test server: a kept PostgreSQL database is measured again without ingesting
its documents again, and the profile reports what it says it measures. No timing assertions."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _data(folder: Path) -> Path:
    """Twenty abstracts and two claims with their relevant abstracts, as SciFact lays them out."""
    (folder / "qrels").mkdir(parents=True)
    words = ["cell", "protein", "gene", "tumour", "blood", "insulin", "brain", "virus"]
    with (folder / "corpus.jsonl").open("w") as out:
        for i in range(20):
            text = " ".join(words[(i + j) % len(words)] for j in range(6))
            out.write(json.dumps({"_id": str(i), "title": f"study {i}", "text": f"{text}. More."}))
            out.write("\n")
    queries = [{"_id": "1", "text": "protein gene"}, {"_id": "2", "text": "insulin brain"}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t1\t1\n2\t5\t1\n")
    return folder


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")]),
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_a_kept_database_is_measured_again_without_ingesting_again(
    postgres_server: str, tmp_path: Path
) -> None:
    import psycopg

    data = _data(tmp_path / "scifact")
    name = f"kept_{secrets.token_hex(4)}"
    try:
        _measure_twice(postgres_server, name, data, tmp_path)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _measure_twice(postgres_server: str, name: str, data: Path, tmp_path: Path) -> None:
    args = ["--data", str(data), "--sizes", "20,30", "--stores", "postgres", "--no-ask",
            "--postgres", postgres_server, "--postgres-database", name]  # fmt: skip
    rows = []
    for n in range(2):
        out = tmp_path / f"run{n}.json"
        done = _run("corpus_scale.py", *args, "--json", str(out))
        assert done.returncode == 0, done.stderr
        rows.append(json.loads(out.read_text())["results"])
    assert [(r["chunks"], r["ingested_documents"]) for r in rows[0]] == [(20, 20), (30, 10)]
    assert [(r["chunks"], r["ingested_documents"]) for r in rows[1]] == [(30, 0), (30, 0)]
    url = urlunsplit(urlsplit(postgres_server)._replace(path=f"/{name}"))
    out = tmp_path / "profile.json"
    done = _run("search_profile.py", "--db", url, "--data", str(data), "--repeat", "2",
                "--json", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    profile = json.loads(out.read_text())
    assert profile["queries"] == 2 and profile["bytes_mean"] > 0
    assert set(profile["slowest_mean"]) >= {"wall", "cpu", "server", "sql", "decode", "sum"}
