"""A separate process that starts or resumes an Understand or Build run, for kill/resume tests.

usage: knowledge_worker.py DB LOG AGENT ARGS_JSON [RUN_ID]

Starts a run of AGENT (``understand`` or ``build``) with ARGS_JSON, or resumes RUN_ID, and
answers its interactions (checkpoints approved, questions answered) until it ends; prints the
run id, then its final status. Each real model call, sandbox check and file write is appended
to LOG as one line (``model SCHEMA HASH``, ``check CODE-HASH``, ``write PATH``), so a test can
tell what was done again. KILL_AT=NAME:N kills the process with SIGKILL at the N-th model call
asking for NAME (a name of ``knowledge_scripts.schema_name``), before it replies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's kforge

from kforge.agents.build import making as build_making
from kforge.agents.build.workspace import Workspace
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore
from kforge.tools.builtin.python import PythonTool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext
from tests.agents.knowledge_scripts import BuildScript, UnderstandScript, schema_name


def main(argv: list[str]) -> None:
    db, log, agent, args = argv[0], Path(argv[1]), argv[2], json.loads(argv[3])
    run_id = argv[4] if len(argv) > 4 else None
    kill_name, _, kill_n = os.environ.get("KILL_AT", "").partition(":")
    seen: dict[str, int] = {}

    def note(line: str) -> None:
        with log.open("a", encoding="utf-8") as f:
            f.write(line + "\n")

    # the model is one across processes: what it did once before the kill it does not do again
    before = log.read_text(encoding="utf-8") if log.exists() else ""
    script: Any = (
        UnderstandScript(fail_once="model grade" not in before)
        if agent == "understand"
        else BuildScript(broken_once="model code" not in before)
    )
    root = str(Path(db).resolve().parent)

    def reply(messages: list[Message], info: CallInfo) -> Any:
        name = schema_name(info)
        seen[name] = seen.get(name, 0) + 1
        if name == kill_name and seen[name] == int(kill_n):
            os.kill(os.getpid(), signal.SIGKILL)
        content = messages[-1].content.replace(root, "ROOT")  # the same in every folder
        note(f"model {name} {hashlib.sha256(content.encode()).hexdigest()[:12]}")
        return script(messages, info)

    class CountedPython(PythonTool):
        async def execute(
            self, arguments: dict[str, Any], context: ToolContext | None = None
        ) -> ToolResult:
            note(f"check {hashlib.sha256(str(arguments['code']).encode()).hexdigest()[:12]}")
            return await super().execute(arguments, context)

    write = Workspace.write

    def counted_write(self: Workspace, relative: str, content: str) -> dict[str, Any]:
        record = write(self, relative, content)
        if record["written"]:
            note(f"write {relative}")
        return record

    build_making.PythonTool = CountedPython  # type: ignore[misc]
    Workspace.write = counted_write  # type: ignore[method-assign]

    async def go() -> None:
        rt = Runtime(SQLiteStore(db), model=FunctionModel(reply))
        if run_id is None:
            from kforge.rag.ingest import ingest_folder

            ingest_folder(rt.services.corpus("docs"), Path(args.pop("docs_folder")))
            current = await rt.start(agent, args)
        else:
            current = run_id
            if rt.get_run(current).status != RunStatus.AWAITING_USER:
                await rt.resume(current, None, durable=True)
        print(current, flush=True)
        run = await rt.wait(current)
        while run.status == RunStatus.AWAITING_USER:
            pending = run.pending_interaction or {}
            answer = (
                "approve"
                if pending.get("kind") == "checkpoint"
                else "a person approves, modifies or rejects the plan while the run waits"
            )
            await rt.resume(current, answer)
            run = await rt.wait(current)
        print(run.status.value, flush=True)
        if run.error:
            print(run.error, flush=True)

    asyncio.run(go())


if __name__ == "__main__":
    main(sys.argv[1:])
