"""Search of the PostgreSQL passage index: BM25's MaxScore (``kforge.store.passages.bm25_top``)
over the packed postings of ``postgres_postings``, summed with numpy a term at a time.

The essential (rarest) query terms' blocks are read whole and summed. The other terms come one
read each, rarest first, for the candidates still in the race: before each read the
candidates that cannot reach the floor (the ``k``-th best score so far) even with every term
left at its bound are dropped, so the commonest terms are read for few passages, and of their
blocks the server cuts out only the stretches that can hold them (the skip lists say where;
``postgres_lists``). The first read brings the index's counts, the terms' frequencies, skip
lists and peaks, and the rarest terms' records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kforge.jsoncodec import loads
from kforge.store import passages
from kforge.store.passages import IndexStatistics, Peaks, bm25_top, peak_share
from kforge.store.postgres_batch import int_array, numbers
from kforge.store.postgres_lists import WHOLE_SHARE, Block, TermList, shares, term_lists
from kforge.store.postgres_postings import SKIP

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Block", "search"]


_HEAD = """
WITH i AS (SELECT id, passages, terms, chars FROM search_indexes WHERE name = %(name)s),
t AS (
    SELECT t.term, t.df, t.peaks, sum(t.df) OVER w AS upto, row_number() OVER w AS n,
           sum(t.df) OVER () AS every
    FROM i JOIN search_terms t ON t.index_id = i.id AND t.term = ANY(%(terms)s) AND t.df > 0
    WINDOW w AS (ORDER BY t.df, t.term COLLATE "C")
)
SELECT i.id, i.passages, i.terms, i.chars, (SELECT max(id) FROM search_passages),
       EXISTS (SELECT FROM search_tombstones d WHERE d.index_id = i.id),
       t.term, t.df, b.id, b.wide, b.postings, b.skips, t.peaks::text,
       CASE WHEN t.n = 1 OR t.upto <= greatest(%(least)s, %(share)s * i.passages)
            OR t.every <= %(whole)s THEN b.data END,
       substring(b.data FROM (b.postings - 1) * CASE WHEN b.wide THEN 16 ELSE 8 END + 1
                 FOR CASE WHEN b.wide THEN 8 ELSE 4 END)
FROM i LEFT JOIN t ON true LEFT JOIN search_blocks b ON b.index_id = i.id AND b.term = t.term
"""
"""The index's counts, the query terms' frequencies and their blocks' skip lists in one read,
with the records of the blocks the first round of ``bm25_top`` sums whole (the rarest terms),
or of every block when they are few (``_WHOLE_READ``)."""

_WHOLE_READ = 1 << 16
"""Query terms holding at most this many postings are read whole by the first read: fewer
statements cost more than the reading saved."""

_STRETCHES = """
SELECT u.n, substring(b.data FROM u.o FOR u.l), NULL::text
FROM unnest({codes}, {ids}, {starts}, {lengths}) WITH ORDINALITY AS u(c, id, o, l, n)
JOIN search_blocks b ON b.index_id = %s AND b.term = (%s::text[])[u.c] AND b.id = u.id
UNION ALL
SELECT id, NULL, passage FROM search_passages WHERE id = ANY({rows})
""".format(
    codes=int_array(),
    ids=int_array("bigint"),
    starts=int_array(),
    lengths=int_array(),
    rows=int_array("bigint"),
)
"""Stretches of blocks, numbered as asked, and the passages of rows (by row) in one read."""

_READ_BYTES = 4 << 20
"""A statement reads at most about this many bytes of records (more take more statements)."""

_ATTEMPTS = 3
"""Searches outside a transaction before one in a snapshot (``search``)."""

_FEW = 64
"""Candidates few enough that every term left is read for them at once (``_complete``)."""

_NAMED = 1024
"""At most this many rows have their passages looked up with the last read (``_complete``)."""

_TRIM = 2
"""Times ``k`` the passages whose scores set the floor (``_complete``)."""

_SHRINK = 16
"""Terms read whole for the candidates even if all but one in this many went are read at once
(``_complete``)."""

_TRIM_FROM = SKIP / WHOLE_SHARE
"""A term with more postings than this a candidate is read whole for the candidates: before
it, a round that cannot be the last trims them (``_complete``)."""

_MARGIN = 1.0 + 1e-9
"""A hair above the most a posting scores (as ``bm25_top`` bounds a term): a score summed in
another order stays below it."""


class _Gone(Exception):
    """A block the search's first read named was merged or purged since."""


def search(
    conn: Any, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
) -> list[tuple[str, float]]:
    """The ``k`` best ``(passage id, BM25 score)`` of index ``index`` for ``terms`` (see
    ``PassageIndex.search_passages``), read on ``conn`` (a connection in autocommit mode).

    Blocks never change once written (a merge or purge writes new ones), so reads of blocks
    by id after the first read see what it saw, or see them gone: then the search starts
    again, the last time in one snapshot."""
    for _ in range(_ATTEMPTS):
        try:
            return _search(conn, index, terms, k, k1=k1, b=b)
        except _Gone:
            continue
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _search(conn, index, terms, k, k1=k1, b=b)


def _search(
    conn: Any, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
) -> list[tuple[str, float]]:
    import numpy as np

    head = {"name": index, "terms": list(set(terms)), "least": passages.MIN_BUDGET}
    head |= {"share": passages.FIRST_BUDGET, "whole": _WHOLE_READ}
    rows = conn.execute(_HEAD, head, binary=True).fetchall()
    if not rows:
        return []
    statistics = IndexStatistics(passages=rows[0][1], terms=rows[0][2], chars=rows[0][3])
    frequencies = {r[6]: r[7] for r in rows if r[6] is not None}
    blocks = [
        Block(
            id=r[8],
            term=r[6],
            wide=r[9],
            postings=r[10],
            skips=np.frombuffer(r[11], dtype=">i8" if r[9] else ">i4").astype(np.int64),
            last=int.from_bytes(r[14], "big", signed=True),
        )
        for r in rows
        if r[8] is not None
    ]
    read = {r[8]: r[13] for r in rows if r[13] is not None}
    # a term's peaks come with each of its blocks: parsed once
    peaks = {t: loads(text) for t, text in {r[6]: r[12] for r in rows if r[12] is not None}.items()}
    postings = _BlockPostings(
        conn, rows[0][0], blocks, read, int(rows[0][4] or 0), rows[0][5], peaks
    )
    return bm25_top(postings, statistics, frequencies, terms, k, k1=k1, b=b, peaks=peaks)


class _BlockPostings:
    """``kforge.store.passages.Postings`` over the blocks of one search's terms."""

    def __init__(
        self,
        conn: Any,
        ix: int,
        blocks: Sequence[Block],
        read: dict[int, bytes],
        last_row: int,
        tombstones: bool,
        peaks: Mapping[str, Peaks],
    ) -> None:
        self._conn, self._ix, self._blocks, self._read = conn, ix, blocks, read
        self._last_row, self._tombstones, self._peaks = last_row, tombstones, peaks
        self._lists = term_lists(blocks)
        self._postings: dict[str, int] = {}
        """Each term's postings, in all its blocks."""
        for block in blocks:
            self._postings[block.term] = self._postings.get(block.term, 0) + block.postings
        self._names: dict[int, str] = {}
        """The passage of each row looked up that is not removed."""
        self._looked: set[int] = set()
        self._known_floor = 0.0
        """The best floor an earlier round found (the ``k``-th best score of passages not
        removed)."""
        self._stretches: dict[tuple[int, int, int], bytes] = {}
        """Stretches read, for a later round that wants them again."""

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:

        rows, sums = self._sum_essential(essential, base, slope)
        if k <= 0 or not len(rows):
            return []
        if not rest:
            return self._resolve(sums, rows, k)
        bounds = {
            t: w * peak_share(self._peaks.get(t), base, slope) * _MARGIN for t, w in rest.items()
        }
        terms = sorted(rest, key=lambda t: (-bounds[t], t))
        done, totals = self._complete(rows, sums, terms, bounds, rest, base, slope, k, slack)
        found = self._resolve(totals, done, k)
        if len(found) >= k:  # k passages score at least this: a floor for a later round
            self._known_floor = max(self._known_floor, found[k - 1][1])
        return found

    def _complete(
        self,
        rows: npt.NDArray[np.int64],
        partial: npt.NDArray[np.float64],
        terms: Sequence[str],
        bounds: Mapping[str, float],
        weights: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The scores of those candidate ``rows`` (ascending) that can reach the top ``k``,
        from their ``partial`` sums (the essential terms'): the ``terms`` left (by decreasing
        bound) are added a read at a time, and before each read the rows that cannot reach
        the floor (the ``k``-th best partial sum) even with every term left at its bound are
        dropped, so the commonest terms are read for few passages, in stretches.

        Once the floor cannot reach ``slack`` (what a passage without the essential terms may
        score), the round is not the last and only its floor matters: before a term with many
        postings only the ``_TRIM`` times ``k`` best partial sums go on (any ``k`` passages'
        scores bound the ``k``-th best from below)."""
        import numpy as np

        left = sum(bounds[t] for t in terms)
        floor = self._known_floor
        at = 0
        while at < len(terms):
            floor = max(floor, self._floor(partial, rows, k))
            keep = partial + left >= floor
            if not keep.all():
                rows, partial = rows[keep], partial[keep]
            few = _TRIM * k
            if (
                len(rows) > few
                and self._postings[terms[at]] > few * _TRIM_FROM
                and _kth(partial + left, k) < slack
            ):
                kept = np.sort(_ordered_best(partial, rows, few))
                rows, partial = rows[kept], partial[kept]
            group = list(terms[at:]) if len(rows) <= _FEW else [terms[at]]
            for term in terms[at + len(group) :]:
                # a term read whole for the rows even if pruning dropped most of them comes
                # in the same read: the same records in fewer round trips
                wide = len(rows) * SKIP >= _SHRINK * WHOLE_SHARE * self._postings[term]
                if not wide or self._postings[term] > few * _TRIM_FROM:
                    break
                group.append(term)
            at += len(group)
            # the rows left after the last read are most often the answer: their passages
            # come with it
            named = at == len(terms) and len(rows) <= _NAMED
            partial = partial + self._rest_shares(
                rows, {t: weights[t] for t in group}, base, slope, name=named
            )
            left -= sum(bounds[t] for t in group)
        return rows, partial

    def _named(self, rows: Sequence[int], names: Mapping[int, str]) -> None:
        """Keep ``names`` (row -> passage) of ``rows`` looked up (a row without one is
        removed)."""
        self._looked.update(rows)
        self._names.update(names)

    def _resolve(
        self, totals: npt.NDArray[Any], rows: npt.NDArray[np.int64], k: int
    ) -> list[tuple[str, float]]:
        """The ``k`` best rows as ``(passage id, total)``, passing over removed ones
        (tombstones): row ``rows[i]`` (ascending) totals ``totals[i]``; the best ``wanted`` rows
        are looked up (those not looked up before), four times as many again while too few of
        them remain."""
        import numpy as np

        wanted = k
        while True:
            best = _ordered_best(totals, rows, wanted)
            named = rows[best].tolist()
            unknown = [r for r in named if r not in self._looked]
            if unknown:
                found = self._conn.execute(
                    "SELECT id, passage FROM search_passages WHERE id = ANY(%s)", (unknown,)
                ).fetchall()
                self._named(unknown, dict(found))
            alive = sum(1 for r in named if r in self._names)
            if alive >= min(k, len(named)) or len(named) < wanted:
                break
            wanted *= 4
        scores = np.asarray(totals[best], dtype=np.float64).tolist()
        return [
            (self._names[r], s) for r, s in zip(named, scores, strict=True) if r in self._names
        ][:k]

    def _floor(self, totals: npt.NDArray[Any], rows: npt.NDArray[np.int64], k: int) -> float:
        """The ``k``-th best of ``totals`` among passages not removed (0 when fewer)."""
        if self._tombstones:
            best = self._resolve(totals, rows, k)
            return best[k - 1][1] if len(best) >= k else 0.0
        return _kth(totals, k)

    def _whole(self, lists: Sequence[TermList]) -> dict[int, list[tuple[int, bytes]]]:
        """The records of every block of ``lists``, by block id (as ``TermList.records``
        takes them): those read before, the others by id, a statement for about
        ``_READ_BYTES`` of them."""
        blocks = [b for held in lists for b in held.blocks]
        wanted = [b for b in blocks if b.id not in self._read]
        for group in _groups(wanted, lambda b: b.size):
            found = dict(
                self._conn.execute(
                    "SELECT id, data FROM search_blocks WHERE index_id = %s AND term = ANY(%s) "
                    "AND id = ANY(%s)",
                    (self._ix, sorted({b.term for b in group}), [b.id for b in group]),
                    binary=True,
                ).fetchall()
            )
            if len(found) < len(group):
                raise _Gone
            self._read.update(found)  # a later round reads them again
        return {b.id: [(1, self._read[b.id])] for b in blocks}

    def _sum_essential(
        self, essential: Mapping[str, float], base: float, slope: float
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The rows the ``essential`` terms' postings name, ascending, and each one's sum of
        their shares: summed over the span of rows when the postings fill it enough, else
        over the rows they name."""
        import numpy as np

        lists = [held for held in self._lists if held.term in essential]
        count = sum(b.postings for held in lists for b in held.blocks)
        if not count:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        pieces = self._whole(lists)
        blocks = [b for held in lists for b in held.blocks]
        if all(len(b.skips) for b in blocks):  # in passage order: the span is known
            low = min(int(b.skips[0]) for b in blocks)
            span = max(b.last for b in blocks) - low + 1
            if _dense(span, count):
                # summed a term at a time (a term names a row once): a search holds one
                # term's records at a time besides the sums
                dense = np.zeros(span)
                for held in lists:
                    records = held.records(pieces, ordered=False)
                    at = records["passage"].astype(np.intp)
                    at -= low
                    dense[at] += shares(records, essential[held.term], base, slope)
                    del records, at
                held_at = np.flatnonzero(dense)
                return held_at + low, np.asarray(dense[held_at], dtype=np.float64)
        parts = []
        for held in lists:
            records = held.records(pieces, ordered=False)
            at = records["passage"].astype(np.int64)
            parts.append((at, shares(records, essential[held.term], base, slope)))
        every = np.concatenate([a for a, _ in parts])
        summed = np.concatenate([s for _, s in parts])
        rows, where = np.unique(every, return_inverse=True)
        total = np.bincount(where, weights=summed, minlength=len(rows))
        return rows, np.asarray(total, dtype=np.float64)

    def _rest_shares(
        self,
        rows: npt.NDArray[np.int64],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        *,
        name: bool = False,
    ) -> npt.NDArray[np.float64]:
        """The ``rest`` terms' shares of the scores of ``rows`` (ascending), from the stretches
        of their blocks that can hold those rows; with ``name``, the rows' passages are looked
        up in the same read (the best of them are most often the answer)."""
        import numpy as np

        extra = np.zeros(len(rows))
        lists = [held for held in self._lists if held.term in rest]
        pieces: dict[int, list[tuple[int, bytes]]] = {}
        """The records of each block to add, by block id: (first byte, records)."""
        wanted: list[tuple[Block, int, int]] = []
        for held in lists:
            for block in held.blocks:
                if block.id in self._read:
                    pieces[block.id] = [(1, self._read[block.id])]
            for stretch in held.stretches(rows, pieces):
                data = self._stretches.get((stretch[0].id, *stretch[1:]))
                if data is not None:
                    pieces.setdefault(stretch[0].id, []).append((stretch[1], data))
                else:
                    wanted.append(stretch)
        named = rows.tolist() if name and wanted else []
        terms = sorted({b.term for b, _, _ in wanted})
        code = {t: n for n, t in enumerate(terms, start=1)}
        for group in _groups(wanted, lambda stretch: stretch[2]):
            found = self._conn.execute(
                _STRETCHES,
                (
                    numbers(code[b.term] for b, _, _ in group),
                    numbers(b.id for b, _, _ in group),
                    numbers(start for _, start, _ in group),
                    numbers(length for _, _, length in group),
                    self._ix,
                    terms,
                    numbers(named),
                ),
                binary=True,
            ).fetchall()
            read = [(n, data) for n, data, passage in found if passage is None]
            self._named(named, {n: passage for n, _, passage in found if passage is not None})
            named = []
            if len(read) < len(group):
                raise _Gone
            for number, data in read:
                block, start, length = group[number - 1]
                # the whole block (not a stretch at its start): a later round may want it
                # again, or this stretch
                if start == 1 and len(data) == block.size:
                    self._read[block.id] = data
                else:
                    self._stretches[block.id, start, length] = data
                pieces.setdefault(block.id, []).append((start, data))
        for held in lists:
            held.add_shares(extra, rows, pieces, rest[held.term], base, slope)
        return extra


_T = TypeVar("_T")


def _groups(items: Sequence[_T], size: Callable[[_T], int]) -> Iterator[list[_T]]:
    """``items`` in runs of about ``_READ_BYTES`` (by ``size``), at least one item a run."""
    group: list[_T] = []
    total = 0
    for item in items:
        if group and total + size(item) > _READ_BYTES:
            yield group
            group, total = [], 0
        group.append(item)
        total += size(item)
    if group:
        yield group


def _dense(span: int, postings: int) -> bool:
    """Whether sums are kept in an array over the whole ``span`` of rows the ``postings``
    name (else over the rows they name, which costs a sort)."""
    return span <= 4 * postings


def _kth(totals: npt.NDArray[Any], k: int) -> float:
    """The ``k``-th highest of ``totals`` above 0 (0 when fewer are)."""
    import numpy as np

    held = totals[totals > 0]
    if len(held) < k:
        return 0.0
    return float(np.partition(held, len(held) - k)[len(held) - k])


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
