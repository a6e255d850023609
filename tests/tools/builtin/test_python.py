"""The python tool's sandbox: each attack is stopped with a clear error and the parent is unharmed."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kforge.tools import AgentSpawner, ToolContext, ToolResult, ToolServices
from kforge.tools.builtin.python import PythonTool
from kforge.tools.builtin.sandbox import SandboxLimits

LIMITS = SandboxLimits(cpu_s=2, wall_s=20, memory_mb=256, file_size_mb=1)


@pytest.fixture
def python() -> PythonTool:
    return PythonTool(LIMITS)


async def run(tool: PythonTool, code: str, agents: AgentSpawner | None = None) -> ToolResult:
    return await tool.execute({"code": code}, ToolContext(services=ToolServices(agents=agents)))


async def assert_still_works(tool: PythonTool) -> None:
    result = await run(tool, "sum(range(10))")
    assert not result.is_error and result.text == "45"


async def test_prints_and_last_expression(python: PythonTool) -> None:
    result = await run(python, "print('hello')\nx = 6 * 7\nx")
    assert not result.is_error
    assert result.text == "hello\n42"
    assert result.structured_content is not None
    assert result.structured_content["stdout"] == "hello\n"


async def test_exception_reports_traceback(python: PythonTool) -> None:
    result = await run(python, "def f():\n    return 1 / 0\nf()")
    assert result.is_error and result.error_kind == "exception"
    assert "ZeroDivisionError: division by zero" in result.text
    assert "line 2, in f" in result.text


async def test_infinite_loop_is_stopped_by_the_cpu_limit(python: PythonTool) -> None:
    result = await run(python, "while True:\n    pass")
    assert result.is_error and result.error_kind == "cpu_limit"
    assert "CPU time limit of 2 s" in result.text
    await assert_still_works(python)


async def test_sleeping_forever_is_stopped_by_the_wall_time_limit() -> None:
    tool = PythonTool(SandboxLimits(cpu_s=5, wall_s=1))
    result = await run(tool, "import time\ntime.sleep(600)")
    assert result.is_error and result.error_kind == "wall_time"
    assert "wall-time limit of 1 s" in result.text


async def test_memory_bomb_is_stopped(python: PythonTool) -> None:
    result = await run(python, "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 2**20))")
    assert result.is_error and result.error_kind == "memory_limit"
    assert "ran out of memory (limit 256 MB)" in result.text
    await assert_still_works(python)


async def test_fork_bomb_is_stopped(python: PythonTool) -> None:
    result = await run(python, "import os\nwhile True:\n    os.fork()")
    assert result.is_error and result.error_kind == "forbidden"
    assert "creating processes is not allowed" in result.text
    result = await run(python, "import subprocess\nsubprocess.run(['true'])")
    assert result.is_error and "running programs is not allowed" in result.text
    await assert_still_works(python)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            accepted.append(server.accept()[0])
        except OSError:
            return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()
    assert accepted == [], "the sandboxed code reached the parent's socket"


async def test_network_access_is_refused(python: PythonTool, listener: int) -> None:
    code = f"import socket\ns = socket.socket()\ns.connect(('127.0.0.1', {listener}))"
    result = await run(python, code)
    assert result.is_error and result.error_kind == "forbidden"
    assert "opening network sockets is not allowed" in result.text
    result = await run(
        python, "import urllib.request\nurllib.request.urlopen('http://example.com')"
    )
    assert result.is_error


async def test_parent_secrets_are_not_visible(
    python: PythonTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("KFORGE_TEST_SECRET", secret)
    result = await run(
        python, "import os\nprint(sorted(os.environ))\nos.environ.get('KFORGE_TEST_SECRET')"
    )
    assert not result.is_error and secret not in result.text
    assert "KFORGE_TEST_SECRET" not in result.text
    result = await run(python, "import os\nopen(f'/proc/{os.getppid()}/environ').read()")
    assert result.is_error and secret not in result.text
    assert "reading other processes' information is not allowed" in result.text
    assert os.environ["KFORGE_TEST_SECRET"] == secret


async def test_writing_outside_the_working_directory_is_refused(python: PythonTool) -> None:
    target = Path("/tmp") / f"kforge-escape-{uuid.uuid4().hex}.txt"
    result = await run(python, f"open({str(target)!r}, 'w').write('x')")
    assert result.is_error and result.error_kind == "forbidden"
    assert "writing outside the working directory" in result.text
    assert not target.exists()
    result = await run(python, "import os\nos.symlink('/tmp', 'out')\nopen('out/escape', 'w')")
    assert result.is_error and "writing outside the working directory" in result.text
    result = await run(python, "open('notes.txt', 'w').write('ok')\nopen('notes.txt').read()")
    assert not result.is_error and result.text == "'ok'"
    assert result.structured_content is not None
    assert result.structured_content["files"] == ["notes.txt"]


async def test_large_files_are_refused(python: PythonTool) -> None:
    result = await run(python, "open('big.bin', 'wb').write(b'x' * (2 * 2**20))")
    assert result.is_error and result.error_kind == "file_size_limit"


async def test_ctypes_cannot_bypass_the_policy(python: PythonTool) -> None:
    result = await run(python, "import ctypes\nctypes.CDLL(None).fork()")
    assert result.is_error and "ctypes is not allowed" in result.text


async def test_fork_and_wait_without_an_agents_service_is_a_clear_error(python: PythonTool) -> None:
    result = await run(python, "fork('look into it')")
    assert result.is_error
    assert "fork() is not available: this run offers no child agents" in result.text


class FakeAgents:
    """Stands in for the runtime: answers each forked prompt in upper case."""

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}

    async def fork(self, prompt: str) -> str:
        handle = f"h{len(self.prompts)}"
        self.prompts[handle] = prompt
        return handle

    async def wait(self, handle: str) -> str:
        if handle not in self.prompts:
            raise KeyError(f"no child agent with handle {handle!r}")
        return self.prompts[handle].upper()


async def test_fork_and_wait_reach_the_agents_service(python: PythonTool) -> None:
    agents = FakeAgents()
    code = "handles = [fork('option a'), fork('option b')]\n[wait(h) for h in handles]"
    result = await run(python, code, agents=agents)
    assert not result.is_error, result.text
    assert result.text == "['OPTION A', 'OPTION B']"
    assert agents.prompts == {"h0": "option a", "h1": "option b"}
    result = await run(python, "wait('nope')", agents=agents)
    assert result.is_error and "no child agent with handle 'nope'" in result.text


def test_python_tool_needs_approval_by_default() -> None:
    tool = PythonTool()
    assert tool.needs_approval() and tool.annotations.is_destructive


def sandbox_dirs() -> set[str]:
    import tempfile

    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("kforge-python-")}


async def test_cancelled_run_kills_the_process_and_removes_its_directory() -> None:
    from kforge.tools import run_tool

    before = sandbox_dirs()
    tool = PythonTool(SandboxLimits(cpu_s=30, wall_s=60))
    result = await run_tool(tool, {"code": "import time\ntime.sleep(60)"}, timeout_s=1.0)
    assert result.is_error and result.error_kind == "timeout"
    assert sandbox_dirs() <= before  # removed before the timeout was reported
    await assert_still_works(tool)
