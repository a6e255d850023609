"""Shared pieces of the command line: opening the store and runtime, following a run live,
answering its questions at the terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import signal
import sys
import weakref
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TextIO, TypeVar

from kforge.explain import describe_frame
from kforge.frames import Frame
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus, Store

__all__ = [
    "add_document_options",
    "drive_run",
    "open_runtime",
    "open_store",
    "parse_answer",
    "print_frame",
    "report_outcome",
    "run_interruptible",
    "save_report",
]

T = TypeVar("T")

QUIET_TYPES = frozenset({"usage", "status.changed", "model.call"})


def open_store(args: argparse.Namespace) -> Store:
    from kforge.store.sqlite import SQLiteStore

    return SQLiteStore(getattr(args, "db", None))


def open_runtime(args: argparse.Namespace, **kwargs: Any) -> Runtime:
    model = getattr(args, "model", None)
    runtime = Runtime(open_store(args), model=model, **kwargs)
    _OPEN_RUNTIMES.add(runtime)
    return runtime


_OPEN_RUNTIMES: weakref.WeakSet[Runtime] = weakref.WeakSet()
"""Runtimes this command opened: what a Ctrl-C pauses."""


def run_interruptible(main: Coroutine[Any, Any, T], args: argparse.Namespace) -> T:
    """``asyncio.run(main)``, but SIGINT and SIGTERM pause the runs executing here (resumable
    from their last committed step), print how to resume them and exit 130 or 143; a second
    signal exits at once (the runs still resume, from their last committed step)."""
    return asyncio.run(_interruptible(main, args))


async def _interruptible(main: Coroutine[Any, Any, T], args: argparse.Namespace) -> T:
    loop = asyncio.get_running_loop()
    task = loop.create_task(main)
    received: list[int] = []
    paused: list[str] = []

    async def pause() -> None:
        name = signal.Signals(received[0]).name
        for runtime in list(_OPEN_RUNTIMES):
            paused.extend(await runtime.interrupt(f"interrupted by {name}"))
        task.cancel()

    pausing: list[asyncio.Task[None]] = []

    def on_signal(signum: int) -> None:
        if received:
            print("\nkforge: exiting now", file=sys.stderr, flush=True)
            os._exit(128 + signum)
        received.append(signum)
        print(
            "\nkforge: pausing the run (press Ctrl-C again to exit at once)",
            file=sys.stderr,
            flush=True,
        )
        pausing.append(loop.create_task(pause()))

    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        try:
            result = await task
        except asyncio.CancelledError:
            if not received:
                raise
        if not received:
            return result
        await pausing[0]
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
    db = f" --db {shlex.quote(str(args.db))}" if getattr(args, "db", None) else ""
    for run_id in paused:
        print(f"\nrun {run_id} paused; resume with: kforge{db} runs resume {run_id}", flush=True)
    raise SystemExit(128 + received[0])


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
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def _ask_terminal(run: RunRecord, out: TextIO) -> Any:
    pending = run.pending_interaction or {}
    print(f"\n? {pending.get('prompt', 'The run is waiting for an answer.')}", file=out)
    payload = {
        k: v
        for k, v in (pending.get("payload") or {}).items()
        if k not in {"phase", "checkpoint_id"}
    }
    if payload:
        print(json.dumps(payload, indent=2, ensure_ascii=False)[:4000], file=out)
    options = pending.get("options") or []
    hint = f" [{'/'.join(options)}]" if options else ""
    if "modify" in options:
        hint += ' (modify: type {"action": "modify", "modifications": {...}})'
    while True:
        print(f"answer{hint}: ", end="", file=out, flush=True)
        line = sys.stdin.readline()
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
) -> RunRecord:
    """Print the run's frames live; answer checkpoints (approve with ``auto_approve``, or at the
    terminal when interactive) until it ends or waits with nobody to answer."""
    interactive = sys.stdin.isatty() if interactive is None else interactive
    last = after_seq
    while True:
        async for frame in rt.subscribe(run_id, after_seq=last):
            last = frame.seq
            print_frame(frame, out, verbose=verbose)
        run = rt.get_run(run_id)
        if run.status != RunStatus.AWAITING_USER:
            return run
        pending = run.pending_interaction or {}
        options = pending.get("options") or []
        if auto_approve and "approve" in options:
            print("  (approved automatically: --yes)", file=out, flush=True)
            answer: Any = {"action": "approve"}
        elif interactive:
            answer = _ask_terminal(run, out)
            if answer is None:
                return run
        else:
            return run
        try:
            await rt.resume(run_id, answer)
        except Exception as exc:  # a bad answer: say so and ask again
            from kforge.errors import ForgeError

            if not isinstance(exc, ForgeError):
                raise
            print(f"  ! {exc}", file=out, flush=True)


def save_report(run: RunRecord, output: str | None = None) -> Path | None:
    """Write the Markdown report in a run's (possibly partial) result; returns where."""
    report = (run.result or {}).get("report")
    if not isinstance(report, str) or not report.strip():
        return None
    path = Path(output) if output else Path("reports") / f"{run.agent_type}-{run.id[:8]}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report, encoding="utf-8")
    return path


def report_outcome(run: RunRecord, *, output: str | None = None) -> int:
    """Tell the person how the run ended, what to do next, and where its report is."""
    if run.status == RunStatus.AWAITING_USER:
        prompt = (run.pending_interaction or {}).get("prompt", "")
        print(
            f"\nrun {run.id} is waiting: {prompt}\n"
            f"answer with: kforge runs resume {run.id} --answer approve"
        )
        return 0
    saved = save_report(run, output)
    if run.status == RunStatus.PAUSED:
        print(
            f"\nrun {run.id} paused ({run.pause_reason}); continue with: "
            f"kforge runs resume {run.id}"
        )
        if saved:
            print(f"partial report written to {saved}")
        return 0
    print(f"\nrun {run.id} {run.status.value}")
    if saved:
        print(f"report written to {saved}")
    if run.error:
        print(f"error: {run.error}", file=sys.stderr)
    return 0 if run.status == RunStatus.COMPLETED else 1


def add_document_options(p: argparse.ArgumentParser) -> None:
    """``--docs``, ``--corpus``, ``--model`` and ``--answer``: what an agent reads, which model
    it uses and how it writes its answers."""
    p.add_argument("--docs", metavar="DIR", help="folder of Markdown, text, HTML or PDF files")
    p.add_argument(
        "--corpus",
        help="name of the corpus to index the documents in (default: derived from the folder "
        "name; 'samples' for the shipped documents)",
    )
    p.add_argument(
        "--model", help="model as provider:model (default: KFORGE_MODEL or local:smollm2)"
    )
    p.add_argument(
        "--answer",
        choices=("extractive", "generative"),
        help="how answers are written: 'extractive' quotes the documents' own sentences, "
        "'generative' lets the model write (every sentence checked against its sources); "
        "default: what the model's provider says (extractive for the bundled small model)",
    )
