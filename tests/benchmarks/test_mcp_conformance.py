"""benchmarks/mcp_conformance.py: how it reads the suite's checks, and (slow: it installs Node
and the suite from the npm registry) the official suite's server scenarios end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from kforge.mcp.catalog import MCPCatalog  # noqa: E402
from mcp_conformance import node_package, summarize  # noqa: E402
from mcp_conformance_fixture import register_mcp  # noqa: E402


def test_a_scenario_fails_only_on_a_failed_check_and_keeps_warnings() -> None:
    checks = [
        {"id": "a", "status": "SUCCESS"},
        {"id": "b", "status": "WARNING", "errorMessage": "no retry field"},
        {"id": "c", "status": "INFO"},
    ]
    assert summarize(checks) == {
        "status": "passed",
        "checks": 2,
        "failures": [],
        "warnings": ["b: no retry field"],
    }
    failed = summarize([*checks, {"id": "d", "status": "FAILURE", "errorMessage": "no tool"}])
    assert failed["status"] == "failed" and failed["failures"] == ["d: no tool"]
    assert node_package().startswith("node-")


def test_the_fixture_adds_what_the_suite_calls() -> None:
    catalog = MCPCatalog()
    register_mcp(catalog)
    assert {"test_simple_text", "test_tool_with_progress", "test_sampling"} <= {
        t.name for t in catalog.tools
    }
    assert catalog.find_resource("test://template/42/data") is not None
    assert catalog.find_prompt("test_prompt_with_arguments") is not None


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_official_suite_passes_its_server_scenarios(tmp_path: Path) -> None:
    out = tmp_path / "conformance.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "mcp_conformance.py"), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    active = {n: o for n, o in report["scenarios"].items() if o["suite"] == "active"}
    assert len(active) >= 30
    assert all(o["status"] == "passed" for o in active.values()), active
    assert report["node"].startswith("v") and int(report["node"][1:].split(".")[0]) >= 22


FAKE_SUITE = """
import json, os, sys
from pathlib import Path
from typing import Any

SCENARIOS = {"active": ["server-initialize", "tools-list"], "pending": ["server-sse-polling"]}
mode = os.environ["FAKE_SUITE"]
args = sys.argv[1:]
if args[:2] == ["list", "--server"]:
    print("Server scenarios (test against a server):")
    for name in SCENARIOS["active"] + SCENARIOS["pending"]:
        print(f"  - {name} [2025-11-25]")
    raise SystemExit(0)
suite, out = args[args.index("--suite") + 1], Path(args[args.index("-o") + 1])
for name in SCENARIOS[suite]:
    if mode == "missing" and name == "tools-list":
        continue  # the scenario crashed before writing its checks
    status = "FAILURE" if mode == "failed" and name == "server-sse-polling" else "SUCCESS"
    folder = out / f"server-{name}-2026-01-01T00-00-00-000Z"
    folder.mkdir(parents=True)
    check = {"id": name, "status": status, "errorMessage": "broken" if status == "FAILURE" else ""}
    (folder / "checks.json").write_text(json.dumps([check]))
raise SystemExit(2 if mode == "exit" and suite == "active" else 0)
"""


def run_with_fake_suite(
    tmp_path: Path, mode: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    entry = tmp_path / "fake_suite.py"
    entry.write_text(FAKE_SUITE)
    out = tmp_path / f"{mode}.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "mcp_conformance.py"),
         "--suite-command", sys.executable, str(entry), "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "FAKE_SUITE": mode},
    )  # fmt: skip
    return done, json.loads(out.read_text())


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("missing", "tools-list: no results (the scenario wrote no checks.json)"),
        ("failed", "server-sse-polling: failed (server-sse-polling: broken)"),
        ("exit", "the active suite exited with status 2"),
    ],
)
def test_a_missing_or_failed_scenario_or_a_failing_suite_fails_the_run(
    tmp_path: Path, mode: str, reason: str
) -> None:
    done, report = run_with_fake_suite(tmp_path, mode)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAILED {reason}" in done.stderr
    assert reason in report["problems"]
    assert report["date"] and report["machine"]["cpus"]


def test_a_run_where_every_listed_scenario_passes_succeeds(tmp_path: Path) -> None:
    done, report = run_with_fake_suite(tmp_path, "pass")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["problems"] == [] and report["missing"] == []
    assert set(report["scenarios"]) == {"server-initialize", "tools-list", "server-sse-polling"}
