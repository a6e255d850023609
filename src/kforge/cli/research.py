"""``kforge research``: run the Research agent over local documents and write a cited report."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from kforge.cli._common import (
    add_document_options,
    drive_run,
    open_runtime,
    report_outcome,
    run_interruptible,
)
from kforge.errors import ConfigurationError, ValidationError
from kforge.store.base import RunRecord

__all__ = ["register", "sample_corpus_dir"]

SAMPLE_CORPUS = "samples"


def sample_corpus_dir() -> Path:
    """The sample documents shipped inside the package."""
    return Path(__file__).resolve().parents[1] / "samples" / "corpus"


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


def corpus_name_for(folder: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-.") or "docs"
    return name[:64]


def ensure_corpus(rt: Any, folder: Path, name: str, out: Any) -> None:
    from kforge.rag.ingest import ingest_folder

    if not folder.is_dir():
        raise ConfigurationError(f"--docs {folder}: not a folder")
    corpus = rt.services.corpus(name)
    report = ingest_folder(corpus, folder)
    print(report.summary(), file=out, flush=True)
    if report.chunks == 0:
        raise ConfigurationError(
            f"no readable documents in {folder} (supported: .md, .txt, .html, .pdf)"
        )


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
    folder = Path(args.docs) if args.docs else sample_corpus_dir()
    name = args.corpus or (corpus_name_for(folder) if args.docs else SAMPLE_CORPUS)

    async def go() -> RunRecord:
        rt = open_runtime(args)
        ensure_corpus(rt, folder, name, sys.stdout)
        print(f"researching with {rt.model_for(rt._model_spec()).name}: {question}", flush=True)
        run_args = {"question": question, "corpus": name, "review_answers": args.review_answers}
        if args.answer:
            run_args["answer"] = args.answer
        run_id = await rt.start("research", run_args, limits=RunLimits(max_steps=args.max_steps))
        print(f"run {run_id}", flush=True)
        return await drive_run(
            rt, run_id, out=sys.stdout, auto_approve=args.yes, verbose=args.verbose
        )

    run = run_interruptible(go(), args)
    return report_outcome(run, output=args.output)
