"""Namespaced JSON documents: the small records both halves of a store keep beside their own
(the run log its interventions inbox and workers, the passage store its corpus catalog)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from kforge.errors import StateCorruptionError
from kforge.jsoncodec import loads

__all__ = ["DocumentStore", "read_docs"]


class DocumentStore(Protocol):
    """JSON documents by namespace and key; every write is one transaction."""

    def put_docs(self, namespace: str, docs: dict[str, dict[str, Any]]) -> None:
        """Add or replace ``docs`` (key -> document) in ``namespace``."""
        ...

    def get_docs(
        self, namespace: str, keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """All documents of a namespace, or just ``keys`` (those that exist), by key."""
        ...

    def delete_docs(self, namespace: str, keys: Iterable[str] | None = None) -> None:
        """Delete ``keys``, or the whole namespace."""
        ...


def read_docs(namespace: str, rows: Iterable[tuple[str, str | bytes]]) -> dict[str, dict[str, Any]]:
    """Stored ``(key, JSON)`` rows of ``namespace`` as documents by key; a damaged one is a
    ``StateCorruptionError`` that says how to rebuild it."""
    try:
        return {key: loads(value) for key, value in rows}
    except ValueError as exc:
        raise StateCorruptionError(
            f"a stored document of '{namespace}' is damaged ({exc}); rebuild it (for a "
            "corpus: kforge ingest again)"
        ) from exc
