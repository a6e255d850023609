"""benchmarks/postgres_vs_langgraph.py runs end to end on the kforge side (one worker, a few
runs) against the test server and reports what it says it measures. No timing assertions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "postgres_vs_langgraph.py"

pytest.importorskip("dbos", reason="the dbos extra is not installed")


def test_kforge_side_runs_and_writes_json(postgres_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    venv = tmp_path / "no-langgraph-venv"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--url",
            postgres_url,
            "--skip-langgraph",
            "--k",
            "6",
            "--resume-samples",
            "1",
            "--runs",
            "6",
            "--workers",
            "1",
            "--concurrency",
            "2",
            "--langgraph-venv",
            str(venv),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 0, done.stderr
    assert not venv.exists(), "--skip-langgraph must not set up the LangGraph environment"
    assert "µs per step" in done.stdout and "runs/s" in done.stdout
    data = json.loads(out.read_text())
    for key in (
        "kforge_us_per_step",
        "kforge_bytes",
        "kforge_resume_ms",
        "kforge_resume_worker_ms",  # a worker's first resume, in a new process
        "kforge_us_per_step_async_commit",
        "kforge_workers1_runs_per_s",
        "kforge_workers1_p95_latency_ms",
        "dbos_workers1_runs_per_s",
        "dbos_workers1_runs_per_s_per_core",
    ):
        assert data[key] > 0, key
    # counted from libpq's trace: the store's open is one round trip after connecting, a
    # resume one for the run and its snapshot, one for its opening, one for its step
    assert data["kforge_open_round_trips"] == 1 and data["kforge_resume_round_trips"] == 3
    assert data["kforge_resume_statements"] == 3 and "resume: round trips" in done.stdout
    # six steps may all fit in pages the first three already took
    assert data["kforge_bytes_per_step"] >= 0
    assert data["settings"]["k"] == 6 and data["targets"] == {}
    assert "plain DBOS runs/s" in done.stdout


def test_ratios_are_kforge_over_langgraph_and_targets_judge_them() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import postgres_vs_langgraph as bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    side = {
        "us_per_step": 100.0,
        "bytes": 1000,
        "bytes_per_step": 5.0,
        "resume_ms": 1.0,
        "resume_cold_ms": 2.0,
    }
    kf = {"on": {**side, "resume_worker_ms": 3.0}, "off": {**side, "us_per_step": 50.0}}
    theirs = {"bytes": 5000, "bytes_per_step": 50.0, "resume_ms": 2.0, "resume_cold_ms": 10.0}
    lg = {
        "on": {"us_per_step": 1000.0, **theirs, "resume_worker_ms": 10.0},
        "off": {"us_per_step": 500.0, **theirs},
    }
    tp = {4: {"runs_per_s": 6.0, "dbos_runs_per_s": 8.0}}
    out = bench.summarize(kf, lg, tp)
    assert out["ratio_us_per_step"] == pytest.approx(0.1)
    assert out["ratio_us_per_step_async_commit"] == pytest.approx(0.1)
    assert out["targets"]["us_per_step"] == {
        "value": pytest.approx(0.1),
        "limit": 0.15,
        "pass": True,
    }
    assert out["ratio_bytes"] == pytest.approx(0.2) and out["targets"]["bytes"]["pass"] is False
    assert out["ratio_resume"] == pytest.approx(0.5) and out["targets"]["resume"]["pass"] is False
    assert out["targets"]["resume"]["limit"] == 0.15
    # the cold target judges a worker's first resume (its connection opened before the
    # clock); the cold resume that connects on the clock has a ratio and no target
    assert out["targets"]["resume_worker"] == {"value": 0.3, "limit": 0.25, "pass": False}
    assert out["ratio_resume_cold"] == pytest.approx(0.2) and "resume_cold" not in out["targets"]
    assert out["kforge_us_per_step_async_commit"] == 50.0
    # the plain DBOS workflow beside kforge worker, each per core of the processes that ran
    assert out["kforge_workers4_runs_per_s"] == 6.0 and out["dbos_workers4_runs_per_s"] == 8.0
    cores = min(4, os.cpu_count() or 1)
    assert out["kforge_workers4_runs_per_s_per_core"] == pytest.approx(6.0 / cores)
    assert out["dbos_workers4_runs_per_s_per_core"] == pytest.approx(8.0 / cores)
