"""Search of the PostgreSQL passage index: BM25's MaxScore (``kforge.store.passages.bm25_top``)
over the packed postings of ``postgres_postings``, summed with numpy a term at a time.

The essential (rarest) query terms' postings are all summed, a window of rows at a time
(``postgres_sums``); a later round adds only its new essential terms to the sums it kept. The
other terms come one read each, rarest first, for the candidates still in the race: before
each read the candidates that cannot reach the floor (the ``k``-th best score so far) even
with every term left at its bound are dropped, so the commonest terms are read for few
passages, and of their blocks the server cuts out only the stretches that can hold them (the
skip lists say where; ``postgres_lists``). The first read brings the index's counts, the
terms' frequencies, skip lists and peaks, and the rarest terms' records when they are few;
every later read is streamed in pieces (``postgres_reads``), so that what a search holds at
once stays within a bound whatever the corpus."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kforge.jsoncodec import loads
from kforge.store import passages
from kforge.store.passages import IndexStatistics, Peaks, bm25_top, peak_share
from kforge.store.postgres_cache import BlockCache
from kforge.store.postgres_head import HEAD
from kforge.store.postgres_lists import (
    WHOLE_SHARE,
    Block,
    TermList,
    add_shares,
    distinct_rows,
    shares,
    term_lists,
)
from kforge.store.postgres_postings import SKIP
from kforge.store.postgres_reads import BATCH, Gone, Part, batches
from kforge.store.postgres_sums import kth_highest, ordered_best, window_sums

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Block", "search"]


_WHOLE_READ = 1 << 16
"""Query terms holding at most this many postings are read whole by the first read: fewer
statements cost more than the reading saved. No more are: what a search holds at once stays
below a bound, whatever the corpus."""

_BY_ROW = 1 << 15
"""Postings (and earlier sums) few enough to sum by row at once: fewer numpy calls than by
windows, and about 1 MB of numbers."""

_KEEP = 2 << 20
"""Bytes of blocks a search keeps, read whole for some passages, to sum all their postings in
a later round without reading them again: more are read again."""

_ATTEMPTS = 3
"""Searches outside a transaction before one in a snapshot (``search``)."""

_FEW = 64
"""Candidates few enough that every term left is read for them at once (``_complete``), as are
the ``_TRIM`` times ``k`` a trimmed round keeps."""

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


def search(
    conn: Any,
    index: str,
    terms: Sequence[str],
    k: int,
    *,
    k1: float,
    b: float,
    cache: BlockCache | None = None,
) -> tuple[str, list[tuple[str, float]]]:
    """The version of index ``index`` (as ``PassageIndex.index_version`` gives it, read with
    the terms' blocks) and its ``k`` best ``(passage id, BM25 score)`` for ``terms`` (see
    ``PassageIndex.search_versioned``), read on ``conn`` (a connection in autocommit mode).

    Blocks never change once written (a merge or purge writes new ones), so reads of blocks
    by id after the first read see what it saw, or see them gone: then the search starts
    again, the last time in one snapshot. Blocks read whole are kept in ``cache`` (and taken
    from it) for later searches."""
    cache = cache if cache is not None else BlockCache(0)
    for _ in range(_ATTEMPTS):
        try:
            return _search(conn, index, terms, k, (k1, b), cache)
        except Gone:
            continue
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _search(conn, index, terms, k, (k1, b), cache)


def _search(
    conn: Any,
    index: str,
    terms: Sequence[str],
    k: int,
    bm25: tuple[float, float],
    cache: BlockCache,
) -> tuple[str, list[tuple[str, float]]]:
    import numpy as np

    k1, b = bm25

    wanted = list(set(terms))
    head = {"name": index, "terms": wanted, "least": passages.MIN_BUDGET}
    head |= {"share": passages.FIRST_BUDGET, "whole": _WHOLE_READ}
    head["cached"] = cache.ids(index, wanted)
    rows = conn.execute(HEAD, head, binary=True).fetchall()
    if not rows:
        return "", []
    version = f"{rows[0][0]}.{rows[0][15]}"
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
    for block in blocks:
        if block.id in read:
            cache.put(index, block.term, block.id, read[block.id])
    # a term's peaks come with each of its blocks: parsed once
    peaks = {t: loads(text) for t, text in {r[6]: r[12] for r in rows if r[12] is not None}.items()}
    postings = _BlockPostings(
        conn, rows[0][0], blocks, read, int(rows[0][4] or 0), rows[0][5], peaks
    )
    postings.keep_in(cache, index)
    return version, bm25_top(postings, statistics, frequencies, terms, k, k1=k1, b=b, peaks=peaks)


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
        import numpy as np

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
        self._kept = 0
        """Bytes of blocks read whole kept for a later round (``_KEEP`` at most)."""
        self._known_floor = 0.0
        """The best floor an earlier round found (the ``k``-th best score of passages not
        removed)."""
        self._summed: tuple[frozenset[str], npt.NDArray[np.int64], npt.NDArray[np.float64]]
        self._summed = (frozenset(), np.zeros(0, dtype=np.int64), np.zeros(0))
        """The essential terms an earlier round summed, and its rows and sums (of the rows
        that could still reach its floor): a later round adds only its new essential terms."""
        self._cache, self._index = BlockCache(0), ""

    def keep_in(self, cache: BlockCache, index: str) -> None:
        """Keep in ``cache`` (under ``index``) the blocks read whole from here on, and take
        from it those it holds before each round."""
        self._cache, self._index = cache, index

    def _take_cached(self) -> None:
        """Hold the blocks an earlier round read whole and put in the cache, though it did not
        keep them itself (``_KEEP``): a later round reads them from memory, not again."""
        missing = {b.term for b in self._blocks if b.id not in self._read}
        if missing:
            named: dict[str, list[int]] = {}
            for block in self._blocks:
                if block.term in missing:
                    named.setdefault(block.term, []).append(block.id)
            self._read.update(self._cache.take(self._index, named))

    def _cached(self, block: Block) -> bool:
        """Whether ``block``, once read whole, goes into the cache."""
        return block.size <= self._cache.budget

    def _keep_whole(self, whole: Mapping[int, list[bytes]]) -> dict[int, bytes]:
        """Keep in the cache the blocks read whole (``whole`` holds each one's pieces); returns
        them joined."""
        joined = {}
        for block in self._blocks:
            pieces = whole.get(block.id)
            if pieces is not None and sum(map(len, pieces)) == block.size:
                joined[block.id] = data = b"".join(pieces)
                self._cache.put(self._index, block.term, block.id, data)
        return joined

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:
        bounds = {
            t: w * peak_share(self._peaks.get(t), base, slope) * _MARGIN for t, w in rest.items()
        }
        self._take_cached()
        rows, sums = self._sum_essential(essential, base, slope, sum(bounds.values()))
        if k <= 0 or not len(rows):
            return []
        if not rest:
            return self._resolve(sums, rows, k)
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
                and kth_highest(partial + left, k) < slack
            ):
                kept = np.sort(ordered_best(partial, rows, few))
                rows, partial = rows[kept], partial[kept]
            # few rows (as many as a trimmed round keeps, at most): pruning between terms
            # drops few of them, so every term left comes in one read
            group = list(terms[at:]) if len(rows) <= max(_FEW, few) else [terms[at]]
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
            best = ordered_best(totals, rows, wanted)
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
        return kth_highest(totals, k)

    def _sum_essential(
        self, essential: Mapping[str, float], base: float, slope: float, left: float
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The rows the ``essential`` terms' postings name that can reach the best floor
        known with the rest of the terms (``left``: their bounds summed), ascending, and each
        one's sum of the essential terms' shares: an earlier round's sums and the new terms'
        postings, summed a window of rows at a time (``postgres_sums``), or over the rows
        they name when they are few (at most ``_BY_ROW``) or a block is not in passage
        order (of an earlier layout)."""
        import numpy as np

        summed, rows, sums = self._summed
        lists = [held for held in self._lists if held.term in essential]
        new = [held for held in lists if held.term not in summed]
        count = len(rows) + sum(b.postings for held in new for b in held.blocks)
        if not count:
            return rows, sums
        blocks = [b for held in new for b in held.blocks]
        floor = self._known_floor
        # in passage order and many: summed by windows of rows; few: by row, at once
        if count > _BY_ROW and all(len(b.skips) for b in blocks):
            rows, sums = window_sums(
                self._conn,
                self._ix,
                new,
                essential,
                self._read,
                self._names,
                (rows, sums),
                base,
                slope,
                (left, floor),
            )
            self._summed = (frozenset(essential), rows, sums)
            return rows, sums
        parts = [(rows, sums)]
        for held, records in self._essential_records(new):
            at = records["passage"].astype(np.int64)
            parts.append((at, shares(records, essential[held.term], base, slope)))
        every = np.concatenate([a for a, _ in parts])
        summed_up = np.concatenate([s for _, s in parts])
        del parts
        rows, where = distinct_rows(every)
        total = np.bincount(where, weights=summed_up, minlength=len(rows))
        keep = total + left >= floor
        rows, sums = rows[keep], np.asarray(total[keep], dtype=np.float64)
        self._summed = (frozenset(essential), rows, sums)
        return rows, sums

    def _essential_records(self, lists: Sequence[TermList]) -> Iterator[tuple[TermList, Any]]:
        """Each of ``lists`` with its records, a batch at a time, list after list: those the
        first read brought, then the others streamed (``postgres_reads``)."""
        streamed: list[Part] = []
        owner: list[TermList] = []
        for held in lists:
            if all(b.id in self._read for b in held.blocks):
                for records in self._held_records(held):
                    yield held, records
                continue
            for block in held.blocks:
                streamed.append((block, 1, block.size))
                owner.append(held)
        whole: dict[int, list[bytes]] = {}
        for batch in batches(self._conn, self._ix, streamed, (), self._names):
            for at, data in batch:
                if self._cached(streamed[at][0]):
                    whole.setdefault(streamed[at][0].id, []).append(data)
            yield owner[batch[0][0]], owner[batch[0][0]].records([data for _, data in batch])
        self._keep_whole(whole)

    def _held_records(self, held: TermList) -> Iterator[Any]:
        """The records of ``held``, whose blocks are all in memory, about ``BATCH`` bytes at
        a time (a search's numbers over them stay small)."""
        pieces: list[memoryview] = []
        size = 0
        for block in held.blocks:
            data = memoryview(self._read[block.id])
            for start in range(0, len(data), BATCH):
                if pieces and size + min(BATCH, len(data) - start) > BATCH:
                    yield held.records(pieces)
                    pieces, size = [], 0
                pieces.append(data[start : start + BATCH])
                size += len(pieces[-1])
        if pieces:
            yield held.records(pieces)

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
        wanted: list[Part] = []
        owner: list[TermList] = []
        kept: dict[int, list[bytes]] = {}
        """Blocks read whole to keep for a later round, and their pieces read so far."""
        whole: dict[int, list[bytes]] = {}
        """Blocks read whole, and their pieces read so far (for the cache)."""
        for held in lists:
            if all(b.id in self._read for b in held.blocks):
                for records in self._held_records(held):
                    add_shares(extra, rows, records, rest[held.term], base, slope)
                continue
            found = held.stretches(rows, ())
            # in list order, so that a batch's records are in passage order
            found.sort(key=lambda part: (held.position(part[0]), part[1]))
            wanted.extend(found)
            owner.extend([held] * len(found))
            # read whole: a later round that sums the term's every posting need not read it
            # again, while what is kept stays small (``_KEEP``)
            size = sum(b.size for b in held.blocks)
            every = len(found) == len(held.blocks) and all(n == b.size for b, _, n in found)
            if every:
                whole |= {b.id: [] for b in held.blocks if self._cached(b)}
            if every and self._kept + size <= _KEEP:
                self._kept += size
                kept |= {b.id: [] for b in held.blocks}
        named = rows.tolist() if name and wanted else []
        self._looked.update(named)
        for batch in batches(self._conn, self._ix, wanted, named, self._names):
            held = owner[batch[0][0]]
            records = held.records([data for _, data in batch])
            add_shares(extra, rows, records, rest[held.term], base, slope)
            del records
            for at, data in batch:
                if wanted[at][0].id in kept:
                    kept[wanted[at][0].id].append(data)
                elif wanted[at][0].id in whole:
                    whole[wanted[at][0].id].append(data)
        joined = self._keep_whole(whole | kept)
        for block, pieces in kept.items():
            self._read[block] = joined[block] if block in joined else b"".join(pieces)
        return extra
