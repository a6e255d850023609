"""The peaks of the PostgreSQL index's terms (``kforge.store.passages.Peaks``): kept in
``search_terms`` by every write, and worked out from the blocks for terms written before
they were kept (``fill``)."""

from __future__ import annotations

from typing import Any

from kforge.jsoncodec import dumps
from kforge.store.postgres_postings import record_dtype

__all__ = ["MERGE", "PEAKS", "fill"]

PEAKS = (
    # NULL: not known (the term's postings were written before peaks were kept)
    "ALTER TABLE search_terms ADD COLUMN peaks jsonb",
    """
    CREATE FUNCTION kforge_merge_peaks(held jsonb, more jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN held IS NULL THEN NULL ELSE coalesce((
            SELECT jsonb_object_agg(key, least) FROM (
                SELECT key, min(value::int) AS least
                FROM (SELECT * FROM jsonb_each_text(held)
                      UNION ALL SELECT * FROM jsonb_each_text(more)) e
                GROUP BY key
            ) m
        ), '{}'::jsonb) END
    $$
    """,
)
"""Migration 6 of the PostgreSQL schema: each term's peaks."""

MERGE = "kforge_merge_peaks(search_terms.peaks, EXCLUDED.peaks)"
"""The SQL that takes a write's peaks (``EXCLUDED.peaks``) into a term's, in an upsert: peaks
not known stay so until ``fill``; a removal takes in none, and the peaks left bound the
postings that remain."""

_TERMS_A_FILL = 2000
_POSTINGS_A_READ = 1 << 21
"""Postings of the blocks one read brings (about 16 MB)."""


def fill(conn: Any) -> bool:
    """Work out from its blocks the peaks of up to ``_TERMS_A_FILL`` terms whose peaks are not
    known, in the transaction open on ``conn``; returns whether any were left to do. The terms'
    rows are locked first, so no write adds a block they would miss."""
    terms = conn.execute(
        "SELECT index_id, term, df FROM search_terms WHERE peaks IS NULL "
        "ORDER BY index_id, term LIMIT %s FOR UPDATE",
        (_TERMS_A_FILL,),
    ).fetchall()
    if not terms:
        return False
    peaks: dict[tuple[int, str], dict[str, int]] = {(ix, t): {} for ix, t, _ in terms}
    group: list[tuple[int, str]] = []
    held = 0
    for number, (ix, term, df) in enumerate(terms, start=1):
        group.append((ix, term))
        held += int(df)
        if held >= _POSTINGS_A_READ or number == len(terms):
            _take_blocks(conn, group, peaks)
            group, held = [], 0
    conn.execute(
        "UPDATE search_terms t SET peaks = u.p::jsonb "
        "FROM unnest(%s::int[], %s::text[], %s::text[]) AS u(ix, term, p) "
        "WHERE t.index_id = u.ix AND t.term = u.term",
        (
            [ix for ix, _, _ in terms],
            [t for _, t, _ in terms],
            [dumps(peaks[ix, t]) for ix, t, _ in terms],
        ),
    )
    return True


def _take_blocks(
    conn: Any, terms: list[tuple[int, str]], peaks: dict[tuple[int, str], dict[str, int]]
) -> None:
    """Take into ``peaks`` the postings of the blocks of ``terms`` ((index id, term) pairs)."""
    import numpy as np

    blocks = conn.execute(
        "SELECT b.index_id, b.term, b.wide, b.data FROM search_blocks b "
        "JOIN unnest(%s::int[], %s::text[]) AS u(ix, t) ON b.index_id = u.ix AND b.term = u.t",
        ([ix for ix, _ in terms], [t for _, t in terms]),
        binary=True,
    ).fetchall()
    for ix, term, wide, data in blocks:
        records = np.frombuffer(data, dtype=record_dtype(wide))
        tf = records["tf"].astype(np.int64)
        length = records["length"].astype(np.int64)
        order = np.lexsort((length, tf))  # by tf, the least length first
        first = np.flatnonzero(np.diff(tf[order], prepend=-1))
        held = peaks[ix, term]
        for value, least in zip(
            tf[order][first].tolist(), length[order][first].tolist(), strict=True
        ):
            key = str(value)
            if key not in held or least < held[key]:
                held[key] = least
