"""``kforge understand``: learn a topic from local documents with the Understand agent.

Questions are asked at the terminal; ``--answers FILE`` answers them from a file instead, for
runs with nobody at the keyboard. The file is UTF-8 text with one answer per line, in the order
the questions come; blank lines and lines starting with ``#`` are skipped. A line that is
``approve``, ``reject`` or a JSON object answers the next checkpoint; a checkpoint with no such
line next is approved. When the file runs out, the remaining questions are asked at the terminal
(or the run waits, exit code 3, for ``kforge runs resume``).
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from pathlib import Path
from typing import Any

from kforge.cli._common import add_document_options, check_writable, open_runtime, run_interruptible
from kforge.cli._follow import drive_run, parse_answer, report_outcome, report_path
from kforge.cli.corpora import choose_corpus
from kforge.errors import ConfigurationError, ValidationError
from kforge.store.base import RunRecord

__all__ = ["AnswerFile", "register"]


class AnswerFile:
    """Answers read from a file, handed out in order (see the module doc for the format)."""

    def __init__(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigurationError(f"answers file {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read answers file {path}: {exc}") from None
        self.path = path
        self.lines = deque(
            line.strip()
            for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        )

    def __call__(self, run: RunRecord) -> Any:
        pending = run.pending_interaction or {}
        options = list(pending.get("options") or [])
        prompt = pending.get("prompt", "")
        if options:
            if self.lines and (self.lines[0] in options or self.lines[0].startswith("{")):
                answer = parse_answer(self.lines.popleft())
                source = f"from {self.path.name}"
            else:
                answer = {"action": "approve"}
                source = f"approved: no checkpoint answer next in {self.path.name}"
            print(f"  ? {prompt}\n  > {_shown(answer)} ({source})", file=sys.stderr)
            return answer
        if not self.lines:
            return None
        line = self.lines.popleft()
        print(f"  ? {prompt}\n  > {line}", file=sys.stderr, flush=True)
        return parse_answer(line)


def _shown(answer: Any) -> str:
    return str(answer.get("action", answer)) if isinstance(answer, dict) else str(answer)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "understand",
        help="learn a topic from local documents: questions, cited explanations, checks",
        description="Run the Understand agent: it asks what you know, confirms it with you, "
        "derives learning objectives from the documents, explains each with citations and "
        "checks it with a question. Writes a learning record. Without --docs it uses the "
        "sample documents shipped with kforge.",
    )
    p.add_argument("topic", help="what you want to understand")
    add_document_options(p)
    p.add_argument(
        "--answers",
        metavar="FILE",
        help="answer the questions from FILE, one answer per line (a line 'approve', 'reject' "
        "or a JSON object answers a checkpoint; checkpoints without one are approved)",
    )
    p.add_argument("--yes", action="store_true", help="confirm the knowledge state without asking")
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="where to write the learning record (default: reports/understand-<run>.md)",
    )
    p.add_argument("--max-steps", type=int, default=80, help="step limit for the run (default 80)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every frame")
    p.set_defaults(func=cmd_understand)


def cmd_understand(args: argparse.Namespace) -> int:
    from kforge.engine.limits import RunLimits

    topic = " ".join(args.topic.split())
    if not topic:
        raise ValidationError(
            'the topic is empty; name one, e.g. kforge understand "human-in-the-loop design"'
        )
    if args.max_steps < 1:
        raise ValidationError("--max-steps must be at least 1")
    answers = AnswerFile(Path(args.answers)) if args.answers else None
    check_writable(report_path("understand", "x", args.output), make_parents=True)

    async def go() -> RunRecord:
        rt = open_runtime(args)
        name = choose_corpus(rt, args, sys.stderr)
        model = rt.model_for(rt._model_spec()).name
        print(f"learning with {model}: {topic}", file=sys.stderr, flush=True)
        run_args: dict[str, Any] = {"topic": topic, "corpus": name}
        if args.answer:
            run_args["answer"] = args.answer
        run_id = await rt.start("understand", run_args, limits=RunLimits(max_steps=args.max_steps))
        print(f"run {run_id}", file=sys.stderr, flush=True)
        return await drive_run(
            rt,
            run_id,
            out=sys.stderr,
            auto_approve=args.yes,
            verbose=args.verbose,
            answers=answers,
        )

    run = run_interruptible(go(), args)
    return report_outcome(run, args, output=args.output)
