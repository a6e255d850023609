"""The first statement of a PostgreSQL search (``postgres_search``): the index's counts and
version, the query terms' frequencies and their blocks' skip lists, in one read."""

from __future__ import annotations

__all__ = ["HEAD"]

HEAD = """
WITH i AS (
    SELECT id, passages, terms, chars, xmin::text AS version
    FROM search_indexes WHERE name = %(name)s
),
t AS (
    SELECT t.term, t.df, t.peaks, sum(t.df) OVER w AS upto, row_number() OVER w AS n,
           sum(t.df) OVER () AS every
    FROM i JOIN search_terms t ON t.index_id = i.id AND t.term = ANY(%(terms)s) AND t.df > 0
    WINDOW w AS (ORDER BY t.df, t.term COLLATE "C")
)
SELECT i.id, i.passages, i.terms, i.chars, (SELECT max(id) FROM search_passages),
       EXISTS (SELECT FROM search_tombstones d WHERE d.index_id = i.id),
       t.term, t.df, b.id, b.wide, b.postings, b.skips, t.peaks::text,
       CASE WHEN b.id = ANY(%(cached)s::bigint[]) THEN NULL
            WHEN t.upto <= %(whole)s AND (t.n = 1 OR t.every <= %(whole)s
            OR t.upto <= greatest(%(least)s, %(share)s * i.passages)) THEN b.data END,
       substring(b.data FROM (b.postings - 1) * CASE WHEN b.wide THEN 16 ELSE 8 END + 1
                 FOR CASE WHEN b.wide THEN 8 ELSE 4 END),
       i.version
FROM i LEFT JOIN t ON true LEFT JOIN search_blocks b ON b.index_id = i.id AND b.term = t.term
"""
"""The index's counts and version, the query terms' frequencies and their blocks' skip lists
in one read, with the records of the blocks the first round of ``bm25_top`` sums whole (the
rarest terms), or of every block when they are few: never more than ``postgres_search._WHOLE_READ`` postings
(the others are streamed, ``postgres_reads``), and never of the blocks this process keeps
(``postgres_cache``)."""
