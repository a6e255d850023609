"""A run followed at the terminal: its frames printed as they come, its questions asked and
answered there, and its outcome reported with the exit code that says how it ended."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from kforge import jsoncodec
from kforge.agents.results import Report, read_result
from kforge.cli._common import (
    EXIT_ERROR,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_WAITING,
    command_hint,
    read_input_line,
)
from kforge.explain import describe_frame
from kforge.frames import Frame
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus

__all__ = [
    "QUIET_TYPES",
    "RunStatusLine",
    "ask_at_terminal",
    "drive_run",
    "parse_answer",
    "print_frame",
    "report_outcome",
    "report_path",
    "save_report",
]

QUIET_TYPES = frozenset({"usage", "status.changed", "model.call"})
"""Frames a run's progress leaves out unless asked to be verbose."""


class RunStatusLine:
    """On a terminal, a line under the timeline saying where a long run is: its phase, the
    model calls made, the time since it started; redrawn as frames arrive, cleared at the end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = time.monotonic()
        self.phase = ""
        self.model_calls = 0
        self.frames = 0
        self.shown = False

    @classmethod
    def for_terminal(cls, out: TextIO) -> RunStatusLine | None:
        isatty = getattr(out, "isatty", None)
        return cls(out) if isatty is not None and isatty() else None

    def update(self, frame: Frame) -> None:
        self.frames += 1
        if frame.type == "phase.changed":
            self.phase = str(getattr(frame, "to_phase", ""))
        elif frame.type == "model.call":
            self.model_calls += 1
        elapsed = time.monotonic() - self.started
        parts = [f"phase {self.phase}"] if self.phase else []
        parts += [f"{self.model_calls} model call(s)", f"{self.frames} frames", f"{elapsed:.0f}s"]
        self.out.write("\r\x1b[K  … " + " · ".join(parts))
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.shown = False


def print_frame(frame: Frame, out: TextIO, *, verbose: bool = False) -> None:
    if not verbose and frame.type in QUIET_TYPES:
        return
    category, text = describe_frame(frame)
    print(f"  [{frame.seq:>4}] {category:<10} {text}", file=out, flush=True)


def parse_answer(text: str) -> Any:
    """An answer typed by a person: JSON if it parses as an object, else the plain text."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return jsoncodec.loads(text)
        except jsoncodec.JSONDecodeError:
            pass
    return text


def ask_at_terminal(run: RunRecord, out: TextIO) -> Any:
    """Show the pending question on ``out`` and read the answer from stdin (None at EOF)."""
    from kforge.cli.pending import render_review

    pending = run.pending_interaction or {}
    payload = dict(pending.get("payload") or {})
    print(f"\n? {pending.get('prompt', 'The run is waiting for an answer.')}", file=out)
    for line in render_review(payload):
        print(line, file=out)
    options = pending.get("options") or []
    hint = f" [{'/'.join(options)}]" if options else ""
    if "modify" in options:
        keys = payload.get("modify_keys")
        allowed = f" with keys {', '.join(keys)}" if isinstance(keys, dict) and keys else ""
        hint += f' (modify: type {{"action": "modify", "modifications": {{...}}}}{allowed})'
    while True:
        print(f"answer{hint}: ", end="", file=out, flush=True)
        line = read_input_line(sys.stdin)
        if not line:
            return None
        if line.strip():
            return parse_answer(line)


async def drive_run(
    rt: Runtime,
    run_id: str,
    *,
    out: TextIO,
    auto_approve: bool = False,
    interactive: bool | None = None,
    verbose: bool = False,
    after_seq: int = 0,
    answers: Callable[[RunRecord], Any] | None = None,
) -> RunRecord:
    """Print the run's frames live; answer checkpoints (approve with ``auto_approve``, or at the
    terminal when interactive) until it ends or waits with nobody to answer. ``answers``, when
    given, is asked first: it returns the answer to the pending interaction, or None to leave
    it to the other ways."""
    interactive = sys.stdin.isatty() if interactive is None else interactive
    last = after_seq
    status = RunStatusLine.for_terminal(out)
    while True:
        async for frame in rt.subscribe(run_id, after_seq=last):
            last = frame.seq
            if status is not None:
                status.clear()
            print_frame(frame, out, verbose=verbose)
            if status is not None:
                status.update(frame)
        if status is not None:
            status.clear()
        # the stretch's own end: an error it could not record (another writer took the run
        # over, the store failed) is raised here rather than read past
        run = await rt.wait(run_id)
        if run.status != RunStatus.AWAITING_USER:
            return run
        pending = run.pending_interaction or {}
        options = pending.get("options") or []
        answer: Any = answers(run) if answers is not None else None
        if answer is not None:
            pass
        elif auto_approve and "approve" in options:
            print("  (approved automatically: --yes)", file=out, flush=True)
            answer = {"action": "approve"}
        elif interactive:
            answer = ask_at_terminal(run, out)
            if answer is None:
                return run
        else:
            return run
        try:
            await rt.resume(run_id, answer, durable=True)
        except Exception as exc:  # a bad answer: say so and ask again
            from kforge.errors import ForgeError, WriteConflictError

            if not isinstance(exc, ForgeError):
                raise
            if isinstance(exc, WriteConflictError):  # the run moved on: follow it from here
                exc = ForgeError("your answer was not applied: another process answered first")
            print(f"  ! {exc}", file=out, flush=True)


def report_path(agent_type: str, run_id: str, output: str | None = None) -> Path:
    """Where a run's report goes: ``output``, else ``reports/AGENT-RUNPREFIX.md``."""
    return Path(output) if output else Path("reports") / f"{agent_type}-{run_id[:8]}.md"


def save_report(run: RunRecord, output: str | None = None) -> Path | None:
    """Write the Markdown report in a run's (possibly partial) result; returns where."""
    result = read_result(run)
    report = result.text if isinstance(result, Report) else ""
    if not report.strip():
        return None
    path = report_path(run.agent_type, run.id, output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report, encoding="utf-8")
    return path


def report_outcome(
    run: RunRecord, args: argparse.Namespace | None = None, *, output: str | None = None
) -> int:
    """Tell the person how the run ended and what to do next (stderr), and where its report is
    (stdout); returns the exit code: 0 done, 1 failed, 3 waiting for a person, 4 paused."""
    ns = args if args is not None else argparse.Namespace()
    if run.status == RunStatus.AWAITING_USER:
        pending = run.pending_interaction or {}
        prompt = pending.get("prompt", "")
        options = list(pending.get("options") or [])
        reply = options[0] if options else "'YOUR ANSWER'"
        print(
            f"\nrun {run.id} is waiting: {prompt}\n"
            f"see the question with: {command_hint(ns, f'runs show {run.id}')}\n"
            f"answer with: {command_hint(ns, f'runs resume {run.id} --answer {reply}')}",
            file=sys.stderr,
        )
        return EXIT_WAITING
    saved = save_report(run, output)
    if run.status == RunStatus.PAUSED:
        why = f"\nkforge: {run.error}" if run.error else ""  # e.g. the model could not be reached
        print(
            f"{why}\nrun {run.id} paused ({run.pause_reason}); continue with: "
            f"{command_hint(ns, f'runs resume {run.id}')}",
            file=sys.stderr,
        )
        if saved:
            print(f"partial report written to {saved}")
        return EXIT_LIMIT
    print(f"\nrun {run.id} {run.status.value}", file=sys.stderr)
    if saved:
        print(f"report written to {saved}")
    if run.error:
        print(f"kforge: error: {_user_message(run.error)}", file=sys.stderr)
    return EXIT_OK if run.status == RunStatus.COMPLETED else EXIT_ERROR


def _user_message(error: str) -> str:
    """A run's error as a person reads it: kforge's own errors already say what was wrong and
    what to do, so their class name ("ValidationError: ") is left out; others keep theirs."""
    import kforge.errors

    name, sep, message = error.partition(": ")
    if sep and name in kforge.errors.__all__:
        return message
    return error
