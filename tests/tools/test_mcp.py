"""MCP round trips: kforge as a client of real MCP server processes, and the SDK's client
calling ``kforge mcp``."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.frames import ToolResultFrame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import ToolCall
from kforge.tools import ApprovalPolicy, ToolRegistry, execute_call
from kforge.tools.mcp_client import MCPStdioServer, MCPToolset

DEMO = Path(__file__).with_name("mcp_demo_server.py")


async def test_kforge_uses_tools_of_a_stdio_mcp_server() -> None:
    async with MCPToolset(MCPStdioServer(sys.executable, (str(DEMO),)), prefix="demo_") as toolset:
        tools = {t.name: t for t in toolset.tools}
        assert set(tools) == {"demo_add", "demo_erase", "demo_explode"}
        add, erase, explode = tools["demo_add"], tools["demo_erase"], tools["demo_explode"]
        assert add.annotations.read_only_hint and add.annotations.is_safe_to_repeat
        assert not add.annotations.open_world_hint
        assert erase.annotations.is_destructive and erase.needs_approval()
        assert erase.annotations.title == "Erase a note"
        assert add.input_schema["required"] == ["a", "b"]
        assert add.check_arguments({"a": "one", "b": 2})

        result = await add.execute({"a": 2, "b": 40})
        assert not result.is_error and result.text == "42"
        assert result.structured_content == {"result": 42}
        failed = await explode.execute({"reason": "testing"})
        assert failed.is_error and "exploded because testing" in failed.text

        registry = ToolRegistry(toolset.tools)
        ctx = RunContext(
            run_id="r", agent_type="t", model=ScriptedModel(), limits=RunLimits(),
            next_seq=1, flush=lambda frames: None,
        )  # fmt: skip
        out = await execute_call(
            ctx,
            registry,
            ToolCall("demo_erase", {"note": "n1"}),
            policy=ApprovalPolicy(auto_approve=True),
        )
        assert out.text == "erased n1"
        assert isinstance(ctx.take_pending()[-1], ToolResultFrame)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(DEMO), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    listening = threading.Event()

    def follow_log() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:  # read to the end, so the server never blocks on a full pipe
            if "Uvicorn running on" in line:
                listening.set()
        listening.set()  # exited: the check below tells which

    threading.Thread(target=follow_log, daemon=True).start()
    try:
        if not listening.wait(30) or proc.poll() is not None:
            pytest.fail("the demo MCP server did not start listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_kforge_uses_tools_of_a_streamable_http_mcp_server(http_server: str) -> None:
    async with MCPToolset(http_server) as toolset:
        add = next(t for t in toolset.tools if t.name == "add")
        assert (await add.execute({"a": 1, "b": 2})).text == "3"


async def test_unreachable_mcp_server_is_a_clear_error() -> None:
    from kforge.errors import ToolError

    with pytest.raises(ToolError, match="could not connect to MCP server"):
        await MCPToolset(f"http://127.0.0.1:{free_port()}/mcp").open()


async def test_sdk_client_calls_kforge_mcp(tmp_path: Path) -> None:
    import mcp

    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "kforge", "--db", str(tmp_path / "k.db"), "mcp", "--allow-private-network"],
    )
    async with mcp.Client(params) as client:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert {"fetch_page", "search_web_for_info", "python", "extract_screenshot_text"} <= set(
            tools
        )
        assert tools["python"].annotations is not None
        assert tools["python"].annotations.destructive_hint is True
        assert tools["fetch_page"].annotations is not None
        assert tools["fetch_page"].annotations.read_only_hint is True
        assert "run_agent" in tools
        assert set(tools["run_agent"].input_schema["properties"]["agent"]["enum"]) == {
            "router",
            "research",
            "react",
        }

        result = await client.call_tool("python", {"code": "print('hi')\n6 * 7"})
        assert not result.is_error
        assert result.content[0].text == "hi\n42"  # type: ignore[union-attr]

        invalid = await client.call_tool("python", {"code": 42})
        assert invalid.is_error
        assert "argument 'code' must be a string (got 42)" in invalid.content[0].text  # type: ignore[union-attr]

        with pytest.raises(mcp.MCPError, match="unknown tool 'nope'"):
            await client.call_tool("nope", {})


async def test_run_agent_tool_is_served_when_given() -> None:
    import mcp

    from kforge.mcp.server import build_mcp_server, run_agent_tool

    async def runner(agent: str, prompt: str) -> str:
        await asyncio.sleep(0)
        return f"{agent} answered: {prompt}"

    server = build_mcp_server([], run_agent=run_agent_tool(runner, ["research", "react"]))
    async with mcp.Client(server) as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.name == "run_agent"
        assert tool.input_schema["properties"]["agent"]["enum"] == ["research", "react"]
        result = await client.call_tool("run_agent", {"prompt": "why?", "agent": "research"})
        assert result.content[0].text == "research answered: why?"  # type: ignore[union-attr]
