"""benchmarks/tree.py runs the kforge side end to end and reports what it says it measures.

No timing assertions: only that every agent of every tree ran its six steps and that the
numbers are derived the right way round.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tree.py"


def test_kforge_side_runs_the_trees_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "tree.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--skip-langgraph",
            "--ns",
            "1,2",
            "--repeat",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "steps/s" in done.stdout and "kforge" in done.stdout
    result = json.loads(out.read_text())
    assert result["tree"] == {"agents_per_tree": 21, "fanout": 4, "depth": 2}
    for row, n in zip(result["rows"], (1, 2), strict=True):
        kforge = row["kforge"]
        assert kforge["n"] == n and kforge["agents"] == 21 * n
        assert kforge["steps"] == 6 * 21 * n  # six steps per agent, all completed
        # steps per second of the rounded wall time, within that rounding
        derived = kforge["steps"] / kforge["wall_s"]
        assert abs(kforge["steps_per_s"] - derived) <= 0.01 * derived
        assert kforge["peak_rss_mb"] > 0 and kforge["kb_per_agent"] >= 0
        assert "langgraph" not in row
    assert result["target"]["met"] is None  # nothing to compare with


def test_the_two_sides_share_the_workload() -> None:
    side = (SCRIPT.parent / "_tree_langgraph_side.py").read_text()
    assert "Send(" in side and "SqliteSaver" in side and 'durability="sync"' in side
    bench = SCRIPT.read_text()
    for source in (bench, side):
        assert 'SUBQUESTION = "Subquestion {n} on {level} of {prompt}?"' in source
        assert 'LEVELS = ("cost estimates", "risk factors", "timing plans")' in source


def _load_bench() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tree_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_side_leads_a_round_in_turn() -> None:
    bench: Any = _load_bench()
    sides = ["kforge", "langgraph_shared", "langgraph_per_thread", "langgraph_async"]
    firsts = [bench.run_order(sides, r)[0] for r in range(4)]
    assert firsts == sides
    assert all(sorted(bench.run_order(sides, r)) == sorted(sides) for r in range(6))


def test_the_ratio_is_taken_against_langgraphs_fastest_setup() -> None:
    bench: Any = _load_bench()

    def measured(wall: float) -> dict[str, Any]:
        return {
            "n": 2,
            "wall_s": wall,
            "cpu_s": wall,
            "steps": 252,
            "peak_rss_kb": 2000,
            "baseline_rss_kb": 1000,
            "version": "1.2.0",
        }

    rounds = {
        "kforge": [measured(0.5), measured(0.25)],
        "langgraph_shared": [measured(2.0)],
        "langgraph_per_thread": [measured(1.0), measured(3.0)],
        "langgraph_async": [measured(1.5)],
    }
    row = bench.make_row(2, rounds, 21)
    assert row["langgraph_setup"] == "per_thread"
    assert row["langgraph"]["wall_s"] == 1.0
    assert row["kforge"]["wall_s"] == 0.25
    assert row["speedup"] == 4.0


def test_steered_trees_killed_and_resumed_lose_and_repeat_nothing(tmp_path: Path) -> None:
    out = tmp_path / "faults.json"
    command = [sys.executable, str(SCRIPT), "--scenario", "faults", "--skip-langgraph"]
    done = subprocess.run(
        [*command, "--ns", "2", "--json", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "killed" in done.stdout and "re-run" in done.stdout
    result = json.loads(out.read_text())
    assert "rows" not in result  # the plain scenario did not run
    (row,) = result["faults"]["rows"]
    kforge = row["kforge"]
    assert kforge["killed"] and kforge["completed_trees"] == 2
    assert 0 < kforge["steps_before_kill"] < kforge["steps_without_interventions"] == 6 * 21 * 2
    assert kforge["steps"] >= kforge["steps_without_interventions"]
    assert kforge["accepted"] > 0 and kforge["sent"] == kforge["accepted"] + kforge["refused"]
    assert kforge["steps_reexecuted"] == 0
    assert kforge["lost"] == 0 and kforge["applied_twice"] == 0
    assert kforge["failed_agents"] == 0 and kforge["unfinished_as"] == []
    assert kforge["wall_s"] > kforge["resume_wall_s"] > 0
