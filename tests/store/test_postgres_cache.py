"""The blocks a PostgreSQL passage store keeps between searches (``postgres_cache``)."""

from __future__ import annotations

from kforge.store.postgres_cache import BlockCache


def test_the_least_recently_used_blocks_go_first_and_the_budget_holds() -> None:
    cache = BlockCache(budget=100)
    cache.put("c", "a", 1, b"x" * 40)
    cache.put("c", "b", 2, b"y" * 40)
    assert cache.take("c", {"a": [1]}) == {1: b"x" * 40}  # 1 is now the most recently used
    cache.put("c", "d", 3, b"z" * 40)  # makes room: 2 goes
    assert cache.size == 80
    assert cache.ids("c", ["a", "b", "d"]) == [1, 3]
    cache.put("c", "e", 4, b"w" * 101)  # larger than the whole budget: not kept
    assert cache.ids("c", ["e"]) == [] and cache.size == 80


def test_blocks_of_a_term_its_index_no_longer_names_are_forgotten() -> None:
    """A merge wrote the term's blocks 1 and 2 as block 5: a search's first read names 5, so
    1 and 2 are gone from the index and from the cache; other indexes' terms stay."""
    cache = BlockCache(budget=1000)
    cache.put("c", "a", 1, b"1")
    cache.put("c", "a", 2, b"2")
    cache.put("other", "a", 3, b"3")
    assert cache.take("c", {"a": [5]}) == {}
    assert cache.ids("c", ["a"]) == [] and cache.ids("other", ["a"]) == [3]
    assert cache.size == 1


def test_a_cache_without_budget_keeps_nothing() -> None:
    cache = BlockCache(budget=0)
    cache.put("c", "a", 1, b"1")
    assert cache.ids("c", ["a"]) == [] and cache.size == 0
