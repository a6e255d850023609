"""Answers over a spell checker's manual (a Texinfo build) and a filesystem library's (Sphinx):
a product named after its maker ("GNU Aspell is ..."), when something happens rather than on
what date, a table whose first cells are marks, an abbreviation that is a path's last part,
and a name a sentence leads with a colon."""

from __future__ import annotations

from kforge.rag.compose import compose_extractive
from kforge.rag.defining import defined_subject, defines_subject
from kforge.rag.kinds import holds_kind
from kforge.rag.question import read_question
from kforge.rag.textcheck import split_sentences
from kforge.rag.types import SourceDocument
from kforge.rag.units import passage_units
from tests.rag.helpers import asked_over
from tests.rag.helpers import page_chunk as chunk


def test_a_product_named_after_its_maker_is_defined_by_the_sentence_saying_what_it_is() -> None:
    subject = defined_subject(read_question("What is Aspell?"))
    said = "GNU Aspell is a spell checker designed to eventually replace Ispell."
    assert defines_subject(said, subject) == 1.0
    assert defines_subject("Since Aspell is a library, it links.", subject) == 0.0
    assert defines_subject("Unlike Ispell, Aspell is a library.", subject) == 0.0
    assert defines_subject("If Aspell is installed, run it.", subject) == 0.0


def test_what_is_the_product_reads_its_introduction_though_every_page_names_it() -> None:
    pages = [
        SourceDocument(
            f"option{i}.html",
            f"Option {i}\n\nAspell reads option {i} from its configuration file. Aspell "
            f"then applies option {i} to every word Aspell checks.",
            f"Option {i}",
        )
        for i in range(60)
    ]
    pages.append(
        SourceDocument(
            "intro.html",
            "1 Introduction\n\nGNU Aspell is a spell checker designed to eventually replace "
            "Ispell. It can either be used as a library or as an independent spell checker.",
            "Introduction",
        )
    )
    files, units, _ = asked_over(pages, "What is Aspell?")
    assert "intro.html" in files, files
    assert units[0].startswith("GNU Aspell is a spell checker"), units


def test_when_something_happens_is_the_condition_a_sentence_gives() -> None:
    asked = read_question("When is the file on the backend actually opened?")
    until = (
        "Critically, the file on the backend system is not actually opened until the "
        "OpenFile instance is used in a with context."
    )
    assert holds_kind(until, asked)
    passage = chunk(
        0,
        "Higher-level\n\nFor many situations, the only function needed is open_files(), "
        "which returns OpenFile instances for a backend file to open. " + until,
        "Usage",
    )
    segments = compose_extractive(asked.text, [passage])
    assert segments[0].text == until, [s.text for s in segments]
    # a date, not a condition, says when something was done
    dated = read_question("When was the file format changed?")
    assert not holds_kind("It changed when the library was rewritten.", dated)
    assert holds_kind("It changed in 2019.", dated)


def test_rows_whose_first_cells_are_marks_stay_rows_of_their_table() -> None:
    text = (
        "To summarize these:\n\n*word | Add a word to the personal dictionary\n"
        "# | Save the current personal dictionary\n+ | Enter TeX mode.\n"
        "- | Enter the default mode.\n! | Enter terse mode\n\n"
        "In terse mode, Aspell will not print lines beginning with '*'."
    )
    units = passage_units(text)
    rows = [u.text for u in units if u.kind == "row"]
    assert rows == [
        "*word | Add a word to the personal dictionary",
        "# | Save the current personal dictionary",
        "+ | Enter TeX mode.",
        "- | Enter the default mode.",
        "! | Enter terse mode",
    ], [(u.kind, u.text) for u in units]


def test_a_path_ending_in_etc_ends_its_sentence() -> None:
    text = (
        "The global one is normally aspell.conf which is located in /usr/etc or "
        "/usr/local/etc. To find out the values for your system use aspell dump config. "
        "Files, options, etc. Are all read."
    )
    assert split_sentences(text) == [
        "The global one is normally aspell.conf which is located in /usr/etc or /usr/local/etc.",
        "To find out the values for your system use aspell dump config.",
        "Files, options, etc. Are all read.",
    ]


def test_a_name_a_sentence_leads_with_a_colon_is_quoted_with_it() -> None:
    passage = chunk(
        0,
        "5.7.1 Format of the Personal Dictionary\n\n"
        "The personal dictionary generally has a filename of the form:\n\n"
        ".aspell.lang.pws\n\nAnd the file itself contains two parts.",
        "Format of the Personal Dictionary",
    )
    segments = compose_extractive("What is the filename of the personal dictionary?", [passage])
    texts = [s.text for s in segments]
    assert texts[0] == (
        "The personal dictionary generally has a filename of the form: .aspell.lang.pws"
    ), texts
