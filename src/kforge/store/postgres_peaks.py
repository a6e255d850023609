"""The peaks of the PostgreSQL index's terms (``kforge.store.passages.Peaks``): kept in
``search_terms`` by every write, and worked out from the blocks for terms written before
they were kept (``fill``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kforge.jsoncodec import dumps, loads
from kforge.store.passages import Peaks
from kforge.store.postgres_postings import record_dtype

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["fill", "peaks_of", "take_in"]


def take_in(conn: Any, ix: int, more: Mapping[str, Peaks], held: Mapping[str, str | None]) -> None:
    """Take the peaks ``more`` of a write's postings into the terms' peaks ``held`` (JSON, as
    the write's upsert of their rows returned them, which locks the rows until it commits):
    only the terms whose peaks change are written. Peaks not known stay so until ``fill``."""
    changed: dict[str, dict[str, int]] = {}
    for term, peaks in more.items():
        text = held.get(term)
        if text is None:
            continue
        known: dict[str, int] = loads(text)
        merged = dict(known)
        for tf, least in peaks.items():
            if least < merged.get(tf, least + 1):
                merged[tf] = least
        if merged != known:
            changed[term] = merged
    if changed:
        conn.execute(
            "UPDATE search_terms t SET peaks = u.p::jsonb "
            "FROM unnest(%s::text[], %s::text[]) AS u(term, p) "
            "WHERE t.index_id = %s AND t.term = u.term",
            (list(changed), [dumps(p) for p in changed.values()], ix),
        )


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


def peaks_of(
    vocabulary: list[str],
    codes: npt.NDArray[np.int64],
    tfs: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
) -> dict[str, dict[str, int]]:
    """The peaks of the postings ``(vocabulary[codes[i]], tfs[i], lengths[i])``, by term."""
    import numpy as np

    order = np.lexsort((lengths, tfs, codes))  # by term and tf, the least length first
    code, tf, length = codes[order], tfs[order], lengths[order]
    first = np.flatnonzero((np.diff(code, prepend=-1) != 0) | (np.diff(tf, prepend=-1) != 0))
    peaks: dict[str, dict[str, int]] = {}
    for c, t, n in zip(
        code[first].tolist(), tf[first].tolist(), length[first].tolist(), strict=True
    ):
        peaks.setdefault(vocabulary[c], {})[str(t)] = n
    return peaks
