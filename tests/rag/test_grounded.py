"""Grounded answers: extractive for small models; generated text cut at loops, refused on echo,
checked sentence by sentence, retried once, then replaced; one citation numbering."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.rag.grounded import GENERATE_SYSTEM, write_answer
from kforge.rag.types import Chunk
from tests.rag.test_compose import BM25, DENSE

MARKER = re.compile(r"\[(\d+)\]")


class Replies:
    """A model that answers from a list, and records the settings of each call."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.settings: list[ModelSettings] = []

    async def __call__(self, messages: list[Message], s: ModelSettings) -> ModelResponse:
        self.settings.append(s)
        return ModelResponse(text=self.texts.pop(0))


def body(text: str) -> str:
    """The supporting sentences: what follows the short answer line (a lone sentence that is
    all of its short answer stands alone)."""
    line, _, rest = text.partition("\n\n")
    return rest or line


def assert_markers_name_citations(text: str, citations: Sequence[object]) -> None:
    numbers = [int(n) for n in MARKER.findall(text)]
    assert set(numbers) == set(range(1, len(citations) + 1))
    assert numbers == sorted(numbers, key=numbers.index)  # first uses in order 1, 2, ...
    first_uses = list(dict.fromkeys(numbers))
    assert first_uses == list(range(1, len(first_uses) + 1))


async def test_small_models_answer_with_sentences_of_the_passages() -> None:
    answer = await write_answer("What does k1 control in BM25?", [BM25, DENSE], None)
    assert answer.path == "extractive"
    assert "The parameter k1 controls how quickly term frequency saturates [1]." in answer.text
    assert [c.file for c in answer.citations] == ["doc0.md"]  # only what the text cites


async def test_a_supported_reply_is_kept_and_its_markers_renumbered() -> None:
    model = Replies(
        "Dense retrieval ranks by cosine similarity [2]. BM25 is a ranking function [1]."
    )
    answer = await write_answer("How do they rank?", [BM25, DENSE], model, style="generative")
    assert answer.path == "generative"
    # "how do they rank?" names no kind of thing a rule finds: no short line is made up
    assert answer.short_answer == ""
    assert body(answer.text) == (
        "Dense retrieval ranks by cosine similarity [1]. BM25 is a ranking function [2]."
    )
    assert [c.file for c in answer.citations] == ["doc1.md", "doc0.md"]


async def test_invented_markers_go_and_a_sentence_is_cited_by_the_passage_that_says_it() -> None:
    model = Replies("The parameter b controls length normalisation [7]. BM25 ranks documents.")
    answer = await write_answer("What is b?", [DENSE, BM25], model, style="generative")
    assert body(answer.text).startswith("The parameter b controls length normalisation [1].")
    assert [c.file for c in answer.citations] == ["doc0.md"]  # BM25's passage, not [7]


async def test_a_looping_reply_is_retried_with_a_repetition_penalty_then_replaced() -> None:
    loop = "BM25 is good. " + "It is a way of life that is also " * 20
    model = Replies(loop, loop)
    answer = await write_answer("What is BM25?", [BM25], model, style="generative")
    assert answer.path == "extractive_fallback"
    assert "way of life" not in answer.text and answer.text.endswith("[1].")
    assert model.settings[1].repetition_penalty and model.settings[1].repetition_penalty > 1
    assert "failed the checks" in answer.reason


async def test_prompt_echo_is_refused_and_a_good_retry_is_kept() -> None:
    echo = "You answer the user's question using the numbered passages, like [1]."
    model = Replies(echo, "BM25 is a ranking function used by search engines [1].")
    answer = await write_answer("What is BM25?", [BM25], model, style="generative")
    assert answer.path == "generative_retry"
    assert "repeats its instructions" in answer.reason
    assert body(answer.text) == "BM25 is a ranking function used by search engines [1]."
    assert GENERATE_SYSTEM.split()[0] == "You"


async def test_unsupported_sentences_are_dropped_and_too_many_fail_the_reply() -> None:
    model = Replies(
        "BM25 is a ranking function [1]. The parameters k1 and b control dopamine in the brain [1].",
        "Ranking functions control the amount of dopamine in the brain and heart [1].",
    )
    answer = await write_answer("What is BM25?", [BM25], model, style="generative")
    assert answer.path == "generative"
    assert "dopamine" not in answer.text and answer.dropped


words = st.sampled_from(
    ["BM25", "ranking", "function", "k1", "controls", "vectors", "cosine", "the", "is", "brain"]
)
sentences = st.lists(words, min_size=1, max_size=12).map(lambda w: " ".join(w))
markers = st.lists(st.integers(0, 9), max_size=3).map(lambda ns: "".join(f"[{n}]" for n in ns))
replies = st.lists(st.tuples(sentences, markers), max_size=6).map(
    lambda parts: " ".join(f"{s}{m}." for s, m in parts)
)
passage_sets = st.lists(st.sampled_from([BM25, DENSE]), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(
    first=replies,
    second=replies,
    passages=passage_sets,
    style=st.sampled_from(["extractive", "generative"]),
)
async def test_every_marker_of_any_answer_names_a_listed_source(
    first: str, second: str, passages: list[Chunk], style: str
) -> None:
    answer = await write_answer(
        "What does BM25 rank?",
        passages,
        Replies(first, second),
        style=style,  # type: ignore[arg-type]
    )
    assert_markers_name_citations(answer.text, answer.citations)
    for citation, index in zip(answer.citations, answer.sources, strict=True):
        assert citation.chunk_id == passages[index].id


def test_each_sentence_of_a_unit_of_two_cites_its_passage() -> None:
    """A list item of two sentences is one unit; each of its sentences carries the marker, so
    a reader (or a checker) sees the source of each, and taking the markers out gives the unit
    back. A sentence ending inside markup ("testing.**") shares the next one's marker."""
    from kforge.rag.compose import Segment
    from kforge.rag.grounded import number_segments

    item = (
        "**Idempotent**: the effect of two calls equals the effect of one, e.g. an upsert by "
        "key. Re-running is safe if the arguments are the same."
    )
    label = "**Separate tuning from testing.** Choose parameters on a development split."
    body = f"{item}\n\n{label}"
    passages = [Chunk("a", "a.md", "a.md", "A", "", None, 0, len(body), body)]
    text, _, _ = number_segments([Segment(item, 0), Segment(label, 0)], passages)
    assert text == (
        "**Idempotent**: the effect of two calls equals the effect of one, e.g. an upsert by "
        "key [1]. Re-running is safe if the arguments are the same [1]. **Separate tuning from "
        "testing.** Choose parameters on a development split [1]."
    )
    assert text.replace(" [1]", "") == f"{item} {label}"
