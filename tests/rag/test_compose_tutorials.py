"""Answers over a tutorial whose examples end in a terminal session running the example
program (``$ python main.py --help``): the session shows what the example does; the way to do
what is asked is in the sentences (and the code) before it."""

from __future__ import annotations

from kforge.rag.candidates import gives_name
from kforge.rag.commands import command_of, runs_example
from kforge.rag.compose import compose_extractive
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.types import Chunk
from tests.rag.helpers import page_chunk as chunk

CONFIRM = chunk(
    0,
    "Confirmation prompt\n\n"
    "In some cases you could want to prompt for something and then ask the user to confirm "
    "it by typing it twice.\n\n"
    "You can do it passing the parameter confirmation_prompt=True.\n\n"
    "Let's say it's a CLI app to delete a project:\n\n"
    "$ python main.py\n\n"
    "// Your app will first prompt for the project name, and then for the confirmation\n"
    "$ python main.py\n\n"
    "Project name: Old Project\nRepeat for confirmation: Old Project\n"
    "Deleting project Old Project",
    "CLI Option Prompt",
    "Confirmation prompt",
)
ENUM = chunk(
    0,
    "Case insensitive Enum choices\n\n"
    "You can make an Enum (choice) CLI parameter be case-insensitive with the case_sensitive "
    "parameter:\n\n"
    "And then the values of the Enum will be checked no matter if lower case, upper case, or "
    "a mix:\n\n"
    "// Notice the upper case CONV\n$ python main.py --network CONV\n\n"
    "Training neural network of type: conv\n\n"
    "// A mix also works\n$ python main.py --network LsTm\n\n"
    "Training neural network of type: lstm",
    "Enum - Choices",
    "Case insensitive Enum choices",
)


def _answer(question: str, passages: list[Chunk]) -> tuple[list[str], str]:
    segments = compose_extractive(question, passages)
    line = short_answer(question, segments, passages)
    return [s.text for s in segments], (line.answer if line else "")


def test_the_sentence_saying_how_it_is_done_comes_with_the_one_saying_what() -> None:
    texts, line = _answer("How do I ask the user to type a value twice to confirm it?", [CONFIRM])
    assert any("confirmation_prompt=True" in t for t in texts), texts
    assert "python main.py" not in line, line
    assert "confirmation_prompt=True" in line, line


def test_a_sentence_naming_the_code_to_use_answers_though_its_example_is_missing() -> None:
    # the page's build left out the example the sentence leads: it still says what to use
    texts, line = _answer("How do I make an Enum parameter case-insensitive?", [ENUM])
    assert "case_sensitive" in texts[0], texts
    assert "python main.py" not in line, line


def test_a_session_running_the_example_program_does_nothing_asked() -> None:
    asked = read_question("How do I make an Enum parameter case-insensitive?")
    assert runs_example("// Notice the upper case CONV\n$ python main.py --network CONV", asked)
    assert runs_example("$ python3 app/main.py --help\nUsage: main.py [OPTIONS]", asked)
    assert runs_example("// Check it", asked)
    assert runs_example("╭─ Traceback ─╮\n│ 6 @app.command() │\n╰──────────────╯", asked)
    assert not runs_example("$ pip install typer", asked)
    assert not runs_example("$ python -m pip install nox", asked)
    assert not runs_example("$ python main.py", read_question("How do I run the program?"))


def test_a_keyword_argument_named_in_prose_is_the_way() -> None:
    asked = read_question("How do I hide the password while the user types it?")
    assert command_of("You can achieve the same using hide_input=True.", asked) == (
        "hide_input=True"
    )
    assert command_of("It defaults to x=1 or y=2 in the examples.", asked) == ""


def test_where_by_default_asks_a_place_said_by_a_sentence_leading_code() -> None:
    assert read_question("Where does Nox store virtualenvs by default?").kind == "where"
    usage = chunk(
        0,
        "Storing virtualenvs in a different directory\n\n"
        "By default Nox stores virtualenvs in ./.nox, however, you can change this using "
        "--envdir:\n\nnox --envdir /tmp/envs",
        "Command-line usage",
        "Storing virtualenvs in a different directory",
    )
    changes = chunk(
        1,
        "Storing platform.system() as global in nox.virtualenv. (#124) Fix deploy script.",
        "Changelog",
    )
    texts, _ = _answer("Where does Nox store virtualenvs by default?", [usage, changes])
    assert "./.nox" in texts[0], texts


def test_which_environment_variable_takes_a_name_in_capitals_a_sentence_leads_code_with() -> None:
    usage = chunk(
        0,
        "Specifying one or more sessions\n\n"
        "By default Nox will run all sessions defined in the Noxfile. However, you can choose "
        "to run a particular set of them using --session, -s, or -e:\n\n"
        "nox --session tests\nnox -s lint tests\n\n"
        "You can also use the NOXSESSION environment variable:\n\n"
        "NOXSESSION=lint nox\nNOXSESSION=lint,tests nox",
        "Command-line usage",
        "Specifying one or more sessions",
    )
    texts, line = _answer("Which environment variable selects the sessions to run?", [usage])
    assert any("NOXSESSION environment variable" in t for t in texts), texts
    assert line == "NOXSESSION", line


def test_a_word_holding_the_kind_asked_does_not_name_it() -> None:
    asked = read_question("Which option turns on verbose output?")
    assert gives_name("Use the --verbose option:", asked)
    assert not gives_name("An optional argument --quiet silences it.", asked)
