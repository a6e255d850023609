"""``kforge ask``: answer one question from local documents with the router agent, with citations.

Progress goes to stderr and the answer to stdout, so the answer can be piped. ``kforge chat``
builds on the same pieces for a conversation.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from kforge.agents.results import CitedAnswer, sources_text
from kforge.cli._common import add_document_options, open_runtime, run_interruptible
from kforge.cli._follow import print_frame, report_outcome
from kforge.errors import ValidationError
from kforge.frames import (
    AgentStatus,
    ErrorFrame,
    Frame,
    LimitReached,
    ModelCall,
    Plan,
    TokenDelta,
)
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus

__all__ = [
    "QUOTED",
    "RETRIED",
    "LiveAnswer",
    "add_router_options",
    "answer_turn",
    "check_router_options",
    "prepare_corpus",
    "print_answer",
    "register",
    "router_args",
]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "ask",
        help="answer a question from local documents, with citations",
        description="Answer one question with the router agent: a guardrail, then searches of "
        "the documents (and the web with --web), grading of what was found, and an answer that "
        "cites the passages it used. Without --docs it uses the sample documents shipped with "
        "kforge.",
    )
    p.add_argument("question", help="the question")
    add_router_options(p)
    p.set_defaults(func=cmd_ask)


def add_router_options(p: argparse.ArgumentParser) -> None:
    add_document_options(p)
    p.add_argument("--web", action="store_true", help="also let the agent search the web")
    p.add_argument(
        "--max-iterations",
        type=int,
        default=2,
        metavar="N",
        help="search rounds before answering (default 2)",
    )
    p.add_argument(
        "-k",
        "--top-k",
        dest="k",
        type=int,
        default=5,
        metavar="N",
        help="passages per search (default 5)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=400,
        metavar="N",
        help="longest answer in tokens (default 400)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="show every frame")


def check_router_options(args: argparse.Namespace) -> None:
    for flag, value in (
        ("--max-iterations", args.max_iterations),
        ("-k", args.k),
        ("--max-tokens", args.max_tokens),
    ):
        if value < 1:
            raise ValidationError(f"{flag} must be at least 1 (got {value})")


def prepare_corpus(
    rt: Runtime, args: argparse.Namespace, out: TextIO, *, remembered: str | None = None
) -> str:
    """The corpus to read (``--docs`` indexed first; see ``kforge.cli.corpora.choose_corpus``)."""
    from kforge.cli.corpora import choose_corpus

    return choose_corpus(rt, args, out, remembered=remembered)


def router_args(
    args: argparse.Namespace, question: str, corpus: str, history: Sequence[dict[str, str]]
) -> dict[str, Any]:
    run_args: dict[str, Any] = {
        "question": question,
        "corpus": corpus,
        "history": list(history),
        "web_search": bool(args.web),
        "max_iterations": args.max_iterations,
        "k": args.k,
        "max_tokens": args.max_tokens,
    }
    if getattr(args, "answer", None):
        run_args["answer"] = args.answer
    return run_args


def _progress(frame: Frame, out: TextIO, *, verbose: bool) -> None:
    if verbose:
        print_frame(frame, out, verbose=True)
    elif isinstance(frame, AgentStatus):
        tool = f" {frame.current_tool}" if frame.current_tool else ""
        print(f"  · {frame.phase}{tool}", file=out, flush=True)
    elif isinstance(frame, Plan) and frame.reasoning:
        print(f"    {' '.join(frame.reasoning.split())[:120]}", file=out, flush=True)
    elif isinstance(frame, ErrorFrame | LimitReached):
        print_frame(frame, out)


RETRIED = "(the reply above is not supported by the documents; writing it again)"
"""Said under a streamed reply that failed the checks when the model writes another."""
QUOTED = "(the reply above is not supported by the documents; quoting them instead)"
"""Said under the last streamed reply when the answer quotes the documents instead."""


class LiveAnswer:
    """Writes the answer while the model generates it (for a terminal); ``print_answer`` then
    completes it instead of printing it again. A reply the checks rejected stays on screen,
    so it is labelled as rejected before what replaces it."""

    def __init__(self, out: TextIO, prefix: str = "") -> None:
        self.out = out
        self.prefix = prefix
        self.text = ""
        """The streamed text of the latest reply."""
        self.ended = False
        """The latest reply is complete (its model call is recorded)."""

    @classmethod
    def for_terminal(cls, out: TextIO, prefix: str = "") -> LiveAnswer | None:
        isatty = getattr(out, "isatty", None)
        return cls(out, prefix) if isatty is not None and isatty() else None

    def write(self, delta: TokenDelta) -> None:
        if delta.purpose != "generation":
            return
        if self.ended:  # the model writes again: the reply above failed the checks
            print(f"\n{RETRIED}\n", file=self.out)
            self.text, self.ended = "", False
        if not self.text:
            print(self.prefix, end="", file=self.out)
        self.text += delta.text
        print(delta.text, end="", file=self.out, flush=True)

    def end_reply(self) -> None:
        """The reply streamed so far is complete."""
        self.ended = bool(self.text)


async def answer_turn(
    rt: Runtime,
    run_args: dict[str, Any],
    *,
    session_id: str | None,
    progress: TextIO,
    verbose: bool = False,
    live: LiveAnswer | None = None,
) -> RunRecord:
    """Run the router agent for one question and show its steps as they happen (and, with
    ``live``, the answer as it is written)."""
    run_id = await rt.start("router", run_args, session_id=session_id)
    print(f"run {run_id}", file=progress, flush=True)
    return await follow_turn(rt, run_id, progress=progress, verbose=verbose, live=live)


async def follow_turn(
    rt: Runtime,
    run_id: str,
    *,
    progress: TextIO,
    verbose: bool = False,
    live: LiveAnswer | None = None,
) -> RunRecord:
    """Show a started (or resumed) turn's steps, and with ``live`` its answer, until it ends
    or parks."""
    async for item in rt.subscribe(run_id, deltas=live is not None):
        if isinstance(item, TokenDelta):
            if live is not None:
                live.write(item)
        else:
            if live is not None and isinstance(item, ModelCall) and item.purpose == "generation":
                live.end_reply()
            _progress(item, progress, verbose=verbose)
    return await rt.wait(run_id)


def print_answer(run: RunRecord, out: TextIO, live: LiveAnswer | None = None) -> None:
    result = CitedAnswer.load(run.result)
    answer = result.text.strip()
    if live is not None and live.text:
        print(file=out)  # ends the streamed text
        if result.path == "extractive_fallback":
            print(f"{QUOTED}\n\n{answer}", file=out)
        elif live.text.strip() != answer:  # e.g. markers that cite nothing were removed
            print(f"\n{answer}", file=out)
    else:
        print(f"{live.prefix if live else ''}{answer}", file=out)
    sources = sources_text(result.citations)
    if sources:
        print(f"\n{sources}", file=out)
    out.flush()


def cmd_ask(args: argparse.Namespace) -> int:
    question = args.question.strip()
    if not question:
        raise ValidationError(
            'the question is empty; ask something, e.g. kforge ask "What is '
            'retrieval-augmented generation?"'
        )
    check_router_options(args)

    async def go() -> RunRecord:
        rt = open_runtime(args)
        try:
            rt.model_for(rt._model_spec())  # a model that cannot be used is named before indexing
            corpus = prepare_corpus(rt, args, sys.stderr)
            run_args = router_args(args, question, corpus, [])
            return await answer_turn(
                rt,
                run_args,
                session_id=None,
                progress=sys.stderr,
                verbose=args.verbose,
                live=live,
            )
        finally:
            await rt.aclose()

    live = LiveAnswer.for_terminal(sys.stdout)
    run = run_interruptible(go(), args)
    if run.status != RunStatus.COMPLETED:
        if live is not None and live.text:
            print(file=sys.stdout)
        return report_outcome(run, args)
    print_answer(run, sys.stdout, live)
    return 0
