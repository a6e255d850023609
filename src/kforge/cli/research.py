"""``kforge research``: run the Research agent over local documents and write a cited report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kforge.cli._common import add_document_options, check_writable, open_runtime, run_interruptible
from kforge.cli._follow import drive_run, report_outcome, report_path
from kforge.cli.corpora import choose_corpus
from kforge.errors import ValidationError
from kforge.store.base import RunRecord

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "research",
        help="research a question over local documents and write a cited report",
        description="Run the Research agent: decompose the question, answer each part from the "
        "documents with citations, synthesise insights and map adjacent questions. Without "
        "--docs it uses the sample documents shipped with kforge.",
    )
    p.add_argument("question", help="the research question")
    add_document_options(p)
    p.add_argument("--yes", action="store_true", help="approve the question tree without asking")
    p.add_argument(
        "--review-answers",
        action="store_true",
        help="also stop after answering to review sources and coverage",
    )
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="where to write the report (default: reports/research-<run>.md)",
    )
    p.add_argument("--max-steps", type=int, default=60, help="step limit for the run (default 60)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every frame")
    p.set_defaults(func=cmd_research)


def cmd_research(args: argparse.Namespace) -> int:
    from kforge.engine.limits import RunLimits

    question = args.question.strip()
    if not question:
        raise ValidationError(
            "the question is empty; ask something, e.g. "
            'kforge research "What is retrieval-augmented generation?"'
        )
    if args.max_steps < 1:
        raise ValidationError("--max-steps must be at least 1")

    check_writable(report_path("research", "x", args.output), make_parents=True)

    async def go() -> RunRecord:
        rt = open_runtime(args)
        name = choose_corpus(rt, args, sys.stderr)
        model = rt.model_for(rt._model_spec()).name
        print(f"researching with {model}: {question}", file=sys.stderr, flush=True)
        run_args = {"question": question, "corpus": name, "review_answers": args.review_answers}
        if args.answer:
            run_args["answer"] = args.answer
        kept = {"report": str(Path(args.output).resolve())} if args.output else None
        run_id = await rt.start(
            "research", run_args, limits=RunLimits(max_steps=args.max_steps), annotations=kept
        )
        print(f"run {run_id}", file=sys.stderr, flush=True)
        return await drive_run(
            rt, run_id, out=sys.stderr, auto_approve=args.yes, verbose=args.verbose
        )

    run = run_interruptible(go(), args)
    return report_outcome(run, args, output=args.output)
