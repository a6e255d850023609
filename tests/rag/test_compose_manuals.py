"""Answers composed over a product's manual: pages that all name the product, and "how do I"
questions whose answer is a sentence saying what to run."""

from __future__ import annotations

from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.grounded import number_segments
from kforge.rag.kinds import holds_kind
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from tests.rag.helpers import page_chunk as chunk


def test_how_do_i_takes_the_sentence_that_says_what_to_run() -> None:
    history = chunk(
        0,
        "SQLite has parsed foreign key constraints for time out of mind, but added the ability "
        "to actually enforce those constraints much later. Foreign key enforcement is off by "
        "default for compatibility.",
        "Quirks",
        "Foreign Key Enforcement Is Off By Default",
    )
    faq = chunk(
        1,
        "SQLite supports foreign key constraints. But enforcement of foreign key constraints is "
        "turned off by default. To enable foreign key constraint enforcement, run PRAGMA "
        "foreign_keys=ON.",
        "FAQ",
    )
    answer = compose_extractive(
        "How do I make SQLite actually enforce my FOREIGN KEY constraints?", [history, faq]
    )
    assert any("PRAGMA foreign_keys=ON" in s.text for s in answer), [s.text for s in answer]


def test_a_sentence_saying_what_to_run_holds_what_a_procedure_asks() -> None:
    asked = read_question("How do I switch a database to WAL mode?")
    for says_how in (
        "To convert to WAL mode, use the following pragma:",
        "To enable foreign key constraint enforcement, run PRAGMA foreign_keys=ON.",
        "The journal can be changed by issuing the journal_mode pragma.",
        "It is loaded via app.config.from_file.",
        "You can use a # type: ignore comment to silence the type checker on a line.",
        "One can also pass the name with --app.",
    ):
        assert holds_kind(says_how, asked), says_how
    for says_not in (
        "The dog is using the ball.",
        "We did this using a new approach, which works.",
        "To be sure, WAL mode is fast.",
        "You can see the result below.",
    ):
        assert not holds_kind(says_not, asked), says_not


def test_how_do_i_takes_what_you_can_use_over_an_option_sharing_a_word() -> None:
    options = chunk(
        0,
        "--no-silence-site-packages: By default, mypy will suppress any error messages "
        "generated within PEP 561 compliant packages. Adding this flag will disable this "
        "behavior.",
        "The mypy command line",
        "Import discovery",
    )
    issues = chunk(
        1,
        "You can use a # type: ignore comment to silence the type checker on a particular "
        "line. The second line is now fine, since the ignore comment causes the name "
        "frobnicate to get an implicit Any type.",
        "Common issues and solutions",
        "Spurious errors and locally silencing the checker",
    )
    answer = compose_extractive(
        "mypy flags one line that I know is fine. How do I make it shut up about just that line?",
        [options, issues],
    )
    assert any("type: ignore" in s.text for s in answer), [s.text for s in answer]


def test_a_page_titled_with_the_product_every_page_names_is_no_hop() -> None:
    product = "SQLite"
    passages = [
        chunk(
            0,
            "A WITHOUT ROWID table is an optimization that can reduce storage in SQLite.",
            "Clustered Indexes",
        ),
        chunk(1, "Each table in SQLite is a B-tree keyed by rowid.", "File Format"),
        chunk(2, "The schema of an SQLite database is on its first page.", "Schema"),
        chunk(3, "A database in SQLite is a single disk file.", product),
    ]
    answer = compose_extractive("What is a WITHOUT ROWID table?", passages)
    assert answer and answer[0].source == 0
    assert all(s.source != 3 for s in answer), [s.text for s in answer]


def test_which_x_takes_the_parameter_named_x_over_one_that_shares_other_words() -> None:
    fields = chunk(
        0,
        "Parameters:: host (Optional[str]) \u2013 the hostname to listen on. Set this to '0.0.0.0' "
        "to have the server available externally as well. Defaults to '127.0.0.1' or the host "
        "in the SERVER_NAME config variable if present.\n"
        "port (Optional[int]) \u2013 the port of the webserver. Defaults to 5000 or the port "
        "defined in the SERVER_NAME config variable if present.",
        "API",
        "Application Object",
    )
    answer = compose_extractive(
        "Which port does the development server listen on by default?", [fields]
    )
    best = min(answer, key=lambda s: s.rank)
    assert best.text.startswith("port (Optional[int])"), [s.text for s in answer]


UPLOADS = (
    "So how exactly does Flask handle uploads? Well it will store them in memory if the files "
    "are reasonably small. But how do you specify the maximum file size after which an upload "
    "is aborted? By default Flask will happily accept file uploads with an unlimited amount of "
    "memory, but you can limit that by setting the MAX_CONTENT_LENGTH config key:\n\n"
    "from flask import Flask, Request\n\n"
    "app = Flask(__name__)\napp.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000\n\n"
    "The code above will limit the maximum allowed payload to 16 megabytes."
)


def test_a_sentence_saying_how_leads_the_code_it_introduces_written_as_code() -> None:
    passages = [chunk(0, UPLOADS, "Uploading Files", "Improving Uploads")]
    question = "How do I limit how large an uploaded file may be?"
    answer = compose_extractive(question, passages)
    texts = [s.text for s in answer]
    assert texts[0].endswith("by setting the MAX_CONTENT_LENGTH config key:"), texts
    assert "app.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000" in texts[-1]
    assert all(s.code for s in answer[1:])
    text, _, _ = number_segments(answer, passages, short=short_answer(question, answer, passages))
    first, body = text.split("\n\n", 1)
    assert first == "app.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000 [1]"
    assert (
        "\n\napp = Flask(__name__)\napp.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000\n[1]"
        in (body)
    )


def test_a_why_the_page_asks_itself_is_answered_by_the_units_after_it() -> None:
    factories = chunk(
        0,
        "A common pattern is creating the application object when the blueprint is imported. "
        "But if you move the creation of this object into a function, you can then create "
        "multiple instances of this app later.\n\nSo why would you want to do this?\n\n"
        "Testing. You can have instances of the application with different settings to test "
        "every case.\n\nSo how would you then actually implement that?",
        "Application Factories",
    )
    script = chunk(
        1,
        "When using a custom script, if you introduce an error in your module-level code, the "
        "reloader will fail because it can no longer load the entry point. If you are using "
        "the app factory pattern, use --call instead.",
        "Command Line Interface",
        "Custom Scripts",
    )
    answer = compose_extractive(
        "Why would I create my app in a factory function instead of at module level?",
        [factories, script],
    )
    best = min(answer, key=lambda s: s.rank)
    assert best.text.endswith("to test every case."), [s.text for s in answer]


def test_where_in_a_project_is_answered_with_the_folder() -> None:
    passages = [
        chunk(
            0,
            "So if you have a blueprint in the folder yourapplication/admin and you want to "
            "render the template 'admin/index.html', use admin/index.html as the name to look "
            "up the template by.",
            "Blueprints",
            "Templates",
        ),
        chunk(
            1,
            "To render a template you can use the render_template() method. Flask will look "
            "for templates in the templates folder.",
            "Quickstart",
            "Rendering Templates",
        ),
    ]
    question = "Where does Flask look for my HTML templates?"
    answer = compose_extractive(question, passages)
    line = short_answer(question, answer, passages)
    assert line is not None and line.line == "in the templates folder", line
    assert short_answer("Where was he born?", [Segment("He was born in Paris.", 0)]) != line


def test_a_value_given_after_its_entry_comes_with_it() -> None:
    config = chunk(
        0,
        "MAX_COOKIE_SIZE: Warn if cookie headers are larger than this many bytes.\n"
        "Defaults to 4093. Larger cookies may be silently ignored by browsers. Set to 0 to "
        "disable the warning.",
        "Configuration Handling",
        "Builtin Configuration Values",
    )
    question = "Above what size does Flask warn that a cookie is too large?"
    answer = compose_extractive(question, [config])
    texts = [s.text for s in answer]
    at = texts.index("Defaults to 4093.")
    assert at > 0 and texts[at - 1].startswith("MAX_COOKIE_SIZE: Warn"), texts
    line = short_answer(question, answer, [config])
    assert line is not None and line.line == "4093"


def test_a_question_a_page_asks_only_answers_alike_when_it_asks_what_is_asked() -> None:
    song = chunk(
        0,
        '"Run the World" is a song recorded by Jennifer Lopez for her album "Love?" (2011). '
        'Written by Terius "The-Dream" Nash, it was one of several songs recorded with the duo. '
        "The track originally featured vocals from The-Dream and a rap verse.",
        "Run the World",
    )
    amen = chunk(
        1,
        '"Amen" is a song by German musical project Enigma, featuring vocals by English '
        "dream-pop duo Aquilo.",
        "Amen (Enigma song)",
    )
    answer = compose_extractive(
        "Which German project recorded a song that featured vocals by a duo?", [song, amen]
    )
    best = min(answer, key=lambda s: s.rank)
    assert "Enigma" in best.text, [s.text for s in answer]


def test_in_which_directory_by_default_asks_a_place_and_a_path_on_its_own_line_answers() -> None:
    asked = read_question("In which directory does the library look for catalogs by default?")
    assert asked.kind == "where"
    catalogs = chunk(
        0,
        "Catalogs are looked up by the name of the locale. The default value is system "
        "specific. For the GNU library looking up catalogs, it's:\n\n/usr/local/share/locale"
        "\n\nlocale is the name of the locale.",
        "Locating Message Catalog Files",
    )
    answer = compose_extractive(asked.text, [catalogs])
    texts = [s.text for s in answer]
    assert "/usr/local/share/locale" in texts, texts
    line = short_answer(asked.text, answer, [catalogs])
    assert line is not None and line.line == "/usr/local/share/locale"


def test_which_versions_is_answered_with_a_version_or_not_at_all() -> None:
    packaging = chunk(
        0,
        "Indicate the versions of Python supported using python_requires. Flask itself "
        "supports Python >=3.7 as of December 2021, but this will update over time.",
        "Packaging",
    )
    question = "Which Python versions does Flask support?"
    answer = compose_extractive(question, [packaging])
    line = short_answer(question, answer, [packaging])
    assert line is not None and line.line == "Python >=3.7", line
    dump = chunk(
        0, "Open a database with STRICT tables in the CLI and issue the dump command.", "X"
    )
    said = compose_extractive("Since which version can I declare STRICT tables?", [dump])
    assert short_answer("Since which version can I declare STRICT tables?", said, [dump]) is None


def test_a_short_reply_to_the_question_a_page_asks_is_quoted() -> None:
    faq = chunk(
        0,
        "How do I enable gzip compression globally for my entire application?\n\n"
        "It's impossible. Choosing what to compress and what not to compress is a tricky "
        "matter.\n\nIf you need global compression, write a custom middleware.",
        "FAQ",
        "FAQ > How do I enable gzip compression globally for my entire application?",
    )
    codings = chunk(1, "gzip: GZIP compression of a response body.", "Reference")
    question = "Is there a single setting that turns on gzip compression for every response?"
    texts = [s.text for s in compose_extractive(question, [faq, codings])]
    assert "It's impossible." in texts, texts


def test_how_do_i_takes_the_one_line_command_over_a_sentence_about_another_tool() -> None:
    config = chunk(
        0,
        "Doxygen uses a configuration file to determine all of its settings. Each project "
        "should get its own configuration file. To simplify the creation of a configuration "
        "file, doxygen can create a template configuration file for you. To do this call "
        "doxygen from the command line with the -g option:\n\ndoxygen -g <config-file>\n\n"
        "where <config-file> is the name of the configuration file.",
        "Getting started",
        "Step 1: Creating a configuration file",
    )
    wizard = chunk(
        1,
        "If you do not wish to edit the configuration file with a text editor, you should have "
        "a look at doxywizard, which is a GUI front-end that can create, read and write doxygen "
        "configuration files, and allows setting configuration options by entering them via "
        "dialogs.",
        "Getting started",
        "Step 1: Creating a configuration file",
    )
    answer = compose_extractive(
        "I'm setting up doxygen for a project for the first time. How do I get a config file "
        "to start from instead of writing it by hand?",
        [config, wizard],
    )
    assert any("doxygen -g" in s.text for s in answer), [s.text for s in answer]


def test_how_do_i_takes_the_sentence_solving_the_problem_the_page_states() -> None:
    page = chunk(
        0,
        "Sometimes you want to process arguments that look like options. For instance, "
        "imagine you have a file named -foo.txt. If you pass this as an argument in this "
        "manner, Click will treat it as an option. To solve this, Click does what any POSIX "
        "style command line script does, and that is to accept the string -- as a separator "
        "for options and arguments.",
        "Arguments",
        "Option-Like Arguments",
    )
    other = chunk(
        1,
        "Starting with Click 2.0, it is also possible to open files in atomic mode by passing "
        "atomic=True. Files are opened lazily when their name starts with a dash.",
        "Arguments",
        "File Opening Safety",
    )
    answer = compose_extractive(
        "How do I pass a file whose name starts with a dash, like -foo.txt, as an argument?",
        [page, other],
    )
    assert any("as a separator" in s.text for s in answer), [s.text for s in answer]


def test_a_default_asked_for_keeps_its_entry_and_its_value_together() -> None:
    reference = chunk(
        0,
        "class click.DateTime(formats=None): The DateTime type converts date strings into "
        "datetime objects. When specifying DateTime formats, you should only pass a list or a "
        "tuple. The format strings are processed using datetime.strptime. Parsing is tried "
        "using each format, in order. Parameters: formats (Optional[Sequence[str]]) \u2013 A list "
        "or tuple of date format strings, in the order in which they should be tried. "
        "Defaults to '%Y-%m-%d', '%Y-%m-%dT%H:%M:%S', '%Y-%m-%d %H:%M:%S'.",
        "API",
        "Types",
    )
    answer = compose_extractive(
        "Which date formats does click.DateTime accept if I don't give any?", [reference]
    )
    assert any("Defaults to '%Y-%m-%d'" in s.text for s in answer), [s.text for s in answer]


def test_an_escape_the_question_names_finds_the_sentence_holding_it() -> None:
    asked = read_question("What does a line with only \\b do in a command's docstring?")
    assert "\\b" in asked.identifiers
    help_page = chunk(
        0,
        "Click gets command help text from function docstrings. In the case of commands, the "
        "docstring of the function is automatically used if provided. Rewrapping can be "
        "disabled on a per-paragraph basis by adding a line with solely the \\b escape "
        "marker in it.",
        "Documenting Scripts",
        "Preventing Rewrapping",
    )
    answer = compose_extractive(asked.text, [help_page])
    assert any("\\b escape marker" in s.text for s in answer), [s.text for s in answer]


def test_a_count_comes_from_its_entry_not_from_a_number_in_another_unit() -> None:
    # the entry's sentence points to its value ("this value"), given two units later; the
    # other page's number measures pixels, not nodes
    config = chunk(
        0,
        "If the number of nodes in a graph becomes larger than this value, doxygen will "
        "truncate the graph, which is visualized by representing a node as a red box. Note "
        "that doxygen if the number of direct children of the root node in a graph is already "
        "larger than DOT_GRAPH_MAX_NODES then the graph will not be shown at all. Also note "
        "that the size of a graph can be further restricted by MAX_DOT_GRAPH_DEPTH.\n\n"
        "Minimum value: 0, maximum value: 10000, default value: 50.\n\n"
        "This tag requires that the tag HAVE_DOT is set to YES.",
        "Configuration",
        "Configuration options related to the dot tool",
    )
    legend = chunk(
        1,
        "A box with a red border indicates a node that has more arrows than are shown! In "
        "other words: the graph is truncated with respect to this node. For the graphs "
        "generated with dot doxygen tries to limit the width of the resulting image to 1024 "
        "pixels.",
        "Graphs and diagrams",
    )
    question = "How many nodes does doxygen show in a graph by default?"
    answer = compose_extractive(question, [config, legend])
    texts = [s.text for s in answer]
    assert "Minimum value: 0, maximum value: 10000, default value: 50." in texts, texts
    assert texts[0].startswith("If the number of nodes"), texts
    line = short_answer(question, answer, [config, legend])
    assert line is not None and line.line == "50", line


def test_what_a_term_means_is_the_sentence_that_says_or_names_it() -> None:
    affinity = chunk(
        0,
        "In order to maximize compatibility between SQLite and other database engines, SQLite "
        'supports the concept of "type affinity" on columns. The type affinity of a column is '
        "the recommended type for data stored in that column. Each column in an SQLite 3 "
        "database is assigned one of the following type affinities:\n\n- TEXT\n- NUMERIC\n"
        "- INTEGER",
        "Datatypes In SQLite",
        "3. Type Affinity",
    )
    question = "What does the type affinity of a column mean in SQLite?"
    best = min(compose_extractive(question, [affinity]), key=lambda s: s.rank)
    assert best.text.startswith("The type affinity of a column is the recommended"), best
    named = chunk(
        1,
        "Any column can still store any type of data. The preferred storage class for a column "
        'is called its "affinity". Each column in an SQLite 3 database is assigned one of '
        "the following type affinities:\n\n- TEXT\n- NUMERIC",
        "Datatypes In SQLite",
        "3. Type Affinity",
    )
    best = min(compose_extractive(question, [named]), key=lambda s: s.rank)
    assert best.text.startswith("The preferred storage class for a column is called"), best


def test_a_comparison_is_led_by_the_sentence_that_sets_the_two_apart() -> None:
    markup = chunk(
        0,
        "A brief description may span several lines (although it is advised to keep it "
        "brief!). A brief description ends when a blank line or another sectioning command is "
        "encountered.",
        "Documenting the code",
        "Special comment blocks",
    )
    kinds = chunk(
        1,
        "For each entity in the code there are two types of descriptions. As the name "
        "suggest, a brief description is a short one-liner, whereas the detailed description "
        "provides longer, more detailed documentation. Having more than one brief or detailed "
        "description is allowed (but not recommended).",
        "Documenting the code",
    )
    question = "What's the difference between a brief description and a detailed description?"
    best = min(compose_extractive(question, [markup, kinds]), key=lambda s: s.rank)
    assert "whereas the detailed description" in best.text, best
    # the noun both items share need not follow each ("The tmpdir and tmpdir_factory fixtures")
    fixtures = chunk(
        2,
        "tmp_path is a pathlib.Path object. The tmpdir and tmpdir_factory fixtures are similar "
        "to tmp_path and tmp_path_factory, but use/return legacy py.path.local objects rather "
        "than standard pathlib.Path objects.",
        "How to use temporary directories and files in tests",
    )
    question = "What is the difference between the tmp_path and tmpdir fixtures?"
    best = min(compose_extractive(question, [fixtures]), key=lambda s: s.rank)
    assert "legacy py.path.local objects" in best.text, best


def test_how_do_i_keeps_the_sentence_that_leads_code_run_into_a_line() -> None:
    proxies = chunk(
        0,
        "Contrary to the requests library, it won't read environment variables by default. "
        "But you can do so by passing trust_env=True into aiohttp.ClientSession constructor "
        "for extracting proxy configuration from HTTP_PROXY, HTTPS_PROXY, WS_PROXY or "
        "WSS_PROXY environment variables (all are case insensitive):\n\n"
        "async with aiohttp.ClientSession(trust_env=True) as session: async with "
        'session.get("http://python.org") as resp: print(resp.status)\n\n'
        "Proxy credentials are given from ~/.netrc file if present.",
        "Advanced Client Usage",
        "Proxy support",
    )
    question = "How do I make my aiohttp client use the proxy from the environment?"
    texts = [s.text for s in compose_extractive(question, [proxies])]
    assert any(t.startswith("But you can do so by passing trust_env=True") for t in texts), texts


def test_what_happens_leads_with_the_sentence_saying_what_follows() -> None:
    # the sentences around the consequence share more words with the question
    queue = chunk(
        0,
        "When a worker's limit is reached, jobs are left waiting in a queue which may belong "
        "to the worker or to the pool. In order not to wait forever, a timeout is applied to "
        "jobs waiting in the queue. If the timeout is reached, the job is dropped and a busy "
        'error is returned to the caller. The "queue timeout" setting fixes the longest time '
        "a job may be left waiting in a queue. If unspecified, the pool's connect timeout "
        'is used as the "queue timeout".',
        "Settings",
        "queue timeout",
    )
    answer = compose_extractive(
        'What happens to a job that waits in the queue longer than the "queue timeout"?', [queue]
    )
    best = min(answer, key=lambda s: s.rank)
    assert best.text.startswith("If the timeout is reached, the job is dropped"), [
        (s.rank, s.text) for s in answer
    ]


def test_a_sentence_going_on_from_an_example_comes_with_the_example() -> None:
    """A GNU manual's FAQ: the example, then the sentence saying what it does, which opens
    with the example's verb ("searches for 'hello' in all files ..."): quoting that sentence
    quotes the example before it, however full the answer is."""
    faq = chunk(
        0,
        "Here are some common questions and answers about grep usage.\n\n"
        "How can I list just the names of matching files?\n\n"
        "grep -l 'main' test-*.c\n\n"
        "lists names of test-*.c files in the current directory whose contents mention main.\n\n"
        "How do I search directories recursively?\n\n"
        "grep -r 'hello' /home/gigi\n\n"
        "searches for 'hello' in all files under the /home/gigi directory. For more control "
        "over which files are searched, use find and grep.",
        "grep",
        "Usage",
    )
    answer = [
        s.text for s in compose_extractive("How do I search all files under a directory?", [faq])
    ]
    assert "grep -r 'hello' /home/gigi" in answer, answer
    assert (
        answer.index("grep -r 'hello' /home/gigi")
        == answer.index(next(s for s in answer if s.startswith("searches for"))) - 1
    )


def test_how_do_i_quotes_the_option_whose_entry_a_sentence_continues() -> None:
    """An option's long entry is read sentence by sentence; when the sentence that answers is
    a later one, the entry's opening (which names the option) comes with it."""
    options = chunk(
        0,
        "\u2018--quiet\u2019, \u2018-q\u2019: Suppress all warnings.\n"
        "\u2018--recursive\u2019, \u2018-r\u2019: Travel the directory structure recursively. "
        "If any of the file names specified on the command line are directories, the packer "
        "will descend into the directory and pack all the files it finds there (or unpack "
        "them in the case of the unpacker). Links are followed only when asked, and files "
        "that are already packed are left as they are, with a warning for each of them.\n"
        "\u2018--verbose\u2019, \u2018-v\u2019: Display the name and percentage reduction "
        "for each file packed.",
        "Packer",
        "Invoking packer",
    )
    answer = [
        s.text
        for s in compose_extractive(
            "How do I pack all the files in a directory and the directories inside it?", [options]
        )
    ]
    assert any(s.startswith("\u2018--recursive\u2019, \u2018-r\u2019") for s in answer), answer


def test_the_main_difference_between_two_items_sets_them_apart() -> None:
    recipe = chunk(
        0,
        "Any factories that call these classes with SubFactory will also need to be decorated "
        "in the same manner. If only one link is required, this can be simply performed with a "
        "RelatedFactory.",
        "Common recipes",
    )
    entry = chunk(
        1,
        "class factory.RelatedFactory(factory, factory_related_name='', **kwargs): A "
        "RelatedFactory behaves mostly like a SubFactory, with the main difference that the "
        "related Factory will be generated after the base Factory.\n"
        "factory: As for SubFactory, the factory argument can be:",
        "Reference",
    )
    question = (
        "I can't decide between SubFactory and RelatedFactory. How do they differ in when the "
        "other object gets made?"
    )
    segments = compose_extractive(question, [recipe, entry])
    assert "with the main difference that" in segments[0].text, segments  # it leads the answer
