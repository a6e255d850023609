"""The postings of the PostgreSQL passage index: each term's postings packed in a few binary
rows (blocks), read for a query's terms by one indexed query and scored with numpy.

A block is one term's postings as fixed-width big-endian records (passage row, tf, passage
length): ``>i4 >i2 >i2`` (narrow), or ``>i8 >i4 >i4`` (wide) when a value does not fit.
Big-endian is what PostgreSQL's ``int4send`` writes, so blocks are built and merged by the
server as well as here. A term has a base block (the migration's, or a purge's) and above it
the blocks of later writes: each write adds one block per term it holds at level 0, and when
``FANOUT`` blocks of one level gather the server concatenates them into one of the next level
(``merge``), so after ``w`` writes a term has at most ``(FANOUT - 1) * log_FANOUT(w)`` blocks
besides its base one, and each posting was copied about ``log_FANOUT(w)`` times.

Removing a passage leaves its postings in their blocks and records a tombstone: a search
resolves its best rows to passages and passes over rows that no longer exist, so results stay
exact; ``purge`` rewrites the blocks of the removed passages' terms once tombstones pile up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kforge.jsoncodec import loads
from kforge.store.postgres_batch import int_array, numbers, text_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BASE_LEVEL",
    "BLOCK_TABLES",
    "FANOUT",
    "PURGE_SHARE",
    "best_passages",
    "merge",
    "purge",
    "tombstones_due",
    "write_blocks",
]

FANOUT = 8
"""Blocks of one level a term gathers before they merge into one of the next level."""

BASE_LEVEL = 32767
"""The level of a term's base block, which writes never merge."""

PURGE_SHARE = 1 / 16
"""Tombstones are purged once they exceed this share of the passages (or ``_PURGE_MIN``)."""
_PURGE_MIN = 256

_NARROW = (">i4", ">i2", ">i2")
_WIDE = (">i8", ">i4", ">i4")
_NARROW_LIMITS = (2**31 - 1, 2**15 - 1, 2**15 - 1)
_FIELDS = ("passage", "tf", "length")

BLOCK_TABLES = (
    """
    CREATE TABLE search_blocks (
        id bigserial,
        index_id integer NOT NULL,
        term text NOT NULL,
        level smallint NOT NULL,
        wide boolean NOT NULL,
        postings integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (index_id, term, id)
    )
    """,
    # blocks are read whole and compress little: out of line, uncompressed, read as they lie
    "ALTER TABLE search_blocks ALTER COLUMN data SET STORAGE EXTERNAL",
    """
    CREATE TABLE search_tombstones (
        index_id integer NOT NULL,
        passage bigint NOT NULL,
        terms text NOT NULL,
        PRIMARY KEY (index_id, passage)
    )
    """,
    # the postings table of migration 3, packed per term (a term's rows in passage order)
    """
    INSERT INTO search_blocks(index_id, term, level, wide, postings, data)
    SELECT index_id, term, 32767, wide, count(*),  -- BASE_LEVEL
           string_agg(CASE WHEN wide THEN int8send(passage) || int4send(tf) || int4send(length)
                      ELSE int4send(passage::int) || int2send(tf::smallint)
                           || int2send(length::smallint) END, ''::bytea ORDER BY passage)
    FROM (SELECT *, passage > 2147483647 OR tf > 32767 OR length > 32767 AS wide
          FROM search_postings) p
    GROUP BY index_id, term, wide
    """,
    "DROP TABLE search_postings",
    # how many writes added a block of the term since its base block (``merge``)
    "ALTER TABLE search_terms ADD COLUMN writes integer NOT NULL DEFAULT 0",
)
"""Migration 4 of the PostgreSQL schema: postings as blocks."""

_INSERT = """
INSERT INTO search_blocks(index_id, term, level, wide, postings, data)
SELECT %s, u.t, %s::smallint, %s, u.n, substring(%s::bytea FROM u.o FOR u.l)
FROM unnest({terms}, {counts}, {offsets}, {lengths}) AS u(t, n, o, l)
"""

_MERGE = """
WITH gone AS (
    DELETE FROM search_blocks
    WHERE index_id = %(ix)s AND term = ANY(%(terms)s) AND level = %(level)s
    RETURNING id, term, wide, postings, data
)
INSERT INTO search_blocks(index_id, term, level, wide, postings, data)
SELECT %(ix)s, term, %(level)s + 1, wide, sum(postings), string_agg(data, ''::bytea ORDER BY id)
FROM gone GROUP BY term, wide
"""


def _dtype(wide: bool) -> np.dtype[Any]:
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
    """Add the postings ``(vocabulary[codes[i]], rows[i], tfs[i], lengths[i])`` as one block
    per term at ``level``."""
    import numpy as np

    if not len(codes):
        return
    order = np.argsort(codes, kind="stable")
    wide = any(
        int(a.max()) > top for a, top in zip((rows, tfs, lengths), _NARROW_LIMITS, strict=True)
    )
    records = np.empty(len(order), dtype=_dtype(wide))
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
            records.tobytes(),
            terms_param,
            numbers(counts.tolist()),
            numbers(offsets.tolist()),
            numbers((counts * size).tolist()),
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


def best_passages(
    conn: Any,
    blocks: Sequence[tuple[str, bool, bytes]],
    weights: Mapping[str, float],
    base: float,
    slope: float,
    k: int,
) -> list[tuple[str, float]]:
    """The ``k`` best ``(passage id, score)`` of the postings in ``blocks`` (``(term, wide,
    data)`` rows of ``search_blocks``): a term's share of a score is ``weights[term] * tf / (tf
    + base + slope * length)``, summed over every posting; best first, ties in the order
    passages were written. ``conn`` names the passages of the best rows."""
    import numpy as np

    blocks = [b for b in blocks if b[0] in weights]
    if k <= 0 or not blocks:
        return []
    parts = [np.frombuffer(data, dtype=_dtype(wide)) for _, wide, data in blocks]
    rows = np.concatenate([p["passage"] for p in parts]).astype(np.int64)
    tf = np.concatenate([p["tf"] for p in parts]).astype(np.float64)
    length = np.concatenate([p["length"] for p in parts]).astype(np.float64)
    # w * tf / (tf + base + slope * length) as the other stores compute it (the same share,
    # bit for bit), in place: these arrays hold every posting of the query's terms
    denominator = tf + base
    length *= slope
    denominator += length
    start = 0
    for (term, _, _), part in zip(blocks, parts, strict=True):
        tf[start : start + len(part)] *= weights[term]
        start += len(part)
    tf /= denominator
    low, high = int(rows.min()), int(rows.max())
    if _dense(high - low + 1, len(rows)):
        rows -= low
        return _resolve(conn, np.bincount(rows, weights=tf), None, low, k)
    # few postings spread over a wide range of rows
    ids, where = np.unique(rows, return_inverse=True)
    return _resolve(conn, np.bincount(where, weights=tf), ids, 0, k)


def _dense(span: int, postings: int) -> bool:
    """Whether totals are summed in an array over the whole ``span`` of rows the ``postings``
    name (else over the rows they name, which costs a sort)."""
    return span <= 4 * postings + 65536


def _resolve(
    conn: Any,
    totals: npt.NDArray[Any],
    ids: npt.NDArray[np.int64] | None,
    low: int,
    k: int,
) -> list[tuple[str, float]]:
    """The ``k`` best rows as passages, passing over removed ones (tombstones): row ``ids[i]``
    (``low + i`` without ``ids``) totals ``totals[i]``; the best ``wanted`` rows are looked up,
    four times as many again while too few of them remain."""
    import numpy as np

    wanted = k
    while True:
        best = _ordered_best(totals, ids, low, wanted)
        rows = best.tolist()
        found = dict(
            conn.execute(
                "SELECT id, passage FROM search_passages WHERE id = ANY(%s)", (rows,)
            ).fetchall()
        )
        if len(found) >= min(k, len(rows)) or len(rows) < wanted:
            break
        wanted *= 4
    at = (best - low).tolist() if ids is None else [int(i) for i in np.searchsorted(ids, best)]
    live = [(str(found[r]), float(totals[i])) for r, i in zip(rows, at, strict=True) if r in found]
    return live[:k]


def _ordered_best(
    totals: npt.NDArray[Any], ids: npt.NDArray[np.int64] | None, low: int, wanted: int
) -> npt.NDArray[np.int64]:
    """The rows of the ``wanted`` highest totals above 0 (fewer when fewer are), best first,
    equal totals by row."""
    import numpy as np

    if wanted < len(totals):
        cut = len(totals) - wanted
        floor = max(float(totals[np.argpartition(totals, cut)[cut]]), 0.0)
        every = np.flatnonzero(totals >= floor) if floor > 0 else np.flatnonzero(totals)
    else:
        every = np.flatnonzero(totals)
    rows = every + low if ids is None else ids[every]
    order = np.lexsort((rows, -totals[every]))[:wanted]
    return np.asarray(rows[order], dtype=np.int64)


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
    terms = sorted({t for _, text in dead for t in _terms(text)})
    blocks = conn.execute(
        "DELETE FROM search_blocks WHERE index_id = %s AND term = ANY(%s) "
        "RETURNING term, wide, data",
        (ix, terms),
        binary=True,
    ).fetchall()
    codes: dict[str, int] = {}
    parts = []
    for term, wide, data in blocks:
        records = np.frombuffer(data, dtype=_dtype(wide))
        code = codes.setdefault(term, len(codes))
        parts.append((code, records[~np.isin(records["passage"], rows)]))
    if parts:
        write_blocks(
            conn,
            ix,
            list(codes),
            np.repeat([code for code, _ in parts], [len(r) for _, r in parts]).astype(np.int64),
            *(np.concatenate([r[f] for _, r in parts]).astype(np.int64) for f in _FIELDS),
            level=BASE_LEVEL,
        )
    conn.execute(
        "UPDATE search_terms SET writes = 0 WHERE index_id = %s AND term = ANY(%s)", (ix, terms)
    )
    return len(dead)


def _terms(text: str) -> Iterable[str]:
    terms: dict[str, int] = loads(text)
    return terms.keys()
