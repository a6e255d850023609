"""Explain a run from its frames alone: a readable timeline of phases, decisions, tools,
interactions and limits, plus a short tally."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from kforge import frames as fr
from kforge import jsoncodec
from kforge.frames import Frame

__all__ = ["describe_frame", "explain_run"]


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else jsoncodec.dumps(value, default=str, spaced=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v, 40)}" for k, v in arguments.items())


def _data(payload: dict[str, Any]) -> str:
    """A data event's payload; recorded search hits as their count and files, not raw JSON."""
    hits = payload.get("hits")
    if isinstance(hits, list) and all(isinstance(h, dict) for h in hits):
        counts: dict[str, int] = {}
        for h in hits:
            name = str((h.get("chunk") or {}).get("file", "?"))
            counts[name] = counts.get(name, 0) + 1
        files = [f"{name} ({n})" if n > 1 else name for name, n in counts.items()]
        query = payload.get("query")
        about = f" for {_short(query, 60)!r}" if isinstance(query, str) and query else ""
        return f"{len(hits)} hit{'s' if len(hits) != 1 else ''}{about}" + (
            f": {_short(', '.join(files), 80)}" if files else ""
        )
    return _short(payload, 90)


def describe_frame(frame: Frame) -> tuple[str, str]:
    """A (category, description) pair for one frame."""
    match frame:
        case fr.StatusChanged():
            why = f" ({_short(frame.reason, 80)})" if frame.reason else ""
            return "status", f"{frame.from_status or '-'} → {frame.to_status}{why}"
        case fr.PhaseChanged():
            if frame.from_phase is None:
                return "phase", f"start in {frame.to_phase}"
            arrow = f"{frame.from_phase} → {frame.to_phase} (visit {frame.visit})"
            if frame.is_backward:
                detail = f" — {frame.detail}" if frame.detail else ""
                return "phase", f"BACK {arrow} because {frame.reason}{detail}"
            return "phase", f"{arrow} on {frame.reason}"
        case fr.PhaseCheckpoint():
            wait = "waits for approval" if frame.requires_approval else "does not wait"
            shown = _checkpoint_summary(frame.payload) if not frame.requires_approval else ""
            return (
                "checkpoint",
                f"after {frame.phase} [{frame.kind.value}, {wait}]: {frame.message}{shown}",
            )
        case fr.InteractionRequested():
            opts = f" [{'/'.join(frame.options)}]" if frame.options else ""
            return "ask", f"{frame.kind}: {_short(frame.prompt)}{opts}"
        case fr.InteractionAnswered():
            return "answer", _short(frame.answer)
        case fr.ModelCall():
            resp = frame.response
            usage = resp.get("usage", {})
            if resp.get("tool_calls"):
                said = "calls " + ", ".join(c["name"] for c in resp["tool_calls"])
            elif resp.get("parsed") is not None:
                said = _short(resp["parsed"], 80)
            else:
                said = _short(resp.get("text", ""), 80)
            purpose = f" ({frame.purpose})" if frame.purpose else ""
            tokens = f"{usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)} tok"
            return "model", f"{frame.model}{purpose} {tokens}: {said}"
        case fr.UsageFrame():
            return "usage", (
                f"{frame.input_tokens}+{frame.output_tokens} tokens "
                f"(run total {frame.run_input_tokens}+{frame.run_output_tokens})"
            )
        case fr.Plan():
            return "plan", f"[{frame.iteration}/{frame.max_iterations}] {_short(frame.reasoning)}"
        case fr.ToolCallFrame():
            why = f" — {_short(frame.reasoning, 60)}" if frame.reasoning else ""
            return "tool", f"call {frame.tool_name}({_args(frame.arguments)}){why}"
        case fr.ToolResultFrame():
            cached = " (cached)" if frame.cached else ""
            state = "ok" if frame.success else "FAILED"
            return "result", (
                f"{frame.tool_name} {state} in {frame.execution_time_ms:.1f} ms{cached}: "
                f"{_short(frame.summary)}"
            )
        case fr.Observation():
            met = "goal met" if frame.goal_achieved else "goal not met"
            return "observe", f"{met}: {_short(frame.content)}"
        case fr.Reflection():
            again = " (repeated)" if frame.repeated else ""
            return (
                "reflect",
                f"{frame.error_type}{again}: {_short(frame.analysis, 60)} → fix: {_short(frame.suggested_fix, 60)}",
            )
        case fr.AgentResponse():
            return "respond", _short(frame.response_text, 120)
        case fr.AgentControl():
            return "control", f"{frame.action.value} continue={frame.should_continue}"
        case fr.AgentThinking():
            return "think", _short(frame.message, 120)
        case fr.AgentSpeaking():
            return "say", _short(frame.text, 120)
        case fr.AgentStatus():
            tool = f" {frame.current_tool}" if frame.current_tool else ""
            return "loop", f"{frame.phase} step {frame.step_number}/{frame.max_steps}{tool}"
        case fr.Compaction():
            return "compact", f"context {frame.tokens_before} → {frame.tokens_after} tokens"
        case fr.DataEvent():
            return "data", f"{frame.name}: {_data(frame.payload)}"
        case fr.Intervention():
            return "intervene", f"{frame.action} {_short(frame.content, 80)}"
        case fr.LimitReached():
            return (
                "LIMIT",
                f"{frame.limit} reached ({frame.value:g} of {frame.maximum:g}); partial result kept",
            )
        case fr.ErrorFrame():
            return "ERROR", f"{frame.error_type}: {_short(frame.message, 160)}"
        case fr.Complete():
            partial = " (partial)" if frame.partial else ""
            return "complete", f"{_short(frame.summary, 120)}{partial}"
    return frame.type, ""


def explain_run(
    frames: Sequence[Frame], *, header: Iterable[str] = (), verbose: bool = False
) -> str:
    """The run as a timeline. Usage frames are folded into the tally unless ``verbose``."""
    lines = list(header)
    start = frames[0].created_at if frames else None
    for frame in frames:
        if not verbose and frame.type == "usage":
            continue
        category, text = describe_frame(frame)
        offset = (frame.created_at - start).total_seconds() if start else 0.0
        lines.append(f"  #{frame.seq:<4} +{offset:8.3f}s  {category:<10} {text}")
        if verbose and isinstance(frame, fr.StatusChanged) and len(frame.reason) > 80:
            lines.append(f"{'':25}{' '.join(frame.reason.split())}")  # shortened above
    counts = Counter(f.type for f in frames)
    phases = [f.to_phase for f in frames if isinstance(f, fr.PhaseChanged)]
    tokens_in = sum(f.input_tokens for f in frames if isinstance(f, fr.UsageFrame))
    tokens_out = sum(f.output_tokens for f in frames if isinstance(f, fr.UsageFrame))
    lines.append("")
    lines.append(
        "  phases: "
        + (" → ".join(phases) if phases else "(none)")
        + f" | backward: {sum(1 for f in frames if isinstance(f, fr.PhaseChanged) and f.is_backward)}"
    )
    tools = Counter(f.tool_name for f in frames if isinstance(f, fr.ToolCallFrame))
    failed_calls = sum(1 for f in frames if isinstance(f, fr.ToolResultFrame) and not f.success)
    lines.append(
        f"  model calls: {counts['model.call']} ({tokens_in}+{tokens_out} tokens) | tool calls: "
        + (", ".join(f"{n} x{c}" for n, c in tools.items()) if tools else "0")
        + f" | questions: {counts['interaction.requested']} | errors: "
        f"{counts['error'] + failed_calls} | limits: {counts['limit.reached']}"
    )
    checked = [f for f in frames if isinstance(f, fr.DataEvent) and f.name == "answer.checked"]
    if checked:
        paths = Counter(str(f.payload.get("path", "?")) for f in checked)
        cited = sum(int(f.payload.get("citations", 0) or 0) for f in checked)
        dropped = sum(len(f.payload.get("dropped", []) or []) for f in checked)
        lines.append(
            f"  answers: {len(checked)} ("
            + ", ".join(f"{p} x{c}" for p, c in paths.items())
            + f") | citations in them: {cited} | unsupported sentences dropped: {dropped}"
        )
    lines += _work_tally(frames)
    return "\n".join(lines)


def _checkpoint_summary(payload: dict[str, Any]) -> str:
    """What an informational checkpoint shows, e.g. an objective and how its check went."""
    parts = [f"{k} {_short(payload[k], 60)}" for k in ("objective", "status") if payload.get(k)]
    return f" — {'; '.join(parts)}" if parts else ""


def _work_tally(frames: Sequence[Frame]) -> list[str]:
    """Lines for what Understand and Build runs did: objectives and checks, files and checks."""
    data = [f for f in frames if isinstance(f, fr.DataEvent)]
    lines = []
    graded = [f for f in data if f.name == "check.graded"]
    objectives = {str(f.payload.get("id")) for f in data if f.name == "objective.added"}
    if objectives or graded:
        understood = sum(1 for f in graded if f.payload.get("understood"))
        lines.append(
            f"  learning: {len(objectives)} objectives | checks understood: {understood} of "
            f"{len(graded)} | calibration questions: "
            f"{sum(1 for f in data if f.name == 'calibration.question')}"
        )
    written = [f for f in data if f.name == "build.file.written"]
    checks = [f for f in data if f.name in ("check.passed", "check.failed")]
    if written or checks:
        passed = sum(1 for f in checks if f.name == "check.passed")
        origins = Counter(str(f.payload.get("origin", "?")) for f in checks)
        lines.append(
            f"  build: {len({f.payload.get('path') for f in written})} files | checks passed: "
            f"{passed} of {len(checks)} ("
            + ", ".join(f"{o} x{c}" for o, c in origins.items())
            + f") | reflections: {sum(1 for f in frames if isinstance(f, fr.Reflection))}"
        )
    return lines
