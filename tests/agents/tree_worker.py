"""A separate process running a tree agent until its root's main execution, where it blocks.

usage: tree_worker.py [--hold-all] DB PROMPT SUBQUESTION...
Prints the root's run id on stdout, then ``blocked`` on stderr once the root is inside its main
execution step (its subquestions are committed and its subagents started); with ``--hold-all``,
once every subagent is inside its own main execution too. It then waits for ever, so a test can
intervene from outside and kill it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's kforge

from kforge.runtime import Runtime
from tests.agents.tree_model import TreeScript


async def main(db: str, prompt: str, subquestions: list[str], *, hold_all: bool) -> None:
    held = [prompt, *subquestions] if hold_all else [prompt]
    entered: list[str] = []

    def block(request: str) -> Callable[[], Awaitable[None]]:
        async def wait() -> None:
            entered.append(request)
            if len(entered) == len(held):
                print("blocked", file=sys.stderr, flush=True)
            await asyncio.Event().wait()

        return wait

    script = TreeScript(subquestions={prompt: subquestions}, gates={r: block(r) for r in held})
    rt = Runtime(db, model=script.model())
    run_id = await rt.start("tree", {"prompt": prompt})
    print(run_id, flush=True)
    await rt.wait(run_id)


if __name__ == "__main__":
    argv = sys.argv[1:]
    hold = argv[:1] == ["--hold-all"]
    argv = argv[1:] if hold else argv
    asyncio.run(main(argv[0], argv[1], argv[2:], hold_all=hold))
