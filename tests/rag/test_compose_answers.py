"""Answers composed over reference pages: the unit giving what the question asks, in the units
it asks in, before units that only share its words."""

from __future__ import annotations

from kforge.rag.candidates import find_candidates
from kforge.rag.comparison import compared_unit
from kforge.rag.compose import candidate_sentences, compose_extractive
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.unit_scores import opens_with_asked
from tests.rag.helpers import page_chunk as chunk


def test_how_long_by_default_is_the_default_in_units_of_time() -> None:
    arguments = chunk(
        0,
        "TIMEOUT: The default timeout, in seconds, to use for the cache. This argument "
        "defaults to 300 seconds (5 minutes). You can set TIMEOUT to None so that, by "
        "default, cache keys never expire. A value of 0 causes keys to immediately expire "
        '(effectively "don\'t cache").',
        "Django's cache framework",
        "Cache arguments",
    )
    api = chunk(
        1,
        "cache.set(key, value, timeout=DEFAULT_TIMEOUT, version=None). A timeout of 0 won't "
        "cache the value. Passing in None for timeout will cache the value forever.",
        "Django's cache framework",
        "Basic usage",
    )
    question = "If I don't give a timeout, how long does a value stay in the cache?"
    answer = compose_extractive(question, [arguments, api])
    assert "This argument defaults to 300 seconds (5 minutes)." in [s.text for s in answer]
    line = short_answer(question, answer, [arguments, api])
    assert line is not None and line.line == "300 seconds", line


def test_a_sentence_the_page_finishes_with_code_comes_with_its_code() -> None:
    faq = chunk(
        0,
        "To remove all files created by snakemake as output files to start from scratch, you "
        "can use\n\n$ snakemake some_target --delete-all-output\n\nOnly files that are "
        "output of snakemake rules will be removed, not those that serve as primary inputs to "
        "the workflow. It is strongly advised to first run together with --dry-run to list the "
        "files that would be removed without actually deleting anything.",
        "Frequently Asked Questions",
        "How do I remove all files created by snakemake, i.e. like make clean",
    )
    question = (
        "Is there something like `make clean` that deletes everything my workflow produced so "
        "I can start from scratch?"
    )
    texts = [s.text for s in compose_extractive(question, [faq])]
    at = next(n for n, t in enumerate(texts) if t.endswith("you can use"))
    assert texts[at + 1] == "$ snakemake some_target --delete-all-output", texts


def test_a_listing_of_files_drawn_as_a_tree_says_how_to_do_nothing() -> None:
    tutorial = chunk(
        0,
        "The example data has this layout:\n\n"
        "data\n├── genome.fa\n├── genome.fa.amb\n└── samples\n    ├── A.fastq\n    └── B.fastq\n\n"
        "Software for a rule can be deployed with the Conda package manager, which is directly "
        "integrated with Snakemake: add a directive conda: pointing to an environment file.",
        "Short tutorial",
        "Step 2",
    )
    units = candidate_sentences(tutorial)
    assert units and not any("genome.fa" in u for u in units), units


def test_a_compared_item_is_said_by_the_unit_that_sets_it_apart() -> None:
    dumpall = chunk(
        0,
        "pg_dumpall works by emitting commands to re-create roles, tablespaces, and empty "
        "databases, then invoking pg_dump for each database.",
        "26.1. SQL Dump",
        "26.1.2. Using pg_dumpall",
    )
    dump = chunk(
        1, "pg_dump — extract a PostgreSQL database into a script file or other archive file",
        "pg_dump", "pg_dump",
    )  # fmt: skip
    notes = chunk(
        2,
        "pg_dump dumps only a single database at a time, and it does not dump information "
        "about roles or tablespaces (because those are cluster-wide rather than per-database).",
        "26.1. SQL Dump",
        "26.1. SQL Dump",
    )
    passages = [dumpall, dump, notes]
    question = read_question("What's the difference between pg_dump and pg_dumpall?")
    ranked = find_candidates(question, passages, ())
    unit = compared_unit("pg_dump", question.options, ranked, ranked[:1], passages)
    assert unit is not None and unit.text.startswith("pg_dump dumps only"), unit


def test_compared_items_that_open_alike_are_each_said_by_their_own_word() -> None:
    modes = chunk(
        0,
        "LAZY, EAGER, and PINNED loading. Internally, the LOAD LAZY statement only marks the "
        "table as wanted. LAZY means that no row is read until the table is first queried. "
        "EAGER reads every row into memory at once, before the first query. PINNED keeps the "
        "rows in memory until the session ends.",
        "Loading modes",
    )
    answer = [
        s.text for s in compose_extractive("How does LOAD LAZY differ from LOAD EAGER?", [modes])
    ]
    assert any(t.startswith("LAZY means") for t in answer), answer
    assert any(t.startswith("EAGER reads") for t in answer), answer


def test_a_third_page_that_answers_nearly_as_well_is_quoted_too() -> None:
    # what is asked is said across pages: the tutorial names the directive, another page where
    # the environments are built, a third the flag that has them built and used
    tutorial = chunk(
        0,
        "Snakemake can build a separate Conda environment for each rule. Add a directive conda: "
        "that points to the environment file of the rule.",
        "Tutorial",
        "Automatic deployment of software dependencies",
    )
    storage = chunk(
        1,
        "The environment files the rules point to are built by Snakemake in the .snakemake/conda "
        "folder, so that each conda environment is built once and used by every job of its rule.",
        "Deployment",
        "Where environments are kept",
    )
    flag = chunk(
        2,
        "To have Snakemake use the conda environment of each rule, add the --use-conda flag to "
        "your workflow execution command.",
        "Deployment",
        "Integrated package management",
    )
    question = (
        "My rules point to conda environment files. How do I get Snakemake to build and use "
        "those environments?"
    )
    answer = compose_extractive(question, [tutorial, storage, flag])
    assert [s.source for s in answer] == [0, 0, 1, 2], answer
    assert "--use-conda" in answer[-1].text


def test_a_further_pages_sentence_introducing_a_list_comes_with_its_items() -> None:
    plugin = chunk(
        0,
        "If your plugin uses any markers, you should register them so that they appear in "
        "pytest's help text and do not cause spurious warnings.",
        "Writing plugins",
        "Registering custom markers",
    )
    many = chunk(
        1,
        "Multiple custom markers can be registered, by defining each one in its own line, as "
        "shown in above example.",
        "Working with custom markers",
        "Registering markers",
    )
    why = chunk(
        2,
        "For an example on how to add and work with markers from a plugin, see Custom marker "
        "and command line option.\n\nIt is recommended to explicitly register markers so "
        "that:\n\n- There is one place in your test suite defining your markers\n- Asking for "
        "existing markers via pytest --markers gives good output\n- Typos in function markers "
        "are treated as an error if you use the --strict-markers option",
        "Working with custom markers",
        "Custom marker and command line option",
    )
    texts = [
        s.text
        for s in compose_extractive("Why should I register my custom markers?", [plugin, many, why])
    ]
    at = texts.index("It is recommended to explicitly register markers so that:")
    assert texts[at + 1] == "There is one place in your test suite defining your markers", texts


def test_an_option_named_as_the_negation_of_what_is_asked_is_no_entry_for_it() -> None:
    # merge strategies' "no-renames" turns rename detection off: no entry for renaming a branch
    strategies = chunk(
        0,
        "patience: Deprecated synonym for diff-algorithm=patience.\nno-renames: Turn off rename "
        "detection. This overrides the merge.renames configuration variable.\nresolve: This can "
        "only resolve two heads using a 3-way merge algorithm.",
        "git-merge(1)",
        "MERGE STRATEGIES",
    )

    def opening(question: str) -> float:
        asked = read_question(question)
        units = find_candidates(asked, [strategies], ())
        entry = next(u for u in units if u.text.startswith("no-renames:"))
        return opens_with_asked(entry, asked, lambda term: 1.0)

    assert opening("How do I rename a branch?") == 0.0
    assert opening("How do I turn off rename detection?") > 0.0


def test_what_kinds_there_are_is_answered_by_the_whole_list_that_names_them() -> None:
    kinds = chunk(
        0,
        "## Kinds of interaction\n\n"
        "- **Approval**: the agent proposes something and waits for approve or reject.\n"
        "- **Clarification**: the agent asks a question because the request is ambiguous.\n"
        "- **Review**: the agent shows intermediate results and continues unless a person "
        "objects.\n"
        "- **Intervention**: a person interrupts a running agent to change a goal.\n\n"
        "Treating all of these as one mechanism keeps the system simple.",
        "Human-in-the-Loop Design",
        "Human-in-the-Loop Design > Kinds of interaction",
    )
    opening = chunk(
        1,
        "Autonomous agents make mistakes, and some interaction with a person is expensive.",
        "Human-in-the-Loop Design",
        "Human-in-the-Loop Design",
    )
    for question in (
        "What are kinds of interaction in human-in-the-loop design?",
        "What kinds of interaction does human-in-the-loop design have?",
    ):
        segments = compose_extractive(question, [kinds, opening], max_sentences=3)
        said = [s.text for s in segments]
        assert [s.split("**")[1] if "**" in s else s for s in said] == [
            "Approval",
            "Clarification",
            "Review",
            "Intervention",
        ], said
    # a question of another kind still has its room: three units, not the list
    segments = compose_extractive(
        "How does an agent ask for approval?", [kinds, opening], max_sentences=3
    )
    assert len(segments) <= 3


_SETTINGS_FILES = chunk(
    0,
    "Settings Files\n\n"
    "Settings files for widget are called either “.widgetrc”, “widget.ini” or “setup.cfg” "
    "(your preference) and are located in one of three places:\n\n"
    "the current working directory (good for per-project settings),\n"
    "your home directory ($HOME), or\n"
    "on Windows, in the %APPDATA% directory.\n\n"
    "If you are wondering where widget is getting its settings from you can use the “-v” "
    "option and it will tell you.\n\n"
    "Settings files must start with the label “[widget]” and are formatted in the INI style, "
    "for example:\n\n"
    "[widget]\nformat=plain\nlog_filter=-suds",
    "Using widget",
    "Settings Files",
)
_SETTINGS_PARAMETERS = chunk(
    1,
    "log_capture : bool: Capture logging. This is the default behaviour. This switch is used "
    "to override a settings file setting.\n"
    "show_skipped : bool: Print skipped steps. This is the default behaviour. This switch is "
    "used to override a settings file setting.",
    "Using widget",
    "Settings Parameters",
)


def test_what_a_thing_is_called_is_said_by_the_sentence_naming_it_before_its_list() -> None:
    # an HTML list read one item a line without bullets runs on into one sentence after the
    # sentence introducing it, which says what the files are called: it is no bare colon
    passages = [_SETTINGS_FILES, _SETTINGS_PARAMETERS]
    texts = [
        s.text for s in compose_extractive("What are widget's settings files called?", passages)
    ]
    assert texts[0].startswith("Settings files for widget are called either “.widgetrc”"), texts
    texts = [
        s.text
        for s in compose_extractive("Where does widget look for its settings files?", passages)
    ]
    at = texts.index(next(t for t in texts if t.startswith("Settings files for widget are called")))
    assert texts[at + 1].startswith("the current working directory (good for"), texts


def test_a_sentence_saying_its_piece_before_an_example_stands_alone() -> None:
    question = "What must a widget settings file start with?"
    texts = [s.text for s in compose_extractive(question, [_SETTINGS_FILES, _SETTINGS_PARAMETERS])]
    assert any("must start with the label “[widget]”" in t for t in texts), texts


def test_an_option_among_the_others_of_its_entry_opens_it() -> None:
    options = chunk(
        0,
        "Options:\n  -a, --append          Append coverage data to .coverage, otherwise it\n"
        "                        starts clean each time.\n"
        "  --branch              Measure branch coverage too.",
        "Command line usage",
        "coverage run",
    )
    asked = read_question("What does the --append option do?")
    entry = next(u for u in find_candidates(asked, [options], ()) if "--append" in u.text)
    assert opens_with_asked(entry, asked, lambda term: 1.0) == 1.0
    branch = read_question("What does the --branch option do?")
    assert opens_with_asked(entry, branch, lambda term: 1.0) == 0.0


def test_a_sentence_naming_this_case_comes_after_the_sentence_it_names() -> None:
    page = chunk(
        0,
        "You can also run the server from Python. However, this style only works if you are "
        "not using multiprocessing (workers=NUM) or reloading (reload=True). Also note that in "
        "this case, you should put widget.run into the main module's guard clause.",
        "Deployment",
        "Running programmatically",
    )
    texts = [
        s.text
        for s in compose_extractive(
            "In what case should widget.run be put inside the main module's guard clause?", [page]
        )
    ]
    at = texts.index(next(t for t in texts if t.startswith("Also note that in this case")))
    assert at > 0 and texts[at - 1].startswith("However, this style only works"), texts


def test_a_sentence_naming_where_the_answer_is_does_not_lead_the_answer() -> None:
    page = chunk(
        0,
        "You can exclude lines from widget's reports. More details are in Excluding lines "
        "from widget reports. A line ending in a skip marker is excluded from the report.",
        "Configuration",
        "exclude_lines",
    )
    texts = [
        s.text for s in compose_extractive("How do I exclude a line from widget reports?", [page])
    ]
    assert not texts[0].startswith("More details"), texts
