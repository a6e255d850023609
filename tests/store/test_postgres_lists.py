"""The rows of a PostgreSQL search's lists, merged (``postgres_lists``)."""

from __future__ import annotations

import pytest

from kforge.store.postgres_lists import distinct_rows

np = pytest.importorskip("numpy", reason="the postgres extra is not installed")


@pytest.mark.parametrize("runs", [[], [[5]], [[1, 4, 9], [2, 4, 10, 11], [0, 9], [4]]])
def test_rows_of_ascending_runs_merge_as_np_unique_merges_them(runs: list[list[int]]) -> None:
    every = np.array([r for run in runs for r in run], dtype=np.int64)
    rows, where = distinct_rows(every)
    expected_rows, expected_where = np.unique(every, return_inverse=True)
    assert rows.tolist() == expected_rows.tolist()
    assert where.tolist() == expected_where.tolist()


def test_rows_of_many_long_runs_merge_as_np_unique_merges_them() -> None:
    rng = np.random.default_rng(7)
    runs = [np.sort(rng.choice(100_000, size, replace=False)) for size in (30_000, 500, 9_000)]
    every = np.concatenate(runs).astype(np.int64)
    rows, where = distinct_rows(every)
    expected_rows, expected_where = np.unique(every, return_inverse=True)
    assert (rows == expected_rows).all() and (where == expected_where).all()
    assert (rows[where] == every).all()


def test_the_shares_of_picked_records_are_those_of_the_records_picked() -> None:
    """Picking fields instead of whole records gives the same shares to the last bit."""
    from kforge.store.postgres_lists import shares
    from kforge.store.postgres_postings import record_dtype

    records = np.zeros(6, dtype=record_dtype(False))
    records["passage"] = [3, 5, 8, 13, 21, 34]
    records["tf"] = [1, 2, 3, 1, 7, 2]
    records["length"] = [10, 40, 7, 300, 55, 12]
    for which in (np.array([0, 2, 5]), records["tf"] > 1):
        picked = shares(records, 2.5, 0.6, 0.004, which)
        assert picked.tolist() == shares(records[which], 2.5, 0.6, 0.004).tolist()


@pytest.mark.parametrize("candidates", [3, 40, 200])
def test_candidates_found_by_a_table_of_positions_get_the_shares_a_binary_search_gives(
    monkeypatch: pytest.MonkeyPatch, candidates: int
) -> None:
    from kforge.store import postgres_lists
    from kforge.store.postgres_postings import record_dtype

    rng = np.random.default_rng(candidates)
    records = np.zeros(100, dtype=record_dtype(False))
    records["passage"] = np.sort(rng.choice(1000, 100, replace=False)) + 50
    records["tf"] = rng.integers(1, 5, 100)
    records["length"] = rng.integers(5, 300, 100)
    rows = np.sort(rng.choice(1200, candidates, replace=False)).astype(np.int64)
    found = []
    for hits in (1, 10**9):  # a table for any number of candidates, then never
        monkeypatch.setattr(postgres_lists, "_DENSE_HITS", hits)
        extra = np.zeros(len(rows))
        postgres_lists.add_shares(extra, rows, records, 2.0, 0.5, 0.01)
        found.append(extra.tolist())
    assert found[0] == found[1]
    assert sum(1 for x in found[0] if x) == len(
        set(rows.tolist()) & set(records["passage"].tolist())
    )


@pytest.mark.parametrize("count", [1, 5, 60, 400])
def test_the_stretches_that_can_hold_rows_are_those_whose_span_holds_one(count: int) -> None:
    """Two blocks in passage order with a gap between them; rows anywhere, before the first,
    in the gap and past the last: few rows (searched in the skip lists) or many (counted by
    stretch) find the same stretches, those whose passages span one of them."""
    from kforge.store.postgres_lists import Block, TermList

    skips = [np.array([10, 30, 35, 80], dtype=np.int64), np.array([200, 260], dtype=np.int64)]
    last = [120, 300]
    blocks = [
        Block(id=n, term="t", wide=False, postings=128 * len(s), skips=s, last=last[n])
        for n, s in enumerate(skips)
    ]
    held = TermList("t", False, blocks)
    spans = [(10, 30), (30, 35), (35, 80), (80, 121), (200, 260), (260, 301)]
    rng = np.random.default_rng(count)
    rows = np.unique(rng.integers(0, 330, count)).astype(np.int64)
    expected = [n for n, (a, b) in enumerate(spans) if any(a <= r < b for r in rows.tolist())]
    assert held.holding(rows).tolist() == expected
