"""OpenTelemetry: the span tree of real runs (in memory and over OTLP/HTTP to a stand-in
collector on 127.0.0.1), GenAI attributes that match the frames, metrics, and nothing imported
or measured when telemetry is off."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.errors import ConfigurationError
from kforge.frames import ModelCall, ToolCallFrame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ToolCall
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus
from kforge.telemetry import Telemetry
from kforge.tools import execute_tool, tool
from tests.agents.test_research import DOCS, Script, make_runtime, run_to_end


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def exported() -> tuple[Telemetry, InMemorySpanExporter, InMemoryMetricReader]:
    spans, metrics = InMemorySpanExporter(), InMemoryMetricReader()
    return Telemetry(exporter=spans, metric_readers=[metrics]), spans, metrics


def _parent(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> ReadableSpan | None:
    return by_id.get(span.parent.span_id) if span.parent is not None else None


def _by_id(spans: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {s.context.span_id: s for s in spans}


async def test_a_research_run_is_a_tree_of_stretches_steps_and_model_calls(
    corpus_dir: Path, exported: tuple[Telemetry, InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    telemetry, exporter, metrics = exported
    rt = make_runtime(corpus_dir, Script())
    rt.telemetry = telemetry  # the runtime reads it at every launch
    run = await run_to_end(rt, {"question": "How do agents work?"})
    assert run.status == RunStatus.COMPLETED, run.error
    spans = exporter.get_finished_spans()
    by_id = _by_id(spans)

    stretches = [s for s in spans if s.name == "invoke_agent research"]
    assert len(stretches) == 2  # started, then resumed after the checkpoint's answer
    assert all(s.attributes["kforge.run.id"] == run.id for s in stretches)
    assert [s.attributes["kforge.run.status"] for s in stretches] == [
        "awaiting_user",
        "completed",
    ]
    steps = [s for s in spans if s.name.startswith("step ")]
    assert steps and all(_parent(s, by_id) in stretches for s in steps)

    calls = [f for f in rt.frames(run.id) if isinstance(f, ModelCall)]
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == len(calls) > 5
    by_seq = {c.attributes["kforge.seq"]: c for c in chats}
    for frame in calls:
        span = by_seq[frame.seq]
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.request.model"] == frame.model
        assert (
            span.attributes["gen_ai.usage.input_tokens"] == frame.response["usage"]["input_tokens"]
        )
        assert span.attributes["kforge.purpose"] == frame.purpose
        step = _parent(span, by_id)
        assert step is not None and step.name.startswith("step ")
        assert step.start_time <= span.end_time <= step.end_time + 1_000_000

    data = metrics.get_metrics_data()
    assert data is not None
    points = {
        m.name: m.data.data_points
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert sum(p.count for p in points["kforge.step.duration"]) == len(steps)
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in points["gen_ai.client.token.usage"]}
    assert tokens["input"] == sum(c.response["usage"]["input_tokens"] for c in calls)
    assert "kforge.queue.depth" in points


@tool(read_only=True)
def double(x: int) -> int:
    """Double a number.

    Args:
        x: Any integer.
    """
    return 2 * x


@tool(read_only=True)
def explode(x: int) -> int:
    """Always fails.

    Args:
        x: Any integer.
    """
    raise RuntimeError(f"no result for {x}")


class ToolLoop:
    """Each step: one model call, then the tools it asked for; done when it answers."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.messages = [Message.user(str(args["goal"]))]

    async def step(self, ctx: RunContext) -> StepOutcome:
        response = await ctx.complete(self.messages, tools=(double.to_spec(), explode.to_spec()))
        self.messages.append(Message.assistant(response.text, response.tool_calls))
        if not response.tool_calls:
            return StepOutcome(True, {"answer": response.text}, response.text)
        for call in response.tool_calls:
            chosen = double if call.name == "double" else explode
            result = await execute_tool(ctx, chosen, call.arguments)
            self.messages.append(Message.tool(result.text, call.id, call.name))
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"messages": [m.to_dict() for m in self.messages]}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.messages = [Message.from_dict(m) for m in state["messages"]]

    def partial_result(self) -> dict[str, Any]:
        return {}


async def test_tool_calls_are_spans_of_their_step_and_failures_are_errors(
    exported: tuple[Telemetry, InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    telemetry, exporter, _ = exported
    registry = AgentRegistry()
    registry.register("tool_loop", ToolLoop)
    model = ScriptedModel(
        [ToolCall("double", {"x": 4}, "c1"), ToolCall("explode", {"x": 1}, "c2"), "It is 8."]
    )
    rt = Runtime(MemoryStore(), model=model, registry=registry, telemetry=telemetry)
    run = await rt.run("tool_loop", {"goal": "Double 4."})
    assert run.status == RunStatus.COMPLETED, run.error
    spans = exporter.get_finished_spans()
    by_id = _by_id(spans)
    tools = {
        s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool")
    }
    assert set(tools) == {"double", "explode"}
    frames = {f.tool_name: f for f in rt.frames(run.id) if isinstance(f, ToolCallFrame)}
    for name, span in tools.items():
        assert span.attributes["kforge.seq"] == frames[name].seq
        assert span.attributes["gen_ai.tool.call.id"] == frames[name].call_id
        step = _parent(span, by_id)
        assert step is not None and step.name.startswith("step ")
    assert tools["double"].status.status_code is StatusCode.UNSET
    assert tools["explode"].status.status_code is StatusCode.ERROR
    assert "no result for 1" in (tools["explode"].status.description or "")


def test_an_unknown_exporter_is_refused_with_the_choices() -> None:
    assert Telemetry.from_env({}) is None
    assert Telemetry.from_env({"KFORGE_TELEMETRY": "off"}) is None
    with pytest.raises(ConfigurationError, match="console, otlp or off"):
        Telemetry.from_env({"KFORGE_TELEMETRY": "jaeger"})


def test_telemetry_off_imports_nothing_of_opentelemetry() -> None:
    code = (
        "import asyncio, sys\n"
        "from kforge.engine.agent import StepOutcome\n"
        "from kforge.llm.testing.scripted import ScriptedModel\n"
        "from kforge.llm.types import Message\n"
        "from kforge.runtime import AgentRegistry, Runtime\n"
        "from kforge.store import MemoryStore\n"
        "class Once:\n"
        "    def __init__(self, args): pass\n"
        "    async def step(self, ctx):\n"
        "        reply = await ctx.complete([Message.user('hi')])\n"
        "        return StepOutcome(True, {'answer': reply.text}, reply.text)\n"
        "    def get_state(self): return {}\n"
        "    def restore_state(self, state): pass\n"
        "    def partial_result(self): return {}\n"
        "r = AgentRegistry(); r.register('once', Once)\n"
        "rt = Runtime(MemoryStore(), model=ScriptedModel(['done']), registry=r)\n"
        "run = asyncio.run(rt.run('once', {}))\n"
        "assert run.status.value == 'completed', run\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KFORGE_TELEMETRY"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps the protobuf bodies posted to /v1/traces."""

    received: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/traces":
            self.server.received.append(body)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[bytes]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def test_kforge_research_exports_its_trace_over_otlp(
    tmp_path: Path, corpus_dir: Path, collector: tuple[str, list[bytes]]
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    endpoint, received = collector
    env = {
        **os.environ,
        "KFORGE_TELEMETRY": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_METRIC_EXPORT_INTERVAL": "600000",
    }
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kforge",
            "--db",
            str(tmp_path / "runs.db"),
            "--model",
            "test",
            "research",
            "How do agents keep a human in the loop?",
            "--docs",
            str(corpus_dir),
            "--yes",
            "-o",
            str(tmp_path / "report.md"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    spans = []
    for body in received:
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                spans.extend(scope.spans)
    assert spans, "the collector received no spans"
    by_id = {s.span_id: s for s in spans}
    names = [s.name for s in spans]
    assert "invoke_agent research" in names
    assert any(n.startswith("chat test:") for n in names)
    for span in spans:
        if span.name.startswith(("chat ", "step ")):
            assert span.parent_span_id in by_id, f"{span.name} lost its parent"
    roots = [s for s in spans if not s.parent_span_id]
    assert roots and {s.name for s in roots} == {"invoke_agent research"}
