"""The PostgreSQL index's postings packed per term: an index written in the earlier layout (a
row per posting) migrates itself and searches the same, values too large for narrow records
are kept whole, and removed passages are purged from the blocks once they pile up."""

from __future__ import annotations

import pytest

from kforge.store.conformance_passages import K1, B, full_bm25, indexed_source
from kforge.store.postgres_schema import MIGRATIONS

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from kforge.store.postgres import PostgresStore  # noqa: E402

OLD = {
    "a": [{"cat": 2, "dog": 1}, {"fish": 1, "cat": 1}],
    "b": [{"dog": 3, "emu": 1}],
    "c": [{"cat": 1, "emu": 40000}],  # a tf (and a length) no narrow record holds
}


def old_index(url: str) -> None:
    """A database at schema version 3 holding ``OLD`` as kforge wrote it then: a row per
    posting in ``search_postings``."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kforge_schema_version (version integer NOT NULL)")
        for version, statements in MIGRATIONS[:3]:
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO kforge_schema_version VALUES (%s)", (version,))
        ix = conn.execute("INSERT INTO search_indexes(name) VALUES ('c') RETURNING id").fetchone()
        assert ix is not None
        df: dict[str, int] = {}
        total = 0
        for key, passages in OLD.items():
            conn.execute(
                "INSERT INTO search_sources VALUES (%s, %s, '', %s)",
                (ix[0], key, f'{{"key": "{key}", "title": ""}}'),
            )
            for ordinal, terms in enumerate(passages):
                length = sum(terms.values())
                total += length
                row = conn.execute(
                    "INSERT INTO search_passages(index_id, passage, source, ordinal, length, "
                    "chars, terms, data) VALUES (%s, %s, %s, %s, %s, 1, %s, '{}') RETURNING id",
                    (ix[0], f"{key}-{ordinal}", key, ordinal, length, str(terms).replace("'", '"')),
                ).fetchone()
                assert row is not None
                for term, tf in terms.items():
                    df[term] = df.get(term, 0) + 1
                    conn.execute(
                        "INSERT INTO search_postings VALUES (%s, %s, %s, %s, %s)",
                        (ix[0], term, row[0], tf, length),
                    )
        for term, n in df.items():
            conn.execute("INSERT INTO search_terms VALUES (%s, %s, %s)", (ix[0], term, n))
        conn.execute(
            "UPDATE search_indexes SET passages = 4, terms = %s, chars = 4 WHERE id = %s",
            (total, ix[0]),
        )


def passages(sources: dict[str, list[dict[str, int]]]) -> dict[str, dict[str, int]]:
    return {f"{k}-{i}": p for k, held in sources.items() for i, p in enumerate(held)}


def assert_searches(store: PostgresStore, sources: dict[str, list[dict[str, int]]]) -> None:
    for query in (["cat"], ["dog", "emu"], ["cat", "fish", "emu", "dog"], ["emu"]):
        expected = full_bm25(passages(sources), query)
        found = store.search_passages("c", query, 10, k1=K1, b=B)
        assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))
        assert all(abs(expected[p] - s) < 1e-9 for p, s in found)


def test_an_index_of_the_earlier_layout_migrates_and_searches_the_same(postgres_url: str) -> None:
    old_index(postgres_url)
    store = PostgresStore(postgres_url)
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('search_postings')").fetchone() == (None,)
        wide = conn.execute("SELECT term, wide FROM search_blocks ORDER BY term, wide").fetchall()
    assert ("emu", True) in wide and ("cat", True) in wide and ("dog", False) in wide
    assert_searches(store, OLD)
    sources = dict(OLD)
    sources["d"] = [{"dog": 1, "cat": 1}]
    store.put_sources("c", [indexed_source("d", *sources["d"])])
    store.delete_sources("c", ["a"])
    del sources["a"]
    assert_searches(store, sources)
    assert store.document_frequencies("c", ["cat", "fish"]) == {"cat": 2, "fish": 0}
    assert {len(skips) > 0 for *_, skips in _blocks(postgres_url)} == {True, False}
    store.settle_index()  # blocks of the earlier layout are put in passage order
    assert {len(skips) > 0 for *_, skips in _blocks(postgres_url)} == {True}
    assert_searches(store, sources)
    store.close()


def test_terms_written_before_peaks_were_kept_get_them_when_the_index_settles(
    postgres_url: str,
) -> None:
    """Peaks (the least passage length at each tf) are not known for the terms of an index of
    an earlier layout, and a write to such a term keeps them unknown (its older postings
    are not in them); settling the index works them out from the blocks."""
    old_index(postgres_url)
    store = PostgresStore(postgres_url)
    store.put_sources("c", [indexed_source("d", {"dog": 1, "cat": 1}, {"newt": 2, "cat": 3})])

    def peaks() -> dict[str, object]:
        with psycopg.connect(postgres_url) as conn:
            return dict(conn.execute("SELECT term, peaks FROM search_terms").fetchall())

    assert peaks() == {"cat": None, "dog": None, "emu": None, "fish": None, "newt": {"2": 5}}
    sources = {**OLD, "d": [{"dog": 1, "cat": 1}, {"newt": 2, "cat": 3}]}
    assert_searches(store, sources)
    store.settle_index()
    assert peaks() == {
        "cat": {"1": 2, "2": 3, "3": 5},
        "dog": {"1": 2, "3": 4},
        "emu": {"1": 4, "40000": 40001},
        "fish": {"1": 2},
        "newt": {"2": 5},
    }
    assert_searches(store, sources)
    store.close()


def test_removed_passages_are_purged_from_the_blocks(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    sources = {f"s{i:03d}": [{"cat": 1 + i % 3, f"t{i % 7}": 1}] for i in range(400)}
    store.put_sources("c", [indexed_source(k, *held) for k, held in sources.items()])
    store.delete_sources("c", sorted(sources)[:300])
    with psycopg.connect(postgres_url) as conn:
        dead = conn.execute("SELECT count(*) FROM search_tombstones").fetchone()
        stored = conn.execute("SELECT sum(postings) FROM search_blocks").fetchone()
    assert dead == (0,) and stored == (200,)  # 100 passages of two terms
    store.close()


@pytest.mark.parametrize("first_read", [True, False])
def test_a_write_of_values_no_narrow_record_holds_keeps_them_whole(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, first_read: bool
) -> None:
    """A term with wide and narrow blocks is searched the same whether its blocks come with
    the first read or are read after it, for the candidates of a rarer term (each width's
    records apart)."""
    if not first_read:
        monkeypatch.setattr("kforge.store.postgres_search._WHOLE_READ", 0)
        monkeypatch.setattr("kforge.store.passages.MIN_BUDGET", 1)
    store = PostgresStore(postgres_url)
    sources = {"big": [{"emu": 40000, "cat": 1}], "small": [{"emu": 1, "cat": 2}]}
    store.put_sources("c", [indexed_source(k, *held) for k, held in sources.items()])
    for write in range(9):  # wide and narrow blocks of one term merge apart
        sources[f"w{write}"] = [{"cat": 1 + write % 2} | ({"emu": 1} if write == 8 else {})]
        store.put_sources("c", [indexed_source(f"w{write}", *sources[f"w{write}"])])
    with psycopg.connect(postgres_url) as conn:
        kinds = conn.execute("SELECT DISTINCT wide FROM search_blocks").fetchall()
    assert sorted(kinds) == [(False,), (True,)]
    for query, k in ((["emu"], 20), (["cat"], 20), (["cat", "emu"], 20), (["cat", "emu"], 2)):
        expected = full_bm25(passages(sources), query)
        found = store.search_passages("c", query, k, k1=K1, b=B)
        assert [p for p, _ in found] == sorted(expected, key=lambda p: (-expected[p], p))[:k]
        assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    store.close()


def test_postings_are_summed_a_window_of_rows_at_a_time(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Postings are summed a window of rows at a time, windows without postings passed over,
    passing over removed rows alike."""
    monkeypatch.setattr("kforge.store.postgres_sums.WINDOW", 2)
    monkeypatch.setattr("kforge.store.postgres_search._BY_ROW", 0)  # many postings
    store = PostgresStore(postgres_url)
    sources = {f"s{i}": [{"cat": 1 + i % 3, "dog": i % 2 + 1}] for i in range(12)}
    store.put_sources("c", [indexed_source(k, *held) for k, held in sources.items()])
    store.delete_sources("c", ["s2", "s5"])
    del sources["s2"], sources["s5"]
    for query in (["cat"], ["cat", "dog"]):
        expected = full_bm25(passages(sources), query)
        found = store.search_passages("c", query, 4, k1=K1, b=B)
        best = sorted(expected, key=lambda p: (-expected[p], int(p[1:].split("-")[0])))[:4]
        assert [p for p, _ in found] == best
        assert all(abs(expected[p] - s) < 1e-9 for p, s in found)
    store.close()


def assert_best(
    store: PostgresStore,
    sources: dict[str, list[dict[str, int]]],
    queries: tuple[list[str], ...],
    k: int,
) -> None:
    """Each query's best scores are those of scoring every posting (equal scores in any
    order), each passage with its own score."""
    for query in queries:
        expected = full_bm25(passages(sources), query)
        found = store.search_passages("c", query, k, k1=K1, b=B)
        best = sorted(expected.values(), reverse=True)[:k]
        assert [s for _, s in found] == pytest.approx(best, rel=0, abs=1e-9)
        assert all(abs(expected[p] - s) < 1e-9 for p, s in found)


def _blocks(url: str) -> list[tuple[str, int, bool, bytes, bytes]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT term, level, wide, data, skips FROM search_blocks ORDER BY term, id",
            binary=True,
        ).fetchall()
    return [(r[0], r[1], r[2], bytes(r[3]), bytes(r[4])) for r in rows]


def test_blocks_keep_passage_order_and_a_skip_list_through_writes_merges_and_purges(
    postgres_url: str,
) -> None:
    """Whatever writes, merges and purges made a block, its records are in passage order and
    its skip list names the passage of every ``SKIP``-th record, so a search can cut out the
    stretch where a passage would lie."""
    import numpy as np

    from kforge.store.postgres_postings import SKIP, record_dtype

    store = PostgresStore(postgres_url)
    sources = {}
    for write in range(20):  # 20 writes: two merges of 8 level-0 blocks of "cat"
        batch = {f"w{write:02d}-{i:03d}": [{"cat": 1 + i % 3, f"t{i % 5}": 1}] for i in range(40)}
        store.put_sources("c", [indexed_source(k, *held) for k, held in batch.items()])
        sources |= batch
        if write % 6 == 0:  # wide records, in blocks of their own
            sources[f"w{write:02d}-big"] = [{"cat": 40000}]
            store.put_sources("c", [indexed_source(f"w{write:02d}-big", {"cat": 40000})])
    gone = sorted(sources)[::2]
    store.delete_sources("c", gone)  # past a sixteenth of the passages: purged
    for key in gone:
        del sources[key]
    blocks = _blocks(postgres_url)
    assert {level for term, level, *_ in blocks if term == "cat"} >= {32767}
    assert max(len(skips) for term, *_, skips in blocks if term == "cat") > 2 * 4
    for term, _, wide, data, skips in blocks:
        records = np.frombuffer(data, dtype=record_dtype(wide))
        assert np.all(np.diff(records["passage"].astype(np.int64)) > 0), term
        named = np.frombuffer(skips, dtype=">i8" if wide else ">i4")
        assert named.tolist() == records["passage"][::SKIP].tolist(), term
    for write in range(9):  # new writes on the purged base block: merges again
        key = f"n{write}"
        sources[key] = [{"cat": 2, "t1": 1}]
        store.put_sources("c", [indexed_source(key, *sources[key])])
    assert_best(store, sources, (["cat"], ["cat", "t1"], ["t0", "t3", "cat"]), 10)
    store.close()


def test_a_block_without_a_skip_list_is_read_whole_until_the_index_settles(
    postgres_url: str,
) -> None:
    """A merge of blocks whose passages interleave (writers of one index at once) cannot keep
    passage order; such a block has an empty skip list, is read whole, and so is what merging
    it makes, until settling the index rewrites it in order."""
    store = PostgresStore(postgres_url)
    sources = {f"s{i:03d}": [{"cat": 1 + i % 4, f"t{i % 3}": 1}] for i in range(300)}
    store.put_sources("c", [indexed_source(k, *held) for k, held in sources.items()])
    with psycopg.connect(postgres_url) as conn:
        conn.execute("UPDATE search_blocks SET skips = ''")
    for write in range(8):
        key = f"w{write}"
        sources[key] = [{"cat": 3, "t1": 2}]
        store.put_sources("c", [indexed_source(key, *sources[key])])
    assert {len(skips) for term, level, _, _, skips in _blocks(postgres_url) if level == 1} == {0}
    assert_best(store, sources, (["cat"], ["t1", "cat"], ["t0", "t2", "cat"]), 5)
    store.settle_index()
    blocks = _blocks(postgres_url)
    assert {len(skips) > 0 for *_, skips in blocks} == {True}
    assert {level for _, level, *_ in blocks} == {32767}
    assert_best(store, sources, (["cat"], ["t1", "cat"], ["t0", "t2", "cat"]), 5)
    store.close()


QUERIES = (["cat"], ["cat", "t1"], ["t0", "t3", "cat"], ["t2", "t4"])


def scattered_index(store: PostgresStore) -> dict[str, list[dict[str, int]]]:
    """Twenty writes to index ``c``: its common terms left in many blocks of several levels."""
    sources: dict[str, list[dict[str, int]]] = {}
    for write in range(20):
        batch = {f"w{write:02d}-{i:03d}": [{"cat": 1 + i % 3, f"t{i % 5}": 1}] for i in range(40)}
        store.put_sources("c", [indexed_source(k, *held) for k, held in batch.items()])
        sources |= batch
    return sources


def _searches(store: PostgresStore) -> list[list[tuple[str, float]]]:
    return [store.search_passages("c", query, k, k1=K1, b=B) for query in QUERIES for k in (3, 40)]


def _blocks_a_term(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return dict(
            conn.execute("SELECT term, count(*) FROM search_blocks GROUP BY term").fetchall()
        )


def test_a_term_in_many_blocks_is_gathered_into_one_when_the_index_settles(
    postgres_url: str,
) -> None:
    """Writes leave a common term in many blocks, each a lookup and a read for a search;
    settling the index gathers them into one (in passage order, with its skip list), and every
    search ranks the same passages with the same scores as before."""
    import numpy as np

    from kforge.store.postgres_postings import SETTLED, SKIP, record_dtype

    store = PostgresStore(postgres_url)
    sources = scattered_index(store)
    assert _blocks_a_term(postgres_url)["cat"] > SETTLED
    before = _searches(store)
    store.settle_index()
    assert set(_blocks_a_term(postgres_url).values()) == {1}
    for term, level, wide, data, skips in _blocks(postgres_url):
        records = np.frombuffer(data, dtype=record_dtype(wide))
        assert level == 32767 and np.all(np.diff(records["passage"].astype(np.int64)) > 0)
        named = np.frombuffer(skips, dtype=">i8" if wide else ">i4")
        assert named.tolist() == records["passage"][::SKIP].tolist(), term
    assert _searches(store) == before
    assert_best(store, sources, QUERIES, 10)
    for write in range(9):  # writes after it merge on the gathered block
        sources[f"n{write}"] = [{"cat": 2, "t1": 1}]
        store.put_sources("c", [indexed_source(f"n{write}", *sources[f"n{write}"])])
    assert_best(store, sources, QUERIES, 10)
    store.close()


def test_an_index_of_scattered_blocks_migrates_to_one_block_a_term(postgres_url: str) -> None:
    """A database whose terms lie in many blocks (schema version 6) gathers them into one a
    term when a store opens it, and searches the same after."""
    store = PostgresStore(postgres_url)
    sources = scattered_index(store)
    before = _searches(store)
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DELETE FROM kforge_schema_version WHERE version >= 7")
    assert max(_blocks_a_term(postgres_url).values()) > 1
    store = PostgresStore(postgres_url)
    assert set(_blocks_a_term(postgres_url).values()) == {1}
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT DISTINCT writes FROM search_terms").fetchall() == [(0,)]
    assert _searches(store) == before
    sources["n"] = [{"cat": 2, "t1": 1}]
    store.put_sources("c", [indexed_source("n", *sources["n"])])
    assert_best(store, sources, QUERIES, 10)
    store.close()
