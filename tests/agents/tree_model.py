"""A scripted model for the tree agent's tests: replies chosen by the decision asked (the system
prompt) and the request the agent works on, with gates that hold a call until a test lets go."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from kforge.agents.tree import prompts
from kforge.llm.testing.function import CallInfo, FunctionModel, FunctionReply
from kforge.llm.types import Message, ToolCall

Gate = Callable[[], Awaitable[None]]


def request_of(messages: list[Message]) -> str:
    for message in messages:
        found = re.search(r"Request: (.*)", message.content)
        if found:
            return found.group(1).strip()
    return messages[-1].content


class TreeScript:
    """``ambiguous``: requests whose clarification check says ambiguous; ``missing``: per
    request, the questions asked round after round; ``subquestions``: per request; ``resolve``:
    requests whose summary asks one last question; ``gates``: per request, awaited before its
    answer is written; ``code``: per request, Python the main execution runs first;
    ``tool_calls``: per request, a tool call the main execution makes first."""

    def __init__(
        self,
        *,
        ambiguous: tuple[str, ...] = (),
        missing: dict[str, list[str]] | None = None,
        subquestions: dict[str, list[str]] | None = None,
        resolve: tuple[str, ...] = (),
        gates: dict[str, Gate] | None = None,
        code: dict[str, str] | None = None,
        tool_calls: dict[str, ToolCall] | None = None,
    ) -> None:
        self.ambiguous = ambiguous
        self.missing = {k: list(v) for k, v in (missing or {}).items()}
        self.subquestions = subquestions or {}
        self.resolve = resolve
        self.gates = gates or {}
        self.tool_calls = dict(tool_calls or {})
        for request, source in (code or {}).items():
            self.tool_calls[request] = ToolCall("python", {"code": source}, "call-1")
        self.calls: list[tuple[str, str]] = []
        """(decision, request) per call, in order."""
        self.seen: list[str] = []
        """The user message of every answer call."""

    def model(self) -> FunctionModel:
        return FunctionModel(self, name="function:tree-script")

    async def __call__(self, messages: list[Message], info: CallInfo) -> FunctionReply:
        system = messages[0].content
        request = request_of(messages)
        if system == prompts.CLARIFY_PROMPT:
            self.calls.append(("clarify", request))
            hit = request in self.ambiguous
            return {"ambiguous": hit, "question": "Which party do you mean exactly?" if hit else ""}
        if system == prompts.MISSING_PROMPT:
            self.calls.append(("questions", request))
            left = self.missing.get(request) or []
            if left:
                return {"missing": True, "question": left.pop(0)}
            return {"missing": False, "question": ""}
        if system.startswith("Split the user's request"):
            self.calls.append(("subquestions", request))
            return {"subquestions": list(self.subquestions.get(request, []))}
        if system == prompts.RESOLVE_PROMPT:
            self.calls.append(("resolve", request))
            hit = request in self.resolve
            return {"ask": hit, "question": "Should I book the venue anyway?" if hit else ""}
        self.calls.append(("answer", request))
        self.seen.append(messages[-1].content)
        if request in self.tool_calls and info.tools and messages[-1].role == "user":
            return self.tool_calls[request]
        gate = self.gates.get(request)
        if gate is not None:
            await gate()
        notes = re.findall(r"Note from the user: (.*)", messages[1].content)
        tool_output = [m.content for m in messages if m.role == "tool"]
        extra = "".join(f" Noted: {n}." for n in notes)
        extra += "".join(f" Tool said: {t.strip()}." for t in tool_output)
        return f"Answer about {request}.{extra}"


class Gates:
    """Per-request gates: ``entered(r)`` is set when the call arrives, the call goes on once
    ``release(r)`` is called."""

    def __init__(self) -> None:
        self._entered: dict[str, asyncio.Event] = {}
        self._open: dict[str, asyncio.Event] = {}

    def gate(self, request: str) -> Gate:
        self._entered.setdefault(request, asyncio.Event())
        self._open.setdefault(request, asyncio.Event())

        async def wait() -> None:
            self._entered[request].set()
            await self._open[request].wait()

        return wait

    async def entered(self, request: str) -> None:
        await asyncio.wait_for(self._entered[request].wait(), 60)

    def release(self, request: str) -> None:
        self._open[request].set()


def barrier_gate(barrier: asyncio.Barrier) -> Gate:
    async def wait() -> None:
        await asyncio.wait_for(barrier.wait(), 60)

    return wait


def phases(frames: list[Any]) -> list[str]:
    return [f.to_phase for f in frames if f.type == "phase.changed"]


@contextlib.asynccontextmanager
async def held_worker(
    db: Path, prompt: str, subquestions: list[str], *, hold_all: bool = False
) -> AsyncIterator[str]:
    """A tree run in another process (``tree_worker.py``), held inside its main execution (with
    ``hold_all``, every subagent inside its own too): yields the root's id, then SIGKILLs it."""
    worker = Path(__file__).with_name("tree_worker.py")
    hold = ["--hold-all"] if hold_all else []
    proc = subprocess.Popen(
        [sys.executable, str(worker), *hold, str(db), prompt, *subquestions],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        root = proc.stdout.readline().strip()
        line = await asyncio.to_thread(proc.stderr.readline)
        assert line.strip() == "blocked", line + proc.stderr.read()
        yield root
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
