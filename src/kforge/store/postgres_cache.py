"""Whole blocks of the PostgreSQL passage index that earlier searches read, kept in this process
for later ones (``postgres_search``).

A long query reads the postings of its common terms, megabytes of them, and the same common
terms come back query after query: each read costs the server the block's out-of-line pages
and the client the bytes. A block never changes once written (a merge or a purge writes new
ones under new ids), so its bytes stay right for as long as a search's first read still names
it: a search takes from here the blocks that read names and that are here, asks the server
only for the others, and forgets the blocks of its terms the read no longer names. The blocks
kept take at most ``budget`` bytes; the least recently used go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

__all__ = ["CACHE_BYTES", "BlockCache"]

CACHE_BYTES = 64 << 20
"""Bytes of blocks a passage store keeps by default (the postings of about eight million
passage terms)."""


class BlockCache:
    """Whole blocks by id, each under its index and term, at most ``budget`` bytes in all (0
    keeps none); safe to share between threads."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self.budget = budget
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        self._owner: dict[int, tuple[str, str]] = {}
        self._ids: dict[tuple[str, str], set[int]] = {}
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes of the blocks kept."""
        return self._size

    def ids(self, index: str, terms: Iterable[str]) -> list[int]:
        """The ids of the blocks kept of ``terms`` of ``index``."""
        with self._lock:
            return [i for t in terms for i in self._ids.get((index, t), ())]

    def take(self, index: str, named: Mapping[str, Iterable[int]]) -> dict[int, bytes]:
        """The blocks kept among those ``named`` (term -> the ids of all its blocks, as a
        search's first read found them), now the most recently used; blocks of those terms
        not named are gone from the index and are forgotten."""
        found: dict[int, bytes] = {}
        with self._lock:
            for term, current in named.items():
                held = self._ids.get((index, term))
                if not held:
                    continue
                wanted = set(current)
                for block in list(held):
                    if block in wanted:
                        self._blocks.move_to_end(block)
                        found[block] = self._blocks[block]
                    else:
                        self._drop(block)
        return found

    def put(self, index: str, term: str, block: int, data: bytes) -> None:
        """Keep block ``block`` (of ``term`` of ``index``, all its records), making room for
        it; a block larger than the whole budget is not kept."""
        if len(data) > self.budget:
            return
        with self._lock:
            if block in self._blocks:
                self._blocks.move_to_end(block)
                return
            while self._blocks and self._size + len(data) > self.budget:
                self._drop(next(iter(self._blocks)))
            self._blocks[block] = data
            self._owner[block] = (index, term)
            self._ids.setdefault((index, term), set()).add(block)
            self._size += len(data)

    def clear(self) -> None:
        """Forget every block."""
        with self._lock:
            self._blocks.clear()
            self._owner.clear()
            self._ids.clear()
            self._size = 0

    def _drop(self, block: int) -> None:
        data = self._blocks.pop(block)
        key = self._owner.pop(block)
        held = self._ids[key]
        held.discard(block)
        if not held:
            del self._ids[key]
        self._size -= len(data)
