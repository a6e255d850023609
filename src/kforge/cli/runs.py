"""``kforge runs``: list, show, explain, resume, fork, export, cancel and delete runs.

Every RUN argument takes a run id or any unique prefix of one (report files are named by the
first 8 characters).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kforge import jsoncodec
from kforge.agents.results import read_result
from kforge.cli._app import add_app_option, check_run_needs
from kforge.cli._common import (
    NoDatabaseError,
    UsageError,
    add_model_options,
    check_writable,
    command_hint,
    find_run,
    open_runtime,
    open_store,
    run_interruptible,
)
from kforge.cli._follow import ask_at_terminal, drive_run, parse_answer, report_outcome
from kforge.cli.pending import render_pending
from kforge.errors import (
    ForgeError,
    InvalidRunStateError,
    RunLeasedError,
    StateCorruptionError,
    ValidationError,
    WriteConflictError,
)
from kforge.frames import frame_to_json
from kforge.store.base import RunLog, RunRecord, RunStatus

__all__ = ["AnswerNotAppliedError", "register", "run_title"]

_RUN_HELP = "run id, or a unique prefix of one (see: kforge runs list)"


def register(subparsers: Any) -> None:
    runs = subparsers.add_parser(
        "runs",
        help="inspect and steer recorded runs",
        description="Inspect and steer recorded runs. RUN is a run id or a unique prefix of one.",
    )
    sub = runs.add_subparsers(
        dest="runs_command", metavar="SUBCOMMAND", required=True, help="what to do"
    )

    p = sub.add_parser("list", help="recent runs, newest first")
    p.add_argument(
        "--status", choices=[s.value for s in RunStatus], help="only runs with this status"
    )
    p.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="a run's record, the question it waits on, and its result")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("explain", help="a run as a readable timeline, from its frames alone")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="include usage frames")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("resume", help="continue a run at the step where it stopped")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.add_argument(
        "--answer",
        help="answer to the pending question: text, an option such as "
        "'approve', or a JSON object such as '{\"action\": \"modify\", ...}'",
    )
    p.add_argument("--yes", action="store_true", help="approve every checkpoint")
    add_model_options(p, model_help="model to continue with (default: the run's own)")
    p.add_argument("--max-steps", type=int, help="raise the step limit (for runs paused by it)")
    add_app_option(p)
    p.add_argument("-v", "--verbose", action="store_true", help="show every frame")
    p.add_argument(
        "-o",
        "--output",
        help="where to write the report (default: where the run's command wrote it, e.g. "
        "research -o FILE, else reports/AGENT-RUN.md)",
    )
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("fork", help="a new run sharing this one's frames up to a seq")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.add_argument(
        "--at",
        type=int,
        metavar="SEQ",
        help="last frame seq to keep, 1 or more (default: all; for a failed run, all before "
        "the failure)",
    )
    p.set_defaults(func=cmd_fork)

    p = sub.add_parser("export", help="a run's frames as JSON Lines")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("cancel", help="stop a run for good (it can still be forked)")
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.set_defaults(func=cmd_cancel)

    p = sub.add_parser(
        "delete", help="delete a run with its child runs, frames and snapshots (not a running one)"
    )
    p.add_argument("run_id", metavar="RUN", help=_RUN_HELP)
    p.set_defaults(func=cmd_delete)


def run_title(run: RunRecord) -> str:
    """What the run was asked: its question, goal, topic or prompt argument."""
    args = run.input.get("args") or {}
    for key in ("question", "goal", "topic", "prompt", "task"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _age(run: RunRecord, now: datetime | None = None) -> str:
    seconds = max(0, int(((now or datetime.now(UTC)) - run.created_at).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def cmd_list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {args.limit})")
    try:
        store = open_store(args, read_only=True)
    except NoDatabaseError:
        print(f"no runs yet; start one with: {command_hint(args, 'ask QUESTION')}")
        return 0
    runs = store.list_runs(status=RunStatus(args.status) if args.status else None, limit=args.limit)
    if not runs and args.status and store.list_runs(limit=1):
        print(f"no {args.status} runs; every run: {command_hint(args, 'runs list')}")
        return 0
    if not runs:
        print(f"no runs yet; start one with: {command_hint(args, 'ask QUESTION')}")
        return 0
    print(f"{'RUN':<12}  {'AGENT':<10} {'STATUS':<14} {'AGE':>8}  QUESTION / NOTE")
    for run in runs:
        status, note = run.status.value, run.pause_reason or run.error or ""
        if run.status == RunStatus.AWAITING_USER and run.pending_interaction:
            note = "asks: " + str(run.pending_interaction.get("prompt", ""))
        elif run.status in (RunStatus.RUNNING, RunStatus.PENDING) and run.is_live():
            until = datetime.fromtimestamp(run.lease_expires_at or 0, UTC).strftime("%H:%M:%S")
            note = f"live in {run.lease_owner} (lease until {until} UTC)"
        elif run.status == RunStatus.RUNNING:
            status = "interrupted"
            note = "resume with: " + command_hint(args, f"runs resume {run.id[:12]}")
        title = run_title(run)
        # a hint is kept whole, so it can be pasted; the question is what gets shortened
        text = f"{title[:40]} — {note}" if title and note else title[:80] or note
        print(f"{run.id[:12]:<12}  {run.agent_type[:10]:<10} {status:<14} {_age(run):>8}  {text}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = open_store(args, read_only=True)
    run = find_run(store, args.run_id)
    print(f"run        {run.id}")
    print(f"agent      {run.agent_type}")
    print(f"status     {run.status.value}" + (f" ({run.pause_reason})" if run.pause_reason else ""))
    print(f"steps      {run.iteration} of at most {run.max_iterations}")
    print(f"frames     {run.last_seq}")
    print(f"created    {run.created_at.isoformat()}  updated {run.updated_at.isoformat()}")
    for label, value in (
        ("session", run.session_id),
        ("parent", run.parent_id),
        ("forked", run.forked_from and f"{run.forked_from} at seq {run.forked_at_seq}"),
    ):
        if value:
            print(f"{label:<10} {value}")
    print("input      " + jsoncodec.dumps(run.input.get("args", {}), spaced=True))
    if run.error:  # a paused run's is why it paused (the model could not be reached)
        label = "why" if run.status == RunStatus.PAUSED else "error"
        print(f"{label:<10} {run.error}")
    if run.pending_interaction:
        print(render_pending(run, lambda command: command_hint(args, command)))
    if run.result is not None:
        result = read_result(run)
        if result.citations and result.text.strip():  # the answer and the Sources it cites
            print(f"{result.TEXT_FIELD:<10} " + result.with_sources()[:4000])
        print("result     " + jsoncodec.dumps(run.result, indent=True)[:4000])
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from kforge.explain import explain_run

    store = open_store(args, read_only=True)
    run = find_run(store, args.run_id)
    frames = store.read_frames(run.id)
    header = [
        f"run {run.id} — {run.agent_type}, {run.status.value}, {run.iteration} steps, "
        f"{len(frames)} frames"
    ]
    print(explain_run(frames, header=header, verbose=args.verbose))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from kforge.engine.limits import RunLimits

    if args.output:
        check_writable(Path(args.output), make_parents=True)
    store = open_store(args)
    run = find_run(store, args.run_id)
    store.close()
    explicit = args.model is not None
    args.model = args.model or run.input.get("model")

    async def go() -> RunRecord:
        rt = open_runtime(args, own_model=explicit)
        run = rt.get_run(find_run(rt.store, args.run_id).id)
        check_run_needs(rt, run)
        limits = None
        if args.max_steps is not None:
            if args.max_steps < 1:
                raise ValidationError("--max-steps must be at least 1")
            limits = jsoncodec.convert(
                {**run.input.get("limits", {}), "max_steps": args.max_steps}, RunLimits
            )
        answer = parse_answer(args.answer) if args.answer is not None else None
        if answer is None and run.status == RunStatus.AWAITING_USER:
            if args.yes:
                answer = "approve"
            elif sys.stdin.isatty():
                answer = ask_at_terminal(run, sys.stderr)
                if answer is None:
                    return run
        after = run.last_seq
        try:
            # durable: returns once the answer is recorded, so a lost race is known here
            await rt.resume(run.id, answer, limits=limits, durable=True)
        except (InvalidRunStateError, WriteConflictError) as exc:
            if answer is None:
                raise
            raise not_applied(args, run, exc) from None
        return await drive_run(
            rt, run.id, out=sys.stderr, auto_approve=args.yes, verbose=args.verbose, after_seq=after
        )

    run = run_interruptible(go(), args)
    kept = (run.input.get("annotations") or {}).get("report")
    output = args.output or kept
    if (
        args.output
        and kept
        and Path(kept).exists()
        and Path(kept).resolve() != Path(args.output).resolve()
    ):
        print(f"an earlier report of this run is in {kept}", file=sys.stderr)
    return report_outcome(run, args, output=output)


class AnswerNotAppliedError(InvalidRunStateError):
    """``runs resume --answer``: the run was answered, or taken, by someone else first."""


def not_applied(args: argparse.Namespace, run: RunRecord, exc: Exception) -> ForgeError:
    """Why an answer given with ``--answer`` was not recorded, and what to do instead."""
    if isinstance(exc, RunLeasedError) or not isinstance(exc, WriteConflictError):
        why = str(exc)  # the run moved on before this command looked: it says how
    else:
        why = f"another process answered run {run.id} first and continues it"
    return AnswerNotAppliedError(
        f"your answer was not applied: {why}. See where the run is with: "
        f"{command_hint(args, f'runs show {run.id}')}; when it waits for an answer, give yours "
        f"with: {command_hint(args, f'runs resume {run.id} --answer ...')}"
    )


def cmd_fork(args: argparse.Namespace) -> int:
    async def go() -> tuple[str, str]:
        rt = open_runtime(args)
        source = find_run(rt.store, args.run_id)
        return source.id, await rt.fork(source.id, at_seq=args.at)

    source_id, new_id = asyncio.run(go())
    print(
        f"forked {source_id} into {new_id}; continue it with: "
        f"{command_hint(args, f'runs resume {new_id}')}"
    )
    return 0


def _readable_frames(store: RunLog, run: RunRecord) -> tuple[list[str], list[int]]:
    """The run's frames as JSON lines, and the seqs of those too damaged to read."""
    try:
        return [frame_to_json(f) for f in store.read_frames(run.id)], []
    except StateCorruptionError:
        pass
    lines: list[str] = []
    damaged: list[int] = []
    for seq in range(1, run.last_seq + 1):
        try:
            lines.extend(
                frame_to_json(f) for f in store.read_frames(run.id, after_seq=seq - 1, limit=1)
            )
        except StateCorruptionError:
            damaged.append(seq)
    return lines, damaged


def cmd_export(args: argparse.Namespace) -> int:
    if args.output:
        check_writable(Path(args.output))
    store = open_store(args, read_only=True)
    run = find_run(store, args.run_id)
    lines, damaged = _readable_frames(store, run)
    if damaged:
        print(
            f"kforge: warning: left out damaged frames {', '.join(map(str, damaged))}",
            file=sys.stderr,
        )
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + ("\n" if lines else ""))
        print(f"wrote {len(lines)} frames to {args.output}", file=sys.stderr)
    else:
        for line in lines:
            print(line)
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    async def go() -> tuple[str, str]:
        rt = open_runtime(args)
        run = find_run(rt.store, args.run_id)
        when = await rt.cancel(run.id)
        if when == "next_step":  # another process executes it: wait a little for it to stop
            for _ in range(_CANCEL_WAIT_POLLS):
                if rt.get_run(run.id).status == RunStatus.CANCELLED:
                    return run.id, "now"
                await asyncio.sleep(_CANCEL_WAIT_POLL_S)
        return run.id, when

    run_id, when = asyncio.run(go())
    explain = command_hint(args, f"runs explain {run_id[:8]}")
    if when == "next_step":
        print(
            f"cancel requested: run {run_id} executes in another process and stops at its "
            f"next step; follow it with: {command_hint(args, f'runs show {run_id[:8]}')}"
        )
        return 0
    print(f"cancelled run {run_id}; its frames stay, see them with: {explain}")
    return 0


_CANCEL_WAIT_POLLS = 20
_CANCEL_WAIT_POLL_S = 0.25


def _family(store: RunLog, run: RunRecord) -> list[RunRecord]:
    """``run`` and every run started under it, parents first."""
    family, queue = [], [run]
    while queue:
        current = queue.pop(0)
        family.append(current)
        queue.extend(store.list_runs(parent_id=current.id, limit=100_000))
    return family


def cmd_delete(args: argparse.Namespace) -> int:
    store = open_store(args)
    run = find_run(store, args.run_id)
    family = _family(store, run)
    running = [r for r in family if r.status == RunStatus.RUNNING]
    if running:
        which = ", ".join(r.id for r in running)
        raise InvalidRunStateError(
            f"run {which} is running; stop it first with: "
            f"{command_hint(args, f'runs cancel {running[0].id}')}"
        )
    store.delete_runs(r.id for r in reversed(family))
    children = len(family) - 1
    print(f"deleted run {run.id}" + (f" and {children} child run(s)" if children else ""))
    return 0
