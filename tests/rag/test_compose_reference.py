"""Answers over a reference manual: settings entries ("NAME", "Default: 2", what it is), numbers
that name things rather than count them, and the page a manual gives to what is asked."""

from __future__ import annotations

from kforge.rag.compose import compose_extractive
from kforge.rag.corpus import Corpus
from kforge.rag.quantities import counted_numbers
from kforge.rag.question import read_question
from kforge.rag.rerank import search_units
from kforge.rag.short_answer import short_answer
from kforge.rag.types import Chunk, SourceDocument
from kforge.store.memory import MemoryStore
from tests.rag.helpers import asked_over


def chunk(i: int, text: str, heading: str) -> Chunk:
    return Chunk(
        id=f"c{i}",
        source=f"page{i}.html",
        file=f"page{i}.html",
        title="Settings",
        heading=heading,
        page=None,
        start=0,
        end=len(text),
        text=text,
    )


def test_numbers_that_name_things_count_nothing() -> None:
    def counted(text: str, question: str = "How many?") -> list[str]:
        return [m.group(0) for m in counted_numbers(text, question)]

    assert counted("It retries on an HTTP 500 error or a timeout.") == []
    assert counted("Fixed in issue 1735, see PEP 8 and RFC 2616.") == []
    assert counted("Changed in version 2.8: it writes utf-8.") == []
    assert counted("It needs Scrapy 2.8 and keeps 3 sessions.") == ["3"]
    assert counted("Default: 2") == ["2"]
    assert counted("server s1 192.168.0.1:443 weight 3, localhost:8080 or example.com:80") == ["3"]
    assert counted('Protocol names, for instance "http/1.1,http/1.0", take 2 tries.') == ["2"]
    assert counted("Set retries=-1 to retry forever; 3-5 is usual.") == ["-1", "3", "5"]
    # the question's own number is never its answer
    assert counted("Scrapy 2.8 needs 3.7 or later.", "Which Python for 2.8?") == ["3.7"]


def test_how_many_times_takes_the_settings_entry_not_a_sentence_naming_a_status() -> None:
    middleware = chunk(
        0,
        "RetryMiddleware\n\nA middleware to retry failed requests that are caused by "
        "temporary problems such as a connection timeout or an HTTP 500 error.",
        "Middleware reference > RetryMiddleware",
    )
    setting = chunk(
        1,
        "RETRY_TIMES\n\nDefault: 2\n\nMaximum number of times to retry, in addition to the "
        "first download.",
        "Middleware reference > RetryMiddleware > RETRY_TIMES",
    )
    question = "How many times does the crawler retry a failed request?"
    segments = compose_extractive(question, [middleware, setting])
    assert any(s.text == "Default: 2" for s in segments), [s.text for s in segments]
    line = short_answer(question, segments, [middleware, setting])
    assert line is not None and line.answer == "2"


def test_how_long_finds_the_entry_whose_value_is_in_seconds() -> None:
    pages = [
        SourceDocument(
            f"news{i}.html",
            f"Release {i}\n\nThe downloader now reads the response headers first "
            f"(issue {1700 + i}). A response that never comes is logged.",
            f"Release notes {i}",
        )
        for i in range(6)
    ]
    pages.append(
        SourceDocument(
            "settings.html",
            "DOWNLOAD_TIMEOUT\n\nDefault: 180\n\nThe amount of time (in secs) that the "
            "downloader will wait before timing out.",
            "Settings",
        )
    )
    question = "How long does the downloader wait for a response before it gives up?"
    files, _, line = asked_over(pages, question)
    assert files[0] == "settings.html", files
    assert line == "180"


def test_what_is_x_reads_the_page_titled_x_where_every_page_names_x() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    pages = [
        SourceDocument(
            f"guide{i}.html",
            f"Run the spider with the crawl command; the spider {i} yields items and the "
            "spider follows links. Each spider is named.",
            f"Guide part {i}",
        )
        for i in range(60)
    ]
    pages.append(
        SourceDocument(
            "spiders.html",
            "Spiders are classes which define how a certain site will be scraped, including "
            "how to follow links and how to extract structured data from its pages. This page "
            "describes the base class and its attributes in detail, with the methods a "
            "subclass overrides and the settings that change how it behaves when it runs.",
            "Spiders",
        )
    )
    corpus.add_documents(pages)
    assert [c.file for c in corpus.titled_chunks(["spider", "spiders"])] == ["spiders.html"]
    hits = search_units(corpus, "What is a spider?", 3)
    assert hits[0].chunk.file == "spiders.html", [h.chunk.file for h in hits]


def test_an_faq_answer_may_run_long_and_a_choice_of_two_ways_gets_it() -> None:
    long_answer = (
        "There is no rule that says to use one or the other, but settings suit the values that, "
        "once they are set, rarely change from one run to the next in a project, while "
        "arguments are meant to change more often, sometimes on every single run of the "
        "program, and sometimes the program cannot even start without them (for example, to "
        "give the first address it reads)."
    )
    assert len(long_answer.split()) > 60
    faq = chunk(
        0,
        "Should I use arguments or settings to configure my program?\n\nBoth arguments and "
        f"settings can be used to configure your program. {long_answer}",
        "FAQ > Should I use arguments or settings to configure my program?",
    )
    other = chunk(1, "Settings are read from the settings module of the project.", "Settings")
    question = "Should I configure my program with arguments or with settings?"
    texts = [s.text for s in compose_extractive(question, [faq, other])]
    assert long_answer in texts, texts


def test_what_does_it_mean_to_mark_as_x_defines_x_not_an_entry_named_x_something() -> None:
    from kforge.rag.defining import defined_subject
    from kforge.rag.question import read_question

    question = "What does it mean to mark a test as xfail?"
    assert defined_subject(read_question(question)) == defined_subject(
        read_question("What is an xfail?")
    )
    options = chunk(
        0,
        "xfail_strict: If set to True, tests marked xfail that succeed will fail the suite. "
        "usefixtures: fixtures applied to all tests.",
        "Configuration options",
    )
    guide = chunk(
        1,
        "You can mark tests that cannot succeed. An xfail means that you expect a test to fail "
        "for some reason. A skip means that the test runs only when some conditions are met.",
        "Skip and xfail",
    )
    segments = compose_extractive(question, [options, guide])
    assert segments[0].text.startswith("An xfail means"), [s.text for s in segments]


def test_a_question_that_negates_takes_the_entry_that_negates_and_its_name_is_the_line() -> None:
    codes = chunk(
        0,
        "Running the tool can end with these exit codes:\n\n"
        "- Exit code 0:: All tests were collected and passed\n"
        "- Exit code 1:: Tests were collected and some failed\n"
        "- Exit code 5:: No tests were collected",
        "Exit codes",
    )
    question = "Which exit code does it return when it collects no tests at all?"
    segments = compose_extractive(question, [codes])
    best = min(segments, key=lambda s: s.rank)
    assert best.text.endswith("No tests were collected"), [s.text for s in segments]
    line = short_answer(question, segments, [codes])
    assert line is not None and line.answer == "Exit code 5"


def test_a_tutorial_goal_is_followed_by_the_sentence_that_says_how_and_its_code() -> None:
    tutorial = chunk(
        0,
        "Creating a project\n\nBefore you start, you will have to set up a new Crawler project. "
        "Enter a directory where you would like to store your code and run:\n\n"
        "```\ncrawler startproject tutorial\n```\n\n"
        "This will create a tutorial directory with the following contents:\n\n"
        "```\ntutorial/\n    crawler.cfg   # deploy configuration file\n```",
        "Tutorial > Creating a project",
    )
    question = "How do I set up a new Crawler project?"
    segments = compose_extractive(question, [tutorial])
    assert any("crawler startproject tutorial" in s.text for s in segments)
    line = short_answer(question, segments, [tutorial])
    assert line is not None and line.answer == "crawler startproject tutorial"


def test_a_command_the_page_did_not_mark_as_code_goes_with_the_sentence_explaining_it() -> None:
    usage = chunk(
        0,
        "Run tests in a module\n\nrunner test_mod.py\n\nRun tests by keyword expressions\n\n"
        'runner -k "MyClass and not method"\n\nThis will run tests which contain names that '
        "match the given string expression, which can include operators.",
        "Usage > Specifying which tests to run",
    )
    segments = compose_extractive("How do I run only the tests whose names match a word?", [usage])
    commands = [s for s in segments if s.code]
    assert [s.text for s in commands] == ['runner -k "MyClass and not method"']


def test_a_page_reply_after_a_bare_yes_is_quoted_without_a_verdict() -> None:
    faq = chunk(
        0,
        "Can I run a spider without creating a project?\n\nYes. You can use the runspider "
        "command.\n\nFor example, a spider in one file runs with runspider and the file name.",
        "FAQ > Can I run a spider without creating a project?",
    )
    news = chunk(1, "It stores one log file per spider run, keeping the latest five.", "News")
    question = "Do I need a whole project just to run one spider file?"
    segments = compose_extractive(question, [faq, news])
    assert segments[0].text == "You can use the runspider command.", [s.text for s in segments]
    line = short_answer(question, segments, [faq, news])
    # the page answered its own question, asked the other way round: no "Yes." of kforge's
    assert line is not None and line.line == "You can use the runspider command"


def test_code_run_into_a_line_answers_no_comparison_and_a_glued_unit_is_a_number() -> None:
    from kforge.rag.units import reads_as_code

    assert reads_as_code('def test_create_file(tmp_path): d = tmp_path / "sub" d.mkdir()')
    assert not reads_as_code("class collections.Counter([iterable]): A Counter is a dict.")
    assert not reads_as_code("tmp_path is a pathlib.Path object.")
    fixtures = chunk(
        0,
        'def test_create_file(tmp_path): d = tmp_path / "sub" d.mkdir() assert tmpdir '
        "is not tmp_path\n\nThe tmpdir fixture is similar to tmp_path, but returns legacy "
        "path objects rather than standard pathlib objects.",
        "Temporary directories",
    )
    segments = compose_extractive(
        "What is the difference between the tmp_path and tmpdir fixtures?", [fixtures]
    )
    best = min(segments, key=lambda s: s.rank)
    assert best.text.startswith("The tmpdir fixture"), [s.text for s in segments]
    assert [m.group(0) for m in counted_numbers("too small (<0.005s) or 16MB", "q")] == [
        "0.005",
        "16",
    ]


def test_how_many_x_reads_the_passage_giving_a_number_of_x() -> None:
    from kforge.rag.quantities import counted_noun

    assert counted_noun("Roughly how many external plugins exist for it?") == "plugins"
    assert counted_noun("How many times does it retry a request?") == "times"
    pages = [
        SourceDocument(
            f"plugins{i}.html",
            f"Writing plugins\n\nExternal plugins are modules discovered through entry points. "
            f"A plugin {i} can add options, and external plugins load after builtin plugins.",
            f"Writing plugins {i}",
        )
        for i in range(8)
    ]
    pages.append(
        SourceDocument(
            "index.html",
            "Features\n\n- Detailed info on failing assert statements\n- Auto-discovery of "
            "test modules and functions\n- Rich plugin architecture, with over 800+ external "
            "plugins and thriving community",
            "The tool",
        )
    )
    files, _, line = asked_over(pages, "Roughly how many external plugins exist for the tool?")
    assert files[0] == "index.html", files
    assert line is not None and line.startswith("800")


def test_two_ways_compared_get_one_sentence_each_not_code_a_page_wrote_as_a_list() -> None:
    guide = chunk(
        0,
        "You can mark tests that cannot succeed. A skip means that you expect your test to pass "
        "only if some conditions are met, otherwise the runner should skip it altogether. An "
        "xfail means that you expect a test to fail for some reason.",
        "How to use skip and xfail",
    )
    imperative = chunk(
        1,
        "Alternatively, you can also mark a test as XFAIL from within the test imperatively:"
        "\n\n- def test_function():\n- if not valid_config():\n- runner.xfail('bad config')",
        "How to use skip and xfail > XFail",
    )
    question = "When should I skip a test and when should I mark it xfail?"
    texts = [s.text for s in compose_extractive(question, [imperative, guide])]
    assert any(t.startswith("A skip means") for t in texts), texts
    assert any(t.startswith("An xfail means") for t in texts), texts
    assert not any("def test_function" in t for t in texts), texts


def test_the_release_a_user_runs_finds_no_release_notes_and_is_never_the_answer() -> None:
    notes = [
        SourceDocument(
            f"news{i}.html",
            f"Crawler 2.{i} release notes\n\nCrawler 2.{i} removes deprecated functions; "
            f"changed in version 2.{i}: the startproject command sets UTF-8.",
            f"Release notes 2.{i}",
        )
        for i in range(10)
    ]
    guide = [
        SourceDocument(
            f"guide{i}.html",
            f"Crawler guide part {i}\n\nCrawler spiders crawl pages; Crawler settings tune it.",
            f"Crawler guide {i}",
        )
        for i in range(10)
    ]
    install = SourceDocument(
        "install.html",
        "Supported Python versions\n\nCrawler requires Python 3.7+, either the CPython "
        "implementation or the PyPy implementation.",
        "Installation guide",
    )
    question = "Which Python version do I need at least for Crawler 2.8?"
    files, _, line = asked_over([*notes, *guide, install], question, 4)
    assert "install.html" in files, files
    assert line == "Python 3.7+"


def test_a_set_phrase_is_read_in_the_manual_s_words() -> None:
    from kforge.rag.idioms import plain_words
    from kforge.rag.question import read_question

    assert plain_words("How do I turn off a middleware?") == "How do I disable a middleware?"
    assert plain_words("How do I switch the access log off?") == "How do I disable the access log?"
    assert plain_words("How do I keep the tests out of the docs?") == (
        "How do I exclude the tests from the docs?"
    )
    assert plain_words("Can I leave out private members?") == "Can I exclude private members?"
    assert plain_words("How do I get it back into a database?") == (
        "How do I restore it into a database?"
    )
    assert plain_words("Is the server up and taking connections?") == (
        "Is the server up and accept connections?"
    )
    assert plain_words("Stop instead of carrying on.") == "Stop instead of continue."
    assert plain_words("How do I clear the lock?") == "How do I unlock?"
    # the most that may be set is the manual's maximum; a place's size is no setting
    assert plain_words("What is the highest weight I can give a server?") == (
        "What is the maximum maximal weight I can give a server?"
    )
    assert plain_words("What is the shortest delay allowed?") == (
        "What is the minimum minimal delay allowed?"
    )
    assert plain_words("What is the largest city in France?") == (
        "What is the largest city in France?"
    )
    assert "default" in read_question("Does it obey robots.txt out of the box?").terms
    corpus = Corpus.open(MemoryStore(), "t")
    pages = [
        SourceDocument(
            f"guide{i}.html",
            f"Requests {i}\n\nThe crawler sends requests and the crawler reads responses; "
            f"requests wait in the scheduler {i}.",
            f"Guide {i}",
        )
        for i in range(8)
    ]
    pages.append(
        SourceDocument(
            "settings.html",
            "CONCURRENT_REQUESTS\n\nDefault: 16\n\nThe maximum number of concurrent (i.e. "
            "simultaneous) requests that will be performed by the downloader.",
            "Settings",
        )
    )
    corpus.add_documents(pages)
    question = "How many requests does the crawler send at the same time?"
    hits = search_units(corpus, question, 3)
    assert hits[0].chunk.file == "settings.html", [h.chunk.file for h in hits]


def test_a_comparison_reads_each_item_s_own_page_and_its_description_not_its_synopsis() -> None:
    pages = [
        SourceDocument(
            f"tutorial{i}.md",
            f"# Collaboration {i}\n\nAlice can run tool fetch and then tool pull; tool pull "
            f"merges what tool fetch brought, and tool fetch never merges {i}.",
            f"tutorial {i}",
        )
        for i in range(8)
    ]
    pages += [
        SourceDocument(
            "tool-fetch.txt",
            "# NAME\n\ntool-fetch - Download objects and refs from another repository\n\n"
            "# SYNOPSIS\n\ntool fetch --multiple [<options>] [<repository>]",
            "tool-fetch(1)",
        ),
        SourceDocument(
            "tool-pull.txt",
            "# NAME\n\ntool-pull - Fetch from and integrate with another repository\n\n"
            "# SYNOPSIS\n\ntool pull [<options>] [<repository>]",
            "tool-pull(1)",
        ),
    ]
    question = "What is the difference between tool fetch and tool pull?"
    files, texts, _ = asked_over(pages, question, 5)
    assert "tool-fetch.txt" in files and "tool-pull.txt" in files, files
    assert any(t.startswith("tool-fetch - Download") for t in texts), texts
    assert any(t.startswith("tool-pull - Fetch") for t in texts), texts


def test_how_do_i_list_keeps_its_verb_and_takes_the_option_named_by_it() -> None:
    from kforge.rag.question import read_question

    assert read_question("How do I list all tags?").terms == ("list", "tag")
    assert "show" not in read_question("How do I show my own page when a 404 error happens?").terms
    options = chunk(
        0,
        "OPTIONS\n\n- -a, --annotate: Make an unsigned, annotated tag object\n"
        "- -d, --delete: Delete existing tags with the given names.\n\n"
        "-l, --list: List tags. With optional <pattern>..., e.g. tool tag --list 'v-*', list "
        "only the tags that match the pattern(s). Running the command without arguments also "
        "lists all tags. The pattern is a shell wildcard (i.e., matched using fnmatch(3)). "
        "Multiple patterns may be given; if any of them matches, the tag is shown. This option "
        "is implied if any other list-like option such as --contains is given.",
        "tool-tag(1) > OPTIONS",
    )
    segments = compose_extractive("How do I list all tags?", [options])
    best = min(segments, key=lambda s: s.rank)
    assert best.text == "-l, --list: List tags.", [s.text for s in segments]


def test_how_short_asks_a_duration_and_a_value_written_on_to_its_unit_gives_it() -> None:
    pages = [
        SourceDocument(
            "options.html",
            "Command-line options\n\n--durations=N Show N slowest setup/test durations (N=0 for "
            "all) --durations-min=N Minimal duration in seconds for inclusion in slowest list.",
            "Options",
        ),
        SourceDocument(
            "durations.html",
            "Profiling test execution duration\n\nTo get a list of the slowest test "
            "durations, use --durations. By default, pytest will not show test "
            "durations that are too small (<0.005s) unless -vv is passed on the command-line.",
            "Durations",
        ),
    ]
    question = "How short does a test have to be for --durations to leave it out of the list?"
    assert read_question(question).kind == "quantity"
    _, units, line = asked_over(pages, question)
    assert line == "0.005s", units


def test_stress_words_after_what_are_dropped_and_quicker_reads_as_faster() -> None:
    from kforge.rag.defining import subject_phrase
    from kforge.rag.idioms import plain_words

    asked = read_question("What exactly is a repository?")
    assert asked.kind == "definition" and subject_phrase(asked) == "repository"
    assert "exactli" not in asked.terms
    assert plain_words("How much quicker is the daemon?") == "How much faster is the daemon?"
    pages = [
        SourceDocument(
            "limits.html",
            "Limits\n\nA repository may hold exactly one archive per name.",
            "Limits",
        ),
        SourceDocument(
            "init.html",
            "Repositories\n\nA repository is a filesystem directory containing the "
            "deduplicated data from zero or more archives.",
            "Repositories",
        ),
    ]
    files, units, _ = asked_over(pages, "What exactly is a repository?", k=1)
    assert files == ["init.html"], units


def test_where_takes_the_sentence_giving_a_path_over_one_naming_the_program() -> None:
    passage = chunk(
        0,
        "Keys\n\nWith keyfile encryption Borg protects the key of keyfile encryption. "
        "The key of keyfile encryption is stored in ~/.config/borg/keys.",
        "Keys",
    )
    segments = compose_extractive("Where is the key of keyfile encryption kept?", [passage])
    best = min(segments, key=lambda s: s.rank)
    assert best.text == "The key of keyfile encryption is stored in ~/.config/borg/keys.", segments


def test_the_items_a_sentence_introduces_come_whole_beside_the_other_sentences() -> None:
    passage = chunk(
        0,
        "Citations\n\nA citation should let a reader find the exact supporting text quickly:\n\n"
        "- the file or document name;\n- the location within it: heading path and page;\n"
        "- a short quote from the passage.\n\nA citation that names only a document forces "
        "the reader to search. Citations point to specific passages.",
        "Citations",
    )
    segments = compose_extractive(
        "What should a good citation include?", [passage], max_sentences=3
    )
    texts = [s.text for s in segments]
    assert any(t.startswith("a short quote") for t in texts), texts


def test_the_size_of_text_is_given_in_characters_words_or_tokens() -> None:
    from kforge.rag.quantities import asked_units, states_in_units

    sized = asked_units(read_question("How big should chunks be for retrieval?"))
    assert states_in_units("Chunks of roughly 500 to 1,500 characters work well.", sized)
    assert states_in_units("Encoders read at most 512 tokens.", sized)


def test_a_span_of_time_said_in_words_is_a_quantity_and_a_second_call_is_not() -> None:
    from kforge.rag.kinds import holds_kind
    from kforge.rag.quantities import asked_units, states_in_units

    question = read_question("Once a feature is deprecated, how long do I have before it goes?")
    allowed = "Deprecated usage is still allowed for at least a year and half after a release."
    assert holds_kind(allowed, question)
    assert states_in_units(allowed, asked_units(question))
    assert not holds_kind("Call it a second time to retry.", question)


def test_setting_a_parameter_to_a_constant_says_how() -> None:
    from kforge.rag.question import PROCEDURAL

    assert PROCEDURAL.search("Certification checks can be relaxed by setting ssl to False:")
    assert not PROCEDURAL.search("The checks are relaxed by setting it to work.")


def test_a_parameter_whose_name_the_question_spells_in_words_gives_its_default() -> None:
    server = SourceDocument(
        "httpserver.html",
        "HTTP Server\n\nclass tornado.httpserver.HTTPServer(request_callback, "
        "no_keep_alive: bool = False, idle_connection_timeout: Optional[float] = None, "
        "body_timeout: Optional[float] = None): A non-blocking, single-threaded HTTP server "
        "that by default keeps the connection of each request alive. An HTTP request whose "
        "body is late times out after body_timeout; the HTTP server has no timeout by default.",
        "tornado.httpserver",
    )
    client = SourceDocument(
        "httpclient.html",
        "Request objects\n\n"
        "auth_mode (str) \u2013 Authentication mode; simple_httpclient only supports "
        "\u201cbasic\u201d\n"
        "connect_timeout (float) \u2013 Timeout for initial connection in seconds, default 20 "
        "seconds (0 means no timeout)\n"
        "request_timeout (float) \u2013 Timeout for entire request in seconds, default 20 "
        "seconds (0 means no timeout)\n"
        "max_redirects (int) \u2013 Limit for follow_redirects, default 5.",
        "tornado.httpclient",
    )
    notes = [
        SourceDocument(
            f"news{i}.html",
            f"Release {i}\n\nThe HTTP client and the HTTP server handle a request body of any "
            f"size (issue {1700 + i}).",
            f"Release notes {i}",
        )
        for i in range(6)
    ]
    files, units, line = asked_over(
        [*notes, server, client], "What is the default request timeout of an HTTP request?"
    )
    assert files[0] == "httpclient.html", files
    assert units[0].startswith("request_timeout (float)"), units
    assert line == "20 seconds"


def test_what_is_the_product_every_page_names_reads_the_sentence_saying_what_it_is() -> None:
    notes = [
        SourceDocument(
            f"news{i}.html",
            f"Scrapy 2.{i}\n\nScrapy 2.{i} fixes the Scrapy shell and the scrapy command.",
            f"Release notes 2.{i}",
        )
        for i in range(45)
    ]
    overview = SourceDocument(
        "overview.html",
        "Overview\n\nScrapy is a fast high-level web crawling and web scraping framework, "
        "used to crawl websites and extract structured data from their pages. It can be used "
        "for a wide range of purposes, from data mining to monitoring and automated testing. "
        "Its spiders follow links from page to page and yield the items they find, which "
        "pipelines then clean, validate and store.",
        "Introduction",
    )
    files, units, line = asked_over([*notes, overview], "What is Scrapy?")
    assert files[0] == "overview.html", files
    assert units[0].startswith("Scrapy is a fast high-level web crawling"), units
    assert line == "Scrapy is a fast high-level web crawling and web scraping framework"


def test_a_parameter_entry_written_with_its_default_gives_it_sign_and_all() -> None:
    engine = SourceDocument(
        "engines.html",
        "Engine Configuration\n\n"
        "logging_name \u2013 String identifier which will be used within the \u201cname\u201d "
        "field of logging records. See also create_engine.label_length\n"
        "max_overflow=10 \u2013 the number of connections to allow in connection pool "
        "\u201coverflow\u201d, that is connections that can be opened above and beyond the "
        "pool_size setting, which defaults to five.\n"
        "pool_recycle=-1 \u2013 this setting causes the pool to recycle connections after the "
        "given number of seconds has passed.",
        "Engine Configuration",
    )
    _, units, line = asked_over([engine], "What is the default max_overflow of the pool?")
    assert units[0].startswith("max_overflow=10 \u2013 the number of connections"), units
    assert line == "10"
    _, _, line = asked_over([engine], "What is the default value of pool_recycle?")
    assert line == "-1"


ENGINES = SourceDocument(
    "engines.html",
    "Engine Configuration\n\n"
    "pool_logging_name \u2013 String identifier used in the pool's log records\n"
    "pool_pre_ping \u2013 boolean, if True will enable the connection pool \u201cpre-ping\u201d "
    "feature that tests connections for liveness upon each checkout.",
    "Engine Configuration",
)
"""A parameter list whose entries' names are snake_case, the first without a full stop."""


def test_what_does_x_do_reads_x_s_own_entry_where_every_passage_names_x() -> None:
    faq = [
        SourceDocument(
            f"faq{i}.html",
            f"Question {i}\n\nWrites that Session.flush() and pool_pre_ping issue are kept "
            f"in bookkeeping of their own; completing part of them is beyond the current "
            f"capabilities of Session.flush() and pool_pre_ping (note {i}).",
            f"FAQ {i}",
        )
        for i in range(4)
    ]
    reference = SourceDocument(
        "session_api.html",
        "Session API\n\n"
        "method sqlalchemy.orm.Session.flush(objects=None): Flush all the object changes to "
        "the database. Writes out all pending object creations, deletions and modifications.",
        "Session API",
    )
    pages = [*faq, reference, ENGINES]
    _, units, line = asked_over(pages, "What does Session.flush do?")
    assert units[0].startswith("method sqlalchemy.orm.Session.flush("), units
    assert line == "Flush all the object changes to the database"
    _, units, _ = asked_over(pages, "What does pool_pre_ping do?")
    assert units[0].startswith("pool_pre_ping \u2013 boolean"), units


def test_the_entry_of_what_is_asked_is_read_first_among_passages_naming_it_as_often() -> None:
    faq = [
        SourceDocument(
            f"faq{i}.html",
            f"Question {i}\n\nIt would be great if a checkout could skip pool_pre_ping; "
            f"however this is beyond its current capabilities, since pool_pre_ping keeps "
            f"bookkeeping of its own (see pool_pre_ping, note {i}).",
            f"FAQ {i}",
        )
        for i in range(4)
    ]
    files, units, _ = asked_over([*faq, ENGINES], "What does pool_pre_ping do?")
    assert files[0] == "engines.html", files
    assert units[0].startswith("pool_pre_ping \u2013 boolean"), units


def test_what_does_the_x_builtin_do_reads_the_entry_named_x() -> None:
    pages = [
        SourceDocument(
            "builtins.html",
            "SHELL BUILTIN COMMANDS\n\nThe exit, logout, return, break, continue, let, and "
            "shift builtins accept and process arguments beginning with - without requiring "
            "--.",
            "Bash",
        ),
        SourceDocument(
            "shopt.html",
            "shopt\n\nshift_verbose: If set, the shift builtin prints an error message when "
            "the shift count exceeds the number of positional parameters.\n\n"
            "sourcepath: If set, the source builtin uses the value of PATH.",
            "Bash",
        ),
        SourceDocument(
            "shift.html",
            "shift\n\nshift [n]: The positional parameters from n+1 ... are renamed to $1 "
            "....  Parameters represented by the numbers $# down to $#-n+1 are unset.",
            "Bash",
        ),
    ]
    _, units, _ = asked_over(pages, "What does the shift builtin do?")
    assert units[0].startswith("shift [n]: The positional parameters"), units


def test_a_default_written_in_quotes_is_the_value_not_a_number_beside_it() -> None:
    variables = SourceDocument(
        "bash.html",
        "Shell Variables\n\n"
        "IFS: The Internal Field Separator that is used for word splitting after expansion "
        "into 2 or more fields. The default value is ``<space><tab><newline>''.",
        "Bash",
    )
    _, _, line = asked_over([variables], "What is the default value of IFS?")
    assert line == "``<space><tab><newline>''"


def test_what_exception_is_raised_is_answered_by_an_exception_s_name_or_nothing() -> None:
    client = SourceDocument(
        "httpclient.html",
        "Testing\n\nIf raise_error is True, a tornado.httpclient.HTTPError will be raised if "
        "the response code is not 200. This is the same behavior as the raise_error argument "
        "to AsyncHTTPClient.fetch, but the default is False here (it is True in "
        "AsyncHTTPClient) because tests often need to deal with non-200 response codes.",
        "tornado.httpclient",
    )
    question = "What exception does AsyncHTTPClient.fetch raise for a non-200 response?"
    _, _, line = asked_over([client], question)
    assert line == "tornado.httpclient.HTTPError"
    quiet = SourceDocument(
        "query.html",
        "Query\n\nQuery.one_or_none() is like Query.one(), except that if no results are "
        "found, it does not raise an error; it just returns None.",
        "Query",
    )
    _, _, line = asked_over([quiet], "What exception does Query.one() raise when no row is found?")
    assert line is None  # no name of an exception: no line, not "Query.one_or_none"


def test_where_quotes_the_next_sentence_saying_where_what_the_best_one_names_is_kept() -> None:
    passages = [
        chunk(
            0,
            "Servers\n\nAlso, in order for the deduplication used by Borg to work, it needs to "
            "keep a local cache containing checksums of all file chunks already stored in the "
            "repository. This cache is stored in ~/.cache/borg/. If Borg detects that a "
            "repository has been modified since the local cache was updated it will need to "
            "rebuild the cache.",
            "Servers",
        ),
        chunk(
            1,
            "Files cache\n\nEntries in the files cache of a machine have a maximum time to live, "
            "set with BORG_FILES_CACHE_TTL. Every backup increments the local cache entries' ttl "
            "values of files that were not seen.",
            "Files cache",
        ),
    ]
    question = "Where on my machine does borg keep its local cache of chunk checksums?"
    texts = [s.text for s in compose_extractive(question, passages, max_sentences=2)]
    assert texts[:2] == [
        "Also, in order for the deduplication used by Borg to work, it needs to keep a local "
        "cache containing checksums of all file chunks already stored in the repository.",
        "This cache is stored in ~/.cache/borg/.",
    ], texts
