"""A small LRU cache of results of read-only, idempotent tools, keyed by name and arguments."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from kforge import jsoncodec
from kforge.tools.result import ToolResult

__all__ = ["ToolResultCache"]


class ToolResultCache:
    def __init__(self, max_entries: int = 256, ttl_s: float | None = None) -> None:
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[str, tuple[float, ToolResult]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(tool_name: str, arguments: dict[str, Any]) -> str:
        return tool_name + "\x00" + jsoncodec.dumps(arguments, sort_keys=True, default=str)

    def get(self, tool_name: str, arguments: dict[str, Any]) -> ToolResult | None:
        key = self.key(tool_name, arguments)
        entry = self._entries.get(key)
        if entry is None or (self.ttl_s is not None and time.monotonic() - entry[0] > self.ttl_s):
            self._entries.pop(key, None)
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[1]

    def put(self, tool_name: str, arguments: dict[str, Any], result: ToolResult) -> None:
        if result.is_error:
            return
        key = self.key(tool_name, arguments)
        self._entries[key] = (time.monotonic(), result)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
