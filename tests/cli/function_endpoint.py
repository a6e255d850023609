"""An OpenAI-compatible endpoint on 127.0.0.1 whose replies a test function chooses from the
messages and the requested JSON Schema, for driving a command end to end in a subprocess."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kforge.llm.types import ToolCall
from tests.cli.schema_endpoint import SchemaEndpoint

__all__ = ["FunctionEndpoint", "Reply"]

Reply = Callable[[list[dict[str, Any]], dict[str, Any] | None], Any]
"""(messages, schema or None) -> a JSON value for a schema, text, or a ``ToolCall``."""


class FunctionEndpoint(SchemaEndpoint):
    def __init__(self, reply: Reply) -> None:
        super().__init__()
        self.reply = reply
        self.requests: list[dict[str, Any]] = []

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        value = self.reply(list(body["messages"]), schema)
        if isinstance(value, ToolCall):
            call = {
                "id": value.id,
                "type": "function",
                "function": {"name": value.name, "arguments": json.dumps(value.arguments)},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            message = {"role": "assistant", "content": text}
        return 200, {
            "id": "chatcmpl-function",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
