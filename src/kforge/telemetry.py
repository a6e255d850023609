"""OpenTelemetry traces and metrics of runs, built from the frames they commit.

A stretch of a run (start or resume until it pauses or ends) is an ``invoke_agent`` span; each
step is a child span; each model call and tool call is a child of its step, named and described
with the OpenTelemetry GenAI semantic conventions (``chat MODEL``, ``execute_tool TOOL``,
``gen_ai.usage.input_tokens``, ...), with the run id and the frame's seq as attributes. A child
run started in this process (a subtask, a subagent) is traced under its parent's current step.
Model and tool spans take their times from the frames (a model call ends when its frame is
emitted and lasts ``duration_ms``; a tool call runs from its call frame to its result frame), so
the trace says what the record says.

Metrics: step duration, model-call duration, tokens by type, and the queue depth (stretches
executing or waiting to execute in this process).

Telemetry is off unless a ``Telemetry`` is given to the ``Runtime`` (or ``KFORGE_TELEMETRY`` is
``console`` or ``otlp``); when it is off nothing here is imported and a step pays one ``None``
check. The SDK is the ``otel`` extra: ``pip install 'knowledge-forge[otel]'``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kforge.errors import ConfigurationError
from kforge.extras import require_extra
from kforge.frames import ErrorFrame, Frame, ModelCall, ToolCallFrame, ToolResultFrame

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["ENV_VAR", "Telemetry"]

ENV_VAR = "KFORGE_TELEMETRY"
"""``console`` prints spans and metrics on stderr; ``otlp`` exports them over OTLP/HTTP to
``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318``); unset or ``off``: none."""

_SCOPE = "kforge"


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def _provider(model: str) -> str:
    return model.split(":", 1)[0] if ":" in model else "unknown"


@dataclass
class _Stretch:
    """What is open for one run executing here: its span, its step's span, its tool calls."""

    span: Span
    agent: str
    step: Span | None = None
    step_no: int = 0
    step_started: float = 0.0
    tools: dict[str, tuple[ToolCallFrame, Span]] = field(default_factory=dict)


class Telemetry:
    """Spans and metrics for the runs of one ``Runtime`` (``Runtime(telemetry=...)``).

    ``tracer_provider`` / ``meter_provider``: the application's own OpenTelemetry providers
    (for example the global ones); by default the ``exporter`` given (or
    :meth:`from_env`'s) gets new SDK providers of its own, which :meth:`shutdown` (or the
    process's exit) flushes. ``batch`` exports spans from a background thread instead of as
    each one ends.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        exporter: SpanExporter | None = None,
        metric_readers: Sequence[Any] = (),
        service_name: str = "kforge",
        batch: bool = False,
    ) -> None:
        require_extra("otel", "OpenTelemetry tracing", modules=("opentelemetry.sdk",))
        from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        from kforge import __version__

        resource = Resource.create({"service.name": service_name})
        self._owned: list[Any] = []
        if tracer_provider is None:
            sdk_tracer = SdkTracerProvider(resource=resource)
            if exporter is not None:
                # batched in a background thread for real exporters; the SDK flushes at exit
                processor = BatchSpanProcessor if batch else SimpleSpanProcessor
                sdk_tracer.add_span_processor(processor(exporter))
            self._owned.append(sdk_tracer)
            tracer_provider = sdk_tracer
        if meter_provider is None:
            sdk_meter = SdkMeterProvider(resource=resource, metric_readers=list(metric_readers))
            self._owned.append(sdk_meter)
            meter_provider = sdk_meter
        self._queues: list[Callable[[], int]] = []
        self._open: dict[str, _Stretch] = {}
        self._lock = threading.Lock()
        self.tracer = tracer_provider.get_tracer(_SCOPE, __version__)
        meter = meter_provider.get_meter(_SCOPE, __version__)
        self.step_duration = meter.create_histogram(
            "kforge.step.duration", unit="s", description="Time of one step of a run"
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Time of one model call"
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens of one model call"
        )
        from opentelemetry.metrics import CallbackOptions, Observation

        def depth(options: CallbackOptions) -> list[Observation]:
            return [Observation(sum(source() for source in self._queues))]

        meter.create_observable_gauge(
            "kforge.queue.depth",
            callbacks=[depth],
            unit="{run}",
            description="Stretches of runs executing or waiting to execute here",
        )

    # -- configuration ----------------------------------------------------------------------

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Telemetry | None:
        """The telemetry ``KFORGE_TELEMETRY`` asks for (``console``, ``otlp``), else None."""
        value = (environ if environ is not None else os.environ).get(ENV_VAR, "").strip().lower()
        if value in ("", "off", "none", "0"):
            return None
        if value == "console":
            require_extra("otel", "KFORGE_TELEMETRY=console", modules=("opentelemetry.sdk",))
            from opentelemetry.sdk.metrics.export import (
                ConsoleMetricExporter,
                PeriodicExportingMetricReader,
            )
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            return cls(
                exporter=ConsoleSpanExporter(out=sys.stderr),
                batch=True,
                metric_readers=[
                    PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr))
                ],
            )
        if value == "otlp":
            require_extra("otel", "KFORGE_TELEMETRY=otlp")
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter,
            )
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            return cls(
                exporter=OTLPSpanExporter(),
                batch=True,
                metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())],
            )
        raise ConfigurationError(
            f"{ENV_VAR}={value!r} is not a telemetry exporter; use console, otlp or off"
        )

    def watch_queue(self, depth: Callable[[], int]) -> None:
        """Count ``depth()`` (runs executing or queued somewhere) in ``kforge.queue.depth``."""
        self._queues.append(depth)

    def shutdown(self) -> None:
        """End what is still open and flush the providers this object made."""
        with self._lock:
            open_runs = list(self._open)
        for run_id in open_runs:
            self.stretch_ended(run_id, "interrupted")
        for provider in self._owned:
            provider.shutdown()
        self._owned = []

    # -- what the runner reports --------------------------------------------------------------

    def stretch_started(self, run_id: str, agent: str, parent_id: str | None) -> None:
        from opentelemetry import trace

        with self._lock:
            parent = self._open.get(parent_id) if parent_id else None
        context = None
        if parent is not None:
            context = trace.set_span_in_context(parent.step or parent.span)
        span = self.tracer.start_span(
            f"invoke_agent {agent}",
            context=context,
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "gen_ai.agent.id": run_id,
                "kforge.run.id": run_id,
                **({"kforge.run.parent_id": parent_id} if parent_id else {}),
            },
        )
        with self._lock:
            self._open[run_id] = _Stretch(span, agent)

    def step_started(self, run_id: str, step_no: int) -> None:
        from opentelemetry import trace

        stretch = self._open.get(run_id)
        if stretch is None:
            return
        self._end_step(stretch, None)
        stretch.step = self.tracer.start_span(
            f"step {step_no}",
            context=trace.set_span_in_context(stretch.span),
            attributes={"kforge.run.id": run_id, "kforge.step": step_no},
        )
        stretch.step_no = step_no
        stretch.step_started = time.monotonic()

    def committed(self, run_id: str, frames: Sequence[Frame], *, step_done: bool) -> None:
        """Frames a commit made durable; ``step_done`` when the commit ended the step."""
        stretch = self._open.get(run_id)
        if stretch is None:
            return
        for frame in frames:
            if isinstance(frame, ModelCall):
                self._model_span(stretch, run_id, frame)
            elif isinstance(frame, ToolCallFrame):
                self._tool_started(stretch, run_id, frame)
            elif isinstance(frame, ToolResultFrame):
                self._tool_ended(stretch, frame)
            elif isinstance(frame, ErrorFrame) and stretch.step is not None:
                self._failed(stretch.step, frame.error_type, frame.message)
        if step_done:
            self._end_step(stretch, None)

    def stretch_ended(self, run_id: str, status: str, error: BaseException | None = None) -> None:
        with self._lock:
            stretch = self._open.pop(run_id, None)
        if stretch is None:
            return
        for _call, span in stretch.tools.values():
            span.set_attribute("kforge.tool.outcome", "unknown")
            span.end()
        self._end_step(stretch, error)
        stretch.span.set_attribute("kforge.run.status", status)
        if error is not None:
            self._failed(stretch.span, type(error).__name__, str(error))
        elif status == "failed":
            self._failed(stretch.span, "RunFailed", "the run failed")
        stretch.span.end()

    # -- spans from frames --------------------------------------------------------------------

    def _child(self, stretch: _Stretch, name: str, start: int, attributes: dict[str, Any]) -> Span:
        from opentelemetry import trace

        parent = stretch.step or stretch.span
        return self.tracer.start_span(
            name,
            context=trace.set_span_in_context(parent),
            kind=trace.SpanKind.CLIENT,
            start_time=start,
            attributes=attributes,
        )

    def _model_span(self, stretch: _Stretch, run_id: str, frame: ModelCall) -> None:
        end = _ns(frame.created_at)
        start = end - int(frame.duration_ms * 1_000_000)
        response = frame.response
        usage = response.get("usage") or {}
        input_tokens = int(usage.get("input_tokens") or 0)
        output_tokens = int(usage.get("output_tokens") or 0)
        common = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(frame.model),
            "gen_ai.request.model": frame.model,
        }
        span = self._child(
            stretch,
            f"chat {frame.model}",
            start,
            {
                **common,
                "gen_ai.response.model": str(response.get("model") or frame.model),
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
                "gen_ai.response.finish_reasons": [str(response.get("finish_reason") or "")],
                "kforge.run.id": run_id,
                "kforge.seq": frame.seq,
                "kforge.purpose": frame.purpose,
            },
        )
        span.end(end_time=end)
        self.operation_duration.record(frame.duration_ms / 1000, common)
        self.token_usage.record(input_tokens, {**common, "gen_ai.token.type": "input"})
        self.token_usage.record(output_tokens, {**common, "gen_ai.token.type": "output"})

    def _tool_started(self, stretch: _Stretch, run_id: str, frame: ToolCallFrame) -> None:
        span = self._child(
            stretch,
            f"execute_tool {frame.tool_name}",
            _ns(frame.created_at),
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": frame.tool_name,
                "gen_ai.tool.call.id": frame.call_id,
                "kforge.run.id": run_id,
                "kforge.seq": frame.seq,
                "kforge.tool.read_only": frame.read_only,
            },
        )
        stretch.tools[frame.call_id] = (frame, span)

    def _tool_ended(self, stretch: _Stretch, frame: ToolResultFrame) -> None:
        opened = stretch.tools.pop(frame.call_id, None)
        if opened is None:
            return
        _call, span = opened
        span.set_attribute("kforge.result_seq", frame.seq)
        span.set_attribute("kforge.tool.cached", frame.cached)
        if not frame.success:
            self._failed(span, "ToolError", frame.error or frame.summary)
        span.end(end_time=_ns(frame.created_at))

    def _end_step(self, stretch: _Stretch, error: BaseException | None) -> None:
        if stretch.step is None:
            return
        if error is not None:
            self._failed(stretch.step, type(error).__name__, str(error))
        stretch.step.end()
        self.step_duration.record(
            time.monotonic() - stretch.step_started, {"gen_ai.agent.name": stretch.agent}
        )
        stretch.step = None

    @staticmethod
    def _failed(span: Span, kind: str, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, message[:500]))
