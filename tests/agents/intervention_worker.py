"""A separate process running a tree agent that is steered between steps, then dies by SIGKILL.

usage: intervention_worker.py DB ACTION CONTENT KILL_AT
Prints the root's run id on stdout. During the agent's second model call it intervenes on its
own run (``ACTION``: modify or comment, with ``CONTENT``), so the intervention is taken at the
next step boundary; from then on it counts the writes to its database (commits of frames and
steps, inbox updates) and sends itself SIGKILL just before write number ``KILL_AT`` (0: never;
the run then completes and the process prints its status and how many writes it counted).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's kforge

from kforge.frames import Frame
from kforge.llm.testing.function import CallInfo, FunctionModel, FunctionReply
from kforge.llm.types import Message
from kforge.runtime import Intervention, Runtime
from kforge.store.sqlite import SQLiteStore
from tests.agents.tree_model import TreeScript

PROMPT = "Plan my birthday party"
STEERED_AT_CALL = 2
"""The model call during which the intervention is sent (the first step is the clarification)."""


class DyingStore(SQLiteStore):
    """Sends its process SIGKILL just before its ``kill_at``-th write once armed."""

    kill_at = 0
    writes: int | None = None
    """Writes since the store was armed (None: not armed)."""

    def _write(self) -> None:
        if self.writes is None:
            return
        self.writes += 1
        if self.writes == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def commit(self, run_id: str, frames: Sequence[Frame], **kwargs: Any) -> None:
        self._write()
        super().commit(run_id, frames, **kwargs)

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        self._write()
        super().put_docs(namespace, docs)

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        self._write()
        super().delete_docs(namespace, keys)


async def main(db: str, action: str, content: str, kill_at: int) -> None:
    store = DyingStore(db)
    store.kill_at = kill_at
    script = TreeScript()
    calls = 0
    runtime: Runtime | None = None
    run_id = ""

    async def reply(messages: list[Message], info: CallInfo) -> FunctionReply:
        nonlocal calls
        calls += 1
        if calls == STEERED_AT_CALL and runtime is not None:
            await runtime.intervene(run_id, Intervention(action=action, content=content))  # type: ignore[arg-type]
            store.writes = 0
        return await script(messages, info)

    runtime = Runtime(store, model=FunctionModel(reply, name="function:tree-script"))
    run_id = await runtime.start("tree", {"prompt": PROMPT})
    print(run_id, flush=True)
    run = await runtime.wait(run_id)
    print(run.status.value, store.writes, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
