"""An OpenAI-compatible endpoint on 127.0.0.1 that replies as ``TreeScript`` does, for driving
``kforge assist`` end to end in a subprocess; it can hold the answer call of one request."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from kforge.llm.function import CallInfo
from kforge.llm.types import Message
from tests.agents.tree_model import TreeScript, request_of
from tests.cli.schema_endpoint import SchemaEndpoint

__all__ = ["TreeEndpoint"]


class TreeEndpoint(SchemaEndpoint):
    def __init__(self, script: TreeScript, *, hold: str | None = None) -> None:
        super().__init__()
        self.script = script
        self.hold = hold
        """A request whose answer call waits until ``release`` is set."""
        self.held = threading.Event()

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = [Message(m["role"], m.get("content") or "") for m in body["messages"]]
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        info = CallInfo((), schema, None, 0)
        reply = asyncio.run(self.script(messages, info))
        if self.hold is not None and not schema and request_of(messages) == self.hold:
            self.held.set()
            self.release.wait(60)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return 200, {
            "id": "chatcmpl-tree",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
