"""``kforge tree RUN`` prints an agent tree; ``kforge intervene AGENT`` steers one agent."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from kforge import jsoncodec
from kforge.cli._common import EXIT_OK, find_run, open_store
from kforge.errors import ValidationError
from kforge.runtime.interventions import Intervention
from kforge.runtime.runtime import Runtime

__all__ = ["register", "tree_lines"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tree",
        help="show a run's agent tree: each agent, its state and its subagents",
        description="Print the agent tree under RUN (a full id or a unique prefix): one line "
        "per agent with its state (running, completed, deleted, modified, error, "
        "awaiting_user), its id and its task.",
    )
    p.add_argument("run", metavar="RUN", help="the run at the top of the tree")
    p.add_argument("--json", action="store_true", help="print the tree as JSON")
    p.set_defaults(func=cmd_tree)

    q = subparsers.add_parser(
        "intervene",
        help="delete, modify or comment on one agent of a tree",
        description="Steer an agent while it works. --delete stops it and its subagents at "
        "their next step (its parent reports the deletion); --modify TEXT gives it new "
        "instructions, and it re-plans from its current step; --comment TEXT is a note it "
        "reads at its next step. A waiting agent takes it when it next runs; a finished agent "
        "refuses it.",
    )
    q.add_argument("agent", metavar="AGENT", help="the agent's run id (or a unique prefix)")
    action = q.add_mutually_exclusive_group(required=True)
    action.add_argument("--delete", action="store_true", help="stop the agent and its subtree")
    action.add_argument("--modify", metavar="TEXT", help="new instructions for the agent")
    action.add_argument("--comment", metavar="TEXT", help="a note the agent sees next")
    q.set_defaults(func=cmd_intervene)


def tree_lines(tree: dict[str, dict[str, Any]]) -> list[str]:
    """One line per agent, subagents indented under their parent."""
    lines: list[str] = []

    def walk(agent: str, depth: int) -> None:
        node = tree[agent]
        task = " ".join(str(node.get("userContent", "")).split())[:80]
        lines.append(f"{'  ' * depth}{node['status']:<13} {agent[:8]}  {task}{_said(node)}")
        for child in node["subagents"]:
            if child in tree:
                walk(child, depth + 1)

    if tree:
        walk(next(iter(tree)), 0)
    return lines


def _said(node: dict[str, Any]) -> str:
    """The agent's latest intervention: its action, and a comment's text whole (it is what a
    person told the agent), marked as a comment even when its words are an action's."""
    typed = node.get("intervention")
    if isinstance(typed, dict):
        if typed.get("action") == "comment":
            return f"  [comment: {' '.join(str(typed.get('content', '')).split())}]"
        return f"  [{typed.get('action')}]"
    comment = node.get("userComment", "unchanged")
    return "" if comment == "unchanged" else f"  [{' '.join(str(comment).split())}]"


def cmd_tree(args: argparse.Namespace) -> int:
    store = open_store(args, read_only=True)
    run = find_run(store, args.run)
    tree = Runtime(store).agent_tree(run.id)
    if args.json:
        print(jsoncodec.dumps(tree, indent=True))
    else:
        print("\n".join(tree_lines(tree)))
    return EXIT_OK


def cmd_intervene(args: argparse.Namespace) -> int:
    store = open_store(args)
    run = find_run(store, args.agent)
    runtime = Runtime(store)
    for flag, text in (("--modify", args.modify), ("--comment", args.comment)):
        if text is not None and not text.strip():
            raise ValidationError(f"{flag} needs text: the agent's new instructions or a note")
    if args.delete:
        intervention = Intervention.delete()
    elif args.modify is not None:
        intervention = Intervention.modify(args.modify)
    else:
        intervention = Intervention.comment(args.comment)
    outcome = asyncio.run(runtime.intervene(run.id, intervention))
    when = (
        "applied now" if outcome["applied"] == "now" else "it takes effect at the agent's next step"
    )
    print(f"{outcome['action']} recorded for agent {run.id}: {when}", file=sys.stderr)
    return EXIT_OK
