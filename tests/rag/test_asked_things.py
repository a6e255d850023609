"""What a question asks for, found in the sentence that gives it: an option named in running
text for "how do I", a network address for "which address"."""

from __future__ import annotations

from kforge.rag.compose import compose_extractive
from kforge.rag.kinds import holds_kind
from kforge.rag.question import read_question
from tests.rag.helpers import page_chunk as chunk


def test_a_sentence_naming_an_option_says_how() -> None:
    asked = read_question("How do I get rid of the lock the crashed run left behind?")
    assert holds_kind("Pass --force-unlock and the next run removes a stale lock.", asked)
    assert holds_kind("With --unlock, you can drop it.", asked)
    assert not holds_kind("A lock stays behind when the machine loses power.", asked)
    assert not holds_kind("The run-time lock is per directory.", asked)  # a hyphen, no option


def test_which_address_is_answered_by_an_address_not_by_a_port_number() -> None:
    asked = read_question("On which address does the admin console listen by default?")
    assert holds_kind("Default: '127.0.0.1'. The interface the admin console listens on.", asked)
    assert holds_kind("It binds to localhost unless told otherwise.", asked)
    assert holds_kind("Set it to [::1] for IPv6.", asked)
    assert not holds_kind("The admin console listens on port 6023 by default.", asked)
    # "which port" still asks for a number
    port = read_question("On which port does the admin console listen by default?")
    assert holds_kind("The admin console listens on port 6023 by default.", port)


def test_which_address_quotes_the_address_over_the_port() -> None:
    how = chunk(
        0,
        "The admin console listens in the TCP port defined in the ADMIN_PORT setting, which "
        "defaults to 6023. It needs no password on the local machine.",
        "Admin console",
    )
    host = chunk(
        1,
        "Default: '127.0.0.1'\n\nThe interface the admin console should listen on.",
        "Admin console",
        "ADMIN_HOST",
    )
    answer = compose_extractive(
        "On which address does the admin console listen by default?", [how, host]
    )
    assert any("127.0.0.1" in s.text for s in answer), [s.text for s in answer]


def test_what_a_thing_is_for_is_answered_by_what_it_lets_you_do() -> None:
    asked = read_question("What are hooks for?")
    assert holds_kind("Hooks let plugins run code when a build starts or ends.", asked)
    assert holds_kind("The hook registry helps loosely coupled parts hear of events.", asked)
    assert not holds_kind("Hooks are listed below in the order they run.", asked)
    # "what is X" still asks what it is
    assert holds_kind(
        "Hooks are listed below in the order they run.", read_question("What are hooks?")
    )


def test_what_a_thing_is_for_quotes_its_purpose_over_a_list_of_its_kinds() -> None:
    hooks = chunk(
        0,
        "pre_build and post_build: sent before or after a build runs. pre_test and post_test: "
        "sent before or after the test suite runs. The build includes a hook registry, which "
        "helps loosely coupled plugins hear when something happens elsewhere in the build.",
        "Hooks",
    )
    answer = compose_extractive("What are build hooks for?", [hooks])
    assert "helps loosely coupled plugins" in answer[0].text, [s.text for s in answer]
