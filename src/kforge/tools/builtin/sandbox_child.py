"""The code-execution sandbox's child process: sets its limits, installs a policy, runs the code.

Runs as a script (``python -I -B sandbox_child.py CONFIG``) and imports only the standard
library. The code arrives as the first JSON line on stdin; later lines answer ``fork``/``wait``
calls, which go to the parent as JSON lines on the control descriptor named in CONFIG. The last
control message reports the outcome.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import re
import resource
import signal
import sys
import traceback
from typing import Any, BinaryIO

__all__ = ["confine_files", "main", "read_roots"]

_PROC_OTHER = re.compile(r"^/proc/(\d+)(/|$)")
_BLOCKED = {
    "socket.__new__": "opening network sockets",
    "socket.getaddrinfo": "resolving host names",
    "socket.gethostbyname": "resolving host names",
    "socket.gethostbyaddr": "resolving host names",
    "os.fork": "creating processes",
    "os.forkpty": "creating processes",
    "os.exec": "running programs",
    "os.posix_spawn": "running programs",
    "os.spawn": "running programs",
    "os.system": "running programs",
    "subprocess.Popen": "running programs",
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
    "os.killpg": "signalling other processes",
    "signal.pthread_kill": "signalling threads",
}
_WRITES = {
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


_READ_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/dev/urandom")
"""Single files the code may read outside its working directory (loading libraries, time)."""
_READ_DIRS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo")
"""System folders of shared libraries and time zones (nothing of the user's)."""


def read_roots() -> list[str]:
    """Where the code may read: Python's own library (to import modules) and system libraries.
    Everything else outside the working directory is refused."""
    import sysconfig

    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.update(p for p in sys.path if p and os.path.isdir(p))
    roots.update(_READ_DIRS)
    return sorted(os.path.realpath(r) for r in roots if os.path.exists(r))


# Landlock (Linux >= 5.13): the kernel refuses every file access the rules do not grant.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_FILE_RIGHTS_V1 = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE
_FS_ALL_V1 = (1 << 13) - 1
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15


def confine_files(workdir: str, roots: list[str]) -> bool:
    """Confine reads and writes to ``workdir`` and read-only ``roots``; False if the kernel
    has no Landlock (the audit policy still applies)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return False
    handled = _FS_ALL_V1
    file_rights = _FS_FILE_RIGHTS_V1
    if abi >= 2:
        handled |= _FS_REFER
    if abi >= 3:
        handled |= _FS_TRUNCATE
        file_rights |= _FS_TRUNCATE
    if abi >= 5:
        handled |= _FS_IOCTL_DEV
        file_rights |= _FS_IOCTL_DEV
    # handled_access_fs, handled_access_net (ABI 4: no TCP at all), scoped (ABI 6: no signals
    # or abstract sockets outside the sandbox)
    fields = [handled, 0b11 if abi >= 4 else 0, 0b11 if abi >= 6 else 0]
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    attr = (ctypes.c_uint64 * 3)(*fields)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return False

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    def grant(path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                rights &= file_rights
            rule = PathBeneath(rights, fd)
            libc.syscall(_SYS_ADD_RULE, ruleset, ctypes.c_int(1), ctypes.byref(rule), 0)
        finally:
            os.close(fd)

    try:
        grant(workdir, handled)
        for root in roots:
            grant(root, _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR)
        for path in _READ_FILES:
            grant(path, _FS_READ_FILE)
        grant("/dev/null", _FS_READ_FILE | _FS_WRITE_FILE)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        return int(libc.syscall(_SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0))) == 0
    finally:
        os.close(ruleset)


class CpuLimitExceeded(BaseException):
    """Raised in the code when its CPU time limit is reached."""


def _refuse(what: str) -> PermissionError:
    return PermissionError(f"sandbox: {what} is not allowed in the python tool")


def _policy(workdir: str, roots: list[str]) -> Any:
    own_pid = str(os.getpid())
    readable = (*roots, *_READ_FILES, f"/proc/{own_pid}", "/proc/self")

    def under(real: str, base: str) -> bool:
        return real == base or real.startswith(base.rstrip(os.sep) + os.sep)

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return True
        real = os.path.realpath(os.fsdecode(path))
        return real == workdir or real.startswith(workdir + os.sep) or real == "/dev/null"

    def may_read(path: Any) -> bool:
        if inside(path):
            return True
        real = os.path.realpath(os.fsdecode(path))
        return any(under(real, base) for base in readable)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing and not inside(path):
                raise _refuse(f"writing outside the working directory ({os.fsdecode(path)})")
            other = _PROC_OTHER.match(os.path.realpath(os.fsdecode(path)))
            if other and other.group(1) != own_pid:
                raise _refuse("reading other processes' information")
            if not may_read(path):
                raise _refuse(f"reading outside the working directory ({os.fsdecode(path)})")
            return
        if event in ("os.listdir", "os.scandir") and args and args[0] is not None:
            if not may_read(args[0]):
                raise _refuse(f"listing outside the working directory ({os.fsdecode(args[0])})")
            return
        if event in _BLOCKED:
            raise _refuse(_BLOCKED[event])
        if event == "ctypes.dlopen":
            raise ImportError("sandbox: loading native libraries with ctypes is not allowed")
        if event == "os.kill" and args and args[0] not in (0, os.getpid()):
            raise _refuse("signalling other processes")
        positions = _WRITES.get(event)
        if positions is not None:
            for i in positions:
                if i < len(args) and args[i] is not None and not inside(args[i]):
                    raise _refuse(f"changing files outside the working directory ({args[i]})")

    return hook


def _set_limits(config: dict[str, Any]) -> None:
    cpu = int(config["cpu_s"])
    limits = {
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        resource.RLIMIT_AS: (int(config["memory_bytes"]),) * 2,
        resource.RLIMIT_FSIZE: (int(config["file_size_bytes"]),) * 2,
        resource.RLIMIT_NPROC: (int(config["max_processes"]),) * 2,
        resource.RLIMIT_NOFILE: (int(config["max_open_files"]),) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    for which, (soft, hard) in limits.items():
        resource.setrlimit(which, (soft, hard))


class _Control:
    def __init__(self, reader: BinaryIO, out_fd: int) -> None:
        self.reader = reader
        self.out_fd = out_fd

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=repr) + "\n").encode("utf-8")
        while data:
            data = data[os.write(self.out_fd, data) :]

    def call(self, op: str, **arguments: Any) -> Any:
        self.send({"op": op, **arguments})
        line = self.reader.readline()
        if not line:
            raise RuntimeError(f"{op}(): the parent closed the channel")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error") or f"{op}() failed")
        return reply.get("value")


def _run(code: str, control: _Control) -> dict[str, Any]:
    def fork(prompt: str) -> str:
        """Start a child agent on ``prompt``; returns a handle for ``wait``."""
        return str(control.call("fork", prompt=str(prompt)))

    def wait(handle: str) -> str:
        """Wait for the child agent behind ``handle`` and return its answer."""
        return str(control.call("wait", handle=str(handle)))

    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "fork": fork,
        "wait": wait,
    }
    try:
        tree = ast.parse(code, filename="<python tool>", mode="exec")
        last = None
        tail = tree.body[-1] if tree.body else None
        if isinstance(tail, ast.Expr):
            tree.body.pop()
            last = ast.Expression(tail.value)
        exec(compile(tree, "<python tool>", "exec"), namespace)
        value = eval(compile(last, "<python tool>", "eval"), namespace) if last else None
    except BaseException as exc:
        if isinstance(exc, SystemExit) and exc.code in (None, 0):
            return {"op": "done", "ok": True, "result": None}
        frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
        user = [f for f in frames if "sandbox_child.py" not in f]
        return {
            "op": "done",
            "ok": False,
            "error_type": type(exc).__name__,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": "".join(user)[-4000:],
        }
    return {"op": "done", "ok": True, "result": None if value is None else repr(value)[:10000]}


def main() -> int:
    config = json.loads(sys.argv[1])
    control_in = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    control = _Control(control_in, int(config["control_fd"]))
    code = json.loads(control_in.readline())["code"]
    workdir = os.path.realpath(config["workdir"])
    os.chdir(workdir)

    def on_cpu_limit(signum: int, frame: Any) -> None:
        raise CpuLimitExceeded(f"CPU time limit of {config['cpu_s']} s exceeded")

    signal.signal(signal.SIGXCPU, on_cpu_limit)
    roots = read_roots()
    confined = confine_files(workdir, roots)
    _set_limits(config)
    sys.addaudithook(_policy(workdir, roots))
    outcome = _run(code, control)
    outcome["isolation"] = ["landlock"] if confined else []
    sys.stdout.flush()
    sys.stderr.flush()
    control.send(outcome)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
