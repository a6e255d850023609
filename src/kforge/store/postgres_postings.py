"""The postings of the PostgreSQL passage index: each term's postings packed in a few binary
rows (blocks), written and merged here and searched by ``postgres_search``.

A block is one term's postings as fixed-width big-endian records (passage row, tf, passage
length): ``>i4 >i2 >i2`` (narrow), or ``>i8 >i4 >i4`` (wide) when a value does not fit.
Big-endian is what PostgreSQL's ``int4send`` writes, so blocks are built and merged by the
server as well as here. A term has a base block (the migration's, a purge's or a settling's)
and above it the blocks of later writes: each write adds one block per term it holds at level
0, and when ``FANOUT`` blocks of one level gather the server concatenates them into one of the
next level (``merge``), so after ``w`` writes a term has at most ``(FANOUT - 1) *
log_FANOUT(w)`` blocks besides its base one, and each posting was copied about
``log_FANOUT(w)`` times. Settling the index after an ingest gathers a term of more than
``SETTLED`` blocks into one base block (``gather``): a search pays for each block it reads.

A block's records are in passage order and it carries a skip list: the passage of every
``SKIP``-th record (the same big-endian kind as its records' passage), so a search can cut the
stretch that may hold one passage out of the block without reading the rest. A merge keeps the
order when its blocks' passages do not interleave (writers of one index at once could make
them); otherwise the merged block has an empty skip list and is read whole.

Removing a passage leaves its postings in their blocks and records a tombstone: a search
resolves its best rows to passages and passes over rows that no longer exist, so results stay
exact; ``purge`` rewrites the blocks of the removed passages' terms once tombstones pile up.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kforge.jsoncodec import loads
from kforge.store.postgres_batch import int_array, numbers, text_array
from kforge.store.postgres_schema import BASE_LEVEL, CONCATENATE, SKIP

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BASE_LEVEL",
    "FANOUT",
    "PURGE_SHARE",
    "SETTLED",
    "SKIP",
    "gather",
    "merge",
    "purge",
    "record_dtype",
    "rewrite",
    "scattered",
    "tombstones_due",
    "unordered",
    "write_blocks",
]

FANOUT = 8
"""Blocks of one level a term gathers before they merge into one of the next level."""

SETTLED = 4
"""Blocks a term may have once its index settles: one with more is gathered into one (a search
pays for each block of a term: a lookup on the server, a read and its planning here)."""

PURGE_SHARE = 1 / 16
"""Tombstones are purged once they exceed this share of the passages (or ``_PURGE_MIN``)."""
_PURGE_MIN = 256


_NARROW = (">i4", ">i2", ">i2")
_WIDE = (">i8", ">i4", ">i4")
_NARROW_LIMITS = (2**31 - 1, 2**15 - 1, 2**15 - 1)
_FIELDS = ("passage", "tf", "length")

_INSERT = """
INSERT INTO search_blocks(index_id, term, level, wide, postings, data, skips)
SELECT %s, u.t, %s::smallint, %s, u.n, x.d, kforge_skips(x.d, %s)
FROM unnest({terms}, {counts}, {offsets}, {lengths}) AS u(t, n, o, l),
     LATERAL (SELECT substring(%s::bytea FROM u.o FOR u.l) AS d OFFSET 0) x
"""

_MERGE = CONCATENATE.format(
    which="index_id = %(ix)s AND term = ANY(%(terms)s) AND level = %(level)s",
    level="%(level)s + 1",
)

_GATHER = CONCATENATE.format(which="index_id = %(ix)s AND term = ANY(%(terms)s)", level=BASE_LEVEL)


@functools.cache
def record_dtype(wide: bool) -> np.dtype[Any]:
    """The numpy type of a block's records (``wide`` or narrow)."""
    import numpy as np

    kinds = _WIDE if wide else _NARROW
    return np.dtype([("passage", kinds[0]), ("tf", kinds[1]), ("length", kinds[2])])


def write_blocks(
    conn: Any,
    ix: int,
    vocabulary: Sequence[str],
    codes: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    tfs: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    *,
    level: int = 0,
) -> None:
    """Add the postings ``(vocabulary[codes[i]], rows[i], tfs[i], lengths[i])`` (one per term
    and row) as one block per term at ``level``, in passage order."""
    import numpy as np

    if not len(codes):
        return
    order = np.lexsort((rows, codes))  # by term, each term's postings in passage order
    wide = any(
        int(a.max()) > top for a, top in zip((rows, tfs, lengths), _NARROW_LIMITS, strict=True)
    )
    records = np.empty(len(order), dtype=record_dtype(wide))
    records["passage"], records["tf"], records["length"] = rows[order], tfs[order], lengths[order]
    counts = np.bincount(codes, minlength=len(vocabulary))
    held = np.flatnonzero(counts)
    counts = counts[held]
    names = [vocabulary[i] for i in held.tolist()]
    size = records.itemsize
    offsets = (np.cumsum(counts) - counts) * size + 1
    terms_sql, terms_param = text_array(names)
    conn.execute(
        _INSERT.format(
            terms=terms_sql,
            counts=int_array(),
            offsets=int_array(),
            lengths=int_array(),
        ),
        (
            ix,
            level,
            wide,
            wide,
            terms_param,
            numbers(counts.tolist()),
            numbers(offsets.tolist()),
            numbers((counts * size).tolist()),
            records.tobytes(),
        ),
    )


def merge(conn: Any, ix: int, writes: Mapping[str, int]) -> None:
    """Merge blocks after a write that added one level-0 block to each term of ``writes``,
    which says how many writes added one since the term's base block: as in a counter in base
    ``FANOUT``, each level a count carries over holds ``FANOUT`` blocks, which become one of
    the next level (the lower level first, whose merge makes the next level's last block)."""
    level, span = 0, FANOUT
    due = [t for t, n in writes.items() if n % span == 0]
    while due:
        conn.execute(_MERGE, {"ix": ix, "terms": due, "level": level})
        level, span = level + 1, span * FANOUT
        due = [t for t in due if writes[t] % span == 0]


def tombstones_due(conn: Any, ix: int) -> bool:
    """Whether the tombstones of index ``ix`` exceed what ``purge`` lets pile up."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM search_tombstones WHERE index_id = %s), "
        "(SELECT passages FROM search_indexes WHERE id = %s)",
        (ix, ix),
    ).fetchone()
    dead, live = int(row[0]), int(row[1] or 0)
    return dead > max(_PURGE_MIN, PURGE_SHARE * live)


def purge(conn: Any, ix: int) -> int:
    """Rewrite the blocks of the terms removed passages held without those passages' postings
    (one base block per term, its count of writes back to 0), and forget the tombstones;
    returns how many there were."""
    import numpy as np

    dead = conn.execute(
        "DELETE FROM search_tombstones WHERE index_id = %s RETURNING passage, terms", (ix,)
    ).fetchall()
    if not dead:
        return 0
    rows = np.fromiter((r[0] for r in dead), dtype=np.int64, count=len(dead))
    rewrite(conn, ix, sorted({t for _, text in dead for t in _terms(text)}), without=rows)
    return len(dead)


def rewrite(
    conn: Any, ix: int, terms: Sequence[str], *, without: npt.NDArray[np.int64] | None = None
) -> None:
    """Rewrite the blocks of ``terms`` as one base block per term in passage order (with its
    skip list; its count of writes back to 0), leaving out the postings of rows ``without``."""
    import numpy as np

    blocks = conn.execute(
        "DELETE FROM search_blocks WHERE index_id = %s AND term = ANY(%s) "
        "RETURNING term, wide, data",
        (ix, terms),
        binary=True,
    ).fetchall()
    codes: dict[str, int] = {}
    parts = []
    for term, wide, data in blocks:
        records = np.frombuffer(data, dtype=record_dtype(wide))
        code = codes.setdefault(term, len(codes))
        kept = records if without is None else records[~np.isin(records["passage"], without)]
        parts.append((code, kept))
    if parts:
        write_blocks(
            conn,
            ix,
            list(codes),
            np.repeat([code for code, _ in parts], [len(r) for _, r in parts]).astype(np.int64),
            *(np.concatenate([r[f] for _, r in parts]).astype(np.int64) for f in _FIELDS),
            level=BASE_LEVEL,
        )
    _restart(conn, ix, terms)


def gather(conn: Any, ix: int, terms: Sequence[str]) -> None:
    """Concatenate the blocks of ``terms`` into one base block per term and record width, on
    the server (in passage order, with its skip list, unless writers at once interleaved
    them: then ``rewrite`` puts it in order); their counts of writes back to 0."""
    conn.execute(_GATHER, {"ix": ix, "terms": list(terms)})
    _restart(conn, ix, terms)


def _restart(conn: Any, ix: int, terms: Sequence[str]) -> None:
    """Count the writes of ``terms``, now in base blocks alone, from 0 again (``merge``)."""
    conn.execute(
        "UPDATE search_terms SET writes = 0 WHERE index_id = %s AND term = ANY(%s)",
        (ix, list(terms)),
    )


def scattered(conn: Any, postings: int = 1 << 21) -> list[tuple[int, list[str]]]:
    """The terms with more than ``SETTLED`` blocks, as ``(index id, terms)`` groups of about
    ``postings`` postings (each group one ``gather``)."""
    return _groups(
        conn.execute(
            "SELECT index_id, term, sum(postings) FROM search_blocks GROUP BY index_id, term "
            'HAVING count(*) > %s ORDER BY index_id, term COLLATE "C"',
            (SETTLED,),
        ).fetchall(),
        postings,
    )


def unordered(conn: Any, postings: int = 1 << 21) -> list[tuple[int, list[str]]]:
    """The terms whose blocks are not all in passage order, as ``(index id, terms)`` groups of
    about ``postings`` postings (each group one ``rewrite``)."""
    return _groups(
        conn.execute(
            "SELECT index_id, term, sum(postings) FROM search_blocks WHERE (index_id, term) IN ("
            "SELECT index_id, term FROM search_blocks WHERE skips = ''::bytea) "
            'GROUP BY index_id, term ORDER BY index_id, term COLLATE "C"'
        ).fetchall(),
        postings,
    )


def _groups(rows: Iterable[tuple[int, str, int]], postings: int) -> list[tuple[int, list[str]]]:
    """``(index id, term, postings)`` rows (by index) as ``(index id, terms)`` groups of about
    ``postings`` postings."""
    groups: list[tuple[int, list[str]]] = []
    held = 0
    for ix, term, count in rows:
        if not groups or groups[-1][0] != ix or held + int(count) > postings:
            groups.append((int(ix), []))
            held = 0
        groups[-1][1].append(str(term))
        held += int(count)
    return groups


def _terms(text: str) -> Iterable[str]:
    terms: dict[str, int] = loads(text)
    return terms.keys()
