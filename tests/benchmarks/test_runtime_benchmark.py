"""benchmarks/runtime_vs_langgraph.py runs end to end on the kforge side and reports correctly.

No timing assertions: only that the script works, measures what it says, and computes the
issue's ratios and targets the right way round.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "runtime_vs_langgraph.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runtime_vs_langgraph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kforge_side_runs_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    venv = tmp_path / "no-langgraph-venv"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--skip-langgraph",
            "--k",
            "4,8",
            "--repeat",
            "1",
            "--import-runs",
            "1",
            "--resume-samples",
            "2",
            "--langgraph-venv",
            str(venv),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not venv.exists(), "--skip-langgraph must not set up the LangGraph environment"
    assert "µs/step, NORMAL, K=8" in done.stdout
    data = json.loads(out.read_text())
    for key in (
        "kforge_us_per_step",
        "kforge_us_per_step_normal_k4",
        "kforge_us_per_step_full_k8",
        "kforge_cpu_us_per_step_normal_k8",
        "kforge_bytes_k4",
        "kforge_bytes_k8",
        "kforge_resume_ms",
        "kforge_resume_ms_full",
        "kforge_resume_cold_ms",
        "kforge_import_s",
        "kforge_runtime_import_s",
    ):
        assert data[key] > 0, key
    assert data["kforge_bytes_k8"] >= data["kforge_bytes_k4"]
    assert data["kforge_bytes_growth"] == data["kforge_bytes_k8"] / data["kforge_bytes_k4"]
    assert data["settings"]["k"] == [4, 8]
    assert data["settings"]["resume_pause_at"] == 4
    assert data["settings"]["resume_samples_per_round"] == 2
    assert not [key for key in data if key.startswith("langgraph")]
    assert set(data["targets"]) == {"bytes_growth"}


def _side(per_step: float, resume: float, bytes_k100: int, bytes_k200: int) -> dict[str, Any]:
    levels = {level: {"100": per_step, "200": per_step} for level in ("NORMAL", "FULL")}
    return {
        "per_step_us": levels,
        "per_step_cpu_us": levels,
        "per_step_async_us": levels,
        "resume_ms": {level: {"warm": resume, "cold": resume} for level in ("NORMAL", "FULL")},
        "bytes": {"100": bytes_k100, "200": bytes_k200},
        "bytes_delta_channel": {"100": bytes_k100, "200": bytes_k200},
        "per_step_no_checkpointer_us": {"100": 40.0, "200": 40.0},
        "per_step_no_checkpointer_cpu_us": {"100": 45.0, "200": 45.0},
        "versions": {"langgraph": "1.2.0"},
    }


def test_ratios_and_targets_compare_kforge_to_langgraph(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    kforge = _side(per_step=50.0, resume=1.0, bytes_k100=1000, bytes_k200=2500)
    langgraph = _side(per_step=1000.0, resume=2.0, bytes_k100=50_000, bytes_k200=200_000)
    imports = {"kforge_import_s": 0.01, "kforge_runtime_import_s": 0.05, "langgraph_import_s": 0.5}
    out = bench.summarize(kforge, langgraph, imports, {"k": [100, 200], "repeat": 1})

    assert out["ratio_us_per_step"] == pytest.approx(0.05)
    assert out["langgraph_no_checkpointer_us_per_step"] == 40.0
    assert out["ratio_us_per_step_vs_no_checkpointer"] == pytest.approx(1.25)
    assert out["langgraph_no_checkpointer_cpu_us_per_step_k200"] == 45.0
    assert out["ratio_bytes"] == pytest.approx(2500 / 200_000)
    assert out["ratio_resume"] == pytest.approx(0.5)
    assert out["ratio_import"] == pytest.approx(0.02)
    targets = out["targets"]
    assert targets["us_per_step"]["pass"] and targets["bytes"]["pass"] and targets["import"]["pass"]
    assert not targets["resume"]["pass"]
    assert not targets["us_per_step_vs_no_checkpointer"]["pass"]
    assert targets["bytes_growth"]["value"] == pytest.approx(2.5)
    assert targets["bytes_growth"]["limit"] == pytest.approx(2.2)
    assert not targets["bytes_growth"]["pass"]
    for key in (
        "langgraph_us_per_step",
        "langgraph_bytes_k100",
        "langgraph_bytes_k200",
        "langgraph_resume_ms",
        "langgraph_import_s",
    ):
        assert key in out

    bench.print_table(out)
    table = capsys.readouterr().out
    assert table.count("MISS") == 3
    assert "0.050" in table and "1.250" in table and "no checkpointer" in table


def test_paired_resumes_alternate_sides_and_ratio_each_pair(
    bench: ModuleType, tmp_path: Path
) -> None:
    """With LangGraph, resumes are taken in pairs; a stand-in for its process records the order."""
    order: list[str] = []

    class FakeLangGraph:
        def resume_once(self, path: Path, k: int, synchronous: str) -> tuple[float, float]:
            order.append("langgraph")
            return 0.004, 0.005

    kforge = bench.KforgeBench(tmp_path)
    original = kforge.resume_once

    async def timed_kforge(path: Path, k: int, synchronous: str) -> tuple[float, float]:
        order.append("kforge")
        return await original(path, k, synchronous)

    kforge.resume_once = timed_kforge
    kf, lg, ratios = bench.asyncio.run(
        bench.paired_resumes(kforge, FakeLangGraph(), tmp_path, 6, 3)
    )
    pairs = [tuple(order[i : i + 2]) for i in range(0, len(order), 2)]
    per_level = [("kforge", "langgraph"), ("langgraph", "kforge"), ("kforge", "langgraph")]
    assert pairs == per_level * 2  # NORMAL, then FULL
    assert set(kf) == set(lg) == {"NORMAL", "FULL"}
    assert lg["NORMAL"] == {"warm": pytest.approx(4.0), "cold": pytest.approx(5.0)}
    assert len(ratios) == 3  # the headline level's pairs
    # each ratio is one kforge sample over its LangGraph partner (4 ms here)
    assert bench.statistics.median(ratios) * 4.0 == pytest.approx(kf["NORMAL"]["warm"])
    assert 0 < kf["NORMAL"]["warm"] < kf["NORMAL"]["cold"]
