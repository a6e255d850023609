"""A server that starts over runs a killed process left ``running`` continues them (unless told
not to), with a frame saying so; seen through HTTP, in process and as ``kforge serve``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from kforge.runtime.recovery import RECOVERED
from kforge.server import ServerSettings
from tests.runtime.test_recovery import running_with_lease
from tests.server.conftest import make_runtime
from tests.server.helpers import LiveServer, iter_events
from tests.server.test_cli_serve import free_port


def gone_owner() -> str:
    """A lease owner naming a process of this host that has exited."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return f"{socket.gethostname()}:{done.stdout.strip()}:dead"


def left_running(db: Path, agent: str, args: dict[str, Any]) -> str:
    """A run as a killed process leaves it: ``running``, under the lease of that process."""
    return running_with_lease(db, gone_owner(), 30.0, agent_type=agent, args=args)


def status_frames(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    frames = client.get(f"/runs/{run_id}/frames").json()["frames"]
    return [f for f in frames if f["type"] == "status.changed"]


def test_a_server_recovers_the_runs_a_killed_process_left_running(tmp_path: Path) -> None:
    run_id = left_running(tmp_path / "k.db", "test.paced", {"steps": 2})
    live = LiveServer(make_runtime(tmp_path), ServerSettings(), model="test")
    with live, live.client() as client:
        with client.stream("GET", f"/runs/{run_id}/stream") as response:
            events = list(iter_events(response))
        assert events[-1].event == "end" and events[-1].json()["status"] == "completed"
        said = [f for f in status_frames(client, run_id) if RECOVERED in f["reason"]]
        assert len(said) == 1 and "is gone" in said[0]["reason"]
        assert client.get(f"/runs/{run_id}").json()["result"]["ticks"] == 4


def test_a_server_told_not_to_recover_leaves_them(tmp_path: Path) -> None:
    run_id = left_running(tmp_path / "k.db", "test.paced", {"steps": 2})
    settings = ServerSettings(recover=False)
    with LiveServer(make_runtime(tmp_path), settings, model="test") as live, live.client() as c:
        run = c.get(f"/runs/{run_id}").json()
        assert run["status"] == "running" and run["last_seq"] == 2
        resumed = c.post(f"/runs/{run_id}/resume")  # a person can still resume it
        assert resumed.status_code == 200, resumed.text
        with c.stream("GET", f"/runs/{run_id}/stream") as response:
            assert list(iter_events(response))[-1].json()["status"] == "completed"
        assert not [f for f in status_frames(c, run_id) if RECOVERED in f["reason"]]


def serve(db: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("KFORGE_TOKEN", None)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kforge", "--db", str(db), "serve", "--port", str(port)),
            *("--model", "test", "--no-samples", *extra),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "Application startup complete" in line:
            break
    else:
        raise AssertionError(f"kforge serve did not start (exit {proc.wait()})")
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc, f"http://127.0.0.1:{port}"


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0


def test_kforge_serve_recovers_unless_given_no_recover(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_id = left_running(db, "router", {"question": "What is RAG?"})
    proc, url = serve(db, "--no-recover")
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            assert client.get(f"/runs/{run_id}").json()["status"] == "running"
    finally:
        stop(proc)
    proc, url = serve(db)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            with client.stream("GET", f"/runs/{run_id}/stream") as response:
                end = list(iter_events(response))[-1]
            assert end.event == "end" and end.json()["status"] == "completed"
            said = [f for f in status_frames(client, run_id) if RECOVERED in f["reason"]]
            assert len(said) == 1
    finally:
        stop(proc)
