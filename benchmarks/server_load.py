"""Load on ``kforge serve``: many SSE subscribers on live runs, then a reconnect storm.

Starts a server on 127.0.0.1 in a subprocess (with a ``bench.ticker`` agent that commits one
frame per step), starts RUNS runs, and opens SUBSCRIBERS streams spread over them. It measures,
per delivered frame, the time from the frame's creation (it commits at the end of its step, at
once) to the client parsing it; events/s delivered; the server's peak RSS. When half the
expected events have arrived, every client drops its connection and reconnects with
``Last-Event-ID``; at the end each client's frames are checked against the run's log: frames
lost and frames received twice (targets: 0 and 0). Stops by itself.

Two runs, one after the other on a new server each: *paced*, where each run commits a frame
every INTERVAL seconds (so the events offered are bounded by the workload: RUNS / INTERVAL
frames a second, times the subscribers per run), and *capacity*, where the runs wait until
every subscriber is connected and then commit frames as fast as they can, so what is delivered
is bounded by the server. The whole-run latency counts every frame a client received: live
frames and the frames the server replayed from the store because they were committed before the
connection that delivered them (at a client's first connection, and after the reconnect storm);
a replayed frame's latency includes the time the client took to (re)connect.

    python benchmarks/server_load.py --json results.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

__all__ = ["main"]

TARGET_P99_MS = 50.0


# -- the server side (run as: server_load.py --serve PORT DB) -----------------------------------


def serve(port: int, db: str) -> None:
    """A kforge server whose registry also has ``bench.ticker``."""
    import uvicorn

    from kforge.engine.agent import StepOutcome
    from kforge.engine.run_context import RunContext
    from kforge.frames import DataEvent
    from kforge.runtime import AgentRegistry, Runtime
    from kforge.server import ServerSettings, create_app
    from kforge.store.sqlite import SQLiteStore

    class Ticker:
        agent_type = "bench.ticker"

        def __init__(self, args: dict[str, Any] | None = None) -> None:
            self.args = dict(args or {})
            self.done = 0

        async def step(self, ctx: RunContext) -> StepOutcome:
            if self.done == 0:  # a capacity run starts once its subscribers are connected
                await asyncio.sleep(max(0.0, float(self.args.get("start_at", 0)) - time.time()))
            await asyncio.sleep(float(self.args.get("interval", 0.05)))
            ctx.emit(DataEvent(name="tick", payload={"n": self.done}))
            self.done += 1
            return StepOutcome(done=self.done >= int(self.args.get("steps", 100)))

        def get_state(self) -> dict[str, Any]:
            return {"done": self.done}

        def restore_state(self, state: dict[str, Any]) -> None:
            self.done = int(state.get("done", 0))

        def partial_result(self) -> dict[str, Any]:
            return {"done": self.done}

    registry = AgentRegistry()
    registry.register(Ticker.agent_type, Ticker)
    runtime = Runtime(SQLiteStore(db), model="test", registry=registry)
    settings = ServerSettings(port=port, max_streams_per_client=100_000, mcp=False, ui=False)
    app = create_app(runtime, settings, model="test", close_runtime=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# -- the client side ------------------------------------------------------------------------


@dataclass
class Subscriber:
    run_id: str
    seqs: list[int] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    """Every frame received: live ones and replayed ones."""
    replayed_ms: list[float] = field(default_factory=list)
    """Frames committed before the connection that delivered them, replayed from the store."""
    created: list[float] = field(default_factory=list)
    steady_ms: list[float] = field(default_factory=list)
    """Live frames' latencies once every subscriber is connected, before the reconnect storm."""
    connections: int = 0
    ended: bool = False


@dataclass
class Load:
    url: str
    expected: int
    storm: asyncio.Event = field(default_factory=asyncio.Event)
    received: int = 0
    stormed: bool = False
    connected: int = 0
    """Subscribers that have received their first event (the steady state begins at all)."""
    subscribers: int = 0


def _created(data: dict[str, Any]) -> float:
    return datetime.fromisoformat(data["created_at"]).timestamp()


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str]:
    """The body lines of a chunked HTTP/1.1 response (what uvicorn sends for a stream)."""
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"stream refused: {status.decode().strip()}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    pending = b""
    while True:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.strip() or b"0", 16)
        if size == 0:
            return
        pending += await reader.readexactly(size)
        await reader.readexactly(2)
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.rstrip(b"\r").decode()


async def subscribe(host: str, port: int, load: Load, sub: Subscriber) -> None:
    """One SSE client on a raw connection (lighter than an HTTP library, so the numbers are
    the server's more than the client's)."""
    while not sub.ended:
        last = f"Last-Event-ID: {sub.seqs[-1]}\r\n" if sub.seqs else ""
        sub.connections += 1
        storm_seen = load.storm.is_set()
        opened = time.time()
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"GET /runs/{sub.run_id}/stream HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Accept: text/event-stream\r\n{last}\r\n".encode()
        )
        try:
            event, data_lines, event_id = "message", [], None
            async for line in _lines(reader):
                if line:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "event":
                        event = value
                    elif name == "data":
                        data_lines.append(value)
                    elif name == "id":
                        event_id = value
                    continue
                if not data_lines:
                    continue
                if event == "end":
                    sub.ended = True
                    break
                if event == "status":  # the run's progress, not a frame
                    event, data_lines, event_id = "message", [], None
                    continue
                now = time.time()
                data = json.loads("\n".join(data_lines))
                sub.seqs.append(int(event_id or 0))
                created = _created(data)
                sub.created.append(created)
                sub.latencies_ms.append((now - created) * 1000)
                if created < opened:  # committed before this connection: replayed from the store
                    sub.replayed_ms.append((now - created) * 1000)
                elif not load.storm.is_set() and load.connected >= load.subscribers:
                    sub.steady_ms.append((now - created) * 1000)
                if not sub.seqs[:-1]:
                    load.connected += 1
                load.received += 1
                if not load.stormed and load.received >= load.expected // 2:
                    load.stormed = True
                    load.storm.set()
                event, data_lines, event_id = "message", [], None
                if load.storm.is_set() and not storm_seen:
                    break  # drop the connection, as every client does at once
        finally:
            writer.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds the process has used."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def drive(url: str, pid: int, args: argparse.Namespace, mode: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=args.subscribers + 20, max_keepalive_connections=50)
    capacity = mode == "capacity"
    steps = args.capacity_steps if capacity else args.steps
    interval = 0.0 if capacity else args.interval
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        runs = []
        # a capacity run's ticks begin once every subscriber has had time to connect
        start_at = time.time() + args.connect_s if capacity else 0.0
        for _ in range(args.runs):
            body = {
                "agent": "bench.ticker",
                "args": {"steps": steps, "interval": interval, "start_at": start_at},
                "limits": {"max_steps": steps + 10},  # the default (200 steps) would pause it
            }
            response = await client.post("/runs", json=body)
            response.raise_for_status()
            runs.append(response.json()["id"])
        subs = [Subscriber(runs[i % len(runs)]) for i in range(args.subscribers)]
        frames_per_run = steps + 3  # created, running, ticks, completed
        load = Load(url, expected=frames_per_run * len(subs), subscribers=len(subs))
        peak = rss_mb(pid)
        server_cpu, client_cpu = cpu_s(pid), time.process_time()
        started = time.perf_counter()
        host, port = url.removeprefix("http://").split(":")
        tasks = [asyncio.create_task(subscribe(host, int(port), load, s)) for s in subs]
        while not all(t.done() for t in tasks):
            await asyncio.wait(tasks, timeout=0.25)
            peak = max(peak, rss_mb(pid))
        for task in tasks:
            task.result()
        elapsed = time.perf_counter() - started
        server_cpu, client_cpu = cpu_s(pid) - server_cpu, time.process_time() - client_cpu
        last = {r: (await client.get(f"/runs/{r}")).json()["last_seq"] for r in runs}
    lost = sum(len(set(range(1, last[s.run_id] + 1)) - set(s.seqs)) for s in subs)
    duplicated = sum(len(s.seqs) - len(set(s.seqs)) for s in subs)
    out_of_order = sum(any(b <= a for a, b in zip(s.seqs, s.seqs[1:], strict=False)) for s in subs)
    latencies = [x for s in subs for x in s.latencies_ms]
    replayed = [x for s in subs for x in s.replayed_ms]
    steady = [x for s in subs for x in s.steady_ms]
    delivered = sum(len(s.seqs) for s in subs)
    # frames committed a second: one copy of each run's frames, first to last commit
    created = sorted({t for s in subs for t in s.created})
    span = created[-1] - created[0] if len(created) > 1 else float("nan")
    frames = sum(last.values())
    return {
        "mode": mode,
        "subscribers": len(subs),
        "runs": len(runs),
        "steps_per_run": steps,
        "interval_s": interval,
        "events_delivered": delivered,
        "seconds": round(elapsed, 3),
        "events_per_s": round(delivered / elapsed, 1),
        "frames_committed": frames,
        "frames_committed_per_s": round(frames / span, 1) if span == span and span > 0 else None,
        "events_timed": len(latencies),
        "replayed_events_timed": len(replayed),
        "latency_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p90": round(percentile(latencies, 90), 2),
            "p99": round(percentile(latencies, 99), 2),
            "max": round(max(latencies, default=float("nan")), 2),
            "mean": round(statistics.fmean(latencies), 2) if latencies else None,
        },
        "latency_before_storm_ms": {
            "p50": round(percentile(steady, 50), 2),
            "p99": round(percentile(steady, 99), 2),
        },
        "latency_replayed_ms": {
            "p50": round(percentile(replayed, 50), 2),
            "p99": round(percentile(replayed, 99), 2),
        },
        "server_rss_mb_peak": round(peak, 1),
        "server_cpu_s": round(server_cpu, 2),
        "client_cpu_s": round(client_cpu, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "reconnect_storm": {
            "happened": load.stormed,
            "connections": sum(s.connections for s in subs),
            "lost": lost,
            "duplicated": duplicated,
            "clients_out_of_order": out_of_order,
        },
        "target_p99_ms": TARGET_P99_MS,
        "meets_p99_target_steady": percentile(steady, 99) <= TARGET_P99_MS,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), db],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):  # up to a minute for the server to import and listen
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}: {proc.stderr.read()}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not answer /health within a minute")


def render(r: dict[str, Any]) -> str:
    lat, storm = r["latency_ms"], r["reconnect_storm"]
    rows = [
        ("run", f"{r['mode']}: {r['runs']} runs of {r['steps_per_run']} frames, "
                f"{r['interval_s']} s apart"),
        ("subscribers", f"{r['subscribers']}"),
        ("events delivered", f"{r['events_delivered']} in {r['seconds']} s"),
        ("events/s", f"{r['events_per_s']}"),
        ("frames committed/s", f"{r['frames_committed_per_s']}"),
        ("events timed (replayed)", f"{r['events_timed']} ({r['replayed_events_timed']})"),
        ("latency p50 / p90 / p99", f"{lat['p50']} / {lat['p90']} / {lat['p99']} ms"),
        ("latency max", f"{lat['max']} ms"),
        (
            "  steady (all connected, no storm)",
            f"{r['latency_before_storm_ms']['p50']} / {r['latency_before_storm_ms']['p99']} ms",
        ),
        (
            "  replayed from the store",
            f"{r['latency_replayed_ms']['p50']} / {r['latency_replayed_ms']['p99']} ms",
        ),
        (
            "p99 target",
            f"≤ {r['target_p99_ms']} ms in the steady state: "
            + ("met" if r["meets_p99_target_steady"] else "NOT met"),
        ),
        ("server RSS peak", f"{r['server_rss_mb_peak']} MB"),
        (
            "CPU server / client",
            f"{r['server_cpu_s']} / {r['client_cpu_s']} s"
            f" (machine load {r['load_average_1m']} on {os.cpu_count()} CPUs)",
        ),
        (
            "reconnect storm",
            f"{storm['connections']} connections, lost {storm['lost']}, "
            f"duplicated {storm['duplicated']}",
        ),
    ]  # fmt: skip
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpu": model,
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100, help="frames each paced run commits")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between frames")
    parser.add_argument(
        "--capacity-steps", type=int, default=300, help="frames each capacity run commits"
    )
    parser.add_argument(
        "--connect-s", type=float, default=5.0,
        help="seconds a capacity run waits for its subscribers before its first frame",
    )  # fmt: skip
    parser.add_argument("--mode", choices=("both", "paced", "capacity"), default="both")
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    args = parser.parse_args(argv)
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return 0
    modes = ("paced", "capacity") if args.mode == "both" else (args.mode,)
    report: dict[str, Any] = {
        "benchmark": "server_load",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "settings": {k: v for k, v in vars(args).items() if k not in ("serve", "json")},
    }
    for mode in modes:
        with tempfile.TemporaryDirectory() as tmp:
            proc, url = start_server(str(Path(tmp) / "load.db"))
            try:
                report[mode] = asyncio.run(drive(url, proc.pid, args, mode))
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        print(render(report[mode]))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    storms = [report[mode]["reconnect_storm"] for mode in modes]
    return 0 if all(s["lost"] == 0 and s["duplicated"] == 0 for s in storms) else 1


if __name__ == "__main__":
    raise SystemExit(main())
