"""The documents part of the store conformance suite (``kforge.store.conformance``): what both
a run log and a passage store keep beside their own records."""

from __future__ import annotations

from typing import NoReturn

from kforge.store.documents import DocumentStore

__all__ = ["DocumentStoreConformance", "override_store"]


def override_store(suite: object) -> NoReturn:
    """What a suite's own ``store`` fixture does: say that the subclass must give one."""
    raise NotImplementedError(
        f"{type(suite).__name__} must override the 'store' fixture with a new, empty store "
        "(see kforge.store.conformance)"
    )


class DocumentStoreConformance:
    """What every ``DocumentStore`` must do; the subclass gives the ``store`` fixture."""

    def test_documents(self, store: DocumentStore) -> None:
        store.put_docs("ns", {"a": {"v": 1}, "b": {"v": 2}})
        store.put_docs("other", {"a": {"v": 3}})
        assert store.get_docs("ns") == {"a": {"v": 1}, "b": {"v": 2}}
        assert store.get_docs("ns", ["b", "zzz"]) == {"b": {"v": 2}}
        store.put_docs("ns", {"b": {"v": 5}})
        assert store.get_docs("ns", ["b"]) == {"b": {"v": 5}}
        store.delete_docs("ns", ["a"])
        assert store.get_docs("ns") == {"b": {"v": 5}}
        store.delete_docs("ns")
        assert store.get_docs("ns") == {}
        assert store.get_docs("other") == {"a": {"v": 3}}
