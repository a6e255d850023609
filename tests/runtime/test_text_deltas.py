"""An agent's text pieces: for any text and any way the model streamed it, a listener's pieces
join to the recorded text, whether it listened live, came later, or reconnected mid-text."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from kforge.runtime.text_deltas import SpokenText, pieces

texts = st.text(alphabet=st.sampled_from("ab .!?\n:;\t)"), max_size=60)


@given(texts)
def test_pieces_join_to_the_text_and_none_is_empty(text: str) -> None:
    cut = pieces(text)
    assert "".join(cut) == text and all(cut)


def test_pieces_end_at_sentences_and_lines() -> None:
    assert pieces("One. Two? Three\nFour") == ["One. ", "Two? ", "Three\n", "Four"]


@given(texts, st.lists(st.integers(min_value=0, max_value=60)))
def test_what_streamed_live_and_the_rest_join_to_the_recorded_text(
    text: str, cuts: list[int]
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    listener = SpokenText()
    live = [p for a, b in itertools.pairwise(bounds) for p in listener.live(text[a:b])]
    rest = list(listener.spoken(text))
    assert "".join(live + rest) == text
    assert listener.sent == 0  # the next text starts afresh
    assert "".join(listener.live("x")) == "x"


@given(texts.filter(bool), st.integers(min_value=1, max_value=60))
def test_a_listener_that_reconnects_gets_the_rest_once(text: str, had: int) -> None:
    had = min(had, len(text))
    listener = SpokenText(sent=had)
    assert listener.live("lost while away") == []
    assert text[:had] + "".join(listener.spoken(text)) == text


def test_the_recorded_text_tidied_spacing_still_continues_the_stream() -> None:
    listener = SpokenText()
    live = listener.live(" The cake.\n") + listener.live("  Ten friends.")
    assert live == [" The cake.\n", "  Ten friends."]
    assert list(listener.spoken("The cake. Ten friends.\n\nSubquestions:\n- none")) == [
        "\n\n",
        "Subquestions:\n",
        "- none",
    ]


def test_text_revised_after_it_streamed_is_said_again_as_recorded() -> None:
    listener = SpokenText()
    listener.live("The cake is a lie.")
    assert "".join(listener.spoken("The cake.")) == "\n\nThe cake."
