"""Search of the PostgreSQL passage index: BM25's MaxScore (``kforge.store.passages.bm25_top``)
over the packed postings of ``postgres_postings``, summed with numpy a block at a time.

The rare query terms' blocks are read whole. Of a common term's blocks the server cuts out
only the stretches that can hold the passages still in the race (a block's skip list says
where each passage would lie), so a search reads a small part of the common terms' postings
and holds one block at a time. A search reads in one snapshot (repeatable read), so a merge or
purge committed meanwhile is never seen halfway.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kforge.store.passages import FLOOR_SAMPLE, IndexStatistics, bm25_top
from kforge.store.postgres_postings import SKIP, record_dtype

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Block", "search"]


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


_WHOLE_SHARE = 0.5
"""A block is read whole when the stretches a search wants of it hold this share of it."""

_HEAD = """
SELECT i.id, i.passages, i.terms, i.chars, t.term, t.df, b.id, b.wide, b.postings, b.skips,
       (SELECT max(id) FROM search_passages)
FROM search_indexes i LEFT JOIN search_terms t ON t.index_id = i.id AND t.term = ANY(%s)
    AND t.df > 0 LEFT JOIN search_blocks b ON b.index_id = i.id AND b.term = t.term
WHERE i.name = %s
"""

_STRETCHES = """
SELECT u.n, substring(b.data FROM u.o FOR u.l)
FROM unnest(%s::text[], %s::bigint[], %s::int[], %s::int[]) WITH ORDINALITY AS u(t, id, o, l, n)
JOIN search_blocks b ON b.index_id = %s AND b.term = u.t AND b.id = u.id
"""


def search(
    conn: Any, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
) -> list[tuple[str, float]]:
    """The ``k`` best ``(passage id, BM25 score)`` of index ``index`` for ``terms`` (see
    ``PassageIndex.search_passages``), read on ``conn`` (a connection in autocommit mode)."""
    import numpy as np

    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        rows = conn.execute(_HEAD, (list(set(terms)), index), binary=True).fetchall()
        if not rows:
            return []
        statistics = IndexStatistics(passages=rows[0][1], terms=rows[0][2], chars=rows[0][3])
        frequencies = {r[4]: r[5] for r in rows if r[4] is not None}
        blocks = [
            Block(
                id=r[6],
                term=r[4],
                wide=r[7],
                postings=r[8],
                skips=np.frombuffer(r[9], dtype=">i8" if r[7] else ">i4").astype(np.int64),
            )
            for r in rows
            if r[6] is not None
        ]
        postings = _BlockPostings(conn, rows[0][0], blocks, int(rows[0][10] or 0))
        return bm25_top(postings, statistics, frequencies, terms, k, k1=k1, b=b)


class _BlockPostings:
    """``kforge.store.passages.Postings`` over the blocks of one search's terms."""

    def __init__(self, conn: Any, ix: int, blocks: Sequence[Block], last_row: int) -> None:
        self._conn, self._ix, self._blocks, self._last_row = conn, ix, blocks, last_row

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:
        import numpy as np

        rows, sums = self._sum_essential(essential, base, slope)
        if k <= 0 or not len(rows):
            return []
        if not rest:
            return _resolve(self._conn, sums, rows, k)
        sample = np.sort(_ordered_best(sums, rows, FLOOR_SAMPLE * k))
        totals = sums[sample] + self._rest_shares(rows[sample], rest, base, slope)
        best = _resolve(self._conn, totals, rows[sample], k)
        floor = best[k - 1][1] if len(best) >= k else 0.0
        if len(best) < k or floor < slack:
            return best
        # only a passage whose essential sum is within the rest terms' bounds of the floor
        # can still reach the top k: complete those, read no other
        near = sums >= floor - slack
        near[sample] = False
        more = np.flatnonzero(near)
        if not len(more):
            return best
        every = np.concatenate([sample, more])
        totals = np.concatenate(
            [totals, sums[more] + self._rest_shares(rows[more], rest, base, slope)]
        )
        order = np.argsort(every, kind="stable")
        return _resolve(self._conn, totals[order], rows[every[order]], k)

    def _sum_essential(
        self, essential: Mapping[str, float], base: float, slope: float
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The rows the ``essential`` terms' postings name, ascending, and each one's sum of
        their shares: summed a block at a time, over the span of rows when the postings fill
        it enough, else over the rows they name."""
        import numpy as np

        blocks = [b for b in self._blocks if b.term in essential]
        count = sum(b.postings for b in blocks)
        if not count:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        known = [int(b.skips[0]) for b in blocks if len(b.skips)]
        low = min(known) if len(known) == len(blocks) else 0
        span = self._last_row - low + 1
        dense = np.zeros(span) if _dense(span, count) else None
        parts: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        terms = sorted({b.term for b in blocks})
        for term, wide, data in self._conn.cursor(binary=True).stream(
            "SELECT term, wide, data FROM search_blocks WHERE index_id = %s AND term = ANY(%s)",
            (self._ix, terms),
        ):
            records = np.frombuffer(data, dtype=record_dtype(wide))
            at = records["passage"].astype(np.int64)
            shares = _shares(records, essential[term], base, slope)
            if dense is not None and len(at) and at.max() - low < span and at.min() >= low:
                dense[at - low] += shares  # a block names a row once
            else:
                parts.append((at, shares))
        if dense is not None:
            held = np.flatnonzero(dense)
            if not parts:
                return held + low, dense[held]
            parts.append((held + low, dense[held]))
            del dense
        at = np.concatenate([a for a, _ in parts])
        shares = np.concatenate([s for _, s in parts])
        rows, where = np.unique(at, return_inverse=True)
        return rows, np.asarray(
            np.bincount(where, weights=shares, minlength=len(rows)), dtype=np.float64
        )

    def _rest_shares(
        self, rows: npt.NDArray[np.int64], rest: Mapping[str, float], base: float, slope: float
    ) -> npt.NDArray[np.float64]:
        """The ``rest`` terms' shares of the scores of ``rows`` (ascending), from the stretches
        of their blocks that can hold those rows."""
        import numpy as np

        wanted: list[tuple[Block, int, int]] = []
        for block in self._blocks:
            if block.term in rest:
                wanted += _stretches(block, rows)
        extra = np.zeros(len(rows))
        if not wanted:
            return extra
        cursor = self._conn.cursor(binary=True)
        params = (
            [b.term for b, _, _ in wanted],
            [b.id for b, _, _ in wanted],
            [start for _, start, _ in wanted],
            [length for _, _, length in wanted],
            self._ix,
        )
        for number, data in cursor.stream(_STRETCHES, params):
            block = wanted[number - 1][0]
            records = np.frombuffer(data, dtype=record_dtype(block.wide))
            if not len(block.skips):
                records = records[np.argsort(records["passage"], kind="stable")]
            at = records["passage"].astype(np.int64)
            where = np.searchsorted(at, rows)
            inside = where < len(at)
            hit = np.zeros(len(rows), dtype=bool)
            hit[inside] = at[where[inside]] == rows[inside]
            extra[hit] += _shares(records[where[hit]], rest[block.term], base, slope)
        return extra


def _dense(span: int, postings: int) -> bool:
    """Whether sums are kept in an array over the whole ``span`` of rows the ``postings``
    name (else over the rows they name, which costs a sort)."""
    return span <= 4 * postings


def _shares(records: Any, weight: float, base: float, slope: float) -> npt.NDArray[np.float64]:
    """A term's share of each record's passage score: ``w * tf / (tf + base + slope * length)``,
    as ``passages.full_bm25`` and the other stores compute it."""
    import numpy as np

    tf = records["tf"].astype(np.float64)
    return np.asarray(weight * tf / (tf + base + slope * records["length"].astype(np.float64)))


def _stretches(block: Block, rows: npt.NDArray[np.int64]) -> Iterator[tuple[Block, int, int]]:
    """``(block, first byte (from 1), bytes)`` of the parts of ``block`` that can hold
    ``rows``: runs of the stretches its skip list points at, or the whole block when it has
    none or they would cover most of it."""
    import numpy as np

    size = record_dtype(block.wide).itemsize
    whole = (block, 1, block.postings * size)
    if not len(block.skips):
        yield whole
        return
    at = np.unique(np.searchsorted(block.skips, rows, side="right") - 1)
    at = at[at >= 0]
    if not len(at):
        return
    if len(at) * SKIP >= _WHOLE_SHARE * block.postings:
        yield whole
        return
    # a run of stretches with a gap of one between them is cheaper read as one
    starts = np.flatnonzero(np.diff(at, prepend=-3) > 2)
    ends = np.append(starts[1:], len(at)) - 1
    for first, last in zip(at[starts].tolist(), at[ends].tolist(), strict=True):
        yield block, first * SKIP * size + 1, (last - first + 1) * SKIP * size


def _resolve(
    conn: Any, totals: npt.NDArray[Any], rows: npt.NDArray[np.int64], k: int
) -> list[tuple[str, float]]:
    """The ``k`` best rows as ``(passage id, total)``, passing over removed ones (tombstones):
    row ``rows[i]`` (ascending) totals ``totals[i]``; the best ``wanted`` rows are looked up,
    four times as many again while too few of them remain."""
    import numpy as np

    wanted = k
    while True:
        best = _ordered_best(totals, rows, wanted)
        named = rows[best].tolist()
        found = dict(
            conn.execute(
                "SELECT id, passage FROM search_passages WHERE id = ANY(%s)", (named,)
            ).fetchall()
        )
        if len(found) >= min(k, len(named)) or len(named) < wanted:
            break
        wanted *= 4
    scores = np.asarray(totals[best], dtype=np.float64).tolist()
    live = [(str(found[r]), s) for r, s in zip(named, scores, strict=True) if r in found]
    return live[:k]


def _ordered_best(
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
