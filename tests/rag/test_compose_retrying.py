"""Answers over a retrying library's manual and an internationalization library's (Sphinx
builds): an acronym the documents spell out, the class a sentence says to raise, code using
``async def`` and ``await``, the choice a list marks as the default, the name a sentence puts
before the noun asked, an option of a program's help, and imports that take no step."""

from __future__ import annotations

from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.defining import defined_subject, defines_subject
from kforge.rag.focus import question_focus
from kforge.rag.named_answer import best_name
from kforge.rag.question import read_question
from kforge.rag.rerank import rerank_hits
from kforge.rag.short_answer import short_answer
from kforge.rag.spans import named_kind
from kforge.rag.types import SearchHit, SourceDocument
from kforge.rag.units import passage_units
from tests.rag.helpers import asked_over
from tests.rag.helpers import page_chunk as chunk


def _line(question: str, passages: list) -> tuple[list[str], str | None]:
    segments = compose_extractive(question, passages)
    line = short_answer(question, segments, passages)
    return [s.text for s in segments], line.answer if line else None


def test_an_acronym_spelled_out_beside_it_defines_it() -> None:
    subject = defined_subject(read_question("What is CLDR?"))
    said = "Babel includes data extracted from the Common Locale Data Repository (CLDR)."
    assert defines_subject(said, subject) == 1.0
    assert defines_subject(
        "a Python interface to the CLDR (Common Locale Data Repository)", subject
    )
    assert defines_subject("CLDR 29 is now used instead of CLDR 28.", subject) < 1.0


def test_what_is_an_acronym_reads_the_page_spelling_it_out() -> None:
    pages = [
        SourceDocument(
            f"changes{i}.html",
            f"Version 2.{i}\n\nCLDR: Use CLDR {30 + i} (PR #{500 + i}).\n\n"
            f"CLDR: Upgrade to CLDR {30 + i}.1 - a contributor.",
            f"Version 2.{i}",
        )
        for i in range(50)
    ]
    pages.append(
        SourceDocument(
            "intro.html",
            "Introduction\n\nThe functionality Babel provides can be separated into two "
            "aspects: tools to build and work with gettext message catalogs, and a Python "
            "interface to the CLDR (Common Locale Data Repository), providing access to "
            "various locale display names, localized number and date formatting, etc.",
            "Introduction",
        )
    )
    files, _, line = asked_over(pages, "What is CLDR?")
    assert files[0] == "intro.html", files
    assert line == "Common Locale Data Repository", line


RETRYING = chunk(
    0,
    "Whether to retry\n\n"
    "Any combination of stop, wait, etc. is also supported to give you the freedom to mix "
    "and match.\n\n"
    "It\u2019s also possible to retry explicitly at any time by raising the TryAgain "
    "exception:\n\n"
    "@retry\ndef do_something():\n    result = something_else()\n    if result == 23:\n"
    "       raise TryAgain",
    "Examples",
    "Whether to retry",
)
ASYNC = chunk(
    1,
    "Async and retry\n\n"
    "Finally, retry works also on asyncio and Tornado (>= 4.5) coroutines.\n\n"
    "You can even use alternative event loops such as curio or Trio by passing the correct "
    "sleep function:\n\n"
    "@retry(sleep=trio.sleep)\nasync def my_async_function(loop):\n"
    "    await asks.get('https://example.org')",
    "Examples",
    "Async and retry",
)
LOGGING = chunk(
    2,
    "Before and After Retry, and Logging\n\n"
    "It\u2019s possible to execute an action before any attempt of calling the function by "
    "using the before callback function:\n\n"
    "import logging\nimport sys\n\n"
    "logging.basicConfig(stream=sys.stderr, level=logging.DEBUG)\n\n"
    "In the same spirit, it\u2019s possible to log after a call that failed:\n\n"
    "import logging\nimport sys",
    "Examples",
    "Before and After Retry, and Logging",
)


def test_the_class_a_sentence_says_to_raise_is_the_way() -> None:
    texts, line = _line("How do I retry explicitly at any time?", [RETRYING])
    assert texts[0].startswith("It\u2019s also possible to retry explicitly"), texts
    # "It's possible to ..." points back to nothing: the sentence before it is not needed
    assert not any(t.startswith("Any combination") for t in texts), texts
    assert line == "raise TryAgain", line


def test_async_code_is_code_and_the_sentence_leading_it_says_how() -> None:
    units = passage_units(ASYNC.text)
    assert ("code", ASYNC.text.rsplit("\n\n", 1)[1]) in [(u.kind, u.text) for u in units]
    texts, line = _line("How do I use tenacity with trio?", [ASYNC])
    assert texts[0].startswith("You can even use alternative event loops"), texts
    assert line == "@retry(sleep=trio.sleep)", line


def test_imports_alone_take_no_step() -> None:
    texts, _ = _line("How do I log before each attempt?", [LOGGING])
    assert "import logging\nimport sys" not in texts, texts
    texts, _ = _line("How do I import logging?", [LOGGING])
    assert "import logging\nimport sys" in texts, texts


def test_the_choice_a_list_marks_as_the_default_is_the_short_line() -> None:
    formats = chunk(
        3,
        "Date and Time\n\n"
        "The format_*() functions also accept an optional format argument, which allows you "
        "to choose between one of four format variations:\n\n"
        "short, medium (the default), long, and full.\n\n"
        "Generate \u2018#: filename:line\u2019 lines (default).",
        "Date and Time",
        "Date and Time",
    )
    _, line = _line("What is the default format variation of the format functions?", [formats])
    assert line == "medium", line


def test_the_name_before_the_noun_asked_is_the_short_line() -> None:
    install = chunk(
        4,
        "Installation\n\n"
        "Babel is distributed as a standard Python package fully set up with all the "
        "dependencies it needs. It primarily depends on the excellent pytz library for "
        "timezone handling.",
        "Installation",
        "Installation",
    )
    _, line = _line("What library does Babel depend on for timezone handling?", [install])
    assert line == "pytz", line
    # before a noun of no software, a word is as likely an adjective
    units = ["The Dewey Lake Monster is the name given to a large bipedal creature."]
    span = named_kind(read_question("What creature of folklore gained notoriety?"), units)
    assert span is None or span.text != "bipedal", span


def test_an_option_of_a_programs_help_is_the_command() -> None:
    usage = chunk(
        5,
        "Command-Line Interface\n\n"
        "Babel includes a command-line interface for working with message catalogs.\n\n"
        "Options:\n\n"
        "- --version show program's version number and exit\n"
        "- --list-locales print all known locales and exit\n"
        "- -v, --verbose print as much as possible",
        "Command-Line Interface",
        "Command-Line Interface",
    )
    _, line = _line("How do I list all known locales from the command line?", [usage])
    assert line == "--list-locales", line


def test_the_reasons_a_sentence_goes_on_to_give_come_with_it() -> None:
    rounding = chunk(
        6,
        "Rounding Modes\n\n"
        "It is also possible to use decimal.setcontext or directly modifying the instance "
        "returned by decimal.getcontext. Whatever mechanism is chosen, always make use of the "
        "decimal module imported from babel.numbers. For efficiency reasons, Babel uses the "
        "fastest decimal implementation available, such as cdecimal.",
        "Number Formatting",
        "Rounding Modes",
    )
    question = "Why should I always use the decimal module imported from babel.numbers?"
    texts, _ = _line(question, [rounding])
    assert any(t.startswith("For efficiency reasons") for t in texts), texts


def test_a_default_named_by_a_word_of_no_english_is_the_value() -> None:
    timestamps = chunk(
        7,
        "check_timestamp_unchanged()\n\n"
        "check_timestamp_unchanged is used to check if specified timestamp of a given file/dir "
        "is unchanged since last run. The timestamp field to check defaults to mtime, but can "
        "be selected by passing time parameter. To use it pass a callable which takes two "
        "parameters (prev_time, current_time).",
        "custom uptodate",
        "check_timestamp_unchanged()",
    )
    question = "What is the default timestamp field of check_timestamp_unchanged?"
    _, line = _line(question, [timestamps])
    assert line == "mtime", line


def test_a_sentence_ending_by_naming_x_says_what_x_is() -> None:
    intro = chunk(
        8,
        "Intro\n\n"
        "A function that starts with the name task_ defines a task-creator recognized by doit. "
        "A python module/file that defines tasks for doit is called dodo file (that is "
        "something like a Makefile for make).",
        "Tasks",
        "Intro",
    )
    mentions = chunk(
        9,
        "Process\n\n"
        "The dodo file is actually re-loaded/executed in a separate process every time tasks "
        "need to be re-executed.",
        "Command line interface",
        "Process",
    )
    flag = chunk(
        10,
        "Options\n\nYou can specify a different dodo file containing tasks with the flag -f.",
        "Command line interface",
        "Options",
    )
    question = "What is a dodo file?"
    hits = [SearchHit(flag, 1.1, 1), SearchHit(intro, 1.0, 2)]
    assert rerank_hits(question_focus(question), hits, 2)[0].chunk is intro
    _, line = _line(question, [intro, mentions])
    assert line == "A python module/file that defines tasks for doit", line
    # what a long sentence says before "is called" is cut to a short line's length
    long = chunk(
        17,
        "Intro\n\nA python module that holds the tasks, the settings and the hooks of a "
        "project, which doit reads each time it starts, is called dodo file.",
        "Tasks",
        "Intro",
    )
    _, line = _line(question, [long])
    assert line is None or len(line.split()) <= 12, line


LETTUCE = chunk(
    11,
    "Lettuce\n\n"
    "lettuce is similar to behave in that it\u2019s a fairly straight port of the basic "
    "functionality of Cucumber. The main differences with behave are:\n\n"
    "Single decorator for step definitions, @step.\n"
    "The context variable, world, is simply a shared holder of attributes. It never gets "
    "cleaned up during the run.\n"
    "Hooks are declared using decorators rather than as simple functions.\n"
    "No support for tags.",
    "Comparison With Other Tools",
    "Lettuce",
)


def test_the_lines_after_a_sentence_introducing_differences_are_its_items() -> None:
    units = [(u.kind, u.text) for u in passage_units(LETTUCE.text)]
    assert ("item", "Hooks are declared using decorators rather than as simple functions.") in units
    assert (
        "item",
        "The context variable, world, is simply a shared holder of attributes. It never gets "
        "cleaned up during the run.",
    ) in units, units
    # lines after another sentence ending in a colon stay sentences
    other = LETTUCE.text.replace("The main differences with behave are:", "It offers:")
    assert all(u.kind == "sentence" for u in passage_units(other)), passage_units(other)


def test_a_comparison_quotes_the_list_of_differences() -> None:
    texts, _ = _line("What is the difference between behave and Lettuce?", [LETTUCE])
    at = texts.index("The main differences with behave are:")
    assert texts[at + 1] == "Single decorator for step definitions, @step.", texts


def test_an_acronym_after_or_in_parentheses_is_defined_by_its_sentence() -> None:
    bdd = chunk(
        12,
        "Behavior Driven Development\n\n"
        "Behavior-driven development (or BDD) is an agile software development technique that "
        "encourages collaboration between developers, QA and non-technical or business "
        "participants in a software project. BDD is driven by business value.",
        "Behavior Driven Development",
        "Behavior Driven Development",
    )
    subject = defined_subject(read_question("What is BDD?"))
    assert defines_subject(bdd.text.split("\n\n")[1], subject) == 1.0
    _, line = _line("What is BDD?", [bdd])
    assert line is not None and "agile software development technique" in line, line


def test_what_to_do_in_the_case_described_a_few_sentences_on_is_the_way() -> None:
    exiting = chunk(
        13,
        "Exit a CLI program\n\n"
        "You can normally just let the code of your CLI program finish its execution, but in "
        "some scenarios, you might want to terminate at some point in the middle of it. And "
        "prevent any subsequent code to run. This doesn't have to mean that there's an error, "
        "just that nothing else needs to be executed. In that case, you can raise a "
        "typer.Exit() exception:\n\n"
        "There are several things to see in this example.",
        "Terminating",
        "Exit a CLI program",
    )
    question = "How do I terminate the program in the middle of a command?"
    texts, line = _line(question, [exiting])
    assert "In that case, you can raise a typer.Exit() exception:" in texts, texts
    assert line == "typer.Exit()", line


def test_a_yes_no_question_naming_several_things_is_not_asked_of_both() -> None:
    gherkin = chunk(
        14,
        "The Gherkin language\n\n"
        "The words Given, When and Then are often used to help drive out the scenarios, but "
        "are not mandated.",
        "Behavior Driven Development",
        "The Gherkin language",
    )
    question = "Are the words Given, When and Then mandatory?"
    segments = compose_extractive(question, [gherkin])
    line = short_answer(question, segments, [gherkin])
    assert line is not None and line.quote.endswith("but are not mandated"), line
    assert line.quote.startswith("The words Given, When and Then"), line


def test_whether_or_not_says_no_no() -> None:
    interpolation = chunk(
        15,
        "interpolation\n\n"
        "\u2018interpolation\u2019: True\n\n"
        "Whether string interpolation is switched on or not. It is on (True) by default.",
        "Reading and Writing Config Files",
        "interpolation",
    )
    question = "Is string interpolation on by default?"
    segments = compose_extractive(question, [interpolation])
    line = short_answer(question, segments, [interpolation])
    assert line is None or line.answer != "No.", line


def test_a_pronoun_opening_a_sentence_names_nothing() -> None:
    units = [
        Segment(
            "Keywords, values, and section names can be surrounded by single or double quotes.",
            0,
            0,
        ),
        Segment("Keywords and section names can only be strings .", 1, 1),
        Segment(
            "You can\u2019t have a keyword with the same name as a section (in the same section).",
            2,
            2,
        ),
    ]
    found = best_name(read_question("What can keywords and section names be?"), units)
    assert found is None or found.quote != "You", found
