"""benchmarks/faults.py runs end to end on a few faults of each kind and reports what it says.

No timing assertions: only that kills, races and damage are applied from outside, that the
numbers the issue targets are there, and that they come out right on this code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "faults.py"


def test_faults_benchmark_reports_a_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "faults.json"
    sizes = ("--kills", "3", "--races", "2", "--trees", "2")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *sizes, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "dup effects" in done.stdout and "record damage" in done.stdout
    assert "steered trees" in done.stdout
    results = json.loads(out.read_text())
    for name in ("sigkill", "double_resume"):
        row = results[name]
        assert row["completed"] == row["trials"]
        for key in ("duplicated_effects", "lost_steps", "re_requested", "unrecoverable"):
            assert row[key] == 0, (name, key, row)
    assert results["double_resume"]["exactly_one_proceeded"] == 2
    for kind, row in results["damage"].items():
        if kind == "database pages":
            assert row["exit_code"] == 1 and row["one_line"] and row["says_how_to_recover"]
            continue
        assert row["rows_damaged"] > 0, kind
        assert not row["worker_raised"], kind
        if row["records_intact_enough"]:
            assert row["status"] == "completed", (kind, row)
        else:
            assert row["failed_clearly"], (kind, row)
    assert results["damage"]["last frame"]["recovered_by_fork"]
    tree = results["tree"]
    assert tree["trials"] == 2 and tree["completed"] == 2 and tree["accepted"] > 0
    for key in ("lost", "applied_twice", "failed_agents", "duplicated_effects", "unfinished"):
        assert tree[key] == 0, (key, tree)
