"""benchmarks/server_load.py runs end to end at a small size and finds nothing lost or repeated.

No timing assertions: only that it measures what it says and writes its JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "server_load.py"


def test_a_small_load_run_loses_and_repeats_nothing(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    src = str(SCRIPT.parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--subscribers",
            "6",
            "--runs",
            "2",
            "--steps",
            "20",
            "--interval",
            "0.01",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["subscribers"] == 6 and result["runs"] == 2
    storm = result["reconnect_storm"]
    assert storm["happened"] and storm["connections"] >= 12
    assert storm["lost"] == 0 and storm["duplicated"] == 0 and storm["clients_out_of_order"] == 0
    assert result["events_delivered"] == 6 * 24  # created, running, 20 ticks, complete, completed
    for key in ("p50", "p99"):
        assert result["latency_ms"][key] >= 0
    assert "reconnect storm" in done.stdout
