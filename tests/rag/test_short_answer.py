"""Question types and the short answer line, through ``write_answer`` (the public path)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kforge.llm.types import ModelResponse
from kforge.rag.compose import Segment
from kforge.rag.grounded import write_answer
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.short_quote import clause_at, verb_object
from kforge.rag.types import Chunk


def chunk(i: int, text: str, title: str = "", heading: str = "") -> Chunk:
    return Chunk(
        id=f"c{i}",
        source=f"d{i}",
        file=f"d{i}.md",
        title=title or f"Doc {i}",
        heading=heading,
        page=None,
        start=0,
        end=len(text),
        text=text,
    )


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is a closure in libffi?", "definition"),
        ("What does os.EOL contain?", "definition"),
        ("What do the k1 and b parameters do in BM25?", "definition"),  # plural: as "does"
        ("What do I do if the build fails?", "thing"),  # the asker's own doing: no definition
        ("How do I create a hard link?", "procedure"),
        ("How do I get the number of CPUs?", "procedure"),  # a way, not a number
        ("How many bytes does a pointer take?", "quantity"),
        ("What is the default highWaterMark?", "quantity"),
        ("Is libffi thread safe?", "yesno"),
        ("What is the difference between fs.link and fs.symlink?", "comparison"),
        ("Which is older, git or gettext?", "choice"),
        ("Why does fs.watch report rename events?", "reason"),
        ("Who wrote the closure API?", "who"),
        ("When was fs.link added?", "when"),
        ("Where is the configuration file stored?", "where"),
        ("In which folders does it look for profiles?", "where"),  # the plural too
        ("What does click.get_app_dir() give me?", "definition"),  # what it gives: what it does
        ("How is the total percentage calculated?", "thing"),  # how it is done, not a number
        ("How long is the default timeout?", "quantity"),
    ],
)
def test_questions_are_typed_by_rule(question: str, kind: str) -> None:
    assert read_question(question).kind == kind


def test_identifiers_are_whole_and_short_stems_are_never_terms() -> None:
    asked = read_question("What does os.EOL contain with --force?")
    assert asked.identifiers == ("os.EOL", "--force")
    assert "o" not in asked.terms and "os" in asked.terms


async def answer(question: str, *texts: str) -> tuple[str, str]:
    written = await write_answer(question, [chunk(i, t) for i, t in enumerate(texts)], None)
    return written.short_answer, written.text


async def test_what_a_call_gives_is_what_its_entry_says_it_does() -> None:
    short, _ = await answer(
        "What does get_app_dir() give me?",
        "get_app_dir(app_name, roaming=True, force_posix=False): Returns the config folder for"
        " the application.",
    )
    assert short == "Returns the config folder for the application"  # not "True"


async def test_quantity_is_a_number_with_its_unit() -> None:
    short, text = await answer(
        "How many bytes does the header take?",
        "The header of every message takes 16 bytes, and the body follows it in version 2.",
    )
    assert short == "16 bytes"
    assert text.startswith("16 bytes [1]\n\nThe header of every message takes 16 bytes")


async def test_procedure_is_the_call_or_code() -> None:
    short, _ = await answer(
        "How do I create a hard link?",
        "### `fs.link(existingPath, newPath, callback)`\n\nCreates a new link from the "
        "`existingPath` to the `newPath`.",
    )
    assert short == "`fs.link(existingPath, newPath, callback)`"
    short, _ = await answer(
        "How do I install the package?",
        "To install the package, run the following command.\n\n```sh\n$ npm install kforge\n```\n",
    )
    assert short == "$ npm install kforge"


async def test_yes_no_says_yes_or_no_then_quotes_the_deciding_phrase() -> None:
    short, text = await answer(
        "Is the closure API thread safe?",
        "The closure API is not thread safe on every platform, so guard it with a lock.",
    )
    assert short == "No."
    assert text.startswith("No. The closure API is not thread safe on every platform [1]\n\n")


async def test_definition_is_the_defining_clause_with_its_subject() -> None:
    short, _ = await answer(
        "What is a closure in libffi?",
        "A closure is a function pointer that calls a generic handler, made at run time. "
        "This facility is called the closure API.",
    )
    # a line that reads as a definition, not a fragment without its subject
    assert short == "A closure is a function pointer that calls a generic handler"


async def test_when_is_a_date_and_choice_is_one_of_the_two() -> None:
    short, _ = await answer(
        "When was the release made?", "The first release was made on 12 March 1998 in Berlin."
    )
    assert short == "12 March 1998"
    short, _ = await answer(
        "Which was founded first, Acme Works or Zenith Mills?",
        "Acme Works was founded in 1921 in Ohio.",
        "Zenith Mills was founded in 1887 in Maine.",
    )
    assert short == "Zenith Mills"


@pytest.mark.parametrize(
    ("question", "text"),
    [
        (
            "Why is the file opened twice?",
            "The file is opened twice because the first handle is closed by the watcher.",
        ),
        (  # "because in many languages" would be the clause of "because"
            "Why should translatable strings be entire sentences?",
            "Translatable strings should be entire sentences, because in many languages the "
            "words of a sentence agree with each other.",
        ),
        (  # how something happens: not a name the sentence holds ("ReAct")
            "How does ReAct work?",
            "ReAct interleaves reasoning traces and tool actions in one loop, as Shunyu Yao "
            "described it.",
        ),
        (  # "rather than deleting the journal file" would be the contrast
            "What is the difference between the DELETE and TRUNCATE journal modes?",
            "The TRUNCATE journaling mode commits transactions by truncating the rollback "
            "journal to zero-length rather than deleting the journal file.",
        ),
    ],
)
async def test_a_reason_a_way_it_works_or_a_difference_is_a_whole_sentence_with_no_line(
    question: str, text: str
) -> None:
    short, written = await answer(question, text)
    assert short == ""
    assert written.startswith(text.split(". ")[0].rstrip("."))


async def test_an_undecided_yes_no_gets_a_line_only_when_it_says_most_of_what_is_asked() -> None:
    # the clause the sentence opens with says nothing of parsing pages with BeautifulSoup
    short, written = await answer(
        "Can I parse the pages with BeautifulSoup inside my spider?",
        "In callback functions, you parse the page contents, typically using Selectors (but "
        "you can also use BeautifulSoup, lxml or whatever mechanism you prefer).",
    )
    assert short == ""
    assert written.startswith("In callback functions, you parse the page contents")


async def test_a_quantity_keeps_its_code_span_and_unit_whole() -> None:
    short, _ = await answer(
        "What is the maximum number of listeners for one event?",
        "By default, a maximum of `10` listeners can be registered for any single event.",
    )
    assert short == "`10` listeners"
    # "how often" asks for a time: a number in words with no unit is a manner of speaking
    line = short_answer(
        "How often does the proxy check a server by default?",
        [Segment("The inter parameter sets the time between two consecutive checks.", 0)],
    )
    assert line is None, line
    short, _ = await answer(
        "How often does the proxy check a server by default?",
        "It checks a server every two seconds between two consecutive checks.",
    )
    assert short == "two seconds"


async def test_a_code_block_gives_the_line_that_does_what_is_asked() -> None:
    short, text = await answer(
        "How do I create a directory recursively?",
        "Creating a nested directory needs the recursive option.\n\n```js\nimport { mkdir } "
        "from 'node:fs/promises';\n\ntry {\n  await mkdir(folder, { recursive: true });\n} "
        "catch (err) {\n  console.error(err.message);\n}\n```\n",
    )
    assert short == "await mkdir(folder, { recursive: true });"
    assert "```js\nimport { mkdir } from 'node:fs/promises';" in text  # the block, whole


async def test_a_bridge_question_is_answered_from_the_passage_it_leads_to() -> None:
    member = chunk(
        0,
        "Ana Ruiz (born 4 May 1950) was a Chilean diplomat who served two terms as president "
        "of the Harbour League.",
        "Ana Ruiz",
    )
    league = chunk(
        1,
        "The Harbour League is an association of port cities founded on 12 June 1921 in Bergen.",
        "Harbour League",
    )
    written = await write_answer(
        "The organization that Ana Ruiz served as president was founded on what date?",
        [member, league],
        None,
    )
    assert written.short_answer == "12 June 1921"
    born = await write_answer("When was Ana Ruiz born?", [member, league], None)
    assert born.short_answer == "4 May 1950"


async def test_a_model_short_line_is_kept_only_when_a_passage_supports_it() -> None:
    class Reply:
        def __init__(self, text: str) -> None:
            self.text = text

        async def __call__(self, messages: object, settings: object) -> ModelResponse:
            return ModelResponse(text=self.text)

    passage = chunk(0, "The header of every message takes 16 bytes, and the body follows it.")
    body = "The header of every message takes 16 bytes [1]."
    kept = await write_answer(
        "How big is the header?", [passage], Reply(f"16 bytes [1]\n\n{body}"), style="generative"
    )
    assert kept.short_answer == "16 bytes" and kept.text.startswith("16 bytes [1]\n\n")
    invented = await write_answer(
        "How big is the header?",
        [passage],
        Reply(f"32 kilobytes [1]\n\n{body}"),
        style="generative",
    )
    assert invented.short_answer == "16 bytes"  # drawn from the checked sentence instead


async def test_a_default_is_read_from_the_parameter_asked_about() -> None:
    short, _ = await answer(
        "What is the default highWaterMark of the stream?",
        "* `concurrency` {number} the maximum concurrent invocations. **Default:** `1`.\n"
        "* `highWaterMark` {number} how many items to buffer while waiting for the consumer "
        "of the stream. **Default:** `16`.\n",
    )
    assert short == "`16`"


@pytest.mark.parametrize(
    ("question", "text", "line"),
    [
        (  # the command line that does it, not the one saying where it runs
            "How do I deploy the site to GitHub Pages?",
            "Change to the repository and deploy the site from there:\n\n"
            "cd ../orgname.github.io/\nmkdocs gh-deploy --remote-branch master\n\n"
            "The site is pushed to GitHub Pages.",
            "mkdocs gh-deploy --remote-branch master",
        ),
        (  # the call of the unit saying most of what is asked
            "How do I copy a file together with its metadata?",
            "-c, --copy: Copy a branch, together with its config and reflog.\n\n"
            "shutil.copy2(src, dst): Identical to copy() except that it also preserves the "
            "file metadata.",
            "shutil.copy2(src, dst)",
        ),
        (  # a number ends before the comma after it
            "How many times does timeit run the statement by default?",
            "timeit.timeit(stmt='pass', number=1000000, globals=None): Run the statement "
            "number times.",
            "1000000",
        ),
        (  # where a program keeps something: a path
            "Where is the latest stash stored?",
            "The latest stash you created is stored in refs/stash; older stashes are in its "
            "reflog.",
            "refs/stash",
        ),
    ],
)
async def test_the_line_is_what_answers_each_kind(question: str, text: str, line: str) -> None:
    short, _ = await answer(question, text)
    assert short == line


async def test_yes_no_quotes_the_phrase_holding_the_no() -> None:
    short, text = await answer(
        "Does shutil.copy preserve the file modification time?",
        "Other metadata, like the file's creation and modification times, is not preserved.",
    )
    assert short == "No."
    assert text.startswith(
        "No. Other metadata, like the file's creation and modification times, is not preserved"
    )


async def test_yes_no_quotes_what_an_entry_says_not_its_parameter_names() -> None:
    short, text = await answer(
        "Is the output of json.dumps ASCII by default?",
        "json.dumps(obj, *, ensure_ascii=True, cls=None, default=None): Serialize obj to a "
        "JSON formatted str.\n\n"
        "If ensure_ascii is true (the default), the output has all non-ASCII characters "
        "escaped.",
    )
    # the sentence that decides it holds no "not", and kforge adds no "Yes." of its own: the
    # deciding phrase is quoted (a verdict by rule was "Yes." for "LANGUAGE is ignored if ...")
    assert short.startswith("If ensure_ascii is true")
    assert not text.startswith(("Yes.", "No."))


async def test_a_comparison_has_a_line_only_when_a_sentence_contrasts_the_two() -> None:
    short, text = await answer(
        "What is the difference between docs_dir and site_dir?",
        "docs_dir: The directory containing the documentation source files.\n\n"
        "site_dir: The directory where the output HTML files are created.\n\n"
        "Previously, a warning was issued if the site_dir was a child of the docs_dir.",
    )
    assert short == ""  # not "Previously", nor the opening of one item's entry
    assert "The directory containing the documentation source files" in text
    assert "The directory where the output HTML files are created" in text


async def test_a_contrast_too_short_to_say_how_two_differ_is_no_line() -> None:
    short, text = await answer(
        "What is the difference between translator comments and extracted comments?",
        "The ref.pot file is the last created PO file with up-to-date source references but "
        "old translations, or a template; any translations or translator comments in it are "
        "discarded, however extracted comments and file positions are preserved.",
    )
    assert short == ""  # not "but old translations"
    assert "The ref.pot file is the last created PO file" in text


async def test_a_default_is_read_from_the_signature_of_the_entry_asked_about() -> None:
    short, text = await answer(
        "What is the default maxsize of lru_cache?",
        "functools.cache(user_function): Returns the same as lru_cache(maxsize=None).\n\n"
        "@functools.lru_cache(maxsize=128, typed=False): Decorator to wrap a function with a "
        "memoizing callable that saves up to the maxsize most recent calls.",
    )
    assert short == "128"
    assert "@functools.lru_cache(maxsize=128, typed=False): Decorator" in text


async def test_a_line_keeps_its_marks_paired_and_says_more_than_the_question() -> None:
    short, text = await answer(
        "What is reciprocal rank fusion?",
        "**Reciprocal rank fusion (RRF)**, introduced in 2009, ignores scores and uses only ranks.",
    )
    assert short.count("**") % 2 == 0 and short.count("`") % 2 == 0
    # the subject alone answers nothing: no line rather than "Reciprocal rank fusion"
    assert short.lower() != "reciprocal rank fusion"
    assert "ignores scores and uses only ranks" in text


async def test_a_not_about_something_else_decides_no_yes_no_question() -> None:
    short, text = await answer(
        "Is crypto.randomBytes synchronous?",
        "The `crypto.randomBytes()` method will not complete until there is sufficient "
        "entropy available.\n\n"
        "If the `callback` function is not provided, the random bytes are generated "
        "synchronously.",
    )
    assert not short.startswith("No.") and not text.startswith("No.")


async def test_a_number_inside_an_address_is_no_quantity() -> None:
    short, _ = await answer(
        "What is the default port of the inspector?",
        "Binding the inspector to `0.0.0.0` with an open port is insecure if the port (`9229` "
        "by default) is not firewall-protected.",
    )
    assert short == "`9229`"


@pytest.mark.parametrize(
    ("question", "texts", "expected"),
    [
        # "In 3.8+" names a release: no line of "3.8" for how long
        (
            "How long do I have before a deprecated feature may disappear?",
            (
                "Deprecated since version 3.8: In 3.8+ the test case inherits from "
                "IsolatedAsyncioTestCase, making this feature unneeded.",
            ),
            "",
        ),
        # nor "10.12 or newer" of "10.12" for how many
        (
            "How many backup runs can a file go unseen before it is dropped from the cache?",
            ("MacOS: 10.12 or newer. A file unseen in 20 backup runs is dropped from the cache.",),
            "20",
        ),
        # "0.5 * DOWNLOAD_DELAY" is a factor of a setting, not how long
        (
            "How long does the downloader wait for a response before it gives up?",
            (
                "DOWNLOAD_TIMEOUT\n\nDefault: 180\n\nThe amount of time (in secs) that the "
                "downloader will wait before timing out.",
                "If enabled, the downloader will wait a random amount of time (between 0.5 * "
                "DOWNLOAD_DELAY and 1.5 * DOWNLOAD_DELAY) while fetching requests from the same "
                "website.",
            ),
            "180",
        ),
    ],
)
async def test_a_release_or_a_factor_is_no_quantity(
    question: str, texts: tuple[str, ...], expected: str
) -> None:
    short, _ = await answer(question, *texts)
    assert short == expected, short


async def test_a_default_that_names_no_value_is_no_quantity() -> None:
    short, _ = await answer(
        "What port does the inspector listen on by default?",
        "`port` {number} Port to listen on for inspector connections. Optional. "
        "**Default:** what was specified on the CLI.",
    )
    assert short == ""  # not "what"


async def test_yes_no_quotes_what_is_said_of_what_is_asked_not_of_the_thing_alone() -> None:
    short, _ = await answer(
        "Does fs.watch support the recursive option on Linux?",
        "On Linux and macOS systems, `fs.watch()` resolves the path to an inode.\n\n"
        "The recursive option is only supported on macOS and Windows.",
    )
    assert short == "The recursive option is only supported on macOS and Windows"


async def test_what_does_x_do_has_the_line_saying_what_it_does() -> None:
    text = (
        "## `util.promisify(original)`\n\n"
        "Takes a function following the error-first callback style and returns a version "
        "that returns promises.\n\n"
        "If `promisify.custom` is defined but is not a function, `promisify()` will throw."
    )
    entry = chunk(0, text, "Util", heading="Util > util.promisify(original)")
    written = await write_answer("What does util.promisify do?", [entry], None)
    assert written.short_answer.startswith("Takes a function following the error-first")


async def test_a_hexadecimal_value_is_a_quantity_and_a_version_is_not() -> None:
    short, _ = await answer(
        "What is the magic number of a GNU MO file?",
        "The magic number really is two numbers: 0x950412de and 0xde120495.",
    )
    assert short == "0x950412de"
    short, _ = await answer(
        "What is the default size of the cache?",
        "This manual documents the cache library, version 0.21, and its default size.",
    )
    assert short != "0.21"


async def test_a_line_cut_short_or_a_lone_word_is_no_answer() -> None:
    short, _ = await answer(
        "How does catgets differ from gettext in the work it asks of the programmer?",
        "catgets allows same original entry to have different translations, but gettext has "
        "another, scalable approach for solving ambiguities of this kind.",
    )
    assert short == ""  # not "but gettext has another"


async def test_a_reference_or_an_escape_is_no_quantity() -> None:
    short, _ = await answer(
        "Above what size does the server warn that a cookie is too large?",
        "Pass --cert to run the server over HTTPS. #2606 Added a warning for large cookies.",
    )
    assert short != "2606 Added" and "2606" not in short
    short, _ = await answer(
        "How big is the header at the start of a database file?",
        "The 4-byte integer at offset 28 into the header stores the size of the file.",
    )
    assert short != "28 into"


async def test_how_big_asks_a_size_in_its_units() -> None:
    short, _ = await answer(
        "How big is the header at the start of an SQLite database file?",
        "The 4-byte big-endian integer at offset 28 into the header stores the size.\n\n"
        "The first 100 bytes of the database file comprise the database file header.",
    )
    assert short == "100 bytes"


async def test_yes_no_quotes_no_condition_alone() -> None:
    short, _ = await answer(
        "Do I need AUTOINCREMENT to get ids assigned automatically to an INTEGER PRIMARY KEY?",
        "If the AUTOINCREMENT keyword appears after INTEGER PRIMARY KEY, that changes the "
        "automatic ROWID assignment algorithm to prevent the reuse of ROWIDs over the lifetime "
        "of the database.",
    )
    assert not short.startswith("If the AUTOINCREMENT keyword appears")


def test_procedure_line_is_never_an_import() -> None:
    question = "How do I write everything my spider scrapes to a JSON file?"
    segments = [
        Segment("import json", 0, 0, True),
        Segment("scrapy crawl s -O items.jl", 1, 1, True),
    ]
    line = short_answer(question, segments)
    assert line is not None and line.answer == "scrapy crawl s -O items.jl"


def test_procedure_line_is_the_option_named_for_what_is_asked() -> None:
    # both entries hold as many of the question's words; one of them only mentions the other
    question = "How do I extract files from a tar archive?"
    segments = [
        Segment(
            "-n, --seek: Assume the archive is seekable; it matters only if the archive is open "
            "for reading (with --list or --extract) by tar.",
            0,
            0,
        ),
        Segment("-x, --extract, --get: Extract files from an archive.", 1, 1),
    ]
    line = short_answer(question, segments)
    assert line is not None and line.answer == "-x, --extract, --get"


_QUOTED_OPTIONS = [
    (
        "How do I limit the download speed?",
        "\u2018--limit-rate=AMOUNT\u2019: Limit the download speed to AMOUNT bytes per second.",
        "\u2018--limit-rate=AMOUNT\u2019",
    ),
    (
        "How do I print 3 lines after each match?",
        "\u2018-A NUM\u2019, \u2018--after-context=NUM\u2019: Print NUM lines of trailing context "
        "after matching lines.",
        "\u2018-A NUM\u2019, \u2018--after-context=NUM\u2019",
    ),
    (
        "How do I edit a file in place?",
        "\u2018-i[SUFFIX]\u2019, \u2018--in-place[=SUFFIX]\u2019: This option specifies that files "
        "are to be edited in-place.",
        "\u2018-i[SUFFIX]\u2019, \u2018--in-place[=SUFFIX]\u2019",
    ),
]


@pytest.mark.parametrize(("question", "entry", "options"), _QUOTED_OPTIONS)
def test_procedure_line_is_a_gnu_manuals_quoted_option_with_its_argument(
    question: str, entry: str, options: str
) -> None:
    """A GNU manual writes an entry's options in curly quotes, with their argument; they are
    the line, before a sentence or an example that does something else."""
    segments = [
        Segment("Wget will try to keep the connection alive.", 0, 0),
        Segment("sed 's/hello/world/g' input.txt > output.txt", 0, 1, True),
        Segment(entry, 1, 2),
    ]
    line = short_answer(question, segments)
    assert line is not None and line.answer == options


def test_an_option_whose_entry_shares_one_word_with_the_question_is_no_way_to_do_it() -> None:
    question = "How do I convert a file back into text?"
    segments = [Segment("--no-hash: Don't include a hash table in the binary file.", 0, 0)]
    line = short_answer(question, segments)
    assert line is None or line.answer != "--no-hash"


def test_a_linking_word_before_a_comma_is_not_the_clause() -> None:
    assert clause_at("So, if you need that, consider RAID.") == "So, if you need that"
    assert clause_at("Gzip, Deflate and Brotli are provided.") == "Gzip"


async def test_a_line_of_one_word_of_the_question_tells_nothing() -> None:
    short, _ = await answer(
        "What should a good citation include?",
        "Citations are markers in the text that point to specific passages.",
    )
    assert short != "Citations"


def test_a_number_keeps_or_more_before_its_unit() -> None:
    question = "How much faster can the daemon be than plain mypy?"
    text = "Running the daemon can be 10 or more times faster than the regular tool."
    line = short_answer(question, [Segment(text, 0, 0, False)])
    assert line is not None and line.answer == "10 or more times"


def test_the_oldest_python_asks_for_a_release() -> None:
    question = "What's the oldest Python that mypy itself runs on?"
    line = short_answer(question, [Segment("Mypy requires Python 3.7 or later to run.", 0, 0)])
    assert line is not None and line.answer == "Python 3.7 or later"


def test_a_word_contracted_with_the_next_is_no_unit_of_a_number() -> None:
    line = short_answer(
        "How long does a value stay in the cache?",
        [Segment("A timeout of 0 won\u2019t cache the value.", 0, 0, False)],
    )
    assert line is None or line.answer == "0", line


def test_a_where_line_is_a_name_the_sentence_places_something_at() -> None:
    placed = short_answer(
        "Where does the team meet?", [Segment("The team meets at Loughborough University.", 0)]
    )
    assert placed is not None and placed.quote == "Loughborough University"
    # a name the sentence only mentions does not say where: no line rather than "CI"
    mentioned = short_answer(
        "Where does mypy write its cache between runs?",
        [Segment("The CI build would run a regular mypy build and archive the cache.", 0)],
    )
    assert mentioned is None or mentioned.quote != "CI"
    # "which city" names the kind of place; its answer may follow any word
    city = short_answer(
        "To what city did the railway link Edinburgh?",
        [Segment("The line is a major railway link between Edinburgh and London.", 0)],
    )
    assert city is not None and city.quote == "London"


async def test_a_parameter_default_that_is_no_number_answers_no_how_long() -> None:
    question = (
        "My client talks to a host whose IP address changes now and then. For how long does "
        "aiohttp reuse a DNS answer by default?"
    )
    short, text = await answer(
        question,
        "aiohttp.web.run_app(app, *, host=None, port=None, path=None, shutdown_timeout=60.0, "
        "keepalive_timeout=75.0, reuse_address=None, reuse_port=None): A high-level function "
        "for running an application, serving it until keyboard interrupt.",
        "By default TCPConnector comes with the DNS cache table enabled, and resolutions will "
        "be cached by default for 10 seconds.",
    )
    assert short == "10 seconds"  # not "None" of reuse_address=None
    assert "cached by default for 10 seconds" in text


async def test_a_word_after_a_number_is_its_unit_only_when_it_measures_or_is_counted() -> None:
    short, _ = await answer(
        "How many old temporary base directories does pytest keep?",
        "By default pytest keeps the 3 most recent temporary base directories.",
    )
    assert short == "3"  # not "3 most"
    short, _ = await answer(
        "By default, how many listeners can be registered for a single event?",
        "By default, a maximum of `10` listeners can be registered for any single event.",
    )
    assert short == "`10` listeners"


def test_a_defining_line_is_said_of_what_is_asked_not_of_a_later_clause() -> None:
    """ "The parameter k1 controls ...; typical values are between 0.9 and 2.0" defines
    nothing asked in its "are" clause: no line of "between 0.9 and 2.0"."""
    question = "What does the k1 parameter do in BM25?"
    text = (
        "The parameter k1 controls how quickly the contribution saturates; typical values are "
        "between 0.9 and 2.0."
    )
    found = short_answer(question, [Segment(text, 0)], [chunk(0, text, "BM25")])
    assert found is None or "between 0.9" not in found.line, found
    defined = "A WITHOUT ROWID table is an optimization that can reduce storage."
    line = short_answer("What is a WITHOUT ROWID table?", [Segment(defined, 0)])
    assert line is not None and "an optimization" in line.line, line


def test_the_default_is_the_entry_that_says_it_is_the_default_whatever_its_kind() -> None:
    line = short_answer(
        "What is the default merge strategy when pulling one branch?",
        [
            Segment(
                "With the strategies that use 3-way merge (including the default, ort), a change "
                "made on both branches but reverted on one is present in the result.",
                0,
                0,
            ),
            Segment(
                "ort: This is the default merge strategy when pulling or merging one branch.", 1, 1
            ),
        ],
    )
    assert line is not None and line.answer == "ort"


def test_a_number_joined_to_a_word_is_an_amount_only_of_what_is_asked() -> None:
    kind_of_merge = short_answer(
        "What is the default merge strategy?",
        [Segment("Strategies that use a 3-way merge keep the changes of both sides.", 0, 0)],
    )
    assert kind_of_merge is None or "3" not in kind_of_merge.answer
    bits = short_answer(
        "How many bits does the checksum have?",
        [Segment("Each chunk carries a 64-bit checksum of its contents.", 0, 0)],
    )
    assert bits is not None and bits.answer == "64"


def test_what_x_removes_is_the_object_of_that_verb_in_the_sentence() -> None:
    line = short_answer(
        "What does git fetch --prune remove?",
        [
            Segment(
                "-p, --prune: Before fetching, remove any remote-tracking references that no "
                "longer exist on the remote.",
                0,
                0,
            )
        ],
    )
    assert line is not None
    assert line.answer == "remove any remote-tracking references that no longer exist on the remote"


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("Which module should I use to read a TOML file?", "It is a recommended replacement."),
        ("Who is the framework named after?", "If you like it, the framework is yours."),
    ],
)
def test_a_line_of_a_word_that_points_elsewhere_is_no_answer(question: str, text: str) -> None:
    line = short_answer(question, [Segment(text, 0, 0)])
    assert line is None or line.answer.split()[0] not in ("It", "If"), line


def test_what_happens_is_answered_by_a_sentence_not_a_word_of_it() -> None:
    line = short_answer(
        "What happens when I append to a full deque that has a maxlen?",
        [
            Segment("class collections.deque([iterable[, maxlen]]): Returns a new deque.", 0, 0),
            Segment(
                "Once a bounded length deque is full, items are discarded from the other end.", 1, 0
            ),
        ],
    )
    assert line is None


def test_a_question_with_a_condition_asks_for_no_verbs_object() -> None:
    texts = ["Lengths of the iterables may differ, sometimes by design."]
    assert verb_object("What does zip do when the iterables have different lengths?", texts) is None
    found = verb_object("What does git fetch --prune remove?", ["It will remove stale refs."])
    assert found == ("remove stale refs", 0)
    elapsed = ["Wall-clock time: elapsed time, including waits for tools."]
    assert verb_object("What should a good citation include?", elapsed) is None


def test_a_verb_before_a_place_asks_for_no_verbs_object() -> None:
    texts = ["All calls to find_package() (even in Module mode) first look for a config file."]
    assert verb_object("What does find_package look for in Module mode?", texts) is None


def test_a_command_named_by_the_words_asked_answers_how_not_a_call_cut_open() -> None:
    question = "How do I add an include directory to a target?"
    synopsis = (
        "target_include_directories(<target> [SYSTEM] [AFTER|BEFORE]\n"
        "  <INTERFACE|PUBLIC|PRIVATE> [items1...])"
    )
    line = short_answer(
        question,
        [Segment("Add include directories to a target.", 0, 0), Segment(synopsis, 0, 1, True)],
    )
    assert line is not None and line.answer == "target_include_directories"
    # a synopsis spelling what is asked comes before a call a sentence mentions in passing
    line = short_answer(
        "How do I add tests that ctest runs?",
        [
            Segment("Run tests and store results for the ctest_submit() command.", 0, 0),
            Segment(
                "add_test(NAME <name> COMMAND <command>\n  [CONFIGURATIONS <config>...])",
                1,
                1,
                True,
            ),
        ],
    )
    assert line is not None and line.answer == "add_test"


def test_a_default_written_as_a_path_is_the_value_and_a_manual_section_no_number() -> None:
    line = short_answer(
        "What is the default value of CMAKE_INSTALL_PREFIX on UNIX?",
        [
            Segment("When using the cmake(1) tool's --install mode, give --prefix.", 0, 0),
            Segment("This variable defaults to /usr/local on UNIX.", 1, 1),
        ],
    )
    assert line is not None and line.answer == "/usr/local"


def test_a_default_question_takes_the_value_marked_as_the_default() -> None:
    question = "What block size does the packer use by default?"
    segments = [
        Segment(
            "The flags '-1' through '-9' specify the block size to be 100,000 bytes through "
            "900,000 bytes (the default) respectively.",
            0,
            0,
        )
    ]
    line = short_answer(question, segments)
    assert line is not None and line.answer == "900,000 bytes"


async def test_a_pages_reply_under_a_heading_asking_the_question_is_the_line() -> None:
    passages = [
        chunk(
            0,
            "Does widget have an API?\n\nNot yet. Widget is a command line tool. A Python "
            "interface is being planned.",
            heading="FAQ > Does widget have an API?",
        ),
    ]
    written = await write_answer("Does widget have an API?", passages, None)
    assert written.short_answer == "Not yet."
    assert written.text.startswith("Not yet. Widget is a command line tool [1]")
    passages = [
        chunk(
            0,
            "Is widget safe to use?\n\nYes. Widget only changes formatting.",
            heading="Is widget safe to use?",
        )
    ]
    written = await write_answer("Is widget safe to use?", passages, None)
    assert written.text.startswith("Yes. Widget only changes formatting [1]")
    # a heading asking something else: the page's reply may answer the question turned round
    passages = [replace(passages[0], heading="Safety")]
    written = await write_answer("Is widget safe to use?", passages, None)
    assert written.text.startswith("Widget only changes formatting [1]")


async def test_what_code_is_answered_by_the_clause_giving_its_number() -> None:
    listed = (
        "Passing --check will make widget exit with:\n\ncode 0 if nothing would change;\n"
        "code 1 if some files would be reformatted; or\ncode 123 if there was an internal error"
    )
    tool = (
        "Widget is a well-behaved command-line tool: it exits with code 0 unless an internal "
        "error occurred or an option prompted it."
    )
    short, _ = await answer(
        "What exit code does widget --check return when some files would be reformatted?",
        listed,
        tool,
    )
    assert short == "code 1 if some files would be reformatted"
    asked = "What exit code means widget had an internal error?"
    short, _ = await answer(asked, listed, tool)
    assert short == "code 123 if there was an internal error"  # not the code 0 "unless" it
    short, _ = await answer(asked, tool)
    assert short == ""
    short, _ = await answer(
        "What status code does the server return when the input is already well-formatted?",
        "HTTP 204: If the input is already well-formatted. The response body is empty.",
    )
    assert short == "HTTP 204"
    short, _ = await answer(
        "What exit code does the image return?",
        "Besides the regular exit codes, Docker exit codes should also be considered.",
    )
    assert short == ""  # a name it mentions is no code


async def test_a_default_name_is_the_value_the_page_gives_never_a_number() -> None:
    short, _ = await answer(
        "What is the default name of the configuration file?",
        "The default name for configuration files is .coveragerc, in the same directory. "
        "Files with 100% coverage are skipped after two runs.",
    )
    assert short == ".coveragerc"
    short, _ = await answer(
        "What is the default data file name?",
        "It looks for files named the same as the data file (defaulting to \u201c.coverage\u201d), "
        "with a dotted suffix, in 2 places.",
    )
    assert short == "\u201c.coverage\u201d"
    short, _ = await answer(
        "What is the default data file?",
        "[run] data_file (string, default \u201c.coverage\u201d) The name of the data file.",
    )
    assert short == "\u201c.coverage\u201d"


async def test_a_name_in_code_asked_for_is_an_identifier_of_its_kind() -> None:
    short, _ = await answer(
        "Which environment variable names the configuration file for sub-processes?",
        "Python starts coverage.process_startup() early. It examines the "
        "COVERAGE_PROCESS_START environment variable, and if it is set, begins measurement; "
        "its value names the configuration file to use.",
    )
    assert short == "COVERAGE_PROCESS_START"  # not "Python", nor the function
    short, _ = await answer(
        "Which setting keeps the original data files when combining?",
        "coverage combine has a new option, --keep to keep the original data files after "
        "combining them.",
    )
    assert short == "--keep"  # a word of the question, but the name asked for
    short, _ = await answer(
        "Which worker class do I give Gunicorn?",
        "Run gunicorn my_app_module:my_web_app --bind localhost:8080 --worker-class "
        "aiohttp.GunicornWebWorker to serve the application.",
    )
    assert short == "aiohttp.GunicornWebWorker"  # a class, not the module named first


async def test_a_command_asking_for_its_own_help_is_no_way_to_do_it() -> None:
    short, _ = await answer(
        "How do I combine data files?",
        "The options are listed by help:\n\n$ widget combine --help\n",
    )
    assert short == ""
    short, _ = await answer(
        "How do I get help on the combine command?",
        "The options are listed by help:\n\n$ widget combine --help\n",
    )
    assert short == "$ widget combine --help"


async def test_a_section_asked_for_is_one_a_sentence_names_not_a_link_or_an_index() -> None:
    short, _ = await answer(
        "Which section of pyproject.toml holds widget's settings?",
        "Install the toml extra (pip install widget[toml]) and use tools like "
        "[Poetry](https://python-poetry.org/). Settings must be within the [tool.widget] "
        "section of pyproject.toml.",
    )
    assert short == "[tool.widget]"


async def test_an_options_dash_entry_is_the_way_though_it_spells_the_question() -> None:
    short, text = await answer(
        "How do I turn on auto-reloading?",
        "--reload - Enable auto-reload. Widget supports two versions of auto-reloading "
        "behavior enabled by this option.",
    )
    assert short == "--reload"
    assert "--reload - Enable auto-reload [1]. Widget supports two versions" in text


async def test_a_default_falling_back_to_a_value_is_quoted_with_what_it_falls_back_to() -> None:
    short, _ = await answer(
        "How many worker processes does widget use by default?",
        "--workers INTEGER Number of worker processes. Defaults to the $WEB_CONCURRENCY "
        "environment variable if available, or 1. Not valid with --reload.",
        "--reload-delay FLOAT Delay between checks. Defaults to 0.25s.",
    )
    assert short == "the $WEB_CONCURRENCY environment variable if available, or 1"


async def test_a_code_asked_of_a_negated_case_is_the_clause_saying_it_negated() -> None:
    short, _ = await answer(
        "What exit status does grep return when no lines were selected?",
        "Normally the exit status is 0 if a line is selected, 1 if no lines were selected, "
        "and 2 if an error occurred.",
    )
    assert short == "1 if no lines were selected"


async def test_only_a_default_named_so_is_a_name_and_a_number_said_in_words_keeps_its_unit() -> (
    None
):
    short, _ = await answer(
        "How long does widget keep resolved host names in its cache by default?",
        "By default, widget caches this info for 60 seconds.",
    )
    assert short == "60 seconds"  # "host names" asks for no name
    short, _ = await answer(
        "What is the default maximum recursion depth?",
        "Recursion is limited to a depth of 5 by default, i.e., it will traverse at most 5 "
        "directories deep. The default maximum depth is five layers.",
    )
    assert short == "5"  # a number is counted with its unit, not taken as a default's name
    short, _ = await answer(
        "Which option do I use so widget makes its own copy of the POST data?",
        "Use WIDGETOPT_COPYPOSTFIELDS so that widget makes its own copy of the POST data.",
    )
    assert short == "WIDGETOPT_COPYPOSTFIELDS"  # an option need not open with a dash


async def test_what_an_option_does_is_what_its_help_entry_says_after_it() -> None:
    short, _ = await answer(
        "What does the --timid option do?",
        "--timid Use a simpler but slower trace method. Try this if you get seemingly "
        "impossible results!",
        "It was a hack for --timid before configuration files were available.",
    )
    assert short == "Use a simpler but slower trace method"
    short, _ = await answer(
        "What does the --append option do?",
        "-a, --append Append widget data to .widget, otherwise it starts clean each time.",
    )
    assert short == "Append widget data to .widget"


def test_a_call_spelling_the_words_asked_is_how_to_do_it() -> None:
    # "call structlog.configure()" for "how do I configure structlog": the call, not own words
    line = short_answer(
        "How do I configure structlog on app initialization?",
        [
            Segment("logger = structlog.get_logger()", 0, 1, True),
            Segment(
                "To that end, you'll have to call structlog.configure() on app initialization.",
                0,
                0,
            ),
        ],
    )
    assert line is not None and line.answer == "structlog.configure()"
    assert short_answer("What is structlog?", [Segment("structlog is structlog().", 0, 0)]) is None
    bare = [Segment("It will call the given Crawler's crawl() method.", 0, 0)]
    assert short_answer("How can I stop a long crawl?", bare) is None
