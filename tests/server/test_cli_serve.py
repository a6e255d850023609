"""``kforge serve`` as a real process: it indexes the samples, checks its token, runs agents,
and stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.server.helpers import iter_events

TOKEN = "cli-test-token-0123456789"
SRC = Path(__file__).resolve().parents[2] / "src"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(db: Path, port: int, *options: str) -> tuple[list[str], dict[str, str]]:
    """``kforge --db DB serve --port PORT --model test OPTIONS`` from this checkout's sources,
    and its environment."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("KFORGE_TOKEN", None)
    argv = [
        sys.executable,
        "-c",
        "import sys; from kforge.cli import main; sys.exit(main())",
        "--db",
        str(db),
        "serve",
        "--port",
        str(port),
        "--model",
        "test",
        *options,
    ]
    return argv, env


@contextmanager
def serving(db: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``kforge serve`` in a process, from when it accepts requests: its URL; stopped with
    Ctrl-C at the end, which it must take with exit code 0."""
    port = free_port()
    argv, environ = serve_command(db, port, *options)
    proc = subprocess.Popen(
        argv,
        env={**environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        for line in proc.stderr:  # uvicorn says when it accepts requests
            if "Application startup complete" in line:
                break
        else:
            raise AssertionError(f"kforge serve did not start (exit {proc.wait()})")
        # keep reading its log so a full pipe never blocks the server
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        assert f"kforge serving on http://127.0.0.1:{port}" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert code == 0


def test_kforge_serve_runs_an_agent_behind_its_token(tmp_path: Path) -> None:
    with serving(tmp_path / "k.db", "--token", TOKEN) as url:
        assert httpx.get(f"{url}/health").status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=auth, timeout=60) as client:
            assert client.get("/health").json()["status"] == "ok"
            assert [c["name"] for c in client.get("/corpora").json()["corpora"]] == ["samples"]
            run = client.post(
                "/runs",
                json={
                    "agent": "router",
                    "args": {
                        "question": "What is retrieval-augmented generation?",
                        "corpus": "samples",
                    },
                },
            )
            assert run.status_code == 201, run.text
            with client.stream("GET", f"/runs/{run.json()['id']}/stream") as response:
                events = list(iter_events(response))
            assert events[-1].event == "end" and events[-1].json()["status"] == "completed"


def test_kforge_serve_gives_runs_the_tools_of_its_application_module(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    app = ("--app", "tests.cli.shop_app", "--no-samples")
    root = str(Path(__file__).resolve().parents[2])
    env = {"SHOP_LEDGER": str(ledger), "PYTHONPATH": os.pathsep.join([str(SRC), root])}
    with serving(tmp_path / "k.db", *app, env=env) as url, httpx.Client(base_url=url) as client:
        args = {"goal": "Price the cake", "tools": ["lookup"], "decision_mode": "native"}
        run = client.post("/runs", json={"agent": "react", "args": args}, timeout=60)
        assert run.status_code == 201, run.text
        with client.stream("GET", f"/runs/{run.json()['id']}/stream", timeout=60) as response:
            events = list(iter_events(response))
    assert events[-1].json()["status"] == "completed", events[-3:]
    results = [e.json() for e in events if e.event == "tool.result"]
    assert results and all(r["tool_name"] == "lookup" and r["success"] for r in results)
    assert len(ledger.read_text(encoding="utf-8").splitlines()) == len(results)


def test_kforge_serve_on_a_port_in_use_says_so_and_exits_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        argv, env = serve_command(tmp_path / "k.db", port)
        done = subprocess.run(
            argv,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        f"kforge: error: port {port} is in use; choose another with --port"
    )
    assert "serving" not in done.stdout
