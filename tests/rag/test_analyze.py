from __future__ import annotations

from kforge.rag.analyze import analyze, term_frequencies, tokenize


def test_tokenize_lowercases_folds_accents_and_drops_possessives() -> None:
    assert tokenize("The Agent's naïve IL-6 plan (v2.1)") == [
        "the", "agent", "naive", "il", "6", "plan", "v2", "1",
    ]  # fmt: skip


def test_analyze_removes_stopwords_and_stems() -> None:
    assert analyze("The agents are retrieving the documents") == ["agent", "retriev", "document"]


def test_inflections_meet_at_one_term() -> None:
    assert set(analyze("checkpoint checkpoints checkpointing")) == {"checkpoint"}


def test_term_frequencies_count_terms() -> None:
    assert term_frequencies("agent agents tool") == {"agent": 2, "tool": 1}


def test_text_without_words_has_no_terms() -> None:
    assert analyze("... --- !!!") == []
    assert analyze("the and of") == []
