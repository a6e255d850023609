"""The passage index of the PostgreSQL store, shared by every process on the database: the
same postings tables and search algorithm as SQLite (``kforge.store.passages``).

PostgreSQL's own full-text ranking (``ts_rank_cd``) is not BM25 and Debian packages no BM25
extension, so postings live in a table clustered by term and BM25 is summed in SQL over the
postings of the query's terms only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from kforge.jsoncodec import dumps, loads
from kforge.store.passages import FLOOR_SAMPLE, IndexedSource, IndexStatistics, bm25_top

__all__ = ["PASSAGE_TABLES", "PostgresPassages"]

PASSAGE_TABLES = (
    """
    CREATE TABLE search_indexes (
        id serial PRIMARY KEY,
        name text NOT NULL UNIQUE,
        passages bigint NOT NULL DEFAULT 0,
        terms bigint NOT NULL DEFAULT 0,
        chars bigint NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE search_sources (
        index_id integer NOT NULL,
        key text NOT NULL,
        title_word text NOT NULL,
        meta text NOT NULL,
        PRIMARY KEY (index_id, key)
    )
    """,
    "CREATE INDEX search_sources_title ON search_sources(index_id, title_word)",
    """
    CREATE TABLE search_passages (
        id bigserial PRIMARY KEY,
        index_id integer NOT NULL,
        passage text NOT NULL,
        source text NOT NULL,
        ordinal integer NOT NULL,
        length integer NOT NULL,
        chars integer NOT NULL,
        terms text NOT NULL,
        data text NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX search_passages_id ON search_passages(index_id, passage)",
    "CREATE INDEX search_passages_source ON search_passages(index_id, source, ordinal)",
    """
    CREATE TABLE search_terms (
        index_id integer NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (index_id, term)
    )
    """,
    # postings carry their passage's length, so scoring reads no other row; an index-only
    # scan over (index_id, term) INCLUDE (...) reads a term's postings in one range
    """
    CREATE TABLE search_postings (
        index_id integer NOT NULL,
        term text NOT NULL,
        passage bigint NOT NULL,
        tf integer NOT NULL,
        length integer NOT NULL,
        PRIMARY KEY (index_id, term, passage) INCLUDE (tf, length)
    )
    """,
)
"""Migration 3 of the PostgreSQL schema."""

_TOP = """
WITH s AS MATERIALIZED (
    SELECT p.passage AS pid, min(p.length) AS len,
           sum(e.w * p.tf / (p.tf + %(base)s + %(slope)s * p.length)) AS score
    FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS e(term, w)
    JOIN search_postings p ON p.index_id = %(ix)s AND p.term = e.term
    GROUP BY p.passage
),
h AS MATERIALIZED (SELECT pid, len, score FROM s ORDER BY score DESC, pid LIMIT %(sample)s),
hx AS MATERIALIZED (
    SELECT h.pid, h.score + coalesce((
        SELECT sum(r.w * q.tf / (q.tf + %(base)s + %(slope)s * h.len))
        FROM unnest(%(rest)s::text[], %(rest_weights)s::float8[]) AS r(term, w)
        JOIN search_postings q ON q.index_id = %(ix)s AND q.term = r.term AND q.passage = h.pid
    ), 0) AS total
    FROM h
),
f AS (SELECT coalesce((SELECT total FROM hx ORDER BY total DESC LIMIT 1 OFFSET %(offset)s), 0) AS v),
c AS MATERIALIZED (
    SELECT s.pid, s.len, s.score FROM s, f
    WHERE f.v >= %(slack)s AND s.score >= f.v - %(slack)s
      AND s.pid NOT IN (SELECT pid FROM h)
),
x AS (
    SELECT c.pid, sum(r.w * p.tf / (p.tf + %(base)s + %(slope)s * c.len)) AS extra
    FROM c CROSS JOIN unnest(%(rest)s::text[], %(rest_weights)s::float8[]) AS r(term, w)
    CROSS JOIN LATERAL (
        SELECT q.tf FROM search_postings q
        WHERE q.index_id = %(ix)s AND q.term = r.term AND q.passage = c.pid
    ) p
    GROUP BY c.pid
),
t AS (
    SELECT pid, total FROM hx
    UNION ALL
    SELECT c.pid, c.score + coalesce(x.extra, 0) FROM c LEFT JOIN x ON x.pid = c.pid
    ORDER BY 2 DESC, 1 LIMIT %(offset)s + 1
)
SELECT sp.passage, t.total FROM t JOIN search_passages sp ON sp.id = t.pid
ORDER BY t.total DESC, t.pid
"""


class _Postings:
    def __init__(self, conn: Any, index_id: int) -> None:
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
            {
                "terms": list(essential),
                "weights": list(essential.values()),
                "rest": list(rest),
                "rest_weights": list(rest.values()),
                "base": base,
                "slope": slope,
                "ix": self._id,
                "offset": k - 1,
                "slack": slack,
                "sample": FLOOR_SAMPLE * k,
            },
            prepare=False,  # a generic plan cannot see how many postings a term has
        ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]


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


class PostgresPassages:
    """``PassageIndex`` over the ``search_*`` tables (migration 3); mixed into PostgresStore."""

    if TYPE_CHECKING:  # PostgresStore's own pooled connection

        def _conn(self) -> AbstractContextManager[Any]: ...

    def put_sources(self, index: str, sources: Sequence[IndexedSource]) -> None:
        if not sources:
            return
        with self._conn() as conn, conn.transaction():
            ix = _index_id(conn, index, create=True)
            assert ix is not None
            _remove(conn, ix, [s.key for s in sources])
            rows = [(s.key, ordinal, p) for s in sources for ordinal, p in enumerate(s.passages)]
            counts = [{t: tf for t, tf in p.terms.items() if tf > 0} for _, _, p in rows]
            lengths = [sum(c.values()) for c in counts]
            texts = [
                _text_array(column)
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
                f"{texts[1][0]}, {_int_array()}, {_int_array()}, {_int_array()}, {texts[2][0]}, "
                f"{texts[3][0]}) AS u(a, b, c, d, e, f, g) RETURNING passage, id",
                (
                    ix,
                    texts[0][1],
                    texts[1][1],
                    _numbers(ordinal for _, ordinal, _ in rows),
                    _numbers(lengths),
                    _numbers(p.chars for _, _, p in rows),
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
            columns: tuple[list[Any], ...] = ([], [], [], [])
            for rowid, c, length in zip(ids, counts, lengths, strict=True):
                for term, tf in c.items():
                    for column, value in zip(columns, (term, rowid, tf, length), strict=True):
                        column.append(value)
            terms_sql, terms = _text_array(columns[0])
            # in index order, so that consecutive postings land on the same index pages
            conn.execute(
                "INSERT INTO search_postings(index_id, term, passage, tf, length) "
                f"SELECT %s, * FROM unnest({terms_sql}, {_int_array(kind='bigint')}, "
                f"{_int_array()}, {_int_array()}) AS u(term, passage, tf, length) "
                "ORDER BY term, passage",
                (ix, terms, *map(_numbers, columns[1:])),
            )
            df: Counter[str] = Counter(t for c in counts for t in c)
            _count_terms(conn, ix, df, 1)
            _add_statistics(conn, ix, len(rows), sum(lengths), sum(p.chars for _, _, p in rows))

    def delete_sources(self, index: str, keys: Iterable[str] | None = None) -> None:
        with self._conn() as conn, conn.transaction():
            ix = _index_id(conn, index)
            if ix is None:
                return
            if keys is not None:
                _remove(conn, ix, list(keys))
                return
            for table in ("search_postings", "search_terms", "search_passages", "search_sources"):
                conn.execute(f"DELETE FROM {table} WHERE index_id = %s", (ix,))
            conn.execute("DELETE FROM search_indexes WHERE id = %s", (ix,))

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
        # the planner's row counts, and the visibility map that lets a term's postings be read
        # from the index alone; autovacuum would do it too, minutes later
        with self._conn() as conn:
            conn.execute(
                "VACUUM (ANALYZE) search_postings, search_passages, search_terms, search_sources"
            )

    def index_statistics(self, index: str) -> IndexStatistics:
        with self._conn() as conn:
            return _statistics(conn, index)

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
        with self._conn() as conn:
            row = conn.execute(
                "SELECT i.id, i.passages, i.terms, i.chars, "
                "coalesce(array_agg(t.term) FILTER (WHERE t.term IS NOT NULL), '{}'), "
                "coalesce(array_agg(t.df) FILTER (WHERE t.term IS NOT NULL), '{}') "
                "FROM search_indexes i LEFT JOIN search_terms t ON t.index_id = i.id "
                "AND t.term = ANY(%s) WHERE i.name = %s GROUP BY i.id",
                (list(set(terms)), index),
            ).fetchone()
            if row is None:
                return []
            statistics = IndexStatistics(passages=row[1], terms=row[2], chars=row[3])
            frequencies = dict(zip(row[4], row[5], strict=True))
            # the statistics and the postings may come from two moments: the weights may then
            # be a little off for this one search, never the pruning, which uses them alone
            return bm25_top(_Postings(conn, row[0]), statistics, frequencies, terms, k, k1=k1, b=b)


def _count_terms(conn: Any, ix: int, df: Counter[str], sign: int) -> None:
    if not df:
        return
    terms = sorted(df)  # a fixed order: concurrent writers lock rows in the same order
    terms_sql, terms_param = _text_array(terms)
    conn.execute(
        "INSERT INTO search_terms(index_id, term, df) SELECT %s, * FROM "
        f"unnest({terms_sql}, {_int_array()}) ON CONFLICT (index_id, term) DO UPDATE "
        "SET df = search_terms.df + EXCLUDED.df",
        (ix, terms_param, _numbers(sign * df[t] for t in terms)),
    )


_SEPARATOR = "\x1e"
"""Splits the texts of ``_text_array`` (JSON never holds it: it writes control characters
escaped)."""


def _numbers(values: Iterable[int]) -> str:
    """Integers as one text, for ``_int_array``."""
    return ",".join(map(str, values))


def _int_array(kind: str = "int") -> str:
    return f"string_to_array(%s, ',')::{kind}[]"


def _text_array(values: Sequence[str]) -> tuple[str, Any]:
    """A text[] parameter of the batch writes: ``(SQL, value)``. Values travel as one text that
    the server splits, which costs the client far less than adapting a list of thousands of
    texts item by item; as a list when a value holds the separator or is empty."""
    if all(value and _SEPARATOR not in value for value in values):
        return "string_to_array(%s, E'\\x1e')", _SEPARATOR.join(values)
    return "%s::text[]", list(values)


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
    df: Counter[str] = Counter()
    gone_terms: list[str] = []
    gone_ids: list[int] = []
    for rowid, _, _, text in rows:
        terms = loads(text)
        df.update(terms.keys())
        gone_terms.extend(terms)
        gone_ids.extend([rowid] * len(terms))
    terms_sql, terms = _text_array(gone_terms)
    conn.execute(
        f"DELETE FROM search_postings p USING unnest({terms_sql}, {_int_array(kind='bigint')}) "
        "AS g(term, id) WHERE p.index_id = %s AND p.term = g.term AND p.passage = g.id",
        (terms, _numbers(gone_ids), ix),
    )
    _count_terms(conn, ix, df, -1)
    conn.execute(
        "DELETE FROM search_sources WHERE index_id = %s AND key = ANY(%s)", (ix, list(keys))
    )
    _add_statistics(conn, ix, -len(rows), -sum(r[1] for r in rows), -sum(r[2] for r in rows))
