"""``kforge assist``: run a tree agent, show its agents live, answer their questions.

Questions reach the person as they are asked: at the terminal when stdin is one; otherwise one
line of stdin per question (or of ``--answers FILE``), an empty line or the end of the input
declining it; ``--yes`` declines every question and approves tool calls, for unattended use.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from kforge.cli._app import add_app_option, check_tools, tool_names
from kforge.cli._common import (
    EXIT_ERROR,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_WAITING,
    add_document_options,
    command_hint,
    open_runtime,
    read_input_line,
    run_interruptible,
)
from kforge.cli._follow import ask_at_terminal, parse_answer
from kforge.errors import ConfigurationError, ValidationError
from kforge.runtime.runtime import Runtime
from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus

__all__ = ["Answers", "TreeView", "register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "assist",
        help="run the agent tree on a request, with subagents and questions",
        description="Run the tree agent: it checks the request, asks what it must know, splits "
        "it into subquestions answered by subagents in parallel, answers from the documents "
        "(the sample documents unless --docs or --corpus) and sums up. The tree is shown "
        "live on stderr; the answer goes to stdout. Questions are asked at the terminal; "
        "without one, each line of stdin (or of --answers FILE) answers one question and an "
        "empty line declines it; --yes declines them all and approves tool calls.",
    )
    p.add_argument("prompt", help="the request")
    add_document_options(p)
    p.add_argument("--no-docs", action="store_true", help="answer without documents")
    p.add_argument(
        "--yes", action="store_true", help="decline every question and approve tool calls"
    )
    p.add_argument(
        "--answers",
        metavar="FILE",
        help="answers to the questions, one per line in the order they are asked ('-' for "
        "stdin); an empty line declines one",
    )
    p.add_argument(
        "--max-depth",
        type=int,
        default=1,
        metavar="N",
        help="levels of subagents below the first agent (default 1)",
    )
    p.add_argument(
        "--subquestions",
        type=int,
        default=4,
        metavar="N",
        help="subquestions (subagents) per agent, 0 to 4 (default 4)",
    )
    p.add_argument(
        "--tools",
        metavar="NAMES",
        help="tools for the main execution, separated by commas (e.g. python)",
    )
    p.add_argument("--max-steps", type=int, default=60, help="step limit per agent (default 60)")
    add_app_option(p)
    p.set_defaults(func=cmd_assist)


class Answers:
    """Where the answers to agents' questions come from (see the module docstring)."""

    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.out = out
        self.decline_all = bool(args.yes)
        self.lines: Iterator[str] | None = None
        if args.answers and args.answers != "-":
            path = Path(args.answers)
            if not path.is_file():
                raise ConfigurationError(f"--answers {path}: no such file")
            self.lines = iter(path.read_text(encoding="utf-8").splitlines())
        elif args.answers == "-" or (not self.decline_all and not sys.stdin.isatty()):
            self.lines = iter(sys.stdin.readline, "")
        self.interactive = not self.decline_all and self.lines is None
        self._lock = asyncio.Lock()
        self.view: TreeView | None = None

    async def ask(self, agent_id: str, prompt: str) -> str | None:
        """The query-user handler: one question at a time."""
        async with self._lock:
            if self.view is not None:
                self.view.clear()
            print(f"? [{agent_id[:8]}] {prompt}", file=self.out, flush=True)
            if self.decline_all:
                print("  (declined: --yes)", file=self.out, flush=True)
                return None
            if self.lines is not None:
                line = next(self.lines, "").strip()
                print(f"  {line or '(declined)'}", file=self.out, flush=True)
                return line or None
            print("answer (empty to decline): ", end="", file=self.out, flush=True)
            line = await asyncio.to_thread(read_input_line, sys.stdin)
            return line.strip() or None

    def for_pending(self, run: RunRecord) -> Any:
        """An answer to what a parked agent waits on (a tool approval, ...), or None."""
        options = (run.pending_interaction or {}).get("options") or []
        if self.decline_all:
            return "approve" if "approve" in options else {"declined": True}
        if self.lines is not None:
            line = next(self.lines, "").strip()
            return parse_answer(line) if line else None
        return ask_at_terminal(run, self.out)


class TreeView:
    """One line per agent with its state; on a terminal the block is redrawn in place."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = bool(getattr(out, "isatty", lambda: False)())
        self.agents: dict[str, dict[str, Any]] = {}
        self.drawn = 0

    def update(self, chunk: dict[str, Any]) -> None:
        if chunk["type"] != "agent-state":
            return
        agent = chunk["agentId"]
        state = chunk["state"]
        before = self.agents.get(agent, {}).get("status")
        self.agents[agent] = state
        if self.live:
            self.draw()
        elif state["status"] != before:
            print(self.line(agent), file=self.out, flush=True)

    def depth(self, agent: str) -> int:
        depth, parent = 0, self.agents.get(agent, {}).get("parentId")
        while parent in self.agents:
            depth, parent = depth + 1, self.agents[parent].get("parentId")
        return depth

    def line(self, agent: str) -> str:
        state = self.agents[agent]
        content = " ".join(str(state.get("userContent", "")).split())[:70]
        return f"{'  ' * self.depth(agent)}{state['status']:<13} {agent[:8]}  {content}"

    def ordered(self) -> list[str]:
        roots = [a for a, s in self.agents.items() if s.get("parentId") not in self.agents]
        out: list[str] = []

        def walk(agent: str) -> None:
            out.append(agent)
            for child, state in self.agents.items():
                if state.get("parentId") == agent:
                    walk(child)

        for root in roots:
            walk(root)
        return out

    def clear(self) -> None:
        if self.live and self.drawn:
            self.out.write(f"\x1b[{self.drawn}A\x1b[J")
            self.out.flush()
            self.drawn = 0

    def draw(self) -> None:
        self.clear()
        lines = [self.line(a) for a in self.ordered()]
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()
        self.drawn = len(lines)


def tree_args(args: argparse.Namespace, corpus: str | None) -> dict[str, Any]:
    run_args: dict[str, Any] = {
        "prompt": args.prompt.strip(),
        "max_depth": args.max_depth,
        "max_subquestions": args.subquestions,
    }
    if corpus:
        run_args["corpus"] = corpus
    if args.tools:
        run_args["tools"] = [t.strip() for t in args.tools.split(",") if t.strip()]
    if args.answer:
        run_args["answer"] = args.answer
    return run_args


def check_assist_options(args: argparse.Namespace) -> None:
    if not args.prompt.strip():
        raise ValidationError('the request is empty; e.g. kforge assist "Plan a team offsite"')
    if not 0 <= args.subquestions <= 4:
        raise ValidationError(f"--subquestions must be 0 to 4 (got {args.subquestions})")
    if args.max_depth < 0:
        raise ValidationError(f"--max-depth must be 0 or more (got {args.max_depth})")
    if args.max_steps < 1:
        raise ValidationError("--max-steps must be at least 1")
    if args.no_docs and (args.docs or args.corpus):
        raise ValidationError("--no-docs cannot be combined with --docs or --corpus")


async def drive_tree(rt: Runtime, root: str, answers: Answers, view: TreeView) -> RunRecord:
    """Show the tree until its root ends, answering what parked agents wait on."""
    while True:
        async for chunk in rt.stream(root, follow=False):
            view.update(chunk)
        run = rt.get_run(root)
        if run.status in TERMINAL_STATUSES:
            return run
        tree = rt.agent_tree(root)
        active = [a for a in tree if rt.is_active(a)]
        if active:
            await rt.wait(active[0])
            continue
        waiting = [a for a, node in tree.items() if node["runStatus"] == "awaiting_user"]
        if not waiting:
            return run
        for agent in waiting:
            answer = answers.for_pending(rt.get_run(agent))
            if answer is None:
                return rt.get_run(agent)
            await rt.resume(agent, answer)


def cmd_assist(args: argparse.Namespace) -> int:
    from kforge.cli.corpora import choose_corpus
    from kforge.engine.limits import RunLimits
    from kforge.tools.approval import ApprovalPolicy

    check_assist_options(args)
    out = sys.stderr

    async def go() -> RunRecord:
        rt = open_runtime(args)
        check_tools(rt, tool_names(args.tools), "--tools")
        answers = Answers(args, out)
        if args.yes:
            rt.services = replace(rt.services, approval=ApprovalPolicy.of(auto_approve=True))
        corpus = None if args.no_docs else choose_corpus(rt, args, out)
        view = answers.view = TreeView(out)
        rt.set_query_user_handler(answers.ask)
        root = await rt.start(
            "tree", tree_args(args, corpus), limits=RunLimits(max_steps=args.max_steps)
        )
        print(f"run {root}", file=out, flush=True)
        run = await drive_tree(rt, root, answers, view)
        view.clear()
        if view.live:
            view.draw()
        return run

    run = run_interruptible(go(), args)
    if run.status == RunStatus.COMPLETED:
        from kforge.runtime.answers import answer_text

        print(answer_text(run))
        return EXIT_OK
    if run.status == RunStatus.AWAITING_USER:
        prompt = (run.pending_interaction or {}).get("prompt", "")
        print(
            f"\nagent {run.id} is waiting: {prompt}\n"
            f"answer with: {command_hint(args, f'runs resume {run.id} --answer TEXT')}",
            file=out,
        )
        return EXIT_WAITING
    if run.status == RunStatus.PAUSED:
        print(
            f"\nrun {run.id} paused ({run.pause_reason}); continue with: "
            f"{command_hint(args, f'runs resume {run.id}')}",
            file=out,
        )
        return EXIT_LIMIT
    print(f"kforge: error: run {run.id} {run.status.value}: {run.error or ''}", file=out)
    return EXIT_ERROR
