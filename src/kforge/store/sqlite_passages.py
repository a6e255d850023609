"""The SQLite passage store: postings in an ordinary table clustered by term,
BM25 summed in SQL over the postings of the query's terms (see ``kforge.store.passages``).

FTS5 is compiled into Python's sqlite3, but its ``bm25()`` fixes k1 and b and uses another idf,
and Python cannot register a ranking function of its own; postings in a table keep today's
ranking exactly and share one search algorithm with the PostgreSQL store.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kforge.jsoncodec import dumps, loads
from kforge.store.passages import (
    FLOOR_SAMPLE,
    IndexedSource,
    IndexStatistics,
    Peaks,
    add_peaks,
    bm25_top,
)
from kforge.store.sqlite_database import SQLiteDatabase

__all__ = ["SQLitePassageStore"]

_TOP = """
WITH e AS (SELECT key AS term, value AS w FROM json_each(?1)),
s AS MATERIALIZED (
    SELECT p.passage AS pid, p.length AS len,
           sum(e.w * p.tf / (p.tf + ?2 + ?3 * p.length)) AS score
    FROM e CROSS JOIN search_postings p ON p.index_id = ?4 AND p.term = e.term
    GROUP BY p.passage
),
h AS MATERIALIZED (SELECT pid, len, score FROM s ORDER BY score DESC, pid LIMIT ?8),
hx AS MATERIALIZED (
    SELECT h.pid, h.score + coalesce((
        SELECT sum(r.value * p.tf / (p.tf + ?2 + ?3 * h.len))
        FROM json_each(?7) AS r CROSS JOIN search_postings p
            ON p.index_id = ?4 AND p.term = r.key AND p.passage = h.pid
    ), 0) AS total
    FROM h
),
f AS (SELECT coalesce((SELECT total FROM hx ORDER BY total DESC LIMIT 1 OFFSET ?5), 0) AS v),
c AS MATERIALIZED (
    SELECT pid, len, score FROM s, f
    WHERE f.v >= ?6 AND score >= f.v - ?6 AND pid NOT IN (SELECT pid FROM h)
),
x AS (
    SELECT c.pid, sum(r.value * p.tf / (p.tf + ?2 + ?3 * c.len)) AS extra
    FROM c CROSS JOIN json_each(?7) AS r CROSS JOIN search_postings p
        ON p.index_id = ?4 AND p.term = r.key AND p.passage = c.pid
    GROUP BY c.pid
),
t AS (
    SELECT pid, total FROM hx
    UNION ALL
    SELECT c.pid, c.score + coalesce(x.extra, 0) FROM c LEFT JOIN x ON x.pid = c.pid
    ORDER BY 2 DESC, 1 LIMIT ?5 + 1
)
SELECT sp.passage, t.total FROM t JOIN search_passages sp ON sp.id = t.pid
ORDER BY t.total DESC, t.pid
"""


class _Postings:
    def __init__(self, conn: sqlite3.Connection, index_id: int) -> None:
        self._conn, self._id = conn, index_id

    def top(
        self,
        essential: Mapping[str, float],
        rest: Mapping[str, float],
        base: float,
        slope: float,
        k: int,
        slack: float,
    ) -> list[tuple[str, float]]:
        rows = self._conn.execute(
            _TOP,
            (
                dumps(dict(essential)),
                *(base, slope, self._id, k - 1, slack, dumps(dict(rest)), FLOOR_SAMPLE * k),
            ),
        ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]


def _statistics(conn: sqlite3.Connection, index: str) -> IndexStatistics:
    row = conn.execute(
        "SELECT passages, terms, chars FROM search_indexes WHERE name = ?", (index,)
    ).fetchone()
    if row is None:
        return IndexStatistics()
    return IndexStatistics(passages=int(row[0]), terms=int(row[1]), chars=int(row[2]))


def _terms(
    conn: sqlite3.Connection, index: str, terms: Iterable[str], *, peaks: bool = False
) -> tuple[dict[str, int], dict[str, Peaks]]:
    """Each term's document frequency (0 when absent) and, with ``peaks``, its peaks."""
    wanted = list(dict.fromkeys(terms))
    rows = conn.execute(
        f"SELECT t.term, t.df, {'t.peaks' if peaks else 'NULL'} FROM search_indexes i "
        "JOIN search_terms t ON t.index_id = i.id AND t.term IN (SELECT value FROM json_each(?)) "
        "WHERE i.name = ?",
        (dumps(wanted), index),
    ).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    held = {str(r[0]): loads(r[2]) for r in rows if r[2] is not None}
    return {t: found.get(t, 0) for t in wanted}, held


_COUNT_TERMS = """
INSERT INTO search_terms(index_id, term, df, peaks) VALUES (?, ?, ?, ?)
ON CONFLICT(index_id, term) DO UPDATE SET df = df + excluded.df,
    peaks = CASE WHEN excluded.peaks = '{}' THEN peaks ELSE (
        SELECT json_group_object(key, least) FROM (
            SELECT key, min(value) AS least FROM (
                SELECT key, value FROM json_each(search_terms.peaks)
                UNION ALL SELECT key, value FROM json_each(excluded.peaks)
            ) GROUP BY key
        )
    ) END
"""
"""Add to each term's document frequency and take in the peaks of its new postings (a removal
adds none: the peaks left bound what remains)."""


class SQLitePassageStore(SQLiteDatabase):
    """``PassageStore`` over the ``search_*`` tables (migrations 5 to 7) and the documents
    table of one SQLite file, on a connection of its own."""

    @staticmethod
    def _index_id(conn: sqlite3.Connection, index: str, *, create: bool = False) -> int | None:
        row = conn.execute("SELECT id FROM search_indexes WHERE name = ?", (index,)).fetchone()
        if row is not None or not create:
            return None if row is None else int(row[0])
        # a random first count: an index made again (its id reused) never repeats a version
        # of the one it replaces (``index_version``)
        return int(
            conn.execute(
                "INSERT INTO search_indexes(name, writes) VALUES (?, ?)",
                (index, secrets.randbits(62)),
            ).lastrowid
            or 0
        )

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        if not sources:
            return
        with self._tx() as conn:
            ix = self._index_id(conn, index, create=True)
            assert ix is not None
            self._remove(conn, ix, [s.key for s in sources])
            conn.executemany(
                "INSERT INTO search_sources(index_id, key, title_word, meta) VALUES (?,?,?,?)",
                [(ix, s.key, s.title_word, dumps(s.meta)) for s in sources],
            )
            postings: list[tuple[int, str, int, int, int]] = []
            df: Counter[str] = Counter()
            peaks: dict[str, dict[str, int]] = {}
            passages = terms = chars = 0
            for source in sources:
                for ordinal, p in enumerate(source.passages):
                    counts = {t: tf for t, tf in p.terms.items() if tf > 0}
                    length = sum(counts.values())
                    rowid = conn.execute(
                        "INSERT INTO search_passages(index_id, passage, source, ordinal, length, "
                        "chars, terms, data) VALUES (?,?,?,?,?,?,?,?)",
                        (
                            ix,
                            p.id,
                            source.key,
                            ordinal,
                            length,
                            p.chars,
                            dumps(counts),
                            dumps(p.data),
                        ),
                    ).lastrowid
                    postings.extend(
                        (ix, t, int(rowid or 0), tf, length) for t, tf in counts.items()
                    )
                    df.update(counts.keys())
                    add_peaks(peaks, counts, length)
                    passages, terms, chars = passages + 1, terms + length, chars + p.chars
            conn.executemany(
                "INSERT INTO search_postings(index_id, term, passage, tf, length) "
                "VALUES (?,?,?,?,?)",
                postings,
            )
            self._count_terms(conn, ix, df, 1, peaks)
            self._add_statistics(conn, ix, passages, terms, chars)

    @staticmethod
    def _count_terms(
        conn: sqlite3.Connection,
        ix: int,
        df: Counter[str],
        sign: int,
        peaks: Mapping[str, Peaks] | None = None,
    ) -> None:
        held = peaks or {}
        conn.executemany(
            _COUNT_TERMS,
            [(ix, term, sign * n, dumps(held.get(term, {}))) for term, n in df.items()],
        )

    @staticmethod
    def _add_statistics(
        conn: sqlite3.Connection, ix: int, passages: int, terms: int, chars: int
    ) -> None:
        conn.execute(
            "UPDATE search_indexes SET passages = passages + ?, terms = terms + ?, "
            "chars = chars + ?, writes = writes + 1 WHERE id = ?",
            (passages, terms, chars, ix),
        )

    def _remove(self, conn: sqlite3.Connection, ix: int, keys: Sequence[str]) -> None:
        rows = conn.execute(
            "SELECT id, length, chars, terms FROM search_passages "
            "WHERE index_id = ? AND source IN (SELECT value FROM json_each(?))",
            (ix, dumps(list(keys))),
        ).fetchall()
        df: Counter[str] = Counter()
        gone: list[tuple[int, str, int]] = []
        for rowid, _, _, text in rows:
            terms = loads(text)
            df.update(terms.keys())
            gone.extend((ix, t, rowid) for t in terms)
        conn.executemany(
            "DELETE FROM search_postings WHERE index_id = ? AND term = ? AND passage = ?", gone
        )
        self._count_terms(conn, ix, df, -1)
        conn.executemany("DELETE FROM search_passages WHERE id = ?", [(r[0],) for r in rows])
        conn.executemany(
            "DELETE FROM search_sources WHERE index_id = ? AND key = ?", [(ix, k) for k in keys]
        )
        self._add_statistics(
            conn, ix, -len(rows), -sum(r[1] for r in rows), -sum(r[2] for r in rows)
        )

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        with self._tx() as conn:
            ix = self._index_id(conn, index)
            if ix is None:
                return
            if keys is not None:
                self._remove(conn, ix, list(keys))
                return
            for table in ("search_postings", "search_terms", "search_passages", "search_sources"):
                conn.execute(f"DELETE FROM {table} WHERE index_id = ?", (ix,))
            conn.execute("DELETE FROM search_indexes WHERE id = ?", (ix,))

    def index_sources(self, index: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
        sql = (
            "SELECT s.key, s.meta FROM search_sources s JOIN search_indexes i "
            "ON s.index_id = i.id WHERE i.name = ?"
        )
        params: tuple[Any, ...] = (index,)
        if keys is not None:
            sql += " AND s.key IN (SELECT value FROM json_each(?))"
            params = (index, dumps(list(keys)))
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY s.key", params).fetchall()
        return {str(r[0]): loads(r[1]) for r in rows}

    def sources_by_title_word(self, index: str, words: Iterable[str]) -> list[str]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT s.key FROM search_indexes i JOIN search_sources s ON s.index_id = i.id "
                "AND s.title_word IN (SELECT value FROM json_each(?)) WHERE i.name = ? "
                "ORDER BY s.key",
                (dumps(sorted(set(words))), index),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def read_passages(self, index: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT p.passage, p.data FROM search_indexes i JOIN search_passages p "
                "ON p.index_id = i.id AND p.passage IN (SELECT value FROM json_each(?)) "
                "WHERE i.name = ?",
                (dumps(list(ids)), index),
            ).fetchall()
        return {str(r[0]): loads(r[1]) for r in rows}

    def source_passages(self, index: str, key: str | None = None) -> list[dict[str, Any]]:
        with self._read() as conn:
            ix = self._index_id(conn, index)
            if ix is None:
                return []
            if key is None:
                rows: Iterator[Any] = conn.execute(
                    "SELECT data FROM search_passages WHERE index_id = ? ORDER BY source, ordinal",
                    (ix,),
                )
            else:
                rows = conn.execute(
                    "SELECT data FROM search_passages WHERE index_id = ? AND source = ? "
                    "ORDER BY ordinal",
                    (ix, key),
                )
            return [loads(r[0]) for r in rows]

    def settle_index(self) -> None:
        """Nothing to do: the search statements fix their join order, and SQLite reads a table
        through its index without a visibility map."""

    def index_statistics(self, index: str) -> IndexStatistics:
        with self._read() as conn:
            return _statistics(conn, index)

    def count_sources(self, index: str) -> int:
        with self._read() as conn:
            row = conn.execute(
                "SELECT count(*) FROM search_sources s JOIN search_indexes i "
                "ON s.index_id = i.id WHERE i.name = ?",
                (index,),
            ).fetchone()
        return int(row[0])

    def index_version(self, index: str) -> str:
        # every write counts itself in the index's row, whichever connection makes it (the
        # run log's commits, on another connection to the file, do not)
        with self._read() as conn:
            row = conn.execute(
                "SELECT id, writes FROM search_indexes WHERE name = ?", (index,)
            ).fetchone()
        return "none" if row is None else f"{row[0]}.{row[1]}"

    def document_frequencies(self, index: str, terms: Iterable[str]) -> dict[str, int]:
        with self._read() as conn:
            return _terms(conn, index, terms)[0]

    def search_passages(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> list[tuple[str, float]]:
        with self._read() as conn:
            ix = self._index_id(conn, index)
            if ix is None:
                return []
            statistics = _statistics(conn, index)
            frequencies, peaks = _terms(conn, index, terms, peaks=True)
            return bm25_top(
                _Postings(conn, ix), statistics, frequencies, terms, k, k1=k1, b=b, peaks=peaks
            )

    def search_versioned(
        self, index: str, terms: Sequence[str], k: int, *, k1: float, b: float
    ) -> tuple[str, list[tuple[str, float]]]:
        # the version first: a write between the two leaves it older than the ranking
        return self.index_version(index), self.search_passages(index, terms, k, k1=k1, b=b)
