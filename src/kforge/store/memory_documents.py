"""The in-memory stores' documents (``DocumentStore``), copied through JSON as a real store
would; a run log and a passage store opened together share one table of them."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from kforge.jsoncodec import dumps, loads

__all__ = ["MemoryDocuments"]


class MemoryDocuments:
    """``DocumentStore`` in a dictionary: its own, or ``beside``'s (one database)."""

    def __init__(self, *, beside: MemoryDocuments | None = None) -> None:
        self._docs: dict[str, dict[str, str]] = beside._docs if beside else {}
        self._docs_lock: threading.RLock = beside._docs_lock if beside else threading.RLock()

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        with self._docs_lock:
            space = self._docs.setdefault(namespace, {})
            for key, value in docs.items():
                space[key] = dumps(value)

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        with self._docs_lock:
            space = self._docs.get(namespace, {})
            wanted = sorted(space) if keys is None else [k for k in keys if k in space]
            return {k: loads(space[k]) for k in wanted}

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        with self._docs_lock:
            if keys is None:
                self._docs.pop(namespace, None)
                return
            space = self._docs.get(namespace, {})
            for key in keys:
                space.pop(key, None)
