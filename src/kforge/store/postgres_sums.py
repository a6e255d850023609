"""The sums of a PostgreSQL search's essential terms, a window of rows at a time.

A search sums the shares of every posting of its essential terms by row. Summed over the
whole span of rows at once, the sums alone would take 8 bytes a row of the corpus; here the
rows are taken ``WINDOW`` at a time (each term's records of the window come from its blocks'
skip lists: streamed, or cut out of blocks in memory) and a window keeps only the rows that
can still reach the floor, so a search holds one window's sums whatever the corpus.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kforge.store.postgres_lists import Block, TermList, distinct_rows, shares
from kforge.store.postgres_postings import SKIP
from kforge.store.postgres_reads import Part, batches

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["WINDOW", "kth_highest", "ordered_best", "window_sums"]

WINDOW = 1 << 16
"""Rows summed at a time (their sums take 512 KB)."""

_SPARSE = 4
"""A window holding fewer postings than one in this many of its rows sums them by row."""


def window_sums(
    conn: Any,
    ix: int,
    lists: Sequence[TermList],
    weights: Mapping[str, float],
    read: Mapping[int, bytes],
    names: dict[int, str],
    earlier: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]],
    base: float,
    slope: float,
    keep: tuple[float, float],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The rows (ascending) that ``earlier`` (rows and their sums) or the postings of
    ``lists`` (each block with a skip list) name, and each one's sum: its earlier sum, then
    each list's share in the order given (the same order for every row), of the rows whose
    sum is above 0 and reaches ``floor`` with ``left`` more (``keep``). Blocks in ``read`` (by
    id) are cut in memory, the others streamed on ``conn``."""
    import numpy as np

    rows, sums = earlier
    left, floor = keep
    blocks = [b for held in lists for b in held.blocks]
    low = min([int(b.skips[0]) for b in blocks] + rows[:1].tolist())
    high = max([b.last for b in blocks] + rows[-1:].tolist())
    plan: dict[tuple[int, int], list[memoryview]] = {}
    """The records in memory of each (window, list), by ``_cut``."""
    streamed: list[Part] = []
    keys: list[tuple[int, int]] = []
    postings: dict[int, int] = {}
    """About how many postings (and sums) each window holds."""
    windows = range(low // WINDOW, high // WINDOW + 1)
    cuts = [[_cuts(held, block, windows) for block in held.blocks] for held in lists]
    for window in windows:
        for n, held in enumerate(lists):
            for block, cut in zip(held.blocks, cuts[n], strict=True):
                part = cut.get(window)
                if part is None:
                    continue
                start, length = part
                postings[window] = postings.get(window, 0) + length // held.itemsize
                if block.id in read:
                    view = memoryview(read[block.id])[start - 1 : start - 1 + length]
                    plan.setdefault((window, n), []).append(view)
                else:
                    streamed.append((block, start, length))
                    keys.append((window, n))
    arriving = _Peek(batches(conn, ix, streamed, (), names, keys=keys))
    found_rows, found_sums = [], []
    for window in windows:
        first = window * WINDOW
        lo, hi = np.searchsorted(rows, [first, first + WINDOW])
        if not hi - lo + postings.get(window, 0):
            continue
        # few postings: summed over the rows they name, else over the window's every row
        sums_of = _Sparse(rows[lo:hi] - first, sums[lo:hi])
        if (hi - lo + postings.get(window, 0)) * _SPARSE >= WINDOW:
            sums_of = _Dense(sums_of)
        for n, held in enumerate(lists):
            pieces: list[Sequence[bytes | memoryview]] = []
            if (window, n) in plan:
                pieces.append(plan.pop((window, n)))
            while arriving.next_key(keys) == (window, n):
                pieces.append([data for _, data in arriving.take()])
            for piece in pieces:
                records = held.records(piece)
                at = records["passage"].astype(np.int64)
                inside = (at >= first) & (at < first + WINDOW)
                sums_of.add(
                    at[inside] - first, shares(records, weights[held.term], base, slope, inside)
                )
                del records, at, inside
        at, held_sums = sums_of.kept(left, floor)
        found_rows.append(at + first)
        found_sums.append(held_sums)
    for _ in arriving:  # the end of the stream, which says whether a block was gone
        pass
    if not found_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return (
        np.concatenate(found_rows).astype(np.int64),
        np.concatenate(found_sums).astype(np.float64),
    )


def _cuts(held: TermList, block: Block, windows: range) -> dict[int, tuple[int, int]]:
    """``window: (first byte (from 1), bytes)`` of the stretches of ``block`` (of ``held``)
    that hold its records of rows in each of ``windows`` it has records in (and some records
    either side)."""
    import numpy as np

    bounds = np.arange(windows.start, windows.stop + 1, dtype=np.int64) * WINDOW
    # the stretch holding each window's first row, and the first stretch past it
    starts = np.maximum(np.searchsorted(block.skips, bounds, side="right") - 1, 0).tolist()
    stops = np.searchsorted(block.skips, bounds, side="left").tolist()
    step = SKIP * held.itemsize
    found = {}
    for n, window in enumerate(windows):
        first, end = int(bounds[n]), int(bounds[n + 1])
        if block.last < first or int(block.skips[0]) >= end:
            continue
        offset = starts[n] * step
        found[window] = (offset + 1, min((stops[n + 1] - starts[n]) * step, block.size - offset))
    return found


class _Sparse:
    """The sums of a window's rows, as the rows postings name and their shares, summed at the
    end in the order added."""

    def __init__(self, rows: npt.NDArray[np.int64], sums: npt.NDArray[np.float64]) -> None:
        self.parts = [(rows, sums)]

    def add(self, rows: npt.NDArray[np.int64], shares: npt.NDArray[np.float64]) -> None:
        """Add ``shares[i]`` to the sum of row ``rows[i]`` (within the window)."""
        self.parts.append((rows, shares))

    def kept(self, left: float, floor: float) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """The rows (ascending) whose sums reach ``floor`` with ``left`` more, and their sums."""
        import numpy as np

        every = np.concatenate([rows for rows, _ in self.parts])
        rows, where = distinct_rows(every)
        # a row's sum in the order added, as the dense sums add (0 + x is x)
        total = np.bincount(
            where, weights=np.concatenate([s for _, s in self.parts]), minlength=len(rows)
        )
        keep = (total > 0) & (total + left >= floor)
        return rows[keep], total[keep]


class _Dense(_Sparse):
    """The sums of a window's every row."""

    def __init__(self, sparse: _Sparse) -> None:
        import numpy as np

        self.dense = np.zeros(WINDOW)
        rows, sums = sparse.parts[0]
        self.dense[rows] = sums

    def add(self, rows: npt.NDArray[np.int64], shares: npt.NDArray[np.float64]) -> None:
        self.dense[rows] += shares

    def kept(self, left: float, floor: float) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        import numpy as np

        at = np.flatnonzero((self.dense > 0) & (self.dense + left >= floor))
        return at, self.dense[at]


class _Peek:
    """An iterator of batches whose next batch can be looked at before it is taken."""

    def __init__(self, source: Iterator[list[tuple[int, bytes]]]) -> None:
        self._source = source
        self._next: list[tuple[int, bytes]] | None = None
        self._done = False

    def _fill(self) -> None:
        if self._next is None and not self._done:
            self._next = next(self._source, None)
            self._done = self._next is None

    def next_key(self, keys: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
        """The key of the next batch's first part (``None`` at the end)."""
        self._fill()
        return None if self._next is None else keys[self._next[0][0]]

    def take(self) -> list[tuple[int, bytes]]:
        """The next batch (after ``next_key`` said there is one)."""
        assert self._next is not None
        taken, self._next = self._next, None
        return taken

    def __iter__(self) -> Iterator[list[tuple[int, bytes]]]:
        return self

    def __next__(self) -> list[tuple[int, bytes]]:
        self._fill()
        if self._next is None:
            raise StopIteration
        return self.take()


def kth_highest(totals: npt.NDArray[Any], k: int) -> float:
    """The ``k``-th highest of ``totals`` above 0 (0 when fewer are)."""
    import numpy as np

    held = totals[totals > 0]
    if len(held) < k:
        return 0.0
    return float(np.partition(held, len(held) - k)[len(held) - k])


def ordered_best(
    totals: npt.NDArray[Any], rows: npt.NDArray[np.int64], wanted: int
) -> npt.NDArray[np.int64]:
    """Indexes of the ``wanted`` highest totals above 0 (fewer when fewer are), best first,
    equal totals by row."""
    import numpy as np

    if wanted < len(totals):
        cut = len(totals) - wanted
        floor = max(float(totals[np.argpartition(totals, cut)[cut]]), 0.0)
        every = np.flatnonzero(totals >= floor) if floor > 0 else np.flatnonzero(totals)
    else:
        every = np.flatnonzero(totals)
    order = np.lexsort((rows[every], -totals[every]))[:wanted]
    return np.asarray(every[order], dtype=np.int64)
