"""The PostgreSQL passage store, shared by every process on the database.

PostgreSQL's own full-text ranking (``ts_rank_cd``) is not BM25 and Debian packages no BM25
extension, so each term's postings are packed in a few binary rows (``postgres_postings``)
and searched by the same MaxScore as the other stores (``postgres_search``): the same scores.
"""

from __future__ import annotations

import functools
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kforge.jsoncodec import dumps, loads
from kforge.store import postgres_peaks, postgres_search
from kforge.store import postgres_postings as postings
from kforge.store.passages import IndexedSource, IndexStatistics, Peaks
from kforge.store.postgres_batch import int_array, numbers, text_array
from kforge.store.postgres_cache import BlockCache
from kforge.store.postgres_database import PostgresDatabase

__all__ = ["PostgresPassageStore"]


def _index_id(conn: Any, index: str, *, create: bool = False) -> int | None:
    if create:
        conn.execute(
            "INSERT INTO search_indexes(name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (index,)
        )
    row = conn.execute("SELECT id FROM search_indexes WHERE name = %s", (index,)).fetchone()
    return None if row is None else int(row[0])


def _statistics(conn: Any, index: str) -> IndexStatistics:
    row = conn.execute(
        "SELECT passages, terms, chars FROM search_indexes WHERE name = %s", (index,)
    ).fetchone()
    if row is None:
        return IndexStatistics()
    return IndexStatistics(passages=int(row[0]), terms=int(row[1]), chars=int(row[2]))


def _frequencies(conn: Any, index: str, terms: Iterable[str]) -> dict[str, int]:
    wanted = list(dict.fromkeys(terms))
    rows = conn.execute(
        "SELECT t.term, t.df FROM search_indexes i JOIN search_terms t ON t.index_id = i.id "
        "WHERE i.name = %s AND t.term = ANY(%s)",
        (index, wanted),
    ).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    return {t: found.get(t, 0) for t in wanted}


_INDEX_TABLES = (
    "search_blocks",
    "search_tombstones",
    "search_terms",
    "search_passages",
    "search_sources",
)


def _write_postings(
    conn: Any, ix: int, ids: Sequence[int], counts: Sequence[dict[str, int]], lengths: list[int]
) -> dict[str, dict[str, int]]:
    """Write the postings of passages ``ids`` as blocks; returns their terms' peaks."""
    import numpy as np

    codes: dict[str, int] = {}
    term_codes: list[int] = []
    rows: list[int] = []
    tfs: list[int] = []
    sizes: list[int] = []
    for rowid, c, length in zip(ids, counts, lengths, strict=True):
        term_codes.extend([codes.setdefault(t, len(codes)) for t in c])
        tfs.extend(c.values())
        rows.extend([rowid] * len(c))
        sizes.extend([length] * len(c))
    arrays = [np.array(a, dtype=np.int64) for a in (term_codes, rows, tfs, sizes)]
    postings.write_blocks(conn, ix, list(codes), *arrays)
    return postgres_peaks.peaks_of(list(codes), arrays[0], arrays[2], arrays[3])


_ATTEMPTS = 5
"""How many times a write is tried when PostgreSQL aborts it to break a deadlock."""


class PostgresPassageStore(PostgresDatabase):
    """``PassageStore`` over the ``search_*`` tables (migrations 3 to 6) and the documents
    table of a PostgreSQL database, on a pool of its own. Its tables are made at its first
    open on a database (one that only held runs has none)."""

    passage_tables = True

    def _write(self, write: Callable[[Any], None]) -> None:
        """Run ``write`` in one transaction; again (up to ``_ATTEMPTS`` times, after a short
        random pause) when PostgreSQL aborted it to break a deadlock or a serialization
        conflict with another writer: a purge takes the blocks of many terms while a merge
        holds some of them, and writers meet on the index's counts row, so two writers can
        wait on each other, and the server then aborts one of them."""
        import psycopg

        retry = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
        with self._conn() as conn:
            for attempt in range(1, _ATTEMPTS + 1):
                try:
                    with conn.transaction():
                        write(conn)
                    return
                except retry:
                    if attempt == _ATTEMPTS:
                        raise
                time.sleep(random.uniform(0.0, 0.02 * attempt))

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        if not sources:
            return

        def write(conn: Any) -> None:
            ix = _index_id(conn, index, create=True)
            assert ix is not None
            _remove(conn, ix, [s.key for s in sources])
            rows = [(s.key, ordinal, p) for s in sources for ordinal, p in enumerate(s.passages)]
            counts = [{t: tf for t, tf in p.terms.items() if tf > 0} for _, _, p in rows]
            lengths = [sum(c.values()) for c in counts]
            texts = [
                text_array(column)
                for column in (
                    [p.id for _, _, p in rows],
                    [key for key, _, _ in rows],
                    [dumps(c) for c in counts],
                    [dumps(p.data) for _, _, p in rows],
                )
            ]
            inserted = conn.execute(
                "INSERT INTO search_passages(index_id, passage, source, ordinal, length, "
                f"chars, terms, data) SELECT %s, a, b, c, d, e, f, g FROM unnest({texts[0][0]}, "
                f"{texts[1][0]}, {int_array()}, {int_array()}, {int_array()}, {texts[2][0]}, "
                f"{texts[3][0]}) AS u(a, b, c, d, e, f, g) RETURNING passage, id",
                (
                    ix,
                    texts[0][1],
                    texts[1][1],
                    numbers(ordinal for _, ordinal, _ in rows),
                    numbers(lengths),
                    numbers(p.chars for _, _, p in rows),
                    texts[2][1],
                    texts[3][1],
                ),
            ).fetchall()
            by_passage = {str(r[0]): int(r[1]) for r in inserted}
            ids = [by_passage[p.id] for _, _, p in rows]
            conn.execute(
                "INSERT INTO search_sources(index_id, key, title_word, meta) "
                "SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[])",
                (
                    ix,
                    [s.key for s in sources],
                    [s.title_word for s in sources],
                    [dumps(s.meta) for s in sources],
                ),
            )
            peaks = _write_postings(conn, ix, ids, counts, lengths)
            df: Counter[str] = Counter(t for c in counts for t in c)
            postings.merge(conn, ix, _count_terms(conn, ix, df, 1, peaks))
            _add_statistics(conn, ix, len(rows), sum(lengths), sum(p.chars for _, _, p in rows))

        self._write(write)

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        def write(conn: Any) -> None:
            ix = _index_id(conn, index)
            if ix is None:
                return
            if keys is not None:
                _remove(conn, ix, list(keys))
                return
            for table in _INDEX_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE index_id = %s", (ix,))
            conn.execute("DELETE FROM search_indexes WHERE id = %s", (ix,))

        self._write(write)

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        sql = (
            "SELECT s.key, s.meta FROM search_sources s JOIN search_indexes i "
            "ON s.index_id = i.id WHERE i.name = %s"
        )
        params: tuple[Any, ...] = (index,)
        if keys is not None:
            sql += " AND s.key = ANY(%s)"
            params = (index, list(keys))
        with self._conn() as conn:
            rows = conn.execute(sql + ' ORDER BY s.key COLLATE "C"', params).fetchall()
        return {str(r[0]): loads(r[1]) for r in rows}

    def sources_by_title_word(self, index: str, words: Iterable[str]) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT s.key FROM search_indexes i JOIN search_sources s ON s.index_id = i.id "
                'WHERE i.name = %s AND s.title_word = ANY(%s) ORDER BY s.key COLLATE "C"',
                (index, sorted(set(words))),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def read_passages(self, index: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT p.passage, p.data FROM search_indexes i JOIN search_passages p "
                "ON p.index_id = i.id WHERE i.name = %s AND p.passage = ANY(%s)",
                (index, list(ids)),
            ).fetchall()
        return {str(r[0]): loads(r[1]) for r in rows}

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        with self._conn() as conn:
            ix = _index_id(conn, index)
            if ix is None:
                return []
            if key is None:
                rows = conn.execute(
                    "SELECT data FROM search_passages WHERE index_id = %s "
                    'ORDER BY source COLLATE "C", ordinal',
                    (ix,),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT data FROM search_passages WHERE index_id = %s AND source = %s "
                    "ORDER BY ordinal",
                    (ix, key),
                ).fetchall()
        return [loads(r[0]) for r in rows]

    def settle_index(self) -> None:
        # a term's blocks pile up with writes (up to seven a level) and a search pays for
        # each: terms with many are gathered into one on the server, a group of terms a
        # transaction
        with self._conn() as conn:
            groups = postings.scattered(conn)
        for ix, terms in groups:
            self._write(functools.partial(postings.gather, ix=ix, terms=terms))
        # blocks not in passage order (of an earlier layout, or of writers at once) are read
        # whole by a search: each group of their terms is rewritten in order in a transaction
        # of its own
        with self._conn() as conn:
            groups = postings.unordered(conn)
        for ix, terms in groups:
            self._write(functools.partial(_rewrite, ix=ix, terms=terms))
        # peaks of terms written before they were kept, a transaction for some thousands
        left = [True]
        while left[0]:
            self._write(lambda conn: left.__setitem__(0, postgres_peaks.fill(conn)))
        # the planner's row counts, and the space of merged blocks and of rows a purge
        # rewrote; autovacuum would do it too, minutes later
        with self._conn() as conn:
            conn.execute(f"VACUUM (ANALYZE) {', '.join(_INDEX_TABLES)}")

    def index_statistics(self, index: str) -> IndexStatistics:
        with self._conn() as conn:
            return _statistics(conn, index)

    def count_sources(self, index: str) -> int:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT count(*) FROM search_sources s JOIN search_indexes i "
                "ON s.index_id = i.id WHERE i.name = %s",
                (index,),
            ).fetchone()
        return int(row[0]) if row else 0

    def index_version(self, index: str) -> str:
        # every write updates the index's counts row: a new row version, a new xmin
        with self._conn() as conn:
            row = conn.execute(
                "SELECT id, xmin::text FROM search_indexes WHERE name = %s", (index,)
            ).fetchone()
        return "" if row is None else f"{row[0]}.{row[1]}"

    def document_frequencies(self, index: str, terms: Iterable[str]) -> dict[str, int]:
        with self._conn() as conn:
            return _frequencies(conn, index, terms)

    def search_passages(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> list[tuple[str, float]]:
        return self.search_versioned(index, terms, k, k1=k1, b=b)[1]

    def search_versioned(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> tuple[str, list[tuple[str, float]]]:
        # the version in the search's first read (``index_version``): one round trip fewer
        with self._conn() as conn:
            return postgres_search.search(conn, index, terms, k, k1=k1, b=b, cache=self.block_cache)

    @functools.cached_property
    def block_cache(self) -> BlockCache:
        """Blocks this store's searches read whole, kept for later searches
        (``postgres_cache``; its ``budget`` may be changed, 0 keeps none)."""
        return BlockCache()


def _rewrite(conn: Any, *, ix: int, terms: Sequence[str]) -> None:
    postings.rewrite(conn, ix, terms)


def _count_terms(
    conn: Any, ix: int, df: Counter[str], sign: int, peaks: Mapping[str, Peaks] | None = None
) -> dict[str, int]:
    """Add ``sign`` times ``df`` to the terms' document frequencies and take in the ``peaks``
    of their new postings; when adding, count one more write for each term
    (``postgres_postings.merge``) and return the counts."""
    if not df:
        return {}
    terms = sorted(df)  # a fixed order: concurrent writers lock rows in the same order
    terms_sql, terms_param = text_array(terms)
    peaks_sql, peaks_param = text_array([dumps((peaks or {}).get(t, {})) for t in terms])
    rows = conn.execute(
        "INSERT INTO search_terms(index_id, term, df, writes, peaks) SELECT %s, t, n, %s, "
        f"p::jsonb FROM unnest({terms_sql}, {int_array()}, {peaks_sql}) AS u(t, n, p) "
        "ON CONFLICT (index_id, term) DO UPDATE "
        "SET df = search_terms.df + EXCLUDED.df, writes = search_terms.writes + EXCLUDED.writes "
        "RETURNING term, writes, peaks::text",
        (ix, int(sign > 0), terms_param, numbers(sign * df[t] for t in terms), peaks_param),
    ).fetchall()
    if peaks:
        postgres_peaks.take_in(conn, ix, peaks, {term: held for term, _, held in rows})
    return {term: writes for term, writes, _ in rows} if sign > 0 else {}


def _add_statistics(conn: Any, ix: int, passages: int, terms: int, chars: int) -> None:
    conn.execute(
        "UPDATE search_indexes SET passages = passages + %s, terms = terms + %s, "
        "chars = chars + %s WHERE id = %s",
        (passages, terms, chars, ix),
    )


def _remove(conn: Any, ix: int, keys: Sequence[str]) -> None:
    rows = conn.execute(
        "DELETE FROM search_passages WHERE index_id = %s AND source = ANY(%s) "
        "RETURNING id, length, chars, terms",
        (ix, list(keys)),
    ).fetchall()
    if not rows:
        return
    df: Counter[str] = Counter()
    for *_, text in rows:
        df.update(loads(text).keys())
    # the postings stay in their blocks until a purge: searches pass over removed passages
    terms_sql, terms = text_array([r[3] for r in rows])
    conn.execute(
        "INSERT INTO search_tombstones(index_id, passage, terms) "
        f"SELECT %s, * FROM unnest({int_array(kind='bigint')}, {terms_sql})",
        (ix, numbers(r[0] for r in rows), terms),
    )
    _count_terms(conn, ix, df, -1)
    conn.execute(
        "DELETE FROM search_sources WHERE index_id = %s AND key = ANY(%s)", (ix, list(keys))
    )
    _add_statistics(conn, ix, -len(rows), -sum(r[1] for r in rows), -sum(r[2] for r in rows))
    if postings.tombstones_due(conn, ix):
        postings.purge(conn, ix)
