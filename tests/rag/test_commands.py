"""The command a unit offers for a "how do I" question."""

from __future__ import annotations

from kforge.rag.commands import command_of, description_of
from kforge.rag.compose import Segment
from kforge.rag.procedure_line import procedure_line
from kforge.rag.question import read_question


def test_an_entry_offers_its_option_or_call() -> None:
    asked = read_question("How do I rename a branch?")
    assert command_of("-m, --move: Move/rename a branch.", asked) == "-m, --move"
    assert (
        command_of("os.path.join(path, *paths): Join paths.", asked) == "os.path.join(path, *paths)"
    )


def test_a_code_block_offers_the_line_doing_what_is_asked_not_where_it_runs() -> None:
    asked = read_question("How do I create a temporary directory?")
    code = (
        ">>> with tempfile.TemporaryDirectory() as d:\n...     print('created temporary directory')"
    )
    assert command_of(code, asked) == ">>> with tempfile.TemporaryDirectory() as d:"
    asked = read_question("How do I deploy to GitHub Pages?")
    code = "cd ../orgname.github.io/\nmkdocs gh-deploy --remote-branch master"
    assert command_of(code, asked) == "mkdocs gh-deploy --remote-branch master"


def test_an_api_entry_offers_its_call_without_its_kind_and_prose_its_quoted_command() -> None:
    asked = read_question("How do I get the current local date and time?")
    entry = "classmethod datetime.now(tz=None): Return the current local date and time."
    assert command_of(entry, asked) == "datetime.now(tz=None)"
    asked = read_question("How do I list all tags?")
    assert command_of('Running "git tag" without arguments lists all tags.', asked) == "git tag"


def test_prose_offers_the_call_it_names_when_its_code_spans_are_lost() -> None:
    asked = read_question("How do I delete a directory tree?")
    text = "Use shutil.rmtree() to delete a tree, or os.rmdir() for an empty directory."
    assert command_of(text, asked) == "shutil.rmtree()"


def test_prose_offers_no_command() -> None:
    assert command_of("The site is built.", read_question("How do I build it?")) == ""
    # a plural written with its ending in brackets is no call
    text = "If you always connect the drive(s) to the same port, make a more precise rule."
    assert command_of(text, read_question("How can I make the rule match one port?")) == ""


def test_an_entry_describes_its_call_after_the_signature() -> None:
    entry = "json.dump(obj, fp, *, ensure_ascii=True): Serialize obj as a JSON stream."
    assert description_of(entry) == "Serialize obj as a JSON stream."
    assert description_of("The output is ASCII.") == "The output is ASCII."


def test_a_block_line_is_not_chosen_for_words_in_its_strings_nor_for_printing() -> None:
    asked = read_question("How do I delete a file?")
    code = (
        "import { unlink } from 'node:fs';\n"
        "unlink('path/file.txt', (err) => {\n"
        "  if (err) throw err;\n"
        "  console.log('path/file.txt was deleted');\n"
        "});"
    )
    assert command_of(code, asked) == "unlink('path/file.txt', (err) => {"
    asked = read_question("How do I create a directory with its parents?")
    code = (
        "const folder = new URL('./test/project/', import.meta.url);\n"
        "const made = await mkdir(folder, { recursive: true });\n"
        "console.log(`created ${made}`);"
    )
    # no line says what is asked: the one calling what the prose names, never the print
    assert command_of(code, asked, ["fs.mkdir"]) == (
        "const made = await mkdir(folder, { recursive: true });"
    )


def test_a_block_takes_no_step_by_changing_folder_or_defining_a_function() -> None:
    asked = read_question("How do I create a new PO file for my language?")
    assert command_of("$ cd PACKAGE-VERSION\n$ cd po\n$ msginit", asked) == "$ msginit"
    asked = read_question("How do I select tests by a word?")
    code = 'def pytest_addoption(parser):\n    parser.addoption("-E", action="store")'
    assert command_of(code, asked) == 'parser.addoption("-E", action="store")'


def test_a_manual_page_named_in_prose_is_no_call_cut_from_its_name() -> None:
    asked = read_question("How do I undo the most recent commit?")
    text = "Just pass the git-revert(1) command a reference to the bad commit."
    assert command_of(text, asked) == ""
    assert command_of("Use shutil.rmtree() to delete a tree.", asked) == "shutil.rmtree()"


def test_of_several_calls_named_in_prose_none_is_the_way_unless_it_is_what_is_asked() -> None:
    asked = read_question("How do I create a temporary directory that is removed automatically?")
    text = (
        "TemporaryDirectory is a high-level interface with automatic cleanup. mkstemp() and "
        "mkdtemp() are lower-level functions which require manual cleanup."
    )
    assert command_of(text, asked) == ""
    offered = "Call mkdtemp() for a directory, or mkstemp() for a file."
    assert command_of(offered, asked) == "mkdtemp()"


def test_a_quoted_message_a_program_prints_is_no_command() -> None:
    asked = read_question("How do I make git ignore changes to file permissions?")
    said = (
        'If SVN permissions change, a fetch may fail with "not found in commit" (file not seen) '
        'or "checksum mismatch" (missed a change).'
    )
    assert command_of(said, asked) == ""
    run = 'Running "git tag" without arguments lists the tags.'
    assert command_of(run, read_question("How do I list tags?")) == "git tag"


def test_a_manual_page_named_with_its_section_is_no_call() -> None:
    asked = read_question("How do I add tests that ctest runs?")
    assert command_of("Add a test to the project to be run by ctest(1).", asked) == ""
    assert command_of("See cmake(1) and use add_test() for each test.", asked) == "add_test()"


def test_a_cross_reference_left_as_written_and_a_paragraph_in_a_fence_offer_no_command() -> None:
    question = read_question("How do I install the server?")
    assert (
        command_of(
            "The first way is the fastest (by spinning up {doc}`the HTTP server "
            "</usage/server>`), but you may prefer not to install it.",
            question,
        )
        == ""
    )
    fenced = (
        "```{note}\nWhile keeping the style unchanged has always been a goal, the style is "
        "not set in stone (see [design](https://example.org/design)).\n```"
    )
    assert command_of(fenced, question) == ""


def test_the_command_of_a_session_is_a_line_typed_not_one_printed() -> None:
    question = read_question("How do I check that widget.py is installed?")
    units = [
        Segment("If all went well, you should see widget.py installed properly:", 0, 0),
        Segment("$ widget --version\nWidget.py, version 6.5.0 with C extension", 0, 1, code=True),
    ]
    line = procedure_line(question, units)
    assert line is not None and line.quote == "$ widget --version"
