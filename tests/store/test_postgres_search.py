"""Search of the PostgreSQL passage index: what it holds in memory follows the postings it
must read, not every posting of the query's terms."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from kforge.store.conformance_passages import K1, B, indexed_source

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore


def _peak_of_search(store: PostgresStore, index: str) -> int:
    store.search_passages(index, ["rare", "common"], 5, k1=K1, b=B)  # first use costs more
    tracemalloc.start()
    try:
        found = store.search_passages(index, ["rare", "common"], 5, k1=K1, b=B)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(found) == 5
    return peak


def test_a_search_holds_no_more_for_an_index_eight_times_larger(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every passage holds the common term and ten the rare one: the passages without the
    rare term cannot reach the top 5, so the common term's postings are read only where
    passages with the rare term lie, however many others there are (here past the postings
    a first read brings whole)."""
    monkeypatch.setattr("kforge.store.postgres_search._WHOLE_READ", 0)
    store = PostgresStore(postgres_url)
    peaks = []
    for index, count in (("small", 2000), ("large", 16000)):
        store.put_sources(
            index,
            [
                indexed_source(
                    f"s{i:05d}",
                    {"common": 1 + i % 3, **({"rare": 1} if i % (count // 10) == 0 else {})},
                )
                for i in range(count)
            ],
        )
        peaks.append(_peak_of_search(store, index))
    small, large = peaks
    assert large < 1.5 * small + 16384, peaks
    store.close()


def test_a_search_that_finds_its_blocks_merged_meanwhile_starts_again(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's write merges the blocks a search has just named (after its first
    read): the search reads again and ranks what is there now, as scoring every posting."""
    from kforge.store import postgres_search
    from kforge.store.conformance_passages import full_bm25

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 0)  # blocks read after the first read
    store, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    passages: dict[str, dict[str, int]] = {}
    for write in range(7):
        held = [{"cat": 1 + (write + i) % 3, f"t{i % 4}": 1} for i in range(300)]
        store.put_sources("c", [indexed_source(f"w{write}", *held)])
        passages |= {f"w{write}-{i}": terms for i, terms in enumerate(held)}
    first = postgres_search.bm25_top
    rounds = []

    def write_meanwhile(*args: object, **kwargs: object) -> list[tuple[str, float]]:
        rounds.append(1)
        if len(rounds) == 1:  # the eighth write of "cat": its blocks merge into one
            other.put_sources("c", [indexed_source("w7", {"cat": 3, "t1": 1})])
            passages["w7-0"] = {"cat": 3, "t1": 1}
        return first(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres_search, "bm25_top", write_meanwhile)
    found = store.search_passages("c", ["t1", "cat"], 10, k1=K1, b=B)
    expected = full_bm25(passages, ["t1", "cat"])
    assert len(rounds) == 2
    assert [s for _, s in found] == pytest.approx(
        sorted(expected.values(), reverse=True)[:10], rel=0, abs=1e-9
    )
    assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    store.close()
    other.close()


@pytest.mark.parametrize("small_windows", [False, True])
def test_a_stretch_read_from_the_start_of_a_block_is_not_taken_for_the_whole_block(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, small_windows: bool
) -> None:
    """The first round reads only the first stretch of the common term's block (where the
    rare term's passages lie); the second round needs the common term's share of passages far
    into that block, which rank by it: they are read, and the search ranks as scoring every
    posting. Alike when the rows are summed in windows of 256 (the second round adding its
    terms to the first round's sums across windows) and no block is kept between rounds."""
    from kforge.store import postgres_search
    from kforge.store.conformance_passages import full_bm25

    if small_windows:
        monkeypatch.setattr("kforge.store.postgres_sums.WINDOW", 256)
        monkeypatch.setattr(postgres_search, "_KEEP", 0)
    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 0)
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    held: dict[str, dict[str, int]] = {}
    for i in range(3000):
        terms = {"common": 1, "pad": 3}
        if i < 20:
            terms |= {"rare": 1, "pad": 60}  # long passages: the rare term's share is small
        elif 1000 <= i < 1300:
            terms |= {"middle": 1, "common": 1 + i % 5}
        held[f"s{i:04d}"] = terms
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source(key, terms) for key, terms in held.items()])
    query = ["rare", "middle", "common"]
    rounds: list[int] = []
    first = postgres_search._BlockPostings.top

    def counted(*args: object, **kwargs: object) -> list[tuple[str, float]]:
        rounds.append(1)
        return first(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres_search._BlockPostings, "top", counted)
    found = store.search_passages("c", query, 10, k1=K1, b=B)
    assert len(rounds) == 2
    expected = full_bm25({f"{key}-0": terms for key, terms in held.items()}, query)
    assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))[:10]
    assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    store.close()


class _Counted:
    """A connection that counts the bytes its statements return, and the most one row of
    them returns."""

    def __init__(self, conn: object) -> None:
        self.conn, self.bytes, self.largest = conn, 0, 0

    def count(self, row: tuple[object, ...]) -> None:
        sizes = [len(v) for v in row if isinstance(v, bytes | str)]
        self.bytes += sum(sizes)
        self.largest = max([self.largest, *sizes])

    def execute(self, *args: object, **kwargs: object) -> object:
        rows = self.conn.execute(*args, **kwargs).fetchall()  # type: ignore[attr-defined]
        for row in rows:
            self.count(row)
        return _Rows(rows)

    def cursor(self, *args: object, **kwargs: object) -> object:
        return _Streamed(self, self.conn.cursor(*args, **kwargs))  # type: ignore[attr-defined]

    def transaction(self) -> object:
        return self.conn.transaction()  # type: ignore[attr-defined]


class _Streamed:
    """A cursor whose streamed rows its connection counts."""

    def __init__(self, counted: _Counted, cursor: object) -> None:
        self.counted, self.cursor = counted, cursor

    def stream(self, *args: object, **kwargs: object) -> Iterator[tuple[object, ...]]:
        for row in self.cursor.stream(*args, **kwargs):  # type: ignore[attr-defined]
            self.counted.count(row)
            yield row

    def close(self) -> None:
        self.cursor.close()  # type: ignore[attr-defined]


class _Rows:
    def __init__(self, rows: list[tuple[object, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[object, ...]]:
        return self.rows

    def fetchone(self) -> tuple[object, ...] | None:
        return self.rows[0] if self.rows else None


def _rare_in_long_passages(
    count: int, *, common: int, every: int, pad: int
) -> dict[str, dict[str, int]]:
    """``count`` passages (a source each) holding some of the terms ``c0``, ``c1``, ...
    (``common`` of them) one to four times; one in ``every`` holds the rare term too and is
    long (``pad``), so the rare term's share of its score is small."""
    held: dict[str, dict[str, int]] = {}
    for i in range(count):
        terms = {f"c{j}": 1 + (i * (j + 3)) % 4 for j in range(common) if (i + j) % 3}
        if i % every == 0:
            terms |= {"rare": 1, "pad": pad}
        held[f"s{i:04d}"] = terms | {"pad": terms.get("pad", 0) + 2}
    return held


def _search_as_every_posting(
    store: PostgresStore,
    held: dict[str, dict[str, int]],
    query: list[str],
    k: int,
    monkeypatch: pytest.MonkeyPatch,
) -> list[_Counted]:
    """Search index ``c`` (the passages of ``held``, a source each) on connections that count
    what they read (returned), and check it ranks as scoring every posting."""
    from kforge.store import postgres_search
    from kforge.store.conformance_passages import full_bm25

    counted: list[_Counted] = []
    real = postgres_search._search

    def spied(conn: object, *args: object, **kwargs: object) -> object:
        counted.append(_Counted(conn))
        return real(counted[-1], *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres_search, "_search", spied)
    found = store.search_passages("c", query, k, k1=K1, b=B)
    expected = full_bm25({f"{key}-0": terms for key, terms in held.items()}, query)
    assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))[:k]
    assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    return counted


def test_the_commonest_term_is_read_only_where_passages_can_still_reach_the_top(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten passages next to each other hold the rare term three times and the middle one; two
    hundred others, spread over the index, hold the rare term once in long passages, so they
    cannot reach the top 5 once the middle term's shares are in: the common term (in every
    passage) is read only in the stretch of the ten, a small part of its postings, and the
    search ranks as scoring every posting."""
    from kforge.store import postgres_search

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 0)
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    held: dict[str, dict[str, int]] = {}
    for i in range(6000):
        terms = {"common": 1 + i % 2}
        if 100 <= i < 110:
            terms |= {"rare": 3, "middle": 2}
        elif i % 30 == 0:
            terms |= {"rare": 1, "pad": 30}
        if i % 10 == 5:
            terms["middle"] = 1
        held[f"s{i:04d}"] = terms
    store = PostgresStore(postgres_url)
    keys = list(held)
    for start in range(0, len(keys), 1000):  # a block of each term a write
        store.put_sources(
            "c", [indexed_source(key, held[key]) for key in keys[start : start + 1000]]
        )
    counted = _search_as_every_posting(store, held, ["rare", "middle", "common"], 5, monkeypatch)
    common = 6000 * 8  # bytes of the common term's postings
    assert sum(c.bytes for c in counted) < common / 3
    store.close()


def test_no_value_a_search_reads_is_larger_than_a_piece_however_long_the_terms_postings(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both query terms are in all 16,000 passages (a block of 128 KB each, twice a piece,
    here of 64 KB), read whole: the server sends them in pieces, so what a search holds at
    once does not grow with the corpus, and it ranks as scoring every posting."""
    from kforge.store import postgres_search

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 1000)  # past the first read's share
    monkeypatch.setattr("kforge.store.postgres_reads.PIECE", 64 * 1024)
    held = {
        f"s{i:05d}": {"common": 1 + i % 4, "other": 1 + i % 7, "pad": i % 5} for i in range(16000)
    }
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source(key, terms) for key, terms in held.items()])
    counted = _search_as_every_posting(store, held, ["common", "other"], 10, monkeypatch)
    assert sum(c.bytes for c in counted) >= 16000 * 8  # a term's postings were read whole
    assert max(c.largest for c in counted) <= 64 * 1024
    store.close()


def test_the_terms_left_for_a_trimmed_round_s_candidates_come_in_one_read(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round that cannot be the last keeps the ``_TRIM`` times ``k`` best candidates; pruning
    between terms drops few of so few, so every term left is read for them at once (not a
    read a term), and the search ranks as scoring every posting."""
    from kforge.store import postgres_search
    from kforge.store.conformance_passages import full_bm25

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 0)
    monkeypatch.setattr(postgres_search, "_TRIM_FROM", 1)
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    monkeypatch.setattr("kforge.store.passages.FIRST_BUDGET", 0.0)
    held = _rare_in_long_passages(1500, common=5, every=5, pad=30)
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source(key, terms) for key, terms in held.items()])
    query = ["rare", "c0", "c1", "c2", "c3", "c4"]
    reads: list[tuple[int, int]] = []
    first = postgres_search._BlockPostings._rest_shares

    def counted(self: object, rows: Any, rest: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append((len(rows), len(rest)))
        return first(self, rows, rest, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres_search._BlockPostings, "_rest_shares", counted)
    k = 40
    found = store.search_passages("c", query, k, k1=K1, b=B)
    trimmed = [n for rows, n in reads if rows == postgres_search._TRIM * k]
    assert trimmed and all(n > 1 for n in trimmed)
    expected = full_bm25({f"{key}-0": terms for key, terms in held.items()}, query)
    assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))[:k]
    assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    store.close()


def test_a_later_search_takes_the_blocks_read_whole_from_the_cache_until_a_write_replaces_them(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both terms are in every passage, so their blocks are read whole: a second search reads
    no postings from the server and ranks the same; after a write merges the terms' blocks
    into new ones, a search reads those and ranks as scoring every posting, new ones too."""
    from kforge.store import postgres_search

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 1000)  # past the first read's share
    held = {f"s{i:04d}": {"common": 1 + i % 4, "other": 1 + i % 7} for i in range(4000)}
    store = PostgresStore(postgres_url)
    keys = list(held)
    for start in range(0, 3500, 500):  # seven writes: a block of each term each
        store.put_sources("c", [indexed_source(k, held[k]) for k in keys[start : start + 500]])
    part = {k: held[k] for k in keys[:3500]}
    query = ["common", "other"]
    first = _search_as_every_posting(store, part, query, 10, monkeypatch)
    postings = 2 * 3500 * 8
    assert sum(c.bytes for c in first) >= postings
    assert store.passages.block_cache.size >= postings
    again = _search_as_every_posting(store, part, query, 10, monkeypatch)
    assert sum(c.bytes for c in again) < 4096  # counts and skip lists, no postings
    # the eighth write merges each term's eight blocks into one the cache has not seen
    store.put_sources("c", [indexed_source(k, held[k]) for k in keys[3500:]])
    after = _search_as_every_posting(store, held, query, 10, monkeypatch)
    assert sum(c.bytes for c in after) >= 2 * 4000 * 8
    assert store.passages.block_cache.ids("c", query) != []
    assert store.passages.block_cache.size <= 2 * 4000 * 8 + 1024
    store.close()


def test_a_later_round_takes_from_the_cache_what_an_earlier_round_read_whole(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first round cannot be the last (few rare passages, long ones) and reads common
    terms whole for its candidates; the search keeps none of them itself (``_KEEP`` 0), but
    the cache does: the second round, which sums them, reads them from memory, so the search
    reads fewer bytes than with no cache, and ranks as scoring every posting."""
    from kforge.store import postgres_search

    monkeypatch.setattr(postgres_search, "_WHOLE_READ", 0)
    monkeypatch.setattr(postgres_search, "_KEEP", 0)
    monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    monkeypatch.setattr("kforge.store.passages.FIRST_BUDGET", 0.0)
    held = _rare_in_long_passages(3000, common=4, every=50, pad=40)
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source(key, terms) for key, terms in held.items()])
    query = ["rare", "c0", "c1", "c2", "c3"]
    read = []
    for budget in (0, 1 << 20):
        store.passages.block_cache.clear()
        store.passages.block_cache.budget = budget
        counted = _search_as_every_posting(store, held, query, 40, monkeypatch)
        read.append(sum(c.bytes for c in counted))
    assert read[1] < read[0], read
    store.close()
