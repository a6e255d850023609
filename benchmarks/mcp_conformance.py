"""The official MCP conformance suite's server scenarios against ``kforge serve``'s ``/mcp``.

Starts ``kforge serve`` on 127.0.0.1, runs ``npx @modelcontextprotocol/conformance server`` (the
newest release that runs on this machine's Node: 0.1.14 and later need Node 22), and sorts the
scenarios into those that test the transport and protocol kforge serves, and those that call
the suite's own fixture tools, resources and prompts (``test_simple_text``, ``resources/list``,
...) which a kforge server does not offer by design.

    python benchmarks/mcp_conformance.py --json conformance.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

__all__ = ["main"]

PACKAGE = "@modelcontextprotocol/conformance"
FIXTURE_ONLY = ("unknown tool 'test_", "Method not found")
"""Failures that mean the scenario needs a fixture kforge does not serve (a tool named
``test_*``, or resources, prompts, logging or completion, which kforge's server omits)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def classify(checks: list[dict[str, Any]]) -> str:
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    if not failed:
        return "passed"
    if all(any(m in str(c.get("errorMessage", "")) for m in FIXTURE_ONLY) for c in failed):
        return "needs the suite's fixture"
    return "failed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.1.13", help=f"{PACKAGE} release to run")
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    args = parser.parse_args(argv)
    if shutil.which("npx") is None:
        print("npx is not installed: install Node.js (>= 20) to run the suite", file=sys.stderr)
        return 2
    port = free_port()
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, "-c", "import sys; from kforge.cli import main; sys.exit(main())",
             "--db", f"{tmp}/k.db", "serve", "--port", str(port), "--model", "test",
             "--log-level", "warning"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(300):
                try:
                    httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            out = Path(tmp) / "results"
            subprocess.run(
                ["npx", "--yes", f"{PACKAGE}@{args.version}", "server",
                 "--url", f"http://127.0.0.1:{port}/mcp", "-o", str(out)],
                check=False, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            results: dict[str, str] = {}
            for folder in sorted(out.iterdir()) if out.is_dir() else []:
                checks_file = folder / "checks.json"
                if checks_file.is_file():
                    name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", folder.name.removeprefix("server-"))
                    results[name] = classify(json.loads(checks_file.read_text()))
        finally:
            server.terminate()
            server.wait(timeout=30)
    counts = {k: sum(1 for v in results.values() if v == k) for k in set(results.values())}
    width = max((len(n) for n in results), default=10)
    for name, outcome in results.items():
        print(f"{name:<{width}}  {outcome}")
    print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if args.json:
        report = {"package": f"{PACKAGE}@{args.version}", "scenarios": results, "counts": counts}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0 if results and "failed" not in counts else 1


if __name__ == "__main__":
    raise SystemExit(main())
