"""An OpenAI-compatible endpoint on 127.0.0.1 that replies as ``TreeScript`` does, for driving
``kforge assist`` end to end in a subprocess; it can hold the answer call of one request."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from kforge.llm.testing.function import CallInfo
from kforge.llm.types import Message
from tests.agents.tree_model import TreeScript, request_of
from tests.cli.function_endpoint import FunctionEndpoint

__all__ = ["TreeEndpoint"]


class TreeEndpoint(FunctionEndpoint):
    def __init__(self, script: TreeScript, *, hold: str | None = None) -> None:
        super().__init__(self._script_reply)
        self.script = script
        self.hold = hold
        """A request whose answer call waits until ``release`` is set."""
        self.held = threading.Event()

    def _script_reply(self, raw: list[dict[str, Any]], schema: dict[str, Any] | None) -> Any:
        messages = [Message(m["role"], m.get("content") or "") for m in raw]
        reply = asyncio.run(self.script(messages, CallInfo((), schema, None, 0)))
        if self.hold is not None and not schema and request_of(messages) == self.hold:
            self.held.set()
            self.release.wait(60)
        return reply
