"""benchmarks/server_load.py runs end to end at a small size, paced and at capacity, and finds
nothing lost or repeated.

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
            "--capacity-steps",
            "205",  # past the default step limit, which must not pause it
            "--connect-s",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["date"] and report["machine"]["cpus"]
    for mode, ticks in (("paced", 20), ("capacity", 205)):
        result = report[mode]
        assert result["mode"] == mode
        assert result["subscribers"] == 6 and result["runs"] == 2
        storm = result["reconnect_storm"]
        assert storm["happened"] and storm["connections"] >= 12
        assert storm["lost"] == 0 and storm["duplicated"] == 0
        assert storm["clients_out_of_order"] == 0
        # created, running, the ticks, complete, completed
        assert result["events_delivered"] == 6 * (ticks + 4)
        assert result["frames_committed"] == 2 * (ticks + 4)
        # the whole-run figure counts the frames replayed on reconnection
        assert result["events_timed"] == result["events_delivered"]
        assert result["replayed_events_timed"] > 0
        for key in ("p50", "p99"):
            assert result["latency_ms"][key] >= 0
    assert report["capacity"]["interval_s"] == 0
    assert done.stdout.count("reconnect storm") == 2
