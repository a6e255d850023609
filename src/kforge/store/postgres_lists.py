"""A PostgreSQL search's view of one term's blocks as one list in passage order: which stretches
of it can hold a search's candidate passages, and its shares of their scores.

A term gathers up to ``(FANOUT - 1) * log_FANOUT(w)`` blocks after ``w`` writes (about twenty
at 500 writes); each write's passages follow the last write's, so the blocks of a term are
stretches of one list in passage order. Planning reads and summing shares over that list, not
block by block, costs a few numpy calls a term however many blocks it has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kforge.store.postgres_postings import SKIP, record_dtype

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "GAP",
    "WHOLE_SHARE",
    "Block",
    "TermList",
    "add_shares",
    "distinct_rows",
    "shares",
    "term_lists",
]

WHOLE_SHARE = 0.1
"""A block is read whole when the stretches a search wants of it hold this share of it."""

GAP = 8
"""Stretches this many apart or nearer are read as one (each read costs the server a lookup)."""

_DENSE_HITS = 4
"""``add_shares`` finds candidates among records by a table of positions once they number one
in this many records or more and the records span at most ``_DENSE_SPAN`` passages each
(the table's size), else by binary search."""
_DENSE_SPAN = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """What a search knows of a block before reading its records."""

    id: int
    term: str
    wide: bool
    postings: int
    skips: npt.NDArray[np.int64]
    """The passage of every ``SKIP``-th record; empty when the records are not in passage
    order (the block is then read whole)."""
    last: int
    """The passage of its last record."""

    @property
    def size(self) -> int:
        """Bytes of its records."""
        return self.postings * record_dtype(self.wide).itemsize


class TermList:
    """The blocks of one term of one record width (a passage's posting of the term lies in one
    block): ``ordered`` when each is in passage order and none overlaps another, so that
    their records, block after block, are in passage order."""

    def __init__(self, term: str, wide: bool, blocks: Sequence[Block]) -> None:
        import numpy as np

        self.term, self.wide = term, wide
        self.blocks = sorted(blocks, key=lambda b: int(b.skips[0]) if len(b.skips) else -1)
        self.ordered = all(len(b.skips) for b in self.blocks) and all(
            a.last < int(b.skips[0]) for a, b in zip(self.blocks, self.blocks[1:], strict=False)
        )
        self.itemsize = record_dtype(wide).itemsize
        self._positions = {b.id: n for n, b in enumerate(self.blocks)}
        if self.ordered:
            counts = [len(b.skips) for b in self.blocks]
            self._skips = np.concatenate([b.skips for b in self.blocks])
            self._owner = np.repeat(np.arange(len(self.blocks)), counts)
            self._first = np.cumsum(counts) - counts
            self._postings = np.array([b.postings for b in self.blocks])
            self._last = np.array([b.last for b in self.blocks], dtype=np.int64)
            # past each stretch: the next one's first passage, or past its block's last
            self._ends = np.append(self._skips[1:], 0)
            block_end = np.append(self._owner[1:] != self._owner[:-1], True)
            self._ends[block_end] = self._last[self._owner[block_end]] + 1

    def stretches(
        self, rows: npt.NDArray[np.int64], read: Iterable[int]
    ) -> list[tuple[Block, int, int]]:
        """``(block, first byte (from 1), bytes)`` of the parts of the blocks not in ``read``
        (block ids) that can hold ``rows`` (ascending): runs of the stretches the skip lists
        point at, or a whole block when it has none or they would cover much of it."""
        import numpy as np

        done = set(read)
        if not self.ordered:
            return [(b, 1, b.size) for b in self.blocks if b.id not in done]
        at = self.holding(rows)
        owner = self._owner[at]
        counts = np.bincount(owner, minlength=len(self.blocks))
        whole = counts * SKIP >= WHOLE_SHARE * self._postings
        skipped = np.array([b.id in done for b in self.blocks], dtype=bool)
        found = [
            (self.blocks[i], 1, self.blocks[i].size)
            for i in np.flatnonzero(whole & (counts > 0) & ~skipped).tolist()
        ]
        keep = ~(whole | skipped)[owner]
        at, owner = at[keep], owner[keep]
        if not len(at):
            return found
        local = at - self._first[owner]
        # stretches a few apart are cheaper read as one (the server looks each read up)
        starts = np.ones(len(at), dtype=bool)
        starts[1:] = (owner[1:] != owner[:-1]) | (np.diff(local) > GAP + 1)
        first = np.flatnonzero(starts)
        end = np.append(first[1:], len(at)) - 1
        step = SKIP * self.itemsize
        for block, start, stop in zip(
            owner[first].tolist(), local[first].tolist(), local[end].tolist(), strict=True
        ):
            found.append((self.blocks[block], start * step + 1, (stop - start + 1) * step))
        return found

    def holding(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The stretches (ascending, numbered through the list's skip lists) that can hold
        some of ``rows`` (ascending) of an ordered list."""
        import numpy as np

        if len(rows) > len(self._skips):
            # more rows than stretches: each stretch counts the rows it can hold
            held = np.searchsorted(rows, self._ends) - np.searchsorted(rows, self._skips)
            return np.flatnonzero(held > 0)
        at = np.searchsorted(self._skips, rows, side="right") - 1
        inside = at >= 0
        inside[inside] = rows[inside] <= self._last[self._owner[at[inside]]]
        at = at[inside]  # ascending, as ``rows`` are
        if len(at) > 1:
            at = at[np.append(True, at[1:] != at[:-1])]
        return at

    def position(self, block: Block) -> int:
        """Where ``block`` lies in the list (the order its records come in)."""
        return self._positions[block.id]

    def records(self, pieces: Sequence[bytes | memoryview]) -> Any:
        """The records of ``pieces`` (consecutive parts of the list, in list order), in passage
        order."""
        import numpy as np

        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        records = np.frombuffer(data, dtype=record_dtype(self.wide))
        at = records["passage"]
        if not self.ordered and len(at) > 1 and not bool(np.all(at[1:] > at[:-1])):
            records = records[np.argsort(at, kind="stable")]
        return records


def add_shares(
    extra: npt.NDArray[np.float64],
    rows: npt.NDArray[np.int64],
    records: Any,
    weight: float,
    base: float,
    slope: float,
) -> None:
    """Add to ``extra[i]`` the term's share of the score of ``rows[i]`` (ascending), for the
    rows ``records`` (in passage order) hold."""
    import numpy as np

    if not len(records):
        return
    at = records["passage"]
    low = int(np.searchsorted(rows, int(at[0]), side="left"))
    high = int(np.searchsorted(rows, int(at[-1]), side="right"))
    held = rows[low:high]
    first, span = int(at[0]), int(at[-1]) - int(at[0]) + 1
    where: npt.NDArray[Any]
    if len(held) * _DENSE_HITS >= len(at) and span <= _DENSE_SPAN * len(at):
        # many candidates among records close together: each record's position by passage,
        # from a table over their span, costs less than a binary search a candidate
        position = np.full(span, -1, dtype=np.int32)
        position[at.astype(np.int64) - first] = np.arange(len(at), dtype=np.int32)
        where = position[held - first]
        hit = where >= 0
    else:
        # searched as stored (big-endian): the candidates, fewer than the records, are converted
        where = np.searchsorted(at, held.astype(at.dtype))
        inside = where < len(at)
        hit = np.zeros(len(held), dtype=bool)
        hit[inside] = at[where[inside]] == held[inside]
    extra[low:high][hit] += shares(records, weight, base, slope, where[hit])


def distinct_rows(
    every: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``np.unique(every, return_inverse=True)`` for rows that come as a few ascending runs (a
    list's rows after another's): the distinct rows, ascending, and where each of ``every``
    is among them. A stable sort merges the runs as it finds them, several times faster than
    the sort ``np.unique`` makes."""
    import numpy as np

    if not len(every):
        return every, np.zeros(0, dtype=np.int64)
    order = np.argsort(every, kind="stable")
    ordered = every[order]
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    where = np.empty(len(ordered), dtype=np.int64)
    where[order] = np.cumsum(first) - 1
    return ordered[first], where


def term_lists(blocks: Iterable[Block]) -> list[TermList]:
    """``blocks`` as the lists of their terms (one a term and record width)."""
    groups: dict[tuple[str, bool], list[Block]] = {}
    for block in blocks:
        groups.setdefault((block.term, block.wide), []).append(block)
    return [TermList(term, wide, held) for (term, wide), held in groups.items()]


def shares(
    records: Any, weight: float, base: float, slope: float, which: Any = None
) -> npt.NDArray[np.float64]:
    """A term's share of each record's passage score: ``w * tf / (tf + base + slope * length)``,
    as ``passages.full_bm25`` and the other stores compute it; of the records ``which`` (an
    index or a mask) picks, when given. The fields are picked, not the records: numpy copies
    a picked record of a structured type field by field, several times the work."""
    import numpy as np

    tf, length = records["tf"], records["length"]
    if which is not None:
        tf, length = tf[which], length[which]
    tf = tf.astype(np.float64)
    # in place (a search sums hundreds of thousands of postings), in the order of the
    # expression above, so the scores are the same to the last bit
    part = length.astype(np.float64)
    part *= slope
    share = tf + base
    share += part
    tf *= weight
    np.divide(tf, share, out=share)
    return np.asarray(share, dtype=np.float64)
