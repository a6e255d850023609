"""Answers over a signalling library's manual (one Sphinx page): a name written in capitals
that is also a common word ("What is ANY?"), a release's date standing alone under its
version, the front page titled "X Documentation", what a library provides, and a class's
entry that names only its bases."""

from __future__ import annotations

from kforge.rag.commands import command_of
from kforge.rag.compose import compose_extractive
from kforge.rag.defining import defined_subject, defines_subject
from kforge.rag.focus import question_focus
from kforge.rag.question import DATE, read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.textcheck import key_terms
from kforge.rag.types import SourceDocument
from tests.rag.helpers import api_pages, asked_over
from tests.rag.helpers import page_chunk as chunk


def test_a_name_written_as_one_is_asked_though_it_spells_a_common_word() -> None:
    assert key_terms("What is ANY?") == ["ani"]
    assert read_question("What is ANY?").terms == ("ani",)
    assert [t.text for t in question_focus("What is ANY?").terms] == ["ANY"]
    # a greeting shouted is still a greeting, and "any" written plainly is no name
    assert key_terms("THANKS!") == []
    assert key_terms("What is any?") == []
    # nor is a name called or quoted as code a request word: has(), `get`
    assert key_terms("What does has() do?") == ["ha"]
    assert "get" in read_question("What does `get` do?").terms


def test_a_release_date_standing_alone_answers_when() -> None:
    passage = chunk(
        0,
        "Version 1.5\n\nReleased 2022-07-17\n\nSupport Python >= 3.7 and PyPy. Python 2 may "
        "continue to work, but the next release will make incompatible changes.",
        "Blinker Documentation",
        "Changes > Version 1.5",
    )
    question = "When was version 1.5 released?"
    segments = compose_extractive(question, [passage])
    assert segments[0].text == "Released 2022-07-17", [s.text for s in segments]
    line = short_answer(question, segments, [passage])
    assert line is not None and line.answer == "2022-07-17", line
    assert DATE.search("on 2022-07-17.").group(0) == "2022-07-17"  # type: ignore[union-attr]


def test_the_front_page_titled_x_documentation_says_what_x_provides() -> None:
    pages = [
        *api_pages("blinker"),
        SourceDocument(
            "index.html",
            "Blinker Documentation\n\nBlinker was written by Jason Kirtland and is provided "
            "under the MIT License. Blinker provides fast & simple object-to-object and "
            "broadcast signaling for Python objects.",
            "Blinker Documentation",
        ),
    ]
    files, units, _ = asked_over(pages, "What is Blinker?")
    assert files[0] == "index.html", files
    assert units[0].startswith("Blinker provides fast & simple"), units


def test_a_class_entry_naming_its_bases_is_followed_by_what_the_class_is() -> None:
    passage = chunk(
        0,
        "Named Signals\n\nclass blinker.base.WeakNamespace(other=(), /, **kw): Bases: "
        "weakref.WeakValueDictionary\n\nA weak mapping of signal names to signals.\n\n"
        "Automatically cleans up unused Signals when the last reference goes out of scope.",
        "Blinker Documentation",
    )
    texts = [s.text for s in compose_extractive("What is WeakNamespace?", [passage])]
    assert "A weak mapping of signal names to signals." in " ".join(texts), texts


def test_what_a_library_provides_defines_it() -> None:
    subject = defined_subject(read_question("What is Blinker?"))
    said = "Blinker provides fast & simple object-to-object and broadcast signaling."
    assert defines_subject(said, subject) == 1.0


def test_which_version_did_something_is_the_release_whose_notes_say_so() -> None:
    notes = chunk(
        0,
        "Version 0.2.0\n\nReleased 2021-06-25\n\nSupport for Python 2 has been dropped. Only "
        "Python 3.6 and above are supported.",
        "Changes",
        "Changes > Version 0.2.0",
    )
    for question in (
        "Which version dropped support for Python 2?",
        "In which release was support for Python 2 dropped?",
    ):
        segments = compose_extractive(question, [notes])
        line = short_answer(question, segments, [notes])
        assert line is not None and line.answer == "0.2.0", (question, line)
    # another product's version is not the release
    asked = "What version of Python is needed?"
    line = short_answer(asked, compose_extractive(asked, [notes]), [notes])
    assert line is None or line.answer != "0.2.0", line


def test_a_how_do_i_line_is_the_call_not_the_function_an_example_defines() -> None:
    code = (
        ">>> def b_subscriber(sender):\n"
        '...     print("Caught signal from processor_b.")\n'
        "...     assert sender.name == 'b'\n"
        "...\n"
        ">>> processor_b = Processor('b')\n"
        ">>> ready.connect(b_subscriber, sender=processor_b)\n"
        "<function b_subscriber at 0x...>"
    )
    asked = read_question("How do I subscribe only to one specific sender?")
    assert command_of(code, asked) == ">>> ready.connect(b_subscriber, sender=processor_b)"
