"""``kforge chat``: a multi-turn conversation with the router agent over local documents.

A chat is a session: every turn is a run stored with the session's id, and its input carries the
earlier turns, so follow-up questions keep their context. ``--session ID`` continues a session
later, from the same database.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from kforge import jsoncodec
from kforge.agents.conversation import Turn, turns_from_args
from kforge.agents.results import CitedAnswer
from kforge.cli._common import command_hint, open_runtime, read_input_line, run_interruptible
from kforge.cli.ask import (
    LiveAnswer,
    add_router_options,
    answer_turn,
    check_router_options,
    follow_turn,
    prepare_corpus,
    print_answer,
    router_args,
)
from kforge.frames import new_id
from kforge.runtime.services import session_turns
from kforge.store.base import RunLog, RunStatus

if TYPE_CHECKING:
    from kforge.runtime import Runtime

__all__ = ["register", "run_chat", "session_corpus"]

HELP = """\
Type a question and press Enter. Follow-up questions keep the conversation's context.
Commands: /history shows the conversation, /session shows how to continue it later,
/exit (or Ctrl-D) quits."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "chat",
        help="a conversation about local documents (multi-turn, resumable)",
        description="Chat with the router agent about your documents. Each turn is a durable "
        "run in a session; continue the session later with --session ID. Without --docs it "
        "uses the sample documents shipped with kforge.",
    )
    p.add_argument("--session", metavar="ID", help="continue (or name) a chat session")
    add_router_options(p)
    p.set_defaults(func=cmd_chat)


def session_corpus(store: RunLog, session: str) -> str | None:
    """The corpus the session's latest turn read."""
    runs = sorted(store.list_runs(session_id=session, limit=1000), key=lambda r: r.created_at)
    for run in reversed(runs):
        corpus = run.input.get("args", {}).get("corpus")
        if isinstance(corpus, str) and corpus:
            return corpus
    return None


async def _read(prompt: str, stdin: TextIO, out: TextIO) -> str | None:
    print(prompt, end="", file=out, flush=True)
    line = read_input_line(stdin)
    return None if not line else line.strip()


def _show_history(turns: list[Turn], out: TextIO) -> None:
    if not turns:
        print("(no earlier turns)", file=out)
    for number, turn in enumerate(turns, 1):
        answer = " ".join(turn.answer.split())
        print(f"{number}. you: {turn.question}\n   kforge: {answer[:300]}", file=out)


async def run_chat(
    args: argparse.Namespace,
    *,
    stdin: TextIO,
    out: TextIO,
    progress: TextIO,
    talk: TextIO | None = None,
) -> int:
    """The conversation loop; returns the exit code. Answers go to ``out``; the banner,
    prompts and notices to ``talk`` (default ``out``)."""
    answers = out
    out = talk if talk is not None else out
    check_router_options(args)
    rt = open_runtime(args)
    try:
        session = args.session or new_id()[:12]
        turns = turns_from_args(session_turns(rt.store, session)) if args.session else []
        corpus = prepare_corpus(
            rt,
            args,
            progress,
            remembered=session_corpus(rt.store, session) if args.session else None,
        )
        again = command_hint(args, f"chat --session {session}")
        if turns:
            print(
                f"session {session}: continuing after {len(turns)} earlier turn(s) "
                f"over corpus '{corpus}'",
                file=out,
            )
            _show_history(turns[-3:], out)
        else:
            print(f"session {session}; continue it later with: {again}", file=out)
        print(HELP, file=out, flush=True)
        if args.session:
            done = await _finish_interrupted(rt, session, args, out, answers, progress)
            if done is not None:
                turns.append(done)
        while True:
            line = await _read("\nyou> ", stdin, out)
            if line is None or line in ("/exit", "/quit"):
                print(f"bye; continue with: {again}", file=out)
                return 0
            if not line:
                continue
            if line == "/history":
                _show_history(turns, out)
                continue
            if line == "/session":
                print(f"session {session}: {again}", file=out)
                continue
            if line.startswith("/"):
                print(f"unknown command {line.split()[0]}\n{HELP}", file=out)
                continue
            history = jsoncodec.to_builtins(turns)
            live = LiveAnswer.for_terminal(answers, prefix="kforge> ")
            run = await answer_turn(
                rt,
                router_args(args, line, corpus, history),
                session_id=session,
                progress=progress,
                verbose=args.verbose,
                live=live,
            )
            if run.status != RunStatus.COMPLETED:
                if live is not None and live.text:
                    print(file=answers)
                print(
                    f"(run {run.id} {run.status.value}: {run.error or run.pause_reason or ''})",
                    file=out,
                )
                continue
            if live is None and answers is out:
                print("kforge> ", end="", file=out)
            print_answer(run, answers, live)
            turns.append(Turn(line, CitedAnswer.load(run.result).text))
    finally:
        await rt.aclose()


_INTERRUPTED = ("interrupted by", "its output was closed", "the process that ran it closed")
"""How a turn paused by a person or a closed terminal says so (``Runtime.interrupt``)."""


async def _finish_interrupted(
    rt: Runtime,
    session: str,
    args: argparse.Namespace,
    out: TextIO,
    answers: TextIO,
    progress: TextIO,
) -> Turn | None:
    """The session's last turn, when Ctrl-C (or a closed terminal) paused it and nothing was
    asked after it, is finished first: the question is not lost with the REPL."""
    runs = rt.store.list_runs(session_id=session, limit=1000)
    if not runs:
        return None
    last = max(runs, key=lambda r: r.created_at)
    reason = last.pause_reason or ""
    if last.status != RunStatus.PAUSED or last.is_live() or not reason.startswith(_INTERRUPTED):
        return None
    question = str((last.input.get("args") or {}).get("question", ""))
    print(f"\nyour last question was interrupted; answering it now: {question}", file=out)
    await rt.resume(last.id)
    live = LiveAnswer.for_terminal(answers, prefix="kforge> ")
    run = await follow_turn(rt, last.id, progress=progress, verbose=args.verbose, live=live)
    if run.status != RunStatus.COMPLETED:
        print(f"(run {run.id} {run.status.value}: {run.error or run.pause_reason or ''})", file=out)
        return None
    if live is None and answers is out:
        print("kforge> ", end="", file=out)
    print_answer(run, answers, live)
    return Turn(question, CitedAnswer.load(run.result).text)


def cmd_chat(args: argparse.Namespace) -> int:
    # questions piped in: stdout holds the answers alone, the banner and prompts go to stderr
    talk = sys.stdout if sys.stdin.isatty() else sys.stderr
    return run_interruptible(
        run_chat(args, stdin=sys.stdin, out=sys.stdout, progress=sys.stderr, talk=talk), args
    )
