"""Checks on generated text: loops, prompt echo, sentence support, key terms."""

from __future__ import annotations

from kforge.rag.textcheck import (
    LoopWatch,
    cut_loop,
    distinct_ngram_share,
    echoed_phrase,
    is_degenerate,
    key_terms,
    split_sentences,
    support,
)

LOOP = "BM25 ranks documents by term statistics. " + "a way of life that is also " * 30


def test_a_looping_text_is_degenerate_and_cut_before_the_repeat() -> None:
    assert is_degenerate(LOOP) and distinct_ngram_share(LOOP) < 0.6
    kept, looped = cut_loop(LOOP)
    assert looped and kept == "BM25 ranks documents by term statistics."
    fine = "BM25 ranks documents. Dense retrieval embeds them. Fusion combines both rankings."
    assert cut_loop(fine) == (fine, False) and not is_degenerate(fine)


def test_a_text_that_is_nothing_but_a_loop_keeps_at_most_one_round() -> None:
    kept, looped = cut_loop("very " * 40)
    assert looped and kept.split() == ["very"] * 5


def test_the_watch_stops_a_stream_once_it_loops() -> None:
    watch, text, stopped = LoopWatch(every=8), "", None
    for word in LOOP.split():
        text += word + " "
        stopped = watch(text)
        if stopped is not None:
            break
    assert stopped == "BM25 ranks documents by term statistics."
    assert len(text) < len(LOOP) / 2  # stopped early, not at the end


def test_echo_is_a_run_of_instruction_words_not_the_question() -> None:
    system = "Answer the question in 2 to 4 sentences using only the numbered sources."
    echo = "The answer to the question in 2 to 4 sentences using only the numbered sources is: x"
    assert echoed_phrase(echo, [system]) == "the question in 2 to 4"
    assert echoed_phrase("BM25 uses k1 and b to weigh terms.", [system]) == ""


def test_support_is_the_share_of_content_words_the_sources_hold() -> None:
    source = "The parameter k1 controls how quickly term frequency saturates."
    assert support("k1 controls term frequency saturation.", [source]).supported
    unsupported = support("k1 controls the amount of dopamine in the brain.", [source])
    assert not unsupported.supported and "dopamin" in unsupported.missing


def test_key_terms_drop_request_words() -> None:
    assert key_terms("Can you write me a poem about Paris?") == ["poem", "pari"]
    assert key_terms("Hello there, thanks!") == []
    assert key_terms("What do k1 and b control?") == ["k1", "b", "control"]


def test_sentences_split_on_ends_and_list_items_not_abbreviations() -> None:
    text = "- **Idf.** Rare terms weigh more, e.g. names. Second one!\n- Item two"
    assert split_sentences(text) == [
        "- **Idf.",
        "Rare terms weigh more, e.g. names.",
        "Second one!",
        "- Item two",
    ]


def test_an_initial_is_no_sentence_end() -> None:
    assert split_sentences("A film directed by M. Night Shyamalan. It opened in 2015.") == [
        "A film directed by M. Night Shyamalan.",
        "It opened in 2015.",
    ]
    assert split_sentences("Rickets follows deficiency.Treatment restores it.") == [
        "Rickets follows deficiency.",
        "Treatment restores it.",
    ]


def test_a_decorator_opens_a_sentence_but_an_address_does_not() -> None:
    assert split_sentences("It must be created there. @app.route() creates a route.") == [
        "It must be created there.",
        "@app.route() creates a route.",
    ]
    assert split_sentences("Mail us at help@example.org. @ signs alone are no code.") == [
        "Mail us at help@example.org. @ signs alone are no code."
    ]


def test_a_dotted_name_is_not_cut_as_two_sentences() -> None:
    # documentation text whose code markup was dropped: "pathlib.Path" names a class
    assert split_sentences("tmp_path is a pathlib.Path object. Here is an example:") == [
        "tmp_path is a pathlib.Path object.",
        "Here is an example:",
    ]
    assert split_sentences("Subclass scrapy.Spider and set its name.") == [
        "Subclass scrapy.Spider and set its name."
    ]
    assert split_sentences("Parsers return click.Command objects.") == [
        "Parsers return click.Command objects."
    ]


def test_a_line_break_after_a_sentence_ends_it_whatever_the_next_line_opens_with() -> None:
    # pyparsing's manual: each entry opens with its name in lower case, on a line of its own
    text = (
        "parse_with_tabs() - rarely used, except with the White class.\n"
        "enable_packrat() - enables \u201cpackrat parsing\u201d. packrat parsing is disabled "
        "by default, since it may conflict with parse actions.\n"
        "(see enable_packrat().)\n"
        "It is also known as memoizing, e.g.\n"
        "caching results."
    )
    assert split_sentences(text) == [
        "parse_with_tabs() - rarely used, except with the White class.",
        "enable_packrat() - enables \u201cpackrat parsing\u201d. packrat parsing is disabled "
        "by default, since it may conflict with parse actions.",
        "(see enable_packrat().)",
        "It is also known as memoizing, e.g. caching results.",
    ]
    # a line wrapped inside a sentence is joined as before
    assert split_sentences("This line goes on\nover two lines.") == [
        "This line goes on over two lines."
    ]
