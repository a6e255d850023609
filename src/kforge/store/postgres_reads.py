"""The reads of a PostgreSQL search past its first statement: parts of blocks, streamed.

A search may read megabytes of postings (the middle terms of a long query, whole). Fetched as
one result, they would all be in memory at once, twice (the driver's copy and Python's), and
in proportion to the corpus. Here the server cuts every part asked for into pieces of at most
``PIECE`` bytes and streams them in the order asked, a few rows at a time, and the search
adds each term's pieces into its sums about ``BATCH`` bytes at a time: what a search holds
follows these two constants, not the corpus. The server cuts and sends while the client sums.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kforge.store.postgres_batch import int_array, numbers

if TYPE_CHECKING:
    from kforge.store.postgres_lists import Block

__all__ = ["BATCH", "PIECE", "Gone", "Part", "batches"]

PIECE = 1 << 16
"""Bytes of a streamed row at most (a multiple of every record width)."""

BATCH = 1 << 18
"""Bytes of one term's pieces summed at once at most (besides one piece)."""

_ROWS = 16
"""Rows the driver fetches at a time: at most ``_ROWS * PIECE`` bytes wait to be summed."""

Part = tuple["Block", int, int]
"""``(block, first byte (from 1), bytes)`` of a read."""

_READ = """
SELECT u.n, p.data, NULL::text
FROM unnest({codes}, {ids}, {starts}, {lengths}) WITH ORDINALITY AS u(c, id, o, l, n)
CROSS JOIN LATERAL (
    SELECT substring(b.data FROM u.o + i * %(piece)s FOR least(%(piece)s, u.l - i * %(piece)s))
    FROM search_blocks b CROSS JOIN generate_series(0, (u.l - 1) / %(piece)s) AS i
    WHERE b.index_id = %(ix)s AND b.term = (%(terms)s::text[])[u.c] AND b.id = u.id
    ORDER BY i
    OFFSET 0
) p(data)
UNION ALL
SELECT id, NULL, passage FROM search_passages WHERE id = ANY({rows})
""".format(
    codes=int_array().replace("%s", "%(codes)s"),
    ids=int_array("bigint").replace("%s", "%(ids)s"),
    starts=int_array().replace("%s", "%(starts)s"),
    lengths=int_array().replace("%s", "%(lengths)s"),
    rows=int_array("bigint").replace("%s", "%(rows)s"),
)
"""Pieces of parts of blocks, numbered as asked and in that order (the lateral subquery, kept
apart by ``OFFSET 0``, runs once a part, part after part), then the passages of rows."""


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
    ``keys``, one a part; else the part's term), in the order given, about ``BATCH`` bytes a
    batch (a part longer than a piece may span batches: its pieces come in order). The
    passages of ``rows`` go into ``names`` (a row without one is removed). Raises ``Gone``
    once the stream ends if a part was missing."""
    if not parts and not rows:
        return
    terms = sorted({block.term for block, _, _ in parts})
    code = {t: n for n, t in enumerate(terms, start=1)}
    params = {
        "codes": numbers(code[block.term] for block, _, _ in parts),
        "ids": numbers(block.id for block, _, _ in parts),
        "starts": numbers(start for _, start, _ in parts),
        "lengths": numbers(length for _, _, length in parts),
        "ix": ix,
        "terms": terms,
        "piece": PIECE,
        "rows": numbers(rows),
    }
    key: Sequence[Hashable] = keys if keys is not None else [b.term for b, _, _ in parts]
    got = [0] * len(parts)
    batch: list[tuple[int, bytes]] = []
    held = 0
    cursor = conn.cursor(binary=True)
    try:
        for number, data, passage in cursor.stream(_READ, params, size=_ROWS):
            if passage is not None:
                names[number] = passage
                continue
            at = number - 1
            got[at] += len(data)
            if batch and (key[at] != key[batch[0][0]] or held + len(data) > BATCH):
                yield batch
                batch, held = [], 0
            batch.append((at, data))
            held += len(data)
    finally:
        cursor.close()
    if batch:
        yield batch
    if any(
        got[i] != min(length, block.size - start + 1)
        for i, (block, start, length) in enumerate(parts)
    ):
        raise Gone
