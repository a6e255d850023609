"""``kforge build``: make a small checked program for a goal with the Build agent.

Everything the agent writes goes into ``--out`` (default: ``build-<goal words>`` in the current
folder), which must be empty or new: the artifact, its README and check, and ``BUILD_LOG.md``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from kforge.agents.results import BuildResult
from kforge.cli._common import add_document_options, open_runtime, run_interruptible
from kforge.cli._follow import drive_run, report_outcome
from kforge.cli.corpora import choose_corpus
from kforge.errors import ConfigurationError, ValidationError
from kforge.store.base import RunRecord, RunStatus

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "build",
        help="build a small, checked program for a goal in a folder of its own",
        description="Run the Build agent: it grounds the goal in concepts (from the documents "
        "where they speak of them) and a plan of small steps with acceptance checks, waits for "
        "your approval, then writes each step's files in --out and runs its check in a "
        "sandbox confined to that folder. Nothing is written outside --out. A model that "
        "writes no code (the bundled one) builds only the programs it knows and refuses "
        "other goals.",
    )
    p.add_argument("goal", help='what to build, e.g. "a CSV summary tool"')
    add_document_options(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder for the artifact, new or empty (default: build-<goal words>)",
    )
    p.add_argument("--yes", action="store_true", help="approve the plan without asking")
    p.add_argument("--max-steps", type=int, default=60, help="step limit for the run (default 60)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every frame")
    p.set_defaults(func=cmd_build)


def output_folder(goal: str, out: str | None) -> Path:
    """``--out``, or ``build-<first goal words>``; refused when it is a file or not empty."""
    if out:
        folder = Path(out).expanduser()
    else:
        words = re.findall(r"[a-z0-9]+", goal.lower())[:4]
        folder = Path("build-" + ("-".join(words) or "artifact"))
    if folder.exists() and not folder.is_dir():
        raise ConfigurationError(f"cannot build in {folder}: it is a file; give a folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise ConfigurationError(
            f"cannot build in {folder}: it is not empty; give a new or empty folder with --out"
        )
    return folder.resolve()


def cmd_build(args: argparse.Namespace) -> int:
    from kforge.engine.limits import RunLimits

    goal = " ".join(args.goal.split())
    if not goal:
        raise ValidationError(
            'the goal is empty; say what to build, e.g. kforge build "a CSV summary tool"'
        )
    if args.max_steps < 1:
        raise ValidationError("--max-steps must be at least 1")
    folder = output_folder(goal, args.out)

    async def go() -> RunRecord:
        rt = open_runtime(args)
        name = choose_corpus(rt, args, sys.stderr)
        model = rt.model_for(rt._model_spec()).name
        print(f"building with {model} in {folder}: {goal}", file=sys.stderr, flush=True)
        run_args: dict[str, Any] = {"goal": goal, "workspace": str(folder), "corpus": name}
        if args.answer:
            run_args["answer"] = args.answer
        run_id = await rt.start("build", run_args, limits=RunLimits(max_steps=args.max_steps))
        print(f"run {run_id}", file=sys.stderr, flush=True)
        return await drive_run(
            rt, run_id, out=sys.stderr, auto_approve=args.yes, verbose=args.verbose
        )

    run = run_interruptible(go(), args)
    code = report_outcome(run, args)
    result = BuildResult.load(run.result)
    if run.status == RunStatus.COMPLETED:
        print(f"artifact written to {folder}")
        if result.check_command:
            print(f"check it with: cd {folder} && {result.check_command}", file=sys.stderr)
        if not result.complete:
            print(
                "kforge: error: some steps did not pass their checks; see BUILD_LOG.md",
                file=sys.stderr,
            )
            return 1
    return code
