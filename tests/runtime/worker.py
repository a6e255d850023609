"""A separate process that starts or resumes a run, for the crash-and-resume tests.

usage: worker.py DB start AGENT_TYPE ARGS_JSON REPLIES_JSON   (DB: a SQLite file or a PostgreSQL URL)
       worker.py DB resume RUN_ID REPLIES_JSON [ANSWER_JSON]
Prints the run id, then the status the stretch ended with; on stderr, ``model call N`` as each
model call begins (so every earlier step is committed). WORKER_DELAY (seconds) slows each model
call so that a kill from outside lands mid-run. With WORKER_GATE=1 the first model call waits for
a line on standard input (the run id is printed once the resume is durable), so a test can hold
the run live while it tries something else. An error ends the process with code 3 after printing
``error TYPE: MESSAGE``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's kforge

from kforge.errors import ForgeError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.runtime import Runtime
from kforge.store.open import open_store
from tests.engine.sample_agents import make_registry


class SlowScripted(ScriptedModel):
    gated = os.environ.get("WORKER_GATE") == "1"
    began = 0

    async def complete(
        self, messages: Sequence[Message], settings: ModelSettings | None = None, **kw: Any
    ) -> ModelResponse:
        self.began += 1
        print(f"model call {self.began}", file=sys.stderr, flush=True)
        if self.gated:
            self.gated = False
            await asyncio.to_thread(sys.stdin.readline)
        await asyncio.sleep(float(os.environ.get("WORKER_DELAY", "0")))
        return await super().complete(messages, settings, **kw)


async def main(argv: list[str]) -> None:
    db, mode = argv[0], argv[1]
    replies = json.loads(argv[4] if mode == "start" else argv[3])
    model = SlowScripted(replies)
    rt = Runtime(open_store(db), model=model, registry=make_registry())
    if mode == "start":
        run_id = await rt.start(argv[2], json.loads(argv[3]))
    else:
        run_id = argv[2]
        answer = json.loads(argv[4]) if len(argv) > 4 else None
        await rt.resume(run_id, answer, durable=True)
    print(run_id, flush=True)
    run = await rt.wait(run_id)
    print(run.status.value, flush=True)
    if run.error:
        print(run.error, flush=True)
    model.assert_consumed()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1:]))
    except ForgeError as exc:
        print(f"error {type(exc).__name__}: {exc}", flush=True)
        sys.exit(3)
