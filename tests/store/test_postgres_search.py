"""Search of the PostgreSQL passage index: what it holds in memory follows the postings it
must read, not every posting of the query's terms."""

from __future__ import annotations

import tracemalloc

import pytest

from kforge.store.conformance_passages import K1, B, indexed_source

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore


def _peak_of_search(store: PostgresStore, index: str) -> int:
    store.search_passages(index, ["rare", "common"], 10, k1=K1, b=B)  # first use costs more
    tracemalloc.start()
    try:
        found = store.search_passages(index, ["rare", "common"], 10, k1=K1, b=B)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(found) == 10
    return peak


def test_a_search_holds_no_more_for_an_index_eight_times_larger(postgres_url: str) -> None:
    """Every passage holds the common term and twenty the rare one: the passages without the
    rare term cannot reach the top 10, so the common term's postings are read only where
    passages with the rare term lie, however many others there are."""
    store = PostgresStore(postgres_url)
    peaks = []
    for index, count in (("small", 2000), ("large", 16000)):
        store.put_sources(
            index,
            [
                indexed_source(
                    f"s{i:05d}",
                    {"common": 1 + i % 3, **({"rare": 1} if i % (count // 20) == 0 else {})},
                )
                for i in range(count)
            ],
        )
        peaks.append(_peak_of_search(store, index))
    small, large = peaks
    assert large < 1.5 * small + 16384, peaks
    store.close()
