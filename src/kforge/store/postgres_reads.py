"""The reads of a PostgreSQL search past its first statement: parts of blocks, streamed.

A search may read megabytes of postings (the middle terms of a long query, whole). Fetched as
one result, they would all be in memory at once, twice (the driver's copy and Python's), and
in proportion to the corpus. Here the server cuts every part asked for into pieces of at most
``PIECE`` bytes and streams them in the order asked, a few rows at a time, and the search
adds each term's pieces into its sums about ``BATCH`` bytes at a time: what a search holds
follows these two constants, not the corpus. The server cuts and sends while the client sums.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kforge.store.postgres_batch import int_array, numbers

if TYPE_CHECKING:
    from kforge.store.postgres_lists import Block

__all__ = ["BATCH", "PIECE", "Gone", "Part", "batches"]

PIECE = 1 << 18
"""Bytes of a streamed row at most (a multiple of every record width)."""

BATCH = 1 << 18
"""Bytes of one term's pieces summed at once at most (besides one piece)."""

_IN_FLIGHT = 1 << 20
"""Bytes the driver fetches at a time at most (as rows of the longest part asked, at most a
piece; at most ``_MOST_ROWS`` rows): what waits to be summed."""
_MOST_ROWS = 256

Part = tuple["Block", int, int]
"""``(block, first byte (from 1), bytes)`` of a read."""

_ARRAYS = {
    "codes": int_array().replace("%s", "%(codes)s"),
    "ids": int_array("bigint").replace("%s", "%(ids)s"),
    "starts": int_array().replace("%s", "%(starts)s"),
    "lengths": int_array().replace("%s", "%(lengths)s"),
    "rows": int_array("bigint").replace("%s", "%(rows)s"),
}

_FETCH = """
SELECT u.n, substring(b.data FROM u.o FOR u.l), NULL::text
FROM unnest({codes}, {ids}, {starts}, {lengths}) WITH ORDINALITY AS u(c, id, o, l, n)
JOIN search_blocks b ON b.index_id = %(ix)s AND b.term = (%(terms)s::text[])[u.c] AND b.id = u.id
UNION ALL
SELECT id, NULL, passage FROM search_passages WHERE id = ANY({rows})
""".format(**_ARRAYS)
"""Pieces of blocks, numbered as asked (in any order), then the passages of rows."""

_STREAM = """
SELECT u.n, p.data, NULL::text
FROM unnest({codes}, {ids}, {starts}, {lengths}) WITH ORDINALITY AS u(c, id, o, l, n)
CROSS JOIN LATERAL (
    SELECT substring(b.data FROM u.o FOR u.l) FROM search_blocks b
    WHERE b.index_id = %(ix)s AND b.term = (%(terms)s::text[])[u.c] AND b.id = u.id
    OFFSET 0
) p(data)
UNION ALL
SELECT id, NULL, passage FROM search_passages WHERE id = ANY({rows})
""".format(**_ARRAYS)
"""Pieces of blocks, numbered as asked and in that order (the lateral subquery, kept apart by
``OFFSET 0``, runs once a piece, piece after piece), then the passages of rows."""


class Gone(Exception):
    """A block the search's first read named was merged or purged since."""


def batches(
    conn: Any,
    ix: int,
    parts: Sequence[Part],
    rows: Sequence[int],
    names: dict[int, str],
    *,
    keys: Sequence[Hashable] | None = None,
) -> Iterator[list[tuple[int, bytes]]]:
    """The bytes of ``parts`` (records of blocks: whole, or a stretch that may run past the
    block's end) in batches ``[(part index, bytes), ...]``: consecutive parts of one key (of
    ``keys``, one a part; else the part's term and record width), in the order given, about ``BATCH`` bytes a
    batch (a part longer than a piece may span batches: its pieces come in order). The
    passages of ``rows`` go into ``names`` (a row without one is removed). Raises ``Gone``
    once the stream ends if a part was missing."""
    if not parts and not rows:
        return
    # a term's narrow and wide blocks are apart: their records differ
    key: Sequence[Hashable] = keys if keys is not None else [(b.term, b.wide) for b, _, _ in parts]
    # each part in pieces: (part index, first byte, bytes)
    pieces = [
        (n, start + at, min(PIECE, length - at))
        for n, (_, start, length) in enumerate(parts)
        for at in range(0, length, PIECE)
    ]
    terms = sorted({block.term for block, _, _ in parts})
    code = {t: n for n, t in enumerate(terms, start=1)}
    params = {
        "codes": numbers(code[parts[n][0].term] for n, _, _ in pieces),
        "ids": numbers(parts[n][0].id for n, _, _ in pieces),
        "starts": numbers(start for _, start, _ in pieces),
        "lengths": numbers(length for _, _, length in pieces),
        "ix": ix,
        "terms": terms,
        "rows": numbers(rows),
    }
    got = [0] * len(parts)
    batch: list[tuple[int, bytes]] = []
    held = 0
    cursor = stream = None
    found: Iterable[tuple[int, bytes | None, str | None]]
    if sum(length for _, _, length in pieces) <= _IN_FLIGHT:
        # few bytes: fetched at once (a statement the driver prepares once it recurs), then
        # put in the order asked
        found = sorted(
            conn.execute(_FETCH, params, binary=True).fetchall(),
            key=lambda row: (row[2] is not None, row[0]),
        )
    else:
        longest = max(length for _, _, length in pieces)
        cursor = conn.cursor(binary=True)
        found = stream = cursor.stream(
            _STREAM, params, size=max(1, min(_MOST_ROWS, _IN_FLIGHT // longest))
        )
    try:
        for number, data, passage in found:
            if passage is not None:
                names[number] = passage
                continue
            assert data is not None
            at = pieces[number - 1][0]
            got[at] += len(data)
            if batch and (key[at] != key[batch[0][0]] or held + len(data) > BATCH):
                yield batch
                batch, held = [], 0
            batch.append((at, data))
            held += len(data)
    finally:
        # a search that stops early (an error) leaves the connection ready for the next
        # statement: the stream cancels what is left of its statement
        if stream is not None:
            stream.close()
        if cursor is not None:
            cursor.close()
    if batch:
        yield batch
    if any(
        got[i] != min(length, block.size - start + 1)
        for i, (block, start, length) in enumerate(parts)
    ):
        raise Gone
