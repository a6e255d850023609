"""A separate process running a tree agent until its root's main execution, where it blocks.

usage: tree_worker.py DB PROMPT SUBQUESTION...
Prints the root's run id on stdout, then ``blocked`` on stderr once the root is inside its main
execution step (its subquestions are committed and its subagents started); it then waits for
ever, so a test can intervene from outside and kill it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's kforge

from kforge.runtime import Runtime
from tests.agents.tree_model import TreeScript


async def main(db: str, prompt: str, subquestions: list[str]) -> None:
    async def block() -> None:
        print("blocked", file=sys.stderr, flush=True)
        await asyncio.Event().wait()

    script = TreeScript(subquestions={prompt: subquestions}, gates={prompt: block})
    rt = Runtime(db, model=script.model())
    run_id = await rt.start("tree", {"prompt": prompt})
    print(run_id, flush=True)
    await rt.wait(run_id)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
