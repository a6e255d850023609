"""``kforge runs``: list, show, explain, resume, fork and export runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any

from kforge.cli._common import (
    drive_run,
    open_runtime,
    open_store,
    parse_answer,
    report_outcome,
    run_interruptible,
)
from kforge.errors import StateCorruptionError, ValidationError
from kforge.frames import frame_to_json
from kforge.store.base import RunRecord, RunStatus, Store

__all__ = ["register"]


def register(subparsers: Any) -> None:
    runs = subparsers.add_parser(
        "runs",
        help="inspect and steer recorded runs",
        description="Inspect and steer recorded runs.",
    )
    sub = runs.add_subparsers(dest="runs_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("list", help="recent runs, newest first")
    p.add_argument(
        "--status", choices=[s.value for s in RunStatus], help="only runs with this status"
    )
    p.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="a run's record, pending question and result")
    p.add_argument("run_id")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("explain", help="a run as a readable timeline, from its frames alone")
    p.add_argument("run_id")
    p.add_argument("-v", "--verbose", action="store_true", help="include usage frames")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("resume", help="continue a run at the step where it stopped")
    p.add_argument("run_id")
    p.add_argument(
        "--answer",
        help="answer to the pending question: text, an option such as "
        "'approve', or a JSON object such as '{\"action\": \"modify\", ...}'",
    )
    p.add_argument("--yes", action="store_true", help="approve every checkpoint")
    p.add_argument("--model", help="model to continue with (default: the one the run started with)")
    p.add_argument("--max-steps", type=int, help="raise the step limit (for runs paused by it)")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("fork", help="a new run sharing this one's frames up to a seq")
    p.add_argument("run_id")
    p.add_argument(
        "--at",
        type=int,
        metavar="SEQ",
        help="last frame seq to keep (default: all; for a failed run, all before the failure)",
    )
    p.set_defaults(func=cmd_fork)

    p = sub.add_parser("export", help="a run's frames as JSON Lines")
    p.add_argument("run_id")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_export)


def _age(run: RunRecord) -> str:
    return run.created_at.strftime("%Y-%m-%d %H:%M:%S")


def cmd_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    runs = store.list_runs(status=RunStatus(args.status) if args.status else None, limit=args.limit)
    if not runs:
        print('no runs yet (start one with: kforge research "QUESTION")')
        return 0
    print(f"{'RUN':<32}  {'AGENT':<14} {'STATUS':<14} {'STEPS':>5}  {'CREATED (UTC)':<19}  NOTE")
    for run in runs:
        status, note = run.status.value, run.pause_reason or run.error or ""
        if run.status == RunStatus.AWAITING_USER and run.pending_interaction:
            note = "asks: " + str(run.pending_interaction.get("prompt", ""))
        elif run.status in (RunStatus.RUNNING, RunStatus.PENDING) and run.is_live():
            until = datetime.fromtimestamp(run.lease_expires_at or 0, UTC).strftime("%H:%M:%S")
            note = f"live in {run.lease_owner} (lease until {until} UTC)"
        elif run.status == RunStatus.RUNNING:
            status, note = "interrupted", "resume with: kforge runs resume " + run.id
        print(
            f"{run.id:<32}  {run.agent_type:<14} {status:<14} {run.iteration:>5}  "
            f"{_age(run):<19}  {note[:80]}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = open_store(args)
    run = store.get_run(args.run_id)
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
    print("input      " + json.dumps(run.input.get("args", {}), ensure_ascii=False))
    if run.error:
        print(f"error      {run.error}")
    if run.pending_interaction:
        p = run.pending_interaction
        print(f"waiting    {p.get('kind')}: {p.get('prompt')}")
        if p.get("options"):
            print(
                f"options    {', '.join(p['options'])}  (answer: kforge runs resume {run.id} --answer OPTION)"
            )
    if run.result is not None:
        print("result     " + json.dumps(run.result, ensure_ascii=False, indent=2)[:4000])
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from kforge.explain import explain_run

    store = open_store(args)
    run = store.get_run(args.run_id)
    frames = store.read_frames(run.id)
    header = [
        f"run {run.id} — {run.agent_type}, {run.status.value}, {run.iteration} steps, "
        f"{len(frames)} frames"
    ]
    print(explain_run(frames, header=header, verbose=args.verbose))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from kforge.engine.limits import RunLimits

    async def go() -> RunRecord:
        rt = open_runtime(args)
        run = rt.get_run(args.run_id)
        limits = None
        if args.max_steps is not None:
            if args.max_steps < 1:
                raise ValidationError("--max-steps must be at least 1")
            limits = RunLimits.from_dict(
                {**run.input.get("limits", {}), "max_steps": args.max_steps}
            )
        answer = parse_answer(args.answer) if args.answer is not None else None
        if answer is None and args.yes and run.status == RunStatus.AWAITING_USER:
            answer = "approve"
        after = run.last_seq
        await rt.resume(run.id, answer, limits=limits)
        return await drive_run(
            rt, run.id, out=sys.stdout, auto_approve=args.yes, verbose=args.verbose, after_seq=after
        )

    run = run_interruptible(go(), args)
    return report_outcome(run)


def cmd_fork(args: argparse.Namespace) -> int:
    async def go() -> str:
        rt = open_runtime(args)
        return await rt.fork(args.run_id, at_seq=args.at)

    new_id = asyncio.run(go())
    print(f"forked {args.run_id} into {new_id}; continue it with: kforge runs resume {new_id}")
    return 0


def _readable_frames(store: Store, run: RunRecord) -> tuple[list[str], list[int]]:
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
    store = open_store(args)
    run = store.get_run(args.run_id)
    lines, damaged = _readable_frames(store, run)
    if damaged:
        print(
            f"kforge: warning: left out damaged frames {', '.join(map(str, damaged))}",
            file=sys.stderr,
        )
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + ("\n" if lines else ""))
        print(f"wrote {len(lines)} frames to {args.output}")
    else:
        for line in lines:
            print(line)
    return 0
