from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from eval_metrics import exact_match, ndcg_at_k, percentile, recall_at_k, token_f1


def test_ndcg_by_hand() -> None:
    rel = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "b", "x"], rel) == pytest.approx(1.0)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a"], rel) == pytest.approx(expected)
    assert ndcg_at_k(["x"], {}) == 0.0
    assert ndcg_at_k(["x", "y", "a"], rel, k=2) == 0.0


def test_recall() -> None:
    assert recall_at_k(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, 2) == pytest.approx(1 / 3)
    assert recall_at_k(["a"], {"a", "b"}, 5) == 0.5


def test_em_and_f1_follow_the_squad_rules() -> None:
    assert exact_match("The Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match("Paris, France", "Paris") == 0.0
    assert token_f1("Paris, France", "Paris") == pytest.approx(2 / 3)
    assert token_f1("yes", "no") == 0.0
    assert token_f1("", "x") == 0.0


def test_percentile_interpolates() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert percentile([], 50) == 0.0
