"""benchmarks/mcp_conformance.py: how it reads the suite's checks, and (slow: it installs Node
and the suite from the npm registry) the official suite's server scenarios end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

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
