"""Run untrusted Python code in a separate, limited process (the parent side of the sandbox).

Layers: resource limits (CPU, memory, file size, processes, open files), wall time, a scrubbed
environment, a temporary working directory, and an audit-hook policy in the child (no sockets,
no new processes, no reads or writes outside the working directory but for Python's own library
and system libraries, no peeking at other processes). Where the kernel has Landlock, the kernel
itself enforces that file confinement (and, from Landlock ABI 4, refuses TCP). When
running as root with ``unshare`` available, the child also gets its own network namespace (no
network at all), PID and mount namespaces, and drops every capability (``setpriv``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kforge import jsoncodec

__all__ = ["RpcHandler", "SandboxLimits", "SandboxOutcome", "run_sandboxed"]

CHILD = Path(__file__).with_name("sandbox_child.py")
RpcHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Serves ``fork``/``wait`` requests from the code: ``(op, arguments) -> value``."""

_UNSHARE = ("--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc")
_SETPRIV = ("--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs")
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    cpu_s: int = 10
    """CPU seconds; the code is stopped when it uses more."""
    wall_s: float = 30.0
    """Seconds of wall time, not counting time spent waiting on fork/wait."""
    memory_mb: int = 512
    """Address-space limit; allocations past it raise MemoryError."""
    file_size_mb: int = 16
    """Largest file the code may write."""
    max_processes: int = 64
    """RLIMIT_NPROC (effective for non-root users; new processes are refused anyway)."""
    max_open_files: int = 64
    output_bytes: int = 64_000
    """Stdout and stderr kept, each; the rest is dropped and marked."""
    isolate: bool = True
    """Use namespaces and drop capabilities when running as root and ``unshare`` works."""


@dataclass(frozen=True, slots=True)
class SandboxOutcome:
    ok: bool
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    """``repr`` of the value of the code's last expression, if any."""
    error: str | None = None
    error_kind: str | None = None
    """cpu_limit, memory_limit, wall_time, forbidden, exception or crashed."""
    traceback: str = ""
    exit_code: int | None = None
    files: tuple[str, ...] = ()
    """Files left in the working directory (names only; the directory is deleted)."""
    isolation: tuple[str, ...] = field(default_factory=tuple)
    """Which layers applied."""


@functools.cache
def _isolation_prefix() -> tuple[str, ...]:
    """The namespace/capability wrapper command, if this machine allows it."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if os.geteuid() != 0 or unshare is None:
        return ()
    prefix: tuple[str, ...] = (unshare, *_UNSHARE, "--")
    if setpriv is not None:
        prefix = (*prefix, setpriv, *_SETPRIV, "--")
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
    return prefix if probe.returncode == 0 else ()


def _environment(workdir: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


async def run_sandboxed(
    code: str,
    limits: SandboxLimits | None = None,
    rpc: RpcHandler | None = None,
    *,
    workdir: str | os.PathLike[str] | None = None,
) -> SandboxOutcome:
    """Run ``code`` in a fresh sandboxed process and report what happened.

    ``workdir`` (an existing folder) is where the code runs and the only place it may read or
    write besides Python's own files; it is kept afterwards. Without it the code gets a new
    temporary folder that is deleted when it ends.
    """
    limits = limits or SandboxLimits()
    prefix = await asyncio.to_thread(_isolation_prefix) if limits.isolate else ()
    folder_kind = "workdir" if workdir is not None else "tempdir"
    isolation = ["process", "rlimits", "wall-time", "clean-env", folder_kind, "audit-policy"]
    if prefix:
        isolation += ["net-namespace", "pid-namespace", "mount-namespace"]
        isolation += ["no-capabilities"] if any("setpriv" in p for p in prefix) else []
    keep = workdir is not None
    if workdir is not None:
        folder = os.path.realpath(workdir)
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"sandbox working folder {folder} does not exist")
    else:
        folder = tempfile.mkdtemp(prefix="kforge-python-")
    read_fd, write_fd = os.pipe()
    config = {
        "workdir": folder,
        "control_fd": write_fd,
        "cpu_s": limits.cpu_s,
        "memory_bytes": limits.memory_mb * _MB,
        "file_size_bytes": limits.file_size_mb * _MB,
        "max_processes": limits.max_processes,
        "max_open_files": limits.max_open_files,
    }
    command = [
        *prefix,
        sys.executable,
        "-I",
        "-B",
        "-X",
        "utf8",
        str(CHILD),
        jsoncodec.dumps(config),
    ]
    proc: asyncio.subprocess.Process | None = None
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(write_fd,),
            cwd=folder,
            env=_environment(folder),
            start_new_session=True,
        )
        os.close(write_fd)
        write_fd = -1
        run = _Run(proc, limits, rpc, read_fd)
        read_fd = -1
        outcome = await run.finish(code)
        files = tuple(sorted(os.listdir(folder)))[:100]
        isolation += list((run.done or {}).get("isolation") or [])
        return _with(outcome, files=files, isolation=tuple(isolation))
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        if proc is not None and proc.returncode is None:
            _kill(proc)
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _with(outcome: SandboxOutcome, **changes: Any) -> SandboxOutcome:
    from dataclasses import replace

    return replace(outcome, **changes)


class _Run:
    """One execution: pumps output, serves fork/wait, enforces wall time."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        limits: SandboxLimits,
        rpc: RpcHandler | None,
        control_fd: int,
    ) -> None:
        self.proc = proc
        self.limits = limits
        self.rpc = rpc
        self.control = os.fdopen(control_fd, "rb", buffering=0)
        self.done: dict[str, Any] | None = None
        self.timed_out = False
        self.waiting = 0
        self.used = 0.0
        self.since = time.monotonic()
        self.changed = asyncio.Event()

    async def finish(self, code: str) -> SandboxOutcome:
        assert self.proc.stdin is not None and self.proc.stdout and self.proc.stderr
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=8 * _MB)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), self.control
        )
        out = asyncio.create_task(_drain(self.proc.stdout, self.limits.output_bytes))
        err = asyncio.create_task(_drain(self.proc.stderr, self.limits.output_bytes))
        serve = asyncio.create_task(self._serve(reader))
        watch = asyncio.create_task(self._watch())
        try:
            with contextlib.suppress(ConnectionError):
                self.proc.stdin.write(jsoncodec.dumps_bytes({"code": code}) + b"\n")
                await self.proc.stdin.drain()
            await self.proc.wait()
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(serve, timeout=5)
            stdout, stderr = await out, await err
        finally:
            transport.close()
            for task in (out, err, serve, watch):
                task.cancel()
        return self._outcome(stdout, stderr)

    async def _serve(self, reader: asyncio.StreamReader) -> None:
        assert self.proc.stdin is not None
        while True:
            line = await reader.readline()
            if not line:
                return
            message = jsoncodec.loads(line)
            op = message.pop("op", "")
            if op == "done":
                self.done = message
                continue
            self._pause(True)
            try:
                if self.rpc is None:
                    raise RuntimeError(f"{op}() is not available here")
                reply = {"ok": True, "value": await self.rpc(op, message)}
            except Exception as exc:
                reply = {"ok": False, "error": str(exc) or type(exc).__name__}
            finally:
                self._pause(False)
            with contextlib.suppress(ConnectionError):
                self.proc.stdin.write(jsoncodec.dumps_bytes(reply, default=str) + b"\n")
                await self.proc.stdin.drain()

    def _pause(self, waiting: bool) -> None:
        now = time.monotonic()
        if self.waiting == 0:
            self.used += now - self.since
        self.waiting += 1 if waiting else -1
        self.since = now
        self.changed.set()

    async def _watch(self) -> None:
        while True:
            self.changed.clear()
            if self.waiting:
                await self.changed.wait()
                continue
            remaining = self.limits.wall_s - (self.used + time.monotonic() - self.since)
            if remaining <= 0:
                self.timed_out = True
                _kill(self.proc)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=remaining)

    def _outcome(self, stdout: str, stderr: str) -> SandboxOutcome:
        code = self.proc.returncode
        limits = self.limits

        def failed(kind: str, error: str, trace: str = "") -> SandboxOutcome:
            return SandboxOutcome(
                ok=False,
                stdout=stdout,
                stderr=stderr,
                error=error,
                error_kind=kind,
                traceback=trace,
                exit_code=code,
            )

        if self.timed_out:
            return failed(
                "wall_time",
                f"the code ran longer than its wall-time limit of {limits.wall_s:g} s and was "
                "stopped",
            )
        done = self.done
        if done is not None and done.get("ok"):
            return SandboxOutcome(
                ok=True, stdout=stdout, stderr=stderr, result=done.get("result"), exit_code=code
            )
        if done is not None:
            kind, error = _classify(done, limits)
            return failed(kind, error, str(done.get("traceback", "")))
        if code is not None and code < 0 and -code in (signal.SIGXCPU, signal.SIGKILL):
            return failed(
                "cpu_limit",
                f"the code exceeded its CPU time limit of {limits.cpu_s} s and was stopped",
            )
        return failed(
            "crashed",
            f"the python process ended unexpectedly (exit status {code}) before reporting a result",
        )


def _classify(done: dict[str, Any], limits: SandboxLimits) -> tuple[str, str]:
    kind = str(done.get("error_type", ""))
    error = str(done.get("error", "the code failed"))
    if kind == "CpuLimitExceeded":
        return "cpu_limit", f"the code exceeded its CPU time limit of {limits.cpu_s} s"
    if kind == "MemoryError":
        return "memory_limit", f"the code ran out of memory (limit {limits.memory_mb} MB)"
    if kind == "PermissionError" and "sandbox:" in error:
        return "forbidden", error.replace("PermissionError: ", "")
    if kind == "OSError" and "File too large" in error:
        return "file_size_limit", f"the code wrote a file larger than {limits.file_size_mb} MB"
    return "exception", error


async def _drain(stream: asyncio.StreamReader, keep: int) -> str:
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(65536):
        room = keep - len(kept)
        kept += chunk[:room] if room > 0 else b""
        dropped += max(0, len(chunk) - max(room, 0))
    text = kept.decode("utf-8", errors="replace")
    return text + (f"\n[... {dropped} more bytes dropped]" if dropped else "")
