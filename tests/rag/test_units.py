"""Units a person reads: sentences, list items, definition entries, table rows, code blocks."""

from __future__ import annotations

from kforge.rag.units import field_name, normalized, passage_units, refers_elsewhere


def kinds(text: str) -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in passage_units(text)]


def test_markdown_items_definitions_rows_and_code_are_units_quoted_exactly() -> None:
    text = (
        "## `os.EOL`\n\n<!-- YAML\nadded: v0.7.8\n-->\n\n* {string}\n\n"
        "The operating system-specific end-of-line marker.\n\n* `\\n` on POSIX\n* `\\r\\n` on Windows\n\n"
        "| Flag | Meaning |\n| --- | --- |\n| `O_RDONLY` | open for reading only |\n\n"
        "```js\nconst { EOL } = require('node:os');\nconsole.log(EOL);\n```\n"
    )
    got = kinds(text)
    assert ("signature", "`os.EOL`") in got
    assert ("sentence", "The operating system-specific end-of-line marker.") in got
    assert ("item", "`\\n` on POSIX") in got and ("item", "`\\r\\n` on Windows") in got
    assert ("row", "| `O_RDONLY` | open for reading only |") in got
    assert not any("YAML" in t or t == "{string}" or "---" in t for _, t in got)
    [code] = [t for k, t in got if k == "code"]
    assert code.splitlines()[1] == "const { EOL } = require('node:os');"  # never split mid-line
    for _, unit in got:
        assert normalized(unit) in normalized(text)


def test_definition_lines_and_asciidoc_terms_are_entries() -> None:
    text = "Options:\nverbose: print every step\nquiet: print nothing\n\n-f::\n--force::\n\tOverwrite files."
    got = kinds(text)
    assert ("item", "verbose: print every step") in got and ("item", "quiet: print nothing") in got
    assert ("item", "-f:: --force:: Overwrite files.") in got


def test_run_together_sentences_are_split_and_names_are_not() -> None:
    got = [
        t
        for _, t in kinds(
            "Rickets follows vitamin D deficiency.Treatment restores it. Read os.EOL first."
        )
    ]
    assert got == [
        "Rickets follows vitamin D deficiency.",
        "Treatment restores it.",
        "Read os.EOL first.",
    ]


def test_a_passage_cut_inside_a_code_block_or_comment_keeps_them_apart_from_prose() -> None:
    text = "buf.copy(buf2, 8, 16, 20);\nconsole.log(buf2);\n```\n\nCopies data between buffers.\n"
    assert kinds(text)[-1] == ("sentence", "Copies data between buffers.")
    assert kinds(text)[0][0] == "code"
    tail = "  description: removed.\n-->\n\nReturns the canonical path of the file."
    assert kinds(tail) == [("sentence", "Returns the canonical path of the file.")]


def test_python_examples_in_extracted_html_are_code() -> None:
    text = (
        "Encoding basic Python object hierarchies:\n\n>>> import json\n>>> json.dumps(['foo'])\n"
        "'[\"foo\"]'\n\n@lru_cache(maxsize=32)\ndef get_pep(num):\n    return num\n\n"
        "The cache is keyed on the arguments."
    )
    got = kinds(text)
    assert [k for k, _ in got] == ["sentence", "code", "code", "sentence"]
    assert got[1][1].startswith(">>> import json\n>>> json.dumps(['foo'])")


def test_html_lists_and_tables_one_line_each_are_units_and_wrapped_prose_is_not_cut() -> None:
    html = (
        "The options are:\n\nVerbose output\nQuiet mode, prints nothing\n\n"
        "Name | Meaning | Default\njobs | parallel jobs | 4"
    )
    assert kinds(html)[1:] == [
        ("item", "Verbose output"),
        ("item", "Quiet mode, prints nothing"),
        ("row", "Name | Meaning | Default"),
        ("row", "jobs | parallel jobs | 4"),
    ]
    wrapped = (
        "Creates a new link from the `existingPath` to the `newPath`. See the POSIX\n"
        "link(2) documentation for more detail. No arguments other than a possible\n"
        "exception are given to the completion callback."
    )
    assert [t for _, t in kinds(wrapped)] == [
        "Creates a new link from the `existingPath` to the `newPath`.",
        "See the POSIX link(2) documentation for more detail.",
        "No arguments other than a possible exception are given to the completion callback.",
    ]


def test_markdown_link_targets_are_no_units() -> None:
    text = "Reads a file line by line.\n\n[reading files]: #example-read-file-stream\n"
    assert kinds(text) == [("sentence", "Reads a file line by line.")]


def test_command_lines_after_a_colon_are_code_and_prose_after_one_is_not() -> None:
    text = (
        "To create a new project, run the following command from the command line:\n\n"
        "mkdocs new my-project\ncd my-project\n\n"
        "The options are:\n\nThe first one is fast. The second one is safe."
    )
    assert ("code", "mkdocs new my-project\ncd my-project") in kinds(text)
    assert ("sentence", "The first one is fast.") in kinds(text)


def test_an_api_entry_opening_with_a_decorator_is_prose_and_a_decorator_line_is_code() -> None:
    text = (
        "@functools.lru_cache(maxsize=128, typed=False): Decorator to wrap a function with a "
        "memoizing callable.\n\n"
        "@lru_cache(maxsize=32)\ndef get_pep(num):\n    return num\n"
    )
    kinds = [(u.kind, u.text.split("\n")[0]) for u in passage_units(text)]
    assert kinds[0] == ("sentence", kinds[0][1]) and kinds[0][1].startswith("@functools")
    assert ("code", "@lru_cache(maxsize=32)") in kinds


def test_each_parameter_of_a_field_list_is_its_own_item_however_long_the_line_before() -> None:
    text = (
        "Parameters:: host (Optional[str]) \u2013 the hostname to listen on. Set this to '0.0.0.0' "
        "to have the server available externally as well. Defaults to '127.0.0.1'.\n"
        "port (Optional[int]) \u2013 the port of the webserver. Defaults to 5000 or the port "
        "defined in the SERVER_NAME config variable if present.\n"
        "debug (Optional[bool]) \u2013 if given, enable or disable debug mode. See debug."
    )
    got = kinds(text)
    assert got[1] == (
        "item",
        "port (Optional[int]) \u2013 the port of the webserver. Defaults to 5000 or the port "
        "defined in the SERVER_NAME config variable if present.",
    )
    assert [kind for kind, _ in got] == ["item", "item", "item"]
    assert [field_name(t) for _, t in got] == ["host", "port", "debug"]
    assert field_name("The port (a number) is set - see below.") is None


def test_a_typed_parameter_line_is_its_own_item_after_a_line_ending_without_a_stop() -> None:
    # Sphinx's field list, one parameter a line; none of them ends with a full stop
    text = (
        "simple_httpclient only supports \u201cbasic\u201d\n"
        "connect_timeout (float) \u2013 Timeout for initial connection in seconds, default 20 "
        "seconds (0 means no timeout)\n"
        "request_timeout (float) \u2013 Timeout for entire request in seconds, default 20 "
        "seconds (0 means no timeout)\n"
        "if_modified_since (datetime or float) \u2013 Timestamp for If-Modified-Since header"
    )
    got = kinds(text)
    assert [field_name(t) for _, t in got] == [
        None,
        "connect_timeout",
        "request_timeout",
        "if_modified_since",
    ]
    assert got[2] == (
        "item",
        "request_timeout (float) \u2013 Timeout for entire request in seconds, default 20 "
        "seconds (0 means no timeout)",
    )


def test_a_parameter_line_giving_its_default_is_its_own_item() -> None:
    text = (
        "String identifier for logging records. See also create_engine.label_length\n"
        "max_overflow=10 \u2013 the number of connections to allow in the pool overflow\n"
        "pool_recycle=-1 \u2013 this setting causes the pool to recycle connections"
    )
    assert [field_name(t) for _, t in kinds(text)] == [None, "max_overflow", "pool_recycle"]
    assert field_name("x=1 - y") == "x"
    assert field_name("a = b - c") is None  # an equation in prose


def test_an_unfenced_python_block_with_an_if_is_one_code_block() -> None:
    # HTML's <pre> read without fences: a compound statement's header ends with ":"
    text = (
        "You can set cookies in the user's browser with the set_cookie method:\n\n"
        "class MainHandler(tornado.web.RequestHandler):\n"
        "    def get(self):\n"
        '        if not self.get_cookie("mycookie"):\n'
        '            self.set_cookie("mycookie", "myvalue")\n'
        '            self.write("Your cookie was not set yet!")\n'
        "        else:\n"
        '            self.write("Your cookie was set!")'
    )
    got = kinds(text)
    assert [kind for kind, _ in got] == ["sentence", "code"], got
    assert 'self.set_cookie("mycookie", "myvalue")' in got[1][1]


def test_assignment_statements_are_code_not_a_sentence() -> None:
    text = (
        "Set the key:\n\nfrom flask import Flask\n\n"
        "app = Flask(__name__)\napp.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000\n\n"
        "The total = the sum of all parts.\nIt is simple."
    )
    got = kinds(text)
    assert (  # one block, the blank line in it kept
        "code",
        "from flask import Flask\n\n"
        "app = Flask(__name__)\napp.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000",
    ) in got
    assert ("sentence", "The total = the sum of all parts.") in got


def test_an_untyped_parameter_line_is_its_own_item_but_a_title_with_a_dash_is_not() -> None:
    text = (
        "Parameters:: name \u2013 The name of the blueprint. Will be prepended to each endpoint.\n"
        "url_prefix \u2013 Blueprint routes will be prefixed with this.\n"
        "subdomain \u2013 Blueprint routes will match on this subdomain."
    )
    assert [field_name(t) for _, t in kinds(text)] == ["name", "url_prefix", "subdomain"]
    assert field_name("Flask \u2013 a web framework.") is None
    assert field_name("the dog - runs far.") is None


def test_an_options_entry_after_a_sentence_is_its_own_unit_however_long_the_next_one() -> None:
    # a manual page's options, one entry a line, the last too long to read as a list's entry
    text = (
        "The default value is 7 and can be overridden by the core.abbrev config option.\n"
        "--no-abbrev: Display the full sha1s in the output listing rather than abbreviating "
        "them.\n"
        "-t, --track[=(direct|inherit)]: When creating a new branch, set up "
        "branch.<name>.remote and branch.<name>.merge configuration entries to set "
        '"upstream" tracking configuration for the new branch. This configuration will tell '
        "git to show the relationship between the two branches in git status and git branch "
        "-v. Furthermore, it directs git pull without arguments to pull from the upstream when "
        "the new branch is checked out."
    )
    texts = [t for _, t in kinds(text)]
    assert texts[:3] == [
        "The default value is 7 and can be overridden by the core.abbrev config option.",
        "--no-abbrev: Display the full sha1s in the output listing rather than abbreviating them.",
        "-t, --track[=(direct|inherit)]: When creating a new branch, set up "
        "branch.<name>.remote and branch.<name>.merge configuration entries to set "
        '"upstream" tracking configuration for the new branch.',
    ], texts


def test_a_synopsis_written_as_a_call_over_lines_is_code_not_a_list() -> None:
    text = (
        "Add include directories to a target.\n\n"
        "target_include_directories(<target> [SYSTEM] [AFTER|BEFORE]\n"
        "  <INTERFACE|PUBLIC|PRIVATE> [items1...]\n"
        "  [<INTERFACE|PUBLIC|PRIVATE> [items2...] ...])\n\n"
        "add_subdirectory(source_dir [binary_dir] [EXCLUDE_FROM_ALL] [SYSTEM])\n\n"
        "f(x) and g(y) name two calls in a sentence"
    )
    got = kinds(text)
    assert got[1] == (
        "code",
        "target_include_directories(<target> [SYSTEM] [AFTER|BEFORE]\n"
        "  <INTERFACE|PUBLIC|PRIVATE> [items1...]\n"
        "  [<INTERFACE|PUBLIC|PRIVATE> [items2...] ...])",
    )
    assert got[2] == (
        "code",
        "add_subdirectory(source_dir [binary_dir] [EXCLUDE_FROM_ALL] [SYSTEM])",
    )
    assert got[3][0] != "code"


def test_a_list_of_rules_ended_with_semicolons_is_prose_not_code() -> None:
    text = (
        "When operating in non-POSIX mode, shlex will try to obey the following rules:\n\n"
        'Quote characters are not recognized within words (Do"Not"Separate is parsed as '
        'the single word Do"Not"Separate);\n'
        "Escape characters are not recognized;\n"
        "Enclosing characters in quotes preserve the literal value of all characters within "
        "the quotes;\n\n"
        'int x = 5;\nprintf("this is a test string here");\nreturn 0;'
    )
    got = kinds(text)
    assert [kind for kind, _ in got[:-1]] == ["sentence", "sentence"]
    assert got[1][1].startswith("Quote characters are not recognized within words")
    assert got[-1] == ("code", 'int x = 5;\nprintf("this is a test string here");\nreturn 0;')


def test_a_configuration_block_is_code_though_no_line_looks_like_a_language() -> None:
    text = (
        "The statistics can be enabled in a backend of its own.\n\n"
        "# public access (limited to this backend only)\n"
        "backend public_www\n"
        "    server srv1 10.0.0.1:80\n"
        "    stats enable\n"
        "    stats uri     /admin?stats\n\n"
        "The default weight is 1.\n\n"
        "It is limited by design to 4095 servers\n"
        "per backend, and it is the default\n"
        "algorithm.\n"
    )
    units = passage_units(text)
    assert [u.kind for u in units] == ["sentence", "code", "sentence", "sentence"]
    assert "backend public_www\n    server srv1 10.0.0.1:80" in units[1].text


def test_list_lines_that_run_words_together_as_prose_are_no_commands_after_a_colon() -> None:
    text = (
        "Passing --check will make widget exit with:\n\ncode 0 if nothing would change;\n"
        "code 1 if some files would be reformatted; or\ncode 123 if there was an internal error"
    )
    assert kinds(text)[1] == (
        "sentence",
        "code 0 if nothing would change; code 1 if some files would be reformatted; or "
        "code 123 if there was an internal error",
    )
    assert kinds("Then run:\n\npip install widget\nwidget init my project")[1][0] == "code"


def test_names_listed_one_a_line_after_a_colon_are_no_commands() -> None:
    text = "It completes paths for the built-in commands, including:\n\nedit\nrun_script\nshell"
    assert "code" not in [kind for kind, _ in kinds(text)], kinds(text)
    assert kinds("Then run:\n\nmake\nmake install")[1][0] == "code"


def test_a_programs_help_output_is_an_item_for_each_option() -> None:
    text = (
        "$ widget report --help\nUsage: widget report [options]\n\nOptions:\n"
        "  --data-file=INFILE    Read data for the report from this\n"
        "                        file. Defaults to '.widget'. [env: WIDGET_FILE]\n"
        "  --fail-under=MIN      Exit with a status of 2 if the total is less\n"
        "                        than MIN.\n"
        "  -i, --ignore-errors   Ignore errors while reading source files."
    )
    assert kinds(text)[1:] == [
        ("sentence", "Options:"),
        (
            "item",
            "--data-file=INFILE Read data for the report from this file. Defaults to "
            "'.widget'. [env: WIDGET_FILE]",
        ),
        ("item", "--fail-under=MIN Exit with a status of 2 if the total is less than MIN."),
        ("item", "-i, --ignore-errors Ignore errors while reading source files."),
    ]


def test_a_sentence_sending_the_reader_elsewhere_is_known_as_such() -> None:
    assert refers_elsewhere("More details are in Excluding code from widget.")
    assert refers_elsewhere("See Specifying source files for details of their interpretation.")
    assert refers_elsewhere("For more information, see the FAQ.")
    assert not refers_elsewhere("The details of the format are given below.")
    assert not refers_elsewhere("Any line with a comment of pragma: no cover is excluded.")


def test_a_manual_pages_option_summary_at_the_margin_is_an_item_for_each_option() -> None:
    text = (
        "Here is a short summary of the options available in widget.\n\n"
        "--exclude=PATTERN        exclude files matching PATTERN\n"
        "--bwlimit=RATE           limit socket I/O bandwidth\n"
        "--partial, -P            keep partially transferred files"
    )
    assert kinds(text)[1:] == [
        ("item", "--exclude=PATTERN exclude files matching PATTERN"),
        ("item", "--bwlimit=RATE limit socket I/O bandwidth"),
        ("item", "--partial, -P keep partially transferred files"),
    ]
    # a line at the margin that only opens with a dash is no option table
    assert all(k != "item" for k, _ in kinds("-5 degrees is cold.\n-10 degrees is colder."))


def test_a_terminal_panel_drawn_with_box_lines_is_code_not_a_sentence() -> None:
    text = (
        "But if it was something like a password, you would have liked to hide it.\n\n"
        "╭──────── Traceback (most recent call last) ────────╮\n"
        "│ /home/user/code/superapp/main.py:8 in main         │\n"
        "│   6 @app.command()                                 │\n"
        "╰────────────────────────────────────────────────────╯\n"
        'TypeError: can only concatenate str (not "int") to str'
    )
    found = kinds(text)
    assert found[0][0] == "sentence"
    assert all(kind == "code" for kind, unit in found if "│" in unit or "╭" in unit), found


def test_a_definition_after_a_blank_line_is_a_block_of_its_own_imports_lead_the_code() -> None:
    text = (
        "Chain the commands:\n\n"
        "@click.group(chain=True)\ndef cli():\n    pass\n\n"
        "@cli.result_callback()\ndef process_pipeline(processors):\n    pass\n\n"
        "Then the example:\n\n"
        "from mako.template import Template\n\n"
        "def render():\n    return Template('x').render()"
    )
    code = [unit for kind, unit in kinds(text) if kind == "code"]
    assert code == [
        "@click.group(chain=True)\ndef cli():\n    pass",
        "@cli.result_callback()\ndef process_pipeline(processors):\n    pass",
        "from mako.template import Template\n\ndef render():\n    return Template('x').render()",
    ], code
